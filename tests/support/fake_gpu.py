"""A stand-in for CuPy and a GPU, for the machines that have neither: the device paths of
``gbm`` (GPU input detected by ``__cuda_array_interface__``, the ``device="cuda"``
backend, results on the device) run in the CPU process on NumPy memory.

``FakeDeviceArray`` holds a NumPy array and behaves as a CuPy array does where it
matters here: it exposes ``__cuda_array_interface__``, copies to the host only through
``get()`` (``np.asarray`` of it raises TypeError, as CuPy's implicit conversion does),
and NumPy functions applied to it dispatch to the fake module (NEP 18), which refuses
host arrays mixed in, as CuPy's functions do. ``fake_cupy`` is the module; ``install``
puts it in ``sys.modules`` as ``cupy`` and makes ``device="cuda"`` run the CPU kernels
on the arrays' memory, as the CUDA launchers would on the device's.
"""
import ctypes
import sys
import types

import numpy as np


class FakeDeviceArray:
    """A "device" array: NumPy memory behind CuPy's interface (the parts gbm uses)."""

    __array_priority__ = 100  # NumPy's operators defer to ours

    def __init__(self, data):
        self._data = data

    # --- where the data lives
    @property
    def __cuda_array_interface__(self):
        a = self._data
        return {"shape": a.shape, "typestr": a.dtype.str, "data": (a.ctypes.data, False),
                "strides": None if a.flags.c_contiguous else a.strides, "version": 3}

    def get(self):
        """A host copy (CuPy's ``get``)."""
        return np.array(self._data)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use "
                        "`.get()` to construct a NumPy array explicitly.")

    # --- array attributes
    shape = property(lambda self: self._data.shape)
    dtype = property(lambda self: self._data.dtype)
    ndim = property(lambda self: self._data.ndim)
    size = property(lambda self: self._data.size)
    flags = property(lambda self: self._data.flags)
    strides = property(lambda self: self._data.strides)
    nbytes = property(lambda self: self._data.nbytes)
    T = property(lambda self: _wrap(self._data.T))

    def __len__(self):
        return len(self._data)

    def __repr__(self):
        return f"FakeDeviceArray({self._data!r})"

    def __bool__(self):
        return bool(self._data)

    def __int__(self):
        return int(self._data)

    def __float__(self):
        return float(self._data)

    def __index__(self):
        return self._data.__index__()

    def __getitem__(self, key):
        return _wrap(self._data[_unwrap_key(key)])

    def __setitem__(self, key, value):
        self._data[_unwrap_key(key)] = _unwrap_checked(value)

    def __getattr__(self, name):  # methods: reshape, astype, copy, sum, any, ...
        if name.startswith("__"):  # no __array_interface__ / __array_struct__: NumPy
            raise AttributeError(name)  # would read the memory as a host array through them
        attr = getattr(self._data, name)
        if not callable(attr):
            return _wrap(attr)
        return lambda *args, **kwargs: _wrap(attr(*_unwrap_checked(args),
                                                   **_unwrap_checked(kwargs)))

    # --- NumPy's protocols: functions and ufuncs on device arrays stay on the device
    def __array_function__(self, func, types_, args, kwargs):
        return _wrap(func(*_unwrap_checked(args), **_unwrap_checked(kwargs)))

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        result = getattr(ufunc, method)(*_unwrap_checked(inputs), **_unwrap_checked(kwargs))
        return out[0] if out is not None else _wrap(result)


def _binary(name):
    op = getattr(np.ndarray, name)
    return lambda self, other: _wrap(op(self._data, _unwrap_checked(other)))


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor",
              "lt", "le", "gt", "ge", "eq", "ne", "matmul"):
    for _form in (f"__{_name}__", f"__r{_name}__"):
        if hasattr(np.ndarray, _form):
            setattr(FakeDeviceArray, _form, _binary(_form))
for _name in ("__neg__", "__invert__", "__abs__", "__pos__"):
    setattr(FakeDeviceArray, _name, (lambda op: lambda self: _wrap(op(self._data)))(
        getattr(np.ndarray, _name)))


def _wrap(value):
    if isinstance(value, np.ndarray) and value.ndim > 0:
        return FakeDeviceArray(value)
    if isinstance(value, tuple):
        return tuple(_wrap(v) for v in value)
    return value


def _unwrap_key(key):
    if isinstance(key, tuple):
        return tuple(_unwrap_key(k) for k in key)
    return key._data if isinstance(key, FakeDeviceArray) else key


