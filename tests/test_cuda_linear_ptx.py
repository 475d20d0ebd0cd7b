"""The linear models' CUDA kernels compiled to PTX for sm_90, without a GPU (as
``tests/test_cuda_ptx.py`` does for the tree kernels): every kernel compiles with the
argument types its launcher passes (the simulator runs them as Python and would not see a
typing error), and the kernels whose arithmetic is ours alone hold no FMA and no plain
``mul.f64`` but exact scalings: every product is ``dmul_rn``. ``loss_terms`` and
``dual_terms`` call libdevice's exp / log / log1p, whose own code has fused operations;
they are only compiled here."""
import pytest

pytest.importorskip("numba_cuda")
from numba import config  # noqa: E402

if config.ENABLE_CUDASIM:
    pytest.skip("PTX needs the real CUDA target, not the simulator", allow_module_level=True)

from numba import types  # noqa: E402
from tests.support.ptx import (compile_ptx, exact_scaling,  # noqa: E402,F401 (fixtures)
                               monkeypatch_module, power_of_two_registers)

F64, I64, I32 = types.float64[::1], types.int64[::1], types.int32[::1]
F64_2D, F64_F, F64_3D, I64_2D = (types.float64[:, ::1], types.float64[::1, :],
                                 types.float64[:, :, ::1], types.int64[:, ::1])
INT, FLOAT, FLAG = types.int64, types.float64, types.boolean


def _kernels():
    from gbm.kernels.cuda import linear, linear_cd

    return {
        "loss_terms": (linear._loss_terms_kernel, (
            INT, F64_2D, F64_2D, F64, F64_2D, F64_2D, F64_2D, F64)),
        "dual_terms": (linear._dual_terms_kernel, (INT, F64_2D, F64_2D, F64, FLOAT, F64)),
        "margins_dense": (linear._margins_dense_kernel, (F64_F, F64_2D, F64, F64_2D)),
        "margins_csr": (linear._margins_csr_kernel, (I32, I32, F64, F64_2D, F64, F64_2D)),
        "row_counts": (linear._row_counts_kernel, (I32, I64)),
        "scatter_rows": (linear._scatter_rows_kernel, (I32, I32, F64, I64, I64, I64, F64)),
        "sort_rows": (linear._sort_rows_kernel, (I64, I64, F64)),
        "gradient_partials": (linear._gradient_partials_kernel, (F64_F, F64_2D, F64_3D)),
        "hessian_partials": (linear._hessian_partials_kernel, (F64_F, F64_2D, F64_2D, F64_3D)),
        "sum_partials": (linear._sum_partials_kernel, (F64_3D, F64_2D)),
        "gradient_csc": (linear._gradient_csc_kernel, (I32, I32, F64, F64_2D, F64_2D)),
        "hessian_csc": (linear._hessian_csc_kernel, (I32, I32, F64, F64_2D, F64_2D, F64_2D)),
        "gram_partials": (linear._gram_partials_kernel, (
            F64_F, F64_2D, F64_2D, FLOAT, INT, I64_2D, F64_2D)),
        "gram_sum": (linear._gram_sum_kernel, (I64_2D, F64_2D, F64_2D)),
        "cd_gram": (linear_cd._cd_gram_kernel, (
            F64_2D, F64, F64, F64, F64, F64, F64, I64, INT, FLOAT, FLOAT, I64)),
        "cd_residual": (linear_cd._cd_residual_kernel, (
            F64_F, I32, I32, F64, FLAG, FLOAT, F64_2D, F64_2D, FLAG, F64, F64, F64, F64, F64,
            F64, F64_2D, F64, I64, INT, FLOAT, FLOAT, I64)),
        "svc": (linear_cd._svc_kernel, (
            F64_2D, I32, I32, F64, FLAG, F64, F64, F64, F64, FLOAT, I64, FLOAT, F64, F64, F64,
            I64)),
    }


_OURS_ALONE = ["margins_dense", "margins_csr", "gradient_partials", "hessian_partials",
               "gradient_csc", "hessian_csc", "gram_partials", "cd_gram", "cd_residual", "svc"]


@pytest.mark.parametrize("name", sorted(_kernels()))
def test_every_linear_kernel_compiles_for_the_gpu(compile_ptx, name):
    kernel, signature = _kernels()[name]
    ptx = compile_ptx(kernel.py_func, signature)
    assert ".entry" in ptx
    if name not in _OURS_ALONE:
        return
    lines = [line.strip() for line in ptx.splitlines()]
    assert not [line for line in lines if "fma" in line], name
    pow2 = power_of_two_registers(lines)
    plain = [line for line in lines if line.startswith("mul.f64")
             and not exact_scaling(line, pow2)]
    assert not plain, plain[:5]
    assert any(line.startswith("mul.rn.f64") for line in lines)
