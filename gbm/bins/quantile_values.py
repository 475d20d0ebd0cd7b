"""Values of binned rows: what a ``QuantileDMatrix`` (which keeps bins, not floats) gives
as its features (``get_data``), as its bin edges in XGBoost's layout
(``get_quantile_cut``), and to a model that predicts on it.

Each numeric bin is given one value that falls in it: the least value of the binning
sample in that bin (``BinValues``). A feature with at most ``max_bin`` distinct values
has a bin per value, so its rows get their own values back; otherwise every row of a bin
gets the same value, inside the bin. A model whose thresholds are the matrix's bin edges
(trained on it, or on the same data and ``max_bin``: split ``x < cuts[b]``) sends that
value the way it sends every value of the bin, so its predictions on the matrix are its
predictions on the raw rows, bit for bit::

    bin:    ... | b: cuts[b-1] <= x < cuts[b] | ...
    value:          v_b (the least sampled x in bin b)
    split at cuts[k]: v_b < cuts[k]  <=>  b <= k  <=>  every x of bin b goes left

A model with other thresholds (trained on other data) gets each row's bin value, as
XGBoost predicts on a QuantileDMatrix from each bin's lower bound: a row whose value lies
between the threshold and its bin's value may go the other way than its raw value would.
Categorical bins are category codes; a model's own codes are matched to them by category.
"""
import numpy as np

from ..data.cut_layout import cut_layout
from .binning import RaggedCuts

BLOCK_ROWS = 1 << 15  # rows turned into values at a time for a prediction


class BinValues:
    """A value per bin of every feature, and each feature's largest sampled value.

    values : float32 (sum of n_bins,), feature ``f``'s bin ``b`` value at
        ``offsets[f] + b`` (NaN: no sampled value, an empty feature)
    offsets : int64 (n_features + 1,)
    top : float32 (n_features,), the largest sampled value (NaN: none)
    """

    def __init__(self, values, offsets, top):
        self.values, self.offsets, self.top = values, offsets, top


def bin_values(mapper, sample, categories):
    """``BinValues`` of the bins of ``mapper`` from the binning ``sample`` (float32
    (n, n_features), NaN missing; categorical features as codes): each bin the least
    sample value binned there (a category bin its code)."""
    n_bins = np.asarray(mapper.n_bins, np.int64)
    offsets = np.concatenate(([0], np.cumsum(n_bins))).astype(np.int64)
    values = np.full(offsets[-1], np.inf, np.float32)
    top = np.full(n_bins.shape[0], np.nan, np.float32)
    if sample is not None and sample.shape[0]:
        bins = mapper.transform(sample, fitted_on_X=True)
        present = bins < n_bins[None, :]
        np.fmin.at(values, (offsets[:-1][None, :] + bins)[present], sample[present])
        with np.errstate(invalid="ignore"):
            top = np.where(present.any(axis=0),
                           np.fmax.reduce(np.where(present, sample, np.nan), axis=0), np.nan)
    cuts = RaggedCuts.of(mapper.cuts)
    for f in range(n_bins.shape[0]):
        lo, hi = offsets[f], offsets[f + 1]
        if categories is not None and categories[f] is not None:
            values[lo:hi] = np.arange(hi - lo, dtype=np.float32)
            continue
        empty = np.flatnonzero(np.isinf(values[lo:hi]))
        if empty.size:  # no sample value there (a ref's edges): the bin's lower edge
            edges = cuts[f]
            values[lo + empty] = [edges[b - 1] if b > 0 else (
                np.nextafter(edges[0], -np.inf) if edges.size else np.nan) for b in empty]
    return BinValues(values, offsets, top.astype(np.float32))


def value_table(binned, recode=None):
    """float32 (sum of n_bins + 1,) and offsets int64 (n_features,): feature ``f``'s bin
    ``b`` value at ``offsets[f] + b``, NaN at its missing bin ``n_bins[f]``. A categorical
    feature's bins give ``recode[f]`` (float32 (n_categories,): each code's value, NaN
    for none) where given, else the category itself when the categories are numbers, else
    the code."""
    bv = binned.values
    n_bins = np.diff(bv.offsets)
    starts = bv.offsets[:-1] + np.arange(n_bins.shape[0])  # one missing slot per feature
    table = np.full(bv.offsets[-1] + n_bins.shape[0], np.nan, np.float32)
    for f in range(n_bins.shape[0]):
        own = bv.values[bv.offsets[f]:bv.offsets[f + 1]]
        cats = None if binned.categories is None else binned.categories[f]
        if recode is not None and recode[f] is not None:
            own = recode[f]
        elif cats is not None and all(isinstance(c, (int, float, np.number)) for c in cats):
            own = np.asarray(cats, np.float32)
        table[starts[f]:starts[f] + own.shape[0]] = own
    return table, starts


