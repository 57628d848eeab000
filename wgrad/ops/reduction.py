"""Reductions: sum, mean, prod, amax/amin, max/min, var/std, logsumexp, cumsum, norms."""
import jax.numpy as jnp

from .. import _dtype as D
from .._tensor import _wrap_dim
from ._primitive import Primitive
from .shape import expand, reshape

__all__ = ["sum", "mean"]


def _axes(dim, ndim):
    """Normalize ``dim`` (None, int or sequence) to a sorted tuple, or None for all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    if isinstance(dim, int):
        dim = (dim,)
    return tuple(sorted(_wrap_dim(d, ndim) for d in dim))


def _unreduce(grad, self_shape, dim, keepdim):
    """Broadcast a reduced gradient back to ``self_shape``."""
    if not keepdim and dim is not None:
        shp = list(grad.shape)
        for d in dim:
            shp.insert(d, 1)
        grad = reshape(grad, tuple(shp))
    elif not keepdim:
        grad = reshape(grad, (1,) * len(self_shape))
    return expand(grad, tuple(self_shape))


_sum = Primitive(
    "sum", lambda self, *, dim, keepdim, dtype: jnp.sum(self, axis=dim, keepdims=keepdim,
                                                        dtype=dtype),
    self=lambda grad, self_shape, dim, keepdim: _unreduce(grad, self_shape, dim, keepdim))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all dims by default); bools and ints sum as int64, as torch."""
    if dtype is None:
        d = input.dtype
        dtype = D.default_int() if not (d.is_floating_point or d.is_complex) else d
    else:
        dtype = D.as_dtype(dtype)
    return _sum(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim), dtype=dtype.np)


def _numel_of(shape, dim):
    n = 1
    for i, s in enumerate(shape):
        if dim is None or i in dim:
            n *= s
    return n


_mean = Primitive(
    "mean", lambda self, *, dim, keepdim: jnp.mean(self, axis=dim, keepdims=keepdim),
    self=lambda grad, self_shape, dim, keepdim: _unreduce(
        grad, self_shape, dim, keepdim) / _numel_of(self_shape, dim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        input = input.to(dtype)
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {d.name.capitalize()}")
    return _mean(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim))
