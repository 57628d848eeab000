"""torch.special: special functions.

The functions torch.special shares with the top level are the same ops here (the same
values, gradients and ``grad_fn`` as in torch, where ``special.expit`` is ``sigmoid``,
``special.gammaln`` is ``lgamma``, ``special.multigammaln`` is ``mvlgamma``...). The
others (Bessel functions, orthogonal polynomials, ``ndtr``, ``entr``, ``zeta``...) are not
implemented yet: calling one raises ``NotImplementedError`` (docs/differences.md).

Example
-------
>>> import wgrad
>>> wgrad.special.expit(wgrad.tensor([0.0]))
tensor([0.5000])
"""
from . import ops as _ops

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

# torch.special's other functions: present, so that code probing for them finds them, and
# raising where called (docs/differences.md, "torch.special")
NOT_IMPLEMENTED = (
    "airy_ai", "bessel_j0", "bessel_j1", "bessel_y0", "bessel_y1", "chebyshev_polynomial_t",
    "chebyshev_polynomial_u", "chebyshev_polynomial_v", "chebyshev_polynomial_w", "entr",
    "erfcx", "hermite_polynomial_h", "hermite_polynomial_he", "i0e", "i1", "i1e",
    "laguerre_polynomial_l", "legendre_polynomial_p", "log_ndtr", "modified_bessel_i0",
    "modified_bessel_i1", "modified_bessel_k0", "modified_bessel_k1", "ndtr", "ndtri",
    "scaled_modified_bessel_k0", "scaled_modified_bessel_k1",
    "shifted_chebyshev_polynomial_t", "shifted_chebyshev_polynomial_u",
    "shifted_chebyshev_polynomial_v", "shifted_chebyshev_polynomial_w",
    "spherical_bessel_j0", "xlog1py", "zeta")


def _not_implemented(name):
    def f(*args, **kwargs):
        raise NotImplementedError(
            f"wgrad.special.{name} is not implemented yet (torch.special.{name}): see "
            f"docs/differences.md, \"torch.special\"")
    f.__name__ = f.__qualname__ = name
    return f


for _name in NOT_IMPLEMENTED:
    globals()[_name] = _not_implemented(_name)
del _name
