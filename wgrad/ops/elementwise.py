"""Elementwise ops: arithmetic, unary math, complex parts, selection, comparisons.

Every formula follows NOTE [Conjugate Wirtinger convention] in _primitive.py.
"""
import builtins
import collections
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._autograd.grad_mode import _state
from .._autograd.lazy_mode import state as _lazy_state
from .._tensor import Tensor, _make
from ._lazy import raw as _raw
from ._out import _CPP, apply_out, kind as _kind, no_derivative_formula
from ._primitive import Primitive, check_broadcast, device_constant, holomorphic, lazy_fast
from ._promote import check_number, float_dtype, overflow, result_type
from ._views import conj_bits
from .compare import _check_tensor
from .indexing import nonzero
from .shape import transpose

__all__ = [
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "neg", "negative",
    "pow", "reciprocal", "square", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt",
    "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid",
    "relu", "softplus", "erf", "abs", "absolute", "angle", "sgn", "sign", "conj",
    "conj_physical", "resolve_conj", "real", "imag", "complex", "polar", "where", "clamp",
    "clip", "maximum", "minimum", "masked_fill", "eq", "ne", "lt", "le", "gt", "ge",
    "isreal", "isnan", "isinf", "isfinite", "is_complex", "is_floating_point", "floor",
    "ceil", "round", "trunc", "frac", "bitwise_not", "bitwise_and", "bitwise_or",
    "bitwise_xor", "logical_not", "logical_and", "logical_or", "logical_xor", "atan2",
    "hypot", "lerp", "addcmul", "addcdiv", "exp2", "logaddexp", "deg2rad", "rad2deg",
    "view_as_real", "view_as_complex", "is_conj", "is_neg", "resolve_neg", "adjoint",
    "asinh", "acosh", "atanh", "isin", "igamma", "igammac", "signbit", "lgamma", "digamma",
    "polygamma", "erfinv", "erfc", "xlogy", "fmod", "nan_to_num", "logit", "sinc",
    "heaviside", "copysign", "clamp_min", "clamp_max", "float_power", "logaddexp2",
    "positive", "rsub", "fmax", "fmin", "isposinf", "isneginf", "arccos", "arcsin", "arctan",
    "arccosh", "arcsinh", "arctanh", "arctan2", "divide", "multiply", "subtract", "greater",
    "greater_equal", "less", "less_equal", "not_equal", "fix", "gcd", "lcm", "i0", "frexp",
    "ldexp", "nextafter", "mvlgamma", "bitwise_left_shift", "bitwise_right_shift",
]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = (
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "neg", "negative",
    "pow", "reciprocal", "square", "exp", "log", "log2", "log10", "log1p", "expm1", "sqrt",
    "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "sigmoid",
    "relu", "erf", "abs", "absolute", "angle", "sgn", "sign", "conj", "conj_physical",
    "resolve_conj", "clamp", "clip", "maximum", "minimum", "masked_fill", "eq", "ne", "lt",
    "le", "gt", "ge", "isreal", "isnan", "isinf", "isfinite", "floor", "ceil", "round",
    "trunc", "frac", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "logical_not", "logical_and", "logical_or", "logical_xor", "atan2", "hypot", "lerp",
    "addcmul", "addcdiv", "exp2", "logaddexp", "deg2rad", "rad2deg", "is_conj", "is_neg",
    "resolve_neg", "adjoint", "asinh", "acosh", "atanh", "igamma", "igammac", "signbit",
    "lgamma", "digamma", "polygamma", "erfinv", "erfc", "xlogy", "fmod", "nan_to_num",
    "logit", "sinc", "heaviside", "copysign", "clamp_min", "clamp_max", "float_power",
    "logaddexp2", "positive", "fmax", "fmin", "isposinf", "isneginf", "arccos", "arcsin",
    "arctan", "arccosh", "arcsinh", "arctanh", "arctan2", "divide", "multiply", "subtract",
    "greater", "greater_equal", "less", "less_equal", "not_equal", "fix", "gcd", "lcm", "i0",
    "frexp", "ldexp", "nextafter", "mvlgamma", "bitwise_left_shift", "bitwise_right_shift",
)  # real, imag, is_complex, is_floating_point: Tensor's own; where: self is the ``input``

_I = 1j


def _c(x, dtype):
    return jnp.asarray(x, dtype)


def _binary(prim, a, b, result=None, **attrs):
    if _lazy_state.on:  # NOTE [Lazy fast lane]: the call's attribute key, as prim() makes it
        rest = tuple(attrs.items()) if attrs else ()
        res = lazy_fast(prim, (a, b), rest, True) if result is None else \
            lazy_fast(prim, (a, b), (("dtype", result.np),) + rest)
        if res is not None:
            return res
    d = result if result is not None else result_type(a, b)
    return prim(a, b, dtype=d.np, **attrs)


def _unary_float(prim, a, **attrs):
    """Integer inputs compute in the default float dtype, as torch's unary float ops."""
    a = _as_float(a)
    if _lazy_state.on and not attrs:  # NOTE [Lazy fast lane]: no attributes
        res = lazy_fast(prim, (a,), ())
        if res is not None:
            return res
    return prim(a, **attrs)


def _as_float(a):
    if a.__class__ is not Tensor or _raw(a).dtype.kind not in "fc":  # else float or complex
        d = a.dtype
        if not (d.is_floating_point or d.is_complex):
            a = a.to(D.get_default_dtype())
    return a


# ======================================================================================
# Arithmetic
# ======================================================================================

def _add_fwd(self, other, *, dtype, alpha):
    b = _c(other, dtype)
    return _c(self, dtype) + (b if alpha == 1 else alpha * b)  # bool + bool: bool, as torch


_add = Primitive(
    "add", _add_fwd,
    self=lambda grad: grad,
    other=lambda grad, alpha: grad if alpha == 1 else grad * _conj_scalar(alpha))
_sub = Primitive(
    "sub", lambda self, other, *, dtype, alpha: _c(self, dtype) - alpha * _c(other, dtype),
    self=lambda grad: grad,
    other=lambda grad, alpha: grad * -_conj_scalar(alpha))
# rsub(input, other) = other - alpha * input: ``2 - x`` (RsubBackward1, the Scalar overload:
# one edge, NOTE [Node edges]) and torch.rsub of two tensors (RsubBackward0)
_rsub = Primitive(
    "rsub", lambda self, other, *, dtype, alpha: _c(other, dtype) - alpha * _c(self, dtype),
    scalar_overload=True,
    node_name_of=lambda akey, in_meta: "RsubBackward1" if in_meta[1] is None
    else "RsubBackward0",
    self=lambda grad, alpha: grad * -_conj_scalar(alpha),
    other=lambda grad: grad)
_mul = Primitive(
    "mul", lambda self, other, *, dtype: _c(self, dtype) * _c(other, dtype),
    self=holomorphic(lambda other: other),
    other=holomorphic(lambda self: self))


def _c10_complex_div(x, y):
    """``x / y`` for complex64 as torch's CPU kernels compute it: c10::complex's division
    (Smith's scaling) with its multiply-adds fused, the fused ones emulated in float64
    (NOTE [Complex division]); ``x`` and ``y`` broadcast."""
    # NOTE [Complex division]
    # torch divides complex numbers with c10::complex's operator/ (its vectorized kernel
    # stores and calls it): with r = d / c (|c| >= |d|), s = 1 / (c + d r), the quotient
    # of a + bi by c + di is ((a + b r) s, (b - a r) s), and the transposed form for
    # |c| < |d|; both zero give (a / |c|, b / |d|). Its compiler fuses ``c + d r`` and the
    # numerators into fused multiply-adds. XLA divides by another algorithm: 38% of
    # complex64 quotients differed from torch's by an ulp or more. A float32 product is
    # exact in float64, so each fused multiply-add is computed there and rounded (100% of
    # 20,000 random quotients equal torch's). On the CPU only (a GPU's float64 is slow, and
    # torch's CUDA kernels are not its CPU ones); complex128 keeps XLA's division (no
    # wider type to fuse in).
    shape = jnp.broadcast_shapes(x.shape, y.shape)
    x, y = jnp.broadcast_to(x, shape), jnp.broadcast_to(y, shape)
    a, b, c, d = jnp.real(x), jnp.imag(x), jnp.real(y), jnp.imag(y)
    f64 = jnp.float64

    def fma(p, q, r):
        return (p.astype(f64) * q.astype(f64) + r.astype(f64)).astype(p.dtype)

    big = jnp.abs(c) >= jnp.abs(d)
    # the |c| < |d| form is the other with c and d swapped: one ratio and scale for both
    p, q = jnp.where(big, c, d), jnp.where(big, d, c)
    rat = q / p
    scl = 1 / fma(q, rat, p)
    re = jnp.where(big, fma(b, rat, a), fma(a, rat, b)) * scl
    im = jnp.where(big, fma(-a, rat, b), fma(b, rat, -a)) * scl
    zero = (c == 0) & (d == 0)
    re = jnp.where(zero, a / jnp.abs(c), re)
    im = jnp.where(zero, b / jnp.abs(d), im)
    return jax.lax.complex(re, im)


def true_quotient(a, b):
    """``a / b`` for real arrays, a true quotient also where ``b`` broadcasts."""
    shape = jnp.broadcast_shapes(jnp.shape(a), jnp.shape(b))
    if jnp.shape(b) != shape and jnp.issubdtype(b.dtype, jnp.floating):
        # NOTE [Division by a broadcast divisor]
        # XLA rewrites ``a / broadcast(b)`` as ``a * broadcast(1 / b)``: a float32 tensor
        # divided by a number or a smaller tensor then differed from torch's quotient by
        # an ulp in 23% of the elements. The barrier hides the broadcast from that rewrite
        # (the broadcast divisor is materialized: ~40 us per 20,000 float32 on CPU).
        b = jax.lax.optimization_barrier(jnp.broadcast_to(b, shape))
    return a / b


def _true_div(self, other, *, dtype):
    a, b = _c(self, dtype), _c(other, dtype)
    if a.dtype == jnp.complex64 and jax.default_backend() == "cpu":
        return _c10_complex_div(a, b)
    return true_quotient(a, b)


_div = Primitive(
    "div", _true_div,
    self=holomorphic(lambda other: other, divide=True),
    other=holomorphic(lambda self, other: -((self / other) / other)))
# rounding divisions are piecewise constant: zero gradient, as torch (div.Tensor_mode, also
# for a number: torch's parser wraps it)
def _zero_grad(grad):
    """torch's ``zeros_like(grad)`` for piecewise-constant functions: 0 even where ``grad``
    is infinite or NaN (``grad * 0`` would be NaN there), and no graph of its own."""
    return grad.new_zeros(grad.shape)


_div_rounded = Primitive(
    "div", lambda self, other, *, dtype, rounding_mode: _round_div(
        _c(self, dtype), _c(other, dtype), rounding_mode), node_name="DivBackward2",
    self=_zero_grad, other=_zero_grad)
