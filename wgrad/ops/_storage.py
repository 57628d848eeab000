"""Storages: what ``Tensor.storage()`` / ``untyped_storage()`` return.

wgrad keeps no raw memory (NOTE [Strides without strides] in _views.py): a storage
here is a handle on the shared ``_Storage`` record of a tensor and its aliases (NOTE
[Views]), enough of torch's TypedStorage/UntypedStorage for code that asks a storage's
size, compares ``data_ptr()`` for identity across views, or reads its elements.
``data_ptr()`` is a stable number per storage (not an address) plus the byte offset.
"""
import numpy as np

from .. import _dtype
from .._device import device as _device
from ._views import storage_of, strides_of

__all__ = ["TypedStorage", "UntypedStorage", "data_ptr"]


def _base_ptr(st):
    return id(st) * 64  # distinct per live storage and far apart, as addresses are


def data_ptr(t):
    """``Tensor.data_ptr()``: the storage's number plus the tensor's offset in bytes."""
    return _base_ptr(storage_of(t)) + strides_of(t)[1] * t._data.dtype.itemsize


class UntypedStorage:
    """A tensor's storage counted in bytes."""

    __slots__ = ("_st",)

    def __init__(self, st):
        self._st = st

    @classmethod
    def _of(cls, t):
        return cls(storage_of(t))

    def nbytes(self):
        return int(self._st.data.size * self._st.data.dtype.itemsize)

    def size(self):
        return self.nbytes()

    __len__ = size

    def element_size(self):
        return 1

    def data_ptr(self):
        return _base_ptr(self._st)

    @property
    def _cdata(self):
        return _base_ptr(self._st)

    @property
    def device(self):
        return _dtype_device(self._st.data)

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other._st is self._st

    __hash__ = object.__hash__

    def __repr__(self):
        return f"wgrad.UntypedStorage(nbytes={self.nbytes()})"


class TypedStorage(UntypedStorage):
    """A tensor's storage counted in elements of its dtype."""

    __slots__ = ()

    @property
    def dtype(self):
        return _dtype.from_np(self._st.data.dtype)

    def size(self):
        return int(self._st.data.size)

    __len__ = size

    def element_size(self):
        return self._st.data.dtype.itemsize

    def untyped(self):
        return UntypedStorage(self._st)

    def tolist(self):
        return np.asarray(self._st.data).ravel().tolist()

    def __getitem__(self, i):
        return np.asarray(self._st.data).ravel()[i].item()

    def __eq__(self, other):
        return isinstance(other, UntypedStorage) and other._st is self._st

    __hash__ = object.__hash__

    def __repr__(self):
        return f"wgrad.TypedStorage(dtype={self.dtype}, size={self.size()})"


def _dtype_device(a):
    return _device.of_jax(next(iter(a.devices())))
