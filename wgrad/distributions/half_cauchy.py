"""The half-Cauchy distribution (torch.distributions.HalfCauchy)."""
import math

from .._creation import full
from ._half import _Half
from .cauchy import Cauchy

__all__ = ["HalfCauchy"]


class HalfCauchy(_Half):
    """The law of ``|X|``, ``X ~ Cauchy(0, scale)``.

    Example
    -------
    >>> m = HalfCauchy(wgrad.tensor([1.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.cdf(wgrad.tensor([1.0]))
    (tensor([-1.1447]), tensor([0.5000]))
    """
    _base = Cauchy
    _as_tensor = True

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(HalfCauchy, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return full(self._extended_shape(), math.inf, dtype=self.scale.dtype,
                    device=self.scale.device)

    @property
    def variance(self):
        return self.base_dist.variance
