"""Indexing reads: __getitem__ (basic and advanced), index_select, gather, take_along_dim,
and their scatter-add adjoints."""
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ._primitive import Primitive

__all__ = ["getitem", "nonzero"]

_ADV = "adv"


def _rebuild(key, arrays):
    it = iter(arrays)
    out = []
    for k in key:
        if k == _ADV:
            out.append(next(it))
        elif isinstance(k, tuple) and k and k[0] == "slice":
            out.append(slice(*k[1:]))
        elif k == "ellipsis":
            out.append(Ellipsis)
        else:
            out.append(k)
    return tuple(out)


def _index_fwd(self, indices, *, key):
    return self[_rebuild(key, indices)]


def _index_add_fwd(grad, indices, *, key, shape):
    return jnp.zeros(shape, grad.dtype).at[_rebuild(key, indices)].add(grad)


def _raw(ix):
    return tuple(i._data if isinstance(i, Tensor) else i for i in ix)


_index = Primitive(
    "index", _index_fwd,
    self=lambda grad, indices, key, self_shape: _index_add_zeros(grad, indices, key,
                                                                 self_shape))
_index_add = Primitive(
    "index_put", _index_add_fwd, node_name="IndexPutBackward0",
    grad=lambda grad, indices, key: _index(grad, _raw(indices), key=key))


def _index_add_zeros(grad, indices, key, shape):
    return _index_add(grad, _raw(indices), key=key, shape=tuple(shape))


def _is_tracer(x):
    import jax
    return isinstance(x, jax.core.Tracer)


def _normalize(self, idx):
    """Split an index into a static key and the integer index arrays."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    key, arrays = [], []
    dim = 0
    ndim = self.ndim
    n_specified = sum(1 for i in idx if i is not None and i is not Ellipsis and
                      not (isinstance(i, (Tensor, np.ndarray)) and i.dtype in (D.bool, np.bool_))
                      ) + sum(
        (i.ndim if isinstance(i, (Tensor, np.ndarray)) else 0) for i in idx
        if isinstance(i, (Tensor, np.ndarray)) and i.dtype in (D.bool, np.bool_))
    if n_specified > ndim:
        raise IndexError(f"too many indices for tensor of dimension {ndim}")
    for i in idx:
        if i is None:
            key.append(None)
        elif i is Ellipsis:
            key.append("ellipsis")
            dim = ndim - (n_specified - dim)
        elif isinstance(i, bool):
            key.append(i)
        elif isinstance(i, (int, np.integer)):
            size = self.shape[dim]
            if not -size <= int(i) < size:
                raise IndexError(f"index {int(i)} is out of bounds for dimension {dim} with "
                                 f"size {size}")
            key.append(int(i))
            dim += 1
        elif isinstance(i, slice):
            key.append(("slice", _int_or_none(i.start), _int_or_none(i.stop),
                        _int_or_none(i.step)))
            if i.step is not None and int(i.step) <= 0:
                raise ValueError("step must be greater than zero")
            dim += 1
        else:
            a = i._data if isinstance(i, Tensor) else np.asarray(i)
            if a.dtype == np.bool_:
                if a.shape != tuple(self.shape[dim:dim + a.ndim]):
                    raise IndexError(
                        f"The shape of the mask {list(a.shape)} at index {dim} does not match "
                        f"the shape of the indexed tensor {list(self.shape)}")
                if _is_tracer(a):
                    raise RuntimeError("boolean mask indexing has a data-dependent shape and "
                                       "cannot be traced; use wgrad.where instead")
                for nz in np.nonzero(np.asarray(a)):
                    key.append(_ADV)
                    arrays.append(jnp.asarray(nz))
                dim += a.ndim
                continue
            if a.dtype.kind not in "iu":
                raise IndexError("tensors used as indices must be long, int, byte or bool "
                                 "tensors")
            if not _is_tracer(a) and a.size:
                size = self.shape[dim]
                lo, hi = int(np.min(np.asarray(a))), int(np.max(np.asarray(a)))
                if hi >= size or lo < -size:
                    bad = hi if hi >= size else lo
                    raise IndexError(f"index {bad} is out of bounds for dimension {dim} with "
                                     f"size {size}")
            key.append(_ADV)
            arrays.append(jnp.asarray(a))
            dim += 1
    return tuple(key), tuple(arrays)


def _int_or_none(x):
    return None if x is None else int(x)


def getitem(input, idx):
    """``input[idx]`` with torch's (numpy's) basic and advanced indexing rules."""
    key, arrays = _normalize(input, idx)
    return _index(input, arrays, key=key)


def nonzero(input, *, as_tuple=False):
    """Indices of the nonzero elements (not differentiable)."""
    out = _make(jnp.stack(jnp.nonzero(input._data), axis=1).astype(D.default_int().np))
    if as_tuple:
        return tuple(out[:, i] for i in range(input.ndim)) if input.ndim else (out[:, 0],)
    return out
