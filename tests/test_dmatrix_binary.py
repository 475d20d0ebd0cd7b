"""``DMatrix.save_binary`` and ``DMatrix(path)`` (``gbm.data.binary_format``): every field
round-trips, the same data given densely or sparsely writes the same bytes, a model
trained or predicting on the file's DMatrix is the original's, and a damaged file is
refused with the reason."""
import json
import pathlib
import struct
import zlib

import numpy as np
import pytest
import scipy.sparse as sp

import gbm
from gbm.data import binary_format
from gbm.data.binary_format import BinaryFileError

FIELDS = ("label", "weight", "base_margin", "group", "qid", "label_lower_bound",
          "label_upper_bound", "feature_names", "feature_types")


def _full(seed=0, n=40):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 5))
    X[rng.random(X.shape) < 0.3] = np.nan
    X[:, 2] = rng.integers(0, 4, size=n)
    return gbm.DMatrix(X, label=rng.normal(size=n), weight=rng.random(n) + 0.5,
                       base_margin=rng.normal(size=n), qid=np.repeat(np.arange(8), n // 8),
                       feature_names=list("abcde"), feature_types=["q", "q", "c", "q", "q"])


def _assert_same(a, b):
    for name in FIELDS:
        x, y = getattr(a, name), getattr(b, name)
        assert (x is None) == (y is None), name
        if x is not None:
            np.testing.assert_array_equal(np.asarray(x), np.asarray(y), err_msg=name)
            if isinstance(x, np.ndarray):
                assert x.dtype == y.dtype, name
    assert (a.num_row(), a.num_col()) == (b.num_row(), b.num_col())
    ga, gb = a.get_data(), b.get_data()
    for field in ("indptr", "indices", "data"):
        np.testing.assert_array_equal(getattr(ga, field), getattr(gb, field))


def test_every_field_round_trips(tmp_path):
    d = _full()
    d.save_binary(tmp_path / "d.bin")  # an os.PathLike
    back = gbm.DMatrix(str(tmp_path / "d.bin"))
    _assert_same(d, back)
    assert sp.issparse(back.data)  # missing entries: stored sparsely


def test_other_fields_round_trip(tmp_path):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(12, 3))
    d = gbm.DMatrix(X, label=rng.normal(size=(12, 2)), base_margin=rng.normal(size=(12, 2)),
                    group=[5, 7])
    d.save_binary(str(tmp_path / "m.bin"))
    back = gbm.DMatrix(str(tmp_path / "m.bin"))
    _assert_same(d, back)
    assert isinstance(back.data, np.ndarray) and back.data.dtype == np.float32
    aft = gbm.DMatrix(X, label_lower_bound=np.ones(12), label_upper_bound=np.full(12, np.inf))
    aft.save_binary(tmp_path / "aft.bin")
    _assert_same(aft, gbm.DMatrix(tmp_path / "aft.bin"))


def test_a_libsvm_file_round_trips(tmp_path):
    path = tmp_path / "q.svm"
    path.write_text("1:0.5 qid:1 0:1 2:3\n0:2 qid:1 1:4\n2:1 qid:2 3:0\n")
    d = gbm.DMatrix(str(path) + "?format=libsvm")
    d.save_binary(tmp_path / "q.bin")
    _assert_same(d, gbm.DMatrix(tmp_path / "q.bin"))


def test_dense_and_sparse_write_the_same_bytes(tmp_path):
    rng = np.random.default_rng(2)
    x = sp.random(60, 300, density=0.01, format="csr", random_state=3)
    x.data[:] = 1
    forms = {"f32": sp.csr_matrix((x.data.astype(np.float32), x.indices, x.indptr), x.shape),
             "i32": sp.csr_matrix((x.data.astype(np.int32), x.indices, x.indptr), x.shape),
             "csc": x.tocsc(), "dense_missing_0": x.toarray()}
    written = {}
    for name, data in forms.items():
        missing = 0 if name.startswith("dense") else None
        gbm.DMatrix(data, missing=missing).save_binary(tmp_path / name)
        written[name] = (tmp_path / name).read_bytes()
    assert len(set(written.values())) == 1
    # nothing missing: written densely, whether given densely or sparsely
    full = rng.normal(size=(6, 3))
    gbm.DMatrix(full).save_binary(tmp_path / "a")
    gbm.DMatrix(sp.csr_matrix(full)).save_binary(tmp_path / "b")
    assert (tmp_path / "a").read_bytes() == (tmp_path / "b").read_bytes()


def test_training_and_predicting_on_the_file(tmp_path):
    d = _full(seed=4, n=200)
    d.qid = None  # a regression
    d.feature_types = None
    d.save_binary(tmp_path / "t.bin")
    back = gbm.DMatrix(tmp_path / "t.bin")
    params = {"max_depth": 3}
    model = gbm.train(params, d, 5)
    assert gbm.train(params, back, 5).to_json() == model.to_json()
    np.testing.assert_array_equal(model.predict(back), model.predict(d))


