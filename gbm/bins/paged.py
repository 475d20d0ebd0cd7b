"""``PagedBins``: a bin matrix held as a sequence of pages, each a range of rows binned
densely, kept in files on disk (``ExtMemQuantileDMatrix``) and mapped one page at a time
(memory maps: no copy out of the page cache), the next page mapped by a thread while the
current one is used.

It implements the interface of ``gbm.bins`` page by page, so the grower does not
know the rows are paged, and the model is the in-memory one bit for bit:

* a histogram is the sum of its pages' histograms: integers, so exactly the one-matrix sum;
* a node's rows are in increasing order (the tree's rows start sorted and every partition
  is stable), so a page's part of a node's rows is one run of them, found by binary search;
  a partition puts each page's left rows, page after page, then their right rows: the
  same order a stable partition of the whole matrix gives;
* a row's leaf is its own page's walk.

Each pass over the pages reads every page file once (a tree's root histograms, each
level's partition with its children's histograms, the margins of a tree's last level): the
cost of external memory is those reads. On the host a page's part of such a pass is one
compiled call (``kernels/cpu/paged.py``) on the tree's rows as they are: no page-local
copy of a node's rows, the partitioned rows put straight in place, the histograms summed
over the pages in per-thread copies added once a level. (The whole-matrix kernels called
page by page need Python and serial NumPy passes over the row ids around each call, on
one core while the others wait.) A device fit keeps the page-by-page calls of the device
kernels; its pages are copied host -> device by the reader thread into two reused device
buffers, asynchronously on a stream of their own, page ``i + 1``'s copy behind page
``i``'s kernels (``kernels/cuda/page_copy.py``).
"""
import atexit
import mmap
import os
import threading
import weakref
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial

import numpy as np

from .dense import DenseBins


class PageFiles:
    """The page files of a paged matrix: page ``i`` holds rows ``offsets[i] ..
    offsets[i + 1]``, its bins row-major then feature-major (``DenseBins``' two arrays),
    ``dtype`` uint8/uint16, in ``paths[i]``. The files are removed by ``close()`` or when
    this object is collected."""

    def __init__(self, paths, offsets, n_features, dtype):
        self.paths = list(paths)
        self.offsets = np.asarray(offsets, np.int64)
        self.n_features, self.dtype = int(n_features), np.dtype(dtype)
        self._lock = threading.Lock()
        self.closed = False  # close() removed the files
        self.folder = None  # a temporary folder of these files only: removed with them
        _OPEN.add(self)  # removed at exit too (an object alive then is not collected)

    @property
    def n_pages(self):
        return len(self.paths)

    def page_cells(self, i):
        return int(self.offsets[i + 1] - self.offsets[i]) * self.n_features

    def map(self, i, row_major=True, feature_major=False):
        """Page ``i``'s bins mapped from its file, read-only, without a copy: ``(bins
        (n_rows, n_features) or None, bins_by_feature (n_features, n_rows) or None)``.
        The row-major bins are mapped in full at once (``MAP_POPULATE``: the calling
        thread, the reader, takes the page faults); the feature-major ones are mapped
        untouched, so a partition brings in the columns it reads only. A mapping lives as
        long as an array of it (a page in use and the next one: two pages resident)."""
        rows = int(self.offsets[i + 1] - self.offsets[i])
        cells = rows * self.n_features
        shapes = (rows, self.n_features), (self.n_features, rows)
        if cells == 0:
            return tuple(np.empty(shape, self.dtype) if want else None
                         for shape, want in zip(shapes, (row_major, feature_major)))
        nbytes = cells * self.dtype.itemsize
        try:
            with open(self.paths[i], "rb", buffering=0) as fh:
                size = os.fstat(fh.fileno()).st_size
                if size < 2 * nbytes:  # a mapping past the end would crash on reading
                    raise ValueError(
                        f"page {i} of the external-memory cache, {self.paths[i]}, is shorter "
                        f"than written ({size} of {2 * nbytes} bytes): it was changed or "
                        "truncated; build the matrix again")
                bins = by_feature = None
                if row_major:
                    mapped = mmap.mmap(fh.fileno(), nbytes, flags=mmap.MAP_SHARED | _POPULATE,
                                       prot=mmap.PROT_READ)
                    bins = np.frombuffer(mapped, self.dtype, cells).reshape(shapes[0])
                if feature_major:  # from the granule holding its first byte
                    at = nbytes - nbytes % mmap.ALLOCATIONGRANULARITY
                    mapped = mmap.mmap(fh.fileno(), 2 * nbytes - at, flags=mmap.MAP_SHARED,
                                       prot=mmap.PROT_READ, offset=at)
                    by_feature = np.frombuffer(mapped, self.dtype, cells,
                                               nbytes - at).reshape(shapes[1])
        except FileNotFoundError:
            raise FileNotFoundError(f"page {i} of the external-memory cache, {self.paths[i]}, "
                                    "is gone: the cache folder was removed or cleaned while "
                                    "the matrix was in use; build the matrix again") from None
        return bins, by_feature

    def close(self):
        """Remove the page files (those still there)."""
        with self._lock:
            paths, self.paths = self.paths, []
            folder, self.folder = self.folder, None
            self.closed = True
        for path in paths:
            try:
                os.remove(path)
            except OSError:
                pass
        if folder is not None:
            try:
                os.rmdir(folder)
            except OSError:
                pass

    def __del__(self):
        self.close()


