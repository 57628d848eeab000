"""Shape ops: reshape, transpose/permute, squeeze, expand, cat/stack/split, flip, roll,
rot90, repeat, pad, meshgrid, block_diag, torch.cross; dtype casts and clone."""
import builtins
import operator
import warnings
import weakref

import jax
import jax.numpy as jnp
from jax import lax
import numpy as np

from .. import _dtype as D
from .._tensor import Size, Tensor, _Fields, _make, _wrap_dim
from ._primitive import Primitive, name_by_op
from ._promote import result_type
from ._transfer import to_device as _to_device
from .._autograd.grad_mode import _state as _grad_state
from ._views import (MULTI_OUTPUT, is_contiguous, link_alias, set_creation, storage_ids,
                     strided_as, strides_of)

__all__ = ["reshape", "view", "flatten", "unflatten", "transpose", "swapaxes", "swapdims",
           "t", "numpy_T", "permute", "movedim", "moveaxis", "squeeze", "unsqueeze",
           "expand", "expand_as", "broadcast_to", "broadcast_tensors", "cat", "concat",
           "concatenate", "stack", "hstack", "vstack", "split", "chunk", "unbind", "flip",
           "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk",
           "as_strided",
           "fliplr", "flipud", "roll", "repeat", "tile", "to", "clone", "contiguous",
           "sum_to_size", "narrow", "select", "view_as", "reshape_as", "atleast_1d",
           "atleast_2d", "broadcast_shapes", "pad", "meshgrid", "ravel", "tensor_split",
           "hsplit", "vsplit", "dsplit", "column_stack", "row_stack", "dstack", "atleast_3d",
           "rot90", "block_diag", "cartesian_prod", "diagflat", "cross"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ("reshape", "view", "flatten", "unflatten", "transpose", "swapaxes", "swapdims",
           "t", "permute", "movedim", "moveaxis", "squeeze", "unsqueeze", "expand",
           "expand_as", "broadcast_to", "split", "chunk", "unbind", "flip", "fliplr", "flipud",
           "split_with_sizes", "unsafe_split", "unsafe_split_with_sizes", "unsafe_chunk",
           "as_strided",
           "roll", "repeat", "tile", "to", "clone", "contiguous", "sum_to_size", "narrow",
           "select", "view_as", "reshape_as", "ravel", "tensor_split", "hsplit", "vsplit",
           "dsplit", "rot90", "diagflat", "cross", "dim_order", "as_subclass")


def _dims(dims, ndim, unique=False):
    if isinstance(dims, int):
        dims = (dims,)
    out = tuple(_wrap_dim(d, ndim) for d in dims)
    if unique and len(set(out)) != len(out):
        d = next(d for d in out if out.count(d) > 1)
        raise RuntimeError(f"dim {d} appears multiple times in the list of dims")
    return out


def _shape_arg(shape, fn=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = shape[0]
    try:
        return tuple(operator.index(s) for s in shape)
    except TypeError:
        bad = next(s for s in shape if not hasattr(s, "__index__"))
        raise TypeError(f"{fn or 'size'}(): argument 'size' (position 1) must be tuple of ints, "
                        f"but found element of type {type(bad).__name__}") from None


# NOTE [Size validation]
# Every shape-taking function validates its sizes here, before any JAX call, so a bad size
# raises torch's RuntimeError instead of reaching XLA (which aborts the process on a
# shape whose extent overflows). ``_new_size`` is for functions that allocate (creation,
# new_*, random draws), ``_check_extent`` for views (reshape/view/expand) whose result
# may hold no elements. torch's limit: the number of bytes must fit in int64. XLA's is
# stricter for shapes holding a zero: the running product itemsize * d0 * d1 * ... must
# fit in int64 before the zero is reached, so ``ones(0).view(2**31, 2**31, 0)`` (valid in
# torch) is refused with a clear error (docs/differences.md).
_INT64_MAX = 2 ** 63 - 1


def _new_size(size, itemsize, fn=None):
    """The validated shape tuple for a tensor to allocate (``fn`` names the creation
    function where torch's message does)."""
    shape = _shape_arg(size, fn)
    for d in shape:
        if d < 0:
            if fn == "zeros":
                raise RuntimeError("zeros: Dimension size must be non-negative.")
            raise RuntimeError(f"Trying to create tensor with negative dimension {d}: "
                               f"{list(shape)}")
    n = itemsize
    for d in shape:
        n *= d
    if n > _INT64_MAX:
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)}")
    return _check_extent(shape, itemsize)


def _check_extent(shape, itemsize):
    """``shape`` if XLA can represent it (NOTE [Size validation]), else a RuntimeError."""
    n = itemsize
    for d in shape:
        n *= d
        if n > _INT64_MAX:
            raise RuntimeError(
                f"wgrad cannot represent a tensor of shape {list(shape)}: XLA needs the "
                f"product of the sizes before a zero size, in bytes, to fit in int64 "
                f"(a difference from torch, see docs/differences.md)")
    return shape


# ======================================================================================
# Casts, copies, broadcast reduction
# ======================================================================================

def convert(x, dtype):
    """``x`` as ``dtype`` the way torch's CPU kernels convert (NOTE [Float to integer]):
    a complex value's real part to a real dtype; a float truncated to an integer dtype,
    where one outside int32's range (int64's for int64) or NaN becomes that type's
    minimum, and int8/int16 take the low bits of the int32 value, uint8 of the int64."""
    dtype = np.dtype(dtype)
    if x.dtype.kind == "c" and dtype.kind != "c":
        x = jnp.real(x)
    if dtype.kind not in "iu" or x.dtype.kind not in "fV":
        return x.astype(dtype)
    # NOTE [Float to integer]
    # C++ leaves a float outside the target's range undefined; torch's CPU kernels give
    # what x86's truncating conversion does: the "integer indefinite" (the minimum of
    # int32, or of int64 for int64) for NaN, infinities and values out of range, and
    # int8/int16 through int32 (40000.0 -> int16 -25536), uint8 through int64 (-1.0 ->
    # 255, 256.0 -> 0, 5e9 + 7 -> 7). XLA saturates instead (uint8 of -1.0 was 0, of
    # 256.0 255; NaN became 0).
    wide = np.dtype(np.int64) if dtype in (np.int64, np.uint8) else np.dtype(np.int32)
    info = np.iinfo(wide)
    t = jnp.trunc(x.astype(jnp.float64) if x.dtype.itemsize < 8 else x)
    ok = (t >= float(info.min)) & (t < -float(info.min))  # False for NaN
    v = jnp.where(ok, jnp.where(ok, t, 0).astype(wide), jnp.asarray(info.min, wide))
    return v.astype(dtype)


_to = Primitive("to_copy", lambda self, *, dtype: convert(self, dtype),
                node_name="ToCopyBackward0", self=lambda grad: grad)
_clone = Primitive("clone", lambda self: jnp.array(self, copy=True), self=lambda grad: grad)