_neg = Primitive("neg", lambda self: -self, self=lambda grad: -grad)


def _conj_scalar(a):
    return a.conjugate() if isinstance(a, builtins.complex) else a


def _round_div(a, b, mode):
    q = a / b
    if mode == "trunc":
        q = jnp.trunc(q)
    else:
        q = jnp.floor_divide(a, b) if jnp.issubdtype(a.dtype, jnp.integer) else jnp.floor(q)
    return q.astype(a.dtype)


def add(input, other, *, alpha=1):
    """``input + alpha * other`` with torch's type promotion."""
    if alpha != 1 or alpha.__class__ is not int:
        alpha = _alpha(result_type(input, other), alpha)
    alpha = _reduced_alpha(input, other, alpha)
    return _binary(_add, input, other, alpha=alpha)


_REDUCED = (D.float16, D.bfloat16)


def _reduced_alpha(input, other, alpha):
    """add/sub/rsub's ``alpha`` rounded to a float16/bfloat16 tensor's dtype, as torch's
    kernels read it (NOTE [Reduced-precision opmath]: the forward computes in float32)."""
    if alpha.__class__ is builtins.int and alpha == 1 or \
            not isinstance(alpha, (builtins.float, builtins.int)) or \
            isinstance(alpha, builtins.bool):
        return alpha
    for t in (input, other):
        if t.__class__ is Tensor and t.dtype in _REDUCED:
            return builtins.float(np.asarray(alpha, t.dtype.np))
    return alpha


def _alpha(d, alpha):
    """``alpha`` of add/sub/rsub checked as torch's ``alpha_check`` and c10's conversion
    into the result dtype ``d`` (1e40 into float32 raises), as a bool for bool results and
    a Python number for a NumPy one (a Scalar to torch: it promotes nothing, and an
    attribute np.float64(2.5) equal to 2.5 would share its cached function)."""
    if isinstance(alpha, np.generic):
        alpha = alpha.item()
    if isinstance(alpha, builtins.bool) and d is not D.bool:
        raise RuntimeError("Boolean alpha only supported for Boolean results.")
    if not (d.is_floating_point or d.is_complex or isinstance(alpha, int)):
        raise RuntimeError("For integral input tensors, argument alpha must not be a "
                           "floating point number.")
    if isinstance(alpha, builtins.complex) and not d.is_complex:
        raise RuntimeError("For non-complex input tensors, argument alpha must not be a "
                           "complex number.")
    check_number(d, alpha)
    return builtins.bool(alpha) if d is D.bool else alpha


def _sub_check(input, other):
    """torch's sub_check: no bool operand (a Python bool is one)."""
    bools = [x.dtype is D.bool if isinstance(x, Tensor) else isinstance(x, builtins.bool)
             for x in (input, other)]
    if all(bools):
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    if any(bools):
        raise RuntimeError("Subtraction, the `-` operator, with a bool tensor is not "
                           "supported. If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")


def sub(input, other, *, alpha=1):
    _sub_check(input, other)
    if alpha != 1 or alpha.__class__ is not int:
        alpha = _alpha(result_type(input, other), alpha)
    alpha = _reduced_alpha(input, other, alpha)
    return _binary(_sub, input, other, alpha=alpha)


subtract = sub


def rsub(input, other, *, alpha=1):
    """``other - alpha * input``."""
    _sub_check(input, other)
    if alpha != 1 or alpha.__class__ is not int:
        alpha = _alpha(result_type(input, other), alpha)
    alpha = _reduced_alpha(input, other, alpha)
    return _binary(_rsub, input, other, alpha=alpha)


def mul(input, other):
    return _binary(_mul, input, other)


multiply = mul


def div(input, other, *, rounding_mode=None):
    """True division, or ``rounding_mode="trunc"|"floor"`` as torch.div."""
    d = result_type(input, other)
    if rounding_mode is None:
        return _binary(_div, input, other, float_dtype(d))
    if rounding_mode not in ("trunc", "floor"):
        raise RuntimeError(f"div expected rounding_mode to be one of None, 'trunc', or "
                           f"'floor' but found '{rounding_mode}'")
    if d.is_complex:
        raise NotImplementedError(f"\"div_{rounding_mode}_cpu\" not implemented for "
                                  f"'{d.scalar_name}'")
    _check_int_divisor(d, other)
    return _binary(_div_rounded, input, other, d, rounding_mode=rounding_mode)


def _check_int_divisor(d, other):
    """torch's error for an integer division or remainder by zero (the divisor's values
    are read, as torch does, except under a JAX trace)."""
    if d.is_floating_point or d.is_complex:
        return
    if isinstance(other, Tensor):
        if isinstance(other._data, jax.core.Tracer) or not bool((other._data == 0).any()):
            return
    elif other != 0:
        return
    raise RuntimeError("ZeroDivisionError")


true_divide = divide = div


def floor_divide(input, other):
    return div(input, other, rounding_mode="floor")


_remainder = Primitive(
    "remainder", lambda self, other, *, dtype: jnp.remainder(_c(self, dtype), _c(other, dtype)),
    self=lambda grad: grad,
    other=lambda grad, self, other: -grad * (self / other).floor())


def remainder(input, other):
    d = result_type(input, other)
    if d.is_complex:
        raise NotImplementedError(f"\"remainder_cpu\" not implemented for '{d.scalar_name}'")
    _check_int_divisor(d, other)
    return _binary(_remainder, input, other, d)


def neg(input):
    if input.dtype is D.bool:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. "
                           "If you are trying to invert a mask, use the `~` or "
                           "`logical_not()` operator instead.")
    return _neg(input)


negative = neg


def _pow_self(grad, self, exponent):
    # torch's pow_backward_self: d/dz z^p = p z^(p-1); exponent 0 gives 0 (also at z = 0,
    # and for a NaN gradient), so the zero is put outside the product: not holomorphic()
    return where(exponent == 0, 0., grad * (exponent * self.pow(exponent - 1)).conj())


def _dpow_dexponent(self, exponent, result):
    # torch's pow_backward_exponent: z^p log z, with 0 where self == 0 and Re p >= 0
    if isinstance(exponent, Tensor) and exponent.is_complex():
        real_exp = (exponent.imag == 0) & (exponent.real >= 0)
    else:
        real_exp = exponent >= 0
    cond = (self == 0) & real_exp
    base = self.to(result.dtype) if isinstance(self, Tensor) else self
    return where(cond, 0., result * _log(base))


_pow_exponent = holomorphic(_dpow_dexponent)


def _log(x):
    return x.log() if isinstance(x, Tensor) else log(_make(jnp.asarray(x)))


def _pow_fwd(self, exponent, *, dtype):
    a, p = _c(self, dtype), _c(exponent, dtype)
    if dtype.kind not in "iu":
        return jnp.power(a, p)
    # torch's integer power: a negative exponent gives 0, except for the bases 1 and -1
    odd = (p % 2).astype(bool)
    neg = jnp.where(a == 1, 1, jnp.where(a == -1, jnp.where(odd, -1, 1), 0)).astype(dtype)
    return jnp.where(p < 0, neg, jnp.power(a, jnp.maximum(p, 0)))


def _pow_jvp(p, t, *, dtype):
    # NOTE [Tangents of primitives]: torch's tangent is its backward formulas' transpose,
    # so, as there, a real input's share of a complex power is its real part, the base's
    # share is 0 where the exponent is 0, the exponent's 0 where self == 0 and Re p >= 0
    x, e = p
    out = 0
    for i, (v, tv) in enumerate(zip(p, t)):
        if tv is None:
            continue

        def f(a, i=i):
            return _pow_fwd(a, e, dtype=dtype) if i == 0 else _pow_fwd(x, a, dtype=dtype)
        d = jax.jvp(f, (jnp.asarray(v),), (jnp.asarray(tv, jnp.result_type(v)),))[1]
        if jnp.iscomplexobj(d) and not jnp.iscomplexobj(v):
            d = jnp.real(d).astype(d.dtype)
        if i == 0:
            zero = jnp.asarray(e) == 0
        else:
            re = jnp.real(e) >= 0
            if jnp.iscomplexobj(e):
                re = re & (jnp.imag(e) == 0)
            zero = (jnp.asarray(x) == 0) & re
        out = out + jnp.where(zero, jnp.zeros_like(d), d)
    return out


_pow = Primitive("pow", _pow_fwd, node_name="PowBackward1",
                 self=_pow_self, exponent=_pow_exponent, jvp=_pow_jvp)
_pow_scalar = Primitive("pow", _pow_fwd, node_name="PowBackward0", self=_pow_self,
                        jvp=_pow_jvp)
# a number ** a tensor (the base, a constant made from the number, is no edge)
_rpow = Primitive("pow", _pow_fwd, node_name="PowBackward2", exponent=_pow_exponent,
                  jvp=_pow_jvp)

# NOTE [Integer powers]
# ``x ** 2`` with a Python number is torch's PowBackward0: the exponent is a static
# attribute, so an integral one lowers to repeated multiplication (lax.integer_pow)
# instead of the exp/log of a general power: several times faster (docs/performance.md)
# and exact for complex bases. Only integral exponents of modest size take this
# path: each distinct value is its own compiled kernel.
_MAX_STATIC_EXPONENT = 64


def _pow_int_fwd(self, *, dtype, exponent):
    x = _c(self, dtype)
    if x.dtype == jnp.float16 or x.dtype == jnp.bfloat16 and exponent not in (3, -2):
        # torch rounds once (float16's products are float; bfloat16's std::pow in float),
        # but its bfloat16 vector kernels for 3 and -2 round each product
        return jax.lax.integer_pow(x.astype(jnp.float32), exponent).astype(x.dtype)
    return jax.lax.integer_pow(x, exponent)


_pow_int = Primitive(
    "pow", _pow_int_fwd,
    node_name="PowBackward0",
    # exponent 0: zeros whatever the incoming gradient (NaN included), as torch
    self=lambda grad, self, exponent: (
        grad * (exponent * self.pow(exponent - 1)).conj() if exponent
        else _make(jnp.zeros(grad.shape, grad._data.dtype))))


def pow(input, exponent):
    """``input ** exponent``, complex exponents included."""
    d = result_type(input, exponent)
    if (isinstance(exponent, int) and exponent < 0 and not d.is_floating_point
            and not d.is_complex):
        raise RuntimeError("Integers to negative integer powers are not allowed.")
    if not isinstance(input, Tensor):
        input = _make(jnp.asarray(device_constant(input, d.np), d.np))
        return _binary(_rpow, input, exponent, d)
    if (isinstance(exponent, (int, float)) and not isinstance(exponent, bool)
            and (d.is_floating_point or d.is_complex) and float(exponent).is_integer()
            and builtins.abs(exponent) <= _MAX_STATIC_EXPONENT):
        return _pow_int(input, dtype=d.np, exponent=int(exponent))
    return _binary(_pow if isinstance(exponent, Tensor) else _pow_scalar, input, exponent, d)


