"""Pure jax.numpy kernels for the reparameterized gradients of gamma and Dirichlet draws.

``standard_gamma_grad(alpha, x)`` is d x / d alpha for a draw ``x`` of Gamma(alpha, 1), and
``dirichlet_grad(x, alpha, total)`` the scaled derivative of a Beta(alpha, total - alpha)
draw that torch builds its Dirichlet gradient from. Both follow torch's CPU kernels
(``standard_gamma_grad_one`` and ``dirichlet_grad_one`` in
aten/src/ATen/native/Distributions.h) branch for branch: a series for small ``x``, a Rice
saddle point expansion for large parameters and a rational approximation between them.
Every branch is computed on the whole array and the results picked with ``jnp.where``.

Precision follows torch's template too: its CPU kernels accumulate in double, also for
float32 inputs, except where the C++ keeps ``scalar_t`` (the small-``x`` Beta series and
the argument arithmetic of ``digamma_one``), which run here in the input's dtype. Without
JAX's x64 mode the double parts run in float32. C++ float literals (``0.8f``) are compared
at their float32 values. So that the float32 series round as torch's do, three of XLA's
liberties are undone there: its float32 log, pow and tan (``_libm``), its division by a
constant (``_div``) and its fusion of a product into the sum it feeds (``_rounded``).
"""
import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D

__all__ = ["standard_gamma_grad", "dirichlet_grad"]


def _acc():
    """torch's CPU accumulation type, double (float32 without x64 mode)."""
    return jnp.float64 if D.X64_ENABLED else jnp.float32


def _libm(fn, *args):
    """``fn`` of float32 arrays computed in double and rounded once, nearly always the C
    library's float result (XLA's own float32 functions differ from it in more last bits,
    which the cancellations of the Beta series magnify)."""
    dt = args[0].dtype
    if dt == jnp.float64 or not D.X64_ENABLED:
        return fn(*args)
    return fn(*(a.astype(jnp.float64) for a in args)).astype(dt)


def _div(a, n):
    """``a / n`` for an integer ``n``, rounded as a division: XLA turns a division by a
    constant into a product with its reciprocal, which rounds float32 differently (so the
    float32 quotient is taken in double, where that is exact after rounding)."""
    if a.dtype == jnp.float32 and D.X64_ENABLED:
        return (a.astype(jnp.float64) / n).astype(jnp.float32)
    return a / n


def _rounded(p):
    """The product ``p``, rounded before the sum it feeds: XLA's CPU code fuses a product
    and a sum into one fused multiply-add, which rounds once where torch's code rounds
    twice (this select, which keeps every value, keeps them apart)."""
    return jnp.where(p != p, jnp.nan, p)


def _f(v):
    """The value of the C++ float literal ``v``f, as a (weakly typed) Python float."""
    return float(np.float32(v))


# -- digamma_one ----------------------------------------------------------------------
_PSI_10 = 2.25175258906672110764
_DIGAMMA_A = (8.33333333333333333333e-2, -2.10927960927960927961e-2,
              7.57575757575757575758e-3, -4.16666666666666666667e-3,
              3.96825396825396825397e-3, -8.33333333333333333333e-3,
              8.33333333333333333333e-2)


def _digamma(x, acc):
    """torch's ``digamma_one<scalar_t, accscalar_t>``: the reflection, the shift of the
    argument to >= 10, its log and ``0.5 / x`` in ``x``'s dtype, the sums in ``acc``; the
    result in ``x``'s dtype (+inf at 0 and the negative integers)."""
    neg = x < 0
    pole = (x == 0) | (neg & (x == jnp.floor(x)))
    extra = jnp.where(neg, -math.pi / _libm(jnp.tan, math.pi * x), 0).astype(acc)
    x = jnp.where(neg, 1 - x, x)
    result = jnp.zeros(x.shape, acc)
    for _ in range(10):  # from above 0 to 10 in at most ten steps of 1
        low = x < 10
        result = jnp.where(low, result - (1 / x).astype(acc), result)
        x = jnp.where(low, x + 1, x)
    z = 1.0 / (x * x).astype(acc)
    poly = jnp.zeros(x.shape, acc)
    for c in _DIGAMMA_A:
        poly = poly * z + c
    y = jnp.where(x < _f(1e17), z * poly, 0)
    big = result + _libm(jnp.log, x).astype(acc) - (0.5 / x).astype(acc) - y + extra
    out = jnp.where(x == 10, result + _PSI_10 + extra, big)
    return jnp.where(pole, jnp.inf, out).astype(x.dtype)