def to(input, *args, dtype=None, device=None, copy=False, non_blocking=False,
       memory_format=None):
    """Cast to a dtype and/or move to a device (``to(dtype)``, ``to(device)``,
    ``to(other)``, ``to(device, dtype)``)."""
    check_memory_format("to", input.ndim, memory_format)
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, (D.dtype, type)) or (hasattr(a, "kind") and not isinstance(a, str)):
            dtype = a
        else:
            device = a
    out = input
    if dtype is not None:
        dtype = D.check_x64(D.as_dtype(dtype))
        if dtype.np != input._data.dtype:
            if input._data.dtype.kind == "c" and dtype.np.kind != "c":
                warnings.warn("Casting complex values to real discards the imaginary part",
                              UserWarning, stacklevel=2)
            out = _to(out, dtype=dtype.np)
    if device is not None:
        out = _to_device(out, device)
    if copy and out is input:
        out = clone(input)
    return out


_FORMAT_RANK = {"channels_last": 4, "channels_last_3d": 5}


def check_memory_format(fn, ndim, memory_format):
    """torch's errors for a ``memory_format`` argument of ``fn`` that is no memory format,
    or a channels-last one for a tensor of another rank. wgrad keeps no strides: a format
    that passes changes nothing (docs/differences.md)."""
    if memory_format is None:
        return
    name = getattr(memory_format, "_name", None)
    if type(memory_format).__name__ != "memory_format" or name is None:
        raise TypeError(f"{fn}(): argument 'memory_format' must be torch.memory_format, not "
                        f"{type(memory_format).__name__}")
    rank = _FORMAT_RANK.get(name)
    if rank is not None and ndim != rank:
        raise RuntimeError(f"required rank {rank} tensor to use {name} format")


def clone(input, *, memory_format=None):
    check_memory_format("clone", input.ndim, memory_format)
    return _clone(input)


def contiguous(input, memory_format=None):
    """``input`` if its layout is row-major, else a copy (NOTE [Strides without strides])."""
    check_memory_format("contiguous", input.ndim, memory_format)
    return input if is_contiguous(input) else _clone(input)


def _dense_in(shape, strides, inner_first):
    """Whether the layout is dense with its dims nested as ``inner_first`` orders them
    (torch's contiguity rule: sizes of 1 do not count)."""
    if 0 in shape:
        return True
    expect = 1
    for d in inner_first:
        if shape[d] != 1:
            if strides[d] != expect:
                return False
            expect *= shape[d]
    return True


def _stride_order(shape, strides, a, b):
    """1 if dim ``a`` is inside dim ``b`` in memory, -1 if outside, 0 if the strides leave
    it open (a stride 0, or equal strides without a longer ``a``): torch's comparison."""
    sa, sb = strides[a], strides[b]
    if sa == 0 or sb == 0:
        return 0
    if sa == sb:
        return 1 if shape[a] > shape[b] else 0
    return -1 if sb > sa else 1


def dim_order(input, *, ambiguity_check=False):
    """The dims of ``input`` from the outermost in memory to the innermost, read off its
    strides (NOTE [Strides without strides]) by torch's rule: dims the strides do not order
    (size 1, stride 0) keep their place; ``ambiguity_check=True`` raises where the order is
    not unique.

    Example
    -------
    >>> wgrad.ones(2, 3, 4).permute(2, 0, 1).dim_order()
    (1, 2, 0)
    """
    if not isinstance(ambiguity_check, bool):
        raise NotImplementedError("dim_order(ambiguity_check=<memory formats>) is not "
                                  "supported by wgrad")
    shape, strides = tuple(input.shape), input.stride()
    n = len(shape)
    if ambiguity_check and 1 in shape:
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                           "exact one of the given memory formats.")
    flat = _dense_in(shape, strides, range(n - 1, -1, -1))
    last = n == 4 and _dense_in(shape, strides, (1, 3, 2, 0))
    if n > 1 and (flat == last or ambiguity_check) and (1 in shape or 0 in shape) and (
            input._view_meta is not None and input._view_meta.chain):
        # torch's answer reads the strides of dims of size 1 (or of an empty tensor),
        # which wgrad keeps only for a tensor that is no view (NOTE [Strides without
        # strides]: there they are torch's row-major ones)
        raise NotImplementedError("dim_order(): the order of this view depends on strides "
                                  "of its size-1 (or empty) dims, which wgrad does not keep")
    if ambiguity_check and any(strides[k] == strides[k + 1] for k in range(n - 1)):
        raise RuntimeError("The tensor does not have unique dim order, or cannot map to "
                           "exact one of the given memory formats.")
    if n < 2:
        return tuple(range(n))
    if flat != last:
        return tuple(range(n)) if flat else (0, *range(2, n), 1)
    # an insertion sort from the innermost dim that moves a dim only past dims it is
    # known to be inside of
    order = list(range(n - 1, -1, -1))
    for i in range(1, n):
        j = i
        for k in range(i - 1, -1, -1):
            c = _stride_order(shape, strides, order[k], order[j])
            if c > 0:
                order[k], order[j] = order[j], order[k]
                j = k
            elif c < 0:
                break
    if ambiguity_check and any(_stride_order(shape, strides, order[k], order[k + 1]) != -1
                               for k in range(n - 1)):
        raise RuntimeError("The tensor does not have unique dim order.")
    return tuple(order[::-1])


def _sum_to_fwd(self, *, shape):
    """``self`` summed over the dimensions broadcast from ``shape``: a JAX array, or a
    numpy one (NOTE [Host GEMM]'s bias gradient)."""
    lead = self.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, s in enumerate(shape) if s == 1 and self.shape[lead + i] != 1)
    out = self.sum(axis=axes, keepdims=True) if axes else self
    return out.reshape(shape)


_sum_to = Primitive("sum_to_size", _sum_to_fwd,
                    self=lambda grad, self_shape: broadcast_to(grad, self_shape))


def sum_to_size(input, *size):
    """Sum ``input`` down to ``size`` (the inverse of broadcasting)."""
    shape = _shape_arg(size)
    if tuple(input.shape) == shape:
        return input
    if not _expandable(shape, tuple(input.shape)):
        raise RuntimeError(f"size {{{list(shape)}}} is not expandable to size "
                           f"{{{list(input.shape)}}}.")
    return _sum_to(input, shape=shape)


def _expandable(small, big):
    if len(small) > len(big):
        return False
    for s, b in zip(reversed(small), reversed(big)):
        if s != b and s != 1:
            return False
    return True


# ======================================================================================
# Reshapes and permutations
# ======================================================================================

_reshape = Primitive("reshape", lambda self, *, shape, op=None: jnp.reshape(self, shape),
                     node_name="ViewBackward0", view=True, node_name_of=name_by_op(
                         {"unsqueeze": "UnsqueezeBackward0", "squeeze": "SqueezeBackward0",
                          "squeeze.dim": "SqueezeBackward1",
                          "squeeze.dims": "SqueezeBackward2"}),
                     self=lambda grad, self_shape: grad.reshape(self_shape))


