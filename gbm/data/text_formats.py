"""Text data files as XGBoost reads them through a ``DMatrix`` URI (``gbm.data.uri``):
LIBSVM (``label[:weight] [qid:q] index:value ...``) and CSV (numbers only).

Each reader returns ``TextData``: the features (LIBSVM: a SciPy CSR matrix of the
entries given; CSV: a dense float32 matrix, NaN where a field is empty) and the
labels, weights and query ids the file holds. Lines are split and their shape checked
in a few passes over lists of bytes, the numbers parsed by ``float`` / ``int`` into
NumPy arrays, so that a file of a few MB reads in a fraction of a second. A malformed
line is an error that names the file and the line: XGBoost's parser reads some of them
as zeros.
"""
import dataclasses

import numpy as np

from .inputs import FLOAT, VALUE_LIMIT


@dataclasses.dataclass
class TextData:
    """What a text file holds. ``data``: (n_rows, n_cols) features; ``label``,
    ``weight``: float64 (n_rows,) or None; ``qid``: int64 (n_rows,) or None."""

    data: object
    label: object = None
    weight: object = None
    qid: object = None


class FileFormatError(ValueError):
    """A text data file that does not follow its format (names the file and the line)."""


def _lines(path):
    """The file's lines as bytes, without line ends."""
    with open(path, "rb") as f:
        text = f.read()
    return text.split(b"\n")


def _numbers(tokens, dtype, path, line_of, what):
    """``tokens`` (list of bytes) parsed as ``dtype`` (int64 or float64) with Python's
    ``int`` / ``float`` (faster than NumPy's cast of a bytes array); a token that does
    not parse is reported with its line (``line_of(i)``: the line of token i)."""
    kind = int if dtype == np.int64 else float
    try:
        return np.fromiter(map(kind, tokens), dtype, count=len(tokens))
    except (ValueError, OverflowError):
        pass
    for i, token in enumerate(tokens):
        try:
            np.array([kind(token)], dtype=dtype)
        except (ValueError, OverflowError):
            raise FileFormatError(f"{path}, line {line_of(i)}: {what} "
                                  f"{token.decode(errors='replace')!r} is not "
                                  f"{'an integer' if kind is int else 'a number'}") from None
    raise AssertionError("unreachable: the bulk parse failed but no token fails alone")


def _check_range(values, path, line_of, what):
    """Finite ``values`` beyond float32's range are an error (they would be infinite)."""
    beyond = np.isfinite(values) & (np.abs(values) > VALUE_LIMIT)
    if beyond.any():
        i = int(np.flatnonzero(beyond)[0])
        raise FileFormatError(f"{path}, line {line_of(i)}: {what} {float(values[i])!r} is "
                              f"beyond float32's range (|x| <= {VALUE_LIMIT:.7g})")


def _pairs_ok(blob, n_tokens):
    """Whether ``blob``, tokens joined by single spaces, is ``n_tokens`` tokens of the
    form ``a:b`` (exactly one colon, text on both sides), tested without a Python loop."""
    if n_tokens == 0:
        return True
    raw = np.frombuffer(blob, dtype=np.uint8)
    where = np.flatnonzero((raw == ord(":")) | (raw == ord(" ")))
    if where.shape[0] != 2 * n_tokens - 1:
        return False
    seps = raw[where]
    return bool((seps[0::2] == ord(":")).all() and (seps[1::2] == ord(" ")).all()
                and where[0] > 0 and where[-1] < raw.shape[0] - 1
                and (np.diff(where) > 1).all())


