"""The exponential distribution (torch.distributions.Exponential)."""
import numbers

from .._creation import zeros_like
from .._tensor import Size
from ..ops import exp, log, log1p
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Exponential"]


class Exponential(ExponentialFamily):
    """The exponential distribution of ``rate`` (the reciprocal of its scale).

    Example
    -------
    >>> m = Exponential(wgrad.tensor([2.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.mean
    (tensor([-1.3069]), tensor([0.5000]))
    """
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        super().__init__(Size() if isinstance(rate, numbers.Number) else self.rate.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Exponential, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate.pow(-2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        return self.rate.new_empty(shape).exponential_() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - exp(-self.rate * value)

    def icdf(self, value):
        return -log1p(-value) / self.rate

    def entropy(self):
        return 1.0 - log(self.rate)

    @property
    def _natural_params(self):
        return (-self.rate,)

    def _log_normalizer(self, x):
        return -log(-x)
