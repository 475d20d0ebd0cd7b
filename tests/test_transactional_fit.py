"""A fit changes an estimator only when it completes (gbm/sklearn/boosting.py's transaction);
``predict`` checks X's width against the booster it calls."""
import numpy as np
import pytest

import gbm
from gbm.callback import TrainingCallback
from tests.support.isolated import run_isolated

RNG = np.random.default_rng(0)
X4 = RNG.normal(size=(300, 4))
X6 = RNG.normal(size=(300, 6))
Y_REG = X4[:, 0] + X4[:, 1] ** 2
Y_CLASS = np.where(X4[:, 0] > 0, "yes", "no")


class _Raise(TrainingCallback):
    def __init__(self, error, at_round=1):
        self.error, self.at_round = error, at_round

    def after_iteration(self, model, epoch, evals_log):
        if epoch == self.at_round:
            raise self.error
        return False


def _fitted_state(est):
    names = ("n_features_in_", "feature_names_in_", "classes_", "n_classes_", "_label_encoder")
    state = {name: getattr(est, name) for name in names if hasattr(est, name)}
    return state, est.get_booster()


def _assert_unchanged(est, before, X, expected):
    state, booster = before
    now_state, now_booster = _fitted_state(est)
    assert now_booster is booster
    assert now_state.keys() == state.keys()
    for name, value in state.items():
        assert now_state[name] is value, name
    np.testing.assert_array_equal(est.predict(X), expected)


@pytest.mark.parametrize("failure", [
    "bad_param", "bad_eval_set", "callback_error", "keyboard_interrupt"])
def test_failed_refit_keeps_the_previous_fit(failure):
    reg = gbm.GBMRegressor(n_estimators=5, max_depth=3).fit(X4, Y_REG)
    expected = reg.predict(X4)
    before = _fitted_state(reg)
    y6 = X6[:, 0]
    kwargs = {}
    if failure == "bad_param":
        reg.set_params(max_bin=5000)
        error = ValueError
    elif failure == "bad_eval_set":  # the width was set before train ran: issue 12
        kwargs["eval_set"] = [(X4, Y_REG)]
        error = ValueError
    elif failure == "callback_error":
        kwargs["callbacks"] = [_Raise(RuntimeError("stop"))]
        error = RuntimeError
    else:
        kwargs["callbacks"] = [_Raise(KeyboardInterrupt())]
        error = KeyboardInterrupt
    with pytest.raises(error):
        reg.fit(X6, y6, **kwargs)
    reg.set_params(max_bin=256)
    _assert_unchanged(reg, before, X4, expected)
    with pytest.raises(ValueError, match="X has 6 features, but GBMRegressor is expecting 4"):
        reg.predict(X6)


def test_failed_classifier_refit_keeps_labels():
    pd = pytest.importorskip("pandas")
    clf = gbm.GBMClassifier(n_estimators=5, max_depth=3).fit(X4, Y_CLASS)
    expected = clf.predict(X4)
    before = _fitted_state(clf)
    frame = pd.DataFrame(X6, columns=list("abcdef"))
    labels = np.array(["a", "b", "c"])[RNG.integers(0, 3, 300)]
    with pytest.raises(ValueError, match="eval_set holds labels"):
        clf.fit(frame, labels, eval_set=[(frame, np.full(300, "z"))])
    _assert_unchanged(clf, before, X4, expected)
    assert list(clf.classes_) == ["no", "yes"] and not hasattr(clf, "feature_names_in_")


def test_failed_first_fit_leaves_the_estimator_unfitted():
    reg = gbm.GBMRegressor(n_estimators=5, max_bin=5000)
    with pytest.raises(ValueError, match="max_bin"):
        reg.fit(X4, Y_REG)
    assert not hasattr(reg, "n_features_in_") and not hasattr(reg, "_Booster")


def test_successful_refit_replaces_everything():
    pd = pytest.importorskip("pandas")
    clf = gbm.GBMClassifier(n_estimators=5, max_depth=3).fit(
        pd.DataFrame(X4, columns=list("abcd")), Y_CLASS)
    assert list(clf.feature_names_in_) == list("abcd")
    labels = np.array([1, 2, 3])[RNG.integers(0, 3, 300)]
    clf.fit(X6, labels)
    assert clf.n_features_in_ == 6 and not hasattr(clf, "feature_names_in_")
    assert list(clf.classes_) == [1, 2, 3] and clf.get_booster().n_features == 6
    assert set(clf.predict(X6)) <= {1, 2, 3}