_OPEN = weakref.WeakSet()
_POPULATE = getattr(mmap, "MAP_POPULATE", 0)  # Linux: the mapping's page faults taken at once


@atexit.register
def _close_all():
    """Remove the page files of every matrix still open when the interpreter exits."""
    for files in list(_OPEN):
        files.close()


class PagedBins:
    """A dense bin matrix in pages (``PageFiles``), read one page at a time.

    n_bins : int32 (n_features,), value bins per feature (bin ``n_bins[f]`` = missing)
    """

    layout = "paged"
    missing_slots = 1

    def __init__(self, files, n_bins):
        self.files = files
        self.n_bins = np.asarray(n_bins, dtype=np.int32)
        self.feature_offsets = np.concatenate(
            ([0], np.cumsum(self.n_bins + 1))).astype(np.int32)
        self._largest = max((files.page_cells(i) for i in range(files.n_pages)), default=0)
        self._pool = None
        self.prefetch = True
        self.passes = 0  # passes over the pages so far (what external memory costs)
        self.xp = np  # the device's array module: ``on_device`` gives a CUDA fit's view
        self.device = False  # whether the kernels are device kernels (``on_device``)
        self._page_copies = None  # a device view's double buffer (``_copies``)

    def on_device(self, xp):
        """The same pages for a fit whose arrays live where ``xp`` puts them (CuPy on a
        GPU; NumPy under the CUDA simulator): each page is mapped on the host and copied
        to the device (the next one by the reader thread, through a pinned staging
        buffer on a copy stream of its own, behind the kernels of this one: double
        buffering, ``kernels/cuda/page_copy.py``), so the device holds two pages of bins
        in buffers reused all fit long. Shares the files (closing either removes them)."""
        view = PagedBins(self.files, self.n_bins)
        view.xp, view.device = xp, True
        return view

    def check_open(self):
        """Raise ``ValueError`` when the page files were removed (``close()``)."""
        if self.files.closed:
            raise ValueError("the ExtMemQuantileDMatrix is closed (close(), or the end of its "
                             "with block, removed its page files): a closed matrix cannot be "
                             "trained on or evaluated; make it again from its iterator")

    def _reader(self):
        """The thread that reads the next pages (one, kept: starting a thread per page
        costs more than a small page's read on a busy machine)."""
        with self.files._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(max_workers=1,
                                                thread_name_prefix="gbm-page-reader")
            return self._pool

    @property
    def n_rows(self):
        return int(self.files.offsets[-1])

    @property
    def n_features(self):
        return self.files.n_features

    @property
    def nbytes(self):
        """Bytes of bins resident at once: two pages mapped row-major (the one in use and
        the next; the pages live on disk)."""
        return 2 * self._largest * self.files.dtype.itemsize

    @property
    def disk_bytes(self):
        return 2 * self.n_rows * self.n_features * self.files.dtype.itemsize

    @property
    def row_cost(self):
        return self.n_features

    def pages(self, features=None):
        """Yield ``(lo, hi, DenseBins of rows lo .. hi)`` page after page, mapped from the
        page files (``PageFiles.map``); the next page is mapped by the reader thread while
        the caller uses this one. ``features`` None: the pages' bins row-major (``bins``,
        what histograms and predictions read); else feature-major (``bins_by_feature``,
        what a partition reads, those features' columns only). The other array of each
        ``DenseBins`` is an empty stand-in, not to be read."""
        row_major = features is None
        for lo, hi, bins, by_feature in self._stream(row_major, not row_major):
            if row_major:
                by_feature = bins.T
            else:
                bins = by_feature.T
            yield lo, hi, DenseBins(bins, by_feature, self.n_bins)

    def pages_with_columns(self):
        """Yield ``(lo, hi, bins, bins_by_feature)`` page after page: the page's bins
        row-major (n_rows, n_features) and feature-major (n_features, n_rows), both
        mapped by the reader thread while the caller uses the last page's (of the
        feature-major ones, on the host the columns read are brought in only; a device
        fit copies whole pages)."""
        yield from self._stream(True, True)

    def pages_by_feature(self):
        """Yield ``(lo, hi, bins_by_feature (n_features, hi - lo))`` page after page, the
        feature-major bins only (mapped untouched: on the host the columns read are brought
        in; a device fit copies whole pages)."""
        for lo, hi, _, by_feature in self._stream(False, True):
            yield lo, hi, by_feature

    @staticmethod
    def node_runs(rows, starts, ends, lo, hi):
        """Each node's rows within ``lo .. hi`` as page-local row numbers (host arrays):
        ``(local rows int32, starts int64, ends int64)``, or None when no node has a row
        there (``rows[starts[j]:ends[j]]`` must be increasing)."""
        return _page_rows(rows, starts, ends, lo, hi)

    def _stream(self, row_major, feature_major):
        """Yield ``(lo, hi, bins, bins_by_feature)`` page after page (``PageFiles.map``;
        None for a layout not asked for): page ``i + 1`` is mapped by the reader thread
        while the caller uses page ``i``. On the device (``on_device``) the reader also
        starts page ``i + 1``'s asynchronous copy to the device (``_copies``), and the
        arrays yielded are device buffers reused page after page: valid until the next
        page is asked for."""
        self.check_open()
        files, n = self.files, self.files.n_pages
        self.passes += 1
        if n == 0:
            return
        reader = _Inline() if not self.prefetch else self._reader()  # else in this thread
        copies = self._copies() if self.device else None
        fetch = files.map if copies is None else partial(_map_and_copy, files, copies)
        pending = reader.submit(fetch, 0, row_major, feature_major)
        try:
            for i in range(n):
                views = pending.result()
                pending = None
                if i + 1 < n:
                    pending = reader.submit(fetch, i + 1, row_major, feature_major)
                lo, hi = int(files.offsets[i]), int(files.offsets[i + 1])
                if copies is None:
                    yield lo, hi, views[0], views[1]
                    del views
                    continue
                copies.before_use(i % 2)  # the kernels launched from here wait the copy
                try:
                    yield lo, hi, views[0], views[1]
                finally:  # the page's kernels are launched: its slot is free after them
                    copies.after_use(i % 2)
                del views
        finally:
            if pending is not None:  # a mapping under way is finished (then let go)
                pending.exception()
                if copies is not None:  # and its copy to the device
                    copies.settle()

    def _copies(self):
        """The double buffer of this device view's pages (``kernels/cuda/page_copy.py``),
        made on the first pass and kept: two pages' device buffers for the whole fit."""
        if self._page_copies is None:
            from ..kernels.cuda.page_copy import PageCopies, page_copies

            self._page_copies = PageCopies(page_copies(), self._largest, self.files.dtype)
        return self._page_copies

    def build_histograms(self, k, gpair, rows, starts, ends, hist, n_threads, slot_map=None):
        if slot_map is not None:
            raise ValueError("a paged bin matrix builds histograms of every feature")
        if not self.device:  # one compiled call a page, the sums kept over the pages
            kernels = _host_kernels()
            starts = np.ascontiguousarray(starts, dtype=np.int64)
            ends = np.ascontiguousarray(ends, dtype=np.int64)
            private = _private(starts.shape[0], hist, n_threads)
            seen = np.zeros(starts.shape[0], np.int64)
            for lo, _, bins, _ in self._stream(True, False):
                kernels.page_histograms(bins, lo, gpair, rows, starts, ends, seen,
                                        self.feature_offsets, private)
            kernels.sum_private(private, hist)
            return
        hist[...] = 0
        part = self.xp.empty_like(hist)
        for lo, hi, page in self.pages():
            sub = _page_rows(rows, starts, ends, lo, hi, self.xp)
            if sub is None:
                continue
            page.build_histograms(k, gpair[lo:hi], sub[0], sub[1], sub[2], part, n_threads)
            hist += part  # integers: the sum over pages is the whole matrix's

    def partition_rows(self, k, rows, starts, ends, feature, split_bin, default_left,
                       split_type, cat_bits, scratch, out_n_left):
        """Each page's part of each node partitioned, each node's rows put back as every
        page's left rows then every page's right rows: on the host one compiled call a
        page puts them in place (``_partition_host``); on the device the page's kernel
        partitions them and ``_Placement`` puts them back."""
        if not self.device:
            self._partition_host(rows, starts, ends, feature, split_bin, default_left,
                                 split_type, cat_bits, scratch, out_n_left)
            return
        xp = self.xp
        placed = _Placement(rows, scratch, starts, ends, xp)
        for lo, hi, page in self.pages(_host(feature)):
            sub = _page_rows(rows, starts, ends, lo, hi, xp)
            if sub is None:
                continue
            local, s, e = sub
            n_left = xp.empty(starts.shape[0], np.int64)
            page.partition_rows(k, local, s, e, feature, split_bin, default_left, split_type,
                                cat_bits, xp.empty_like(local), n_left)
            placed.page(local, _host(s), _host(e), _host(n_left), lo)
        placed.finish(out_n_left)

    def _partition_host(self, rows, starts, ends, feature, split_bin, default_left,
                        split_type, cat_bits, scratch, out_n_left):
        """``partition_rows`` on the host: ``_partition_and_build_host`` without the
        histograms, from the pages' feature-major bins only (the split features' columns
        brought in)."""
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        seen_left = np.zeros(starts.shape[0], np.int64)
        seen_right = np.zeros(starts.shape[0], np.int64)
        work = np.empty(self._largest // max(1, self.n_features), np.int32)
        kernels = _host_kernels()
        for lo, _, _, by_feature in self._stream(False, True):
            kernels.page_partition(by_feature, lo, rows, scratch, work, starts, ends,
                                   seen_left, seen_right, feature, split_bin, default_left,
                                   split_type, cat_bits, self.n_bins)
        _finish_partition(kernels, rows, scratch, starts, ends, seen_left, seen_right,
                          out_n_left)

    def partition_and_build(self, k, rows, starts, ends, feature, split_bin, default_left,
                            split_type, cat_bits, scratch, out_n_left, small_is_left, gpair,
                            hist, n_threads):
        """``partition_rows``, and the histograms of each node's smaller child, in one pass
        over the pages: each page's part of each node is partitioned (from the page's
        feature-major columns of the split features), then the page's rows of the smaller
        children (the left ones where ``small_is_left``) are summed from its row-major
        bins, mapped with them. A level then goes over the pages once, not twice.

        small_is_left : bool (n_nodes,); gpair : int64 (n_rows, 2) on the device
        hist : int64 (n_nodes, n_slots, 2), OUT: node ``j``'s smaller child's histogram
        (the sum of its pages' histograms: integers, so the one-matrix sums)
        """
        xp = self.xp
        n_nodes = starts.shape[0]
        small_is_left = np.asarray(small_is_left, dtype=bool)
        if not self.device:
            self._partition_and_build_host(rows, starts, ends, feature, split_bin,
                                           default_left, split_type, cat_bits, scratch,
                                           out_n_left, small_is_left, gpair, hist, n_threads)
            return
        placed = _Placement(rows, scratch, starts, ends, xp)
        hist[...] = 0
        part = xp.empty_like(hist)
        for lo, hi, bins, by_feature in self.pages_with_columns():
            sub = _page_rows(rows, starts, ends, lo, hi, xp)
            if sub is None:
                continue
            local, s, e = sub
            n_left = xp.empty(n_nodes, np.int64)
            k.partition_rows(by_feature, local, s, e, feature, split_bin, default_left,
                             split_type, cat_bits, self.n_bins, xp.empty_like(local), n_left)
            n_left, s_h, e_h = _host(n_left), _host(s), _host(e)
            middle = s_h + n_left
            h_starts = xp.asarray(np.where(small_is_left, s_h, middle))
            h_ends = xp.asarray(np.where(small_is_left, middle, e_h))
            k.build_histograms(bins, gpair[lo:hi], local, h_starts, h_ends,
                               self.feature_offsets, part, n_threads)
            hist += part  # integers: the sum over pages is the whole matrix's
            placed.page(local, s_h, e_h, n_left, lo)
        placed.finish(out_n_left)

    def _partition_and_build_host(self, rows, starts, ends, feature, split_bin, default_left,
                                  split_type, cat_bits, scratch, out_n_left, small_is_left,
                                  gpair, hist, n_threads):
        """``partition_and_build`` on the host: one compiled call a page
        (``kernels/cpu/paged.py``) partitions each node's run of the page straight into
        place (left rows in ``rows``, right rows in ``scratch``, each after the node's rows
        of the pages before) and adds the smaller children's rows into per-thread
        histograms kept over the pages; then every node's right rows go after its left
        rows, and the threads' histograms are added."""
        n_nodes = starts.shape[0]
        starts = np.ascontiguousarray(starts, dtype=np.int64)
        ends = np.ascontiguousarray(ends, dtype=np.int64)
        seen_left = np.zeros(n_nodes, np.int64)
        seen_right = np.zeros(n_nodes, np.int64)
        private = _private(n_nodes, hist, n_threads)
        work = np.empty(self._largest // max(1, self.n_features), np.int32)
        small = small_is_left.astype(np.uint8)
        kernels = _host_kernels()
        for lo, _, bins, by_feature in self.pages_with_columns():
            kernels.page_partition_build(bins, by_feature, lo, gpair, rows, scratch, work,
                                         starts, ends, seen_left, seen_right, feature,
                                         split_bin, default_left, split_type, cat_bits,
                                         self.n_bins, small, self.feature_offsets, private)
        _finish_partition(kernels, rows, scratch, starts, ends, seen_left, seen_right,
                          out_n_left)
        kernels.sum_private(private, hist)

    def add_split_values(self, k, rows, starts, ends, feature, split_bin, default_left,
                         split_type, cat_bits, left_values, right_values, out):
        if not self.device:  # one compiled call a page, on the tree's rows as they are
            kernels = _host_kernels()
            starts = np.ascontiguousarray(starts, dtype=np.int64)
            ends = np.ascontiguousarray(ends, dtype=np.int64)
            seen = np.zeros(starts.shape[0], np.int64)
            for lo, _, _, by_feature in self._stream(False, True):
                kernels.page_add_split_values(by_feature, lo, rows, starts, ends, seen, feature,
                                              split_bin, default_left, split_type, cat_bits,
                                              self.n_bins, left_values, right_values, out)
            return
        for lo, hi, page in self.pages(_host(feature)):
            sub = _page_rows(rows, starts, ends, lo, hi, self.xp)
            if sub is not None:
                page.add_split_values(k, sub[0], sub[1], sub[2], feature, split_bin,
                                      default_left, split_type, cat_bits, left_values,
                                      right_values, out[lo:hi])

    def predict_binned(self, k, rows, walk, cat_bits, value, tree_offsets, tree_group,
                       tree_depth, out):
        xp = self.xp
        rows = xp.asarray(rows)
        if rows.shape[0] > 1 and not bool((rows[1:] > rows[:-1]).all()):
            rows = xp.unique(rows)  # each row's leaf is added once, in any order
        if not self.device:  # one compiled call a page, on the rows as they are
            kernels, seen = _host_kernels(), np.zeros(1, np.int64)
            for lo, _, bins, _ in self._stream(True, False):
                kernels.page_predict_binned(bins, lo, rows, seen, self.n_bins, walk, cat_bits,
                                            value, tree_offsets, tree_group, tree_depth, out)
            return
        for lo, hi, page in self.pages():
            a, b = (int(v) for v in xp.searchsorted(rows, xp.asarray([lo, hi], rows.dtype)))
            if b > a:
                page.predict_binned(k, (rows[a:b] - lo).astype(rows.dtype), walk, cat_bits,
                                    value, tree_offsets, tree_group, tree_depth, out[lo:hi])

    def tile(self, n, xp):
        raise NotImplementedError("a paged bin matrix is not stacked (lockstep groups)")

    def close(self):
        if self._pool is not None:
            self._pool.shutdown(wait=True)
        self.files.close()


class _Placement:
    """Puts each node's partitioned rows back, page after page, without a copy of every
    row: page ``p``'s left rows of node ``j`` go into ``rows`` after the node's left rows
    of the pages before, its right rows into ``scratch`` after theirs; ``finish`` moves
    the right rows after the left ones. The left rows so far never reach a place not yet
    read: they are at most the node's rows of the pages read so far, and those come
    first in the node's segment. What is left there of those pages' rows, like the left
    rows, is below the next page's first row, so a binary search for a page's run
    (``_page_rows``) still finds it.

    rows, scratch : int32 (m,) on the device; starts, ends : int64 (n_nodes,)
    """

    def __init__(self, rows, scratch, starts, ends, xp):
        self.rows, self.scratch, self.xp = rows, scratch, xp
        self.starts = _host(starts).astype(np.int64)
        self.ends = _host(ends).astype(np.int64)
        self.n_left = np.zeros(self.starts.shape[0], np.int64)
        self.n_right = np.zeros(self.starts.shape[0], np.int64)

    def page(self, local, s, e, n_left, lo):
        """A page's partitioned runs: node ``j``'s ``local[s[j]:e[j]]`` (page-local row
        numbers, its ``n_left[j]`` left rows first) of the page starting at row ``lo``."""
        add = self.xp.add
        for j in range(s.shape[0]):
            a, mid, b = int(s[j]), int(s[j] + n_left[j]), int(e[j])
            if b <= a:
                continue
            at = int(self.starts[j] + self.n_left[j])
            add(local[a:mid], lo, out=self.rows[at:at + mid - a])
            at = int(self.starts[j] + self.n_right[j])
            add(local[mid:b], lo, out=self.scratch[at:at + b - mid])
            self.n_left[j] += mid - a
            self.n_right[j] += b - mid

    def finish(self, out_n_left):
        """Every node's right rows after its left rows; ``out_n_left``: the left counts."""
        for j in range(self.starts.shape[0]):
            start, n_left, n_right = int(self.starts[j]), int(self.n_left[j]), \
                int(self.n_right[j])
            if n_right:
                self.rows[start + n_left:start + n_left + n_right] = \
                    self.scratch[start:start + n_right]
            out_n_left[j] = n_left


class _Inline:
    """``submit`` that runs the call at once (a reader without a thread)."""

    def submit(self, fn, *args):
        done = Future()
        try:
            done.set_result(fn(*args))
        except BaseException as e:
            done.set_exception(e)
        return done


def _map_and_copy(files, copies, i, row_major, feature_major):
    """Page ``i`` mapped, and its copy to the device started in slot ``i % 2`` (the
    reader thread's part of ``PagedBins._stream`` on the device)."""
    return copies.stage(i % 2, files.map(i, row_major, feature_major))


def _finish_partition(kernels, rows, scratch, starts, ends, seen_left, seen_right,
                      out_n_left):
    """After a host partition's pages: every node's right rows (in ``scratch``) moved
    after its left rows; ``out_n_left``: the left counts."""
    if not np.array_equal(seen_left + seen_right, ends - starts):
        raise RuntimeError("the pages did not hold every row of the level's nodes "
                           "(a node's rows out of order?)")
    kernels.move_right_rows(rows, scratch, starts, seen_left, seen_right)
    out_n_left[:] = seen_left


def _host_kernels():
    """``kernels/cpu/paged.py``, imported on first use (as ``gbm.data``'s other calls of
    the CPU kernels)."""
    from ..kernels.cpu import paged
    return paged


def _private(n_nodes, hist, n_threads):
    """int64 (n_parts, n_nodes, n_slots, 2) zeros: the threads' histograms of a level's
    nodes, summed over the pages (``kernels/cpu/paged.py``)."""
    return np.zeros((max(1, int(n_threads)), n_nodes) + tuple(hist.shape[1:]), np.int64)


def _host(a):
    """A device array's values on the host (NumPy arrays as they are)."""
    return a.get() if hasattr(a, "get") and not isinstance(a, np.ndarray) else np.asarray(a)


def _page_rows(rows, starts, ends, lo, hi, xp=np):
    """Each node's rows within ``lo .. hi`` (a node's rows ``rows[starts[j]:ends[j]]`` are
    increasing, so they are one run), as page-local row numbers: ``(local rows int32,
    starts int64, ends int64)``, the nodes' runs one after another; None when no node has
    a row there."""
    starts_h, ends_h = _host(starts), _host(ends)
    n_nodes = starts_h.shape[0]
    a = np.empty(n_nodes, np.int64)
    b = np.empty(n_nodes, np.int64)
    for j in range(n_nodes):
        seg = rows[int(starts_h[j]):int(ends_h[j])]
        at = _host(xp.searchsorted(seg, xp.asarray([lo, hi], seg.dtype)))
        a[j], b[j] = int(starts_h[j]) + int(at[0]), int(starts_h[j]) + int(at[1])
    counts = b - a
    total = int(counts.sum())
    if total == 0:
        return None
    local = xp.empty(total, np.int32)
    new_ends = np.cumsum(counts).astype(starts_h.dtype)
    new_starts = (new_ends - counts).astype(starts_h.dtype)
    for j in range(n_nodes):
        if counts[j]:
            xp.subtract(rows[a[j]:b[j]], lo, out=local[new_starts[j]:new_ends[j]])
    if xp is not np:  # the kernels' node bounds on the device too
        new_starts, new_ends = xp.asarray(new_starts), xp.asarray(new_ends)
    return local, new_starts, new_ends
