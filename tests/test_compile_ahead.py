"""Compiling ahead over several processes (gbm/runtime/compile_ahead.py): the list is what a fit
compiles, the helper processes fill the cache, and a cold first fit trains the same model."""
import json
import os
import subprocess
import sys

import pytest

from gbm.runtime import compile_ahead

# A fresh process (the cache as found, normally warm) that fits and predicts as a user's
# first fit would, with nothing compiled ahead, and prints every gbm kernel's signatures
# (helpers aside: only kernels compile them).
_FIT_AND_LIST = r"""
import json, gc
import numpy as np
from numba.core.registry import CPUDispatcher
from gbm.sklearn import GBMClassifier, GBMRegressor
from gbm.tree import growers
growers.SWITCHES.whole_trees = WHOLE
rng = np.random.default_rng(0)
X = rng.normal(size=(300, 5))
y = (X[:, 0] > 0).astype(int)
GBMClassifier(n_estimators=3).fit(X, y).predict_proba(X)
GBMRegressor(n_estimators=3).fit(X.astype(np.float32), X[:, 1]).predict(X)
found = []
for obj in gc.get_objects():
    if isinstance(obj, CPUDispatcher) and obj.py_func.__module__.startswith("gbm") \
            and not obj.targetoptions.get("no_cpython_wrapper"):
        found += [[obj.py_func.__module__, obj.py_func.__name__, str(s)] for s in obj.signatures]
print(json.dumps(sorted(found)))
"""


def _run(code, **env):
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=dict(os.environ, **env), timeout=600)
    assert out.returncode == 0, out.stderr
    return out.stdout


def _found(whole):
    code = _FIT_AND_LIST.replace("WHOLE", str(whole))
    return json.loads(_run(code, GBM_COMPILE_PROCESSES="1").splitlines()[-1])


def test_the_list_is_what_a_first_fit_and_predict_compile():
    # a first fit with a cold cache grows its trees level by level (the whole-tree kernel
    # compiles meanwhile for later fits: compile_later)
    listed = sorted([module, name, str(args)] for module, name, args, _ in compile_ahead.STANDARD)
    assert _found(False) == listed
    # later fits grow a tree in one call: the level kernels are in its code (loaded from
    # the cache with it; compiled on their own, as listed, when it compiles). The first
    # whole-tree process fills the cache (with one helper process it compiles the tree
    # kernel itself, and its calls, e.g. the root histogram without row ids, show up as
    # level-kernel signatures); the second is the later fit, loaded from the cache. Without
    # it the test read whether earlier tests' background compiles had finished.
    _found(True)
    found = _found(True)
    whole = [entry for entry in found if entry[1] == "grow_tree"]
    assert len(whole) == 1 and whole[0][2].startswith("(Array(uint8, 2, 'C'")
    level = {"build_histograms", "evaluate_splits", "partition_rows", "add_split_values",
             "node_weights", "add_leaf_values"}
    assert [e for e in found if e[1] != "grow_tree" and e[1] not in level] == \
        [e for e in listed if e[1] not in level]
    assert all(e in listed for e in found if e[1] in level)


def test_groups_cover_every_entry_once_and_balance_the_time():
    everything = list(range(len(compile_ahead.STANDARD)))
    modules = {entry[0] for entry in compile_ahead.STANDARD}
    for n in (1, 2, 3, 4, 40):
        parts = compile_ahead.groups(everything, n)
        assert sorted(i for part in parts for i in part) == everything
        assert len(parts) == min(n, len(modules))
        # a module's entries in one group (they share helpers)
        for m in modules:
            assert sum(any(compile_ahead.STANDARD[i][0] == m for i in part) for part in parts) == 1
    seconds = [sum(compile_ahead.STANDARD[i][3] for i in part)
               for part in compile_ahead.groups(everything, 2)]
    module_seconds = {m: sum(e[3] for e in compile_ahead.STANDARD if e[0] == m) for m in modules}
    # the helper's share starts behind by its start-up
    assert abs(seconds[0] - (seconds[1] + compile_ahead._START_S)) <= max(module_seconds.values())


# In a process with an empty cache: three cheap entries over two processes. The helper's
# share must be in the cache without being compiled here (no overload in memory).
_OVER_TWO = r"""
import json
from gbm.runtime import compile_ahead as ca
names = ["bin_values", "max_abs_pairs", "add_exact_parts"]  # two modules here, one there
picked = [i for i, e in enumerate(ca.STANDARD) if e[1] in names]
assert not any(ca._cached(ca.STANDARD[i]) for i in picked)
mine, theirs = ca.groups(picked, 2)
ca.compile_over_processes(picked, 2)
print(json.dumps({
    "cached": [ca._cached(ca.STANDARD[i]) for i in picked],
    "theirs_in_memory": [len(ca._dispatcher(ca.STANDARD[i]).overloads) for i in theirs],
    "mine_in_memory": [len(ca._dispatcher(ca.STANDARD[i]).overloads) for i in mine]}))
"""


def test_a_helper_process_fills_the_cache(tmp_path):
    report = json.loads(_run(_OVER_TWO, NUMBA_CACHE_DIR=str(tmp_path)).splitlines()[-1])
    assert report["cached"] == [True, True, True]
    assert report["theirs_in_memory"] and set(report["theirs_in_memory"]) == {0}
    assert report["mine_in_memory"] and set(report["mine_in_memory"]) == {1}


def test_compile_processes_setting_is_checked(monkeypatch):
    monkeypatch.setenv("GBM_COMPILE_PROCESSES", "two")
    with pytest.raises(ValueError, match="GBM_COMPILE_PROCESSES must be an integer"):
        compile_ahead._processes()
    monkeypatch.setenv("GBM_COMPILE_PROCESSES", "0")
    assert compile_ahead._processes() == 1


_COLD_FIT = r"""
import numpy as np, sys
from gbm.sklearn import GBMClassifier
rng = np.random.default_rng(1)
X = rng.normal(size=(400, 6))
y = (X[:, 0] + 0.5 * X[:, 1] > 0).astype(int)
model = GBMClassifier(n_estimators=4, max_depth=3).fit(X, y)
sys.stdout.write(model.get_booster().to_json())
"""


def test_a_cold_first_fit_compiled_over_two_processes_trains_the_same_model(tmp_path):
    cold = _run(_COLD_FIT, NUMBA_CACHE_DIR=str(tmp_path), GBM_COMPILE_PROCESSES="2")
    warm = _run(_COLD_FIT, GBM_COMPILE_PROCESSES="1")
    assert list(tmp_path.rglob("*.nbi"))  # the cold one did compile into its own folder
    assert cold == warm


def test_no_helper_process_from_an_embedding_program(monkeypatch):
    monkeypatch.delenv("GBM_COMPILE_PROCESSES", raising=False)
    monkeypatch.setattr(sys, "executable", "/usr/bin/uwsgi")
    assert compile_ahead._processes() == 1
    monkeypatch.setattr(sys, "executable", "/opt/venv/bin/python3.11")
    assert compile_ahead._processes() == min(len(os.sched_getaffinity(0)), 4)
