"""Twin of ``cpu/survival.py``: ``survival_math.aft_loss`` as plain Python, row by row.
Its independent oracle (SciPy's distributions) is in ``tests/test_survival_math.py``."""
from ..survival_math import python as _math


def aft_loss_into(lower, upper, margin, objective_params, out):
    dist, sigma = int(objective_params[0]), float(objective_params[1])
    out[:] = [_math.aft_loss(dist, sigma, float(lo), float(hi), float(m))
              for lo, hi, m in zip(lower, upper, margin)]
