"""torch.special: special functions.

The functions torch.special shares with the top level are the same ops here (the same
values, gradients and ``grad_fn`` as in torch, where ``special.expit`` is ``sigmoid``,
``special.gammaln`` is ``lgamma``, ``special.multigammaln`` is ``mvlgamma``...); its own
(``ndtr``, ``erfcx``, ``zeta``, the Bessel functions, the orthogonal polynomials...) are in
ops/special.py (NOTE [Special functions]).

Example
-------
>>> import wgrad
>>> wgrad.special.expit(wgrad.tensor([0.0]))
tensor([0.5000])
"""
from . import ops as _ops
from .ops.special import (  # noqa: F401  (torch.special's own functions)
    SPECIAL as _SPECIAL, airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1,
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, entr, erfcx, hermite_polynomial_h, hermite_polynomial_he, i0e, i1,
    i1e, laguerre_polynomial_l, legendre_polynomial_p, log_ndtr, modified_bessel_i0,
    modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, ndtr, ndtri,
    scaled_modified_bessel_k0, scaled_modified_bessel_k1, shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w, spherical_bessel_j0, xlog1py, zeta)

__all__ = ["digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc",
           "gammaincc", "gammaln", "i0", "log1p", "log_softmax", "logit", "logsumexp",
           "multigammaln", "polygamma", "psi", "round", "sinc", "softmax", "xlogy"]

digamma = psi = _ops.digamma
erf, erfc, erfinv = _ops.erf, _ops.erfc, _ops.erfinv
exp2, expm1, log1p = _ops.exp2, _ops.expm1, _ops.log1p
expit = _ops.sigmoid
gammainc, gammaincc = _ops.igamma, _ops.igammac
gammaln = _ops.lgamma
i0 = _ops.i0
log_softmax, softmax, logsumexp = _ops.log_softmax, _ops.softmax, _ops.logsumexp
logit = _ops.logit
multigammaln = _ops.mvlgamma
polygamma = _ops.polygamma
round = _ops.round  # noqa: A001 (torch.special.round)
sinc = _ops.sinc
xlogy = _ops.xlogy

__all__ += list(_SPECIAL)
