"""Where the work runs: the backend (array module, kernels, collective; ``get_backend``),
Numba's threads and threading layer, and the compile-ahead of a cold kernel cache."""
