"""splitmix64 (Steele, Lea & Flood 2014), the counter-based hash behind every random draw
of gbm (binning sample, row and column sampling, ranking pairs): a draw is a hash of its
ids, never a generator's state, so it does not depend on threads, chunks or workers.

One source for NumPy arrays (``splitmix64``) and for the CPU kernels (``mix``, a scalar
compiled by Numba).
"""
import numpy as np

from .jit import helper


def _splitmix64(z):
    z = z + np.uint64(0x9E3779B97F4A7C15)
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


mix = helper(_splitmix64)


def splitmix64(x):
    """splitmix64 of ``x`` (a uint64 array or np.uint64 scalar), modulo 2**64."""
    with np.errstate(over="ignore"):
        return _splitmix64(x)