def square(input):
    return pow(input, 2)


def reciprocal(input):
    return _unary_float(_reciprocal, input)


def _reciprocal_fwd(self):
    if self.dtype == jnp.complex64 and jax.default_backend() == "cpu":
        return _c10_complex_div(jnp.ones((), self.dtype), self)  # NOTE [Complex division]
    return 1 / self


_reciprocal = Primitive("reciprocal", _reciprocal_fwd,
                        self=holomorphic(lambda result: -(result * result)))

# ======================================================================================
# Unary math
# ======================================================================================

_LN2, _LN10 = math.log(2.0), math.log(10.0)


def _unary(name, fwd, formula):
    prim = Primitive(name, lambda self: fwd(self), self=formula)

    def op(input):
        return _unary_float(prim, input)
    op.__name__ = name
    op.__doc__ = f"Elementwise ``{name}`` (differentiable, complex-aware)."
    return op


exp = _unary("exp", jnp.exp, holomorphic(lambda result: result))
exp2 = _unary("exp2", jnp.exp2, holomorphic(lambda result: result * _LN2))
log = _unary("log", jnp.log, holomorphic(lambda self: self, divide=True))
log2 = _unary("log2", jnp.log2, holomorphic(lambda self: self * _LN2, divide=True))
log10 = _unary("log10", jnp.log10, holomorphic(lambda self: self * _LN10, divide=True))
log1p = _unary("log1p", jnp.log1p, holomorphic(lambda self: self + 1, divide=True))
expm1 = _unary("expm1", jnp.expm1, holomorphic(lambda result: result + 1))
# sqrt'(0) = inf, by continuity (torch's rule)
sqrt = _unary("sqrt", jnp.sqrt, holomorphic(lambda result: 2 * result, divide=True))
rsqrt = _unary("rsqrt", jax.lax.rsqrt,  # torch's order (float16/bfloat16 round each step)
               lambda grad, result: (grad * -0.5) * result.pow(3).conj())
sin = _unary("sin", jnp.sin, holomorphic(lambda self: self.cos()))
cos = _unary("cos", jnp.cos, holomorphic(lambda self: -self.sin()))
tan = _unary("tan", jnp.tan, holomorphic(lambda result: 1 + result * result))
asin = _unary("asin", jnp.arcsin,
              holomorphic(lambda self: (-self * self + 1).rsqrt()))
acos = _unary("acos", jnp.arccos,
              holomorphic(lambda self: -(-self * self + 1).rsqrt()))
atan = _unary("atan", jnp.arctan, holomorphic(lambda self: self * self + 1, divide=True))
asinh = _unary("asinh", jnp.arcsinh, holomorphic(lambda self: (self * self + 1).rsqrt()))
acosh = _unary("acosh", jnp.arccosh, holomorphic(lambda self: (self * self - 1).rsqrt()))
atanh = _unary("atanh", jnp.arctanh, holomorphic(lambda self: -self * self + 1, divide=True))
sinh = _unary("sinh", jnp.sinh, holomorphic(lambda self: self.cosh()))
cosh = _unary("cosh", jnp.cosh, holomorphic(lambda self: self.sinh()))
tanh = _unary("tanh", jnp.tanh, holomorphic(lambda result: 1 - result * result))


def _sigmoid_grad(grad, result):
    if result.is_complex():
        return grad * (result * (1 - result)).conj()
    # torch's order: its float16 kernel rounds each step (bfloat16: in float32, NOTE
    # [Reduced-precision opmath])
    return grad * (1 - result) * result


sigmoid = _unary("sigmoid", jax.nn.sigmoid, _sigmoid_grad)
_erf = _unary("erf", jax.scipy.special.erf,
              lambda grad, self: grad * (2 / math.sqrt(math.pi)) * (-self * self).exp())


def erf(input):
    _real_only("erf_vml_cpu", input)
    return _erf(input)
deg2rad = _unary("deg2rad", jnp.deg2rad, lambda grad: grad * (math.pi / 180))
rad2deg = _unary("rad2deg", jnp.rad2deg, lambda grad: grad * (180 / math.pi))

# relu'(0) = 0 (torch's threshold_backward)
# NOTE [Tangents of primitives]: torch's tangents at the kinks (relu'(0) = 0, |x|'(0) = 0,
# clamp passes the tangent of x on its closed range), where JAX's jvp splits ties
_relu = Primitive("relu", lambda self: jnp.maximum(self, 0),
                  self=lambda grad, result: where(result <= 0, 0., grad),
                  jvp=lambda p, t: jnp.where(p[0] > 0, t[0], jnp.zeros_like(t[0])))


def relu(input):
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    if input.dtype is D.bool:
        raise RuntimeError("Boolean inputs not supported for relu")
    return _relu(input)


_softplus = Primitive(
    "softplus",
    lambda self, *, beta, threshold: jnp.where(
        self * beta > threshold, self, jnp.logaddexp(self * beta, 0) / beta),
    self=lambda grad, self, beta, threshold: where(
        self * beta > threshold, grad, grad * (self * beta).sigmoid()))


def _real_only(name, *tensors):
    for t in tensors:
        if isinstance(t, Tensor) and t.is_complex():
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{t.dtype.scalar_name}'")


def _kernel_rejects(name, kinds, *tensors):
    """torch's NotImplementedError where a CPU kernel ``name`` has no version for a tensor
    whose dtype kind (numpy's: "b" bool, "u"/"i" integers, "c" complex, "f" floats) is in
    ``kinds``."""
    for t in tensors:
        if isinstance(t, Tensor) and _kind(t.dtype.np) in kinds:
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{t.dtype.scalar_name}'")


def _floating_only(name, *tensors):
    """torch's error where a kernel takes floating tensors only (not complex, integer or
    bool ones)."""
    for t in tensors:
        if isinstance(t, Tensor) and not t.dtype.is_floating_point:
            raise NotImplementedError(f'"{name}" not implemented for '
                                      f"'{t.dtype.scalar_name}'")


def softplus(input, beta=1.0, threshold=20.0):
    _real_only("softplus_cpu", input)
    return _softplus(input, beta=beta, threshold=threshold)


# ======================================================================================
# Complex
# ======================================================================================

def _abs_jvp(p, t):
    if jnp.iscomplexobj(p[0]):
        return jnp.real(jnp.conj(_sgn_fwd(p[0])) * t[0])
    return jnp.sign(p[0]) * t[0]


def _complex_abs(z):
    """|z| as torch's (C's hypot, correctly rounded): for complex64 on the CPU from float64
    squares, rounded once (NOTE [Complex division]: XLA's complex abs differed from torch's
    in 35% of complex64 values); elsewhere XLA's."""
    if z.dtype != jnp.complex64 or jax.default_backend() != "cpu":
        return jnp.abs(z)
    re, im = jnp.real(z).astype(jnp.float64), jnp.imag(z).astype(jnp.float64)
    r = jnp.sqrt(re * re + im * im).astype(jnp.float32)
    return jnp.where(jnp.isinf(re) | jnp.isinf(im), jnp.float32(jnp.inf), r)  # hypot(inf, nan)


_abs = Primitive("abs", lambda self: _complex_abs(self) if jnp.iscomplexobj(self)
                 else jnp.abs(self), self=lambda grad, self: grad * self.sgn(), jvp=_abs_jvp)


def abs(input):
    """Absolute value; d|x| at 0 is 0 (the minimum-norm subgradient, as torch)."""
    _kernel_rejects("abs_cpu", "b", input)
    return _abs(input)


absolute = abs


def _angle_backward(grad, self):
    if not self.is_complex():
        return _zero_grad(grad)
    return where(self == 0, 0., grad * self / (self.abs() * self.abs()) * _I)


def _angle_jvp(p, t):
    d = jax.jvp(jnp.angle, p, t)[1]
    return jnp.where(p[0] == 0, jnp.zeros_like(d), d)


_angle = Primitive("angle", lambda self: jnp.angle(self), self=_angle_backward, jvp=_angle_jvp)


def angle(input):
    return _unary_float(_angle, input)


def _sgn_backward(grad, self, result):
    if not self.is_complex():
        return _zero_grad(grad)
    a = self.abs()
    return where(a == 0, 0., (grad - result * result * grad.conj()) / (2 * a))


def _sgn_fwd(self):
    if jnp.iscomplexobj(self):
        # z / |z| component by component, as ATen (a complex division by the real |z|
        # would be a full complex division); at 0, 0 / 1
        a = _complex_abs(self)
        a = jnp.where(a == 0, jnp.ones_like(a), a)
        return jax.lax.complex(self.real / a, self.imag / a)
    return _sign_fwd(self)


def _sign_fwd(self):
    # torch's sign(nan) is 0 (so abs's gradient at NaN is 0); jnp.sign gives nan
    if self.dtype.kind == "f":
        return jnp.where(jnp.isnan(self), jnp.zeros_like(self), jnp.sign(self))
    return jnp.sign(self)


def _sgn_jvp(p, t):
    z, tz = p[0], t[0]
    if not jnp.iscomplexobj(z):
        return jnp.zeros_like(tz)
    a = jnp.abs(z)
    s = _sgn_fwd(z)
    d = (tz - s * s * jnp.conj(tz)) / (2 * jnp.where(a == 0, jnp.ones_like(a), a))
    return jnp.where(a == 0, jnp.zeros_like(d), d)


_sgn = Primitive("sgn", _sgn_fwd, self=_sgn_backward, jvp=_sgn_jvp)


def sgn(input):
    """``z / |z|`` (0 at 0); for real tensors the same as sign."""
    return _sgn(input)


_sign = Primitive("sign", _sign_fwd, self=_zero_grad)


def sign(input):
    if input.is_complex():
        raise NotImplementedError("Unlike NumPy, torch.sign is not intended to support "
                                  "complex numbers. Please use torch.sgn instead.")
    if input.dtype is D.bool:  # torch's sign of a bool is itself
        return input.clone()
    return _sign(input)


# NOTE [Conjugate views]
# As in torch, ``conj()`` of a complex tensor is a view (torch's conjugate bit): writes
# through it land conjugated in its base (the adjoint write of NOTE [Views]), and an
# in-place op on it rebases the base's history. The bit is not stored: a tensor is
# ``is_conj()`` when its view chain holds an odd number of conj steps, and ``is_neg()``
# (torch's negative bit) when it is the ``imag`` of a conjugated view (_views.conj_bits).
# Values are always materialized, so resolving a bit is a copy that drops it.
_conj = Primitive("conj", lambda self: jnp.conj(self), view=True,
                  self=lambda grad: grad.conj())
# torch's private _neg_view: a view with the negative bit (values negated)
_neg_view = Primitive("neg_view", lambda self: -self, view=True, node_name="NegViewBackward0",
                      self=lambda grad: _neg_view(grad))
_conj_physical = Primitive("conj_physical", lambda self: jnp.conj(self),
                           self=lambda grad: grad.conj())
