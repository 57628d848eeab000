"""torch.special's own functions (those it does not share with the top level): the
normal distribution's ``ndtr``/``ndtri``/``log_ndtr``, ``erfcx``, ``entr``, the scaled
and first-order modified Bessel functions, ``xlog1py``, the Hurwitz ``zeta``, and the
functions torch computes without a derivative: Bessel and Airy functions (ops/_bessel.py)
and the classical orthogonal polynomials.
"""
import math

import jax
import jax.numpy as jnp

from .. import _dtype as D
from .._autograd.grad_mode import no_grad
from .._tensor import Tensor
from . import _bessel, _out
from ._primitive import Primitive
from ._promote import result_type
from ._promote import float_dtype
from .elementwise import (_as_float, _i1, _in_float32, _no_derivative, _real_only, erf,
                          scalar_overload_names, where)
from .elementwise import _real_unary as _E_real_unary

__all__ = []  # torch.special's namespace only (wgrad.special): none at the top level
METHODS = ()
SPECIAL = ("airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1",
           "chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
           "chebyshev_polynomial_w", "entr", "erfcx", "hermite_polynomial_h",
           "hermite_polynomial_he", "i0e", "i1", "i1e", "laguerre_polynomial_l",
           "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0", "modified_bessel_i1",
           "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
           "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
           "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
           "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
           "spherical_bessel_j0", "xlog1py", "zeta")

# NOTE [Special functions]
# Values follow torch's algorithms (Cephes' for the Bessel functions and ``zeta``, in the
# accumulation precision torch uses: ``zeta`` of float32 in double, as torch's CPU kernel),
# and every formula is torch's derivative (derivatives.yaml): ``zeta`` has none in its first
# argument, ``ndtr`` is torch's composite ``(1 + erf(x / sqrt 2)) / 2`` (its grad_fn is a
# MulBackward1, as torch's). The functions torch marks non-differentiable (Bessel, Airy,
# ``modified_bessel_*``, the polynomials) give results that do not require grad, as
# torch's. ``erfcx`` is not JAX's (which underflows to 0 from x ~ 26.5 and loses accuracy
# before): ``exp(x^2) erfc(x)`` with x^2 split exactly below 5, a continued fraction from 5.
# tests/test_special.py compares values, gradients and grad_fn names with torch.
_SP = jax.scipy.special
_SQRT_2PI = math.sqrt(2 * math.pi)


def _wide():
    """The accumulation dtype: float64 where JAX has it."""
    return jnp.float64 if D.X64_ENABLED else jnp.float32


# -- entr, erfcx, log_ndtr, ndtr, ndtri ---------------------------------------------------

def _entr_fwd(self):
    # torch: nan stays nan, -x log x above 0, 0 at 0, -inf below
    pos = self > 0
    v = -self * jnp.log(jnp.where(pos, self, 1))
    return jnp.where(pos, v, jnp.where(self == 0, 0, jnp.where(self < 0, -jnp.inf, self))
                     ).astype(self.dtype)


def _erfcx_pos(x):
    """erfcx of a float64 array (float32 without x64) at x >= 0, to ~2 ulp: ``exp(x^2)
    erfc(x)`` with x^2 split exactly below 5, erfc's continued fraction from 5."""
    small = x < 5
    xs = jnp.where(small, x, 0)
    hi = xs.astype(jnp.float32).astype(x.dtype)  # 24 bits: hi * hi is exact in double
    lo = xs - hi
    direct = jnp.exp(hi * hi) * jnp.exp((2 * hi + lo) * lo) * _SP.erfc(xs)
    xl = jnp.where(small, 5, x)
    f = xl
    for k in range(30, 0, -1):  # from its tail
        f = xl + (k / 2) / f
    return jnp.where(small, direct, 1 / (math.sqrt(math.pi) * f))


def _erfcx_fwd(self):
    # below 0 torch's 2 exp(x^2) - erfcx(-x), with x^2 rounded in the input's dtype as there
    x = self.astype(_wide())
    xx = (self * self).astype(x.dtype)
    pos = _erfcx_pos(jnp.abs(x))
    out = jnp.where(x < 0, 2 * jnp.exp(jnp.where(x < 0, xx, 0)) - pos, pos)
    out = jnp.where(x < -26.7, jnp.inf, jnp.where(jnp.isnan(x), x, out))
    return out.astype(self.dtype)


