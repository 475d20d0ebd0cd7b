"""Draws the images of docs/plotting.md: ``python docs/images/make_plots.py``."""
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from sklearn.datasets import load_diabetes  # noqa: E402

import gbm  # noqa: E402

HERE = Path(__file__).resolve().parent

X, y = load_diabetes(return_X_y=True, as_frame=True)
train, valid = slice(0, 330), slice(330, None)
booster = gbm.train({"max_depth": 3, "learning_rate": 0.05, "eval_metric": ["rmse", "mae"]},
                    X[train], y[train], num_boost_round=150,
                    evals=[(X[train], y[train], "train"), (X[valid], y[valid], "valid")])

for name, draw in {
    "plot_importance.png": lambda: gbm.plot_importance(booster, importance_type="gain",
                                                       max_num_features=8),
    "plot_tree.png": lambda: gbm.plot_tree(booster, tree_index=0, precision=3),
    "plot_metric.png": lambda: gbm.plot_metric(booster.evals_result, metric="rmse"),
}.items():
    ax = draw()
    ax.figure.tight_layout()
    ax.figure.savefig(HERE / name, dpi=80)
    plt.close(ax.figure)
    print("wrote", HERE / name)
