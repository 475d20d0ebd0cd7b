"""The paged fit's page kernels (``kernels/cpu/paged.py``) against their NumPy twins
(``kernels/reference/paged.py``), page after page: the same rows in the same places and
the same histograms on one and two threads. The independent oracle of both is the model
file: an external-memory fit gives the in-memory model byte for byte
(``tests/test_streaming.py``), which runs these kernels on the host."""
import numba
import numpy as np
import pytest

from gbm.kernels.cpu import paged as fast
from gbm.kernels.reference import paged as reference

N_ROWS, N_FEATURES, N_BINS = 40_000, 5, 12
# pages: one of one row; one longer than a partition chunk (16,384 rows) in most nodes
PAGES = [0, 1, 17_000, 17_000 + 20_000, N_ROWS]


def _case(seed, n_nodes, categorical):
    rng = np.random.default_rng(seed)
    bins = rng.integers(0, N_BINS + 1, (N_ROWS, N_FEATURES)).astype(np.uint8)  # N_BINS: missing
    gpair = rng.integers(-(2**40), 2**40, (N_ROWS, 2)).astype(np.int64)
    node = rng.integers(-1, n_nodes, N_ROWS)  # -1: a row in no node of the level
    # node 1 has no row in the first half: no run in the first pages
    node[: N_ROWS // 2] = np.where(node[: N_ROWS // 2] == 1, 0, node[: N_ROWS // 2])
    rows = np.concatenate([np.flatnonzero(node == j) for j in range(n_nodes)]).astype(np.int32)
    counts = np.bincount(node[node >= 0], minlength=n_nodes)
    ends = np.cumsum(counts).astype(np.int64)
    starts = ends - counts
    split = dict(split_feature=rng.integers(0, N_FEATURES, n_nodes).astype(np.int32),
                 split_bin=rng.integers(-1, N_BINS, n_nodes).astype(np.int32),
                 default_left=rng.integers(0, 2, n_nodes).astype(np.uint8),
                 split_type=(rng.random(n_nodes) < 0.5).astype(np.uint8) if categorical
                 else np.zeros(n_nodes, np.uint8),
                 cat_bits=rng.integers(0, 2**32, (n_nodes, 1)).astype(np.uint32),
                 n_bins=np.full(N_FEATURES, N_BINS, np.int32),
                 small_is_left=rng.integers(0, 2, n_nodes).astype(np.uint8))
    feature_offsets = np.arange(0, (N_BINS + 1) * (N_FEATURES + 1), N_BINS + 1).astype(np.int32)
    return bins, gpair, rows, starts, ends, split, feature_offsets


def _level(kernels, n_parts, bins, gpair, rows, starts, ends, split, feature_offsets):
    rows, scratch = rows.copy(), np.full_like(rows, -1)
    n_nodes = starts.shape[0]
    seen_left, seen_right = np.zeros(n_nodes, np.int64), np.zeros(n_nodes, np.int64)
    private = np.zeros((n_parts, n_nodes, int(feature_offsets[-1]), 2), np.int64)
    work = np.empty(N_ROWS, np.int32)
    for lo, hi in zip(PAGES[:-1], PAGES[1:]):
        page = np.ascontiguousarray(bins[lo:hi])
        kernels.page_partition_build(page, np.ascontiguousarray(page.T), lo, gpair, rows,
                                     scratch, work, starts, ends, seen_left, seen_right,
                                     split["split_feature"], split["split_bin"],
                                     split["default_left"], split["split_type"],
                                     split["cat_bits"], split["n_bins"],
                                     split["small_is_left"], feature_offsets, private)
    hist = np.empty(private.shape[1:], np.int64)
    kernels.sum_private(private, hist)
    return rows, scratch, seen_left, seen_right, hist


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_nodes,categorical,dtype", [(1, False, np.uint8), (3, True, np.uint8),
                                                       (9, False, np.uint16)])
