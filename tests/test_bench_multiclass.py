"""``python -m bench multiclass`` on a tiny case: every peer's row is written, CatBoost's
among them when it is installed, and a peer named in ``--slow`` is fitted on
``--slow-rounds`` rounds with its fit time labelled as extrapolated (seconds per round
times ``--rounds``) and its metric labelled with the rounds fitted."""
import re

import pytest

from bench import multiclass


def _rows(text):
    return [line.split(" | ") for line in text.splitlines() if line.startswith("| classes-")
            or line.startswith("| targets-")]


def test_slow_peers_are_fitted_on_fewer_rounds_and_labelled(tmp_path):
    pytest.importorskip("catboost")
    out = tmp_path / "r.md"
    multiclass.main(["--rows", "300", "--features", "4", "--rounds", "4", "--depth", "3",
                     "--threads", "1", "--cases", "classes-5", "targets-2", "--skip", "xgboost",
                     "lightgbm", "no projection", "--slow", "one_output_per_tree",
                     "--slow-rounds", "2", "--out", str(out)])
    rows = _rows(out.read_text())
    names = [r[1] for r in rows]
    gbm_peers = ["gbm one_output_per_tree", "gbm multi_output_tree (projection auto)"]
    assert names == gbm_peers + ["catboost MultiClass"] + gbm_peers + ["catboost MultiRMSE"]
    for r in rows:
        rounds, fit, per_round, metric = int(r[2]), r[3], float(r[4]), r[6]
        if r[1] == "gbm one_output_per_tree":
            assert rounds == 2 and fit.endswith("(extrapolated from 2 rounds)")
            assert float(fit.split()[0]) == pytest.approx(per_round * 4, abs=0.02)
            assert metric.endswith("(at 2 rounds)")
        else:
            assert rounds == 4 and re.fullmatch(r"[0-9.]+", fit) and "rounds" not in metric
    assert "Rows marked extrapolated: fitted on 2 rounds" in out.read_text()


def _match_run(tmp_path, match_rounds):
    out = tmp_path / "m.md"
    multiclass.main(["--rows", "400", "--features", "4", "--rounds", "4", "--depth", "3",
                     "--threads", "1", "--cases", "classes-5", "--skip", "xgboost", "lightgbm",
                     "catboost", "no projection", "--match", "0.01", "--match-rounds",
                     str(match_rounds), "--out", str(out)])
    return _rows(out.read_text())


def test_match_grows_vector_leaves_until_the_best_full_peer_is_reached(tmp_path):
    rows = _match_run(tmp_path, 60)
    full = {r[1]: float(r[6].split()[1]) for r in rows[:2]}
    best_name = min(full, key=full.get)
    matched = rows[2]
    assert matched[1].endswith(f"to within 1.0% of {best_name}")
    target = float(re.search(r"target ([0-9.]+)", matched[6]).group(1))
    assert target == pytest.approx(full[best_name] * 1.01, abs=1e-4)
    rounds, value = int(matched[2]), float(matched[6].split()[1])
    assert 1 <= rounds <= 60 and value <= target
    assert float(matched[4]) == pytest.approx(float(matched[3]) / rounds, abs=0.002)


def test_match_says_when_the_target_is_not_reached(tmp_path):
    matched = _match_run(tmp_path, 1)[2]
    assert matched[2] == "1" and matched[3].startswith("not reached: ")
