"""Twins of ``cpu/bundling.py``: the greedy bundling and the conflict check, one feature
and one row at a time with Python sets."""
import numpy as np


def propose_bundles(col_ptr, col_rows, n_rows, order, n_bins, max_codes, max_search,
                    out_bundle):
    rows_of, widths, open_ = [], [], []
    for f in order:
        mine = set(col_rows[col_ptr[f]:col_ptr[f + 1]].tolist())
        chosen, tried = -1, 0
        for j in reversed(open_):  # the newest bundles first
            if widths[j] + n_bins[f] > max_codes:
                continue
            if tried == max_search:
                break
            tried += 1
            if not mine & rows_of[j]:
                chosen = j
                break
        if chosen < 0:
            chosen = len(widths)
            rows_of.append(set())
            widths.append(1)
            open_.append(chosen)
        rows_of[chosen] |= mine
        widths[chosen] += int(n_bins[f])
        out_bundle[f] = chosen
        open_ = [j for j in open_ if widths[j] < max_codes]
    return len(widths)


def bundle_conflicts(indptr, indices, bundle_of, n_bundles, out_flags):
    out_flags[...] = 0
    for r in range(indptr.shape[0] - 1):
        by_bundle = {}
        for f in indices[indptr[r]:indptr[r + 1]]:
            by_bundle.setdefault(int(bundle_of[f]), []).append(int(f))
        for features in by_bundle.values():
            if len(features) > 1:
                out_flags[features] = 1