def test_page_partition_build_matches_its_twin(n_threads, n_nodes, categorical, dtype):
    case = _case(n_nodes, n_nodes, categorical)
    case = (case[0].astype(dtype),) + case[1:]  # uint16: the bins of max_bin > 255
    numba.set_num_threads(n_threads)
    try:
        got = _level(fast, n_threads, *case)
    finally:
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    want = _level(reference, 1, *case)
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
    # and what the twin computes, from its definition: each node's rows split stably by
    # its rule, the smaller side's histogram summed directly
    bins, gpair, rows, starts, ends, split, offsets = case
    rows_out, scratch, seen_left, seen_right, hist = want
    for j in range(n_nodes):
        seg = rows[starts[j]:ends[j]]
        f = split["split_feature"][j]
        b = bins[seg, f].astype(np.int64)
        if split["split_type"][j]:
            go = ((split["cat_bits"][j, 0] >> (b & 31).astype(np.uint32)) & 1) == 0
        else:
            go = b <= split["split_bin"][j]
        go = np.where(b == N_BINS, split["default_left"][j] == 1, go)
        assert seen_left[j] == go.sum() and seen_right[j] == (~go).sum()
        np.testing.assert_array_equal(rows_out[starts[j]:starts[j] + seen_left[j]], seg[go])
        np.testing.assert_array_equal(scratch[starts[j]:starts[j] + seen_right[j]], seg[~go])
        side = seg[go] if split["small_is_left"][j] else seg[~go]
        expected = np.zeros_like(hist[j])
        for g in range(N_FEATURES):
            np.add.at(expected, offsets[g] + bins[side, g], gpair[side])
        np.testing.assert_array_equal(hist[j], expected)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_nodes", [1, 4])
def test_page_histograms_match_its_twin(n_threads, n_nodes):
    bins, gpair, rows, starts, ends, _, offsets = _case(7 + n_nodes, n_nodes, False)
    if n_nodes == 1:  # a root: every row, each page's run the page itself (read in order)
        rows = np.arange(N_ROWS, dtype=np.int32)
        starts, ends = np.array([0], np.int64), np.array([N_ROWS], np.int64)
    results = []
    for kernels, parts in ((fast, n_threads), (reference, 1)):
        seen = np.zeros(n_nodes, np.int64)
        private = np.zeros((parts, n_nodes, int(offsets[-1]), 2), np.int64)
        numba.set_num_threads(n_threads)
        try:
            for lo, hi in zip(PAGES[:-1], PAGES[1:]):
                kernels.page_histograms(np.ascontiguousarray(bins[lo:hi]), lo, gpair, rows,
                                        starts, ends, seen, offsets, private)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        np.testing.assert_array_equal(seen, ends - starts)
        results.append(private.sum(axis=0))
    np.testing.assert_array_equal(results[0], results[1])
    for j in range(n_nodes):  # the definition: every row of the node once
        seg = rows[starts[j]:ends[j]]
        for g in range(N_FEATURES):
            col = np.zeros((N_BINS + 1, 2), np.int64)
            np.add.at(col, bins[seg, g], gpair[seg])
            np.testing.assert_array_equal(results[0][j, offsets[g]:offsets[g + 1]], col)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_nodes,categorical", [(1, False), (5, True)])
def test_page_add_split_values_matches_its_twin(n_threads, n_nodes, categorical):
    bins, _, rows, starts, ends, split, _ = _case(20 + n_nodes, n_nodes, categorical)
    rng = np.random.default_rng(n_nodes)
    values = rng.standard_normal((2, n_nodes))
    margins = rng.standard_normal(N_ROWS)
    results = []
    for kernels in (fast, reference):
        out, seen = margins.copy(), np.zeros(n_nodes, np.int64)
        numba.set_num_threads(n_threads)
        try:
            for lo, hi in zip(PAGES[:-1], PAGES[1:]):
                kernels.page_add_split_values(
                    np.ascontiguousarray(bins[lo:hi].T), lo, rows, starts, ends, seen,
                    split["split_feature"], split["split_bin"], split["default_left"],
                    split["split_type"], split["cat_bits"], split["n_bins"], values[0],
                    values[1], out)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        np.testing.assert_array_equal(seen, ends - starts)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    # the definition: the whole matrix's rows partitioned (the twin of the partition
    # kernel above), each side's value added once; rows in no node keep their margin
    n_left = np.zeros(n_nodes, np.int64)  # the left rows: seen_left from no page before
    moved = rows.copy()
    reference.page_partition_build(
        bins, np.ascontiguousarray(bins.T), 0, np.zeros((N_ROWS, 2), np.int64), moved,
        np.empty_like(rows), None, starts, ends, n_left, np.zeros(n_nodes, np.int64),
        split["split_feature"], split["split_bin"], split["default_left"], split["split_type"],
        split["cat_bits"], split["n_bins"], np.ones(n_nodes, np.uint8),
        np.arange(N_FEATURES + 1, dtype=np.int32) * (N_BINS + 1),
        np.zeros((1, n_nodes, (N_BINS + 1) * N_FEATURES, 2), np.int64))
    expected = margins.copy()
    for j in range(n_nodes):
        left = moved[starts[j]:starts[j] + n_left[j]]
        right = np.setdiff1d(rows[starts[j]:ends[j]], left)
        expected[left] += values[0, j]
        expected[right] += values[1, j]
    np.testing.assert_array_equal(results[0], expected)


