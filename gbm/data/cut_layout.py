"""Bin edges in XGBoost's ``get_quantile_cut`` layout: ``(indptr, values)``, feature
``f``'s bounds ``values[indptr[f]:indptr[f + 1]]`` (``indptr`` uint64, ``values``
float32). A numeric feature of ``n`` bins has ``n + 1`` bounds, a value ``x`` of bin
``b`` lying in ``[bounds[b], bounds[b + 1])``: a lower bound, its ``n - 1`` cuts, an
upper bound. A categorical feature lists its codes ``0 .. n - 1``."""
import numpy as np


def cut_layout(cuts, n_bins, categorical, low, high):
    """``(indptr, values)`` of per-feature ``cuts`` (float32 arrays), ``n_bins`` (int per
    feature), ``categorical`` (bool per feature), ``low`` / ``high`` (float32 per
    feature: a value at most, and the largest value below, every value of the feature;
    NaN for a feature without values)."""
    parts = []
    for f, edges in enumerate(cuts):
        if categorical[f]:
            parts.append(np.arange(n_bins[f], dtype=np.float32))
            continue
        first, last = np.float32(low[f]), np.float32(high[f])
        if np.isnan(first) or np.isnan(last):
            first = last = np.float32(0.0)
        parts.append(np.concatenate(([first], np.asarray(edges, np.float32),
                                     [np.nextafter(last, np.float32(np.inf))])
                                    ).astype(np.float32))
    sizes = [p.shape[0] for p in parts]
    return (np.concatenate(([0], np.cumsum(sizes))).astype(np.uint64),
            np.concatenate(parts) if parts else np.zeros(0, np.float32))
