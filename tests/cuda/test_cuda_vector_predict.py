"""Vector-leaf prediction on ``device="cuda"``: ``add_leaf_vectors`` (kernels/cuda/
vector_predict.py) against the CPU kernel and the reference twin, bit for bit, and a
vector-leaf model's margins, predictions and leaves on the CUDA backend the CPU's."""
import numpy as np
import pytest

import gbm
from gbm.kernels import cpu, cuda, reference
from tests.support.device_arrays import device_array as dev
from tests.support.device_arrays import host
from tests.support.leaf_vectors import leaf_vector_inputs


@pytest.mark.parametrize("n_rows, n_trees, k", [(1, 1, 1), (37, 4, 5), (9, 3, 0), (0, 2, 3)])
def test_add_leaf_vectors_matches_the_cpu(n_rows, n_trees, k):
    leaves, tree_offsets, leaf_row, leaf_values, start = leaf_vector_inputs(
        np.random.default_rng(n_rows + 10 * k), n_rows, n_trees, k, 7)
    expected, slow, got = start.copy(), start.copy(), dev(start)
    cpu.add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, expected)
    reference.add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, slow)
    cuda.add_leaf_vectors(dev(leaves), dev(tree_offsets), dev(leaf_row), dev(leaf_values), got)
    np.testing.assert_array_equal(expected, slow)
    np.testing.assert_array_equal(host(got), expected)
    # host arrays in and out (copied to the device and back)
    back = start.copy()
    cuda.add_leaf_vectors(leaves, tree_offsets, leaf_row, leaf_values, back)
    np.testing.assert_array_equal(back, expected)


def test_cuda_model_predicts_the_cpu_bits():
    rng = np.random.default_rng(2)
    X = rng.random((120, 4)).astype(np.float32)
    y = np.minimum((X[:, 0] * 9).astype(int), 8)
    params = {"max_depth": 2, "multi_strategy": "multi_output_tree",
              "objective": "multi:softprob", "num_class": 9}
    on_cpu = gbm.train(params, X, y, 2)
    on_gpu = gbm.Booster.from_json(on_cpu.to_json())
    on_gpu.params["device"] = "cuda"
    Xt = rng.random((50, 4)).astype(np.float32)
    Xt[::7, 1] = np.nan
    for kwargs in ({}, {"output_margin": True}, {"iteration_range": (1, 2)},
                   {"pred_leaf": True}):
        assert np.array_equal(host(on_gpu.predict(Xt, **kwargs)), on_cpu.predict(Xt, **kwargs))


def test_binned_vector_margins_on_the_cuda_backend_are_the_cpus():
    from gbm.bins.binning import BinMapper
    from gbm.model.vector_predict import add_binned_vector_margins
    from gbm.runtime.backend import get_backend

    rng = np.random.default_rng(3)
    X = rng.random((90, 3)).astype(np.float32)
    X[::5, 2] = np.nan
    y = np.minimum((X[:, 0] * 6).astype(int), 5)
    model = gbm.train({"max_depth": 2, "multi_strategy": "multi_output_tree",
                       "objective": "multi:softprob", "num_class": 6}, X, y, 2)
    mapper = BinMapper.from_cuts(model.cuts)
    start = rng.normal(size=(X.shape[0], 6))
    rows = np.arange(1, X.shape[0], 3)
    on_cpu = start.copy()
    add_binned_vector_margins(get_backend("cpu"), mapper.bin_matrix(X, "dense", cpu), rows,
                              model.trees, on_cpu)
    backend = get_backend("cuda")
    on_gpu = dev(start)
    add_binned_vector_margins(backend, mapper.bin_matrix(X, "dense", cuda, backend.xp),
                              dev(rows), model.trees, on_gpu)
    np.testing.assert_array_equal(host(on_gpu), on_cpu)
    assert not np.array_equal(on_cpu[rows], start[rows])
