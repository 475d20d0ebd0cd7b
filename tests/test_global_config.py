"""gbm.set_config / get_config / config_context: XGBoost's global parameters, per
thread, and nthread as the thread count of fits that do not set n_jobs."""
import threading

import numpy as np
import pytest

import gbm
from gbm.params import validate_params


def test_defaults_are_xgboosts():
    assert gbm.get_config() == {"nthread": 0, "use_cuda_async_pool": False, "use_rmm": False,
                                "verbosity": 1}


def test_context_nests_and_restores():
    with gbm.config_context(verbosity=3):
        assert gbm.get_config()["verbosity"] == 3
        with gbm.config_context(verbosity=2):
            assert gbm.get_config()["verbosity"] == 2
        with gbm.config_context(verbosity=None):  # None changes nothing
            assert gbm.get_config()["verbosity"] == 3
        assert gbm.get_config()["verbosity"] == 3
    assert gbm.get_config()["verbosity"] == 1


def test_context_restores_after_an_exception():
    with pytest.raises(RuntimeError):
        with gbm.config_context(verbosity=0, nthread=2):
            raise RuntimeError("boom")
    assert gbm.get_config() == {"nthread": 0, "use_cuda_async_pool": False, "use_rmm": False,
                                "verbosity": 1}


def test_set_config_is_per_thread():
    seen = []
    gbm.set_config(verbosity=2)
    try:
        thread = threading.Thread(target=lambda: seen.append(gbm.get_config()["verbosity"]))
        thread.start()
        thread.join()
        assert seen == [1] and gbm.get_config()["verbosity"] == 2
    finally:
        gbm.set_config(verbosity=1)


def test_the_config_returned_is_a_copy():
    config = gbm.get_config()
    config["verbosity"] = 3
    assert gbm.get_config()["verbosity"] == 1


@pytest.mark.parametrize("kwargs, message", [
    ({"verbosity": 4}, "verbosity must be an integer in"),
    ({"verbosity": True}, "verbosity must be an integer in"),
    ({"nthread": -2}, "nthread must be an integer >= 0"),
    ({"use_rmm": True}, "use_rmm=True is not supported"),
    ({"use_cuda_async_pool": True}, "use_cuda_async_pool=True is not supported"),
    ({"use_rmm": "yes"}, "use_rmm must be True or False"),
    ({"colour": 1}, r"unknown global parameters \['colour'\]"),
])
def test_bad_values_are_refused_and_change_nothing(kwargs, message):
    with pytest.raises(ValueError, match=message):
        gbm.set_config(**{"nthread": 3, **kwargs})  # the good value is not set either
    assert gbm.get_config()["nthread"] == 0 and gbm.get_config()["verbosity"] == 1


def test_nthread_is_the_default_thread_count():
    assert validate_params({})["n_jobs"] is None  # all cores
    with gbm.config_context(nthread=2):
        assert validate_params({})["n_jobs"] == 2
        assert validate_params({"nthread": 1})["n_jobs"] == 1  # the parameters' own first
        X = np.random.default_rng(0).random((50, 3))
        booster = gbm.train({}, X, X[:, 0], 2)
        assert booster.params["n_jobs"] == 2
    with gbm.config_context(nthread=-1):
        assert gbm.get_config()["nthread"] == 0


def test_exported_by_name():
    assert "config_context" in gbm.__all__ and gbm.config.get_config is gbm.get_config