_resolve = Primitive("resolve", lambda self: jnp.array(self, copy=True),
                     node_name="CloneBackward0", self=lambda grad: grad)


def conj(input):
    """Complex conjugate as a view with torch's conjugate bit (NOTE [Conjugate views]);
    ``input`` itself for real tensors, as torch.

    Example
    -------
    >>> z = wgrad.tensor([1 + 2j])
    >>> c = z.conj()
    >>> c.is_conj(), c._base is z
    (True, True)
    >>> c[0] = 3 + 4j
    >>> z
    tensor([3.-4.j])
    """
    return _conj(input) if input.is_complex() else input


def conj_physical(input):
    """Complex conjugate as a new tensor (``input`` itself for real tensors)."""
    return _conj_physical(input) if input.is_complex() else input


def is_conj(input):
    """Whether ``input`` is a conjugated view (NOTE [Conjugate views])."""
    return conj_bits(input)[0]


def is_neg(input):
    """Whether ``input`` has torch's negative bit: the ``imag`` of a conjugated view."""
    return conj_bits(input)[1]


def resolve_conj(input):
    """A copy without the conjugate bit if ``input`` has it, else ``input``."""
    return _resolve(input) if is_conj(input) else input


def resolve_neg(input):
    """A copy without the negative bit if ``input`` has it, else ``input``."""
    return _resolve(input) if is_neg(input) else input


def adjoint(input):
    """The conjugate transpose of the last two dimensions, a view (``.mH``)."""
    if input.ndim < 2:
        raise RuntimeError(f"tensor.adjoint() is only supported on matrices or batches of "
                           f"matrices. Got {input.ndim}-D tensor.")
    return conj(transpose(input, -2, -1))


_real = Primitive("real", lambda self: jnp.real(self), view=True, self=lambda grad: grad)
_imag = Primitive("imag", lambda self: jnp.imag(self), view=True,
                  self=lambda grad: grad * _I)


def real(input):
    return _real(input) if input.is_complex() else input


def imag(input):
    if not input.is_complex():
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    return _imag(input)


_complex = Primitive(
    "complex", lambda real, imag: jax.lax.complex(*jnp.broadcast_arrays(real, imag)),
    real=lambda grad: grad.real, imag=lambda grad: grad.imag)


def complex(real, imag):  # noqa: A001 - torch's name
    if real.dtype is not imag.dtype:
        raise RuntimeError(f"Expected object of scalar type {real.dtype.name.capitalize()} but "
                           f"got scalar type {imag.dtype.name.capitalize()} for second argument")
    if not real.is_floating_point():
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{real.dtype.name} and {imag.dtype.name}")
    return _complex(real, imag)


_polar = Primitive(
    "polar", lambda abs, angle: jax.lax.complex(abs * jnp.cos(angle), abs * jnp.sin(angle)),
    abs=lambda grad, result: (grad.conj() * result.sgn()).real,
    angle=lambda grad, result: (grad.conj() * result * _I).real)


def polar(abs, angle):  # noqa: A002
    return _polar(abs, angle)


_view_as_real = Primitive(
    "view_as_real", lambda self: jnp.stack([jnp.real(self), jnp.imag(self)], axis=-1),
    view=True,
    self=lambda grad: view_as_complex(grad))
_view_as_complex = Primitive(
    "view_as_complex", lambda self: jax.lax.complex(self[..., 0], self[..., 1]),
    view=True,
    self=lambda grad: view_as_real(grad))


def view_as_real(input):
    """A real tensor with a trailing dimension of 2 holding real and imaginary parts."""
    if not input.is_complex():
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if is_conj(input):
        raise RuntimeError("view_as_real doesn't work on unresolved conjugated tensors.  To "
                           "resolve the conjugate tensor so you can view it as real, use "
                           "self.resolve_conj(); however, be warned that the resulting "
                           "tensor will NOT alias the original.")
    return _view_as_real(input)


def view_as_complex(input):
    if input.ndim == 0:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if input.shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("view_as_complex is only supported for float and double tensors, "
                           f"but got a tensor of scalar type: {input.dtype.name}")
    if input._view_meta is not None:  # torch's layout checks (a new tensor passes them)
        strides, offset = input.stride(), input.storage_offset()
        if strides[-1] != 1:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(s % 2 for s in strides[:-1]):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                               "dimension")
        if offset % 2:
            raise RuntimeError("Tensor must have a storage_offset divisible by 2")
    return _view_as_complex(input)


# ======================================================================================
# Selection
# ======================================================================================

_where = Primitive(
    "where", lambda condition, self, other, *, dtype: jnp.where(
        condition, _c(self, dtype), _c(other, dtype)),
    self=lambda grad, condition: where(condition, grad, 0.),
    other=lambda grad, condition: where(condition, 0., grad))


def where(condition, input=None, other=None):
    """``input`` where ``condition`` else ``other``; one argument: ``nonzero(as_tuple=True)``."""
    if input is None and other is None:
        return nonzero(condition, as_tuple=True)
    if isinstance(condition, Tensor) and condition.dtype is not D.bool:
        if condition.dtype is not D.uint8:
            raise RuntimeError(f"where expected condition to be a boolean tensor, but got a "
                               f"tensor with dtype {condition.dtype.scalar_name}")
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated "
                      "and will be removed in a future version of PyTorch. Use a boolean "
                      "condition instead.", UserWarning, stacklevel=2)
    d = result_type(input, other)
    for v in (input, other):
        if not isinstance(v, Tensor):  # c10's checked_convert into the result's dtype (a
            check_number(d, v, reduced_unchecked=True)  # float16's through a wider type)
    return _where(condition, input, other, dtype=d.np)


def _clamp_fwd(self, min, max):
    if min is not None:
        self = jnp.maximum(self, min)
    if max is not None:
        self = jnp.minimum(self, max)
    return self


def _in_range(self, min, max):
    ok = None
    if min is not None:
        ok = self >= min
    if max is not None:
        ok = (self <= max) if ok is None else ok & (self <= max)
    return ok


def _clamp_scalars(akey, in_meta):
    """Whether torch takes a scalar overload: clamp(Tensor, Scalar?, Scalar?) (one edge), or
    clamp_min/clamp_max (``op``: the bound they have is the only other edge)."""
    return bool(akey) or in_meta[1] is None and in_meta[2] is None


def _clamp_name(akey, in_meta):
    if akey:  # clamp_min / clamp_max: ClampMinBackward0 for a number, 1 for a tensor
        op = akey[0][1]
        return f"Clamp{op.title()}Backward{0 if in_meta[1 if op == 'min' else 2] is None else 1}"
    return "ClampBackward1" if _clamp_scalars(akey, in_meta) else "ClampBackward0"


_clamp = Primitive(
    "clamp", lambda self, min, max, *, op=None: _clamp_fwd(self, min, max),
    scalar_overload=_clamp_scalars, node_name_of=_clamp_name,
    self=lambda grad, self, min, max: where(_in_range(self, min, max), grad, 0.),
    # torch's clamp_backward_min_max: where min > max the result is max, and only max
    # takes the gradient
    min=lambda grad, self, min, max: where(
        self < min if max is None else (self < min) & (min < max), grad, 0.),
    max=lambda grad, self, min, max: where(
        self > max if min is None else (self > max) | (max < min), grad, 0.),
    jvp=lambda p, t: _clamp_jvp(*p, *t))


def _clamp_jvp(x, lo, hi, tx, tlo, thi):
    out = jnp.broadcast_to(tx, jnp.broadcast_shapes(*(jnp.shape(v) for v in (x, lo, hi)
                                                      if v is not None)))
    if lo is not None:
        out = jnp.where(x < lo, 0 if tlo is None else tlo, out)
    if hi is not None:
        out = jnp.where((x > hi) if lo is None else (x > hi) | (hi < lo),
                        0 if thi is None else thi, out)
    return out.astype(tx.dtype)


def clamp(input, min=None, max=None):
    """Clamp into ``[min, max]``; the gradient passes where min <= x <= max."""
    if min is None and max is None:
        raise RuntimeError("torch.clamp: At least one of 'min' or 'max' must not be None")
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    input = _clamp_input(input, min, max)
    return _clamp(input, _clamp_bound(min, input.dtype), _clamp_bound(max, input.dtype))


def _clamp_input(input, min, max):
    """``input`` in torch's result dtype of clamp (an integer tensor with a float bound is
    clamped in the default float dtype), its number bounds checked into that dtype as
    c10 does: out of range they raise, where the product would wrap them (300 as int8)."""
    key = (input.dtype, min.__class__, max.__class__)
    d = _CLAMP_TYPES.get(key)  # number bounds: the dtype follows from their types
    if d is None:
        d = result_type(input, *[b for b in (min, max) if b is not None])
        if not isinstance(min, Tensor) and not isinstance(max, Tensor):
            _CLAMP_TYPES[key] = d  # a few dtypes times a few kinds of number: bounded
    for b in (min, max):
        if b is not None and not isinstance(b, Tensor):
            check_number(d, b)
    return input if d is input.dtype else input.to(d)


_CLAMP_TYPES = {}


def _clamp_bound(b, d):
    """A tensor bound in the result's dtype (300 as int8 is 44, as torch's cast)."""
    return b.to(d) if isinstance(b, Tensor) and b.dtype is not d else b


clip = clamp


def _max_grad(grad, self, other, pick):
    # ties share the gradient equally (torch's maximum/minimum backward)
    return where(self == other, grad / 2, where(pick, grad, 0.))


_maximum = Primitive(
    "maximum", lambda self, other, *, dtype: jnp.maximum(_c(self, dtype), _c(other, dtype)),
    self=lambda grad, self, other: _max_grad(grad, self, other, self > other),
    other=lambda grad, self, other: _max_grad(grad, self, other, other > self))
_minimum = Primitive(
    "minimum", lambda self, other, *, dtype: jnp.minimum(_c(self, dtype), _c(other, dtype)),
    self=lambda grad, self, other: _max_grad(grad, self, other, self < other),
    other=lambda grad, self, other: _max_grad(grad, self, other, other < self))


def maximum(input, other):
    if input.is_complex() or other.is_complex():
        raise RuntimeError("maximum not implemented for complex tensors.")
    return _binary(_maximum, input, other)


def minimum(input, other):
    if input.is_complex() or other.is_complex():
        raise RuntimeError("minimum not implemented for complex tensors.")
    return _binary(_minimum, input, other)


# fmax/fmin: a NaN loses to a number; torch's formulas give a tie (and a NaN other) to self
_fmax = Primitive(
    "fmax", lambda self, other, *, dtype: jnp.fmax(_c(self, dtype), _c(other, dtype)),
    self=lambda grad, self, other: where((self >= other) | other.isnan(), grad, 0.),
    other=lambda grad, self, other: where((self >= other) | other.isnan(), 0., grad))
_fmin = Primitive(
    "fmin", lambda self, other, *, dtype: jnp.fmin(_c(self, dtype), _c(other, dtype)),
    self=lambda grad, self, other: where((self <= other) | other.isnan(), grad, 0.),
    other=lambda grad, self, other: where((self <= other) | other.isnan(), 0., grad))


