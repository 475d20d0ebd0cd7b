"""Global configuration, as XGBoost's: ``set_config``, ``get_config`` and the
``config_context`` context manager.

Keys (XGBoost 3.2's global parameters):

- ``verbosity`` (0 to 3, default 1): kept and returned, as XGBoost's; gbm itself prints
  nothing that it gates (its warnings are Python warnings, like XGBoost's Python-side
  ones, filtered with the ``warnings`` module).
- ``nthread`` (default 0: all cores): the CPU threads of a fit or prediction whose
  parameters do not set ``n_jobs`` / ``nthread``.
- ``use_rmm``, ``use_cuda_async_pool``: False only; gbm allocates GPU memory through
  CuPy's own pool, not RAPIDS' RMM or CUDA's asynchronous allocator (True raises).

As in XGBoost, the configuration is per thread: a new thread starts from the defaults,
and ``set_config`` in one thread changes no other's.
"""
import contextlib
import numbers
import threading

_DEFAULTS = {"nthread": 0, "use_cuda_async_pool": False, "use_rmm": False, "verbosity": 1}
_local = threading.local()


def _current():
    config = getattr(_local, "config", None)
    if config is None:
        config = _local.config = dict(_DEFAULTS)
    return config


def _checked(name, value):
    if name == "verbosity":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
                or not 0 <= value <= 3:
            raise ValueError(f"verbosity must be an integer in [0, 3], got {value!r}")
        return int(value)
    if name == "nthread":
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < -1:
            raise ValueError(f"nthread must be an integer >= 0 (0 or -1: all cores), got "
                             f"{value!r}")
        return max(0, int(value))
    if value not in (False, True, 0, 1):
        raise ValueError(f"{name} must be True or False, got {value!r}")
    if value:
        raise ValueError(f"{name}=True is not supported: gbm allocates GPU memory through "
                         "CuPy's memory pool, not RAPIDS' RMM or CUDA's asynchronous "
                         "allocator")
    return False


def set_config(**new_config):
    """Set global parameters of this thread (``verbosity``, ``nthread``, ``use_rmm``,
    ``use_cuda_async_pool``); a value None leaves its parameter as it is."""
    unknown = sorted(set(new_config) - set(_DEFAULTS))
    if unknown:
        raise ValueError(f"unknown global parameters {unknown}; known: {sorted(_DEFAULTS)}")
    checked = {name: _checked(name, value) for name, value in new_config.items()
               if value is not None}
    _current().update(checked)


def get_config():
    """This thread's global parameters, a new dict."""
    return dict(_current())


@contextlib.contextmanager
def config_context(**new_config):
    """``set_config(**new_config)`` inside the ``with`` block; the configuration before it
    is restored when the block ends (also on an exception)."""
    old = get_config()
    set_config(**new_config)
    try:
        yield
    finally:
        _current().clear()
        _current().update(old)


def default_threads():
    """``nthread`` of this thread's configuration as ``n_jobs``: None (all cores) for 0."""
    return _current()["nthread"] or None
