"""Torch's type promotion (dimensioned tensors > zero-dim tensors > Python scalars)."""
import builtins
import math

import jax.numpy as jnp

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


def check_number(d, value, reduced_unchecked=False):
    """torch's check of a number converted to dtype ``d`` (c10's ``checked_convert``): a
    Python int within [-2**63, 2**64) (else pybind11's OverflowError), then within the
    dtype's range, no nan or inf into an integer type, an integer into an unsigned type
    down to ``-max``, which wraps, and no complex number with an imaginary part into a real
    type; ``reduced_unchecked``: float16 and bfloat16 take any value (it rounds to inf)."""
    c = value.__class__
    if c is float or c is int and -2 ** 63 <= value < 2 ** 64:  # the common case, fast
        if d is D.bool or reduced_unchecked and d in (D.float16, D.bfloat16):
            return
        if not _fits(d.to_real() if d.is_complex else d, value):
            overflow(d)
        return
    if hasattr(value, "item"):  # a NumPy scalar or array
        value = value.item()
    if type(value) is int and not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")
    if d is D.bool:
        return
    parts = (value,)
    if isinstance(value, builtins.complex):
        if value.imag and not d.is_complex:
            overflow(d)
        parts = (value.real, value.imag) if d.is_complex else (value.real,)
    if reduced_unchecked and d in (D.float16, D.bfloat16):
        return
    if not builtins.all(_fits(d.to_real(), v) for v in parts):
        overflow(d)


def _fits(d, v):
    if isinstance(v, builtins.bool):
        return True
    lo, hi = _LIMITS.get(d) or _limits(d)
    if lo is None:  # a floating dtype
        if isinstance(v, float) and not math.isfinite(v):
            return True
        return builtins.abs(v) <= hi
    if isinstance(v, float):
        # compared exactly (c10 compares in double, so 2.0**63 passes into int64 and
        # becomes its lowest value there: refused here); False for nan
        return lo <= v <= hi
    if lo == 0 and v < 0:
        return -v <= hi
    return lo <= v <= hi


_LIMITS = {}  # dtype -> (None, finfo max) or (iinfo min, iinfo max): clamp's hot path


def _limits(d):
    if d.is_floating_point:
        got = _LIMITS[d] = (None, float(jnp.finfo(d.np).max))
    else:
        info = jnp.iinfo(d.np)
        got = _LIMITS[d] = (int(info.min), int(info.max))
    return got


def overflow(d):
    raise RuntimeError(f"value cannot be converted to type {_C_TYPE[d.name]} without overflow")


# the C++ type names in torch's conversion errors
_C_TYPE = {"float32": "float", "float64": "double", "float16": "c10::Half",
           "bfloat16": "c10::BFloat16", "int64": "int64_t", "int32": "int", "int16": "int16_t",
           "int8": "int8_t", "uint8": "uint8_t", "uint16": "uint16_t", "uint32": "uint32_t",
           "uint64": "uint64_t", "bool": "bool",
           "complex64": "c10::complex<float>", "complex128": "c10::complex<double>"}
