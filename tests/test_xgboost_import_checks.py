"""The XGBoost importer's checks (gbm.io.xgboost_checks, xgboost_trees, xgboost_fields):
each malformed field refused with a ValueError that names it, before anything is built
from it; a cycle refused at once; a declared size allocating nothing before it is
checked (in an interpreter with a memory limit); and every check reached by a case of
tests/support/xgboost_corruptions.py."""
import json
import re
import signal
import sys
from pathlib import Path

import numpy as np
import pytest

from gbm import Booster
from gbm.io import xgboost_checks, xgboost_fields, xgboost_import, xgboost_trees
from tests.support.isolated import run_isolated
from tests.support.xgboost_corruptions import CASES, IDS, corrupted, tree
from tests.support.xgboost_corruptions import models as build_models

xgb = pytest.importorskip("xgboost")
pytest.importorskip("pandas")

CHECK_MODULES = (xgboost_checks, xgboost_fields, xgboost_trees, xgboost_import)


@pytest.fixture(scope="module")
def models():
    return build_models()


class _Overran(Exception):
    pass


def _import(source, seconds=5.0):
    """``Booster.from_xgboost(source)``, interrupted after ``seconds`` of CPU time (a walk
    that never ends fails the test instead of hanging it)."""
    def overran(signum, frame):
        raise _Overran(f"the import ran past {seconds} s of CPU time")

    previous = signal.signal(signal.SIGPROF, overran)
    signal.setitimer(signal.ITIMER_PROF, seconds)
    try:
        return Booster.from_xgboost(source)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, previous)


def _reject(source):
    with pytest.raises(ValueError) as err:
        _import(source)
    return err.value


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_malformed_field_is_named(case, models):
    message = str(_reject(corrupted(case, models)))
    assert re.search(case[4], message), message