def test_continuing_from_itself():
    reg = gbm.GBMRegressor(n_estimators=3, max_depth=3).fit(X4, Y_REG)
    reg.fit(X4, Y_REG, xgb_model=reg)
    assert reg.get_booster().num_boosted_rounds == 6


def test_predict_checks_the_width_against_the_booster():
    """The kernels index rows by the model's feature count without bounds checks."""
    booster = gbm.train({}, X6, X6[:, 0], 2)
    narrow = np.ascontiguousarray(X4, dtype=np.float32)
    for kwargs in ({}, {"pred_leaf": True}, {"pred_contribs": True}):
        with pytest.raises(ValueError, match="with 6 columns, the model's feature count"):
            booster._predict_checked(narrow, **kwargs)
    with pytest.raises(ValueError, match="C-ordered float32"):
        booster._predict_checked(np.asfortranarray(X6, dtype=np.float32))


def test_predict_during_a_refit_sees_the_previous_fit():
    """What another thread sees while a refit runs, made deterministic: a callback of the
    refit predicts with the estimator being refitted. It must see the previous fit whole;
    the new width was visible before training ended, and a 4-column X then reached the
    7-feature booster's kernel, which read past its rows. In a fresh interpreter."""
    out = run_isolated("""
        import numpy as np
        import gbm
        from gbm.callback import TrainingCallback

        rng = np.random.default_rng(0)
        X7, X4 = rng.normal(size=(300, 7)), rng.normal(size=(300, 4))
        clf = gbm.GBMClassifier(n_estimators=3, max_depth=3)
        clf.fit(X7, np.where(X7[:, 0] > 0, "yes", "no"))
        before = clf.predict(X7)
        seen = []

        class PredictDuringFit(TrainingCallback):
            def after_iteration(self, model, epoch, evals_log):
                seen.append((clf.n_features_in_, list(clf.classes_),
                             np.array_equal(clf.predict(X7), before)))
                try:
                    clf.predict(X4)
                    seen.append("a 4-column X was accepted")
                except ValueError:
                    pass
                return False

        clf.fit(X4, np.array([1, 2, 3])[rng.integers(0, 3, 300)], callbacks=[PredictDuringFit()])
        assert seen and all(s == (7, ["no", "yes"], True) for s in seen), seen
        assert clf.n_features_in_ == 4 and list(clf.classes_) == [1, 2, 3]
        print("ok")
    """)
    assert out.strip() == "ok"


def test_two_threads_refitting_one_estimator_never_mix_states():
    """Each thread refits the same estimator on data of its own width and labels while
    others predict; every prediction sees one whole fit (the right width and labels or a
    clear error), and at the end the state is one thread's fit. Run in a fresh
    interpreter: a width mix-up used to read past X's end."""
    out = run_isolated("""
        import threading
        import numpy as np
        import gbm

        rng = np.random.default_rng(0)
        data = {4: (rng.normal(size=(400, 4)), np.array(["a", "b"])[rng.integers(0, 2, 400)]),
                7: (rng.normal(size=(400, 7)), np.array([10, 20, 30])[rng.integers(0, 3, 400)])}
        clf = gbm.GBMClassifier(n_estimators=3, max_depth=3).fit(*data[4])
        errors, seen = [], []

        def refit(width):
            for _ in range(4):
                clf.fit(*data[width])

        def predict():
            for _ in range(60):
                for width, (X, labels) in data.items():
                    try:
                        got = clf.predict(X)
                    except ValueError as err:  # the other fit's width: a clear error
                        assert "feature" in str(err), err
                        continue
                    assert set(got) <= set(labels), (width, set(got))
                    seen.append(width)

        def guarded(target, *args):
            try:
                target(*args)
            except BaseException as err:
                errors.append(repr(err))

        threads = [threading.Thread(target=guarded, args=(refit, 4)),
                   threading.Thread(target=guarded, args=(refit, 7)),
                   threading.Thread(target=guarded, args=(predict,))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
        width = clf.n_features_in_
        assert clf.get_booster().n_features == width
        assert set(clf.classes_) == set(data[width][1])
        assert set(clf.predict(data[width][0])) <= set(data[width][1])
        print("ok", len(seen))
    """, timeout=300)
    assert out.startswith("ok")
