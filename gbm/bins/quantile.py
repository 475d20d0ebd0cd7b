"""``QuantileDMatrix`` (binned rows in memory, no float matrix) and
``ExtMemQuantileDMatrix`` (binned pages on disk), as XGBoost's, from an array or a
``DataIter`` (``gbm.data.iterator``). A fit on either gives the model file of the
in-memory fit of the concatenated batches, bit for bit (the same edges, the same bins,
integer histograms summed over pages: ``gbm.bins.paged``).
"""
import os
import tempfile
import uuid
import weakref

import numpy as np

from ..data.batch_concat import is_data_iter
from ..data.categorical import as_frame
from ..data.category_container import Categories, recoded
from ..data.dmatrix import DMatrix, checked_form
from ..data.iterator import OneBatch
from .dense import DenseBins
from .paged import PageFiles, PagedBins
from .quantile_values import bin_values, csr_of, quantile_cut, row_blocks
from .streaming import Scan, bin_batches, fit_mapper

# what an edge depends on besides the data: the fit's parameters of these names must agree
_BINNING = (("max_bin", "max_bin"), ("bin_sample_size", "sample_size"),
            ("random_state", "seed"))
DEFAULT_PAGE_BYTES = 16 << 20  # a page file's bytes (its bins twice): 8 MiB buffers


class BinnedRows:
    """Rows binned before the fit (what a ``QuantileDMatrix`` holds as its ``data``):
    ``matrix`` (``DenseBins`` or ``PagedBins``, on the host), ``mapper`` (the edges),
    ``categories`` (per feature None or its categories; None), ``values`` (a value per bin,
    ``gbm.bins.quantile_values.BinValues``), ``shape``."""

    def __init__(self, matrix, mapper, categories, feature_names, values=None):
        self.matrix, self.mapper, self.values = matrix, mapper, values
        self.categories, self.feature_names = categories, feature_names
        self.shape = (matrix.n_rows, matrix.n_features)
        self.ndim = 2
        self.sharded = False  # True: one rank's rows, binned with every rank's edges
        # float64 (n_rows, n_groups): a continued model's margins of these rows computed on
        # their raw values when they were binned (gbm.dask.paged); None: from the bins
        self.init_margins = None

    @property
    def size(self):
        return self.shape[0] * self.shape[1]

    def check_params(self, p):
        """The fit's parameters ``p`` must bin as these rows were binned."""
        for param, attr in _BINNING:
            if p[param] != getattr(self.mapper, attr):
                raise ValueError(
                    f"{param} must be consistent: the QuantileDMatrix was binned with "
                    f"{param}={getattr(self.mapper, attr)!r} "
                    f"but the fit has {param}={p[param]!r}: pass the same {param} to both "
                    f"(QuantileDMatrix(..., {attr if attr != 'sample_size' else param}=...))")

    def on_device(self, backend):
        """The bin matrix on ``backend``'s device (paged bins: read page by page, each
        page copied to the device while it is used)."""
        if isinstance(self.matrix, PagedBins):  # a page at a time copied to the device
            self.matrix.check_open()
            return self.matrix if backend.name == "cpu" else self.matrix.on_device(backend.xp)
        if backend.name == "cpu":
            return self.matrix
        xp = backend.xp
        bins = xp.asarray(self.matrix.bins)  # the feature-major copy made on the device
        return DenseBins(bins, xp.ascontiguousarray(bins.T), self.matrix.n_bins)


