"""The logistic-normal distribution on the simplex (torch.distributions.LogisticNormal)."""
from . import constraints
from .normal import Normal
from .transformed_distribution import TransformedDistribution
from .transforms import StickBreakingTransform

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """The law on the simplex of ``StickBreakingTransform()(X)``, ``X ~ Normal(loc,
    scale)`` over the last dim: ``log(Y / (1 - Y.cumsum(-1)))[..., :-1]`` is normal.

    Example
    -------
    >>> m = LogisticNormal(wgrad.tensor([0.0, 0.0]), wgrad.tensor([1.0, 1.0]))
    >>> m.log_prob(wgrad.tensor([0.25, 0.25, 0.5]))
    tensor(1.3054)
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base = Normal(loc, scale, validate_args=validate_args)
        if not base.batch_shape:
            base = base.expand([1])
        super().__init__(base, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
