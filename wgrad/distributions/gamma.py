"""The gamma distribution (torch.distributions.Gamma)."""
import numbers

from .. import _creation
from .._dtype import finfo
from .._gamma_draws import _standard_gamma
from .._tensor import Size
from ..ops import digamma, igamma, lgamma, log, xlogy
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Gamma"]


class Gamma(ExponentialFamily):
    """The gamma distribution of shape ``concentration`` and ``rate`` (inverse scale).

    Samples come from ``wgrad._standard_gamma`` (reparameterized: its gradient is the
    implicit one of torch's ``StandardGammaBackward0``), clamped to the dtype's ``tiny``.

    Example
    -------
    >>> m = Gamma(wgrad.tensor([2.0]), wgrad.tensor([3.0]))
    >>> m.mean
    tensor([0.6667])
    >>> m.log_prob(wgrad.tensor([1.0]))
    tensor([-0.8028])
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _mean_carrier_measure = 0

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        numbers_only = (isinstance(concentration, numbers.Number)
                        and isinstance(rate, numbers.Number))
        super().__init__(Size() if numbers_only else self.concentration.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Gamma, batch_shape, _instance, "concentration", "rate")

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate.pow(2)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        value = _standard_gamma(self.concentration.expand(shape)) / self.rate.expand(shape)
        value.detach().clamp_(min=finfo(value.dtype).tiny)  # in place, not recorded
        return value

    def log_prob(self, value):
        value = _creation.as_tensor(value, dtype=self.rate.dtype, device=self.rate.device)
        if self._validate_args:
            self._validate_sample(value)
        return (xlogy(self.concentration, self.rate) + xlogy(self.concentration - 1, value)
                - self.rate * value - lgamma(self.concentration))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return igamma(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - log(self.rate) + lgamma(a) + (1.0 - a) * digamma(a)

    @property
    def _natural_params(self):
        return (self.concentration - 1, -self.rate)

    def _log_normalizer(self, x, y):
        return lgamma(x + 1) + (x + 1) * log(-y.reciprocal())