def _build(data, label, missing, max_bin, ref, nthread, feature_names, feature_types,
           bin_sample_size, random_state, fields, sink):
    """Both passes over ``data`` (a ``DataIter``, or an array given as one batch with
    ``label`` and ``fields``); ``sink(scan, mapper, categories)`` stores the binned
    batches. Returns ``(scan, BinnedRows)``."""
    if is_data_iter(data):
        given = [k for k, v in dict(fields, label=label).items() if v is not None]
        if given:
            raise TypeError(f"{', '.join(given)} given beside a DataIter: its batches give them "
                            "(input_data(data=..., label=..., ...))")
        given = [k for k, v in (("feature_names", feature_names),
                                ("feature_types", feature_types)) if v is not None]
        if given:
            raise ValueError(f"{given[0]} given beside a DataIter: with an iterator it is "
                             f"specified as batch argument, input_data({given[0]}=...)")
        it = data
    else:
        it = OneBatch(data=data, label=label, **fields)
    if ref is not None:
        mapper, categories, values = _reference(ref, missing, max_bin)
        if feature_types is None and categories is not None and not is_data_iter(data) \
                and as_frame(data) is None and np.shape(data)[1] == len(categories):
            # numbers for ref's categories: their codes
            feature_types = ["c" if c is not None else "q" for c in categories]
        scan = Scan(missing, mapper.sample_size, mapper.seed, collect_sample=False).run(
            it, feature_names, feature_types)
        if scan.n_features != len(mapper.cuts):
            raise ValueError(f"data has {scan.n_features} features but ref has "
                             f"{len(mapper.cuts)} features.")
        if categories is not None or scan.categories is not None:
            _check_same_kinds(categories, scan.categories, scan.n_features)
    else:
        scan = Scan(missing, 200_000 if bin_sample_size is None else bin_sample_size,
                    0 if random_state is None else random_state).run(
            it, feature_names, feature_types)
        mapper, categories, values = _fit(scan, max_bin, nthread)
    matrix = sink(bin_batches(it, scan, mapper, categories, fitted=ref is None), scan, mapper)
    return scan, BinnedRows(matrix, mapper, categories, scan.feature_names, values)


def _fit(scan, max_bin, nthread):
    """``(mapper, categories, BinValues)`` of a scanned stream; its sample then dropped."""
    mapper = fit_mapper(scan, 256 if max_bin is None else max_bin, scan.sample_size,
                        scan.seed, 1 if nthread is None or nthread < 1 else nthread)
    values = bin_values(mapper, scan.Xs, scan.categories)
    scan.Xs = scan.ws = None  # the sample: not held beside the bins
    mapper.sample = None
    return mapper, scan.categories, values


def _reference(ref, missing, max_bin):
    """``(mapper, categories, BinValues)`` of ``ref``: a QuantileDMatrix's own, or the
    edges a fit on a DMatrix makes (its rows scanned: the same edges, when the fit has
    the same ``max_bin``, ``bin_sample_size`` and ``random_state``)."""
    if isinstance(ref, QuantileDMatrix):
        mapper = ref.data.mapper
        if max_bin is not None and max_bin != mapper.max_bin:
            raise ValueError(f"max_bin={max_bin} but ref was binned with max_bin="
                             f"{mapper.max_bin}; leave max_bin out (ref's edges are used)")
        return mapper, ref.data.categories, ref.data.values
    if not isinstance(ref, DMatrix) or ref.data is None:
        raise TypeError(f"ref must be the training data (a QuantileDMatrix or a DMatrix, whose "
                        f"bin edges are used), got {type(ref).__name__}")
    fields = {k: getattr(ref, k) for k in ("weight", "base_margin", "group", "qid",
                                           "label_lower_bound", "label_upper_bound")}
    if fields["group"] is not None:  # a batch gives query ids
        fields["qid"] = np.repeat(np.arange(len(fields["group"])), fields["group"])
    fields["group"] = None
    scan = Scan(ref.missing, 200_000, 0).run(OneBatch(data=ref.data, label=ref.label, **fields),
                                             ref.feature_names, ref.feature_types)
    return _fit(scan, max_bin, None)


def _group_ids(group, data):
    """Query ids (group indices) of the group sizes ``group``, as a batch gives them."""
    sizes = np.asarray(group, np.int64).reshape(-1)
    n = getattr(data, "shape", (None,))[0]
    if n is not None and sizes.sum() != n:
        raise ValueError(f"group sizes sum to {int(sizes.sum())} but the data has {n} rows; "
                         "they must match")
    return np.repeat(np.arange(sizes.shape[0]), sizes)


