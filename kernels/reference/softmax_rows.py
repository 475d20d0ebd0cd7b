"""Twin of ``cpu/softmax_rows.py``: NumPy's max of each row, then ``elementary.python``'s
exp (plain Python floats) element by element."""
import numpy as np

from ..elementary import python as _elementary


def shifted_exp_rows(margin, out):
    """``out[i, j] = exp(margin[i, j] - max(margin[i]))``.

    margin : float64 (n_rows, k), C order, k >= 1   # IN
    out : float64 (n_rows, k), C order              # OUT
    """
    shifted = margin - margin.max(axis=1, keepdims=True)
    out[...] = np.array([_elementary.exp(float(v)) for v in shifted.reshape(-1)],
                        dtype=np.float64).reshape(margin.shape)
