"""The generalized Pareto distribution (torch.distributions.GeneralizedPareto)."""
import math
import numbers
from math import inf, nan

from .._creation import ones_like, rand, tensor, zeros_like
from .._tensor import Size
from ..ops import broadcast_to, exp, expm1, isclose, log, log1p, where
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["GeneralizedPareto"]


class GeneralizedPareto(Distribution):
    """The generalized Pareto distribution of ``loc``, ``scale`` and ``concentration``
    (the shape ``xi``): Exponential for ``xi = 0`` (and ``loc = 0``), Pareto for
    ``xi > 0`` with ``loc = scale / xi``, Uniform for ``xi = -1``. Its support is
    ``[loc, loc - scale / xi]`` for ``xi < 0``, else ``[loc, inf)``.

    Example
    -------
    >>> m = GeneralizedPareto(wgrad.tensor([0.0]), wgrad.tensor([2.0]), wgrad.tensor([0.25]))
    >>> m.mean
    tensor([2.6667])
    >>> m.log_prob(wgrad.tensor([1.0]))
    tensor([-1.2821])
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        numbers_only = all(isinstance(v, numbers.Number) for v in (loc, scale, concentration))
        super().__init__(Size() if numbers_only else self.loc.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(GeneralizedPareto, batch_shape, _instance, "loc", "scale",
                              "concentration")

    def rsample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.loc.dtype,
                 device=self.loc.device)
        return self.icdf(u)

    def _safe_concentration(self):
        """Whether the concentration is (close to) 0, and it with those entries set to 1."""
        eq_zero = isclose(self.concentration, tensor(0.0))
        return eq_zero, where(eq_zero, ones_like(self.concentration), self.concentration)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, conc = self._safe_concentration()
        y = 1 / conc + ones_like(z)
        nonzero = where(y == 0, y, y * log1p(conc * z))
        log_scale = (math.log(self.scale) if isinstance(self.scale, numbers.Real)
                     else self.scale.log())
        return -log_scale - where(eq_zero, z, nonzero)

    def log_survival_function(self, value):
        """``log(1 - cdf(value))``."""
        if self._validate_args:
            self._validate_sample(value)
        z = self._z(value)
        eq_zero, conc = self._safe_concentration()
        return where(eq_zero, -z, -log1p(conc * z) / conc)

    def log_cdf(self, value):
        """``log(cdf(value))``."""
        return log1p(-exp(self.log_survival_function(value)))

    def cdf(self, value):
        return exp(self.log_cdf(value))

    def icdf(self, value):
        conc = self.concentration
        eq_zero = isclose(conc, zeros_like(conc))
        safe = where(eq_zero, ones_like(conc), conc)
        log_u = log1p(-value)
        nonzero = self.loc + self.scale / safe * expm1(-safe * log_u)
        return where(eq_zero, self.loc - self.scale * log_u, nonzero)

    def _z(self, x):
        return (x - self.loc) / self.scale

    @property
    def mean(self):
        valid = self.concentration < 1
        conc = where(valid, self.concentration, 0.5)
        return where(valid, self.loc + self.scale / (1 - conc), nan)

    @property
    def variance(self):
        valid = self.concentration < 0.5
        conc = where(valid, self.concentration, 0.25)
        return where(valid, self.scale ** 2 / ((1 - conc) ** 2 * (1 - 2 * conc)), nan)

    def entropy(self):
        return broadcast_to(log(self.scale) + self.concentration + 1, self._batch_shape)

    @property
    def mode(self):
        return self.loc

    @constraints.dependent_property(is_discrete=False, event_dim=0)
    def support(self):
        lower = self.loc
        upper = where(self.concentration < 0, lower - self.scale / self.concentration, inf)
        return constraints.interval(lower, upper)