def _check_same_kinds(ref_categories, categories, n_features):
    ref_categories = ref_categories or [None] * n_features
    categories = categories or [None] * n_features
    for f, (a, b) in enumerate(zip(ref_categories, categories)):
        if (a is None) != (b is None):
            raise ValueError(f"feature {f} is {'categorical' if b is not None else 'numeric'} "
                             f"here but {'categorical' if a is not None else 'numeric'} in ref")


def _in_memory(binned, scan, mapper):
    """The binned batches into one ``DenseBins`` (its array made once, at full size).

    One copy of the bins: the feature-major view a partition reads is the transpose of
    the row-major array (strided, not a second array as a DMatrix fit's), so a
    ``QuantileDMatrix`` fit holds the bins once; the kernels read the same values, so
    the model is the same."""
    bins = np.empty((scan.n_rows, scan.n_features), mapper.bin_dtype)
    for _, offset, part in binned:
        bins[offset:offset + part.shape[0]] = part
    return DenseBins(bins, bins.T, mapper.n_bins)


class QuantileDMatrix(DMatrix):
    """Binned rows and their labels, as ``xgboost.QuantileDMatrix``: the features are
    binned when it is made (from an array, or a ``gbm.DataIter``'s batches in two passes)
    and only the bins are kept, a byte or two a cell instead of four.

    Parameters
    ----------
    data : array-like (n_samples, n_features), or a ``gbm.DataIter``
    label, weight, base_margin, group, qid, label_lower_bound, label_upper_bound
        As ``DMatrix``'s, for an array (a ``DataIter``'s batches give their own).
    missing : float, optional
        A value that means missing besides NaN.
    max_bin : int, optional
        Bins per feature (256 when None); a fit on it must have the same ``max_bin``.
    ref : QuantileDMatrix, optional
        The training data, whose bin edges (and categories) these rows take: pass it for
        an eval set.
    bin_sample_size, random_state : int, optional
        The binning sample (gbm's parameters of these names; defaults 200,000 and 0): a
        fit on it must have the same.
    feature_names, feature_types, nthread, enable_categorical, silent
        As ``DMatrix``'s.
    """

    def __init__(self, data, label=None, *, weight=None, base_margin=None, missing=None,
                 silent=False, feature_names=None, feature_types=None, nthread=None,
                 max_bin=None, ref=None, group=None, qid=None, label_lower_bound=None,
                 label_upper_bound=None, feature_weights=None, enable_categorical=False,
                 max_quantile_batches=None, bin_sample_size=None, random_state=None):
        fields = dict(weight=weight, base_margin=base_margin, group=group, qid=qid,
                      label_lower_bound=label_lower_bound,
                      label_upper_bound=label_upper_bound)
        held = None
        if weight is not None and group is None and qid is None and not is_data_iter(data) \
                and np.shape(weight)[:1] != tuple(np.shape(data)[:1]):
            # not one weight per row (nor per query group): stored as given, as a DMatrix
            # stores it, and refused where a fit reads it; the edges are then unweighted
            held, fields["weight"] = weight, None
        self._init_binned(data, label, fields, missing, max_bin, ref, nthread, feature_names,
                          feature_types, bin_sample_size, random_state, _in_memory)
        self._set_float("feature_weights", feature_weights)
        if held is not None:
            self._set_float("weight", held)

    def _init_binned(self, data, label, fields, missing, max_bin, ref, nthread,
                     feature_names, feature_types, bin_sample_size, random_state, sink):
        if isinstance(feature_types, Categories):  # a reference encoding (XGBoost 3.1)
            if is_data_iter(data):
                raise ValueError("feature_types given beside a DataIter: with an iterator it "
                                 "is specified as batch argument")
            data, feature_types = recoded(data, feature_types)
        if feature_types is not None:
            feature_types = list(feature_types)
        if not is_data_iter(data):
            data = checked_form(data)
        if fields.get("group") is not None:  # a batch gives query ids
            fields = dict(fields, group=None, qid=_group_ids(fields["group"], data))
        scan, binned = _build(data, label, missing, max_bin, ref, nthread, feature_names,
                              feature_types, bin_sample_size, random_state, fields, sink)
        self.data, self.missing, self._shape = binned, missing, binned.shape
        self._ref = None if ref is None else weakref.ref(ref)
        self.categories_seen = binned.categories
        for field in ("label", "weight", "base_margin", "label_lower_bound",
                      "label_upper_bound"):
            setattr(self, field, scan.info[field])
        self.group, self.qid, self.feature_weights = None, scan.info["qid"], None
        self.feature_names = scan.feature_names
        types = scan.feature_types
        # features the types given mark categorical: numbers that are codes, no categories
        self._coded = {f for f, t in enumerate(types or []) if t == "c"}
        if types is None and scan.frame_types is not None:
            # the first batch's dtypes, "c" for a column categorical in any batch
            cats = binned.categories or [None] * len(scan.frame_types)
            types = ["c" if c is not None else t for t, c in zip(scan.frame_types, cats)]
        self.feature_types = types
        binned.feature_names = self.feature_names

    @property
    def ref(self):
        """A weak reference to the matrix whose bin edges these rows took (``ref=``), or
        None, as XGBoost's."""
        return self._ref

    def num_nonmissing(self):
        """Entries that are not missing (their bin is not the missing bin)."""
        n_bins = self.data.mapper.n_bins
        return int(sum(int((bins < n_bins[None, :]).sum())
                       for _, _, bins in row_blocks(self.data.matrix)))

    def get_data(self):
        """The rows as a SciPy CSR matrix of float32, as XGBoost's: each entry its bin's
        value (``gbm.bins.quantile_values``: the data itself where a feature has a bin per
        distinct value), a categorical entry its category (numbers) or its code; missing
        entries absent."""
        return csr_of(self.data)

    def get_quantile_cut(self):
        """The bin edges in XGBoost's layout, ``(indptr uint64 (n_features + 1,), values
        float32)``: feature ``f``'s bounds are ``values[indptr[f]:indptr[f + 1]]``, a
        value ``x`` in bin ``b`` lying in ``[bounds[b], bounds[b + 1])`` (the first bound
        the least sampled value, the last one above the largest; the values between are
        gbm's cuts, halfway between training values); a categorical feature's codes."""
        return quantile_cut(self.data)

    def get_categories(self, export_to_arrow=False):
        """As ``DMatrix.get_categories``: the categories the matrix was encoded with."""
        cats = self.data.categories or [None] * self.num_col()
        names = self.feature_names or [str(f) for f in range(self.num_col())]
        return Categories(names, [None if c is None or (f in self._coded and all(
            isinstance(v, (int, float, np.number)) for v in c)) else list(c)
            for f, c in enumerate(cats)], export_to_arrow)

    def slice(self, rindex, allow_groups=False):
        raise NotImplementedError("slice is not supported on a QuantileDMatrix (as in "
                                  "XGBoost): slice the data, then bin it")

    def categorical_features(self):
        return None  # the categories are in the bins already (``data.categories``)

    def __repr__(self):
        return (f"gbm.{type(self).__name__}({self._shape[0]} rows x {self._shape[1]} "
                "features, binned)")