def _infer_shape(shape, numel):
    shape = list(shape)
    for i, s in enumerate(shape):
        if s < -1:
            raise RuntimeError(f"invalid shape dimension {s} at index {i} of shape {shape}")
    if shape.count(-1) > 1:
        raise RuntimeError("only one dimension can be inferred")
    if -1 in shape:
        known = 1
        for s in shape:
            if s != -1:
                known *= s
        if known == 0 and numel == 0:
            raise RuntimeError(f"cannot reshape tensor of 0 elements into shape {shape} "
                               f"because the unspecified dimension size -1 can be any value "
                               f"and is ambiguous")
        if known == 0 or numel % known:
            raise RuntimeError(f"shape '{shape}' is invalid for input of size {numel}")
        shape[shape.index(-1)] = numel // known
    n = 1
    for s in shape:
        n *= s
    if n != numel:
        raise RuntimeError(f"shape '{list(shape)}' is invalid for input of size {numel}")
    return tuple(shape)


# a reshape that can't be a view copies first, as torch (NOTE [Strides without strides])
_unsafe_view = Primitive("unsafe_view", lambda self, *, shape: jnp.reshape(self, shape),
                         node_name="UnsafeViewBackward0",
                         self=lambda grad, self_shape: grad.reshape(self_shape))


def reshape(input, *shape):
    shape = _infer_shape(_shape_arg(shape), input.numel())
    if not input.numel():  # NOTE [Size validation]
        _check_extent(shape, input._data.dtype.itemsize)
    if shape == tuple(input.shape):
        return _reshape(input, shape=shape) if input.requires_grad else _alias(input)
    if input._view_meta is not None and not strided_as(input, shape):
        return _unsafe_view(_clone(input), shape=shape)
    return _reshape(input, shape=shape)


# as_strided over the storage's element numbers (NOTE [Strides without strides]): the
# requested elements are gathered from the input's own, so the result is a view for
# autograd as torch's (gradient scattered back); ``index`` names input elements
def _gather_flat(x, index, shape):
    return x.reshape(-1)[np.asarray(index, dtype=np.int64)].reshape(shape)


def _scatter_flat(x, index, shape):
    n = int(np.prod(shape, dtype=np.int64))
    return jnp.zeros((n,), x.dtype).at[np.asarray(index, dtype=np.int64)].add(
        x.reshape(-1)).reshape(shape)


_as_strided = Primitive(
    "as_strided", lambda self, *, index, size: _gather_flat(self, index, size), view=True,
    self=lambda grad, index, self_shape: _as_strided_bw(grad, index=index,
                                                        shape=tuple(self_shape)))
_as_strided_bw = Primitive(
    "as_strided_backward", lambda self, *, index, shape: _scatter_flat(self, index, shape),
    self=lambda grad, index, self_shape: _as_strided(grad, index=index,
                                                     size=tuple(self_shape)))


# elements outside the input's own come from the storage (``rest``, no gradient): not a view
_as_strided_rest = Primitive(
    "as_strided", lambda self, rest, *, index, size: _gather_flat(
        jnp.concatenate([self.reshape(-1), rest]), index, size),
    self=lambda grad, index, self_shape, rest: _as_strided_bw(
        grad, index=index, shape=(int(np.prod(self_shape, dtype=np.int64)) + rest.shape[0],)
    )[:int(np.prod(self_shape, dtype=np.int64))].reshape(self_shape))


