"""Plain NumPy twins of the kernels: obviously correct, slow, the test oracle. Same names
and signatures as every backend's kernels module (``n_threads`` is accepted and ignored);
the host kernels (``catalog.HOST_ONLY``) are the CPU's only (see
``kernels/cpu/__init__.py``). The names are declared in ``kernels/catalog.py``.
"""
from ..catalog import export

__all__ = export("reference", globals())  # its kernels, named in kernels/catalog.py
