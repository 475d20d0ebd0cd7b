"""The benchmark's results header reports the installed gbm, whose distribution is
``detgbm`` (``gbm`` on the package index is an unrelated project)."""
import importlib.metadata
import types

from bench import run


def test_results_header_gives_the_installed_gbm_version():
    args = types.SimpleNamespace(rows=1000, n_jobs=1, repeats=1, cases="clf-1m")
    versions = next(line for line in run.header_lines("python -m bench", args, 0.0)
                    if line.startswith("- versions: "))
    assert f"gbm {importlib.metadata.version('detgbm')}," in versions, versions
    assert "not installed" not in versions.split(",")[0]