def as_strided(input, size, stride, storage_offset=None):
    """A view of ``input``'s storage with the given sizes, strides (in elements) and
    offset, as torch's. Elements outside ``input``'s own are read from the storage; the
    result is then a copy, with gradient to ``input``'s elements (docs/differences.md)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    ids, n = storage_ids(input)
    if storage_offset is None:
        storage_offset = strides_of(input)[1]
    want = np.full(size, storage_offset, dtype=np.int64)
    for k, (sz, st) in enumerate(zip(size, stride)):
        want = want + st * np.arange(sz).reshape((-1,) + (1,) * (len(size) - k - 1))
    if want.size and want.max() >= n:
        isz = input._data.dtype.itemsize
        raise RuntimeError(f"setStorage: sizes {list(size)}, strides {list(stride)}, storage "
                           f"offset {storage_offset}, and itemsize {isz} requiring a storage "
                           f"size of {(int(want.max()) + 1) * isz} are out of bounds for "
                           f"storage of size {n * isz}")
    if ids is None:
        raise RuntimeError("as_strided: wgrad cannot express a strided layout over a tensor "
                           "that reinterprets its storage (real, imag, view_as_real, "
                           "view_as_complex); call it on a contiguous copy")
    pos = np.full(n, -1, dtype=np.int64)
    pos[ids.ravel()] = np.arange(ids.size)
    index = pos[want.ravel()]
    if (index < 0).any():
        outside = np.unique(want.ravel()[index < 0])
        rest = _make(input._view_meta.storage.data.reshape(-1)[outside])
        index[index < 0] = ids.size + np.searchsorted(outside, want.ravel()[index < 0])
        return _as_strided_rest(input, rest, index=tuple(index.tolist()), size=size)
    return _as_strided(input, index=tuple(index.tolist()), size=size)


def _alias(t):
    return link_alias(t, _make(t._data))


_FIELDS = tuple(n for n in _Fields.__slots__ if n != "__weakref__")


def as_subclass(input, cls):
    """``input`` as an instance of ``cls`` (a Tensor subclass): a view of it, attached to
    the graph as torch's ``AliasBackward0`` is (wgrad's node: ``ViewBackward0``).

    Example
    -------
    >>> class Mine(wgrad.Tensor):
    ...     pass
    >>> type(wgrad.ones(2).as_subclass(Mine)).__name__
    'Mine'
    """
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    shape = tuple(input.shape)
    r = _reshape(input, shape=shape) if input.requires_grad else _alias(input)
    if cls is Tensor:
        return r
    out = object.__new__(cls)
    for name in _FIELDS:  # the slots themselves: a pending value stays so in lazy mode
        field = _Fields.__dict__[name]
        field.__set__(out, field.__get__(r))
    storage = r._view_meta.storage
    storage.aliases.append(weakref.ref(out))  # r's own entry goes with r
    return out


def view(input, *shape):
    if len(shape) == 1 and isinstance(shape[0], (D.dtype, type, str)):
        raise NotImplementedError("view(dtype) is not supported by wgrad")
    if input._view_meta is not None and not strided_as(
            input, _infer_shape(_shape_arg(shape), input.numel())):
        raise RuntimeError("view size is not compatible with input tensor's size and stride "
                           "(at least one dimension spans across two contiguous subspaces). "
                           "Use .reshape(...) instead.")
    return reshape(input, *shape)


def view_as(input, other):
    return reshape(input, tuple(other.shape))


reshape_as = view_as


def flatten(input, start_dim=0, end_dim=-1):
    if input.ndim == 0:
        return reshape(input, 1)
    s, e = _wrap_dim(start_dim, input.ndim), _wrap_dim(end_dim, input.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    shp = tuple(input.shape)
    n = 1
    for x in shp[s:e + 1]:
        n *= x
    return reshape(input, shp[:s] + (n,) + shp[e + 1:])


def unflatten(input, dim, sizes):
    d = _wrap_dim(dim, input.ndim)
    shp = tuple(input.shape)
    sizes = tuple(int(s) for s in sizes)
    known = 1
    for s_ in sizes:
        known *= s_ if s_ != -1 else 1
    n = shp[d] if shp else 1
    if (-1 not in sizes and known != n) or (-1 in sizes and (known == 0 or n % known)):
        raise RuntimeError(f"unflatten: Provided sizes {list(sizes)} don't multiply up to the "
                           f"size of dim {dim} ({n}) in the input tensor")
    return reshape(input, shp[:d] + tuple(sizes) + shp[d + 1:])


_permute = Primitive("permute", lambda self, *, dims, op=None: jnp.transpose(self, dims),
                     view=True, node_name_of=name_by_op({"t": "TBackward0",
                                                         "transpose": "TransposeBackward0"}),
                     self=lambda grad, dims: grad.permute(tuple(np.argsort(dims).tolist())))


def permute(input, *dims):
    dims = _dims(_shape_arg(dims), input.ndim)
    if sorted(dims) != list(range(input.ndim)):
        raise RuntimeError("permute(sparse_coo): number of dimensions in the tensor input does "
                           "not match the length of the desired ordering of dimensions i.e. "
                           f"input.dim() = {input.ndim} is not equal to len(dims) = {len(dims)}"
                           if len(dims) != input.ndim else "permute(): duplicate dims are not "
                           "allowed.")
    return _permute(input, dims=dims)


def transpose(input, dim0, dim1):
    return _transpose(input, dim0, dim1, "transpose")


def _transpose(input, dim0, dim1, op):
    n = input.ndim
    if n == 0:
        return input
    d0, d1 = _wrap_dim(dim0, n), _wrap_dim(dim1, n)
    dims = list(range(n))
    dims[d0], dims[d1] = dims[d1], dims[d0]
    return _permute(input, dims=tuple(dims), op=op)


swapaxes = swapdims = transpose


def t(input):
    if input.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is "
                           f"{input.ndim}D")
    return _transpose(input, 0, 1, "t") if input.ndim == 2 else input


def numpy_T(input):
    return _permute(input, dims=tuple(range(input.ndim))[::-1]) if input.ndim > 1 else input


def movedim(input, source, destination):
    src, dst = _dims(source, input.ndim), _dims(destination, input.ndim)
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source "
                           f"({list(_dims(source, 1 << 30))} dims) should contain the same "
                           f"number of dims as destination ({list(_dims(destination, 1 << 30))}"
                           f" dims)")
    for name, ds, raw in (("source", src, source), ("destination", dst, destination)):
        if len(set(ds)) != len(ds):
            raw = [raw] if isinstance(raw, int) else list(raw)
            raise RuntimeError(f"movedim: repeated dim in `{name}` ({raw})")
    if input.ndim == 0:
        return _permute(input, dims=())
    order = [d for d in range(input.ndim) if d not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _permute(input, dims=tuple(order))


moveaxis = movedim


def squeeze(input, dim=None):
    shp = tuple(input.shape)
    if dim is None:
        new = tuple(s for s in shp if s != 1)
        op = "squeeze"
    else:
        ds = _dims(dim, input.ndim, unique=True) if input.ndim else ()
        new = tuple(s for i, s in enumerate(shp) if not (i in ds and s == 1))
        op = "squeeze.dim" if isinstance(dim, int) else "squeeze.dims"
    # dims of size 1 leave the elements' order as it is: always a view
    return _reshape(input, shape=new, op=op)


def unsqueeze(input, dim):
    d = _wrap_dim(dim, input.ndim + 1)
    shp = tuple(input.shape)
    return _reshape(input, shape=shp[:d] + (1,) + shp[d:], op="unsqueeze")


# ======================================================================================
# Broadcasting
# ======================================================================================

_expand = Primitive("expand", lambda self, *, shape: jnp.broadcast_to(self, shape), view=True,
                    self=lambda grad: grad)


def _broadcast(shapes, error):
    """The broadcast shape of ``shapes``; ``error(i, s, out, k)`` words the RuntimeError
    for shape ``i`` (``s``) clashing at dimension ``-k`` with the shape so far."""
    out = []
    for i, s in enumerate(shapes):
        s = tuple(s)
        out = [1] * (len(s) - len(out)) + out
        for k in range(1, len(s) + 1):
            if out[-k] == 1:
                out[-k] = s[-k]
            elif s[-k] not in (1, out[-k]):
                raise RuntimeError(error(i, s, out, k))
    return tuple(out)


def broadcast_shapes(*shapes):
    shapes = [(s,) if isinstance(s, int) else s for s in shapes]  # an int: a 1-D shape
    try:
        return Size(np.broadcast_shapes(*[tuple(s) for s in shapes]))
    except ValueError:
        pass
    # numpy refused: find the clash again for torch's message
    return Size(_broadcast(shapes, lambda i, s, out, k: (
        f"Attempting to broadcast a dimension of length {s[-k]} at {-k}! Mismatching "
        f"argument at index {i} had {s}; but expected shape should be broadcastable to "
        f"{out}")))


def expand(input, *sizes):
    out = expanded_shape(input, _shape_arg(sizes))
    if out == tuple(input.shape):
        return _expand(input, shape=out) if input.requires_grad else _alias(input)
    return _expand(input, shape=out)


def expanded_shape(input, sizes):
    """The shape ``input.expand(sizes)`` has, with torch's errors where it has none."""
    shp = tuple(input.shape)
    if len(sizes) < len(shp):
        raise RuntimeError(f"expand({input.dtype!r}{{{list(shp)}}}, size={list(sizes)}): the "
                           f"number of sizes provided ({len(sizes)}) must be greater or equal "
                           f"to the number of dimensions in the tensor ({len(shp)})")
    lead = len(sizes) - len(shp)
    out = list(sizes)
    for want in sizes:  # NOTE [Size validation]
        if want < -1:
            raise RuntimeError("numel: integer multiplication overflow")
    for i in range(len(sizes) - 1, -1, -1):  # from the last dimension, as torch reports
        want = sizes[i]
        if i < lead:
            if want == -1:
                raise RuntimeError(f"The expanded size of the tensor (-1) isn't allowed in a "
                                   f"leading, non-existing dimension {i}")
            continue
        s = shp[i - lead]
        if want == -1:
            out[i] = s
        elif s != want and s != 1:
            raise RuntimeError(f"The expanded size of the tensor ({want}) must match the "
                               f"existing size ({s}) at non-singleton dimension {i}.  "
                               f"Target sizes: {list(sizes)}.  Tensor sizes: {list(shp)}")
    n = 1
    for d in out:
        n *= d
    if n > _INT64_MAX:
        raise RuntimeError("numel: integer multiplication overflow")
    return _check_extent(tuple(out), input._data.dtype.itemsize)


