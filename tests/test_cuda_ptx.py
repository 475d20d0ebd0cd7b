"""The FMA trap, checked without a GPU: NVVM contracts ``a * b + c`` into one fused
multiply-add (one rounding), where the CPU rounds twice. The CUDA kernels whose float
arithmetic feeds a model (split evaluation, gradients, ranking lambdas, quantisation) are
compiled to PTX for sm_90 here and must contain no ``fma`` and no plain ``mul.f64``
(which ptxas may still fuse) but by a power of two (exact, so fusing cannot change it):
every product of ours is libdevice's ``dmul_rn`` (``mul.rn.f64``), never fused.

Needs numba-cuda and NVVM/NVRTC (the ``cuda-sim`` extra, part of ``dev``); no GPU. The
simulator cannot see this trap (it runs Python floats), nor can the CPU.
"""

import pytest

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("PTX needs the real CUDA target, not the simulator", allow_module_level=True)

from numba import cuda, types  # noqa: E402

from tests.support.ptx import (compile_ptx, exact_scaling,  # noqa: E402,F401 (fixtures)
                               monkeypatch_module, power_of_two_registers)

F64, F64_2D = types.float64[::1], types.float64[:, ::1]
I64 = types.int64[::1]


def _kernels():
    from gbm.kernels.cuda import objective, quantize, rank, split

    return {
        "evaluate_splits": (split._task_kernel, (
            types.int64[:, :, ::1], types.int32[::1], types.int64, types.uint8[::1],
            types.int64[:, ::1], types.uint8[:, ::1], types.int8[::1], F64_2D, F64_2D, F64, types.int64, types.int64,
            F64, types.int32[::1], types.uint8[::1], types.int64[:, ::1],
            types.uint32[:, ::1])),
        "node_weights": (split._weights_kernel, (types.int64[:, ::1], F64_2D, F64_2D, F64,
                                                 F64)),
        "pointwise_gradients": (objective._gradients_kernel, (
            types.int64, F64_2D, F64, F64, F64, F64_2D, F64_2D)),
        "lambdarank_gradients": (rank._rank_kernel, (
            F64, F64, I64, I64, F64, types.int64, types.boolean, types.boolean, types.int64,
            types.boolean, types.boolean, types.uint64, F64, F64, I64, I64, I64, F64, F64)),
        "quantize_gradients": (quantize._quantize_kernel, (F64, F64, F64, types.int64[:, ::1])),
    }


def test_a_power_of_two_built_from_bits_is_recognised():
    lines = ["mov.u32 %r1, 0;", "shl.b32 %r2, %r9, 20;", "add.s32 %r3, %r2, 1072693248;",
             "mov.b64 %fd1, {%r1, %r3};", "mul.f64 %fd2, %fd1, %fd1;",
             "mul.f64 %fd3, %fd7, %fd2;", "mul.f64 %fd4, %fd7, %fd8;",
             "mov.b64 %fd5, {%r1, %r3};", "add.f64 %fd5, %fd5, %fd7;"]  # %fd5: not only
    pow2 = power_of_two_registers(lines)
    assert pow2 == {"%fd1", "%fd2"}
    assert [exact_scaling(line, pow2) for line in lines if line.startswith("mul.f64")] == [
        True, True, False]


def test_the_trap_is_real_without_unfused_products(compile_ptx):
    # the plain expression is fused: the check below can see an FMA when there is one
    assert "fma.rn.f64" in compile_ptx(lambda a, b, c: a * b + c, (types.float64,) * 3,
                                       device=True)


@pytest.mark.parametrize("name", ["evaluate_splits", "node_weights", "pointwise_gradients",
                                  "lambdarank_gradients", "quantize_gradients"])
def test_no_fused_multiply_add_in_the_kernels(compile_ptx, name):
    kernel, signature = _kernels()[name]
    ptx = compile_ptx(kernel.py_func, signature)
    lines = [line.strip() for line in ptx.splitlines()]
    assert not [line for line in lines if "fma" in line], name
    pow2 = power_of_two_registers(lines)  # exact scalings: fusing cannot change them
    plain = [line for line in lines if line.startswith("mul.f64")
             and not exact_scaling(line, pow2)]
    assert not plain, plain[:5]
    if name != "node_weights":  # a leaf weight has no product; the others' are there
        assert any(line.startswith("mul.rn.f64") for line in lines)
    assert not [line for line in lines if line.startswith(("div.approx", "div.full"))]