# -- standard_gamma_grad_one ------------------------------------------------------------
_GAMMA_UV = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _gamma_taylor(a, x, acc):
    """Small ``x``: -(d/da cdf) / pdf from the first six terms of the incomplete gamma
    series (0 where that is NaN)."""
    numer = jnp.ones_like(x)
    denom = a
    series1 = numer / denom
    series2 = numer / (denom * denom)
    for i in range(1, 6):
        numer = numer * (-x / i)
        denom = denom + 1
        series1 = series1 + numer / denom
        series2 = series2 + numer / (denom * denom)
    pow_x_a = jnp.power(x, a)
    pdf = jnp.power(x, a - 1) * jnp.exp(-x)
    cdf = pow_x_a * series1
    cdf_a = (jnp.log(x) - _digamma(a, acc)) * cdf - pow_x_a * series2
    out = -cdf_a / pdf
    return jnp.where(jnp.isnan(out), 0, out)


def _gamma_rice(a, x):
    """Large ``a``: Rice's saddle point expansion, a polynomial near ``x = a``."""
    numer_1 = 1 + 24 * a * (1 + 12 * a)
    numer_2 = 1440 * (a * a) + 6 * x * (53 - 120 * x) - 65 * x * x / a + a * (107 + 3600 * x)
    near = numer_1 * numer_2 / (1244160 * (a * a) * (a * a))
    denom = jnp.sqrt(8 * a)
    log_xa = jnp.log(x / a)
    term2 = denom / (a - x)
    term3 = jnp.power(x - a - a * log_xa, -1.5)
    term23 = jnp.where(x < a, term2 - term3, term2 + term3)
    term1 = log_xa * term23 - jnp.sqrt(2 / a) * (a + x) / ((a - x) * (a - x))
    stirling = 1 + 1 / (12 * a) * (1 + 1 / (24 * a))
    far = -stirling * (x * term1) / denom
    return jnp.where((_f(0.9) * a <= x) & (x <= _f(1.1) * a), near, far)


def _gamma_rational(a, x):
    """Elsewhere: a bivariate rational approximation in log(x / a) and log(a)."""
    u = jnp.log(x / a)
    v = jnp.log(a)
    c = [c0 + u * (c1 + u * c2) for c0, c1, c2 in zip(*_GAMMA_UV)]
    p = c[0] + v * (c[1] + v * (c[2] + v * c[3]))
    q = c[4] + v * (c[5] + v * (c[6] + v * c[7]))
    return jnp.exp(p / q)


def standard_gamma_grad(alpha, x):
    """d x / d alpha for draws ``x`` of Gamma(``alpha``, 1): torch's
    ``standard_gamma_grad_one`` (in double), elementwise and broadcast, in ``x``'s dtype."""
    alpha, x = jnp.broadcast_arrays(alpha, x)
    dt, acc = x.dtype, _acc()
    a, x = alpha.astype(acc), x.astype(acc)
    out = jnp.where(x < _f(0.8), _gamma_taylor(a, x, acc),
                    jnp.where(a > 8, _gamma_rice(a, x), _gamma_rational(a, x)))
    return out.astype(dt)


# -- dirichlet_grad_one -----------------------------------------------------------------
def _beta_grad_alpha_small(x, alpha, beta, factor):
    """Small ``x``: a Taylor series (torch computes it in the input's dtype); ``factor`` is
    digamma(alpha) - digamma(alpha + beta) - log(x)."""
    numer = jnp.ones_like(x)
    series = numer / alpha * (factor + 1 / alpha)
    for i in range(1, 11):
        numer = numer * _div((i - beta) * x, i)
        denom = alpha + i
        series = series + _rounded(numer / denom * (factor + 1 / denom))
    out = x * _libm(jnp.power, 1 - x, -beta) * series
    return jnp.where(jnp.isnan(out), 0, out)


def _beta_grad_beta_small(x, alpha, beta, factor):
    """The derivative in ``beta`` for small ``x``: a Taylor series (input dtype);
    ``factor`` is digamma(alpha + beta) - digamma(beta)."""
    numer = jnp.ones_like(x)
    betas = jnp.ones_like(x)
    dbetas = jnp.zeros_like(x)
    series = factor / alpha
    for i in range(1, 9):
        numer = numer * _div(-x, i)
        dbetas = _rounded(dbetas * (beta - i)) + betas
        betas = betas * (beta - i)
        series = series + _rounded(numer / (alpha + i) * (dbetas + _rounded(factor * betas)))
    out = -_libm(jnp.power, 1 - x, 1 - beta) * series
    return jnp.where(jnp.isnan(out), 0, out)