def expand_as(input, other):
    return expand(input, tuple(other.shape))


def broadcast_to(input, size):
    return expand(input, tuple(size))


def broadcast_tensors(*tensors):
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    shape = _broadcast([t.shape for t in tensors], lambda i, s, out, k: (
        f"The size of tensor a ({out[-k]}) must match the size of tensor b ({s[-k]}) at "
        f"non-singleton dimension {len(out) - k}"))
    # torch's expand_outplace: a tensor of the broadcast shape is returned itself
    return tuple(t if tuple(t.shape) == tuple(shape) else expand(t, shape) for t in tensors)


# ======================================================================================
# Joining and splitting
# ======================================================================================

def _cat_backward(grad, tensors_shape, dim):
    out, start = [], 0
    for shp in tensors_shape:
        if len(shp) == 1 and shp[0] == 0:  # torch skips legacy empty inputs
            out.append(None)
            continue
        out.append(narrow(grad, dim, start, shp[dim]))
        start += shp[dim]
    return out


_cat = Primitive("cat", lambda *tensors, dim: jnp.concatenate(
    [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)] or tensors[:1], axis=dim),
    tensors=_cat_backward)


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("torch.cat(): expected a non-empty list of Tensors")
    ref = next((t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)), tensors[0])
    d = _wrap_dim(dim, ref.ndim)
    dt = result_type(*[t for t in tensors])
    tensors = [t if t.dtype is dt else t.to(dt) for t in tensors]
    for i, t in enumerate(tensors):
        if t.ndim == 1 and t.shape[0] == 0:
            continue
        if t.ndim != ref.ndim:
            raise RuntimeError(f"Tensors must have same number of dimensions: got {ref.ndim} "
                               f"and {t.ndim}")
        for j in range(ref.ndim):
            if j != d and t.shape[j] != ref.shape[j]:
                raise RuntimeError(f"Sizes of tensors must match except in dimension {d}. "
                                   f"Expected size {ref.shape[j]} but got size {t.shape[j]} "
                                   f"for tensor number {i} in the list.")
    return _cat(*tensors, dim=d)


concat = concatenate = cat


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    for i, x in enumerate(tensors[1:], 1):
        if x.shape != tensors[0].shape:
            raise RuntimeError(f"stack expects each tensor to be equal size, but got "
                               f"{list(tensors[0].shape)} at entry 0 and {list(x.shape)} at "
                               f"entry {i}")
    d = _wrap_dim(dim, tensors[0].ndim + 1)
    dt = result_type(*tensors)
    return _stack(*[t if t.dtype is dt else t.to(dt) for t in tensors], dim=d)


# StackBackward0: one node with an edge per tensor, as torch's
_stack = Primitive("stack", lambda *tensors, dim: jnp.stack(tensors, axis=dim),
                   tensors=lambda grad, dim: list(unbind(grad, dim)))


def _tensor_list(tensors, name):
    if isinstance(tensors, Tensor):
        raise TypeError(f"{name}(): argument 'tensors' (position 1) must be tuple of Tensors, "
                        f"not Tensor")
    tensors = list(tensors)
    if not tensors:
        raise RuntimeError(f"{name} expects a non-empty TensorList")
    return tensors


