"""The double-buffered host -> device copies of an external-memory matrix's pages
(``kernels/cuda/page_copy.py``, ``PagedBins._stream`` on the device): the order of the
staging writes, copies, waits and records (a recording backend stands in for CUDA), the
two slots' buffers reused by every page of every pass, and the CPU's in-memory model
from a fit whose pages went through them (under the simulator: its stream, event and
pinned-array API)."""
import numpy as np
import gbm
from gbm.bins.paged import PageFiles, PagedBins
from gbm.kernels.cuda import page_copy
from tests.support.device_arrays import SIMULATOR, host


class _Recorder:
    """A ``PageCopies`` backend on NumPy that logs every call, events and buffers named."""

    def __init__(self, log):
        self.log, self.n_events, self.n_buffers = log, 0, 0

    def on_device(self):
        return page_copy._Nothing()

    def stream(self):
        return "copy"

    def compute_stream(self):
        return "compute"

    def event(self):
        self.n_events += 1
        return f"event{self.n_events - 1}"

    def host_buffer(self, n, dtype):
        return _Named(f"staging{self._count()}", np.full(n, 255, dtype))

    def device_buffer(self, n, dtype):
        return _Named(f"device{self._count()}", np.full(n, 255, dtype))

    def _count(self):
        self.n_buffers += 1
        return self.n_buffers - 1

    def copy(self, device, staging, n, stream):
        self.log.append(("copy", staging.name, device.name, stream))
        device[:n] = staging[:n]

    def view(self, device, n, shape):
        return device[:n].reshape(shape)

    def record(self, event, stream):
        self.log.append(("record", event, stream))

    def wait(self, stream, event):
        self.log.append(("wait", stream, event))

    def synchronize(self, event):
        self.log.append(("synchronize", event))


class _Named(np.ndarray):
    """A NumPy buffer with a name (its slices keep it)."""

    def __new__(cls, name, array):
        out = array.view(cls)
        out.name = name
        return out

    def __array_finalize__(self, obj):
        self.name = getattr(obj, "name", None)


def _paged(tmp_path, page_rows, n_features=3, n_bins=7, seed=0):
    """A ``PagedBins`` of pages of ``page_rows`` rows written to ``tmp_path``, and its
    whole bin matrix (uint8 (n_rows, n_features))."""
    rng = np.random.default_rng(seed)
    whole = rng.integers(0, n_bins + 1, size=(sum(page_rows), n_features)).astype(np.uint8)
    offsets = np.concatenate(([0], np.cumsum(page_rows)))
    paths = []
    for i in range(len(page_rows)):
        page = whole[offsets[i]:offsets[i + 1]]
        path = tmp_path / f"page{i}.bin"
        np.concatenate((page.ravel(), page.T.ravel())).tofile(path)
        paths.append(str(path))
    files = PageFiles(paths, offsets, n_features, np.uint8)
    return PagedBins(files, np.full(n_features, n_bins, np.int32)), whole


def _device_view(bins, log):
    """``bins`` on a 'device' whose copies go through a recording backend, read inline (no
    reader thread: the calls' order is then fixed)."""
    view = bins.on_device(np)
    view.prefetch = False
    view._page_copies = page_copy.PageCopies(_Recorder(log), view._largest, np.uint8)
    return view


def test_each_copy_waits_its_slot_and_the_next_page_is_copied_before_this_one_is_used(
        tmp_path):
    bins, whole = _paged(tmp_path, [4, 5, 2])
    log = []
    view = _device_view(bins, log)
    copies = view._page_copies
    copied, released = copies.copied, copies.released
    for lo, hi, page in view.pages():
        np.testing.assert_array_equal(page.bins, whole[lo:hi])  # the page's own bins
        log.append(("use", lo))
    # the staging and device buffers of slot s: made by page s, the first in it
    staging = {s: copies._staging[s][0].name for s in (0, 1)}
    device = {s: copies._device[s][0].name for s in (0, 1)}

    def staged(slot):
        return [("synchronize", copied[slot]), ("wait", "copy", released[slot]),
                ("copy", staging[slot], device[slot], "copy"),
                ("record", copied[slot], "copy")]

    def used(slot, lo):
        return [("wait", "compute", copied[slot]), ("use", lo),
                ("record", released[slot], "compute")]

    assert log == (staged(0) + staged(1) + used(0, 0) + staged(0) + used(1, 4)
                   + used(0, 9))