@pytest.mark.parametrize("n_threads", [1, 2])
def test_move_right_rows_matches_its_twin(n_threads):
    rng = np.random.default_rng(3)
    n_left = np.array([0, 5, 20_000, 3], np.int64)
    n_right = np.array([7, 0, 40_000, 3], np.int64)
    ends = np.cumsum(n_left + n_right)
    starts = ends - n_left - n_right
    rows = rng.integers(0, 2**31 - 1, int(ends[-1])).astype(np.int32)
    scratch = rng.integers(0, 2**31 - 1, rows.shape[0]).astype(np.int32)
    results = []
    for kernels in (fast, reference):
        out = rows.copy()
        numba.set_num_threads(n_threads)
        try:
            kernels.move_right_rows(out, scratch, starts, n_left, n_right)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        results.append(out)
    np.testing.assert_array_equal(results[0], results[1])
    for k in range(4):  # the left rows kept, the right rows after them
        s, nl = starts[k], n_left[k]
        np.testing.assert_array_equal(results[0][s:s + nl], rows[s:s + nl])
        np.testing.assert_array_equal(results[0][s + nl:ends[k]], scratch[s:s + n_right[k]])


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("n_nodes,categorical", [(1, False), (9, True)])
def test_page_partition_places_the_rows_as_partition_build_does(n_threads, n_nodes,
                                                                categorical):
    """The partition alone (the feature-major bins only) against its twin, and against
    ``page_partition_build``: the same rows in ``rows`` and ``scratch``, the same counts
    (that kernel's placement is checked against its definition above)."""
    bins, gpair, rows, starts, ends, split, offsets = _case(30 + n_nodes, n_nodes, categorical)
    args = [split[name] for name in ("split_feature", "split_bin", "default_left",
                                     "split_type", "cat_bits", "n_bins")]
    results = []
    for kernels in (fast, reference):
        moved, scratch = rows.copy(), np.full_like(rows, -1)
        seen_left, seen_right = np.zeros(n_nodes, np.int64), np.zeros(n_nodes, np.int64)
        numba.set_num_threads(n_threads)
        try:
            for lo, hi in zip(PAGES[:-1], PAGES[1:]):
                kernels.page_partition(np.ascontiguousarray(bins[lo:hi].T), lo, moved,
                                       scratch, np.empty(N_ROWS, np.int32), starts, ends,
                                       seen_left, seen_right, *args)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        results.append((moved, scratch, seen_left, seen_right))
    built = _level(reference, 1, bins, gpair, rows, starts, ends, split, offsets)[:4]
    for got in results:
        for a, b in zip(got, built):
            np.testing.assert_array_equal(a, b)
    np.testing.assert_array_equal(results[0][2] + results[0][3], ends - starts)


@pytest.mark.parametrize("n_threads", [1, 2])
@pytest.mark.parametrize("which", ["all", "some", "none"])
def test_page_predict_binned_matches_the_whole_matrix_kernel(n_threads, which):
    """A prediction page after page (rows in no page, in one page, in several) equals the
    whole-matrix kernel's (``predict.predict_binned``, itself checked against its twin),
    and the twin's; rows not asked for keep their margins."""
    from gbm.kernels import cpu as whole
    from tests.support.kernel_inputs import random_forest_arrays

    rng = np.random.default_rng(41)
    bins = rng.integers(0, N_BINS + 1, (N_ROWS, N_FEATURES)).astype(np.uint8)
    n_bins = np.full(N_FEATURES, N_BINS, np.int32)
    f = random_forest_arrays(rng, 12, N_FEATURES, n_bins, 2)
    tree_args = (f.walk_binned, f.cat_bits, f.value, f.tree_offsets, f.tree_group,
                 f.tree_depth)
    rows = {"all": np.arange(N_ROWS, dtype=np.int32),
            "some": np.flatnonzero(rng.random(N_ROWS) < 0.3).astype(np.int32),
            "none": np.zeros(0, np.int32)}[which]
    start = rng.standard_normal((N_ROWS, 2))
    want = start.copy()
    whole.predict_binned(bins, rows, n_bins, *tree_args, want)
    for kernels in (fast, reference):
        out, seen = start.copy(), np.zeros(1, np.int64)
        numba.set_num_threads(n_threads)
        try:
            for lo, hi in zip(PAGES[:-1], PAGES[1:]):
                kernels.page_predict_binned(np.ascontiguousarray(bins[lo:hi]), lo, rows, seen,
                                            n_bins, *tree_args, out)
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        assert seen[0] == rows.shape[0]
        np.testing.assert_array_equal(out, want)
    if which != "all":
        kept = np.setdiff1d(np.arange(N_ROWS), rows)
        np.testing.assert_array_equal(want[kept], start[kept])
