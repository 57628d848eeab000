"""Tensor's storage, layout, device-kind and legacy-type methods: a mixin of
``wgrad._tensor.Tensor`` (its fields stay in ``_Fields``, NOTE [Tensor creation cost]).
The names these methods use from ``_tensor`` (its late imports of ops, ``strided``) are
read there at call time."""
import jax

from . import _dtype
from . import _tensor as _T

__all__ = ["StorageMethods"]


class StorageMethods:
    """Methods of Tensor about where and how its data is laid out, and its legacy
    type."""

    __slots__ = ()

    @property
    def is_cuda(self):
        return self.device.type == "cuda"

    @property
    def is_cpu(self):
        return self.device.type == "cpu"

    def get_device(self):
        """The index of this tensor's accelerator, -1 on the CPU."""
        d = self.device
        return -1 if d.type == "cpu" else d.index or 0

    # a wgrad tensor is dense and strided, on the CPU or a JAX accelerator
    layout = property(lambda self: _T.strided)
    is_sparse = is_sparse_csr = is_quantized = is_meta = is_mkldnn = is_nested = is_xpu = \
        is_mps = is_vulkan = is_ipu = is_xla = is_mtia = is_maia = property(lambda self: False)

    def to_dense(self, dtype=None, *, masked_grad=None):
        """This tensor (already dense): itself, or a copy in ``dtype``."""
        return self if dtype is None or dtype is self.dtype else self.to(dtype)

    def is_pinned(self, device=None):
        """False: JAX has no pinned host buffers."""
        return False

    def pin_memory(self, device=None):
        """torch's error without an accelerator; wgrad cannot pin host memory."""
        if jax.default_backend() == "cpu":
            raise RuntimeError("Cannot access accelerator device when none is available.")
        raise NotImplementedError("pin_memory(): JAX has no pinned host buffers in wgrad; "
                                  "move the tensor with .to(device)")

    def share_memory_(self):
        """Mark the storage as shared, for ``is_shared()``: wgrad's arrays are not in
        memory other processes see (docs/differences.md)."""
        _T._storage_of(self).shared = True
        return self

    def is_shared(self):
        m = self._view_meta
        return self.is_cuda or (m is not None and m.storage.shared)

    def element_size(self):
        return self.dtype.itemsize

    itemsize = property(element_size)
    nbytes = property(lambda self: self.numel() * self.dtype.itemsize)

    def type(self, dtype=None, non_blocking=False, **kwargs):
        """The legacy type name (``"torch.FloatTensor"``) without ``dtype``; with one (a
        dtype, a legacy name or a legacy class such as ``wgrad.DoubleTensor``) the tensor
        cast to it, or ``self`` when it already has that type."""
        if dtype is None:
            return self.dtype.legacy_type
        if isinstance(dtype, str):
            dt = _dtype.from_legacy_type(dtype)
            if dt is None:
                raise ValueError(f"invalid type: '{dtype}'")
        elif isinstance(dtype, _dtype.dtype):
            dt = dtype
        elif isinstance(getattr(dtype, "dtype", None), _dtype.dtype):  # FloatTensor, ...
            dt = dtype.dtype
        else:
            raise TypeError("dtype must be a type, str, or dtype object")
        return self if dt is self.dtype else self.to(dt)

    def is_contiguous(self, memory_format=None):
        """Whether this tensor's layout is row-major (NOTE [Strides without strides])."""
        return _T._ops.is_contiguous(self)

    def stride(self, dim=None):
        """Strides in elements of this tensor's layout over its storage."""
        s = _T._strides_of(self)[0]
        return s if dim is None else s[_T._wrap_dim(dim, self._data.ndim)]

    def storage_offset(self):
        return _T._strides_of(self)[1]

    def storage(self):
        return _T._storage.TypedStorage._of(self)

    def untyped_storage(self):
        return _T._storage.UntypedStorage._of(self)

    def data_ptr(self):
        """A number that identifies this tensor's storage and offset (docs/differences.md)."""
        return _T._storage.data_ptr(self)
