"""The beta distribution (torch.distributions.Beta)."""
import numbers

from .._creation import tensor
from ..ops import lgamma, stack
from . import constraints
from .dirichlet import Dirichlet
from .exp_family import ExponentialFamily
from .utils import broadcast_all

__all__ = ["Beta"]


class Beta(ExponentialFamily):
    """The beta distribution on ``[0, 1]`` of ``concentration1`` (alpha) and
    ``concentration0`` (beta): a two-category ``Dirichlet`` seen through its first
    coordinate (which is how it samples).

    Example
    -------
    >>> m = Beta(wgrad.tensor([2.0]), wgrad.tensor([3.0]))
    >>> m.mean
    tensor([0.4000])
    >>> m.log_prob(wgrad.tensor([0.5]))
    tensor([0.4055])
    """
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        if (isinstance(concentration1, numbers.Number)
                and isinstance(concentration0, numbers.Number)):
            both = tensor([float(concentration1), float(concentration0)])
        else:
            concentration1, concentration0 = broadcast_all(concentration1, concentration0)
            both = stack([concentration1, concentration0], -1)
        self._dirichlet = Dirichlet(both, validate_args=validate_args)
        super().__init__(self._dirichlet._batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Beta, batch_shape, _instance,
                              _dirichlet=self._dirichlet.expand(batch_shape))

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total.pow(2) * (total + 1))

    def rsample(self, sample_shape=()):
        return self._dirichlet.rsample(sample_shape).select(-1, 0)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(stack([value, 1.0 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()

    @property
    def concentration1(self):
        return self._dirichlet.concentration[..., 0]

    @property
    def concentration0(self):
        return self._dirichlet.concentration[..., 1]

    @property
    def _natural_params(self):
        return (self.concentration1, self.concentration0)

    def _log_normalizer(self, x, y):
        return lgamma(x) + lgamma(y) - lgamma(x + y)