class ExtMemQuantileDMatrix(QuantileDMatrix):
    """Binned rows kept in page files on disk, as ``xgboost.ExtMemQuantileDMatrix``: a fit
    reads them page by page (the next page read while one is used), so it holds about one
    page of bins, not the whole matrix.

    Parameters
    ----------
    data : gbm.DataIter
        The batches; its ``cache_prefix`` (a folder, or a path prefix in an existing folder)
        is where the pages go (None: a temporary folder), and ``min_cache_page_bytes`` the
        least bytes of a page file (its bins twice; batches are joined up to it; 16 MiB
        when None).
    max_bin, ref, missing, nthread, feature_names, feature_types, bin_sample_size,
    random_state
        As ``QuantileDMatrix``'s.
    cache_prefix : str, optional
        Instead of the iterator's.

    The page files are written to a temporary name and renamed when complete, and removed
    when the matrix is closed (``close()``, or ``with``) or collected; an error while
    writing removes those written.
    """

    def __init__(self, data, *, missing=None, nthread=None, max_bin=None, ref=None,
                 enable_categorical=False, max_quantile_batches=None, cache_host_ratio=None,
                 cache_prefix=None, feature_names=None, feature_types=None,
                 bin_sample_size=None, random_state=None, min_cache_page_bytes=None):
        if not is_data_iter(data):
            raise TypeError(f"ExtMemQuantileDMatrix reads a gbm.DataIter, got "
                            f"{type(data).__name__}; for an array use QuantileDMatrix")
        prefix = cache_prefix if cache_prefix is not None else getattr(data, "cache_prefix", None)
        page_bytes = min_cache_page_bytes if min_cache_page_bytes is not None else getattr(
            data, "min_cache_page_bytes", None)
        writer = PageWriter(prefix, DEFAULT_PAGE_BYTES if page_bytes is None else page_bytes)
        self._init_binned(data, None, {}, missing, max_bin, ref, nthread, feature_names,
                          feature_types, bin_sample_size, random_state, writer)

    def close(self):
        """Remove the page files (the matrix cannot be trained on after)."""
        self.data.matrix.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


