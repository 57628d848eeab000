"""Torch's type promotion (dimensioned tensors > zero-dim tensors > Python scalars)."""
import builtins

from .. import _dtype as D
from .._tensor import Tensor
from ._lazy import raw as _raw

__all__ = ["result_type", "scalar_dtype", "float_dtype", "as_tensor_arg"]


def scalar_dtype(x):
    """The dtype torch gives a wrapped Python number."""
    if isinstance(x, builtins.bool):
        return D.bool
    if isinstance(x, int):
        return D.default_int()
    if isinstance(x, float):
        return D.get_default_dtype()
    if isinstance(x, complex):
        return D.default_complex()
    raise TypeError(f"expected a Tensor or a Python number, got {type(x).__name__}")


def _combine(higher, lower):
    if higher is None:
        return lower
    if lower is None:
        return higher
    if higher.is_complex:
        return higher
    if lower.is_complex:
        return higher.to_complex() if higher.is_floating_point else lower
    if higher.is_floating_point:
        return higher
    if higher is D.bool or lower.is_floating_point:
        return D.promote_types(higher, lower)
    return higher


_cache = {}


def result_type(*args):
    """torch.result_type over Tensors and Python numbers."""
    if len(args) == 2:  # the binary ops: cached by (dtype, zero-dim) or (scalar type, None)
        a, b = args
        if isinstance(a, Tensor):
            d = _raw(a)  # the slot: an array, or a Pending (NOTE [Lazy segments]): no force
            ka, za = d.dtype, d.shape == ()
        else:
            ka, za = type(a), None
        if isinstance(b, Tensor):
            d = _raw(b)
            kb, zb = d.dtype, d.shape == ()
        else:
            kb, zb = type(b), None
        key = (ka, za, kb, zb, D._default[0])
        r = _cache.get(key)
        if r is None:
            r = _cache[key] = _result_type(args)
        return r
    return _result_type(args)


def _result_type(args):
    dim = zero = wrapped = None
    for a in args:
        if isinstance(a, Tensor):
            raw = _raw(a)  # NOTE [Lazy segments]: metadata only, no force
            d = D.from_np(raw.dtype)
            if raw.ndim:
                dim = d if dim is None else D.promote_types(dim, d)
            else:
                zero = d if zero is None else D.promote_types(zero, d)
        elif a is not None:
            d = scalar_dtype(a)
            wrapped = d if wrapped is None else D.promote_types(wrapped, d)
    return _combine(dim, _combine(zero, wrapped))


def float_dtype(d):
    """``d`` if floating or complex, else the default float dtype (true division etc.)."""
    return d if (d.is_floating_point or d.is_complex) else D.get_default_dtype()


def as_tensor_arg(x, name="input"):
    if isinstance(x, Tensor):
        return x
    raise TypeError(f"{name} must be a Tensor, not {type(x).__name__}")