def read_libsvm(path, indexing_mode=0):
    """A LIBSVM file: ``label[:weight] [qid:q] index:value ...`` a line; ``#`` starts a
    comment; blank lines are skipped.

    ``indexing_mode``: 0 reads the indices as 0-based (XGBoost's default), > 0 as
    1-based, < 0 as 1-based when no index in the file is 0. Columns: the largest index
    + 1. Entries with the value NaN are missing, as absent ones; an index given twice in
    a line is an error. Returns ``TextData`` with a float32 CSR matrix.
    """
    import scipy.sparse as sp

    heads, qids, counts, lines_of_rows, tokens = [], [], [], [], []
    for number, line in enumerate(_lines(path), 1):
        cut = line.find(b"#")
        parts = (line if cut < 0 else line[:cut]).split()
        if not parts:
            continue
        start = 2 if len(parts) > 1 and parts[1].startswith(b"qid:") else 1
        heads.append(parts[0])
        qids.append(parts[1][4:] if start == 2 else None)
        counts.append(len(parts) - start)
        lines_of_rows.append(number)
        tokens.extend(parts[start:])
    if not heads:
        raise FileFormatError(f"{path}: the file holds no rows")
    lines_of_rows = np.asarray(lines_of_rows)
    indptr = np.concatenate(([0], np.cumsum(counts))).astype(np.int64)
    row_line = lines_of_rows.__getitem__
    label, weight = _libsvm_heads(heads, path, row_line)
    qid = _libsvm_qids(qids, path, row_line)

    def token_line(i):
        return lines_of_rows[np.searchsorted(indptr, i, side="right") - 1]

    blob = b" ".join(tokens)
    if not _pairs_ok(blob, len(tokens)):
        bad = next(i for i, t in enumerate(tokens) if not _pairs_ok(t, 1))
        raise FileFormatError(f"{path}, line {token_line(bad)}: "
                              f"{tokens[bad].decode(errors='replace')!r} is not index:value")
    flat = blob.replace(b":", b" ").split()
    index = _numbers(flat[0::2], np.int64, path, token_line, "feature index")
    values = _numbers(flat[1::2], np.float64, path, token_line, "value")
    _check_range(values, path, token_line, "value")
    index = _shift_indices(index, indexing_mode, path, token_line)
    n_cols = int(index.max()) + 1 if index.shape[0] else 0
    matrix = sp.csr_matrix((values.astype(FLOAT), index, indptr),
                           shape=(len(heads), n_cols))
    matrix = _canonical(matrix, path, row_line)
    return TextData(matrix, label, weight, qid)


def _libsvm_heads(heads, path, row_line):
    """Labels (float64) and weights (or None) of ``label`` / ``label:weight`` tokens;
    weights are given on every line or on none."""
    split = [h.partition(b":") for h in heads]
    with_weight = np.array([bool(s[1]) for s in split])
    if with_weight.any() and not with_weight.all():
        row = int(np.flatnonzero(with_weight != with_weight[0])[0])
        raise FileFormatError(f"{path}, line {row_line(row)}: a weight (label:weight) is "
                              f"given on line {row_line(0) if with_weight[0] else row_line(row)}"
                              " but not on every line: give it on every line or on none")
    label = _numbers([s[0] for s in split], np.float64, path, row_line, "label")
    _check_range(label, path, row_line, "label")
    weight = None
    if with_weight.all():
        weight = _numbers([s[2] for s in split], np.float64, path, row_line, "weight")
        _check_range(weight, path, row_line, "weight")
    return label, weight


def _libsvm_qids(qids, path, row_line):
    """Query ids (int64) of ``qid:q`` tokens, given on every line or on none."""
    given = np.array([q is not None for q in qids])
    if not given.any():
        return None
    if not given.all():
        row = int(np.flatnonzero(~given)[0])
        raise FileFormatError(f"{path}, line {row_line(row)}: no qid:, while other lines "
                              "have one: give a query id on every line or on none")
    return _numbers(qids, np.int64, path, row_line, "qid")


