"""The law of ``|X|`` for ``X`` of a symmetric location-0 family: HalfNormal and
HalfCauchy's shared body."""
import math

from .._creation import as_tensor, zeros_like
from ..ops import where
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AbsTransform

__all__ = []


class _Half(TransformedDistribution):
    """``|X|``, ``X ~ _base(0, scale)``: the density doubled on ``[0, inf)``, the cdf
    ``2 F - 1``. ``_as_tensor``: ``log_prob`` converts its value first (HalfCauchy's, as
    torch's)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True
    _base = None
    _as_tensor = False

    def __init__(self, scale, validate_args=None):
        super().__init__(self._base(0, scale, validate_args=False), AbsTransform(),
                         validate_args=validate_args)

    @property
    def scale(self):
        return self.base_dist.scale

    @property
    def mode(self):
        return zeros_like(self.scale)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        if self._as_tensor:
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
