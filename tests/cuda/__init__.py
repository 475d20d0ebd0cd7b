"""The CUDA kernels and device="cuda" training, under Numba's CUDA simulator or on a GPU."""