def _log_ndtr_fwd(self):
    # torch's calc_log_ndtr: log(erfcx(-t) / 2) - t^2 below -1, else log1p(-erfc(t) / 2)
    x = self.astype(_wide())
    t = x * (1 / math.sqrt(2))
    low = x < -1
    tl = jnp.where(low, t, -1)
    out = jnp.where(low, jnp.log(_erfcx_pos(-tl) / 2) - tl * tl,
                    jnp.log1p(-_SP.erfc(t) / 2))
    return out.astype(self.dtype)


_entr = Primitive("special_entr", _entr_fwd,
                  self=lambda grad, self: grad * -(1 + self.log()))
_erfcx = Primitive(
    "special_erfcx", _erfcx_fwd,
    self=lambda grad, self, result: (2 * self * result - 2 / math.sqrt(math.pi)) * grad)
_log_ndtr = Primitive(
    "special_log_ndtr", _log_ndtr_fwd,
    self=lambda grad, self, result: grad / _SQRT_2PI * (-(result + self.pow(2) / 2)).exp())
_ndtri = Primitive(
    "special_ndtri", _in_float32(_SP.ndtri),
    self=lambda grad, result: grad * _SQRT_2PI * (result.square() / 2).exp())


def _real_unary(prim, kernel, doc, example):
    """elementwise's real-only unary op, named without ``special_``, its doc with an
    example."""
    return _E_real_unary(prim, kernel, f"{doc}\n\n    Example\n    -------\n    {example}"
                         f"\n    ", prim.name[len("special_"):])


entr = _real_unary(_entr, "entr_cpu", "``-x log x`` (0 at 0, -inf below 0).",
                   ">>> wgrad.special.entr(wgrad.tensor([0.5]))\n    tensor([0.3466])")
erfcx = _real_unary(_erfcx, "erfcx_cpu", "The scaled complementary error function "
                    "``exp(x^2) erfc(x)``.",
                    ">>> wgrad.special.erfcx(wgrad.tensor([0.]))\n    tensor([1.])")
log_ndtr = _real_unary(_log_ndtr, "log_ndtr_cpu", "The log of the standard normal CDF, "
                       "accurate far into the lower tail.",
                       ">>> wgrad.special.log_ndtr(wgrad.tensor([0.]))\n"
                       "    tensor([-0.6931])")
ndtri = _real_unary(_ndtri, "ndtri_cpu", "The inverse of the standard normal CDF.",
                    ">>> wgrad.special.ndtri(wgrad.tensor([0.5]))\n    tensor([0.])")


# torch's ndtr is a composite of the Scalar overloads of mul and add (MulBackward1,
# AddBackward1) around erf
_mul_scalar = Primitive("mul_scalar", lambda self, *, other: self * other,
                        node_name="MulBackward1", self=lambda grad, other: grad * other)
_add_scalar = Primitive("add_scalar", lambda self, *, other: self + other,
                        node_name="AddBackward1", self=lambda grad: grad)


def ndtr(input):
    """The standard normal CDF, as torch's composite ``(1 + erf(x / sqrt 2)) * 0.5``.

    Example
    -------
    >>> wgrad.special.ndtr(wgrad.tensor([0.]))
    tensor([0.5000])
    """
    x = _mul_scalar(_as_float(input), other=1 / math.sqrt(2))
    return _mul_scalar(_add_scalar(erf(x), other=1.0), other=0.5)


# -- exponentially scaled and first-order modified Bessel functions ---------------------

def _i1e_slope(self, result):
    # d/dx i1e(x) = i0e(x) - i1e(x) (sgn x + 1/x), 1/2 at 0
    zero = self == 0
    return where(zero, 0.5, i0e(self) - result * (self.sgn() + 1 / where(zero, 1., self)))


_i0e = Primitive("special_i0e", _in_float32(_SP.i0e),
                 self=lambda grad, self, result: grad * (i1e(self) - self.sgn() * result))