def _all_kernels():
    """Every ``@cuda.jit`` kernel of ``gbm.kernels.cuda`` with the argument types its
    launcher passes (uint8 bins; the uint16 variants compile alike)."""
    import importlib

    binning, histogram, partition, partition_steps, predict, quantize, split = (
        importlib.import_module(f"gbm.kernels.cuda.{name}")  # (``predict`` is also a kernel)
        for name in ("binning", "histogram", "partition", "partition_steps", "predict",
                     "quantize", "split"))
    U8_2D, I32, I64_1, I64_2D = types.uint8[:, ::1], types.int32[::1], I64, types.int64[:, ::1]
    I64_3D, U32_2D, F32_2D = types.int64[:, :, ::1], types.uint32[:, ::1], types.float32[:, ::1]
    flag = types.boolean
    kernels = dict(_kernels())
    kernels.update({
        "bin_values": (binning._bin_kernel, (F32_2D, F32_2D, I32, U8_2D)),
        "build_histograms": (histogram._histogram_kernel, (
            U8_2D, I64_2D, I32, I64_1, I64_1, I64_1, I64_1, I32, I64_3D)),
        "subtract_histograms": (histogram._subtract_kernel, (I64_3D, I64_3D, I64_3D)),
        "evaluate_splits_reduce": (split._reduce_kernel, (
            types.int64, F64, I32, types.uint8[::1], I64_2D, U32_2D, F64, I32, I32,
            types.uint8[::1], I64_2D, U32_2D)),
        "partition_flags": (partition._flag_kernel, (
            U8_2D, I32, I64_1, I64_1, I64_1, I32, I32, types.uint8[::1], types.uint8[::1],
            U32_2D, I32, I64_1)),
        "partition_scatter": (partition_steps._scatter_kernel, (
            I32, I64_1, I64_1, I64_1, I64_1, I64_1, I64_1, I64_1, I32)),
        "partition_copy": (partition_steps._copy_kernel, (I64_1, I64_1, I32, I32)),
        "add_leaf_values": (partition._leaf_kernel, (I32, I64_1, I64_1, I64_1, F64, F64)),
        "add_split_values": (partition._split_values_kernel, (
            U8_2D, I32, I64_1, I64_1, I64_1, I32, I32, types.uint8[::1], types.uint8[::1],
            U32_2D, I32, F64, F64, F64)),
        "predict": (predict._predict_kernel, (
            F32_2D, I64_1, flag, flag, I32, I32, types.float32[::1], U32_2D, F64, I64_1, I32,
            I32, F64_2D)),
        "predict_binned": (predict._predict_kernel, (
            U8_2D, I32, flag, flag, I32, I32, types.float32[::1], U32_2D, F64, I64_1, I32, I32,
            F64_2D)),
        "predict_leaf": (predict._leaf_index_kernel, (
            F32_2D, I32, types.float32[::1], U32_2D, I64_1, I32, I32, types.int32[:, ::1])),
        "max_abs": (quantize._max_abs_kernel, (F64, F64)),
    })
    return kernels


@pytest.mark.parametrize("name", sorted(["bin_values", "build_histograms", "subtract_histograms",
                                         "evaluate_splits_reduce", "partition_flags",
                                         "partition_scatter", "partition_copy",
                                         "add_leaf_values", "add_split_values", "predict",
                                         "predict_binned",
                                         "predict_leaf", "max_abs"]))
def test_every_kernel_compiles_for_the_gpu(compile_ptx, name):
    """The simulator runs kernels as Python: only the CUDA compiler sees typing errors."""
    kernel, signature = _all_kernels()[name]
    ptx = compile_ptx(kernel.py_func, signature)
    assert ".entry" in ptx
    assert "fma" not in ptx


