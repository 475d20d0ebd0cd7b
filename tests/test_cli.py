"""The command line (gbm.cli.main): train and predict on CSV and Parquet files in a subprocess,
clean help, one-line errors without a traceback."""
import os
import subprocess
import sys

import numpy as np
import pytest

import gbm
from gbm.cli import main as cli

pd = pytest.importorskip("pandas")


def _gbm(*args, cwd):
    return subprocess.run([sys.executable, "-m", "gbm", *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=300)


@pytest.fixture
def tables(tmp_path):
    rng = np.random.default_rng(0)
    n = 240
    df = pd.DataFrame({"x1": rng.normal(size=n), "x2": rng.normal(size=n),
                       "city": rng.choice(["lyon", "oslo", "rome"], n)})
    df["y"] = df["x1"] + (df["city"] == "oslo") * 2.0 + 0.1 * rng.normal(size=n)
    df[:160].to_csv(tmp_path / "train.csv", index=False)
    df[160:].to_parquet(tmp_path / "valid.parquet", index=False)
    return df


def test_train_then_predict_csv_and_parquet(tmp_path, tables):
    done = _gbm("train", "train.csv", "--target", "y", "--model", "m.json", "--rounds", 12,
                "--param", "max_depth=3", "--param", "eta=0.3", "--eval", "valid.parquet",
                "--eval-every", 5, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    # eval lines every 5 rounds and at the last; a progress bar with the total
    lines = [line for line in done.stdout.splitlines() if line.startswith("[")]
    assert [line.split("\t")[0] for line in lines] == ["[0]", "[5]", "[10]", "[11]"]
    assert "valid-rmse:" in lines[-1]
    assert "/12" in done.stderr
    done = _gbm("predict", "m.json", "valid.parquet", "--output", "p.parquet", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    got = pd.read_parquet(tmp_path / "p.parquet")["prediction"].to_numpy()
    # the same as the model file loaded here, on the same frame (text column as category)
    booster = gbm.Booster.load_model(tmp_path / "m.json")
    valid = cli.read_table(str(tmp_path / "valid.parquet"))
    np.testing.assert_allclose(got, booster.predict(valid[["x1", "x2", "city"]]))
    assert booster.categories[2] == ["lyon", "oslo", "rome"]
    rmse = np.sqrt(np.mean((got - tables["y"][160:].to_numpy()) ** 2))
    assert rmse < 0.5  # it learnt the signal (label std ~1.3)
    done = _gbm("predict", "m.json", "train.csv", "--output", "p.csv", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert len(pd.read_csv(tmp_path / "p.csv")) == 160


def test_errors_are_one_line_without_traceback(tmp_path, tables):
    done = _gbm("train", "train.csv", "--target", "price", "--model", "m.json", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stderr.startswith("gbm: error: --target 'price' is not a column of")
    assert "Traceback" not in done.stderr and len(done.stderr.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["--param", "max_dept=3"], "unknown parameter 'max_dept'"),
    (["--param", "max_depth=-1"], "max_depth must be >= 0"),
    (["--param", "max_depth"], "expected KEY=VALUE"),
    (["--eval", "nothere.parquet"], "'nothere.parquet': no such file"),
    (["--weight", "w"], "--weight 'w' is not a column"),
])
def test_bad_arguments_name_the_problem(tmp_path, tables, capsys, argv, message):
    rc = cli.main(["train", str(tmp_path / "train.csv"), "--target", "y", "--model",
                   str(tmp_path / "m.json"), "--rounds", "1", "--quiet", *argv])
    err = capsys.readouterr().err
    assert rc == 2 and message in err and len(err.strip().splitlines()) == 1


def test_multiclass_gets_num_class_and_xgboost_format(tmp_path, tables, capsys):
    frame = pd.read_csv(tmp_path / "train.csv")
    frame["label"] = np.digitize(frame["y"], [0.0, 1.5])
    frame.to_csv(tmp_path / "multi.csv", index=False)
    rc = cli.main(["train", str(tmp_path / "multi.csv"), "--target", "label", "--model",
                   str(tmp_path / "m.json"), "--rounds", "3", "--quiet", "--format", "xgboost",
                   "--param", "objective=multi:softprob", "--param", "max_depth=2"])
    assert rc == 0, capsys.readouterr().err
    rc = cli.main(["predict", str(tmp_path / "m.json"), str(tmp_path / "multi.csv"),
                   "--output", str(tmp_path / "p.csv")])
    assert rc == 0, capsys.readouterr().err
    out = pd.read_csv(tmp_path / "p.csv")
    assert list(out.columns) == ["prediction_0", "prediction_1", "prediction_2"]
    np.testing.assert_allclose(out.sum(axis=1), 1.0, rtol=1e-6)


@pytest.mark.parametrize("argv", [[], ["train"], ["predict"], ["demo"]])
def test_help_is_plain_text(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main([*argv, "--help"])
    out = capsys.readouterr().out
    assert exit_.value.code == 0 and out.startswith("usage: python -m gbm")
    assert "``" not in out and ":class:" not in out and "**" not in out


def test_parse_params_reads_json_values_else_text():
    assert cli.parse_params(["max_depth=4", "eta=0.1", "objective=binary:logistic",
                             "quantile_alpha=[0.1,0.9]", "ndcg_exp_gain=false"]) == {
        "max_depth": 4, "eta": 0.1, "objective": "binary:logistic",
        "quantile_alpha": [0.1, 0.9], "ndcg_exp_gain": False}


def test_predictions_are_written_atomically(tmp_path, tables, monkeypatch):
    """A full disk mid-write used to leave a partial file over the earlier predictions."""
    assert cli.main(["train", str(tmp_path / "train.csv"), "--target", "y", "--model",
                     str(tmp_path / "m.json"), "--rounds", "2", "--quiet"]) == 0
    for out in ("p.csv", "p.parquet"):
        argv = ["predict", str(tmp_path / "m.json"), str(tmp_path / "train.csv"),
                "--output", str(tmp_path / out)]
        assert cli.main(argv) == 0
        before = (tmp_path / out).read_bytes()

        def disk_full(frame, path, *args, **kwargs):
            with open(path, "wb") as fh:
                fh.write(b"prediction\n0.12")  # a partial write, then the error
            raise OSError(28, "No space left on device")

        with monkeypatch.context() as patch:
            patch.setattr(pd.DataFrame, "to_csv" if out.endswith("csv") else "to_parquet",
                          disk_full)
            assert cli.main(argv) == 2
        assert (tmp_path / out).read_bytes() == before
        assert not [p for p in os.listdir(tmp_path) if p.endswith(".tmp")], "a temp file left"


@pytest.mark.parametrize("command", [
    ["train", "train.csv", "--target", "y", "--model", "train.csv"],
    ["train", "train.csv", "--target", "y", "--model", "valid.parquet", "--eval",
     "valid.parquet"],
    ["train", "train.csv", "--target", "y", "--model", "./sub/../train.csv"],
    ["predict", "m.json", "train.csv", "--output", "train.csv"],
    ["predict", "m.json", "train.csv", "--output", "link.csv"],  # a symlink to the data
])
def test_an_output_that_is_an_input_is_refused(tmp_path, tables, capsys, command):
    """`train d.csv --model d.csv` used to exit 0 with the data file gone."""
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.csv").symlink_to("train.csv")
    assert cli.main(["train", str(tmp_path / "train.csv"), "--target", "y", "--model",
                     str(tmp_path / "m.json"), "--rounds", "1", "--quiet"]) == 0
    capsys.readouterr()
    files = {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()}
    argv = [str(tmp_path / a) if a.endswith((".csv", ".parquet", ".json")) else a
            for a in command]
    assert cli.main(argv + (["--quiet"] if command[0] == "train" else [])) == 2
    err = capsys.readouterr().err
    assert "would destroy it" in err and len(err.strip().splitlines()) == 1, err
    assert {p: p.read_bytes() for p in tmp_path.iterdir() if p.is_file()} == files


def test_a_table_without_rows_is_reported_as_such(tmp_path, tables, capsys):
    """A CSV with a header and no rows was reported as "--target 'y' holds text"."""
    (tmp_path / "empty.csv").write_text("x1,x2,city,y\n")
    rc = cli.main(["train", str(tmp_path / "empty.csv"), "--target", "y", "--model",
                   str(tmp_path / "m.json"), "--quiet"])
    err = capsys.readouterr().err
    assert rc == 2 and "no rows" in err and "holds text" not in err, err
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("command", ["train", "predict"])
def test_a_missing_output_folder_is_named_by_the_option(tmp_path, tables, capsys, command):
    """Was reported under gbm's hidden temporary file name, after training."""
    model = tmp_path / "m.json"
    assert cli.main(["train", str(tmp_path / "train.csv"), "--target", "y", "--model",
                     str(model), "--rounds", "1", "--quiet"]) == 0
    capsys.readouterr()
    missing = tmp_path / "nowhere" / "out.csv"
    argv = (["train", str(tmp_path / "train.csv"), "--target", "y", "--model",
             str(missing.with_suffix(".json")), "--quiet"] if command == "train" else
            ["predict", str(model), str(tmp_path / "train.csv"), "--output", str(missing)])
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    option = "--model" if command == "train" else "--output"
    assert f"{option} '{tmp_path / 'nowhere'}" in err and "no folder" in err, err
    assert ".tmp" not in err


def test_save_model_names_the_missing_folder_not_its_temporary_file(tmp_path):
    booster = gbm.train({}, np.eye(3), np.arange(3.0), 1)
    for fmt in ("gbm", "xgboost"):
        with pytest.raises(FileNotFoundError) as err:
            booster.save_model(tmp_path / "nowhere" / "m.json", format=fmt)
        assert "nowhere" in str(err.value) and ".tmp" not in str(err.value)
