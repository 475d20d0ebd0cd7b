"""The one dispatch point from ``device`` to an array module and a kernels module."""
from types import SimpleNamespace

import numpy as np


def get_backend(device):
    """Return ``SimpleNamespace(name, xp, kernels)`` for ``device`` ("cpu" or "cuda")."""
    if device == "cpu":
        from .kernels import cpu

        return SimpleNamespace(name="cpu", xp=np, kernels=cpu)
    if device == "cuda":
        raise ValueError(
            "device='cuda' is not available in this version of gbm: the CUDA kernels have "
            "not landed yet; use device='cpu'"
        )
    raise ValueError(f"device must be 'cpu' or 'cuda', got {device!r}")
