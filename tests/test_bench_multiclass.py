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
