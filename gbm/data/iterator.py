"""XGBoost's ``DataIter`` protocol: data given as a stream of batches, and the batches read
from such an iterator with every error named by its batch (``batches``). What is made of
them, in two passes: ``gbm.bins.streaming``."""
import numpy as np

BATCH_FIELDS = ("label", "weight", "base_margin", "qid", "group", "label_lower_bound",
         "label_upper_bound")


class DataIter:
    """A stream of batches, as ``xgboost.DataIter``: subclass it with

    * ``next(input_data)``: give the next batch by calling ``input_data(data=X,
      label=y, weight=w, base_margin=m, qid=q)`` (only ``data`` is required) and return
      True (or 1); return False (or 0) when there are no batches left;
    * ``reset()``: start again from the first batch.

    Batches may be NumPy arrays, pandas DataFrames (``category`` columns too), SciPy
    sparse matrices or Arrow tables, all with the same columns.

    Parameters
    ----------
    cache_prefix : str, optional
        Where ``ExtMemQuantileDMatrix`` writes its page files: a folder, or a path
        prefix in an existing folder. None: a temporary folder.
    release_data : bool
        Accepted for XGBoost compatibility (gbm keeps no batch after binning it).
    on_host : bool
        Accepted for XGBoost compatibility.
    min_cache_page_bytes : int, optional
        Least bytes of a page file, its bins twice (row- and feature-major; batches are
        joined until a page has them); None: 16 MiB.
    """

    def __init__(self, cache_prefix=None, release_data=True, *, on_host=True,
                 min_cache_page_bytes=None):
        self.cache_prefix = cache_prefix
        self.release_data = release_data
        self.on_host = on_host
        self.min_cache_page_bytes = min_cache_page_bytes

    def next(self, input_data):
        raise NotImplementedError("a DataIter subclass defines next(input_data)")

    def reset(self):
        raise NotImplementedError("a DataIter subclass defines reset()")


class OneBatch(DataIter):
    """An array (and its labels, weights, ...) as a stream of one batch."""

    def __init__(self, **batch):
        super().__init__()
        self._batch, self._given = batch, False

    def next(self, input_data):
        if self._given:
            return False
        input_data(**self._batch)
        self._given = True
        return True

    def reset(self):
        self._given = False


def batches(it):
    """``(i, dict of the batch's fields)`` for each batch of ``it`` (a ``DataIter``),
    after ``it.reset()``; an error of the iterator is raised naming the batch."""
    if not isinstance(it, DataIter) and not (hasattr(it, "next") and hasattr(it, "reset")):
        raise TypeError(f"expected a gbm.DataIter (next(input_data) and reset()), got "
                        f"{type(it).__name__}")
    try:
        it.reset()
    except Exception as e:
        raise RuntimeError(f"the data iterator's reset() raised {type(e).__name__}: {e}") from e
    i = 0
    while True:
        got = {}

        def input_data(*args, data=None, **fields):
            if args:  # XGBoost's input_data takes keywords only: a positional one is an error
                raise TypeError(
                    f"batch {i}: input_data() got {len(args)} positional argument(s); Keyword "
                    "arguments are required: input_data(data=X, label=y, weight=w, ...)")
            if data is None:
                raise TypeError(f"batch {i}: input_data() needs data= (the batch's features)")
            unknown = set(fields) - set(BATCH_FIELDS) - {"feature_names", "feature_types"}
            if unknown:
                raise TypeError(f"batch {i}: input_data() got unknown fields "
                                f"{sorted(unknown)}; known: data, {', '.join(BATCH_FIELDS)}, "
                                "feature_names, feature_types")
            got.clear()
            got.update(fields, data=data)

        try:
            more = it.next(input_data)
        except Exception as e:
            raise RuntimeError(f"the data iterator raised {type(e).__name__} while giving "
                               f"batch {i}: {e}") from e
        if isinstance(more, (bool, np.bool_, int, np.integer)) and not more:
            return
        if not isinstance(more, (bool, np.bool_, int, np.integer)):
            raise TypeError(f"the data iterator's next() returned {more!r} for batch {i}; it "
                            "returns True (a batch was given) or False (no batches left)")
        if not got:
            raise ValueError(f"the data iterator's next() returned True for batch {i} but did "
                             "not call input_data(data=...)")
        yield i, got
        i += 1