def _nan_ignoring(prim, name, doc):
    """fmax/fmin: a Tensor ``other`` only (torch's parser), real inputs only."""
    def op(input, other):
        if not isinstance(other, Tensor):
            raise TypeError(f"{name}(): argument 'other' (position 2) must be Tensor, not "
                            f"{type(other).__name__}")
        if input.is_complex() or other.is_complex():
            raise RuntimeError(f"{name} not implemented for complex tensors.")
        return _binary(prim, input, other)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = doc
    return op


fmax = _nan_ignoring(_fmax, "fmax", "The larger of each pair, ignoring NaN (NaN only where "
                                    "both are).")
fmin = _nan_ignoring(_fmin, "fmin", "The smaller of each pair, ignoring NaN (NaN only where "
                                    "both are).")


_masked_fill = Primitive(
    "masked_fill", lambda self, mask, value: jnp.where(mask, jnp.asarray(value, self.dtype),
                                                       self),
    scalar_overload=lambda akey, in_meta: in_meta[2] is None,  # MaskedFillBackward0
    node_name_of=lambda akey, in_meta: "MaskedFillBackward0" if in_meta[2] is None
    else "MaskedFillBackward1",
    self=lambda grad, mask: where(mask, 0., grad),
    value=lambda grad, mask: where(mask, grad, 0.).sum())


def masked_fill(input, mask, value):
    if mask.dtype is not D.bool:
        raise RuntimeError(f"masked_fill_ only supports boolean masks, but got mask with "
                           f"dtype {mask.dtype.name}")
    if isinstance(value, Tensor) and value.ndim != 0:
        raise RuntimeError(f"masked_fill_ only supports a 0-dimensional value tensor, but got "
                           f"tensor with {value.ndim} dimension(s).")
    if mask.shape != input.shape:
        check_broadcast(mask.shape, input.shape)  # NOTE [Shape errors]
    check_fill_value(input, value)
    return _masked_fill(input, mask, value)


def check_fill_value(input, value, setitem=False, fill=False):
    """torch's check of a value written into ``input`` (fill, masked_fill, setitem): a
    complex one needs a complex tensor unless its imaginary part is 0 (JAX would drop it),
    and a number must fit the dtype (``check_number``; torch's setitem checks no range for
    float16 and bfloat16: it converts through a wider tensor, nor does ``fill`` of one
    element: it converts through float). A tensor value is refused only when complex into
    a real tensor, as masked_fill's (fill_ and setitem cast it with a warning: they pass
    numbers only)."""
    d = input.dtype
    if isinstance(value, Tensor):
        if value._data.dtype.kind == "c" and not d.is_complex:
            overflow(d)
        return
    if isinstance(value, jax.core.Tracer):
        return
    check_number(d, value, reduced_unchecked=setitem or fill and input.numel() == 1)


_atan2 = Primitive(
    "atan2", lambda self, other, *, dtype: jnp.arctan2(_c(self, dtype), _c(other, dtype)),
    self=lambda grad, self, other: _atan2_part(grad * other, self * self + other * other),
    other=lambda grad, self, other: _atan2_part(grad * -self, self * self + other * other))


def _atan2_part(num, den):
    # at (0, 0) torch's gradient is 0 (not 0/0)
    return where(den == 0, 0., num / den)


def atan2(input, other):
    _real_only("atan2_cpu", input, other)
    return _binary(_atan2, input, other, float_dtype(result_type(input, other)))


arctan2 = atan2


def hypot(input, other):
    """``sqrt(input**2 + other**2)`` without overflow (C's hypot: |complex(input, other)|,
    NOTE [Complex division]), HypotBackward0."""
    _kernel_rejects("hypot_cpu", "buic", input, other)
    return _binary(_hypot, input, other)


def _hypot_fwd(self, other, *, dtype):
    # float16/bfloat16 in float32 and rounded once (NOTE [Reduced-precision opmath])
    wide = jnp.float64 if jnp.dtype(dtype) == jnp.float64 else jnp.float32
    a, b = jnp.broadcast_arrays(_c(self, dtype).astype(wide), _c(other, dtype).astype(wide))
    return _complex_abs(jax.lax.complex(a, b)).astype(dtype)


_hypot = Primitive(
    "hypot", _hypot_fwd,
    self=lambda grad, self, result: grad * self / result,
    other=lambda grad, other, result: grad * other / result)


def _ctype(t):
    """The C++ type name torch's messages print for ``t``'s dtype."""
    return _CPP.get(t.dtype.name, t.dtype.scalar_name)


def _coef(v, d):
    """A number argument (``alpha``, ``value``...) cast to dtype ``d`` as torch does (ints
    truncated, a complex number with an imaginary part refused by a real dtype, one out
    of the dtype's range refused: ``check_number``)."""
    check_number(d, v)
    if isinstance(v, builtins.complex) and not d.is_complex:
        v = v.real  # its imaginary part is 0 (checked)
    if not (d.is_floating_point or d.is_complex):
        v = int(v)
    return v


def _lerp_fwd(self, end, weight, *, dtype):
    a, b, w = _c(self, dtype), _c(end, dtype), _c(weight, dtype)
    # torch's two forms, for accuracy at either end (ATen's lerp)
    return jnp.where(jnp.abs(w) < 0.5, a + w * (b - a), b - (b - a) * (1 - w))


def _conj_of(w):
    return w.conj() if isinstance(w, Tensor) else _conj_scalar(w)


# LerpBackward0 for a number weight (one edge less, NOTE [Node edges]), LerpBackward1 for a
# tensor weight
_lerp = Primitive(
    "lerp", _lerp_fwd, scalar_overload=True,
    node_name_of=lambda akey, in_meta: "LerpBackward0" if in_meta[2] is None
    else "LerpBackward1",
    self=lambda grad, weight: grad * (1 - _conj_of(weight)),
    end=lambda grad, weight: grad * _conj_of(weight),
    weight=lambda grad, self, end: grad * (end - self).conj())


def lerp(input, end, weight):
    """``input + weight * (end - input)``, in torch's two forms (exact at both ends)."""
    if end.dtype is not input.dtype:
        raise RuntimeError(f"expected dtype {_ctype(input)} for `end` but got dtype "
                           f"{_ctype(end)}")
    if isinstance(weight, Tensor):
        if weight.ndim and weight.dtype is not input.dtype:
            raise RuntimeError(f"expected dtype {_ctype(input)} for `weight` but got dtype "
                               f"{_ctype(weight)}")
        kernel = "lerp_kernel_tensor"
    else:
        kernel = "lerp_kernel_scalar"
    if not (input.is_floating_point() or input.is_complex()):
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if not isinstance(weight, Tensor):
        weight = _coef(weight, input.dtype)
    check_broadcast(*[t.shape for t in (input, end, weight) if isinstance(t, Tensor)])
    return _lerp(input, end, weight, dtype=input.dtype.np)


_addcmul = Primitive(
    "addcmul", lambda self, tensor1, tensor2, *, dtype, value: _c(self, dtype) + value * _c(
        tensor1, dtype) * _c(tensor2, dtype),
    self=lambda grad: grad,
    tensor1=lambda grad, tensor2, value: grad * (tensor2 * value).conj(),
    tensor2=lambda grad, tensor1, value: grad * (tensor1 * value).conj())
_addcdiv = Primitive(
    "addcdiv", lambda self, tensor1, tensor2, *, dtype, value: _c(self, dtype) + value * _c(
        tensor1, dtype) / _c(tensor2, dtype),
    self=lambda grad: grad,
    tensor1=lambda grad, tensor2, value: grad * (value / tensor2).conj(),
    tensor2=lambda grad, tensor1, tensor2, value: -grad * (
        value * tensor1 / (tensor2 * tensor2)).conj())


def _addc(prim, input, tensor1, tensor2, value):
    d = result_type(input, tensor1, tensor2)
    check_broadcast(input.shape, tensor1.shape, tensor2.shape)
    return prim(input, tensor1, tensor2, dtype=d.np, value=_coef(value, d))


