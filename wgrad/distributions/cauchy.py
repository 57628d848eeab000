"""The Cauchy (Lorentz) distribution (torch.distributions.Cauchy)."""
import math
import numbers

from .._creation import full
from .._tensor import Size
from ..ops import atan, tan
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Cauchy"]


class Cauchy(Distribution):
    """The Cauchy distribution of median ``loc`` and half width at half maximum ``scale``
    (the ratio of two independent centred normal variables).

    Example
    -------
    >>> m = Cauchy(wgrad.tensor([0.0]), wgrad.tensor([1.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.cdf(wgrad.tensor([1.0]))
    (tensor([-1.8379]), tensor([0.7500]))
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        numbers_only = isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number)
        super().__init__(Size() if numbers_only else self.loc.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Cauchy, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return full(self._extended_shape(), math.nan, dtype=self.loc.dtype,
                    device=self.loc.device)

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return full(self._extended_shape(), math.inf, dtype=self.loc.dtype,
                    device=self.loc.device)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.loc + self.loc.new_empty(shape).cauchy_() * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return atan((value - self.loc) / self.scale) / math.pi + 0.5

    def icdf(self, value):
        return tan(math.pi * (value - 0.5)) * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
