"""The Poisson distribution (torch.distributions.Poisson)."""
import numbers

from .._autograd.grad_mode import no_grad
from .._creation import poisson
from .._tensor import Size
from ..ops import exp, log
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Poisson"]


class Poisson(ExponentialFamily):
    """The number of events of a Poisson process of mean ``rate``:
    ``P(k) = rate^k e^(-rate) / k!``.

    Example
    -------
    >>> m = Poisson(wgrad.tensor([2.0]))
    >>> m.log_prob(wgrad.tensor([1.0]))
    tensor([-1.3069])
    """
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        (self.rate,) = broadcast_all(rate)
        batch_shape = Size() if isinstance(rate, numbers.Number) else self.rate.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Poisson, batch_shape, _instance, "rate")

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return poisson(self.rate.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        rate, value = broadcast_all(self.rate, value)
        return value.xlogy(rate) - rate - (value + 1).lgamma()

    @property
    def _natural_params(self):
        return (log(self.rate),)

    def _log_normalizer(self, x):
        return exp(x)
