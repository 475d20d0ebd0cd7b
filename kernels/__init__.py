"""gbm's hot loops: ``reference`` (NumPy oracle), ``cpu`` (Numba); one signature per kernel."""