def _shift_indices(index, indexing_mode, path, token_line):
    """Indices made 0-based as ``indexing_mode`` says (see ``read_libsvm``)."""
    if index.shape[0] and index.min() < 0:
        i = int(np.argmin(index))
        raise FileFormatError(f"{path}, line {token_line(i)}: feature index {int(index[i])} "
                              "is negative")
    one_based = indexing_mode > 0 or (indexing_mode < 0 and index.shape[0] > 0
                                      and index.min() > 0)
    if not one_based:
        return index
    if index.shape[0] and index.min() == 0:
        i = int(np.argmin(index))
        raise FileFormatError(f"{path}, line {token_line(i)}: feature index 0 in a file read "
                              "as 1-based (indexing_mode=1); use indexing_mode=0")
    return index - 1


def _canonical(matrix, path, row_line):
    """Each row's entries sorted by column, NaN entries dropped; an index twice in a row
    is an error (XGBoost keeps both entries)."""
    matrix.sort_indices()
    indptr, indices = matrix.indptr, matrix.indices
    same = indices[1:] == indices[:-1]
    if same.any():
        # a repeat within one row: not across a row boundary
        starts = np.zeros(indices.shape[0], dtype=bool)
        starts[indptr[:-1][indptr[:-1] < indices.shape[0]]] = True
        same &= ~starts[1:]
        if same.any():
            i = int(np.flatnonzero(same)[0]) + 1
            row = int(np.searchsorted(indptr, i, side="right") - 1)
            raise FileFormatError(f"{path}, line {row_line(row)}: feature index "
                                  f"{int(indices[i])} is given twice")
    nan = np.isnan(matrix.data)
    if nan.any():
        rows = np.repeat(np.arange(matrix.shape[0]), np.diff(indptr))
        counts = np.bincount(rows[~nan], minlength=matrix.shape[0])
        matrix = type(matrix)((matrix.data[~nan], indices[~nan],
                               np.concatenate(([0], np.cumsum(counts)))), shape=matrix.shape)
    return matrix


def read_csv(path, label_column=-1, weight_column=-1, delimiter=","):
    """A CSV file of numbers, no header: every non-blank line has the same fields; an
    empty field or ``nan`` is a missing value. ``label_column`` / ``weight_column``
    (0-based; -1: none) are taken out of the features. Returns ``TextData`` with a
    float32 matrix (NaN = missing)."""
    sep = delimiter.encode()
    lines = [(n, line.rstrip(b"\r")) for n, line in enumerate(_lines(path), 1)
             if line.strip()]
    if not lines:
        raise FileFormatError(f"{path}: the file holds no rows")
    widths = np.array([line.count(sep) for _, line in lines]) + 1
    if (widths != widths[0]).any():
        row = int(np.flatnonzero(widths != widths[0])[0])
        raise FileFormatError(
            f"{path}, line {lines[row][0]}: {widths[row]} fields, but line {lines[0][0]} has "
            f"{widths[0]}: every line needs the same fields (an empty field is missing)")
    n_cols = int(widths[0])
    for name, column in (("label_column", label_column), ("weight_column", weight_column)):
        if column >= n_cols:
            raise ValueError(f"{name}={column}, but {path} has {n_cols} columns "
                             f"(0 to {n_cols - 1})")
    if label_column >= 0 and label_column == weight_column:
        raise ValueError(f"label_column and weight_column are both {label_column}; they "
                         "must be different columns")
    fields = sep.join(line for _, line in lines).split(sep)
    fields = [f if f.strip() else b"nan" for f in fields]  # an empty field: missing

    def field_line(i):
        return lines[i // n_cols][0]

    try:
        values = _numbers(fields, np.float64, path, field_line, "field")
    except FileFormatError as err:
        raise FileFormatError(f"{err} (CSV files are read without a header line: remove "
                              "it, or read the file with pandas)") from None
    _check_range(values, path, field_line, "field")
    values = values.reshape(len(lines), n_cols)
    taken = [c for c in (label_column, weight_column) if c >= 0]
    features = np.delete(values, taken, axis=1).astype(FLOAT)
    label = values[:, label_column].copy() if label_column >= 0 else None
    weight = values[:, weight_column].copy() if weight_column >= 0 else None
    return TextData(np.ascontiguousarray(features), label, weight)
