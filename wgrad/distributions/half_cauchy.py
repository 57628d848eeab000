"""The half-Cauchy distribution (torch.distributions.HalfCauchy)."""
import math

from .._creation import as_tensor, full, zeros_like
from ..ops import where
from . import constraints
from .cauchy import Cauchy
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = ["HalfCauchy"]


class HalfCauchy(TransformedDistribution):
    """The law of ``|X|``, ``X ~ Cauchy(0, scale)``.

    Example
    -------
    >>> m = HalfCauchy(wgrad.tensor([1.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.cdf(wgrad.tensor([1.0]))
    (tensor([-1.1447]), tensor([0.5000]))
    """
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        super().__init__(Cauchy(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mean(self):
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def mode(self):
        return zeros_like(self.scale)

    @property
    def variance(self):
        return self.base_dist.variance

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = as_tensor(value, dtype=self.scale.dtype, device=self.scale.device)
        return where(value >= 0, self.base_dist.log_prob(value) + math.log(2), -math.inf)

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
