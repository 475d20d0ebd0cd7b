"""gbm.io.ubjson, the UBJSON codec of ``.ubj`` model files: values and their Python
types round-trip, the decoder refuses what the strict JSON parser refuses, and it agrees
with XGBoost's own UBJSON in both directions (XGBoost as the oracle)."""
import json
import struct

import numpy as np
import pytest

from gbm.io import ubjson
from gbm.io.ubjson import UBJSONError


def test_values_and_types_round_trip():
    value = {"none": None, "t": True, "f": False, "small": 3, "neg": -200, "big": 2**40,
             "int64": -(2**63), "pi": 3.141592653589793, "tiny": 5e-324, "one": 1.0,
             "text": "modèle \"1\"\t", "empty_list": [], "empty": {},
             "ints": [0, 255, 7], "wide": [-1, 70000], "floats": [0.1, -2.5, 1e300],
             "mixed": [1, 1.0, "a", None, [True]], "nested": {"a": {"b": [[1], [2.0]]}}}
    back = ubjson.loads(ubjson.dumps(value), 8)
    assert back == value
    # 1 and 1.0 stay apart, as in JSON text (validation tells ints from floats)
    assert type(back["one"]) is float and type(back["ints"][0]) is int
    assert [type(v) for v in back["mixed"]] == [int, float, str, type(None), list]
    for typed in (True, False):
        assert ubjson.loads(ubjson.dumps(value, typed_arrays=typed), 8) == value


def test_encoding_is_the_spec():
    """Hand-made bytes (ubjson.org draft 12): markers, big-endian payloads, int64 lengths
    (as XGBoost writes them), typed arrays of the narrowest integer type."""
    assert ubjson.dumps(None) == b"Z" and ubjson.dumps(True) == b"T"
    assert ubjson.dumps(-1) == b"i\xff" and ubjson.dumps(200) == b"U\xc8"
    assert ubjson.dumps(1000) == b"I\x03\xe8" and ubjson.dumps(2**31) == b"L" + struct.pack(">q", 2**31)
    assert ubjson.dumps(0.5) == b"D" + struct.pack(">d", 0.5)
    assert ubjson.dumps("ab") == b"SL" + struct.pack(">q", 2) + b"ab"
    assert ubjson.dumps({"k": [1, 2]}) == (b"{L" + struct.pack(">q", 1) + b"k"
                                          + b"[$U#L" + struct.pack(">q", 2) + b"\x01\x02}")
    assert ubjson.dumps([1, 2], typed_arrays=False) == b"[U\x01U\x02]"
    # what other writers may use: short lengths, counted containers, no-ops, chars
    assert ubjson.loads(b"{U\x01kNC" + b"x" + b"}", 4) == {"k": "x"}
    assert ubjson.loads(b"[#U\x02i\x01D" + struct.pack(">d", 2.0), 4) == [1, 2.0]
    assert ubjson.loads(b"{$d#U\x01U\x01a" + struct.pack(">f", 0.25), 4) == {"a": 0.25}


@pytest.mark.parametrize("data, message", [
    (b"[D" + struct.pack(">d", float("nan")) + b"]", r"non-finite number nan \(in \[0\]\)"),
    (b"[$d#U\x02" + struct.pack(">ff", 1.0, float("inf")), r"non-finite number \(in \[1\]\)"),
    (b"{U\x01aZU\x01aZ}", "the key 'a' twice in one object"),
    (b"[$L#L" + struct.pack(">q", 2**40) + b"\x00" * 8, "count 1099511627776 exceeds"),
    (b"[#L" + struct.pack(">q", 10**12) + b"Z", "count 1000000000000 exceeds"),
    (b"SU\x05ab", "the data ends after 5 bytes, 5 more were expected"),
    (b"SU\x02\xff\xfe", "a string that is not UTF-8"),
    (b"[[[[[Z]]]]]", "containers nest deeper than 4 levels"),
    (b"Z Z", r"2 bytes after the end of the value"),
    (b"HU\x011", "a high-precision number"),
    (b"[$S#U\x01U\x01a", "a typed container of b'S'"),
    (b"{i\xffa}", r"a string's length is negative \(-1\)"),
    (b"{\"a\":1}", "a string's length must be an integer"),
    (b"?", "is not a UBJSON type marker"),
])
def test_refused(data, message):
    with pytest.raises(UBJSONError, match=message):
        ubjson.loads(data, 4)


def test_cannot_write():
    with pytest.raises(UBJSONError, match="non-finite number inf"):
        ubjson.dumps({"a": [1.0, float("inf")]})
    with pytest.raises(UBJSONError, match="object keys must be strings"):
        ubjson.dumps({1: 2})
    with pytest.raises(UBJSONError, match="cannot write a set"):
        ubjson.dumps({"a": {1}})


def _float32_equal(a, b):
    """Equal JSON values, numbers compared as float32 (XGBoost's JSON text prints its
    float32 fields with 9 digits, its UBJSON holds them exactly)."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_float32_equal(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_float32_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return np.float32(a) == np.float32(b)
    return a == b


def test_xgboost_is_the_oracle():
    xgb = pytest.importorskip("xgboost")
    rng = np.random.default_rng(0)
    X, y = rng.normal(size=(300, 4)), rng.normal(size=300)
    d = xgb.DMatrix(X, y, feature_names=["a", "b", "c", "d"])
    theirs = xgb.train({"max_depth": 3}, d, 4)
    # our decoder reads XGBoost's UBJSON as its JSON text says
    decoded = ubjson.loads(bytes(theirs.save_raw("ubj")), 16)
    assert _float32_equal(decoded, json.loads(bytes(theirs.save_raw("json"))))
    # XGBoost's reader takes our encoding (element by element) and predicts the same
    again = xgb.Booster()
    again.load_model(bytearray(ubjson.dumps(decoded, typed_arrays=False)))
    np.testing.assert_array_equal(again.predict(d), theirs.predict(d))