def hstack(tensors):
    tensors = [atleast_1d(x) for x in _tensor_list(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    return cat([atleast_2d(x) for x in _tensor_list(tensors, "vstack")], 0)


row_stack = vstack


def dstack(tensors):
    """Concatenate along the third dim, after ``atleast_3d``."""
    return cat([atleast_3d(x) for x in _tensor_list(tensors, "dstack")], 2)


def column_stack(tensors):
    """Concatenate along the second dim; 0-d and 1-d tensors become columns."""
    tensors = _tensor_list(tensors, "column_stack")
    return hstack([reshape(x, (x.numel(), 1)) if x.ndim <= 1 else x for x in tensors])


def _atleast(tensors, fn):
    if len(tensors) == 1 and isinstance(tensors[0], Tensor):
        return fn(tensors[0])
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tensors[0]
    return tuple(fn(x) for x in tensors)


def atleast_1d(*tensors):
    """Each tensor viewed with at least one dim (one tensor in, one out; else a tuple)."""
    return _atleast(tensors, lambda x: reshape(x, 1) if x.ndim == 0 else x)


def atleast_2d(*tensors):
    """Each tensor viewed with at least two dims, new dims in front."""
    return _atleast(tensors, lambda x: reshape(x, (1,) * (2 - x.ndim) + tuple(x.shape))
                    if x.ndim < 2 else x)


def _to_3d(x):
    if x.ndim == 0:
        return reshape(x, (1, 1, 1))
    if x.ndim == 1:
        return reshape(x, (1, x.shape[0], 1))
    return reshape(x, tuple(x.shape) + (1,)) if x.ndim == 2 else x


def atleast_3d(*tensors):
    """Each tensor viewed with at least three dims: (n,) -> (1, n, 1), (m, n) -> (m, n, 1)."""
    return _atleast(tensors, _to_3d)


def meshgrid(*tensors, indexing=None):
    """Coordinate grids of 0-d/1-d tensors, ``"ij"`` (matrix, the default) or ``"xy"``
    (Cartesian: the first two dims of the grids swapped) indexing; the grids are expanded
    views.

    Example
    -------
    >>> [g.tolist() for g in wgrad.meshgrid(wgrad.tensor([1, 2]), wgrad.tensor([3]),
    ...                                     indexing="ij")]
    [[[1], [2]], [[3], [3]]]
    """
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    if indexing is None:
        warnings.warn("torch.meshgrid: in an upcoming release, it will be required to pass "
                      "the indexing argument.", UserWarning, stacklevel=2)
        indexing = "ij"
    if not tensors:
        raise RuntimeError("meshgrid expects a non-empty TensorList")
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    for x in tensors:
        if x.ndim > 1:
            raise RuntimeError(f"torch.meshgrid: Expected 0D or 1D tensor in the tensor list "
                               f"but got: {x}")
        if x.dtype is not tensors[0].dtype:
            raise RuntimeError("meshgrid expects all tensors to have the same dtype")
    swap = indexing == "xy" and len(tensors) >= 2
    if swap:
        tensors = (tensors[1], tensors[0]) + tuple(tensors[2:])
    shape = tuple(x.numel() for x in tensors)
    n = len(shape)
    grids = [expand(reshape(x, (1,) * i + (-1,) + (1,) * (n - i - 1)), shape)
             for i, x in enumerate(tensors)]
    if swap:
        grids = [grids[1], grids[0]] + grids[2:]
    return tuple(grids)


def cartesian_prod(*tensors):
    """Rows of every combination of the elements of 1-d tensors (``itertools.product``)."""
    for x in tensors:
        if x.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(x.shape)}")
    if len(tensors) == 1:
        return tensors[0]
    grids = meshgrid(*tensors, indexing="ij")
    return stack([reshape(g, -1) for g in grids], 1)


def block_diag(*tensors):
    """A block-diagonal matrix of 0-d, 1-d (one row) and 2-d tensors, zeros elsewhere."""
    for i, x in enumerate(tensors):
        if x.ndim > 2:
            raise RuntimeError(f"torch.block_diag: Input tensors must have 2 or fewer "
                               f"dimensions. Input {i} has {x.ndim} dimensions")
    if not tensors:
        return _make(jnp.zeros((1, 0), D.get_default_dtype().np))
    dt = result_type(*tensors)
    blocks = [atleast_2d(x if x.dtype is dt else x.to(dt)) for x in tensors]
    cols = builtins.sum(b.shape[1] for b in blocks)
    rows, start = [], 0
    for b in blocks:
        n = b.shape[1]
        rows.append(_pad_constant(b, (start, cols - start - n), 0))
        start += n
    return cat(rows, 0)


_slice = Primitive("slice", lambda self, *, dim, start, length: lax.slice_in_dim(
    self, start, start + length, axis=dim), view=True,
    self=lambda grad, self_shape, dim, start: _pad_dim(grad, self_shape, dim, start))


_pad = Primitive("slice_backward", lambda self, *, shape, dim, start: _pad_fwd(
    self, shape, dim, start), self=lambda grad, self_shape, dim, start: narrow(
        grad, dim, start, self_shape[dim]))


def _pad_fwd(x, shape, dim, start):
    widths = [(0, 0)] * x.ndim
    widths[dim] = (start, shape[dim] - start - x.shape[dim])
    return jnp.pad(x, widths)


def _pad_dim(grad, self_shape, dim, start):
    return _pad(grad, shape=tuple(self_shape), dim=dim, start=start)


def narrow(input, dim, start, length):
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= start <= size:
        raise IndexError(f"start out of range (expected to be in range of [{-size}, {size}], "
                         f"but got {start})")
    if length < 0:
        raise RuntimeError("narrow(): length must be non-negative.")
    if start < 0:
        start += size
    if start + length > size:
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return _slice(input, dim=d, start=int(start), length=int(length))


def select(input, dim, index):
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    from .indexing import _FULL, _INT, _index
    # one index call, as x[..., i]: torch's SelectBackward0 node, the index an argument
    return _index(input, (operator.index(index) % size,), key=(_FULL,) * d + (_INT,))


def split(tensor, split_size_or_sections, dim=0):
    """Views of ``tensor`` along ``dim`` in pieces of one size or of the listed sizes;
    with grad mode on they may not be modified in place (NOTE [View creation meta])."""
    return _split(tensor, split_size_or_sections, dim, True)


def split_with_sizes(input, split_sizes, dim=0):
    """``split`` with a list of sizes."""
    return _split(input, list(split_sizes), dim, True)


def unsafe_split(input, split_size, dim=0):
    """``split`` whose views may be modified in place (torch's unsafe_split)."""
    return _split(input, split_size, dim, False)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    """``split_with_sizes`` whose views may be modified in place."""
    return _split(input, list(split_sizes), dim, False)


def unsafe_chunk(input, chunks, dim=0):
    """``chunk`` whose views may be modified in place."""
    return _chunk(input, chunks, dim, False)


def _split(tensor, split_size_or_sections, dim, mark):
    d = _wrap_dim(dim, tensor.ndim)
    size = tensor.shape[d]
    if isinstance(split_size_or_sections, int):
        step = split_size_or_sections
        if step < 0:
            raise RuntimeError(f"split expects split_size be non-negative, but got "
                               f"split_size={step}")
        if step == 0 and size:
            raise RuntimeError(f"split_size can only be 0 if dimension size is 0, but got "
                               f"dimension size of {size}")
        sizes = [builtins.min(step, size - s) for s in range(0, size, step)] if size else [0]
    else:
        sizes = list(split_size_or_sections)
        if sum(sizes) != size:
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to {size} "
                               f"(input tensor's size at dimension {d}), but got "
                               f"split_sizes={sizes}")
    out, start = [], 0
    for s in sizes:
        out.append(narrow(tensor, d, start, s))
        start += s
    if not mark:  # torch's unsafe_* outputs are not tracked as views
        return tuple(_make(v._data, v._grad_fn, v._output_nr) for v in out)
    return _multi_output(out, "Split" if isinstance(split_size_or_sections, int)
                         else "SplitWithSizes")


def _multi_output(views, name):
    """Mark the outputs of a function that returns several views (NOTE [View creation
    meta]): with grad mode on they may not be modified in place."""
    if _grad_state.grad:
        for i, v in enumerate(views):
            set_creation(v, MULTI_OUTPUT, (name, i))
    return tuple(views)


def chunk(input, chunks, dim=0):
    return _chunk(input, chunks, dim, True)


def _chunk(input, chunks, dim, mark):
    if chunks <= 0:
        raise RuntimeError("chunk expects `chunks` to be greater than 0, got: " + str(chunks))
    size = input.shape[_wrap_dim(dim, input.ndim)]
    step = -(-size // chunks) if size else 1
    return _split(input, step, dim, mark)


def unbind(input, dim=0):
    d = _wrap_dim(dim, input.ndim)
    return _multi_output([select(input, d, i) for i in range(input.shape[d])], "Unbind")


def ravel(input):
    """The elements of ``input`` as a 1-d tensor (a view where the layout allows)."""
    return reshape(input, -1)


def tensor_split(input, indices_or_sections, dim=0):
    """Views of ``input`` along ``dim``: ``n`` near-equal pieces (the first ``size % n``
    one longer) for an int, else pieces between the listed indices (Python slicing, so
    they may be empty). A 0-d or 1-d int64 tensor stands for the int or the list.

    Example
    -------
    >>> [p.tolist() for p in wgrad.tensor_split(wgrad.arange(5), [1, 3])]
    [[0], [1, 2], [3, 4]]
    """
    if input.ndim == 0:
        raise RuntimeError("tensor_split expected at least a 1-dimensional tensor, but got a "
                           "tensor with 0 dims")
    ios = indices_or_sections
    if isinstance(ios, Tensor):
        if ios.dtype is not D.int64:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to have "
                               f"dtype of long, but got {ios.dtype.scalar_name}")
        if ios.ndim > 1:
            raise RuntimeError(f"tensor_split expected tensor_indices_or_sections to be a "
                               f"zero-dimensional or one-dimensional tensor, but got a tensor "
                               f"with {ios.ndim} dims")
        ios = ios.item() if ios.ndim == 0 else ios.tolist()
    d = _wrap_dim(dim, input.ndim)
    size = input.shape[d]
    if isinstance(ios, (list, tuple)):
        bounds = [0] + [operator.index(i) for i in ios] + [size]
        bounds = [builtins.min(builtins.max(b + size if b < 0 else b, 0), size)
                  for b in bounds]
    elif isinstance(ios, int):
        if ios <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {ios}")
        q, r = divmod(size, ios)
        bounds = [i * q + builtins.min(i, r) for i in range(ios + 1)]
    else:
        raise TypeError(f"tensor_split(): argument 'indices_or_sections' must be an int, a "
                        f"tuple of ints or a Tensor, not {type(ios).__name__}")
    return tuple(narrow(input, d, lo, builtins.max(hi - lo, 0))
                 for lo, hi in zip(bounds[:-1], bounds[1:]))


