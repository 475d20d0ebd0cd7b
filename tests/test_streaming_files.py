"""``gbm.ParquetIter`` (a ready ``DataIter`` over Parquet/CSV files) and ``python -m gbm
train`` on a folder or glob of files (``--external-memory``): the model of the in-memory
fit of the whole table (issue 26)."""
import subprocess
import sys

import numpy as np
import pytest

import gbm

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")


@pytest.fixture
def table(tmp_path):
    """A table of 600 rows (a text column among the features, missing values) written as
    three Parquet files and a CSV file; each file's text column has its own categories."""
    rng = np.random.default_rng(0)
    n = 600
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "city": rng.choice(["lyon", "oslo", "rome", "kyiv"], n), "w":
                       rng.uniform(0.5, 2, n)})
    df.loc[::7, "x2"] = np.nan
    df.loc[:149, "city"] = np.where(df.loc[:149, "city"] == "kyiv", "lyon", df.loc[:149, "city"])
    df["y"] = ((df["x1"] + (df["city"] == "oslo") * 1.5 + 0.3 * rng.normal(size=n)) > 0) * 1.0
    folder = tmp_path / "parts"
    folder.mkdir()
    for i, (lo, hi) in enumerate([(0, 150), (150, 400), (400, 500)]):
        df[lo:hi].to_parquet(folder / f"part{i}.parquet", index=False)
    df[500:].to_csv(folder / "part3.csv", index=False)
    return df


def _in_memory(df, params, rounds, weight=None):
    X = df.drop(columns=["y", "w"]).astype({"city": "category"})
    return gbm.train(params, gbm.DMatrix(X, label=df["y"].to_numpy(), weight=weight,
                                         enable_categorical=True), rounds).to_json()


def test_parquet_iter_is_the_in_memory_model(tmp_path, table):
    params = {"objective": "binary:logistic", "max_depth": 3, "bin_sample_size": 300}
    expected = _in_memory(table, params, 4, weight=table["w"].to_numpy())
    seen = []
    it = gbm.ParquetIter(tmp_path / "parts", label="y", weight="w", batch_rows=70,
                         on_batch=seen.append)
    assert len(it.files) == 4
    for d in (gbm.QuantileDMatrix(it, bin_sample_size=300),
              gbm.ExtMemQuantileDMatrix(it, bin_sample_size=300, min_cache_page_bytes=500)):
        assert gbm.train(params, d, 4).to_json() == expected
    assert sum(seen) == 4 * len(table)  # two passes, twice
    assert max(seen) == 70


def test_parquet_iter_errors(tmp_path, table):
    with pytest.raises(FileNotFoundError, match="no such file"):
        gbm.ParquetIter(tmp_path / "nothing-*.parquet", label="y")
    with pytest.raises(RuntimeError, match="batch 0: .*no label column 'target'"):
        gbm.QuantileDMatrix(gbm.ParquetIter(tmp_path / "parts", label="target"))


def test_command_line_external_memory(tmp_path, table):
    params = {"objective": "binary:logistic", "max_depth": 3, "bin_sample_size": 200_000}
    X = table.drop(columns=["y"]).astype({"city": "category"})  # "w" is a feature here
    expected = gbm.train(params, gbm.DMatrix(X, label=table["y"].to_numpy(),
                                             enable_categorical=True), 5)
    cache = tmp_path / "cache"
    cache.mkdir()
    for extra in (["--external-memory", "--cache-prefix", str(cache / "c")], []):
        done = subprocess.run(
            [sys.executable, "-m", "gbm", "train", str(tmp_path / "parts" / "*"), "--target",
             "y", "--model", str(tmp_path / "m.json"), "--rounds", "5", "--param",
             "objective=binary:logistic", "--param", "max_depth=3", "--param",
             "bin_sample_size=200000", *extra],
            capture_output=True, text=True, timeout=300)
        assert done.returncode == 0, done.stderr
        got = gbm.Booster.load_model(tmp_path / "m.json")
        assert got.to_json() == expected.to_json()
        assert list(cache.iterdir()) == []  # the pages removed after the fit