_i1e = Primitive("special_i1e", _in_float32(_SP.i1e),
                 self=lambda grad, self, result: grad * _i1e_slope(self, result))
i0e = _real_unary(_i0e, "i0e_cpu", "``exp(-|x|) i0(x)``.",
                  ">>> wgrad.special.i0e(wgrad.tensor([1.]))\n    tensor([0.4658])")
i1 = _real_unary(_i1, "i1_cpu", "The modified Bessel function of the first kind of order 1.",
                 ">>> wgrad.special.i1(wgrad.tensor([0.]))\n    tensor([0.])")
i1e = _real_unary(_i1e, "i1e_cpu", "``exp(-|x|) i1(x)``.",
                  ">>> wgrad.special.i1e(wgrad.tensor([0.]))\n    tensor([0.])")


# -- xlog1py and zeta -------------------------------------------------------------------

def _xlog1py_fwd(self, other, *, dtype):
    x, y = jnp.asarray(self, dtype), jnp.asarray(other, dtype)
    return jnp.where(jnp.isnan(y), y, jnp.where(x == 0, jnp.zeros_like(x), x * jnp.log1p(y)))


# torch's formulas: d/dself = xlog1py(grad, other), 0 where self == 0 and other <= -1;
# d/dother = self / (other + 1)
_xlog1py = Primitive(
    "special_xlog1py", _xlog1py_fwd, scalar_overload=True,
    node_name_of=scalar_overload_names("SpecialXlog1PyBackward"),
    self=lambda grad, self, other: where((self == 0) & (other <= -1), 0.,
                                         xlog1py(grad, other)),
    other=lambda grad, self, other: grad * self / (other + 1))

# Cephes' Euler-Maclaurin coefficients (2k)! / B_2k, as torch's zeta
_ZETA_A = (12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
           7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
           -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18)
_MACHEP = 1.11022302462515654042e-16


def _zeta_fwd(self, other, *, dtype):
    """The Hurwitz zeta function by torch's (Cephes') algorithm, element by element: a
    direct sum until its terms are negligible or past the ninth with ``q + i > 9``, then
    Euler-Maclaurin's tail; in the accumulation precision (float64 for float32, as torch's
    CPU kernel)."""
    wide = _wide() if jnp.dtype(dtype).itemsize < 8 else dtype
    x, q = jnp.broadcast_arrays(jnp.asarray(self, wide), jnp.asarray(other, wide))
    special = (x <= 1) | ((q <= 0) & ((q == jnp.floor(q)) | (x != jnp.floor(x))))

    def active(i, a, conv):
        return ~conv & ((i < 9) | (a <= 9))

    def body(st):
        i, a, b, s, conv = st
        go = active(i, a, conv)
        a = jnp.where(go, a + 1, a)
        term = a ** -x
        b = jnp.where(go, term, b)
        s = jnp.where(go, s + term, s)
        conv = conv | (go & (-_MACHEP * s < term) & (term < _MACHEP * s))
        return i + 1, a, b, s, conv

    # an element leaves the sum converged, or with its last term b at a = q + i
    _, a, b, s, conv = jax.lax.while_loop(
        lambda st: jnp.any(active(st[0], st[1], st[4])), body,
        (0, q, jnp.zeros_like(x), q ** -x, special))
    tail = ~conv
    w = a
    s = jnp.where(tail, s + b * w / (x - 1) - 0.5 * b, s)
    aa, k = jnp.ones_like(x), jnp.zeros_like(x)
    for c in _ZETA_A:
        aa = aa * (x + k)
        b = b / w
        t = aa * b / c
        s = jnp.where(tail, s + t, s)
        tail = tail & ~(jnp.abs(t / s) < _MACHEP)
        k = k + 1
        aa = aa * (x + k)
        b = b / w
        k = k + 1
    s = jnp.where((q <= 0) & (x != jnp.floor(x)), jnp.nan, s)
    s = jnp.where((q <= 0) & (q == jnp.floor(q)), jnp.inf, s)
    s = jnp.where(x < 1, jnp.nan, s)
    s = jnp.where(x == 1, jnp.inf, s)
    return s.astype(dtype)