def _split_along(name, input, ios, dim, min_ndim):
    if input.ndim < min_ndim:
        raise RuntimeError(f"torch.{name} requires a tensor with at least {min_ndim} "
                           f"dimension, but got a tensor with {input.ndim} dimensions!")
    if isinstance(ios, int):
        size = input.shape[dim]
        if ios == 0 or size % ios:
            raise RuntimeError(f"torch.{name} attempted to split along dimension {dim}, but "
                               f"the size of the dimension {size} is not divisible by the "
                               f"split_size {ios}!")
    return tensor_split(input, ios, dim)


def hsplit(input, indices_or_sections):
    """``tensor_split`` along dim 1 (dim 0 of a 1-d tensor); an int must divide the size."""
    return _split_along("hsplit", input, indices_or_sections, 1 if input.ndim > 1 else 0, 1)


def vsplit(input, indices_or_sections):
    """``tensor_split`` along dim 0 of a tensor of at least 2 dims."""
    return _split_along("vsplit", input, indices_or_sections, 0, 2)


def dsplit(input, indices_or_sections):
    """``tensor_split`` along dim 2 of a tensor of at least 3 dims."""
    return _split_along("dsplit", input, indices_or_sections, 2, 3)


# ======================================================================================
# Reordering and tiling
# ======================================================================================

_flip = Primitive("flip", lambda self, *, dims: jnp.flip(self, dims),
                  self=lambda grad, dims: grad.flip(dims))


def flip(input, dims):
    dims = _dims(dims, input.ndim, unique=True)
    return _flip(input, dims=dims if input.ndim else ())


def fliplr(input):
    return flip(input, (1,))


def flipud(input):
    return flip(input, (0,))


_roll = Primitive("roll", lambda self, *, shifts, dims: jnp.roll(self, shifts, dims),
                  self=lambda grad, shifts, dims: grad.roll(
                      tuple(-s for s in shifts), dims if dims is not None else None))


def roll(input, shifts, dims=None):
    shifts = (shifts,) if isinstance(shifts, int) else tuple(shifts)
    if dims is None:
        if len(shifts) != 1:
            raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, "
                               f"dims:0")
        flat = flatten(input)
        return reshape(_roll(flat, shifts=shifts, dims=(0,)), tuple(input.shape))
    dims = _dims(dims, input.ndim)
    if len(dims) != len(shifts):
        raise RuntimeError(f"shifts and dimensions must align. shifts: {len(shifts)}, dims:"
                           f"{len(dims)}")
    return _roll(input, shifts=shifts, dims=dims)


def _repeat_backward(grad, self_shape, repeats):
    lead = len(repeats) - len(self_shape)
    shape = (1,) * lead + tuple(self_shape)
    split_shape, sum_axes = [], []
    for i, (r, s) in enumerate(zip(repeats, shape)):
        split_shape += [r, s]
        sum_axes.append(2 * i)
    g = grad.reshape(tuple(split_shape)).sum(tuple(sum_axes))
    return g.reshape(tuple(self_shape))


_repeat = Primitive("repeat", lambda self, *, repeats: jnp.tile(self, repeats),
                    self=_repeat_backward)


def _int_args(sizes, fn, arg, pos):
    """Ints given as several arguments or as one sequence (``x.tile(2, 3)``,
    ``x.tile((2, 3))``, ``x.tile(2)``), with torch's TypeError for anything else."""
    if not sizes:
        raise TypeError(f'{fn}() missing 1 required positional arguments: "{arg}"')
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = sizes[0]
    elif len(sizes) == 1 and not hasattr(sizes[0], "__index__"):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be tuple of ints, "
                        f"not {type(sizes[0]).__name__}")
    for i, s in enumerate(sizes):
        if not hasattr(s, "__index__"):
            raise TypeError(f"{fn}(): argument '{arg}' failed to unpack the object at pos "
                            f"{i + 1} with error \"type must be tuple of ints,but got "
                            f"{type(s).__name__}\"")
    return tuple(operator.index(s) for s in sizes)


def repeat(input, *sizes):
    """Tile ``input`` ``sizes[i]`` times along each dim (new leading dims for extra sizes)."""
    sizes = _int_args(sizes, "repeat", "repeats", 1)
    if len(sizes) < input.ndim:
        raise RuntimeError("Number of dimensions of repeat dims can not be smaller than "
                           "number of dimensions of tensor")
    shp = (1,) * (len(sizes) - input.ndim) + tuple(input.shape)
    if builtins.min(sizes, default=0) < 0:
        out = [a * b for a, b in zip(shp, sizes)]
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(out)}: {out}")
    return _repeat(input, repeats=sizes)


def tile(input, *dims):
    """``repeat`` with ``dims`` padded by leading ones to ``input.ndim`` (an int or ints)."""
    dims = _int_args(dims, "tile", "dims", 2)
    if len(dims) < input.ndim:
        dims = (1,) * (input.ndim - len(dims)) + dims
    return repeat(input, dims)


def rot90(input, k=1, dims=(0, 1)):
    """Rotate by ``k`` quarter turns in the plane of ``dims``, from ``dims[0]`` towards
    ``dims[1]``."""
    dims = list(dims)
    if len(dims) != 2:
        raise RuntimeError(f"expected total rotation dims == 2, but got dims = {len(dims)}")
    if input.ndim < 2:
        raise RuntimeError(f"expected total dims >= 2, but got total dims = {input.ndim}")
    d0, d1 = (_wrap_dim(d, input.ndim) for d in dims)
    if d0 == d1:
        raise RuntimeError(f"expected rotation dims to be different, but got dim0 = {dims[0]} "
                           f"and dim1 = {dims[1]}")
    k = operator.index(k) % 4
    if k == 1:
        return transpose(flip(input, d1), d0, d1)
    if k == 2:
        return flip(input, (d0, d1))
    if k == 3:
        return transpose(flip(input, d0), d0, d1)
    return clone(input)


def diagflat(input, offset=0):
    """The flattened ``input`` on the ``offset``-th diagonal of a square matrix."""
    return reshape(input, -1).diag(offset)


# ======================================================================================
# Cross product (torch.cross here; torch.linalg.cross in linear_algebra calls _cross)
# ======================================================================================

_CROSS_WARNING = ("Using torch.cross without specifying the dim arg is deprecated.\nPlease "
                  "either pass the dim explicitly or simply use torch.linalg.cross.\nThe "
                  "default value of dim will change to agree with that of linalg.cross in a "
                  "future release.")


def cross(input, other, dim=None):
    """Cross product of 3-vectors along ``dim``; ``dim=None`` (deprecated, with torch's
    warning) takes the first dim of ``input`` of size 3."""
    if dim is None:
        warnings.warn(_CROSS_WARNING, UserWarning, stacklevel=2)
        dim = next((i for i, n in enumerate(input.shape) if n == 3), None)
        if dim is None:
            raise RuntimeError("no dimension of size 3 in input")
    return _cross(input, other, dim)


