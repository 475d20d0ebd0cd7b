"""Thread counts for the Numba kernels (the CPU backend's ``Backend.threads``).

A parallel region costs a wake-up of every worker thread; on small inputs (a deep node, a
tiny data set) or a busy machine that costs more than the work, so callers run small
kernels on one thread. Results do not depend on it: every sum is an integer sum.
"""
import numba

PARALLEL_MIN_WORK = 1 << 16  # cells (rows x features, or histogram slots) worth a parallel region


def resolve_n_threads(n_jobs):
    """Thread count from ``n_jobs``: None or -1 = all of Numba's threads, -2 = all but one."""
    limit = numba.config.NUMBA_NUM_THREADS
    if n_jobs is None:
        return limit
    if n_jobs < 0:
        return max(1, limit + 1 + n_jobs)
    return min(n_jobs, limit)