def _beta_grad_alpha_mid(x, alpha, beta):
    """Large ``alpha`` and ``beta``: Rice's saddle point expansion, a polynomial near the
    mean (all in double)."""
    total = alpha + beta
    mean = alpha / total
    std = jnp.sqrt(alpha * beta / (total + 1)) / total
    a, b = alpha, beta
    poly = 47 * x * (b * b) * (b * b) + a * (
        (43 + 20 * (16 + 27 * b) * x) * (b * b) * b + a * (
            3 * (59 + 180 * b - 90 * x) * (b * b) + a * (
                (453 + 1620 * b * (1 - x) - 455 * x) * b + a * (
                    8 * (1 - x) * (135 * b - 11)))))
    prefactor_num = (1 + 12 * a) * (1 + 12 * b) / (total * total)
    prefactor_den = 12960 * a * a * a * b * b * (1 + 12 * total)
    near = prefactor_num / (1 - x) * poly / prefactor_den
    prefactor = -x / jnp.sqrt(2 * a * b / total)
    stirling = ((1 + 1 / (12 * a) + 1 / (288 * a * a))
                * (1 + 1 / (12 * b) + 1 / (288 * b * b))
                / (1 + 1 / (12 * total) + 1 / (288 * total * total)))
    term1_num = 2 * (a * a) * (x - 1) + a * b * (x - 1) - x * (b * b)
    axbx = a * (x - 1) + b * x
    term1_den = jnp.sqrt(2 * a / b) * jnp.power(total, 1.5) * axbx * axbx
    term1 = term1_num / term1_den
    term2 = 0.5 * jnp.log(a / (total * x))
    term3 = jnp.sqrt(8 * a * b / total) / (b * x + a * (x - 1))
    term4_base = b * jnp.log(b / (total * (1 - x))) + a * jnp.log(a / (total * x))
    term4 = jnp.power(term4_base, -1.5)
    term1234 = term1 + term2 * (term3 + jnp.where(x < mean, term4, -term4))
    far = stirling * prefactor * term1234
    return jnp.where((mean - 0.1 * std <= x) & (x <= mean + 0.1 * std), near, far)


# c[0] (numerator) and c[1] (denominator) of the rational correction, [i][j][k] the
# coefficient of log(x)^i log(alpha / x)^j b^k
_DIRICHLET_C = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _dirichlet_rational(x_, alpha_, total_, beta_, digammas, acc):
    """Elsewhere: a rational correction to x (digamma(total) - digamma(alpha)) / beta,
    that difference ``digammas`` in the input's dtype (torch's digammas take and return
    it, and subtract in it)."""
    u = jnp.log(x_)
    la = jnp.log(alpha_) - u
    lb = jnp.log(total_) - la
    pow_u = (1, u, u * u)
    pow_a = (1, la, la * la)
    p = q = jnp.zeros(x_.shape, acc)
    for i in range(3):
        for j in range(3):
            ua = pow_u[i] * pow_a[j]
            cp, cq = _DIRICHLET_C[0][i][j], _DIRICHLET_C[1][i][j]
            p = p + ua * (cp[0] + lb * (cp[1] + lb * (cp[2] + lb * cp[3])))
            q = q + ua * (cq[0] + lb * (cq[1] + lb * (cq[2] + lb * cq[3])))
    approx = x_ * digammas.astype(acc) / beta_
    return p / q * approx


def dirichlet_grad(x, alpha, total):
    """torch's ``dirichlet_grad_one``: -(d/d alpha cdf(x)) / pdf(x) / (1 - x) for draws
    ``x`` of Beta(``alpha``, ``total - alpha``), elementwise and broadcast, in ``x``'s
    dtype."""
    x, alpha, total = jnp.broadcast_arrays(x, alpha, total)
    dt, acc = x.dtype, _acc()
    x_, alpha_, total_ = (v.astype(acc) for v in (x, alpha, total))
    beta = total - alpha
    beta_ = total_ - alpha_
    boundary = total * x * (1 - x)
    dg_a, dg_ab, dg_t = (_digamma(v, acc) for v in (alpha, alpha + beta, total))
    small_a = _beta_grad_alpha_small(x, alpha, beta, dg_a - dg_ab - _libm(jnp.log, x))
    # torch calls the beta series with the parameters swapped: digamma(beta + alpha) -
    # digamma(alpha) is its factor
    small_b = -_beta_grad_beta_small(1 - x, beta, alpha, dg_ab - dg_a)
    mid = _beta_grad_alpha_mid(x_, alpha_, beta_).astype(dt)
    rational = _dirichlet_rational(x_, alpha_, total_, beta_, dg_t - dg_a, acc).astype(dt)
    return jnp.where((x <= 0.5) & (boundary < 2.5), small_a,
                     jnp.where((x >= 0.5) & (boundary < 0.75), small_b,
                               jnp.where((alpha > 6) & (beta > 6), mid, rational)))
