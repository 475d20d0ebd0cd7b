"""The Numba CUDA kernels, one module per concept, with the reference's names and
arguments (``tests/test_kernel_contract.py``). Each public kernel is a host-side
launcher that runs ``@cuda.jit`` kernels on device arrays (CuPy, or anything with
``__cuda_array_interface__``); see ``_device.py`` for how host arrays are handled, the
launch sizes, and the simulator (``NUMBA_ENABLE_CUDASIM=1``: NumPy arrays, Python
threads), under which the test suite checks every kernel against the reference.

Same results as the CPU kernels, bit for bit: integer histograms (64-bit integer
atomics, no float atomics), the split, objective and elementary formulas compiled from
the CPU's source with products that no compiler fuses into an FMA, and every float sum
in a fixed order. ``tree_shap``, ``tree_shap_interactions`` and ``tree_saabas`` run the CPU
kernels on host copies (see ``shap.py``). The linear models' kernels (``linear.py``,
``linear_cd.py``) sum in fixed orders too, but their sums are not the CPU's (which
vectorise them): they agree with the CPU to rounding, and the solvers' certificates, not
bits, make the fits agree. The kernels' names (and those still pending here) are declared
in ``kernels/catalog.py``.
"""
from ..catalog import export

__all__ = export("cuda", globals())  # its kernels, named in kernels/catalog.py