def addcmul(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 * tensor2`` (AddcmulBackward0)."""
    _kernel_rejects("addcmul_cpu_out", "b", input, tensor1, tensor2)
    return _addc(_addcmul, input, tensor1, tensor2, value)


def addcdiv(input, tensor1, tensor2, *, value=1):
    """``input + value * tensor1 / tensor2`` (AddcdivBackward0); integer divisions raise, as
    torch's."""
    if not (tensor1.is_floating_point() or tensor1.is_complex()) and not (
            tensor2.is_floating_point() or tensor2.is_complex()):
        raise RuntimeError(
            "Integer division with addcdiv is no longer supported, and in a future  release "
            "addcdiv will perform a true division of tensor1 and tensor2. The historic "
            "addcdiv behavior can be implemented as (input + value * torch.trunc(tensor1 / "
            "tensor2)).to(input.dtype) for integer inputs and as (input + value * tensor1 / "
            "tensor2) for float inputs. The future addcdiv behavior is just the latter "
            "implementation: (input + value * tensor1 / tensor2), for all dtypes.")
    return _addc(_addcdiv, input, tensor1, tensor2, value)


def logaddexp_complex(x, y):
    """torch's complex log(exp(x) + exp(y)): the larger real part plus log1p(exp(min -
    max)), so the imaginary part is carried, not wrapped into (-pi, pi]."""
    first = jnp.real(x) >= jnp.real(y)
    hi, lo = jnp.where(first, x, y), jnp.where(first, y, x)
    lo_re = jnp.real(lo)
    both_inf = ~jnp.isfinite(lo_re) & (lo_re == jnp.real(hi))
    out = jnp.log1p(jnp.exp(lo - hi)) + hi
    out = jnp.where(both_inf, jnp.where(lo_re < 0, lo, jnp.log(jnp.exp(lo) + jnp.exp(hi))),
                    out)
    nan = jnp.isnan(lo_re) | jnp.isnan(jnp.imag(lo))
    return jnp.where(nan, jnp.array(builtins.complex(jnp.nan, jnp.nan), out.dtype), out)


_logaddexp_c = Primitive(
    "logaddexp", lambda self, other: logaddexp_complex(self, other),
    self=lambda grad, self, other: grad / (1 + (other - self).exp()).conj(),
    other=lambda grad, self, other: grad / (1 + (self - other).exp()).conj())


def logaddexp(input, other):
    """``log(exp(input) + exp(other))``, stably; complex as torch (see logaddexp_complex)."""
    if (isinstance(input, Tensor) and input.is_complex()) or \
            (isinstance(other, Tensor) and other.is_complex()):
        d = result_type(input, other)
        return _logaddexp_c(input.to(d) if isinstance(input, Tensor) else input,
                            other.to(d) if isinstance(other, Tensor) else other)
    m = maximum(input, other).detach()
    return m + log(exp(input - m) + exp(other - m))


# ======================================================================================
# Incomplete gamma: torch differentiates the second argument only
# ======================================================================================

def _igamma_dx(a, x):  # d/dx P(a, x) = x^(a-1) e^-x / Gamma(a)
    return jnp.exp((a - 1) * jnp.log(x) - x - jax.scipy.special.gammaln(a))


def _no_derivative(what):
    def formula(grad):
        raise NotImplementedError(f"the derivative for '{what}' is not implemented.")
    return formula


# its own x-derivative, x^(a-1) e^-x / Gamma(a) * ((a - 1) / x - 1), for double backward
# as torch (a takes no derivative at the first order already)
_igamma_density = Primitive(
    "igamma_density", lambda self, other: _igamma_dx(self, other),
    self=_no_derivative("igamma: input"),
    other=lambda grad, self, other, result: grad * result * ((self - 1) / other - 1))


def _no_forward_ad(name):
    """The tangent rule of an op torch has no forward-mode formula for: torch's error."""
    def rule(primals, tangents, **attrs):
        raise NotImplementedError(
            f"Trying to use forward AD with {name} that does not support it because it has "
            f"not been implemented yet.\nPlease file an issue to PyTorch at https://github.com"
            f"/pytorch/pytorch/issues/new?template=feature-request.yml so that we can "
            f"prioritize its implementation or submit a PR adding the implementation to "
            f"derivatives.yaml")
    return rule


_igamma = Primitive("igamma", lambda self, other: jax.scipy.special.gammainc(self, other),
                    self=_no_derivative("igamma: input"),
                    other=lambda grad, self, other: grad * _igamma_density(self, other),
                    jvp=_no_forward_ad("igamma"))
_igammac = Primitive("igammac", lambda self, other: jax.scipy.special.gammaincc(self, other),
                     self=_no_derivative("igammac: input"),
                     other=lambda grad, self, other: -grad * _igamma_density(self, other),
                     jvp=_no_forward_ad("igammac"))


def _float_pair(prim, input, other):
    d = result_type(input, other)
    d = d if d.is_floating_point else D.get_default_dtype()
    a, b = (t.to(d) if isinstance(t, Tensor) else t for t in (input, other))
    return prim(a, b)


def igamma(input, other):
    """The regularized lower incomplete gamma function P(input, other); differentiable in
    ``other`` only, as torch.

    Example
    -------
    >>> wgrad.igamma(wgrad.tensor([1.]), wgrad.tensor([0.]))
    tensor([0.])
    """
    return _float_pair(_igamma, input, other)


def igammac(input, other):
    """The regularized upper incomplete gamma function Q(input, other) = 1 - P.

    Example
    -------
    >>> wgrad.igammac(wgrad.tensor([1.]), wgrad.tensor([0.]))
    tensor([1.])
    """
    return _float_pair(_igammac, input, other)


# ======================================================================================
# Special functions: log-gamma, digamma, polygamma, erfinv, erfc
# ======================================================================================

_SP = jax.scipy.special


def _digamma_fwd(self):
    # torch: digamma(+-0) = -+inf (JAX gives nan)
    return jnp.where(self == 0, jnp.copysign(jnp.inf, -self), _SP.digamma(self))


def _shifted_polygamma(n, x):
    """polygamma(n, x), n >= 1, through the recurrence psi_n(x) = psi_n(x + 1) - (-1)^n n! /
    x^(n+1) up to x >= 1: JAX's series is wrong far below 0 (polygamma(1, -8.3) off by 1%,
    as Cephes, torch's, sums until its argument is past 9)."""
    c = (-1.0) ** n * math.factorial(n)
    move = (x < 1) & jnp.isfinite(x) & ~((x <= 0) & (x == jnp.floor(x)))

    def body(state):
        y, acc = state
        m = move & (y < 1)
        acc = acc - jnp.where(m, c / jnp.where(m, y, 1) ** (n + 1), 0)
        return jnp.where(m, y + 1, y), acc
    y, acc = jax.lax.while_loop(lambda st: jnp.any(move & (st[0] < 1)), body,
                                (x, jnp.zeros_like(x)))
    return _SP.polygamma(n, y) + acc


def _polygamma_fwd(self, *, n):
    if n == 0:
        return _digamma_fwd(self)
    out = _shifted_polygamma(n, self)
    # the poles at 0, -1, -2, ...: +inf for odd n, -inf for even n; trigamma(inf) = 0
    pole = (self <= 0) & (self == jnp.floor(self))
    out = jnp.where(pole, jnp.inf if n % 2 else -jnp.inf, out)
    if n == 1:
        out = jnp.where(self == jnp.inf, 0, out)
    return out.astype(self.dtype)


def _lgamma_fwd(self):
    # in double precision where there is one, rounded once: JAX's float32 lgamma is off by
    # up to ~130 ulps (and not 0 at 1 and 2) where torch's lgammaf is within a few
    # (exactly 0 at 1 and 2, as the C library's: XLA's series leaves ~1e-15 there unoptimized)
    wide = jnp.float64 if D.X64_ENABLED else self.dtype
    out = _SP.gammaln(self.astype(wide)).astype(self.dtype)
    return jnp.where((self == 1) | (self == 2), jnp.zeros((), self.dtype), out)


_lgamma = Primitive("lgamma", _lgamma_fwd, self=lambda grad, self: grad * digamma(self))
_digamma = Primitive("digamma", _digamma_fwd,
                     self=lambda grad, self: grad * polygamma(1, self))
_polygamma = Primitive("polygamma", _polygamma_fwd,
                       self=lambda grad, self, n: grad * polygamma(n + 1, self))
_erfinv = Primitive(
    "erfinv", lambda self: _SP.erfinv(self),
    self=lambda grad, result: grad * (math.sqrt(math.pi) / 2) * (result * result).exp())
_erfc = Primitive(
    "erfc", lambda self: _SP.erfc(self),
    self=lambda grad, self: grad * (-2 / math.sqrt(math.pi)) * (-self * self).exp())


def _real_unary(prim, kernel, doc, name=None):
    """A unary float op of real inputs only (torch's error names its CPU ``kernel``),
    named ``name`` (by default its primitive's)."""
    def op(input):
        _real_only(kernel, input)
        return _unary_float(prim, input)
    op.__name__ = op.__qualname__ = name or prim.name
    op.__doc__ = doc
    return op


lgamma = _real_unary(_lgamma, "lgamma_vml_cpu",
                     "``log |Gamma(input)|``; its derivative is :func:`digamma`.")
digamma = _real_unary(_digamma, "digamma",
                      "The logarithmic derivative of Gamma; ``digamma(0) = -inf`` as torch.")
erfinv = _real_unary(_erfinv, "erfinv_vml_cpu",
                     "The inverse of :func:`erf` on (-1, 1); +-inf at +-1, nan outside.")
erfc = _real_unary(_erfc, "erfc_vml_cpu", "``1 - erf(input)``, accurate for large inputs.")


def polygamma(n, input):
    """The ``n``-th derivative of :func:`digamma` (also ``tensor.polygamma(n)``)."""
    if isinstance(n, Tensor) and not isinstance(input, Tensor):  # the Tensor method
        n, input = input, n
    if n < 0:
        raise RuntimeError("polygamma(n, x) does not support negative n.")
    _real_only({0: "digamma", 1: "trigamma"}.get(n, "polygamma"), input)
    return _unary_float(_polygamma, input, n=int(n))



# ======================================================================================
# More unary and binary math
# ======================================================================================

def _xlogy_fwd(self, other, *, dtype):
    x, y = _c(self, dtype), _c(other, dtype)
    return jnp.where(jnp.isnan(y), y, jnp.where(x == 0, jnp.zeros_like(x), x * jnp.log(y)))


# torch 2.13's formulas: d/dself = xlogy(grad, other), 0 where self == 0 and other <= 0
# (log(other) at self == 0 otherwise); d/dother = self / other (nan at 0/0)
def scalar_overload_names(base):
    """torch's node names of a binary op with Scalar overloads (``scalar_overload=True``):
    ``<base>Backward1`` where the first input is a number, ``Backward2`` where the second
    is, ``Backward0`` for two tensors."""
    def name(akey, in_meta):
        return base + ("1" if in_meta[0] is None else "2" if in_meta[1] is None else "0")
    return name


_xlogy = Primitive(
    "xlogy", _xlogy_fwd, scalar_overload=True,  # a number input: XlogyBackward1/2, as torch
    node_name_of=scalar_overload_names("XlogyBackward"),
    self=lambda grad, self, other: where((self == 0) & (other <= 0), 0., xlogy(grad, other)),
    other=lambda grad, self, other: grad * self / other)


def xlogy(input, other):
    """``input * log(other)``, 0 where ``input == 0`` (unless ``other`` is nan)."""
    _real_only("xlogy_cpu", input, other)
    return _binary(_xlogy, input, other, float_dtype(result_type(input, other)))


_fmod = Primitive(
    "fmod", lambda self, other, *, dtype: jnp.fmod(_c(self, dtype), _c(other, dtype)),
    self=lambda grad: grad,
    other=lambda grad, self, other: -grad * (self / other).trunc())


def fmod(input, other):
    """C's remainder: the result has the sign of ``input`` (see :func:`remainder`)."""
    _real_only("fmod_cpu", input, other)
    d = result_type(input, other)
    _check_int_divisor(d, other)
    return _binary(_fmod, input, other, d)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN, +inf and -inf replaced by ``nan``, ``posinf``, ``neginf`` (by default 0 and the
    dtype's largest and lowest finite values); the gradient passes where a value is kept."""
    if input.is_complex():
        if input.requires_grad and _state.grad:
            raise RuntimeError("nan_to_num does not support automatic differentiation for "
                               "outputs with complex dtype.")
        return complex(*(nan_to_num(p, nan, posinf, neginf) for p in (input.real,
                                                                      input.imag)))
    if not input.is_floating_point():
        return input.clone()
    info = jnp.finfo(_raw(input).dtype)
    out = where(input.isnan(), nan, input)
    out = where(input == math.inf, float(info.max) if posinf is None else posinf, out)
    return where(input == -math.inf, float(info.min) if neginf is None else neginf, out)


def _logit_fwd(self, *, eps):
    if eps is not None:
        self = jnp.clip(self, eps, 1 - eps)
    return jnp.log(self / (1 - self))


def _logit_backward(grad, self, eps):
    # torch's: nan outside [0, 1] without eps, 0 outside [eps, 1 - eps] with it
    if eps is None:
        out, fill = (self < 0) | (self > 1), math.nan
    else:
        out, fill = (self < eps) | (self > 1 - eps), 0.
    return where(out, fill, grad / (self * (1 - self)))


_logit = Primitive("logit", _logit_fwd, self=_logit_backward)


def logit(input, eps=None):
    """``log(p / (1 - p))``, with ``p`` clamped to ``[eps, 1 - eps]`` when ``eps`` is given."""
    _real_only("logit_cpu", input)
    return _unary_float(_logit, input, eps=None if eps is None else float(eps))


def _sinc_fwd(x):
    zero = x == 0
    px = jnp.where(zero, jnp.ones((), x.dtype), x) * jnp.asarray(math.pi, x.real.dtype)
    return jnp.where(zero, jnp.ones((), x.dtype), jnp.sin(px) / px)


def _sinc_derivative(self):
    """torch's: ``(pi x cos(pi x) - sin(pi x)) / (pi x^2)``, 0 at 0."""
    px = self * math.pi
    return where(self == 0, 0., (px * px.cos() - px.sin()) / (px * self))


_sinc = _unary("sinc", _sinc_fwd, holomorphic(_sinc_derivative))


def sinc(input):
    """``sin(pi x) / (pi x)``, 1 at 0 (gradient 0 there): one op, SincBackward0."""
    return _sinc(input)


_heaviside = Primitive(
    "heaviside", lambda self, values: jnp.where(
        self == 0, values, (self > 0).astype(self.dtype)).astype(self.dtype),
    self=no_derivative_formula("heaviside"), values=no_derivative_formula("heaviside"))


def heaviside(input, values):
    """0 where ``input < 0``, ``values`` where it is 0, 1 where it is positive."""
    if input.is_complex() or values.is_complex():
        raise RuntimeError("heaviside is not yet implemented for complex tensors.")
    if input.dtype is not values.dtype:
        raise RuntimeError("heaviside is not yet implemented for tensors with different "
                           "dtypes.")
    return _heaviside(input, values)


# torch's formulas: d/dself = result / self (0 at self == 0), d/dother = 0
_copysign = Primitive(
    "copysign", lambda self, other, *, dtype: jnp.copysign(_c(self, dtype), _c(other, dtype)),
    self=lambda grad, self, result: grad * where(self == 0, 0., result / self),
    other=_zero_grad)


def copysign(input, other):
    """``|input|`` with the sign (sign bit, -0.0 included) of ``other``."""
    _real_only("copysign_cpu", input, other)
    return _binary(_copysign, input, other, float_dtype(result_type(input, other)))


def _clamp_one(input, min, max, op):
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    input = _clamp_input(input, min, max)
    return _clamp(input, _clamp_bound(min, input.dtype), _clamp_bound(max, input.dtype),
                  op=op)


def clamp_min(input, min):
    """``clamp(input, min=min)`` (ClampMinBackward0/1)."""
    return _clamp_one(input, min, None, "min")


def clamp_max(input, max):
    """``clamp(input, max=max)`` (ClampMaxBackward0/1)."""
    return _clamp_one(input, None, max, "max")


def float_power(input, exponent):
    """:func:`pow` computed in double precision (complex128 if either side is complex)."""
    cplx = builtins.any(isinstance(t, builtins.complex)
                        or (isinstance(t, Tensor) and t.is_complex()) for t in (input, exponent))
    d = D.complex128 if cplx else D.float64
    input, exponent = (t.to(d) if isinstance(t, Tensor) else t for t in (input, exponent))
    return pow(input, exponent)


def logaddexp2(input, other):
    """``log2(2**input + 2**other)`` computed stably."""
    for t in (input, other):
        if not t.is_floating_point():
            raise NotImplementedError(f'"logaddexp2_cpu" not implemented for '
                                      f"'{t.dtype.scalar_name}'")
    m = maximum(input, other).detach()
    m = where(m.isfinite(), m, 0.)  # two infinities of one sign: no inf - inf
    return m + log2(exp2(input - m) + exp2(other - m))


def positive(input):
    """``input`` itself (``+input``)."""
    if input.dtype is D.bool:
        raise RuntimeError("The `+` operator, on a bool tensor is not supported.")
    return input


# ======================================================================================
# Non-differentiable: comparisons, predicates, rounding, bitwise
# ======================================================================================

_isin = Primitive("isin", lambda elements, test_elements, *, invert: jnp.isin(
    elements, test_elements, invert=invert))


def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of ``elements`` is in ``test_elements`` (no gradient).

    Example
    -------
    >>> wgrad.isin(wgrad.tensor([1, 2, 3]), wgrad.tensor([2]))
    tensor([False,  True, False])
    """
    return _isin(elements, test_elements, invert=bool(invert))


def _nondiff(name, fn, ordered=False, bits=False):
    """``ordered``: an order comparison (complex numbers have none: torch raises);
    ``bits``: a bitwise op (integers and bools only)."""
    prim = Primitive(name, fn)

    def op(input, other=None):
        if other is None:
            if bits:
                _kernel_rejects(f"{name}_cpu", "fc", input)
            return prim(input)
        d = result_type(input, other)
        if ordered and d.is_complex or bits and (d.is_complex or d.is_floating_point):
            raise NotImplementedError(f'"{name}_cpu" not implemented for '
                                      f"'{d.scalar_name}'")
        return prim(input, other, dtype=d.np)
    op.__name__ = name
    return op


def _cmp(fn):
    return lambda self, other, *, dtype: fn(_c(self, dtype), _c(other, dtype))


eq = _nondiff("eq", _cmp(jnp.equal))
ne = _nondiff("ne", _cmp(jnp.not_equal))
lt = _nondiff("lt", _cmp(jnp.less), ordered=True)
le = _nondiff("le", _cmp(jnp.less_equal), ordered=True)
gt = _nondiff("gt", _cmp(jnp.greater), ordered=True)
ge = _nondiff("ge", _cmp(jnp.greater_equal), ordered=True)
bitwise_and = _nondiff("bitwise_and", _cmp(jnp.bitwise_and), bits=True)
bitwise_or = _nondiff("bitwise_or", _cmp(jnp.bitwise_or), bits=True)
bitwise_xor = _nondiff("bitwise_xor", _cmp(jnp.bitwise_xor), bits=True)
bitwise_not = _nondiff("bitwise_not", lambda self: jnp.invert(self), bits=True)
logical_not = _nondiff("logical_not", lambda self: jnp.logical_not(self))
logical_and = _nondiff("logical_and", _cmp(jnp.logical_and))
logical_or = _nondiff("logical_or", _cmp(jnp.logical_or))
logical_xor = _nondiff("logical_xor", _cmp(jnp.logical_xor))
isnan = _nondiff("isnan", lambda self: jnp.isnan(self))
isinf = _nondiff("isinf", lambda self: jnp.isinf(self))
isfinite = _nondiff("isfinite", lambda self: jnp.isfinite(self))
isreal = _nondiff("isreal", lambda self: jnp.isreal(self))
signbit = _nondiff("signbit", lambda self: jnp.signbit(self))
_isposinf = _nondiff("isposinf", lambda self: jnp.isposinf(self))
_isneginf = _nondiff("isneginf", lambda self: jnp.isneginf(self))


def isposinf(input):
    if input.is_complex():
        raise RuntimeError("isposinf does not support complex inputs.")
    return _isposinf(input)


def isneginf(input):
    if input.is_complex():
        raise RuntimeError("isneginf does not support complex inputs.")
    return _isneginf(input)


def is_complex(input):
    return input.is_complex()


def is_floating_point(input):
    return input.is_floating_point()


# floor/ceil/round/trunc are piecewise constant: gradient 0, as torch
def _rounding(name, fn):
    prim = Primitive(name, lambda self: fn(self), self=_zero_grad)

    def op(input):
        if input.is_complex() and name != "round":
            raise NotImplementedError(f"{name} is not supported for complex inputs")
        _kernel_rejects(f"{name}_vml_cpu", "bc", input)
        return prim(input)
    op.__name__ = name
    return op


floor = _rounding("floor", jnp.floor)
ceil = _rounding("ceil", jnp.ceil)
trunc = _rounding("trunc", jnp.trunc)
_round_plain = _rounding("round", jnp.round)


def _round_dec_fwd(self, *, decimals):
    # torch's nearbyint(x * 10**d) / 10**d (d > 0), nearbyint(x / 10**-d) * 10**-d (d < 0),
    # each division a true one (as a product with the reciprocal, 27% of float32 differed)
    ten = jnp.asarray(10.0 ** builtins.abs(decimals), self.dtype)
    if decimals > 0:
        return true_quotient(jnp.round(self * ten), ten)
    return jnp.round(true_quotient(self, ten)) * ten


_round_dec = Primitive("round", _round_dec_fwd, node_name="RoundBackward1", self=_zero_grad)


def round(input, *, decimals=0):  # noqa: A001
    return _round_plain(input) if decimals == 0 else _round_dec(input, decimals=decimals)


_frac = Primitive("frac", lambda self: self - jnp.trunc(self), self=lambda grad: grad)


def frac(input):
    return _frac(input)


# ======================================================================================
# Integer and bit-level ops: gcd, lcm, shifts, frexp, ldexp, nextafter
# ======================================================================================

def _gcd_fwd(self, other, *, dtype):
    # Euclid's algorithm with C's truncating remainder, on |a| and |b| as torch computes
    # them (so the most negative value keeps its sign, as in torch)
    a, b = jnp.broadcast_arrays(jnp.abs(_c(self, dtype)), jnp.abs(_c(other, dtype)))

    def step(state):
        a, b = state
        live = a != 0
        return jnp.where(live, jax.lax.rem(b, jnp.where(live, a, 1)), a), jnp.where(live, a, b)
    return jax.lax.while_loop(lambda state: jnp.any(state[0] != 0), step, (a, b))[1]


def _lcm_fwd(self, other, *, dtype):
    a, b = _c(self, dtype), _c(other, dtype)
    g = _gcd_fwd(a, b, dtype=dtype)
    zero = g == 0
    return jnp.where(zero, 0, jnp.abs(jax.lax.div(a, jnp.where(zero, 1, g)) * b)).astype(dtype)


_gcd = Primitive("gcd", _gcd_fwd)
_lcm = Primitive("lcm", _lcm_fwd)


def _integer_dtype(kernel, d):
    """``d``, or torch's error where an integer kernel meets a bool, float or complex."""
    if d is D.bool or d.is_floating_point or d.is_complex:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{d.scalar_name}'")
    return d


def _tensor_pair(name, input, other):
    _check_tensor(name, "input", 1, input)
    _check_tensor(name, "other", 2, other)


def gcd(input, other):
    """The greatest common divisor of each pair of integers (non-negative; 0 with 0).

    Example
    -------
    >>> wgrad.gcd(wgrad.tensor([4, -6, 0]), wgrad.tensor([6, 9, 5]))
    tensor([2, 3, 5])
    """
    _tensor_pair("gcd", input, other)
    d = _integer_dtype("gcd_cpu", result_type(input, other))
    return _gcd(input, other, dtype=d.np)


def lcm(input, other):
    """The least common multiple of each pair of integers (0 if either is 0).

    Example
    -------
    >>> wgrad.lcm(wgrad.tensor([4, -6, 0]), wgrad.tensor([6, 9, 5]))
    tensor([12, 18,  0])
    """
    _tensor_pair("lcm", input, other)
    d = _integer_dtype("lcm_cpu", result_type(input, other))
    return _lcm(input, other, dtype=d.np)


# XLA's shifts agree with torch's out of range: a shift by a negative amount or by the
# width or more gives 0, or the sign (-1) for a right shift of a negative value
_lshift = Primitive("bitwise_left_shift", lambda self, other, *, dtype: jnp.left_shift(
    _c(self, dtype), _c(other, dtype)))
_rshift = Primitive("bitwise_right_shift", lambda self, other, *, dtype: jnp.right_shift(
    _c(self, dtype), _c(other, dtype)))


def _shift(prim, kernel, input, other):
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        a, b = type(input).__name__, type(other).__name__
        raise TypeError(f"{prim.name}() received an invalid combination of arguments - got "
                        f"({a}, {b}), but expected one of:\n"
                        f" * (Tensor input, Tensor other, *, Tensor out = None)\n"
                        f" * (Number self, Tensor other)\n"
                        f"      didn't match because some of the arguments have invalid "
                        f"types: (!{a}!, !{b}!)\n"
                        f" * (Tensor input, Number other, *, Tensor out = None)\n")
    d = _integer_dtype(kernel, result_type(input, other))
    return prim(input, other, dtype=d.np)


def bitwise_left_shift(input, other):
    """``input << other`` on integers: bits shifted out are lost, a shift by the width or
    more (or by a negative amount) gives 0.

    Example
    -------
    >>> wgrad.bitwise_left_shift(wgrad.tensor([1, 3]), 2)
    tensor([ 4, 12])
    """
    return _shift(_lshift, "lshift_cpu", input, other)


def bitwise_right_shift(input, other):
    """``input >> other`` on integers, arithmetic (the sign is kept) for signed types.

    Example
    -------
    >>> wgrad.bitwise_right_shift(wgrad.tensor([-8, 8]), 2)
    tensor([-2,  2])
    """
    return _shift(_rshift, "rshift_cpu", input, other)


frexp_result = collections.namedtuple("frexp", ["mantissa", "exponent"])

# mantissa bits and exponent bias of each floating dtype, and the unsigned type of its width
_FLOAT_LAYOUT = {"float64": (52, 1023, jnp.uint64), "float32": (23, 127, jnp.uint32),
                 "float16": (10, 15, jnp.uint16), "bfloat16": (7, 127, jnp.uint16)}


def _frexp_fwd(self):
    # from the bits: XLA on a CPU flushes subnormals to zero in arithmetic and comparisons
    # (jnp.frexp gives 0.5 * 2**-1074 for any subnormal double), so none is computed with
    mbits, bias, ut = _FLOAT_LAYOUT[self.dtype.name]
    width = self.dtype.itemsize * 8
    u = jax.lax.bitcast_convert_type(self, ut)
    mant_mask = ut((1 << mbits) - 1)
    biased = ((u >> mbits) & ut((1 << (width - 1 - mbits)) - 1)).astype(jnp.int32)
    sig = u & mant_mask
    # a subnormal is sig * 2**(1 - bias - mbits); with k the bit length of sig, its
    # mantissa is sig / 2**k and its exponent k + 1 - bias - mbits
    k = width - jax.lax.clz(sig).astype(jnp.int32)
    sub_sig = jnp.left_shift(sig, (mbits + 1 - k).astype(ut)) & mant_mask
    sub = biased == 0
    exponent = jnp.where(sub, k + 1 - bias - mbits, biased - bias + 1)
    bits = (u & ut(1 << (width - 1))) | ut((bias - 1) << mbits) | jnp.where(sub, sub_sig, sig)
    # inf, nan and +-0 (from the bits too: comparisons see a subnormal as 0)
    plain = (biased == (1 << (width - 1 - mbits)) - 1) | ((biased == 0) & (sig == 0))
    mantissa = jnp.where(plain, self, jax.lax.bitcast_convert_type(bits, self.dtype))
    return mantissa, jnp.where(plain, 0, exponent).astype(jnp.int32)


# torch's formula: d mantissa / d input = 2**-exponent
_frexp = Primitive("frexp", _frexp_fwd, nout=2, nondiff_outputs=(1,),
                   self=lambda grads, results: grads[0] / results[1].exp2())


def frexp(input, *, out=None):
    """``input`` as ``mantissa * 2**exponent`` with ``|mantissa|`` in [0.5, 1) (``(x, 0)``
    for 0, inf and nan); the exponent is int32. ``out``: a (mantissa, exponent) pair of
    ``input``'s dtype and int32.

    Example
    -------
    >>> wgrad.frexp(wgrad.tensor([8., -3.]))
    frexp(mantissa=tensor([ 0.5000, -0.7500]), exponent=tensor([4, 2], dtype=wgrad.int32))
    """
    _check_tensor("frexp", "input", 1, input)
    if not input.is_floating_point():
        raise RuntimeError("torch.frexp() only supports floating-point dtypes")
    result = frexp_result(*_frexp(input))
    return result if out is None else _frexp_into(input, result, out)


def _frexp_into(input, result, out):
    """``out=`` with torch's checks: frexp's outputs each have their own dtype, which
    NOTE [out= arguments]'s one rule per op cannot say."""
    if not (isinstance(out, (tuple, list)) and builtins.all(isinstance(o, Tensor)
                                                             for o in out)):
        raise TypeError(f"frexp(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if _state.grad and builtins.any(t.requires_grad for t in (input, *out)):
        raise RuntimeError("frexp(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    if len(out) == 2:
        m, e = out
        if m.dtype is not input.dtype:
            raise RuntimeError(f"torch.frexp() expects mantissa to have dtype "
                               f"{_CPP[input.dtype.name]} but got {_CPP[m.dtype.name]}")
        if e.dtype is not D.int32:
            raise RuntimeError(f"torch.frexp() expects exponent to have int dtype but got "
                               f"{_CPP[e.dtype.name]}")
    return apply_out("frexp", "frexp", ("exact", RuntimeError, None), result, out, (input,))


def _ldexp_fwd(self, other, *, dtype):
    # a power of two is exact from pow (not from exp2, an approximation on XLA's CPU)
    return _c(self, dtype) * jnp.power(jnp.asarray(2, dtype), _c(other, dtype))


# d/d input = 2**other, applied as ldexp of the gradient itself (exact, any exponent);
# d/d other = result * log(2)
_ldexp = Primitive(
    "ldexp", _ldexp_fwd,
    self=lambda grad, other: ldexp(grad, conj(other)),
    other=holomorphic(lambda result: result * _LN2))


def ldexp(input, other):
    """``input * 2**other``, in a floating dtype (integers give the default float).

    Example
    -------
    >>> wgrad.ldexp(wgrad.tensor([1., 3.]), wgrad.tensor([3, -1]))
    tensor([8.0000, 1.5000])
    """
    _tensor_pair("ldexp", input, other)
    d = float_dtype(result_type(input, other))
    return _ldexp(input, other, dtype=d.np)


# torch's formulas: the gradient passes to input unchanged, and other gets zero
_nextafter = Primitive(
    "nextafter", lambda self, other, *, dtype: jnp.nextafter(_c(self, dtype), _c(other, dtype)),
    self=lambda grad: grad, other=_zero_grad)


def nextafter(input, other):
    """The next representable value after ``input`` in the direction of ``other``.

    Example
    -------
    >>> wgrad.nextafter(wgrad.tensor([1.]), wgrad.tensor([2.])) > 1
    tensor([True])
    """
    _tensor_pair("nextafter", input, other)
    d = result_type(input, other)
    if not d.is_floating_point:
        raise NotImplementedError(f"\"nextafter_cpu\" not implemented for '{d.scalar_name}'")
    return _nextafter(input, other, dtype=d.np)


# ======================================================================================
# Bessel i0 and the multivariate log-gamma
# ======================================================================================

def _in_float32(fn):
    """``fn`` computed in float32 for the 16-bit floats (JAX's series lose digits there)."""
    def f(self):
        if self.dtype.itemsize < 4:
            return fn(self.astype(jnp.float32)).astype(self.dtype)
        return fn(self)
    return f


def _i1_slope(self, result):
    # d/dx i1(x) = i0(x) - i1(x) / x, 1/2 at 0 (a safe denominator: no 0/0 in its own
    # gradient)
    zero = self == 0
    return where(zero, 0.5, i0(self) - result / where(zero, 1., self))


_i1 = Primitive("special_i1", _in_float32(_SP.i1),
                self=lambda grad, self, result: grad * _i1_slope(self, result))
_i0 = Primitive("i0", _in_float32(_SP.i0), self=lambda grad, self: grad * _i1(self))


def i0(input):
    """The modified Bessel function of the first kind of order 0; its derivative is i1.

    Example
    -------
    >>> wgrad.i0(wgrad.tensor([0., 1.]))
    tensor([1.0000, 1.2661])
    """
    _check_tensor("i0", "input", 1, input)
    _real_only("i0_vml_cpu", input)
    return _unary_float(_i0, input)


def _mvlgamma_fwd(self, *, p):
    # in double precision where there is one: JAX's float32 lgamma is off by ~1e-6
    wide = jnp.float64 if D.X64_ENABLED else jnp.float32
    x = self.astype(wide)
    shifts = jnp.arange(p, dtype=wide) / 2
    out = jnp.sum(_SP.gammaln(x[..., None] - shifts), -1) + p * (p - 1) / 4 * math.log(math.pi)
    return out.astype(self.dtype)


def _mvdigamma(self, p):
    out = digamma(self)
    for i in range(1, p):
        out = out + digamma(self - i / 2)
    return out


_mvlgamma = Primitive("mvlgamma", _mvlgamma_fwd,
                      self=lambda grad, self, p: grad * _mvdigamma(self, p))


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension ``p``:
    ``sum_i lgamma(input - i/2) + p (p-1)/4 log(pi)`` over ``i < p``.

    Example
    -------
    >>> wgrad.mvlgamma(wgrad.tensor([2.5]), 1)
    tensor([0.2847])
    """
    return _unary_float(_mvlgamma, input, p=mvlgamma_args(input, p))


def mvlgamma_args(input, p):
    """``p`` as an int, once both arguments pass torch's checks (in torch's order)."""
    _check_tensor("mvlgamma", "input", 1, input)
    if isinstance(p, builtins.bool) or not hasattr(type(p), "__index__"):
        raise TypeError(f"mvlgamma(): argument 'p' (position 2) must be int, not "
                        f"{type(p).__name__}")
    if input.dtype is D.bool:
        raise RuntimeError("The input tensor may not be a boolean tensor.")
    p = p.__index__()
    if p < 1:
        raise RuntimeError("p has to be greater than or equal to 1")
    if input.is_complex():
        raise NotImplementedError(f"\"arange_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return p


# ======================================================================================
# torch's alias names
# ======================================================================================

arccos, arcsin, arctan = acos, asin, atan
arccosh, arcsinh, arctanh = acosh, asinh, atanh
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
fix = trunc