def _raise_line(error):
    """The line of a check module whose ``raise`` made ``error``."""
    files = {m.__file__: m.__name__ for m in CHECK_MODULES}
    tb, found = error.__traceback__, None
    while tb is not None:
        name = files.get(tb.tb_frame.f_code.co_filename)
        if name is not None:
            found = (name, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _sources_of_other_raises(tmp_path, monkeypatch):
    """Sources that reach the importer's checks on what it reads (not a model's fields)."""
    path = tmp_path / "latin1.json"
    path.write_bytes(b'{"learner": "\xff"}')
    yield "path_not_utf8", str(path)
    yield "old_binary_the_installed_xgboost_refuses", b"\xff{}"  # neither JSON nor UBJSON
    yield "ubjson_cut_short", b"{L\x00"
    monkeypatch.setitem(sys.modules, "xgboost", None)
    yield "old_binary_without_xgboost", b"binf\x00"


def test_every_check_of_the_importer_is_reached(models, tmp_path, monkeypatch):
    """Each ``raise ValueError`` of the check modules is the one that refuses at least one
    case: a check without a test, or a test whose check was dropped, shows here."""
    reached = {}
    for case in CASES:
        reached.setdefault(_raise_line(_reject(corrupted(case, models))), []).append(case[0])
    for name, source in _sources_of_other_raises(tmp_path, monkeypatch):
        reached.setdefault(_raise_line(_reject(source)), []).append(name)
    lines = {(m.__name__, i + 1) for m in CHECK_MODULES
             for i, line in enumerate(Path(m.__file__).read_text().splitlines())
             if "raise ValueError(" in line}
    missing = sorted(lines - set(reached))
    assert not missing, f"no case reaches the checks at {missing}"


# --- the cases ------------------------------------------------------------------

def test_a_child_pointing_back_at_its_parent_is_refused_at_once(models):
    """Issue 31, 1: a walk without a visited check never ended on this tree."""
    d = json.loads(json.dumps(models["reg"]))
    t = tree(d)
    grandchild = t["left_children"][t["left_children"][0]]
    assert t["left_children"][grandchild] != -1  # a split two levels down
    t["left_children"][grandchild] = t["left_children"][0]
    message = str(_reject(json.dumps(d)))
    assert f"trees[0].left_children[{grandchild}] is {t['left_children'][0]}, which " \
           "trees[0].left_children[0] already is" in message


def test_pruned_nodes_the_root_does_not_reach_are_not_read(models):
    """XGBoost keeps pruned nodes as deleted ones (split index 2**31 - 1, a pruned split
    still naming its pruned children): the import reads only what the walk from the root
    reaches, and predicts as before."""
    X = np.random.default_rng(1).normal(size=(40, 3)).astype(np.float32)
    expected = _import(json.dumps(models["reg"])).predict(X)
    d = json.loads(json.dumps(models["reg"]))
    t = tree(d)
    n = len(t["left_children"])  # deleted nodes n (a split), n + 1 and n + 2 (its leaves)
    t["left_children"] += [n + 1, -1, -1]
    t["right_children"] += [n + 2, -1, -1]
    t["parents"] += [2 ** 31 - 1, n, n]
    for key, value in (("split_indices", 2 ** 31 - 1), ("split_conditions", 0.0),
                       ("default_left", 0), ("sum_hessian", 0.0), ("loss_changes", 0.0),
                       ("base_weights", 0.0), ("split_type", 0)):
        t[key] += [value] * 3
    t["tree_param"].update(num_nodes=str(n + 3), num_deleted="3")
    np.testing.assert_array_equal(_import(json.dumps(d)).predict(X), expected)


def test_a_non_finite_base_score_or_threshold_is_an_import_error(models):
    """Issue 31, 3: NaN here once gave the message of a training that overflowed."""
    for mutate, field in [
        (lambda d: d["learner"]["learner_model_param"].__setitem__("base_score", "NaN"),
         "learner_model_param.base_score"),
        (lambda d: tree(d, 1)["split_conditions"].__setitem__(0, float("-inf")),
         "trees[1].split_conditions[0]")]:
        d = json.loads(json.dumps(models["reg"]))
        mutate(d)
        message = str(_reject(json.dumps(d)))
        assert message.startswith(field) and "training" not in message, message


# --- declared sizes, under a memory limit -----------------------------------------------

_LIMITED = """
    import json, resource, sys
    import gbm
    from tests.support.xgboost_corruptions import cat_tree, models
    from tests.support.corruptions import numeric_model

    xgb_text = json.dumps(models()["cat"])
    gbm_text = numeric_model().to_json()
    with open("/proc/self/status") as fh:
        size = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmSize:"))
    resource.setrlimit(resource.RLIMIT_AS, (size + (1 << 30), resource.RLIM_INFINITY))

    def xgb_case(mutate):
        d = json.loads(xgb_text)
        mutate(d)
        return lambda: gbm.Booster.from_xgboost(json.dumps(d))

    lmp = lambda d: d["learner"]["learner_model_param"]
    obj = lambda d: d["learner"]["objective"]
    def many_classes(d):
        obj(d).update(name="multi:softprob", softmax_multiclass_param={"num_class": "1000000000"})
        lmp(d).update(num_class="1000000000", base_score="0.5")
    def gbm_features(text):
        d = json.loads(text)
        d["n_features"] = 2 ** 31 - 1
        return lambda: gbm.Booster.from_json(json.dumps(d))
    cases = {
        "num_feature": xgb_case(lambda d: (lmp(d).__setitem__("num_feature", "1000000000"),
                                           d["learner"].update(feature_names=[], feature_types=[]),
                                           d["learner"]["gradient_booster"]["model"]["cats"]
                                           .__setitem__("enc", []))),
        "category": xgb_case(lambda d: cat_tree(d)["categories"].__setitem__(0, 2_000_000_000)),
        "num_class": xgb_case(many_classes),
        "n_features": gbm_features(gbm_text),
    }
    out = {}
    for name, call in cases.items():
        try:
            call()
            out[name] = ["loaded", ""]
        except BaseException as err:
            out[name] = [type(err).__name__, str(err)]
    print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def limited():
    """Each declared-size case's (error type, message), run in an interpreter whose
    address space may grow by 1 GiB."""
    return json.loads(run_isolated(_LIMITED, timeout=300).strip().splitlines()[-1])


@pytest.mark.parametrize("case, pattern", [
    ("num_feature", r"learner_model_param\.num_feature is 1000000000: a model that lists no "
                    r"feature names or types declares at most 1048576"),
    ("category", r"trees\[\d+\]\.categories\[0\] is 2000000000, outside \[0, 65536\)"),
    ("num_class", r"learner_model_param gives 1000000000 outputs .* has at most 1048576"),
    ("n_features", r"cuts must be a list of 2147483647 lists \(one per feature\); "
                   r"n_features is 2147483647"),
], ids=["num_feature", "category", "num_class", "n_features"])
def test_a_declared_size_allocates_nothing_before_it_is_checked(limited, case, pattern):
    """Issue 31, 2: a 1.3 KB file once built a set per declared feature (5.3 GB), a list
    of 2**31 categories, 10**9 base margins, or [None] * 2**31 for a gbm file."""
    kind, message = limited[case]
    assert kind == "ValueError" and re.search(pattern, message), (kind, message)


_REPEATS = """
    import json, resource
    import gbm
    from tests.support.corruptions import categorical_model
    from tests.support.xgboost_corruptions import enc, models

    labels = [f"c{i}" for i in range(65535)] + ["c65534"]  # the repeat at the very end
    gbm_file = json.loads(categorical_model().to_json())
    gbm_file["categories"][0] = labels
    xgb_file = json.loads(json.dumps(models()["cat"]))
    enc(xgb_file, 2).update(values=list(range(65535)) + [65534])
    resource.setrlimit(resource.RLIMIT_CPU, (5, 5))  # the quadratic search took 17 s
    for load, d in ((gbm.Booster.from_json, gbm_file), (gbm.Booster.from_xgboost, xgb_file)):
        try:
            load(json.dumps(d))
        except ValueError as err:
            print(err)
"""


def test_a_repeated_label_among_65536_is_found_in_linear_time():
    """Both formats looked for the repeated category label with a list's ``in``: 65,536
    labels with the repeat last took 17 s of CPU (a 600 KB file)."""
    lines = run_isolated(_REPEATS, timeout=120).strip().splitlines()
    assert len(lines) == 2, lines
    assert re.search(r"categories\[0\] holds the label 'c65534' twice", lines[0]), lines[0]
    assert re.search(r"cats\.enc\[2\]\.values holds the category 65534 twice", lines[1]), lines[1]