def _cross(input, other, dim):
    """torch.linalg.cross's checks and formula (broadcasting over the other dims)."""
    if input.ndim != other.ndim:
        raise RuntimeError("linalg.cross: inputs must have the same number of dimensions.")
    nd = input.ndim
    d = _wrap_dim(dim, nd)
    sa, sb = input.shape[d - nd], other.shape[d - nd]
    if sa != 3 or sb != 3:
        raise RuntimeError(f"linalg.cross: inputs dimension {dim} must have length 3. Got "
                           f"{sa} and {sb}")
    if input.dtype is not other.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{other.dtype.scalar_name}")
    input, other = broadcast_tensors(input, other)
    # (a x b)_i = a_{i+1} b_{i+2} - a_{i+2} b_{i+1}
    return roll(input, -1, d) * roll(other, -2, d) - roll(input, -2, d) * roll(other, -1, d)


# ======================================================================================
# Padding (torch.nn.functional.pad)
# ======================================================================================

_constant_pad = Primitive(
    "constant_pad_nd", lambda self, *, widths, value: lax.pad(
        self, jnp.asarray(value, self.dtype), [(lo, hi, 0) for lo, hi in widths]),
    # negative widths crop, so the adjoint of padding is padding by the negated widths
    self=lambda grad, widths: _constant_pad(grad, widths=tuple((-lo, -hi) for lo, hi in widths),
                                            value=0))

_PAD_MODES = ("constant", "reflect", "replicate", "circular")


def _pad_source(p, n, mode):
    """For each output position along a dim of size ``n`` padded by ``p = (lo, hi)``, the
    input position it copies."""
    pos = np.arange(-p[0], n + p[1])
    if mode == "reflect":
        pos = np.abs(pos)
        return np.where(pos >= n, 2 * (n - 1) - pos, pos)
    if mode == "replicate":
        return np.clip(pos, 0, n - 1)
    # circular: a negative width crops first, and the positive one wraps around what is
    # left (torch's)
    lo, hi = builtins.max(-p[0], 0), n - builtins.max(-p[1], 0)
    return lo + (np.arange(-builtins.max(p[0], 0), hi - lo + builtins.max(p[1], 0))
                 % builtins.max(hi - lo, 1))


def pad(input, pad, mode="constant", value=None):
    """Pad the last ``len(pad) // 2`` dims: ``pad = (left_last, right_last, left_prev,
    ...)``, in ``mode`` ``"constant"`` (with ``value``; negative widths crop), ``"reflect"``,
    ``"replicate"`` or ``"circular"``, as ``torch.nn.functional.pad``.

    Example
    -------
    >>> wgrad.nn.functional.pad(wgrad.tensor([[1., 2., 3.]]), (2, 1), mode="reflect")
    tensor([[3., 2., 1., 2., 3., 2.]])
    """
    pad = tuple(int(p) for p in pad)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    if len(pad) % 2:
        raise RuntimeError("Padding length must be divisible by 2")
    if mode == "constant":
        return _pad_constant(input, pad, 0 if value is None else value)
    if value is not None and value != 0:
        raise RuntimeError(f'Padding mode "{mode}" doesn\'t take in value argument')
    return _pad_by_index(input, pad, mode)


def _pad_constant(input, pad, value):
    k, nd = len(pad) // 2, input.ndim
    if k > nd:
        raise RuntimeError(f"Padding length should be less than or equal to two times the "
                           f"input dimension but got padding length {len(pad)} and input "
                           f"of dimension {nd}")
    widths = [(0, 0)] * nd
    for i in range(k):
        widths[nd - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    for d, (lo, hi) in enumerate(widths):
        if input.shape[d] + lo + hi < 0:
            raise RuntimeError("narrow(): length must be non-negative.")
    if all(w == (0, 0) for w in widths):
        return clone(input)
    return _constant_pad(input, widths=tuple(widths), value=value)


def _pad_by_index(input, pad, mode):
    """reflect / replicate / circular: one gather of the source index of every output
    position along each padded dim."""
    k, nd = len(pad) // 2, input.ndim
    if k not in (1, 2, 3) or nd not in (k + 1, k + 2):
        raise NotImplementedError(
            f"Padding size {len(pad)} is not supported for {nd}D input tensor.\n"
            "Supported combinations for non-constant padding:\n"
            "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
            "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
            "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")
    sources = []
    for d in range(nd - k, nd):
        i = nd - 1 - d
        p, n = (pad[2 * i], pad[2 * i + 1]), input.shape[d]
        _check_pad_width(input, mode, p, n, d, i)
        sources.append(_pad_source(p, n, mode))
    sizes = [input.shape[d] + pad[2 * (nd - 1 - d)] + pad[2 * (nd - 1 - d) + 1]
             for d in range(nd - k, nd)]
    _check_padded_sizes(input, mode, k, sizes)
    from .indexing import _ADV, _FULL, _index
    arrays = tuple(jax.device_put(a) for a in np.ix_(*sources))  # no conversion traced
    return _index(input, arrays, key=(_FULL,) * (nd - k) + (_ADV,) * k)


def _check_padded_sizes(input, mode, k, sizes):
    """torch's errors for padded sizes below 1 (negative widths that crop too much)."""
    if mode == "circular":
        if builtins.min(sizes) < 0:
            raise RuntimeError("Negative padding value is resulting in an empty dimension")
        return
    names = "DHW"[3 - k:]
    if builtins.max(sizes) < 1:
        ins = [f"{c}: {n}" for c, n in zip(names, input.shape[input.ndim - k:])]
        ins = ins[0] if k == 1 else (" ".join(ins[:-1]) + ", " + ins[-1])
        outs = " ".join(f"{c}: {n}" for c, n in zip(names, sizes))
        space = " " if k == 2 and mode == "replicate" else ""
        raise RuntimeError(f"input ({ins}{space}) is too small. Calculated output {outs}")
    if builtins.min(sizes) < 0:
        shape = list(input.shape[:input.ndim - k]) + sizes
        raise RuntimeError(f"Trying to create tensor with negative dimension "
                           f"{builtins.min(sizes)}: {shape}")


def _check_pad_width(input, mode, p, n, d, i):
    if mode == "reflect" and (p[0] >= n or p[1] >= n):
        raise RuntimeError(f"Argument #{4 + 2 * i}: Padding size should be less than the "
                           f"corresponding input dimension, but got: padding ({p[0]}, "
                           f"{p[1]}) at dimension {d} of input {list(input.shape)}")
    if mode == "circular" and (p[0] > n or p[1] > n):
        raise RuntimeError("Padding value causes wrapping around more than once.")
    if mode == "replicate" and n == 0 and (p[0] > 0 or p[1] > 0):
        raise RuntimeError(f"Expected input to have non-zero size at dimension {d}")