def test_two_slots_of_buffers_serve_every_page_of_every_pass(tmp_path):
    """Row-major passes and a pass of both layouts: one staging and one device buffer per
    slot and layout, no more, whatever the number of pages and passes; each page's
    values are its own."""
    bins, whole = _paged(tmp_path, [3, 6, 1, 5, 2])
    log = []
    view = _device_view(bins, log)
    for _ in range(3):
        got = [(lo, hi, page.bins.copy()) for lo, hi, page in view.pages()]
        assert [(lo, hi) for lo, hi, _ in got] == [(0, 3), (3, 9), (9, 10), (10, 15),
                                                   (15, 17)]
        for lo, hi, values in got:
            np.testing.assert_array_equal(values, whole[lo:hi])
    for lo, hi, rows, by_feature in view.pages_with_columns():
        np.testing.assert_array_equal(rows, whole[lo:hi])
        np.testing.assert_array_equal(by_feature, whole[lo:hi].T)
    assert view._page_copies.backend.n_buffers == 2 * 2 * 2  # slots x layouts x kinds
    assert view.passes == 4


def test_a_pass_left_early_frees_its_slot(tmp_path):
    """A consumer that stops at page 0 (an error in its kernels): the slot's release is
    recorded, so the next pass's copy into it waits on the kernels launched, not on an
    event never recorded again; and the host waits for page 1's copy, started and now
    used by nothing, before its buffers may be let go."""
    bins, _ = _paged(tmp_path, [4, 4, 4])
    log = []
    view = _device_view(bins, log)
    copied, released = view._page_copies.copied, view._page_copies.released
    pages = view.pages()
    next(pages)
    log.clear()
    pages.close()  # what a consumer's exception does to the generator
    assert log == [("record", released[0], "compute"), ("synchronize", copied[0]),
                   ("synchronize", copied[1])]
    next(view.pages())  # the next pass: slot 0's copy waits that release
    assert ("wait", "copy", released[0]) in log


def _address(array):
    """Where an array's memory starts (NumPy or CuPy)."""
    if hasattr(array, "data") and hasattr(array.data, "ptr"):
        return array.data.ptr
    return array.__array_interface__["data"][0]


def test_the_backend_copies_into_its_two_device_buffers(tmp_path):
    """This process's backend (the simulator's CUDA API; CuPy's streams and pinned memory
    on a GPU): each page's bins arrive, each in its slot's device buffer, the same memory
    on every pass."""
    bins, whole = _paged(tmp_path, [4, 5, 2])
    view = bins.on_device(np if SIMULATOR else _cupy())
    first = {}
    for _ in range(2):
        for i, (lo, hi, page) in enumerate(view.pages()):
            np.testing.assert_array_equal(host(page.bins), whole[lo:hi])
            first.setdefault(i, _address(page.bins))
            assert _address(page.bins) == first[i % 2]
    assert len(first) == 3 and first[0] != first[1]
    bins.close()


def _cupy():
    import cupy

    return cupy


class _Batches(gbm.DataIter):
    def __init__(self, X, y, sizes):
        super().__init__()
        self.X, self.y, self.bounds, self.i = X, y, np.cumsum([0] + sizes), 0

    def next(self, input_data):
        if self.i >= len(self.bounds) - 1:
            return False
        lo, hi = self.bounds[self.i], self.bounds[self.i + 1]
        input_data(data=self.X[lo:hi], label=self.y[lo:hi])
        self.i += 1
        return True

    def reset(self):
        self.i = 0


def test_a_device_fit_through_the_double_buffer_is_the_cpu_model(tmp_path, monkeypatch):
    """Every page of every pass of a device fit (reader thread on) copied through the
    backend's two slots: four device buffers made in all, and the CPU's
    in-memory model file."""
    made = []

    class Counting(type(page_copy.page_copies())):
        def device_buffer(self, n, dtype):
            made.append(n)
            return super().device_buffer(n, dtype)

    monkeypatch.setattr(page_copy, "page_copies", Counting)
    rng = np.random.default_rng(5)
    X = rng.normal(size=(130, 4)).astype(np.float32)
    X[rng.random(X.shape) < 0.1] = np.nan
    y = (np.nan_to_num(X[:, 1]) + 0.3 * rng.normal(size=130) > 0).astype(float)
    p = {"objective": "binary:logistic", "max_depth": 3, "max_bin": 32,
         "bin_sample_size": 60}
    cpu_model = gbm.train(p, gbm.DMatrix(X, label=y), 3)
    with gbm.ExtMemQuantileDMatrix(_Batches(X, y, [30, 45, 1, 54]), max_bin=32,
                                   bin_sample_size=60, cache_prefix=str(tmp_path),
                                   min_cache_page_bytes=200) as d:
        assert d.data.matrix.files.n_pages >= 3
        on_device = gbm.train(dict(p, device="cuda"), d, 3)
    assert 0 < len(made) <= 4
    on_device.params = dict(on_device.params, device="cpu")
    cpu_model.params = dict(cpu_model.params, device="cpu")
    assert on_device.to_json() == cpu_model.to_json()