def _unwrap_checked(value):
    """Device arrays -> their memory; a host array mixed in is refused, as CuPy does."""
    if isinstance(value, FakeDeviceArray):
        return value._data
    if isinstance(value, np.ndarray) and value.ndim > 0:
        raise TypeError(f"Unsupported type {type(value)}: a host array passed to a device "
                        "function (use cupy.asarray first)")
    if isinstance(value, (list, tuple)):
        return type(value)(_unwrap_checked(v) for v in value)
    if isinstance(value, dict):
        return {k: _unwrap_checked(v) for k, v in value.items()}
    return value


def _unwrap(value):
    """For kernels: device arrays -> their memory; everything else as it is."""
    return value._data if isinstance(value, FakeDeviceArray) else value


def _from_interface(face):
    """The NumPy view of the memory a ``__cuda_array_interface__`` describes (here the
    "device" memory is the host's)."""
    shape, dtype = tuple(face["shape"]), np.dtype(face["typestr"])
    if 0 in shape:
        return np.empty(shape, dtype=dtype)
    strides = face.get("strides") or tuple(
        int(np.prod(shape[k + 1:], dtype=np.int64)) * dtype.itemsize for k in range(len(shape)))
    span = sum((n - 1) * st for n, st in zip(shape, strides)) + dtype.itemsize
    buffer = (ctypes.c_char * span).from_address(face["data"][0])
    flat = np.frombuffer(buffer, dtype=dtype, count=span // dtype.itemsize)
    return np.lib.stride_tricks.as_strided(flat, shape=shape, strides=strides)


def _to_device(value, dtype=None, copy=False):
    if isinstance(value, FakeDeviceArray):
        data = value._data
    elif hasattr(value, "__cuda_array_interface__"):  # another library's "device" array:
        data = _from_interface(value.__cuda_array_interface__)  # read in place, as CuPy does
    else:
        data = np.asarray(value)  # host -> "device": a copy, as cupy.asarray makes
        copy = True
    if copy or (dtype is not None and np.dtype(dtype) != data.dtype):
        data = np.array(data, dtype=dtype, order="K")  # the layout kept, as CuPy keeps it
    return FakeDeviceArray(data)


def _module():
    module = types.ModuleType("cupy", "fake CuPy over NumPy memory (tests/support/fake_gpu.py)")

    def passthrough(name):
        func = getattr(np, name)
        return lambda *args, **kwargs: _wrap(func(*_unwrap_checked(args),
                                                  **_unwrap_checked(kwargs)))

    for name in dir(np):
        attr = getattr(np, name)
        if isinstance(attr, type) or name.startswith("_"):
            setattr(module, name, attr)  # dtypes: cupy.float32 is numpy.float32
        elif callable(attr):
            setattr(module, name, passthrough(name))
    module.ndarray = FakeDeviceArray
    module.asarray = lambda a, dtype=None: _to_device(a, dtype)
    module.array = lambda a, dtype=None, copy=True: _to_device(a, dtype, copy=True)
    module.ascontiguousarray = lambda a, dtype=None: FakeDeviceArray(
        np.ascontiguousarray(_to_device(a)._data, dtype=dtype))
    module.asnumpy = lambda a: a.get() if isinstance(a, FakeDeviceArray) else np.asarray(a)
    module.get_array_module = lambda *arrays: (
        module if any(isinstance(a, FakeDeviceArray) for a in arrays) else np)
    module.is_fake = True
    return module


fake_cupy = _module()


class FakeCudaKernels(types.ModuleType):
    """``gbm.kernels.cpu`` run on the device arrays' memory: what ``gbm.kernels.cuda``'s
    launchers do on a GPU (they take device arrays, and write into ``out`` in place)."""

    def __init__(self):
        super().__init__("fake_cuda_kernels")
        from gbm.kernels import cpu

        self._cpu = cpu
        self.calls = []

    def __getattr__(self, name):
        kernel = getattr(self._cpu, name)
        if not callable(kernel):
            return kernel

        def launch(*args, **kwargs):
            self.calls.append(name)
            return _wrap(kernel(*(_unwrap(a) for a in args),
                                **{k: _unwrap(v) for k, v in kwargs.items()}))

        return launch


def install(monkeypatch):
    """``cupy`` is the fake, and ``device="cuda"`` gets the fake's kernels; returns them
    (their ``calls`` list the kernels run)."""
    import gbm.runtime.backend

    kernels = FakeCudaKernels()
    monkeypatch.setitem(sys.modules, "cupy", fake_cupy)
    monkeypatch.setattr(gbm.runtime.backend, "_cuda_kernels", lambda: kernels)
    return kernels


def device(array):
    """A fake device copy of a host array."""
    return fake_cupy.asarray(np.asarray(array))
