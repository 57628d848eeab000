"""The Laplace (double exponential) distribution (torch.distributions.Laplace)."""
import numbers

from .._dtype import finfo
from .._tensor import Size
from ..ops import abs as abs_, expm1, log, log1p
from . import constraints
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Laplace"]


class Laplace(Distribution):
    """The Laplace distribution of mean ``loc`` and scale ``scale``.

    Example
    -------
    >>> m = Laplace(wgrad.tensor([0.0]), wgrad.tensor([1.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.variance
    (tensor([-1.6931]), tensor([2.]))
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
        return self._expanded(Laplace, batch_shape, _instance, "loc", "scale")

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return 2 * self.scale.pow(2)

    @property
    def stddev(self):
        return 2 ** 0.5 * self.scale

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        # u in (-1, 1): its largest-magnitude draw, eps - 1, keeps log1p(-|u|) finite
        u = self.loc.new_empty(shape).uniform_(finfo(self.loc.dtype).eps - 1, 1)
        return self.loc - self.scale * u.sign() * log1p(-u.abs())

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -log(2 * self.scale) - abs_(value - self.loc) / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        d = value - self.loc
        return 0.5 - 0.5 * d.sign() * expm1(-d.abs() / self.scale)

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * log1p(-2 * term.abs())

    def entropy(self):
        return 1 + log(2 * self.scale)
