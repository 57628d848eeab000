"""The von Mises distribution on the circle (torch.distributions.VonMises)."""
import math

from .._autograd.grad_mode import no_grad
from .._creation import empty, rand, zeros
from .._dtype import bool as bool_dtype
from .._dtype import float64
from .._tensor import Size
from ..ops import cos, where
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all, lazy_property

__all__ = ["VonMises"]


def _eval_poly(y, coef):
    """``sum(coef[i] * y ** i)`` by Horner's rule."""
    result = coef[-1]
    for c in reversed(coef[:-1]):
        result = c + y * result
    return result


# torch's (Abramowitz & Stegun 9.8.1-9.8.4) polynomial approximations of I0 and I1:
# for x < 3.75 in (x / 3.75) ** 2, beyond in 3.75 / x (times exp(x) / sqrt(x))
_I0_COEF_SMALL = [1.0, 3.5156229, 3.0899424, 1.2067492, 0.2659732, 0.360768e-1, 0.45813e-2]
_I0_COEF_LARGE = [0.39894228, 0.1328592e-1, 0.225319e-2, -0.157565e-2, 0.916281e-2,
                  -0.2057706e-1, 0.2635537e-1, -0.1647633e-1, 0.392377e-2]
_I1_COEF_SMALL = [0.5, 0.87890594, 0.51498869, 0.15084934, 0.2658733e-1, 0.301532e-2,
                  0.32411e-3]
_I1_COEF_LARGE = [0.39894228, -0.3988024e-1, -0.362018e-2, 0.163801e-2, -0.1031555e-1,
                  0.2282967e-1, -0.2895312e-1, 0.1787654e-1, -0.420059e-2]
_COEF_SMALL = [_I0_COEF_SMALL, _I1_COEF_SMALL]
_COEF_LARGE = [_I0_COEF_LARGE, _I1_COEF_LARGE]


def _log_modified_bessel_fn(x, order=0):
    """``log(I_order(x))`` for ``x > 0`` and ``order`` 0 or 1, by torch's polynomial
    approximations."""
    if order not in (0, 1):
        raise AssertionError(f"order must be 0 or 1, got {order}")
    y = x / 3.75
    small = _eval_poly(y * y, _COEF_SMALL[order])
    if order == 1:
        small = x.abs() * small
    small = small.log()
    large = x - 0.5 * x.log() + _eval_poly(3.75 / x, _COEF_LARGE[order]).log()
    return where(x < 3.75, small, large)


def _rejection_sample(loc, concentration, proposal_r, x):
    """Best & Fisher's (1979) rejection sampler: ``x`` filled where each draw is accepted,
    then shifted by ``loc`` into ``[-pi, pi)``."""
    done = zeros(x.shape, dtype=bool_dtype, device=loc.device)
    while not done.all():
        u1, u2, u3 = rand((3,) + tuple(x.shape), dtype=loc.dtype, device=loc.device).unbind()
        z = cos(math.pi * u1)
        f = (1 + proposal_r * z) / (proposal_r + z)
        c = concentration * (proposal_r - f)
        accept = ((c * (2 - c) - u2) > 0) | ((c / u2).log() + 1 - c >= 0)
        if accept.any():
            x = where(accept, (u3 - 0.5).sign() * f.acos(), x)
            done = done | accept
    return (x + math.pi + loc) % (2 * math.pi) - math.pi


class VonMises(Distribution):
    """The circular von Mises distribution of mean angle ``loc`` and ``concentration``.

    ``loc`` and values may be any reals (read modulo ``2 pi``); ``mean`` and ``variance``
    are the circular ones. Sampling (not reparameterized) runs in float64 whatever the
    dtype, as torch's does.

    Example
    -------
    >>> m = VonMises(wgrad.tensor([0.0]), wgrad.tensor([2.0]))
    >>> m.log_prob(wgrad.tensor([0.0]))
    tensor([-0.6619])
    >>> m.variance
    tensor([0.3022])
    """
    arg_constraints = {"loc": constraints.real, "concentration": constraints.positive}
    support = constraints.real
    has_rsample = False

    def __init__(self, loc, concentration, validate_args=None):
        self.loc, self.concentration = broadcast_all(loc, concentration)
        super().__init__(self.loc.shape, Size(), validate_args)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.concentration * cos(value - self.loc)
        return (log_prob - math.log(2 * math.pi)
                - _log_modified_bessel_fn(self.concentration, order=0))

    @lazy_property
    def _loc(self):
        return self.loc.to(float64)

    @lazy_property
    def _concentration(self):
        return self.concentration.to(float64)

    @lazy_property
    def _proposal_r(self):
        kappa = self._concentration
        tau = 1 + (1 + 4 * kappa ** 2).sqrt()
        rho = (tau - (2 * tau).sqrt()) / (2 * kappa)
        r = (1 + rho ** 2) / (2 * rho)
        return where(kappa < 1e-5, 1 / kappa + kappa, r)  # 2nd-order Taylor for small kappa

    def sample(self, sample_shape=Size()):
        """Draws by Best & Fisher's rejection sampler, in float64 (a float32 sampler can
        hang for concentrations near 1e-4), cast to the dtype of ``loc``."""
        with no_grad():
            shape = self._extended_shape(sample_shape)
            x = empty(shape, dtype=self._loc.dtype, device=self.loc.device)
            return _rejection_sample(self._loc, self._concentration, self._proposal_r,
                                     x).to(self.loc.dtype)

    def expand(self, batch_shape, _instance=None):
        try:
            return super().expand(batch_shape)
        except NotImplementedError:
            loc = self.loc.expand(batch_shape)
            concentration = self.concentration.expand(batch_shape)
            return type(self)(loc, concentration,
                              validate_args=self.__dict__.get("_validate_args"))

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        """The circular variance, ``1 - I1(concentration) / I0(concentration)``."""
        return 1 - (_log_modified_bessel_fn(self.concentration, order=1)
                    - _log_modified_bessel_fn(self.concentration, order=0)).exp()
