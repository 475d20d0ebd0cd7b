"""save_model never loses the file it replaces: serialise first, write a temporary file
in the same folder, rename it over the target."""
import os
import stat

import numpy as np
import pytest

import gbm
from gbm.io import atomic

X = np.random.default_rng(0).normal(size=(200, 3))


@pytest.fixture
def saved(tmp_path):
    booster = gbm.train({"max_depth": 2}, X, X[:, 0], 2)
    path = tmp_path / "model.json"
    booster.save_model(path)
    return booster, path


def _only(path):
    assert sorted(os.listdir(path.parent)) == [path.name], "a temporary file was left behind"


@pytest.mark.parametrize("field", ["value", "gain", "cover", "threshold"])
def test_model_that_cannot_be_serialised_keeps_the_old_file(saved, field):
    """An infinite leaf (training overflowed) used to truncate the file before failing."""
    booster, path = saved
    before = path.read_bytes()
    broken = gbm.Booster.from_json(booster.to_json())
    getattr(broken.trees[1], field)[0] = np.inf
    with pytest.raises(ValueError, match=f"cannot save this model: its tree 1 {field} holds "
                                         "NaN or infinity"):
        broken.save_model(path)
    assert path.read_bytes() == before
    _only(path)


def test_failed_write_keeps_the_old_file(saved, monkeypatch):
    booster, path = saved
    before = path.read_bytes()
    other = gbm.train({"max_depth": 3}, X, X[:, 1], 3)

    def no_rename(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(atomic.os, "replace", no_rename)
    with pytest.raises(OSError, match="disk full"):
        other.save_model(path)
    assert path.read_bytes() == before
    _only(path)
    monkeypatch.undo()
    other.save_model(path)
    assert gbm.Booster.load_model(path).to_json() == other.to_json()
    _only(path)


def test_interrupted_write_keeps_the_old_file(saved, monkeypatch):
    booster, path = saved
    before = path.read_bytes()

    def interrupt(fd):
        raise KeyboardInterrupt

    monkeypatch.setattr(atomic.os, "fsync", interrupt)
    with pytest.raises(KeyboardInterrupt):
        booster.save_model(path)
    assert path.read_bytes() == before
    _only(path)


def test_mode_and_symlink_are_kept(saved):
    booster, path = saved
    os.chmod(path, 0o640)
    booster.save_model(path)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o640
    link = path.parent / "link.json"
    link.symlink_to(path.name)
    gbm.train({"max_depth": 1}, X, X[:, 2], 1).save_model(link)
    assert link.is_symlink() and "max_depth\": 1" in path.read_text()


def test_new_file_gets_the_usual_mode(tmp_path):
    umask = os.umask(0o022)
    try:
        gbm.train({}, X, X[:, 0], 1).save_model(tmp_path / "new.json")
    finally:
        os.umask(umask)
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o644


def test_an_unwritable_folder_is_reported_by_the_target_path(saved, monkeypatch):
    """The error named gbm's hidden temporary file (``.model.json.<hex>.tmp``)."""
    booster, path = saved
    real_open = os.open

    def refuse(name, *args, **kwargs):
        if str(name).endswith(".tmp"):
            raise PermissionError(13, "Permission denied", name)
        return real_open(name, *args, **kwargs)

    monkeypatch.setattr(os, "open", refuse)
    for fmt in ("gbm", "xgboost"):
        with pytest.raises(PermissionError) as err:
            booster.save_model(path, format=fmt)
        assert str(path) in str(err.value) and ".tmp" not in str(err.value)
        assert "Permission denied" in str(err.value)