def row_blocks(matrix, block_rows=BLOCK_ROWS):
    """``(lo, hi, bins (hi - lo, n_features))`` of a ``DenseBins`` or ``PagedBins``, row
    blocks in order."""
    if hasattr(matrix, "pages"):
        for lo, hi, page in matrix.pages():
            for a in range(lo, hi, block_rows):
                yield a, min(hi, a + block_rows), page.bins[a - lo:min(hi, a + block_rows) - lo]
        return
    for lo in range(0, matrix.n_rows, block_rows):
        yield lo, min(matrix.n_rows, lo + block_rows), matrix.bins[lo:lo + block_rows]


def values_of(bins, table, starts):
    """float32 (n, n_features), C order: the value of each row's bin (NaN: missing)."""
    return table[starts[None, :] + bins.astype(np.int64)]


def csr_of(binned):
    """The rows' values as a SciPy CSR matrix of float32 (missing bins absent)."""
    import scipy.sparse as sp

    table, starts = value_table(binned)
    n_bins = np.diff(binned.values.offsets)
    indptr, indices, data = [np.zeros(1, np.int64)], [], []
    for _, _, bins in row_blocks(binned.matrix):
        present = bins < n_bins[None, :]
        rows, cols = np.nonzero(present)
        indptr.append(indptr[-1][-1] + np.cumsum(present.sum(axis=1)))
        indices.append(cols.astype(np.int32))
        data.append(values_of(bins, table, starts)[rows, cols])
    return sp.csr_matrix((np.concatenate(data), np.concatenate(indices),
                          np.concatenate(indptr)), shape=binned.shape)


def quantile_cut(binned):
    """``(indptr uint64 (n_features + 1,), values float32)`` in XGBoost's layout
    (``gbm.data.cut_layout``): a numeric feature's least sampled value, its cuts, a value
    above its largest sampled value; a categorical feature's codes."""
    bv = binned.values
    cuts = RaggedCuts.of(binned.mapper.cuts)
    categorical = [binned.categories is not None and binned.categories[f] is not None
                   for f in range(len(cuts))]
    return cut_layout(cuts, np.diff(bv.offsets), categorical, bv.values[bv.offsets[:-1]],
                      bv.top)


def model_row_blocks(binned, model_categories, n_features, feature_names=None):
    """``(lo, hi, float32 (hi - lo, n_features))`` row blocks of ``binned`` as a model
    with categories ``model_categories`` reads rows (its codes for categorical features,
    matched by category; a category it has not seen is missing, as on raw rows)."""
    if binned.shape[1] != n_features:
        raise ValueError(f"the QuantileDMatrix has {binned.shape[1]} features, but the model "
                         f"was trained with {n_features}")
    recode = _recode(binned.categories, model_categories, n_features, feature_names)
    table, starts = value_table(binned, recode)
    for lo, hi, bins in row_blocks(binned.matrix):
        yield lo, hi, values_of(bins, table, starts)


def _recode(categories, model_categories, n_features, feature_names):
    """Per feature None (numeric) or float32 (n_categories,): the model's code of each of
    the matrix's categories (NaN: one the model has not seen)."""
    ours = list(categories or [None] * n_features)
    model = list(model_categories or [None] * n_features)
    out = []
    for f, (a, b) in enumerate(zip(ours, model)):
        name = repr(feature_names[f]) if feature_names else str(f)
        if (a is None) != (b is None):
            raise ValueError(f"feature {name} is {'categorical' if a is not None else 'numeric'}"
                             f" in the QuantileDMatrix but "
                             f"{'categorical' if b is not None else 'numeric'} in the model")
        if a is None:
            out.append(None)
            continue
        if {isinstance(c, str) for c in a} != {isinstance(c, str) for c in b} and a and b:
            raise ValueError(f"The data type doesn't match the training data's for feature "
                             f"{name}: categories {list(a)[:3]}... here, {list(b)[:3]}... in "
                             "the model")
        index = {c: i for i, c in enumerate(b)}
        out.append(np.array([index.get(c, np.nan) for c in a], np.float32))
    return out
