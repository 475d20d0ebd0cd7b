"""Training in a fork child of a process that trained, and in several threads at once,
gives the models a sequential run gives (see gbm/runtime/threading_layer.py).

Each case runs in a fresh interpreter: a broken threading layer aborts or hangs the
process, which must fail the test, not end the test run.
"""
import sys
import textwrap

import pytest

from tests.support.isolated import run_isolated

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="fork is the default start method on Linux")

PRELUDE = """
import numpy as np
import gbm

def data(seed):
    rng = np.random.RandomState(seed)
    X = rng.normal(size=(3000, 6))
    y = X[:, 0] * 2 + np.sin(X[:, 1]) + rng.normal(scale=0.1, size=3000)
    return X, y

def model(seed, n_jobs=2):
    X, y = data(seed)
    return gbm.train({"max_depth": 4, "n_jobs": n_jobs}, X, y, 5).to_json()
"""


def _run(body, env=None):
    return run_isolated(PRELUDE + textwrap.dedent(body), env=env)


def test_layer_is_tbb():
    assert _run("import numba; model(0); print(numba.threading_layer())").strip() == "tbb"


def test_fork_child_trains_after_parent_trained():
    out = _run("""
        import os
        parent = model(0)
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child trains with the parent's threading layer state
            os.close(read)
            with os.fdopen(write, "w") as fh:
                fh.write(model(1))
            os._exit(0)
        os.close(write)
        with os.fdopen(read) as fh:
            child = fh.read()
        _, status = os.waitpid(pid, 0)
        assert status == 0, f"child exit status {status}"
        assert child == model(1), "the child's model differs from the parent's"
        assert parent == model(0)
        print("ok")
    """)
    assert out.strip() == "ok"


def test_multiprocessing_pool_with_fork_after_training():
    out = _run("""
        import multiprocessing as mp
        expected = [model(seed) for seed in range(3)]  # the parent trains first
        with mp.get_context("fork").Pool(2) as pool:
            got = pool.map(model, range(3))
        assert got == expected
        print("ok")
    """)
    assert out.strip() == "ok"


def test_threads_train_at_once_and_match_sequential_runs():
    out = _run("""
        from concurrent.futures import ThreadPoolExecutor
        seeds = list(range(6))
        expected = [model(seed) for seed in seeds]
        with ThreadPoolExecutor(4) as pool:
            got = list(pool.map(model, seeds))
        assert got == expected
        # different thread counts at the same time (n_jobs is written in the model)
        expected = [model(seed, n_jobs=1 + seed % 2) for seed in seeds]
        with ThreadPoolExecutor(3) as pool:
            got = list(pool.map(lambda s: model(s, n_jobs=1 + s % 2), seeds))
        assert got == expected
        print("ok")
    """)
    assert out.strip() == "ok"


def test_threads_predict_at_once():
    out = _run("""
        from concurrent.futures import ThreadPoolExecutor
        X, y = data(0)
        booster = gbm.train({"max_depth": 4}, X, y, 20)
        expected = booster.predict(X)
        contribs = booster.predict(X[:200], pred_contribs=True)
        def work(i):
            if i % 2:
                return np.array_equal(booster.predict(X), expected)
            return np.array_equal(booster.predict(X[:200], pred_contribs=True), contribs)
        with ThreadPoolExecutor(4) as pool:
            assert all(pool.map(work, range(16)))
        print("ok")
    """)
    assert out.strip() == "ok"


def test_user_choice_of_layer_is_kept():
    out = _run("import numba; model(0); print(numba.threading_layer())",
               env={"NUMBA_THREADING_LAYER": "workqueue"})
    assert out.strip() == "workqueue"


def test_user_choice_of_tbb_loads_it():
    # pip's libtbb is not on the loader's path: asking for "tbb" by name must still find it
    out = _run("import numba; model(0); print(numba.threading_layer())",
               env={"NUMBA_THREADING_LAYER": "tbb"})
    assert out.strip() == "tbb"
