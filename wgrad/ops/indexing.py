"""Indexing family: __getitem__ (basic and advanced), index_select/add/copy/put, gather,
scatter/scatter_add/scatter_reduce, take/put, masked_select/masked_scatter, nonzero, unfold,
sort/topk/kthvalue/median, tril/triu, diag/diag_embed/diagonal, kron; host-side
unique/unique_consecutive/bincount/searchsorted/bucketize.

Every read has a scatter-add adjoint primitive and every write a gather adjoint, each the
other's backward, so gradients of any order stay inside this table.
"""
import collections
import collections.abc
import functools
import warnings

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

from .. import _dtype as D
from .._creation import full, tensor
from .._tensor import Tensor, _make, _wrap_dim
from .._autograd.grad_mode import _state as _grad_state
from .._autograd.graph import Error
from ._lazy_disk import kept
from ._out import no_derivative
from ._primitive import Primitive
from ._promote import result_type
from ._views import is_contiguous
from .shape import as_strided, broadcast_shapes, clone, expand

__all__ = ["getitem", "index_put", "index_select", "index_add", "index_copy", "gather",
           "take_along_dim", "take", "put", "scatter", "scatter_add", "scatter_reduce",
           "index_reduce", "masked_select", "nanmedian", "masked_scatter", "nonzero",
           "nonzero_static", "argwhere", "unfold", "sort", "argsort", "topk", "kthvalue",
           "median", "tril",
           "triu", "diag", "diag_embed", "diagonal", "kron", "unique", "unique_consecutive",
           "bincount", "searchsorted", "bucketize", "repeat_interleave", "index_fill",
           "diagonal_scatter", "select_scatter", "slice_scatter", "unravel_index",
           "as_strided_scatter"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ("index_put", "index_select", "index_add", "index_copy", "gather", "take_along_dim",
           "take", "put", "scatter", "scatter_add", "scatter_reduce", "index_reduce",
           "masked_select", "nanmedian", "masked_scatter", "nonzero", "nonzero_static",
           "argwhere", "unfold",
           "sort", "argsort", "topk", "kthvalue", "median", "tril", "triu", "diag",
           "diag_embed", "diagonal", "kron", "unique", "unique_consecutive", "bincount",
           "repeat_interleave", "index_fill", "diagonal_scatter", "select_scatter",
           "slice_scatter", "as_strided_scatter")

_ADV = "adv"
_INT = "int"  # NOTE [Index values are arguments]
_FULL = ("slice", None, None, None)

sort_result = collections.namedtuple("sort", ["values", "indices"])
topk_result = collections.namedtuple("topk", ["values", "indices"])
kthvalue_result = collections.namedtuple("kthvalue", ["values", "indices"])
median_result = collections.namedtuple("median", ["values", "indices"])
nanmedian_result = collections.namedtuple("nanmedian", ["values", "indices"])


def _raw(x):
    """Index arrays reach formulas as Tensors (jitted kernel) or jax arrays (create_graph)."""
    if isinstance(x, tuple):
        return tuple(_raw(i) for i in x)
    return x._data if isinstance(x, Tensor) else x


def _is_tracer(x):
    return isinstance(x, jax.core.Tracer)


# ======================================================================================
# Keyed indexing: x[key], its scatter-add adjoint, and index_put
# ======================================================================================

def _rebuild(key, arrays):
    it = iter(arrays)
    out = []
    for k in key:
        if k == _ADV or k == _INT:
            out.append(next(it))
        elif isinstance(k, tuple) and k and k[0] == "slice":
            out.append(slice(*k[1:]))
        elif k == "ellipsis":
            out.append(Ellipsis)
        else:
            out.append(k)
    return tuple(out)


def _index_put_fwd(self, indices, values, *, key, accumulate):
    at = self.at[_rebuild(key, indices)]
    return at.add(values) if accumulate else at.set(values)


def _index_prim(name, node_name, node_name_of=None):
    return Primitive(name, lambda self, indices, *, key: self[_rebuild(key, indices)],
                     node_name=node_name, node_name_of=node_name_of,
                     self=lambda grad, indices, key, self_shape: _index_backward(
                         grad, _raw(indices), key=key, shape=tuple(self_shape)))


def _is_view(key):
    """Whether ``x[key]`` is a view (NOTE [Views]): basic indexing; a bool is a 0-d mask,
    advanced indexing (a copy), as torch's."""
    for k in key:
        if k == _ADV or k is True or k is False:
            return False
    return True


def _node_name(akey, shape):
    """torch's name for the node of ``x[key]`` (NOTE [Node names per call]): IndexBackward0
    for advanced indexing; for basic indexing the last of the steps torch takes per index
    element (an integer selects, a slice slices unless it spans its dim, None unsqueezes),
    AliasBackward0 when there is none."""
    key = akey[0][1]
    if not _is_view(key):
        return "IndexBackward0"
    name = "AliasBackward0"
    dim = 0
    for k in key:
        if k is None:
            name = "UnsqueezeBackward0"
        elif k == "ellipsis":
            dim += len(shape) - sum(1 for j in key if j == _INT or isinstance(j, tuple))
        else:
            if k == _INT:
                name = "SelectBackward0"
            elif not (k[1] in (None, 0) and (k[2] is None or k[2] >= shape[dim]) and
                      k[3] in (None, 1)):  # ("slice", start, stop, step)
                name = "SliceBackward0"
            dim += 1
    return name


_index = _index_prim("index", "IndexBackward0",
                     lambda akey, in_meta: _node_name(akey, in_meta[0][0]))
_index.view = _is_view
_index_select = _index_prim("index_select", "IndexSelectBackward0")
_index_backward = Primitive(
    "index_backward",
    lambda grad, indices, *, key, shape: jnp.zeros(shape, grad.dtype).at[
        _rebuild(key, indices)].add(grad),
    grad=lambda grad, indices, key: _index(grad, _raw(indices), key=key))


def _index_put_prim(name, node_name):
    return Primitive(
        name, _index_put_fwd, node_name=node_name,
        self=lambda grad, indices, key, accumulate: grad if accumulate else _index_put(
            grad, _raw(indices), 0.0, key=key, accumulate=False),
        values=lambda grad, indices, key: _index(grad, _raw(indices), key=key))


_index_put = _index_put_prim("index_put", "IndexPutBackward0")
_index_add = _index_put_prim("index_add", "IndexAddBackward0")
_index_copy = _index_put_prim("index_copy", "IndexCopyBackward0")


def _bounds(a, size, dim, err=IndexError):
    if not _is_tracer(a) and np.size(a):
        a = np.asarray(a)
        lo, hi = int(a.min()), int(a.max())
        if hi >= size or lo < -size:
            raise err(f"index {hi if hi >= size else lo} is out of bounds for dimension {dim} "
                      f"with size {size}")


_WARN_LIST_INDEX = (
    "Using a non-tuple sequence for multidimensional indexing is deprecated and will be "
    "changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]. In pytorch 2.9 this will "
    "be interpreted as tensor index, x[torch.tensor(seq)], which will result either in an "
    "error or a different result")


def _normalize(self, idx):
    """Split an index into a static key and the integer index arrays."""
    if isinstance(idx, list) and len(idx) < 32 and any(
            isinstance(i, (list, tuple, Tensor, slice)) or i is None or i is Ellipsis
            for i in idx):
        warnings.warn(_WARN_LIST_INDEX, UserWarning, stacklevel=4)
        idx = tuple(idx)  # torch (as numpy once did): such a list is a tuple of indices
    if not isinstance(idx, tuple):
        idx = (idx,)
    key, arrays = [], []
    ndim = self.ndim
    n_specified = _n_specified(idx, ndim)
    dim = 0
    for i in idx:
        if i is None or isinstance(i, bool):
            key.append(i)
        elif i is Ellipsis:
            key.append("ellipsis")
            dim = ndim - (n_specified - dim)
        elif isinstance(i, slice):
            key.append(_basic_key(self, i, dim))
            dim += 1
        elif isinstance(i, (int, np.integer)):
            key.append(_INT)
            arrays.append(_basic_key(self, i, dim) % self.shape[dim])
            dim += 1
        else:
            a = i._data if isinstance(i, Tensor) else np.asarray(i)
            if a.dtype == np.bool_:
                _add_mask(self, a, dim, key, arrays)
                dim += a.ndim
            else:
                _add_integer_index(self, a, dim, key, arrays)
                dim += 1
    return tuple(key), tuple(arrays)


def _is_mask(i):
    return isinstance(i, (Tensor, np.ndarray)) and i.dtype in (D.bool, np.bool_)


def _n_specified(idx, ndim):
    """How many dimensions of the indexed tensor ``idx`` consumes (IndexError if too many)."""
    n = sum(i.ndim if _is_mask(i) else 1 for i in idx
            if i is not None and i is not Ellipsis and not isinstance(i, bool))
    if n > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    return n


# NOTE [Index values are arguments]
# An integer index (x[t]) is a runtime argument of the indexing kernel, not part of its
# static key: the key holds the marker _INT and the value travels with the index arrays
# (as a Python int, which jax.jit traces as a scalar), so x[t] over many values of t
# compiles once. A 0-d integer index behaves as a Python int in numpy's rules, alone or
# next to advanced indices, so the result is the same. Slices stay static: their bounds
# decide the result's shape.
def _basic_key(self, i, dim):
    """The key entry of an integer or a slice at dimension ``dim``."""
    if isinstance(i, slice):
        if i.step is not None and int(i.step) <= 0:
            raise ValueError("step must be greater than zero")
        return ("slice", _int_or_none(i.start), _int_or_none(i.stop), _int_or_none(i.step))
    size = self.shape[dim]
    if not -size <= int(i) < size:
        raise IndexError(f"index {int(i)} is out of bounds for dimension {dim} with "
                         f"size {size}")
    return int(i)


def _add_mask(self, a, dim, key, arrays):
    """Append a boolean mask's key entries and index arrays (its nonzero positions)."""
    if a.shape != tuple(self.shape[dim:dim + a.ndim]):
        k = next(k for k, n in enumerate(a.shape)
                 if dim + k >= self.ndim or n != self.shape[dim + k])
        raise IndexError(
            f"The shape of the mask {list(a.shape)} at index {k} does not match "
            f"the shape of the indexed tensor {list(self.shape)} at index {dim + k}")
    if _is_tracer(a):
        raise RuntimeError("boolean mask indexing has a data-dependent shape and "
                           "cannot be traced; use wgrad.where instead")
    if a.ndim == 0:  # a 0-d mask adds a dim of size 1 (True) or 0 (False): a copy, as a
        key.append(bool(a))  # Python bool's (_is_view)
        return
    for nz in np.nonzero(np.asarray(a)):
        key.append(_ADV)
        arrays.append(jax.device_put(nz))  # jnp.asarray traced a conversion per shape


def _add_integer_index(self, a, dim, key, arrays):
    if a.dtype.kind not in "iu":
        raise IndexError("tensors used as indices must be long, int, byte or bool "
                         "tensors")
    _bounds(a, self.shape[dim], dim)
    key.append(_ADV)
    arrays.append(jnp.asarray(a))


def _int_or_none(x):
    return None if x is None else int(x)


def getitem(input, idx):
    """``input[idx]`` with torch's (numpy's) basic and advanced indexing rules.

    Example
    -------
    >>> x = wgrad.arange(6.).reshape(2, 3)
    >>> x[1, [0, 2]]
    tensor([3., 5.])
    """
    key, arrays = _normalize(input, idx)
    return _index(input, arrays, key=key)


def _same_dtype(input, values, what="Index put"):
    if values.dtype is not input.dtype:
        raise RuntimeError(f"{what} requires the source and destination dtypes match, got "
                           f"{input.dtype.scalar_name} for the destination and "
                           f"{values.dtype.scalar_name} for the source.")


def _as_tensor(v, like):
    if isinstance(v, Tensor):
        return v
    return tensor(v, dtype=like.dtype)


def index_put(input, indices, values, accumulate=False):
    """Out-of-place ``input[indices] = values`` (``+=`` with ``accumulate=True``).

    Example
    -------
    >>> x = wgrad.zeros(3)
    >>> x.index_put((wgrad.tensor([0, 0]),), wgrad.tensor(1.), accumulate=True)
    tensor([2., 0., 0.])
    """
    indices = tuple(indices)
    if len(indices) > input.ndim:
        raise IndexError(f"too many indices for tensor of dimension {input.ndim} "
                         f"(got {len(indices)})")
    values = _as_tensor(values, input)
    _same_dtype(input, values)
    key, arrays = _normalize(input, tuple(slice(None) if i is None else i for i in indices))
    return _index_put(input, arrays, values, key=key, accumulate=bool(accumulate))


# ======================================================================================
# Indexing along one dim: index_select, index_add, index_copy
# ======================================================================================

def _dim_index(input, dim, index, name):
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise IndexError(f"{name}(): Index is supposed to be a vector")
    a = index._data.reshape(-1)
    if a.dtype.kind not in "iu":
        raise IndexError(f"{name}(): Expected dtype int32/int64 for index")
    if input.ndim and not _is_tracer(a) and a.size:
        host = np.asarray(a)  # its bounds on the host: jnp's min/max traced per shape
        lo, hi = int(host.min()), int(host.max())
        if lo < 0 or hi >= input.shape[d]:
            if name == "index_copy":
                bad = lo if lo < 0 else hi
                raise IndexError(f"index_copy_(): index {bad} is out of bounds for dimension "
                                 f"{d} with size {input.shape[d]}")
            raise IndexError("index out of range in self")
    return d, (_FULL,) * d + (_ADV,), (a,)


def repeat_interleave(input, repeats=None, dim=None, *, output_size=None):
    """Each element of ``input`` repeated ``repeats`` times along ``dim`` (the flattened
    input without one). An int repeats every element alike (torch's composite: unsqueeze,
    expand, clone, view); a tensor of counts selects (IndexSelectBackward0). With only a
    tensor of counts: the indices ``0..n-1``, each repeated as often.

    Example
    -------
    >>> wgrad.repeat_interleave(wgrad.tensor([1, 2]), 2)
    tensor([1, 1, 2, 2])
    """
    if repeats is None:  # repeat_interleave(repeats)
        counts = _counts(input, None)
        return tensor(np.repeat(np.arange(len(counts)), counts), dtype=input.dtype)
    if dim is None:
        input, dim = input.reshape(-1), 0
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if isinstance(repeats, Tensor) and (repeats.ndim > 1 or repeats.numel() != 1):
        counts = _counts(repeats, n, d)
    else:
        r = int(_counts(repeats, None)[0]) if isinstance(repeats, Tensor) else int(repeats)
        if r < 0:
            raise RuntimeError("Repeats must be non-negative")
        counts = None if not isinstance(repeats, Tensor) else np.full(n, r)
    total = int(np.sum(counts)) if counts is not None else n * r
    if output_size is not None and output_size != total:
        raise RuntimeError(f"repeat_interleave: Invalid output_size, expected {total} but got "
                           f"{output_size}")
    if counts is not None:
        idx = tensor(np.repeat(np.arange(n), counts), dtype=D.int64)
        return index_select(input, d, idx)
    shape = tuple(input.shape)
    x = input.unsqueeze(d + 1)
    return x.expand(shape[:d + 1] + (r,) + shape[d + 1:]).clone().view(
        shape[:d] + (shape[d] * r,) + shape[d + 1:])


def _counts(repeats, n, dim=0):
    if repeats.ndim > 1:
        raise RuntimeError("repeats must be 0-dim or 1-dim tensor")
    if repeats.dtype not in (D.int64, D.int32):
        raise NotImplementedError(f'"repeat_interleave_cpu" not implemented for '
                                  f"'{repeats.dtype.scalar_name}'")
    counts = np.asarray(repeats.numpy()).reshape(-1)
    if n is not None and counts.shape[0] != n:
        raise RuntimeError(f"repeats must have the same size as input along dim, but got "
                           f"repeats.size(0) = {counts.shape[0]} and input.size({dim}) = {n}")
    if (counts < 0).any():
        raise RuntimeError("repeats can not be negative")
    return counts


def index_select(input, dim, index):
    """Entries of ``input`` at ``index`` (a vector) along ``dim``.

    Example
    -------
    >>> wgrad.index_select(wgrad.tensor([[1., 2.], [3., 4.]]), 1, wgrad.tensor([1]))
    tensor([[2.],
            [4.]])
    """
    if input.ndim == 0:
        _dim_index(input, dim, index, "index_select")
        return _index_select(input.reshape(1), (index._data.reshape(-1),),
                             key=(_ADV,)).reshape(())
    try:
        d, key, arrays = _dim_index(input, dim, index, "index_select")
    except IndexError as e:
        if "out of bounds" in str(e):
            raise IndexError("index out of range in self") from None
        raise
    return _index_select(input, arrays, key=key)


def _check_source(input, d, index, source, name):
    n = int(np.size(index._data))
    src = tuple(source.shape) if source.ndim else (1,)
    if (src[d] if d < len(src) else 1) != n:
        raise (RuntimeError if name == "index_add_" else IndexError)(
            f"{name}(): Number of indices ({n}) should be equal to source.size(dim)"
            f"{':' if name == 'index_add_' else ''} ({src[d]})"
            f"{f', for dim: {d}' if name == 'index_add_' else ''}")


def index_add(input, dim, index, source, *, alpha=1):
    """``input`` with ``alpha * source`` added at ``index`` along ``dim``.

    Example
    -------
    >>> wgrad.zeros(3).index_add(0, wgrad.tensor([0, 0, 2]), wgrad.tensor([1., 2., 3.]))
    tensor([3., 0., 3.])
    """
    if input.ndim == 0:  # torch: a 0-d input is one slot
        _wrap_dim(dim, 0)
        return index_add(input.reshape(1), 0, index, source.reshape(-1),
                         alpha=alpha).reshape(())
    d, key, arrays = _dim_index(input, dim, index, "index_add")
    _check_source(input, d, index, source, "index_add_")
    _same_dtype(input, source, "index_add_():")
    if alpha != 1:
        source = source * alpha
    return _index_add(input, arrays, source, key=key, accumulate=True)


def index_copy(input, dim, index, source):
    """``input`` with the slices of ``source`` copied to ``index`` along ``dim``."""
    if input.ndim == 0:  # torch: a 0-d input is one slot
        _wrap_dim(dim, 0)
        return index_copy(input.reshape(1), 0, index, source.reshape(-1)).reshape(())
    d, key, arrays = _dim_index(input, dim, index, "index_copy")
    _check_source(input, d, index, source, "index_copy_")
    _same_dtype(input, source, "index_copy_():")
    return _index_copy(input, arrays, source, key=key, accumulate=False)


def index_fill(input, dim, index, value):
    """``input`` with the slices at ``index`` along ``dim`` set to ``value`` (a number or
    a 0-d tensor, cast to ``input``'s dtype; differentiable in ``input`` and ``value``).

    Example
    -------
    >>> wgrad.zeros(2, 3).index_fill(1, wgrad.tensor([0, 2]), 1.)
    tensor([[1., 0., 1.],
            [1., 0., 1.]])
    """
    if isinstance(value, Tensor) and value.ndim:
        raise RuntimeError(f"index_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if index.dtype is not D.default_int():
        raise IndexError("index_fill_(): Expected dtype int64 for index.")
    if not input.is_complex() and (isinstance(value, complex) or (
            isinstance(value, Tensor) and value.is_complex())):
        raise RuntimeError("index_fill_(): Converting complex Scalar to non-complex type is "
                           "not supported")
    d = _wrap_dim(dim, input.ndim)
    if index.ndim > 1:
        raise RuntimeError("Index has to be a vector/scalar")
    n = input.shape[d] if input.ndim else 1
    a = index._data.reshape(-1)
    if not _is_tracer(a):
        h = np.asarray(a)
        bad = h[(h >= n) | (h < -n)]
        if bad.size:
            raise IndexError(f"index {bad[0]} is out of bounds for dimension {d} with size {n}")
    shape = [1] * input.ndim
    if input.ndim:
        shape[d] = n
    mask = _make(jnp.zeros(n, bool).at[a].set(True).reshape(shape))
    return input.masked_fill(mask, value)


# ======================================================================================
# gather / scatter: one index entry per output element
# ======================================================================================

def _full_index(index, dim):
    """Index arrays addressing ``index``'s positions, with ``index`` itself along ``dim``."""
    return tuple(index if d == dim else lax.broadcasted_iota(index.dtype, index.shape, d)
                 for d in range(index.ndim))


def _gather_fwd(self, index, *, dim, squeeze=False):
    out = self[_full_index(index, dim)]
    return jnp.squeeze(out, dim) if squeeze else out


def _gather_prim(name, node_name):
    return Primitive(name, _gather_fwd, node_name=node_name,
                     self=lambda grad, index, dim, squeeze, self_shape: _gather_backward(
                         grad.unsqueeze(dim) if squeeze else grad, _raw(index), dim=dim,
                         shape=tuple(self_shape)))


_gather = _gather_prim("gather", "GatherBackward0")
_gather_backward = Primitive(
    "gather_backward",
    lambda grad, index, *, dim, shape: jnp.zeros(shape, grad.dtype).at[
        _full_index(index, dim)].add(grad),
    grad=lambda grad, index, dim: _gather(grad, _raw(index), dim=dim, squeeze=False))


def _scatter_fwd(self, index, src, *, dim, accumulate):
    at = self.at[_full_index(index, dim)]
    return at.add(src) if accumulate else at.set(src)


def _scatter_prim(name, node_name):
    return Primitive(
        name, _scatter_fwd, node_name=node_name,
        self=lambda grad, index, dim, accumulate: grad if accumulate else _scatter(
            grad, _raw(index), 0.0, dim=dim, accumulate=False),
        src=lambda grad, index, dim: _gather(grad, _raw(index), dim=dim, squeeze=False))


_scatter = _scatter_prim("scatter", "ScatterBackward0")
_scatter_value = _scatter_prim("scatter_value", "ScatterBackward1")
_scatter_add = _scatter_prim("scatter_add", "ScatterAddBackward0")


def _check_gather(input, dim, index, src=None, name="gather"):
    if input.ndim == 0 and index.ndim == 0:
        return 0
    d = _wrap_dim(dim, input.ndim)
    if index._data.dtype.kind not in "iu":
        raise RuntimeError(f"{name}(): Expected dtype int64 for index")
    if index.ndim != max(input.ndim, 1) and index.numel():
        raise RuntimeError("Index tensor must have the same number of dimensions as input "
                           "tensor")
    ishp, sshp = list(index.shape), list(input.shape)
    for k in range(index.ndim):
        if k == d:
            continue
        if ishp[k] > sshp[k] or (src is not None and ishp[k] > _size(src, k)):
            if src is None:
                raise RuntimeError(f"Size does not match at dimension {k} expected index "
                                   f"{ishp} to be no larger than self {sshp} apart from "
                                   f"dimension {d}")
            raise RuntimeError(f"Expected index {ishp} to be no larger than self {sshp} apart "
                               f"from dimension {d} and to be no larger size than src "
                               f"{list(src.shape)}")
    if src is not None and ishp and ishp[d] > _size(src, d):
        raise RuntimeError(f"Expected index {ishp} to be no larger than self {sshp} apart "
                           f"from dimension {d} and to be no larger size than src "
                           f"{list(src.shape)}")
    if input.ndim:
        _bounds_nonneg(index._data, sshp[d], d)
    return d


def _bounds_nonneg(a, size, dim):
    """gather/scatter's check: no wrap-around, the first bad index (in order) named."""
    if not _is_tracer(a) and np.size(a):
        a = np.asarray(a).reshape(-1)
        bad = np.flatnonzero((a < 0) | (a >= size))
        if bad.size:
            raise RuntimeError(f"index {int(a[bad[0]])} is out of bounds for dimension {dim} "
                               f"with size {size}")


def _size(t, k):
    return t.shape[k] if k < t.ndim else 1


def _nd(x):
    return x if x.ndim else x.reshape(1)


def gather(input, dim, index, *, sparse_grad=False):
    """``out[i][j] = input[index[i][j]][j]`` (for ``dim=0``), with torch's size rules.

    Example
    -------
    >>> wgrad.gather(wgrad.tensor([[1., 2.], [3., 4.]]), 1, wgrad.tensor([[1], [0]]))
    tensor([[2.],
            [3.]])
    """
    if not index.numel() and index.ndim != max(input.ndim, 1):
        _check_gather(input, dim, index.reshape(-1))  # torch: any empty index goes
        return _make(jnp.zeros(tuple(index.shape), input._data.dtype))
    d = _check_gather(input, dim, index)
    out = _gather(_nd(input), _nd(index)._data, dim=d, squeeze=False)
    return out.reshape(tuple(index.shape)) if index.ndim == 0 else out


def _src_part(src, index):
    """The leading block of ``src`` that ``index`` addresses (torch ignores the rest)."""
    if tuple(src.shape) == tuple(index.shape):
        return src
    return getitem(src, tuple(slice(0, n) for n in index.shape))


def scatter(input, dim, index, src=None, *, value=None, reduce=None):
    """``input`` with ``src`` (a tensor or scalar ``value``) written at ``index`` along
    ``dim``: ``out[index[i][j]][j] = src[i][j]`` for ``dim=0``.

    Example
    -------
    >>> wgrad.zeros(3).scatter(0, wgrad.tensor([2, 0]), wgrad.tensor([1., 2.]))
    tensor([2., 0., 1.])
    """
    if src is None:
        src = value
    if reduce is not None:
        if reduce not in ("add", "multiply"):
            raise RuntimeError(f"reduce argument must be either add or multiply. Got {reduce}")
        if not isinstance(src, Tensor):
            src = _full_like_index(input, index, src)
        if src.dtype is not input.dtype:
            raise RuntimeError("scatter(): Expected self.dtype to be equal to src.dtype")
        _check_gather(input, dim, index, src, "scatter")
        prev, _grad_state.grad = _grad_state.grad, False
        try:  # torch has no derivative for either reduction: its NotImplemented node
            out = scatter_add(input, dim, index, src) if reduce == "add" else \
                scatter_reduce(input, dim, index, src, "prod")
        finally:
            _grad_state.grad = prev
        return no_derivative("scatter", (out,), (input, src))[0]
    if isinstance(src, Tensor):
        d = _check_gather(input, dim, index, src, "scatter")
        _same_dtype(input, src, "scatter():")
        out = _scatter(_nd(input), _nd(index)._data, _nd(_src_part(src, index)), dim=d,
                       accumulate=False)
    else:
        d = _check_gather(input, dim, index, None, "scatter")
        out = _scatter_value(_nd(input), _nd(index)._data, src, dim=d, accumulate=False)
    return out.reshape(()) if input.ndim == 0 else out


def _full_like_index(input, index, v):
    return full(tuple(index.shape), v, dtype=input.dtype)


def scatter_add(input, dim, index, src):
    """``input`` with ``src`` added at ``index`` along ``dim`` (duplicates accumulate).

    Example
    -------
    >>> wgrad.zeros(2).scatter_add(0, wgrad.tensor([1, 1, 0]), wgrad.tensor([1., 2., 3.]))
    tensor([3., 3.])
    """
    d = _check_gather(input, dim, index, src, "scatter_add")
    _same_dtype(input, src, "scatter_add():")
    out = _scatter_add(_nd(input), _nd(index)._data, _nd(_src_part(src, index)), dim=d,
                       accumulate=True)
    return out.reshape(()) if input.ndim == 0 else out


def _minmax_masks(self, index, src, result, dim):
    # torch's scatter_reduce_backward: ties share the gradient evenly, and a self entry
    # equal to the result counts as a tie even when include_self=False
    self_is = (self == result).to(result.dtype)
    src_is = (src == _gather(result, _raw(index), dim=dim, squeeze=False)).to(result.dtype)
    count = _scatter_add(self_is, _raw(index), src_is, dim=dim, accumulate=True)
    return self_is, src_is, count


def _scatter_minmax_self(grad, self, index, src, result, dim, include_self):
    self_is, _, count = _minmax_masks(self, index, src, result, dim)
    g = grad * self_is / count
    return g if include_self else _scatter(g, _raw(index), 0.0, dim=dim, accumulate=False)


def _scatter_minmax_src(grad, self, index, src, result, dim, include_self):
    _, src_is, count = _minmax_masks(self, index, src, result, dim)
    return src_is * _gather(grad / count, _raw(index), dim=dim, squeeze=False)


def _scatter_minmax_fwd(self, index, src, *, dim, reduce, include_self):
    idx = _full_index(index, dim)
    if not include_self:
        fill = -jnp.inf if reduce == "amax" else jnp.inf
        if self.dtype.kind in "iu":
            info = jnp.iinfo(self.dtype)
            fill = info.min if reduce == "amax" else info.max
        self = self.at[idx].set(fill)
    return self.at[idx].max(src) if reduce == "amax" else self.at[idx].min(src)


_scatter_minmax = Primitive("scatter_reduce", _scatter_minmax_fwd,
                            node_name="ScatterReduceBackward0",
                            self=_scatter_minmax_self, src=_scatter_minmax_src)


# NOTE [Scatter product gradient]
# torch's scatter_reduce_backward for "prod": the gradient of self is grad times the
# product of everything else scattered there (a zero self counted as one, so a single zero
# does not wipe its own gradient out); the gradient of a src element is grad * result / src,
# except for a src element that is the only zero of its slot, whose gradient is the product
# of the others. With two or more zeros in one slot every such gradient is zero and its
# derivative is not defined by these formulas: differentiating it again raises, as torch's
# DelayedError (checked on the host only when the formulas run with create_graph; a
# backward kernel never builds a graph).

_ERR_PROD_GRADGRAD = ("{}(): Double backward is unsupported for {} when >1 zeros in {} are "
                      "scattered to the same position in self")


def _scatter_prod_fwd(self, index, src, *, dim, include_self, op="scatter_reduce"):
    idx = _full_index(index, dim)
    if not include_self:
        self = self.at[idx].set(1)
    return self.at[idx].multiply(src)


def _scatter_prod_self(grad, self, index, src, dim, include_self, op):
    masked = self.masked_fill(self == 0, 1)
    g = grad * _scatter_prod(masked, _raw(index), src, dim=dim, include_self=include_self,
                             op=op) / masked
    return g if include_self else _scatter(g, _raw(index), 0.0, dim=dim, accumulate=False)


def _scatter_prod_src(grad, self, index, src, result, dim, include_self, op):
    ix = _raw(index)
    zero = src == 0
    n_zeros = _gather(_scatter_add(self.new_zeros(tuple(self.shape)), ix, zero.to(self.dtype),
                                   dim=dim, accumulate=True), ix, dim=dim, squeeze=False)
    single = zero & (n_zeros == 1)
    others = _scatter_prod(self, ix, src.masked_fill(single, 1), dim=dim,
                           include_self=include_self, op=op)
    g = _gather(grad * others, ix, dim=dim, squeeze=False).where(
        single, _gather(grad * result, ix, dim=dim, squeeze=False) / src.masked_fill(zero, 1))
    if _grad_state.grad and g.requires_grad and not _is_tracer(n_zeros._data) \
            and bool((n_zeros > 1).any()):
        out = _make(g._data)
        what = "src" if op == "scatter_reduce" else "source"
        out._grad_fn = Error(_ERR_PROD_GRADGRAD.format(op, what, what),
                             (g._gradient_edge(),), 1)
        return out
    return g


_scatter_prod = Primitive("scatter_reduce", _scatter_prod_fwd,
                          node_name="ScatterReduceBackward0",
                          self=_scatter_prod_self, src=_scatter_prod_src)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """Reduce the slices of ``source`` along ``dim`` into ``input`` at the positions
    ``index`` with ``reduce`` in ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"``: a
    ``scatter_reduce`` with ``index`` spread over ``source``'s other dimensions.

    Example
    -------
    >>> x = wgrad.zeros(2, 2)
    >>> x.index_reduce(0, wgrad.tensor([1, 1]), wgrad.tensor([[1., 4.], [3., 2.]]), "amax")
    tensor([[0., 0.],
            [3., 4.]])
    """
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise RuntimeError(f"index_reduce(): Expected reduce to be one of prod, mean, amax or "
                           f"amin but got {reduce}.")
    if input.is_complex():  # torch's kernel takes no complex input, whatever the reduction
        raise NotImplementedError(f"\"index_func_\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    d = _wrap_dim(dim, max(source.ndim, 1))
    if index.ndim > 1:
        raise IndexError("index_reduce_(): Index is supposed to be a vector")
    shape = [1] * source.ndim
    if source.ndim:
        shape[d] = -1
    idx = index.reshape(shape).expand(tuple(source.shape)) if source.ndim else index.reshape(())
    return _scatter_reduce(input, d, idx, source, reduce, include_self, "index_reduce")


def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """Reduce ``src`` into ``input`` at ``index`` along ``dim`` with ``reduce`` in
    ``"sum"``, ``"prod"``, ``"mean"``, ``"amax"``, ``"amin"`` (``include_self`` as torch).

    Example
    -------
    >>> x = wgrad.tensor([0., 5.])
    >>> x.scatter_reduce(0, wgrad.tensor([0, 0, 1]), wgrad.tensor([1., 3., 2.]), "amax")
    tensor([3., 5.])
    """
    if reduce not in ("sum", "prod", "mean", "amax", "amin"):
        raise RuntimeError(f"reduce argument must be either sum, prod, mean, amax or amin, "
                           f"got {reduce}")
    return _scatter_reduce(input, dim, index, src, reduce, include_self, "scatter_reduce")


def _scatter_reduce(input, dim, index, src, reduce, include_self, op):
    d = _check_gather(input, dim, index, src, "scatter_reduce")
    _same_dtype(input, src, "scatter_reduce():")
    x, ix, s = _nd(input), _nd(index)._data, _nd(_src_part(src, index))
    if reduce == "prod":  # NOTE [Scatter product gradient]
        if input.is_complex() and _grad_state.grad and (input.requires_grad or
                                                         src.requires_grad):
            raise RuntimeError(f"{op} does not support automatic differentiation for outputs "
                               "with complex dtype.")
        out = _scatter_prod(x, ix, s, dim=d, include_self=bool(include_self), op=op)
    elif reduce in ("amax", "amin"):
        if input.is_complex():
            raise NotImplementedError(f"\"scatter_gather_tensor_cpu_reduce_{reduce}\" not "
                                      f"implemented for '{input.dtype.scalar_name}'")
        out = _scatter_minmax(x, ix, s, dim=d, reduce=reduce, include_self=bool(include_self))
    else:
        base = x if include_self else _scatter(x, ix, 0.0, dim=d, accumulate=False)
        out = _scatter_add(base, ix, s, dim=d, accumulate=True)
        if reduce == "mean":
            ones = jnp.ones(ix.shape, x._data.dtype)
            count = jnp.zeros(x.shape, x._data.dtype).at[_full_index(ix, d)].add(ones)
            count = count + (1 if include_self else 0)
            count = _make(jnp.where(count == 0, 1, count))
            out = out / count if input.dtype.is_floating_point or input.is_complex() \
                else out.div(count, rounding_mode="floor")
    return out.reshape(()) if input.ndim == 0 else out


def take_along_dim(input, indices, dim=None):
    """Values of ``input`` at ``indices`` along ``dim`` (the flattened input if None),
    broadcasting the other dims.

    Example
    -------
    >>> x = wgrad.tensor([[10., 30.], [20., 5.]])
    >>> wgrad.take_along_dim(x, x.argmax(1, keepdim=True), 1)
    tensor([[30.],
            [20.]])
    """
    if dim is None:  # torch: gather on the flattened input (no negative indices)
        return gather(input.reshape(-1), 0, indices.reshape(-1))
    if input.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {input.ndim} dimensions for input, "
                           f"and {indices.ndim} dimensions for indices")
    d = _wrap_dim(dim, input.ndim)
    if input.shape[d]:  # torch takes the indices modulo the size (-1 is the last, 5 of 5 the
        indices = _make(indices._data % input.shape[d])  # first)
    si, sx = list(input.shape), list(indices.shape)
    si[d] = sx[d] = 1
    b = list(broadcast_shapes(si, sx))
    bi, bx = list(b), list(b)
    bi[d], bx[d] = input.shape[d], indices.shape[d]
    x = expand(input, tuple(bi)) if tuple(bi) != tuple(input.shape) else input
    ix = indices if tuple(bx) == tuple(indices.shape) else \
        _make(jnp.broadcast_to(indices._data, tuple(bx)))
    return gather(x, d, ix)


# ======================================================================================
# Flat indexing and masks: take, put, masked_select, masked_scatter, nonzero
# ======================================================================================

def _flat_index(input, index, name):
    n = input.numel()
    a = index._data
    if a.dtype.kind not in "iu":
        raise IndexError(f"{name}(): Expected a long tensor for index, but got "
                         f"{index.dtype.scalar_name}")
    if not _is_tracer(a) and a.size:
        an = np.asarray(a)
        bad = an[(an >= n) | (an < -n)]
        if bad.size:
            raise IndexError(f"out of range: tried to access index {int(bad[0])} on a tensor "
                             f"of {n} elements.")
    return a


def take(input, index):
    """``input.flatten()[index]``, shaped like ``index``.

    Example
    -------
    >>> wgrad.take(wgrad.tensor([[1., 2.], [3., 4.]]), wgrad.tensor([0, 3]))
    tensor([1., 4.])
    """
    a = _flat_index(input, index, "take")
    return _index(input.reshape(-1), (a,), key=(_ADV,))


def put(input, index, source, accumulate=False):
    """Out-of-place ``input.flatten()[index] = source`` (``+=`` with ``accumulate``)."""
    a = _flat_index(input, index, "put_")
    if source.numel() != index.numel():
        raise IndexError(f"put_(): Expected source and index to have the same number of "
                         f"elements, but got source.numel() = {source.numel()}, "
                         f"index.numel() = {index.numel()}")
    _same_dtype(input, source, "put_():")
    out = _index_put(input.reshape(-1), (a.reshape(-1),), source.reshape(-1), key=(_ADV,),
                     accumulate=bool(accumulate))
    return out.reshape(tuple(input.shape))


def _host(t, name):
    if _is_tracer(t._data):
        raise RuntimeError(f"{name}() has a data-dependent output shape and cannot be traced "
                           f"(inside jax.jit or wgrad.compile)")
    return np.asarray(t._data)


def masked_select(input, mask):
    """The entries of ``input`` where the (broadcast) ``mask`` is True, as a 1-D tensor.

    Example
    -------
    >>> x = wgrad.tensor([[1., -2.], [-3., 4.]])
    >>> wgrad.masked_select(x, x > 0)
    tensor([1., 4.])
    """
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_select: expected BoolTensor for mask")
    shape = tuple(broadcast_shapes(input.shape, mask.shape))
    x = expand(input, shape) if tuple(input.shape) != shape else input
    m = np.broadcast_to(_host(mask, "masked_select"), shape)
    if not shape:
        return _index(x.reshape(1), (jax.device_put(np.nonzero(m.reshape(1))[0]),),
                      key=(_ADV,))
    # jax.device_put: jnp.asarray traced a conversion per shape
    return _index(x, tuple(jax.device_put(i) for i in np.nonzero(m)), key=(_ADV,) * len(shape))


def masked_scatter(input, mask, source):
    """``input`` with the True positions of ``mask`` filled, in order, by the leading
    elements of ``source``.

    Example
    -------
    >>> x = wgrad.zeros(3)
    >>> x.masked_scatter(wgrad.tensor([True, False, True]), wgrad.tensor([1., 2., 3.]))
    tensor([1., 0., 2.])
    """
    if mask.dtype is not D.bool:
        raise RuntimeError("masked_scatter_only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype!r}")
    _same_dtype(input, source, "masked_scatter:")
    shape = tuple(broadcast_shapes(input.shape, mask.shape))
    x = expand(input, shape) if tuple(input.shape) != shape else input
    m = np.broadcast_to(_host(mask, "masked_scatter"), shape)
    n = int(m.sum())
    if n > source.numel():
        raise RuntimeError("Number of elements of source < number of ones in mask")
    vals = source.reshape(-1)
    if n != source.numel():
        vals = getitem(vals, slice(0, n))
    if not shape:
        ix = (jax.device_put(np.nonzero(m.reshape(1))[0]),)
        return _index_put(x.reshape(1), ix, vals, key=(_ADV,), accumulate=False).reshape(())
    ix = tuple(jax.device_put(i) for i in np.nonzero(m))
    return _index_put(x, ix, vals, key=(_ADV,) * len(shape), accumulate=False)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements (not differentiable): an ``(n, ndim)`` tensor, or a
    tuple of ``ndim`` vectors with ``as_tuple=True``.

    Example
    -------
    >>> wgrad.nonzero(wgrad.tensor([0., 1., 2.]))
    tensor([[1],
            [2]])
    """
    a = _host(input, "nonzero")
    it = D.default_int().np
    if as_tuple:  # index arrays put from the host: jnp.asarray traced a conversion per shape
        if a.ndim == 0:
            return (_make(jax.device_put(np.zeros((1 if a != 0 else 0,), it))),)
        return tuple(_make(jax.device_put(i.astype(it))) for i in np.nonzero(a))
    return _make(jax.device_put(np.argwhere(a).astype(it)))


def argwhere(input):
    return nonzero(input)


def nonzero_static(input, *, size, fill_value=-1):
    """:func:`nonzero` with a fixed number of rows: the first ``size`` indices, the rows
    past the last nonzero element filled with ``fill_value``.

    Example
    -------
    >>> wgrad.nonzero_static(wgrad.tensor([0., 1., 2., 0.]), size=3)
    tensor([[ 1],
            [ 2],
            [-1]])
    """
    if not isinstance(size, int) or isinstance(size, bool):
        raise TypeError(f"nonzero_static(): argument 'size' must be int, not "
                        f"{type(size).__name__}")
    if size < 0:
        raise RuntimeError("nonzero_static: 'size' must be an non-negative integer")
    a = _host(input, "nonzero_static")
    found = np.argwhere(a)[:size]
    out = np.full((size, a.ndim), fill_value, D.default_int().np)
    out[:len(found)] = found
    return _make(jax.device_put(out))


def unravel_index(indices, shape):
    """The coordinates in a tensor of ``shape`` of the flat (row-major) ``indices``, one
    integer tensor per dim (not differentiable).

    Example
    -------
    >>> wgrad.unravel_index(wgrad.tensor([4, 1]), (3, 2))
    (tensor([2, 0]), tensor([0, 1]))
    """
    if indices.is_complex() or indices.is_floating_point() or indices.dtype is D.bool:
        raise TypeError(f"expected 'indices' to be integer dtype, but got "
                        f"torch.{indices.dtype.name}")
    if not isinstance(shape, (int, collections.abc.Sequence)):
        raise TypeError(f"expected 'shape' to be int or sequence of ints, but got "
                        f"{type(shape)}")
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    for n in shape:
        if not isinstance(n, int):
            raise TypeError(f"expected 'shape' sequence to only contain ints, but got "
                            f"{type(n)}")
    if any(n < 0 for n in shape):
        raise ValueError(f"'shape' cannot have negative values, but got {shape}")
    if 0 in shape and indices.numel():
        raise RuntimeError("ZeroDivisionError")  # torch's integer remainder by 0
    a = indices._data.astype(D.default_int().np)
    xp = jnp if _is_tracer(a) else np  # small integer work: on the host unless traced
    a = xp.asarray(a)
    strides = np.cumprod((1,) + shape[:0:-1])[::-1]
    return tuple(_make(jnp.asarray(xp.floor_divide(a, int(s)) % max(n, 1)))
                 for s, n in zip(strides, shape))


# ======================================================================================
# Host-side ops with data-dependent shapes or integer outputs: unique, bincount, search
# ======================================================================================

def _host_node(aten, node_name, exc=NotImplementedError,
               msg="the derivative for '{}' is not implemented."):
    """A node for an output computed on the host, as torch records one whose derivative is
    not implemented: the output requires grad, its backward raises."""
    def formula(grad):
        raise exc(msg.format(aten))
    return Primitive(aten, lambda self, value: value, jit=False, node_name=node_name,
                     self=formula)


_unique2 = _host_node("_unique2", "Unique2Backward0")
_unique_dim = _host_node("unique_dim", "UniqueDimBackward0")
_unique_consecutive = _host_node("unique_consecutive", "UniqueConsecutiveBackward0")
_bincount = _host_node("bincount", "NotImplemented", RuntimeError,
                       "derivative for aten::{} is not implemented")


def _from_host(a, dt=None):
    """A host array as a tensor (of dtype ``dt``): NumPy casts, JAX takes the array
    (``jnp.asarray`` traced a conversion per shape)."""
    return _make(jax.device_put(np.asarray(a, None if dt is None else dt.np)))


def _groups(rows, consecutive):
    """Sort order (None when consecutive) and group-start flags of the rows of ``rows``."""
    n = rows.shape[0]
    perm = None
    if not consecutive:
        if rows.shape[1] == 1:
            perm = np.argsort(rows[:, 0], kind="stable")
        else:  # rows in lexicographic order: the first column is lexsort's last key
            perm = np.lexsort(rows.T[::-1]) if n else np.arange(0)
        rows = rows[perm]
    new = np.ones(n, bool)
    new[1:] = (rows[1:] != rows[:-1]).any(axis=1)
    return perm, new


def _unique(input, return_inverse, return_counts, dim, consecutive, prims):
    name = "unique_consecutive" if consecutive else "unique"
    if input.is_complex():
        raise NotImplementedError(f'"{name}" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    a = _host(input, name)
    if dim is None:
        rows, axis, inv_shape = a.reshape(-1, 1), 0, a.shape
        a = a.reshape(-1)
    else:
        if a.ndim == 0:
            raise IndexError(f"Dimension specified as {dim} but tensor has no dimensions")
        axis = _wrap_dim(dim, a.ndim)
        if a.size == 0 and a.shape[axis] != 0:
            raise RuntimeError("There are 0 sized dimensions, and they aren't selected, so "
                               "unique cannot be applied")
        rest = int(np.prod(a.shape[:axis] + a.shape[axis + 1:]))
        rows = np.moveaxis(a, axis, 0).reshape(a.shape[axis], rest)
        inv_shape = (a.shape[axis],)
    perm, new = _groups(rows, consecutive)
    starts = np.flatnonzero(new)
    group = np.cumsum(new) - 1
    if perm is not None:
        starts_in = perm[starts]
        inverse = np.empty_like(group)
        inverse[perm] = group
    else:
        starts_in, inverse = starts, group
    values = _from_host(np.take(a, starts_in, axis=axis))
    if _grad_state.grad and (input._requires_grad or input._grad_fn is not None) \
            and input.is_floating_point():
        values = prims[dim is not None](input, values._data)
    if not (return_inverse or return_counts):
        return values
    it = D.default_int()
    out = (values,)
    if return_inverse:
        out += (_from_host(inverse.reshape(inv_shape), it),)
    if return_counts:
        out += (_from_host(np.diff(np.append(starts, rows.shape[0])), it),)
    return out


def unique(input, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of ``input`` (or slices along ``dim``), sorted, with optional
    inverse indices and counts. Computed on the host; not differentiable.

    Example
    -------
    >>> wgrad.unique(wgrad.tensor([3, 1, 3, 2]), return_counts=True)
    (tensor([1, 2, 3]), tensor([1, 1, 2]))
    """
    return _unique(input, return_inverse, return_counts, dim, False,
                   (_unique2, _unique_dim))


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """``input`` with each run of equal consecutive values (or slices along ``dim``)
    collapsed to one, with optional inverse indices and run lengths.

    Example
    -------
    >>> wgrad.unique_consecutive(wgrad.tensor([1, 1, 2, 1]))
    tensor([1, 2, 1])
    """
    return _unique(input, return_inverse, return_counts, dim, True,
                   (_unique_consecutive, _unique_consecutive))


def bincount(input, weights=None, minlength=0):
    """Counts (or summed ``weights``) of each non-negative integer value of the 1-D
    ``input``, over at least ``minlength`` bins.

    Example
    -------
    >>> wgrad.bincount(wgrad.tensor([1, 1, 3]))
    tensor([0, 2, 0, 1])
    """
    dt = input.dtype
    if dt.is_floating_point or dt.is_complex or dt is D.bool:
        raise NotImplementedError(f"\"bincount_cpu\" not implemented for '{dt.scalar_name}'")
    if weights is not None and (weights.ndim != 1 or weights.shape[0] != input.numel()):
        raise RuntimeError("weights should be 1-d and have the same length as input")
    if minlength < 0:
        raise RuntimeError("minlength should be >= 0")
    a = _host(input, "bincount")
    if a.ndim != 1 or (a < 0).any():
        raise RuntimeError("bincount only supports 1-d non-negative integral inputs.")
    it = D.default_int()
    if a.size == 0:
        return _from_host(np.zeros(minlength, it.np))
    if weights is None:
        return _from_host(np.bincount(a, minlength=minlength), it)
    w = _host(weights, "bincount")
    if weights.is_complex():
        warnings.warn("Casting complex values to real discards the imaginary part")
        w = w.real
    out_dt = weights.dtype if weights.dtype in (D.float32, D.float64) else D.float64
    out = _from_host(np.bincount(a, w.astype(np.float64), minlength), out_dt)
    if _grad_state.grad and (weights._requires_grad or weights._grad_fn is not None):
        out = _bincount(weights, out._data)
    return out


def _sizes(shape):
    return "[" + ", ".join(map(str, shape)) + "]"


def _search(seq, v, right, sorter):
    """torch's binary search of each row of ``v`` in the row of ``seq`` (and ``sorter``):
    the first position whose value is >= (right: >) the value; NaNs compare as torch's."""
    lo = np.zeros(v.shape, np.int64)
    hi = np.full(v.shape, seq.shape[1], np.int64)
    rows = np.arange(seq.shape[0])[:, None]
    while True:
        active = lo < hi
        if not active.any():
            return lo
        mid = (lo + hi) // 2
        at = np.minimum(mid, seq.shape[1] - 1)
        if sorter is not None:
            at = sorter[rows, at]
        b = seq[rows, at]
        go_right = ~(b > v) if right else ~(b >= v)
        lo = np.where(active & go_right, mid + 1, lo)
        hi = np.where(active & ~go_right, mid, hi)


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Insertion indices of ``input`` into the last dimension of ``sorted_sequence`` that
    keep it sorted (``right``/``side='right'``: after equal values).

    Example
    -------
    >>> wgrad.searchsorted(wgrad.tensor([1, 3, 3, 5]), wgrad.tensor([3, 6]))
    tensor([1, 4])
    """
    name = "torch.searchsorted(): "
    if side is not None:
        if side not in ("left", "right"):
            raise RuntimeError(f"{name}side can only be 'left' or 'right' but got {side}")
        if right and side == "left":
            raise RuntimeError(f"{name}side and right can't be set to opposites, got side "
                               f"of left while right was True")
        right = side == "right"
    seq = sorted_sequence
    if seq.ndim == 0:
        raise RuntimeError(f"{name}boundaries tensor should have positive dimension, but "
                           f"got 0 dimension")
    scalar = not isinstance(input, Tensor)
    if (scalar or input.ndim == 0) and seq.ndim != 1:
        raise RuntimeError(f"{name}input value can be a scalar only when boundaries tensor "
                           f"dimension is 1, but we got boundaries tensor dim({seq.ndim}) "
                           f"and input value's dim(0) numel(1)")
    if not scalar and seq.ndim != 1 and \
            (seq.ndim != input.ndim or tuple(seq.shape[:-1]) != tuple(input.shape[:-1])):
        raise RuntimeError(f"{name}boundaries tensor should be 1 dimension or the first N-1 "
                           f"dimensions of boundaries tensor and input value tensor must "
                           f"match, but we got boundaries tensor {_sizes(seq.shape)} and "
                           f"input value tensor {_sizes(input.shape)}")
    if sorter is not None:
        if tuple(sorter.shape) != tuple(seq.shape):
            raise RuntimeError(f"{name}boundary and sorter must have the same size, but got "
                               f"boundary tensor {_sizes(seq.shape)}and got sorter tensor "
                               f"{_sizes(sorter.shape)}")
        if sorter.dtype is not D.int64:
            raise RuntimeError(f"{name}sorter must be a tensor of long dtype but got dtype "
                               f"{sorter.dtype.scalar_name}")
    ct = result_type(seq, input)
    if ct.is_complex or ct is D.bool:
        raise NotImplementedError(f"\"searchsorted_out_cpu\" not implemented for "
                                  f"'{ct.scalar_name}'")
    n = seq.shape[-1]
    rows = int(np.prod(seq.shape[:-1]))
    s = _host(seq, "searchsorted").astype(ct.np).reshape(rows, n)
    v = np.asarray(_host(input, "searchsorted") if not scalar else input, ct.np)
    shape = v.shape
    v = v.reshape(rows, v.size if seq.ndim == 1 else shape[-1])
    order = None
    if sorter is not None:
        order = _host(sorter, "searchsorted").reshape(rows, n)
        if ((order < 0) | (order >= n)).any():
            raise RuntimeError(f"{name}sorter index out of range")
    out = _search(s, v, right, order).reshape(shape)
    return _from_host(out, D.int32 if out_int32 else D.default_int())


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The index of the bucket of each element of ``input``, given the sorted 1-D
    ``boundaries`` (``right``: a value equal to a boundary goes to the bucket above).

    Example
    -------
    >>> wgrad.bucketize(wgrad.tensor([0, 3, 6]), wgrad.tensor([1, 3, 5]))
    tensor([0, 1, 3])
    """
    if boundaries.ndim != 1:
        raise RuntimeError(f"boundaries tensor must be 1 dimension, but got "
                           f"dim({boundaries.ndim})")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)


# ======================================================================================
# Sliding windows
# ======================================================================================

def _unfold_index(n_in, size, step):
    n = (n_in - size) // step + 1
    return (np.arange(n)[:, None] * step + np.arange(size)[None, :]).astype(np.int32)


def _unfold_fwd(self, *, dim, size, step):
    ix = _unfold_index(self.shape[dim], size, step)
    out = jnp.take(self, ix, axis=dim)
    return jnp.moveaxis(out, dim + 1, -1)


def _unfold_backward_fwd(grad, *, shape, dim, size, step):
    ix = _unfold_index(shape[dim], size, step)
    g = jnp.moveaxis(grad, -1, dim + 1)
    key = (slice(None),) * dim + (ix,)
    return jnp.zeros(shape, grad.dtype).at[key].add(g)


_unfold = Primitive("unfold", _unfold_fwd,
                    self=lambda grad, self_shape, dim, size, step: _unfold_backward(
                        grad, shape=tuple(self_shape), dim=dim, size=size, step=step))
_unfold_backward = Primitive("unfold_backward", _unfold_backward_fwd,
                             grad=lambda grad, dim, size, step: _unfold(
                                 grad, dim=dim, size=size, step=step))


def unfold(input, dimension, size, step):
    """All windows of length ``size`` along ``dimension`` with stride ``step``, as a new
    last dim (``Tensor.unfold``).

    Example
    -------
    >>> wgrad.arange(5.).unfold(0, 2, 2)
    tensor([[0., 1.],
            [2., 3.]])
    """
    if input.ndim == 0:  # torch: the window dim only
        x = input.reshape(1)
        return unfold(x, _wrap_dim(dimension, 0), size, step).reshape(-1)
    d = _wrap_dim(dimension, input.ndim)
    if size > input.shape[d]:
        raise RuntimeError(f"maximum size for tensor at dimension {d} is {input.shape[d]} but "
                           f"size is {size}")
    if step <= 0:
        raise RuntimeError(f"step is {step} but must be > 0")
    if size < 0:
        raise RuntimeError(f"size is {size} but must be >= 0")
    return _unfold(input, dim=d, size=int(size), step=int(step))


# ======================================================================================
# Sorting and order statistics: values are gathers at non-differentiable indices
# ======================================================================================

_sort_values = _gather_prim("sort", "SortBackward0")
_topk_values = _gather_prim("topk", "TopkBackward0")
_kth_values = _gather_prim("kthvalue", "KthvalueBackward0")
_median_values = _gather_prim("median_dim", "MedianBackward1")
_nanmedian_values = _gather_prim("nanmedian_dim", "NanmedianBackward1")


def _no_complex(input, name):
    """torch's error for complex input: topk's own message, the others' kernel's (median's
    for bool input too)."""
    if input.dtype is D.bool and name.startswith("median"):
        raise NotImplementedError(f"\"{name}\" not implemented for 'Bool'")
    if not input.is_complex():
        return
    if name == "topk":
        raise RuntimeError(" topk does not support complex dtypes on CPU")
    raise NotImplementedError(f'"{name}" not implemented for \'{input.dtype.scalar_name}\'')


def _order(x, dim, descending, start=None, stop=None, nan_first=False, squeezed=False,
           nan_median=False):
    """A stable argsort of ``x`` along ``dim``; its ``[start:stop]`` where given (topk's
    first k, kthvalue's one); ``nan_first``: a slice holding NaN gives its first NaN's
    index instead (median's rule); ``nan_median``: the index of the lower median of each
    slice's numbers (NaNs sort last; an all-NaN slice: its first), nanmedian's;
    ``squeezed``: and that without ``dim`` (a pair)."""
    return _orderer(dim, bool(descending), start, stop, nan_first, squeezed, nan_median)(x)


@functools.lru_cache(maxsize=64)  # NOTE [Bounded caches]
def _orderer(dim, descending, start, stop, nan_first, squeezed, nan_median):
    """``_order``'s computation, kept on disk as an op's program (NOTE [Eager disk
    cache]): jnp's own argsort, slice and NaN selection are traced in every process."""
    def order(x):
        ix = jnp.argsort(x, axis=dim, stable=True, descending=descending)
        if start is not None:
            ix = lax.slice_in_dim(ix, start, stop, axis=dim)
        if nan_first:
            isnan = jnp.isnan(x)
            ix = jnp.where(isnan.any(dim, keepdims=True),
                           jnp.argmax(isnan, dim, keepdims=True).astype(ix.dtype), ix)
        if nan_median:
            k = jnp.sum(~jnp.isnan(x), axis=dim, keepdims=True)
            ix = jnp.take_along_axis(ix, jnp.maximum((k - 1) // 2, 0), axis=dim)
        return (ix, jnp.squeeze(ix, dim)) if squeezed else ix
    return kept(f"argsort {dim} {descending} {start} {stop} {nan_first} {squeezed}"
                + (" nan median" if nan_median else ""), order)


def _index_tensor(a):
    return _make(a.astype(D.default_int().np))


def sort(input, dim=-1, descending=False, stable=False):
    """Sorted values and their indices along ``dim`` (stable for equal values).

    Example
    -------
    >>> wgrad.sort(wgrad.tensor([3., 1., 2.])).values
    tensor([1., 2., 3.])
    """
    if input.is_complex():
        raise RuntimeError(" Sort does not support complex dtypes on CPU")
    if input.ndim == 0:
        return sort_result(_sort_values(input.reshape(1), jnp.zeros((1,), jnp.int32), dim=0,
                                        squeeze=False).reshape(()),
                           _make(jnp.zeros((), D.default_int().np)))
    d = _wrap_dim(dim, input.ndim)
    ix = _order(input._data, d, descending)
    return sort_result(_sort_values(input, ix, dim=d, squeeze=False), _index_tensor(ix))


def argsort(input, dim=-1, descending=False, stable=False):
    return sort(input, dim, descending, stable).indices


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The ``k`` largest (or smallest) values along ``dim`` and their indices.

    Example
    -------
    >>> wgrad.topk(wgrad.tensor([3., 1., 2.]), 2).values
    tensor([3., 2.])
    """
    _no_complex(input, "topk")
    x = input.reshape(1) if input.ndim == 0 else input
    d = _wrap_dim(dim, x.ndim)
    if not 0 <= k <= x.shape[d]:
        raise RuntimeError("selected index k out of range")
    ix = _order(x._data, d, largest, 0, k)
    vals = _topk_values(x, ix, dim=d, squeeze=False)
    if input.ndim == 0:
        return topk_result(vals.reshape(()), _index_tensor(ix.reshape(())))
    return topk_result(vals, _index_tensor(ix))


def _select_kth(input, kth, dim, keepdim, prim, result, descending=False, nan=False):
    """``nan=True``: a slice holding NaN selects its first NaN (median's rule)."""
    x = input.reshape(1) if input.ndim == 0 else input
    d = _wrap_dim(dim, x.ndim)
    squeeze = not keepdim or input.ndim == 0
    ix, out = _order(x._data, d, descending, kth, kth + 1,
                     nan_first=nan and x._data.dtype.kind == "f", squeezed=True)
    vals = prim(x, ix, dim=d, squeeze=squeeze)
    return result(vals, _index_tensor(out if squeeze else ix))


def kthvalue(input, k, dim=-1, keepdim=False):
    """The ``k``-th smallest value along ``dim`` and its index.

    Example
    -------
    >>> wgrad.kthvalue(wgrad.tensor([3., 1., 2.]), 2).values
    tensor(2.)
    """
    _no_complex(input, "kthvalue_cpu")
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    if not 1 <= k <= n:
        raise RuntimeError(f"kthvalue(): selected number k out of range for dimension {d}")
    return _select_kth(input, k - 1, d, keepdim, _kth_values, kthvalue_result)


def _median_fwd(self):
    flat = jnp.sort(self.reshape(-1))  # NaNs sort last; torch's median propagates them
    return jnp.where(flat[-1] != flat[-1], flat[-1], flat[(flat.shape[0] - 1) // 2])


def _median_backward(grad, self, result):
    # torch's evenly_distribute_backward: ties (or the NaNs of a NaN result) share it
    mask = (self == result) | (self.isnan() & result.isnan())
    return grad * mask.to(grad.dtype) / mask.sum().to(grad.dtype)


_median = Primitive("median", _median_fwd, self=_median_backward)


def median(input, dim=None, keepdim=False):
    """The lower median of all values, or (values, indices) along ``dim``.

    Example
    -------
    >>> wgrad.median(wgrad.tensor([4., 1., 3., 2.]))
    tensor(2.)
    """
    _no_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is None:
        if input.numel() == 0:
            return tensor(float("nan"), dtype=input.dtype)
        return _median(input)
    d = _wrap_dim(dim, input.ndim)
    n = input.shape[d] if input.ndim else 1
    return _select_kth(input, (n - 1) // 2, d, keepdim, _median_values, median_result,
                       nan=True)


def _nanmedian_fwd(self):
    flat = jnp.sort(self.reshape(-1))  # NaNs sort last
    k = jnp.sum(~jnp.isnan(flat))
    return flat[jnp.maximum((k - 1) // 2, 0)]  # all NaN: the first, a NaN


_nanmedian = Primitive("nanmedian", _nanmedian_fwd, self=_median_backward)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values that are not NaN (NaN when all are).

    Example
    -------
    >>> wgrad.nanmedian(wgrad.tensor([4., float("nan"), 1., 3.]))
    tensor(3.)
    """
    _no_complex(input, "median_cpu" if dim is None else "median_out")
    if dim is not None:  # the lower median of each slice's values that are not NaN
        x = input.reshape(1) if input.ndim == 0 else input
        d = _wrap_dim(dim, x.ndim)
        ix, squeezed = _order(x._data, d, False, nan_median=True, squeezed=True)
        squeeze = not keepdim or input.ndim == 0
        vals = _nanmedian_values(x, ix, dim=d, squeeze=squeeze)
        return nanmedian_result(vals, _index_tensor(squeezed if squeeze else ix))
    if input.numel() == 0:
        return tensor(float("nan"), dtype=input.dtype)
    return _nanmedian(input)


# ======================================================================================
# Triangles and diagonals
# ======================================================================================

_tril = Primitive("tril", lambda self, *, diagonal: jnp.tril(self, diagonal),
                  self=lambda grad, diagonal: _tril(grad, diagonal=diagonal))
_triu = Primitive("triu", lambda self, *, diagonal: jnp.triu(self, diagonal),
                  self=lambda grad, diagonal: _triu(grad, diagonal=diagonal))


def tril(input, diagonal=0):
    """The lower triangle (``j - i <= diagonal``) of the last two dims, zeros elsewhere.

    Example
    -------
    >>> wgrad.tril(wgrad.ones(2, 2))
    tensor([[1., 0.],
            [1., 1.]])
    """
    if input.ndim < 2:
        raise RuntimeError("tril: input tensor must have at least 2 dimensions")
    return _tril(input, diagonal=int(diagonal))


def triu(input, diagonal=0):
    """The upper triangle (``j - i >= diagonal``) of the last two dims, zeros elsewhere."""
    if input.ndim < 2:
        raise RuntimeError("triu: input tensor must have at least 2 dimensions")
    return _triu(input, diagonal=int(diagonal))


def _diag_rc(shape, offset, dim1, dim2):
    n = max(min(shape[dim1] + min(offset, 0), shape[dim2] - max(offset, 0)), 0)
    return np.arange(n) + max(-offset, 0), np.arange(n) + max(offset, 0)


def _diagonal_fwd(self, *, offset, dim1, dim2):
    return jnp.diagonal(self, offset, dim1, dim2)


def _diagonal_backward_fwd(grad, *, shape, offset, dim1, dim2):
    # build with dim1, dim2 moved last, where x[..., r, c] is the diagonal as jnp returns it
    r, c = _diag_rc(shape, offset, dim1, dim2)
    moved = tuple(s for k, s in enumerate(shape) if k not in (dim1, dim2)) + (
        shape[dim1], shape[dim2])
    out = jnp.zeros(moved, grad.dtype).at[..., r, c].set(grad)
    return jnp.moveaxis(out, (-2, -1), (dim1, dim2))


_diagonal = Primitive(
    "diagonal", _diagonal_fwd, view=True,
    self=lambda grad, self_shape, offset, dim1, dim2: _diagonal_backward(
        grad, shape=tuple(self_shape), offset=offset, dim1=dim1, dim2=dim2))
_diagonal_backward = Primitive(
    "diagonal_backward", _diagonal_backward_fwd,
    grad=lambda grad, offset, dim1, dim2: _diagonal(grad, offset=offset, dim1=dim1,
                                                    dim2=dim2))
_diag_embed = Primitive(
    "diag_embed", _diagonal_backward_fwd,
    grad=lambda grad, offset, dim1, dim2: _diagonal(grad, offset=offset, dim1=dim1,
                                                    dim2=dim2))


def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal (``offset`` above the main one) of the ``(dim1, dim2)`` planes, as a
    new last dim.

    Example
    -------
    >>> wgrad.diagonal(wgrad.tensor([[1., 2.], [3., 4.]]), 1)
    tensor([2.])
    """
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    return _diagonal(input, offset=int(offset), dim1=d1, dim2=d2)


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """Tensors whose ``(dim1, dim2)`` diagonals (``offset``) are ``input``'s last dim.

    Example
    -------
    >>> wgrad.diag_embed(wgrad.tensor([[1., 2.]]))
    tensor([[[1., 0.],
             [0., 2.]]])
    """
    nd = input.ndim + 1
    d1, d2 = _wrap_dim(dim1, nd), _wrap_dim(dim2, nd)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = (input.shape[-1] if input.ndim else 1) + abs(offset)
    rest = iter(tuple(input.shape)[:-1])
    shape = tuple(n if k in (d1, d2) else next(rest) for k in range(nd))
    x = input if input.ndim else input.reshape(1)
    return _diag_embed(x, shape=shape, offset=int(offset), dim1=d1, dim2=d2)


def diag(input, diagonal=0):
    """A square matrix with ``input`` (1-D) on a diagonal, or the diagonal of a matrix.

    Example
    -------
    >>> wgrad.diag(wgrad.tensor([1., 2.]))
    tensor([[1., 0.],
            [0., 2.]])
    """
    if input.ndim == 1:
        return diag_embed(input, diagonal, 0, 1)
    if input.ndim == 2:
        return _diagonal(input, offset=int(diagonal), dim1=0, dim2=1)
    raise RuntimeError(f"diag(): Supports 1D or 2D tensors. Got {input.ndim}D")


def kron(input, other):
    """The Kronecker product: blocks ``input[i, j] * other``.

    Example
    -------
    >>> wgrad.kron(wgrad.tensor([1., 2.]), wgrad.tensor([1., 10.]))
    tensor([ 1., 10.,  2., 20.])
    """
    n = max(input.ndim, other.ndim)
    a = (1,) * (n - input.ndim) + tuple(input.shape)
    b = (1,) * (n - other.ndim) + tuple(other.shape)
    ia = tuple(x for s in a for x in (s, 1))
    ib = tuple(x for s in b for x in (1, s))
    out = input.reshape(ia) * other.reshape(ib)
    return out.reshape(tuple(x * y for x, y in zip(a, b)))


# ======================================================================================
# Scatters into a view: slice_scatter, select_scatter, diagonal_scatter (out-of-place
# writes of ``src`` where the view would be; the gradient of ``src`` is that view of the
# gradient, the gradient of ``input`` the gradient with the view zeroed)
# ======================================================================================

_slice_scatter = _index_put_prim("slice_scatter", "SliceScatterBackward0")
_select_scatter = _index_put_prim("select_scatter", "SelectScatterBackward0")


def _diagonal_scatter_fwd(self, src, *, offset, dim1, dim2):
    r, c = _diag_rc(self.shape, offset, dim1, dim2)
    x = jnp.moveaxis(self, (dim1, dim2), (-2, -1)).at[..., r, c].set(src)
    return jnp.moveaxis(x, (-2, -1), (dim1, dim2))


_diagonal_scatter = Primitive(
    "diagonal_scatter", _diagonal_scatter_fwd,
    self=lambda grad, offset, dim1, dim2: _diagonal_scatter(grad, 0.0, offset=offset,
                                                            dim1=dim1, dim2=dim2),
    src=lambda grad, offset, dim1, dim2: _diagonal(grad, offset=offset, dim1=dim1,
                                                   dim2=dim2))


def _scatter_src(input, src, view_shape):
    """``src`` in ``input``'s dtype, after torch's check of its shape."""
    if tuple(src.shape) != tuple(view_shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(view_shape)}")
    return src if src.dtype is input.dtype else src.to(input.dtype)


def _no_complex_grad(name, input, *others):
    """torch has no complex formulas for slice_scatter and select_scatter (and, at top level,
    embedding, conv_tbc, affine_grid_generator): its error where one would be needed."""
    if input.is_complex() and _grad_state.grad and any(
            t is not None and t.requires_grad for t in (input,) + others):
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs "
                           f"with complex dtype.")


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """``input`` with ``src`` written where ``input``'s slice ``start:end:step`` along
    ``dim`` is (differentiable in both).

    Example
    -------
    >>> wgrad.slice_scatter(wgrad.zeros(2, 4), wgrad.ones(2, 2), 1, step=2)
    tensor([[1., 0., 1., 0.],
            [1., 0., 1., 0.]])
    """
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    sl = slice(_int_or_none(start), _int_or_none(end), int(step))
    shape = list(input.shape)
    shape[d] = len(range(*sl.indices(shape[d])))
    src = _scatter_src(input, src, shape)
    _no_complex_grad("slice_scatter", input, src)
    key = (_FULL,) * d + (_basic_key(input, sl, d),)
    return _slice_scatter(input, (), src, key=key, accumulate=False)


def select_scatter(input, src, dim, index):
    """``input`` with ``src`` written where ``input.select(dim, index)`` is
    (differentiable in both).

    Example
    -------
    >>> wgrad.select_scatter(wgrad.zeros(2, 2), wgrad.ones(2), 0, 1)
    tensor([[0., 0.],
            [1., 1.]])
    """
    if input.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    n, index = input.shape[d], int(index)
    if not -n <= index < n:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(input.shape)} at dimension {d}")
    src = _scatter_src(input, src, input.shape[:d] + input.shape[d + 1:])
    _no_complex_grad("select_scatter", input, src)
    key = (_FULL,) * d + (_INT,)
    return _select_scatter(input, (index % n,), src, key=key, accumulate=False)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """``input`` with ``src`` written where ``input.diagonal(offset, dim1, dim2)`` is
    (differentiable in both).

    Example
    -------
    >>> wgrad.diagonal_scatter(wgrad.zeros(2, 3), wgrad.ones(2), 1)
    tensor([[0., 1., 0.],
            [0., 0., 1.]])
    """
    d1, d2 = _wrap_dim(dim1, input.ndim), _wrap_dim(dim2, input.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    n = len(_diag_rc(input.shape, offset, d1, d2)[0])
    rest = [s for k, s in enumerate(input.shape) if k not in (d1, d2)]
    src = _scatter_src(input, src, rest + [n])
    return _diagonal_scatter(input, src, offset=int(offset), dim1=d1, dim2=d2)


def _wrong_input_gradient(grad):
    raise NotImplementedError(
        "as_strided_scatter: the gradient with respect to input is not implemented, as "
        "torch 2.13's is wrong (it keeps the gradient where src was written and zeroes the "
        "rest); the gradient with respect to src is torch's")


_input_of_as_strided_scatter = Primitive("as_strided_scatter_input", lambda self: self,
                                         node_name="AsStridedScatterBackward0",
                                         self=_wrong_input_gradient)


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of ``input`` with ``src`` written where ``input.as_strided(size, stride,
    storage_offset)`` is (differentiable in ``src``; ``input`` must be contiguous).

    Example
    -------
    >>> wgrad.as_strided_scatter(wgrad.zeros(2, 2), wgrad.ones(2), (2,), (3,))
    tensor([[1., 0.],
            [0., 1.]])
    """
    if not is_contiguous(input):
        # torch writes through a clone that keeps (some) layouts: its element order
        raise NotImplementedError("as_strided_scatter of a non-contiguous input is not "
                                  "supported by wgrad; call .contiguous() on it first")
    if input.requires_grad and _grad_state.grad:
        input = _input_of_as_strided_scatter(input)
    out = clone(input)
    view = as_strided(out, size, stride, storage_offset)
    if tuple(src.shape) != tuple(view.shape):
        raise RuntimeError(f"expected src to have a size equal to the slice of self. src size "
                           f"= {list(src.shape)}, slice size = {list(view.shape)}")
    view.copy_(src)
    return out
