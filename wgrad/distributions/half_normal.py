"""The half-normal distribution (torch.distributions.HalfNormal)."""
import math

from ._half import _Half
from .normal import Normal

__all__ = ["HalfNormal"]


class HalfNormal(_Half):
    """The law of ``|X|``, ``X ~ Normal(0, scale)``.

    Example
    -------
    >>> m = HalfNormal(wgrad.tensor([1.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.cdf(wgrad.tensor([1.0]))
    (tensor([-0.7258]), tensor([0.6827]))
    """
    _base = Normal

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def variance(self):
        return self.scale.pow(2) * (1 - 2 / math.pi)