class PageWriter:
    """Writes binned batches as page files (joined to at least ``page_bytes``) under
    ``prefix``; each file written to a temporary name and renamed once complete."""

    def __init__(self, prefix, page_bytes):
        if isinstance(page_bytes, bool) or not isinstance(page_bytes, (int, np.integer)) \
                or page_bytes < 1:
            raise ValueError(f"min_cache_page_bytes must be a positive integer, got "
                             f"{page_bytes!r}")
        self.page_bytes, self.prefix = int(page_bytes), prefix

    def _place(self):
        """``(folder, file name stem, whether the folder is ours)``."""
        if self.prefix is None:
            return tempfile.mkdtemp(prefix="gbm-extmem-"), "page", True
        prefix = os.fspath(self.prefix)
        if os.path.isdir(prefix):
            folder, stem = prefix, "gbm"
        else:
            folder, stem = os.path.split(prefix)
            folder = folder or "."
            if not os.path.isdir(folder):
                raise FileNotFoundError(f"cache_prefix {prefix!r}: the folder {folder!r} does "
                                        "not exist; create it or give another cache_prefix")
        return folder, stem, False

    def __call__(self, binned, scan, mapper):
        folder, stem, own = self._place()
        tag = uuid.uuid4().hex[:12]
        paths, offsets, parts, held = [], [0], [], 0
        try:
            for i, offset, part in binned:
                parts.append(part)
                held += 2 * part.nbytes
                if held >= self.page_bytes:
                    paths.append(self._write(folder, f"{stem}-{tag}-{len(paths):05d}.page",
                                             parts, i))
                    offsets.append(offset + part.shape[0])
                    parts, held = [], 0
            if parts or not paths:
                paths.append(self._write(folder, f"{stem}-{tag}-{len(paths):05d}.page", parts,
                                         len(scan.batch_rows) - 1))
                offsets.append(scan.n_rows)
        except BaseException:
            PageFiles(paths, [0] * (len(paths) + 1), scan.n_features or 0, mapper.bin_dtype)\
                .close()
            if own:
                _remove_folder(folder)
            raise
        files = PageFiles(paths, offsets, scan.n_features, mapper.bin_dtype)
        if own:
            files.folder = folder
        return PagedBins(files, mapper.n_bins)

    @staticmethod
    def _write(folder, name, parts, batch):
        """One page: the rows of ``parts`` row-major, then feature-major."""
        bins = parts[0] if len(parts) == 1 else np.concatenate(parts)
        path = os.path.join(folder, name)
        tmp = path + ".tmp"
        try:
            with open(tmp, "wb") as f:
                bins.tofile(f)
                np.ascontiguousarray(bins.T).tofile(f)
            os.replace(tmp, path)
        except OSError as e:
            try:
                os.remove(tmp)
            except OSError:
                pass
            raise OSError(e.errno, f"writing the external-memory page of the batches up to "
                                   f"batch {batch} to {path!r} failed: {e.strerror or e}") from e
        return path


def _remove_folder(folder):
    try:
        os.rmdir(folder)
    except OSError:
        pass
