"""Closeness and equality tests: ``isclose``, ``allclose``, ``equal``, and the predicates
``is_same_size``, ``is_signed``, ``is_nonzero`` (not differentiable)."""
import functools

import jax.numpy as jnp

from .. import _dtype
from .._tensor import Tensor, _make
from ._lazy_disk import kept

# the host's answers (NOTE [Eager disk cache]: kept on disk, not traced in every process)
_ALL = kept("all", lambda a: a.all())
_ALL_EQUAL = kept("all equal", lambda a, b: (a == b).all())

__all__ = ["isclose", "allclose", "equal", "is_same_size", "is_signed", "is_nonzero"]
METHODS = ("isclose", "allclose", "equal", "is_same_size", "is_signed", "is_nonzero")


def _check_tensor(fn, name, pos, v):
    if not isinstance(v, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, not "
                        f"{type(v).__name__}")


def _isclose(a, b, rtol, atol, equal_nan):
    """torch's rule: equal, or both nan (``equal_nan``), or a finite error within
    ``atol + rtol * |b|``, computed in the inputs' dtype (integers in the default float)."""
    return _CLOSE[bool(equal_nan), not (rtol == 0 and atol == 0)](a._data, b._data, rtol, atol)


def _close(x, y, rtol, atol, *, equal_nan, tolerant):
    close = x == y
    inexact = x.dtype.kind in "fc"
    if equal_nan and inexact:
        close = close | (jnp.isnan(x) & jnp.isnan(y))
    if not tolerant:
        return close
    if not inexact:
        fdt = _dtype.get_default_dtype().np
        x, y = x.astype(fdt), y.astype(fdt)
    allowed = atol + jnp.abs(rtol * y)
    err = jnp.abs(x - y)
    return close | (jnp.isfinite(err) & (err <= allowed))


# kept on disk as an op's program (NOTE [Eager disk cache]; the default float dtype is in
# its key): jnp's own functions are traced and lowered in every process
_CLOSE = {(n, t): kept(f"isclose {n} {t}", functools.partial(_close, equal_nan=n, tolerant=t))
          for n in (False, True) for t in (False, True)}


def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Elementwise ``|input - other| <= atol + rtol * |other|`` (or equal), as a bool tensor.

    Example
    -------
    >>> import wgrad
    >>> wgrad.isclose(wgrad.tensor([1.0, 2.0]), wgrad.tensor([1.0, 2.1]))
    tensor([ True, False])
    """
    _check_tensor("isclose", "input", 1, input)
    _check_tensor("isclose", "other", 2, other)
    if input.dtype != other.dtype:
        raise RuntimeError(f"{input.dtype.scalar_name} did not match {other.dtype.scalar_name}")
    if rtol < 0:
        raise RuntimeError(f"rtol must be greater than or equal to zero, but got {rtol}")
    if atol < 0:
        raise RuntimeError(f"atol must be greater than or equal to zero, but got {atol}")
    _broadcast_check(input.shape, other.shape)
    return _make(_isclose(input, other, rtol, atol, equal_nan))


def _broadcast_check(sa, sb):
    for i in range(1, min(len(sa), len(sb)) + 1):
        p, q = sa[-i], sb[-i]
        if p != q and p != 1 and q != 1:
            raise RuntimeError(f"The size of tensor a ({p}) must match the size of tensor b "
                               f"({q}) at non-singleton dimension {max(len(sa), len(sb)) - i}")


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of ``input`` is close to ``other`` (``isclose`` for all).

    Example
    -------
    >>> import wgrad
    >>> wgrad.allclose(wgrad.ones(2), wgrad.ones(2) + 1e-9)
    True
    """
    _check_tensor("allclose", "input", 1, input)
    _check_tensor("allclose", "other", 2, other)
    return bool(_ALL(isclose(input, other, rtol, atol, equal_nan)._data))


def equal(input, other):
    """True if both tensors have the same shape and elements (nan is never equal).

    Example
    -------
    >>> import wgrad
    >>> wgrad.equal(wgrad.ones(2), wgrad.ones(2)), wgrad.equal(wgrad.ones(2), wgrad.ones(3))
    (True, False)
    """
    _check_tensor("equal", "input", 1, input)
    _check_tensor("equal", "other", 2, other)
    if tuple(input.shape) != tuple(other.shape):
        return False
    return bool(_ALL_EQUAL(input._data, other._data))


def is_same_size(input, other):
    """Whether both tensors have the same shape.

    Example
    -------
    >>> import wgrad
    >>> wgrad.ones(2, 3).is_same_size(wgrad.zeros(2, 3, dtype=wgrad.int64))
    True
    """
    _check_tensor("is_same_size", "input", 1, input)
    _check_tensor("is_same_size", "other", 2, other)
    return tuple(input.shape) == tuple(other.shape)


def is_signed(input):
    """Whether ``input``'s dtype is signed (all but bool and uint8).

    Example
    -------
    >>> import wgrad
    >>> wgrad.tensor([1], dtype=wgrad.uint8).is_signed(), wgrad.ones(1).is_signed()
    (False, True)
    """
    _check_tensor("is_signed", "input", 1, input)
    return input.dtype.is_signed


def is_nonzero(input):
    """Whether the one element of ``input`` is nonzero (``bool(input)`` with torch's error
    for no element or several).

    Example
    -------
    >>> import wgrad
    >>> wgrad.tensor([0.]).is_nonzero(), wgrad.tensor([[2]]).is_nonzero()
    (False, True)
    """
    _check_tensor("is_nonzero", "input", 1, input)
    n = input.numel()
    if n != 1:
        raise RuntimeError("Boolean value of Tensor with no values is ambiguous" if n == 0 else
                           "Boolean value of Tensor with more than one value is ambiguous")
    return bool(input._data.reshape(()) != 0)
