"""gbm.plotting with matplotlib's Agg backend: what is drawn matches the model."""
import numpy as np
import pytest

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

import gbm  # noqa: E402


@pytest.fixture(scope="module")
def booster():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 4))
    y = 3 * X[:, 0] + X[:, 1] + 0.1 * rng.normal(size=300)
    return gbm.train({"max_depth": 2, "eval_metric": ["rmse", "mae"]}, X[:200], y[:200],
                     num_boost_round=8, feature_names=["a", "b", "c", "d"],
                     evals=[(X[:200], y[:200], "train"), (X[200:], y[200:], "valid")])


@pytest.fixture(autouse=True)
def close_figures():
    yield
    plt.close("all")


def test_plot_importance_bars_are_get_score(booster):
    ax = gbm.plot_importance(booster, importance_type="gain")
    scores = booster.get_score(importance_type="gain")
    labels = [t.get_text() for t in ax.get_yticklabels()]
    widths = [p.get_width() for p in ax.patches]
    assert sorted(labels) == sorted(scores)
    assert dict(zip(labels, widths)) == pytest.approx(scores)
    assert labels[-1] == "a"  # the strongest feature on top
    ax = gbm.plot_importance(booster, max_num_features=1)
    assert [t.get_text() for t in ax.get_yticklabels()] == [max(booster.get_score(), key=booster.get_score().get)]


def test_plot_tree_draws_every_node(booster):
    fig, ax = plt.subplots()
    assert gbm.plot_tree(booster, tree_index=1, ax=ax) is ax
    tree = booster.trees[1]
    texts = [t.get_text() for t in ax.texts]
    leaves = [t for t in texts if t.startswith("leaf")]
    assert len(leaves) == tree.n_leaves
    root = f"{booster.feature_names[tree.split_feature[0]]} < {float(tree.threshold[0]):.4g}"
    assert root in texts
    assert sum("missing" in t for t in texts) == tree.n_nodes - tree.n_leaves
    with pytest.raises(ValueError, match="tree_index"):
        gbm.plot_tree(booster, tree_index=len(booster.trees))


def test_plot_tree_categorical_split_names_the_categories():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(1)
    city = rng.choice(["lyon", "oslo", "rome", "bern", "kiev"], 200)
    X = pd.DataFrame({"city": pd.Categorical(city)})
    booster = gbm.train({"max_depth": 1, "max_cat_to_onehot": 1}, X,
                        (city == "oslo") * 2.0, num_boost_round=1)
    ax = gbm.plot_tree(booster)
    tree = booster.trees[0]
    right = [booster.categories[0][c] for c in tree.node_categories(0)]
    assert set(right) in ({"oslo"}, {"lyon", "rome", "bern", "kiev"})  # oslo split off
    assert "city\nnot in {" + ", ".join(right) + "}" in [t.get_text() for t in ax.texts]


def test_plot_metric_draws_the_curves(booster):
    ax = gbm.plot_metric(booster.evals_result, metric="mae")
    lines = {line.get_label(): line.get_ydata() for line in ax.get_lines()}
    assert set(lines) == {"train", "valid"}
    np.testing.assert_allclose(lines["valid"], booster.evals_result["valid"]["mae"])
    ax = gbm.plot_metric(booster, dataset_names=["valid"])  # a Booster; first metric
    assert [line.get_label() for line in ax.get_lines()] == ["valid"]
    assert ax.get_ylabel() == "rmse"
    with pytest.raises(ValueError, match="no metric 'auc'"):
        gbm.plot_metric(booster.evals_result, metric="auc")
    with pytest.raises(ValueError, match="empty"):
        gbm.plot_metric({})


def test_plot_importance_labels_are_xgboosts_unless_given(booster):
    ax = gbm.plot_importance(booster)
    assert (ax.get_title(), ax.get_xlabel(), ax.get_ylabel()) == \
        ("Feature importance", "Importance score", "Features")
    assert gbm.plot_importance(booster, importance_type="total_gain",
                               xlabel=None).get_xlabel() == "total gain"


def test_plot_tree_takes_xgboosts_names_of_the_tree(booster):
    drawn = {}
    for kwargs in ({"tree_index": 2}, {"tree_idx": 2}, {"num_trees": 2}):
        ax = gbm.plot_tree(booster, **kwargs)
        drawn[next(iter(kwargs))] = ax.get_title()
    assert set(drawn.values()) == {gbm.plot_tree(booster, tree_index=2).get_title()}
    assert drawn["tree_index"].startswith("tree 2 ")
    with pytest.raises(TypeError, match="tree_idx and num_trees name the same tree"):
        gbm.plot_tree(booster, tree_idx=1, num_trees=1)
    with pytest.raises(TypeError, match="tree_index and tree_idx"):
        gbm.plot_tree(booster, 1, tree_idx=1)
