"""TreeSHAP contributions (``pred_contribs``), SHAP interaction values
(``pred_interactions``) and Saabas's contributions (``approx_contribs``) for the CUDA
backend: the CPU kernels, on host copies of the inputs.

GPU TreeSHAP (XGBoost's GPUTreeShap reorganises the trees' paths into a bin-packed
table for one thread per (row, path element)) does not fit this release; explanations
are an inspection tool, and the CPU path gives the same values. The result is copied
back to the device when ``out`` lives there.
"""
import numpy as np

from ..cpu import tree_saabas as _cpu_tree_saabas
from ..cpu import tree_shap as _cpu_tree_shap
from ..cpu import tree_shap_interactions as _cpu_tree_shap_interactions
from ._device import array_module, is_device_array, to_host


def _on_host(cpu_kernel, inputs, n_threads, out):
    """Run ``cpu_kernel`` on host copies of ``inputs`` and ``out``; write the result back
    into ``out`` (on the device when it lives there). Returns the kernel's result."""
    host = [np.ascontiguousarray(to_host(a)) for a in inputs]
    result = np.ascontiguousarray(to_host(out))
    complete = cpu_kernel(*host, max(1, int(n_threads)), result)
    if is_device_array(out):
        out[...] = array_module().asarray(result)
    else:
        out[...] = result
    return complete


def tree_shap(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
              left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads, out):
    """Exact TreeSHAP values added to ``out``; returns whether every row completed (as
    ``cpu.tree_shap``)."""
    return _on_host(_cpu_tree_shap, (X, split_feature, threshold, default_left, split_type,
                                     cat_row, cat_bits, left_child, value, cover, tree_offsets,
                                     tree_group, tree_depth), n_threads, out)


def tree_shap_interactions(X, split_feature, threshold, default_left, split_type, cat_row,
                           cat_bits, left_child, value, cover, tree_offsets, tree_group,
                           tree_depth, n_threads, out):
    """Exact SHAP interaction values added to ``out``; returns whether every row completed
    (as ``cpu.tree_shap_interactions``)."""
    return _on_host(_cpu_tree_shap_interactions,
                    (X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
                     left_child, value, cover, tree_offsets, tree_group, tree_depth),
                    n_threads, out)


def tree_saabas(X, split_feature, threshold, default_left, split_type, cat_row, cat_bits,
                left_child, value, cover, tree_offsets, tree_group, tree_depth, n_threads,
                out):
    """Saabas's contributions added to ``out``; returns whether every row completed (as
    ``cpu.tree_saabas``)."""
    return _on_host(_cpu_tree_saabas, (X, split_feature, threshold, default_left, split_type,
                                       cat_row, cat_bits, left_child, value, cover,
                                       tree_offsets, tree_group, tree_depth), n_threads, out)
