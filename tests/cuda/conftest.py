"""The CUDA tests run under Numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``, in their
own pytest process: ``python -m tests.run_all``) or on a real GPU (``GBM_TEST_GPU=1``);
the top-level ``tests/conftest.py`` leaves this folder out of other runs. Kernels get
NumPy arrays under the simulator and CuPy arrays on a GPU (``tests/support/device_arrays.py``)."""


def _yield_in_the_simulators_poll():
    """The simulator runs a block's CUDA threads as Python threads while the launching
    thread polls them (``is_alive``) in a loop that never lets go of the GIL: each
    hand-over then waits for Python's 5 ms switch interval. On an idle 2-core machine one
    same-model test took over 5 minutes so (9 s on a busy one). Sleeping 0 s in the poll
    lets go of the GIL there; the CUDA threads' own code is switched as before."""
    import time

    from numba import config

    if not config.ENABLE_CUDASIM:
        return
    from numba.cuda.simulator import kernel

    alive = kernel.BlockThread.is_alive

    def is_alive(self):
        time.sleep(0)
        return alive(self)

    kernel.BlockThread.is_alive = is_alive


_yield_in_the_simulators_poll()


def pytest_configure(config):
    # splitmix64 (ranking pairs) wraps modulo 2**64 by design; under the simulator its
    # uint64 arithmetic runs on NumPy scalars, which warn about it
    config.addinivalue_line("filterwarnings",
                            "ignore:overflow encountered in scalar:RuntimeWarning")