def test_empty_and_categorical(tmp_path):
    empty = gbm.DMatrix(sp.csr_matrix(np.empty((0, 0))))
    assert empty.get_data().shape == (0, 0)
    empty.save_binary(tmp_path / "e.bin")
    assert gbm.DMatrix(tmp_path / "e.bin").num_row() == 0
    pd = pytest.importorskip("pandas")
    frame = pd.DataFrame({"a": [1.0, np.nan, 3.0],
                          "b": pd.Categorical(["x", None, "y"], categories=["y", "x", "z"]),
                          "c": pd.Categorical([5, 6, 5])})
    d = gbm.DMatrix(frame, label=[0.0, 1.0, 0.0])
    d.save_binary(tmp_path / "c.bin")
    back = gbm.DMatrix(tmp_path / "c.bin")
    assert back.feature_names == ["a", "b", "c"] and back.feature_types == ["float", "c", "c"]
    assert back.get_categories(True).to_arrow() == d.get_categories(True).to_arrow()
    np.testing.assert_array_equal(back.get_data().toarray(), d.get_data().toarray())
    params = {"max_depth": 2, "min_child_weight": 0}
    assert gbm.train(params, back, 2).to_json() == gbm.train(params, d, 2).to_json()
    version, _ = struct.unpack_from("<II", (tmp_path / "c.bin").read_bytes(),
                                    len(binary_format.MAGIC))
    assert version == binary_format.CATEGORIES_VERSION  # an older reader refuses it


def _rewritten(raw, header=None, arrays=None):
    """``raw`` (a file save_binary wrote) with its header or array bytes replaced and a
    valid checksum: damage that only the later checks can find."""
    start = len(binary_format.MAGIC) + 8
    version, size = struct.unpack_from("<II", raw, len(binary_format.MAGIC))
    text = raw[start:start + size] if header is None else json.dumps(header).encode()
    body = raw[start + size:-4] if arrays is None else arrays
    out = binary_format.MAGIC + struct.pack("<II", version, len(text)) + text + body
    return out + struct.pack("<I", zlib.crc32(out))


def _damaged(raw):
    """Damaged copies of ``raw`` (a file save_binary wrote): name -> (bytes, match)."""
    start = len(binary_format.MAGIC) + 8
    size = struct.unpack_from("<I", raw, len(binary_format.MAGIC) + 4)[0]
    header = json.loads(raw[start:start + size])
    # CSR indices beyond the columns, under a valid checksum
    names = [a[0] for a in header["arrays"]]
    lengths = [np.dtype(a[1]).itemsize * int(np.prod(a[2])) for a in header["arrays"]]
    body = bytearray(raw[start + size:-4])
    at = sum(lengths[:names.index("indices")])
    body[at:at + 4] = struct.pack("<i", 1000)
    return {
        "truncated": (raw[:-7], "truncated or damaged"),
        "a byte flipped": (raw[:-40] + bytes([raw[-40] ^ 4]) + raw[-39:], "checksum"),
        "another magic": (b"X" + raw[1:], "not a gbm binary DMatrix file"),
        "a newer version": (raw[:len(binary_format.MAGIC)] + struct.pack("<I", 99)
                            + raw[len(binary_format.MAGIC) + 4:], "version 99"),
        "header garbage": (_rewritten(raw, header={"layout": "csr"}), "header cannot be read"),
        "an unknown array": (_rewritten(raw, header=dict(
            header, arrays=header["arrays"] + [["pickle", "|O", [1]]])), "header cannot"),
        "an index beyond the columns": (_rewritten(raw, arrays=bytes(body)),
                                        "not a valid .* CSR matrix"),
    }


@pytest.mark.parametrize("damage", ["truncated", "a byte flipped", "another magic",
                                    "a newer version", "header garbage", "an unknown array",
                                    "an index beyond the columns"])
def test_damaged_files_are_refused(tmp_path, damage):
    path = tmp_path / "d.bin"
    _full().save_binary(path)
    data, match = _damaged(path.read_bytes())[damage]
    path.write_bytes(data)
    with pytest.raises(ValueError, match=match) as caught:
        gbm.DMatrix(str(path))
    assert isinstance(caught.value, BinaryFileError) or damage == "another magic"


def test_binary_file_is_read_without_format_only(tmp_path):
    path = pathlib.Path(tmp_path / "d.bin")
    _full().save_binary(path)
    with pytest.raises(ValueError, match="URI parameters .* without format="):
        gbm.DMatrix(f"{path}?indexing_mode=1")
