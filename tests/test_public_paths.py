"""Every public path of gbm's works after the package layout, and the old module names the
docs once cited import the modules they moved to."""
import importlib
import subprocess
import sys

import pytest

PUBLIC = {
    "gbm": ["Booster", "DMatrix", "QuantileDMatrix", "train", "callback", "GBMClassifier",
            "GBMRegressor", "GBMRanker", "GBMRFClassifier", "GBMRFRegressor",
            "plot_importance", "plot_tree", "plot_metric", "__version__", "cv"],
    "gbm.callback": ["TrainingCallback", "ProgressBar", "EarlyStopping", "EvaluationMonitor"],
    "gbm.sklearn": ["GBMClassifier", "GBMRegressor", "GBMRanker", "GBMRFClassifier",
                    "GBMRFRegressor"],
    "gbm.linear": ["LogisticRegression", "Ridge", "Lasso", "ElasticNet", "LinearSVC"],
    "gbm.collective": ["LOCAL", "ThreadGroup", "CollectiveError"],
    "gbm.objectives": ["get_objective", "OBJECTIVES"],
    "gbm.metrics": ["get_metric", "check_metric_name", "maximizes"],
}


@pytest.mark.parametrize("module", sorted(PUBLIC))
def test_public_names(module):
    m = importlib.import_module(module)
    missing = [name for name in PUBLIC[module] if not hasattr(m, name)]
    assert not missing, f"{module} lacks {missing}"


@pytest.mark.parametrize("module", ["gbm.kernels.cpu", "gbm.kernels.reference",
                                    "gbm.kernels.layout", "gbm.kernels.split_math"])
def test_the_kernels_import_as_gbm_kernels(module):
    assert importlib.import_module(module).__name__ == module


def test_the_top_level_names_are_the_subpackages_objects():
    import gbm
    import gbm.sklearn

    assert gbm.GBMRegressor is gbm.sklearn.GBMRegressor
    assert gbm.GBMRFClassifier is gbm.sklearn.GBMRFClassifier
    assert gbm.train.__module__ == "gbm.training.loop"


def test_the_dask_paths():
    pytest.importorskip("distributed")
    import gbm.dask

    for name in ("train", "CHECKPOINT_FILE", "DaskGBMRegressor", "DaskGBMClassifier",
                 "DaskGBMRanker", "DaskLogisticRegression", "DaskRidge", "DaskLasso",
                 "DaskElasticNet", "DaskLinearSVC"):
        assert hasattr(gbm.dask, name), name
    assert gbm.dask.CHECKPOINT_FILE == "gbm-checkpoint.json"


@pytest.mark.parametrize("old, new", [("gbm.dask_checkpoint", "gbm.dask.checkpoint"),
                                      ("gbm.dask_heap", "gbm.dask.heap"),
                                      ("gbm.dask_sockets", "gbm.dask.sockets")])
def test_the_old_module_names_are_gone(old, new):
    # removed in 0.x (the README's changelog): only the new names import
    pytest.importorskip("distributed")
    assert importlib.import_module(new).__spec__.name == new
    with pytest.raises(ModuleNotFoundError, match=old):
        importlib.import_module(old)


def test_python_m_gbm_runs():
    out = subprocess.run([sys.executable, "-m", "gbm", "--help"], capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "demo" in out.stdout