def test_the_elementary_test_kernel_compiles(compile_ptx):
    """tests/cuda's check of exp/log/log2 on a GPU compiles (the simulator would run it
    as Python whatever it holds)."""
    from tests.support.elementary_kernel import elementary_kernel

    ptx = compile_ptx(elementary_kernel.py_func, (F64, F64_2D))
    assert "fma" not in ptx


def _vector_leaf_kernels():
    """The vector-leaf trees' kernels (``kernels/cuda/vector_*.py``) with their
    launchers' argument types."""
    from gbm.kernels.cuda import vector_categorical as vc
    from gbm.kernels.cuda import vector_leaf as vl
    from gbm.kernels.cuda import vector_monotone as vm
    from gbm.kernels.cuda import vector_split as vs

    U8_2D, I32, I64_1 = types.uint8[:, ::1], types.int32[::1], I64
    I64_3D, I64_4D = types.int64[:, :, ::1], types.int64[:, :, :, ::1]
    U8, I8, F64_3D, B = types.uint8[::1], types.int8[::1], types.float64[:, :, ::1], \
        types.boolean
    return {
        "build_vector_histograms": (vl._vector_histogram_kernel, (
            U8_2D, I64_3D, I32, I64_1, I64_1, I64_1, I64_1, I32, I64_4D)),
        "vector_parent_gains": (vs.parent_kernel, (I64_3D, F64_3D, B, F64_2D, F64, F64)),
        "evaluate_vector_splits": (vs.feature_kernel, (
            I64_4D, I32, I64_3D, types.uint8[:, ::1], F64_3D, I8, B, F64_2D, F64, F64, I64_3D,
            F64, I32, U8, I64_3D)),
        "evaluate_vector_splits_categorical": (vc._categorical_kernel, (
            I64_4D, I32, I64_3D, U8_2D, F64_3D, B, U8, F64_2D, F64, F64, types.int64,
            types.int64, I64_3D, I64_3D, F64, I32, U8, I64_3D, types.uint32[:, ::1])),
        "vector_bounded_weights": (vm._bounded_weights_kernel, (I64_3D, F64_3D, F64_2D, F64,
                                                                F64_2D)),
        "vector_child_bounds": (vm._child_bounds_kernel, (I64_3D, I64_3D, F64_3D, I8, F64_2D,
                                                          F64, F64_3D, F64_3D)),
        "build_vector_feature_histograms": (vm._feature_histogram_kernel, (
            U8_2D, I64_3D, I32, I64_1, I64_1, I32, I64_4D)),
        "evaluate_vector_splits_reduce": (vl._best_kernel, (
            types.int64, F64, I32, U8, I64_3D, F64, I32, I32, U8, I64_3D)),
        "vector_node_weights": (vl._weights_kernel, (I64_3D, F64_2D, F64, F64_2D)),
        "vector_children_histograms": (vl._children_kernel, (I64_4D, I64_4D, U8, I64_4D)),
        "vector_segment_sums": (vl._segment_kernel, (I64_3D, I32, I64_1, I64_1, I64_3D)),
    }


@pytest.mark.parametrize("name", sorted(_vector_leaf_kernels()))
def test_the_vector_leaf_kernels_compile_without_fused_products(compile_ptx, name):
    """The vector-leaf kernels compile for the GPU (the simulator cannot see typing
    errors) and their float arithmetic, which feeds the model, has no FMA and no plain
    product but exact power-of-two scalings (every product of ours is ``dmul_rn``)."""
    kernel, signature = _vector_leaf_kernels()[name]
    ptx = compile_ptx(kernel.py_func, signature)
    assert ".entry" in ptx
    lines = [line.strip() for line in ptx.splitlines()]
    assert not [line for line in lines if "fma" in line], name
    pow2 = power_of_two_registers(lines)
    plain = [line for line in lines if line.startswith("mul.f64")
             and not exact_scaling(line, pow2)]
    assert not plain, plain[:5]
    if name in ("evaluate_vector_splits", "vector_parent_gains",
                "evaluate_vector_splits_categorical"):  # the gains' products
        assert any(line.startswith("mul.rn.f64") for line in lines)
    assert not [line for line in lines if line.startswith(("div.approx", "div.full"))]
