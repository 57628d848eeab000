"""The inverse gamma distribution (torch.distributions.InverseGamma)."""
import math

from ..ops import where
from . import constraints
from .gamma import Gamma
from .transformed_distribution import TransformedDistribution
from .transforms import PowerTransform

__all__ = ["InverseGamma"]


class InverseGamma(TransformedDistribution):
    """The law of ``1 / X``, ``X ~ Gamma(concentration, rate)``.

    Example
    -------
    >>> m = InverseGamma(wgrad.tensor([2.0]), wgrad.tensor([3.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.mean
    (tensor([-0.8028]), tensor([3.]))
    """
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        base = Gamma(concentration, rate, validate_args=validate_args)
        super().__init__(base, PowerTransform(-base.rate.new_ones(())),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(InverseGamma, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def concentration(self):
        return self.base_dist.concentration

    @property
    def rate(self):
        return self.base_dist.rate

    @property
    def mean(self):
        return where(self.concentration > 1, self.rate / (self.concentration - 1), math.inf)

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        c = self.concentration
        result = self.rate.square() / ((c - 1).square() * (c - 2))
        return where(c > 2, result, math.inf)

    def entropy(self):
        c = self.concentration
        return c + self.rate.log() + c.lgamma() - (1 + c) * c.digamma()