_zeta = Primitive(
    "special_zeta", _zeta_fwd, scalar_overload=True,
    node_name_of=scalar_overload_names("SpecialZetaBackward"),
    self=_no_derivative("zeta"),
    other=lambda grad, self, other: grad * -self * zeta(self + 1., other))


def _float_result(aten, input, other, names=("input", "other", "self")):
    """The floating result dtype of a binary special function (integers: the default
    float dtype); torch's error where neither argument is a tensor (``names``: its
    overloads' parameter names, the first argument's again for the Number one)."""
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        a, b, n = names
        raise TypeError(
            f"{aten}() received an invalid combination of arguments - got "
            f"({type(input).__name__}, {type(other).__name__}), but expected one of:\n"
            f" * (Tensor {a}, Tensor {b}, *, Tensor out = None)\n"
            f" * (Number {n}, Tensor {b}, *, Tensor out = None)\n"
            f" * (Tensor {a}, Number {b}, *, Tensor out = None)\n")
    return float_dtype(result_type(input, other))


def xlog1py(input, other):
    """``input * log1p(other)``, 0 where ``input == 0`` (unless ``other`` is nan).

    Example
    -------
    >>> wgrad.special.xlog1py(wgrad.tensor([0., 2.]), wgrad.tensor([1., 1.]))
    tensor([0.0000, 1.3863])
    """
    _real_only("xlog1py_cpu", input, other)
    return _xlog1py(input, other, dtype=_float_result("special_xlog1py", input, other).np)


def zeta(input, other):
    """The Hurwitz zeta function ``sum_k (other + k)^-input``; differentiable in ``other``
    only, as torch.

    Example
    -------
    >>> wgrad.special.zeta(wgrad.tensor([2.]), wgrad.tensor([1.]))
    tensor([1.6449])
    """
    _real_only("zeta_cpu", input, other)
    return _zeta(input, other, dtype=_float_result("special_zeta", input, other).np)


# -- the functions torch computes without a derivative ------------------------------------

def _nondiff_unary(name, fn):
    prim = Primitive(name, _in_float32(fn))

    def op(input):
        _real_only(name + "_cpu", input)
        with no_grad():  # torch: the result does not require grad
            return prim(_as_float(input))
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.special.{name}: computed without a derivative, as torch's (the "
                  f"result does not require grad).")
    return op


def _nondiff_binary(name, fn):
    prim = Primitive(name, lambda self, n, *, dtype: fn(jnp.asarray(self, dtype),
                                                         jnp.asarray(n, dtype)))

    def op(input, n):
        _real_only(name + "_cpu", input, n)
        d = _float_result("special_" + name, input, n, ("x", "n", "x"))
        with no_grad():  # torch: the result does not require grad
            return prim(input, n, dtype=d.np)
    op.__name__ = op.__qualname__ = name
    op.__doc__ = (f"torch.special.{name}(input, n): the polynomial of degree ``n`` (an "
                  f"integer, or a tensor of them) at ``input``; no derivative, as torch's.")
    return op


modified_bessel_i0 = _nondiff_unary("modified_bessel_i0", _SP.i0)
modified_bessel_i1 = _nondiff_unary("modified_bessel_i1", _SP.i1)
for _name in ("bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "modified_bessel_k0",
              "modified_bessel_k1", "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
              "airy_ai", "spherical_bessel_j0"):
    globals()[_name] = _nondiff_unary(_name, getattr(_bessel, _name))
for _name in ("chebyshev_polynomial_t", "chebyshev_polynomial_u", "chebyshev_polynomial_v",
              "chebyshev_polynomial_w", "shifted_chebyshev_polynomial_t",
              "shifted_chebyshev_polynomial_u", "shifted_chebyshev_polynomial_v",
              "shifted_chebyshev_polynomial_w", "hermite_polynomial_h",
              "hermite_polynomial_he", "laguerre_polynomial_l", "legendre_polynomial_p"):
    globals()[_name] = _nondiff_binary(_name, getattr(_bessel, _name))
del _name
_out.install(globals(), "special")  # NOTE [out= arguments]
