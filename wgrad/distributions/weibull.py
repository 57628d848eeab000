"""The two-parameter Weibull distribution (torch.distributions.Weibull)."""
from .._creation import ones_like
from ..ops import exp, lgamma, log
from . import constraints
from .exponential import Exponential
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .utils import broadcast_all, euler_constant

__all__ = ["Weibull"]


def _weibull_transforms(scale, concentration_reciprocal):
    # E ~ Exponential(1) -> scale * E ** (1 / concentration)
    return [PowerTransform(exponent=concentration_reciprocal),
            AffineTransform(loc=0, scale=scale)]


class Weibull(TransformedDistribution):
    """The Weibull distribution of scale ``scale`` (lambda) and shape ``concentration``
    (k): the law of ``scale * E ** (1 / concentration)``, ``E ~ Exponential(1)``.

    Example
    -------
    >>> m = Weibull(wgrad.tensor([1.0]), wgrad.tensor([2.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.cdf(wgrad.tensor([1.0]))
    (tensor([-0.3069]), tensor([0.6321]))
    """
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        self.concentration_reciprocal = self.concentration.reciprocal()
        super().__init__(Exponential(ones_like(self.scale), validate_args=validate_args),
                         _weibull_transforms(self.scale, self.concentration_reciprocal),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Weibull, _instance)
        new.scale = self.scale.expand(batch_shape)
        new.concentration = self.concentration.expand(batch_shape)
        new.concentration_reciprocal = new.concentration.reciprocal()
        TransformedDistribution.__init__(
            new, self.base_dist.expand(batch_shape),
            _weibull_transforms(new.scale, new.concentration_reciprocal), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.scale * exp(lgamma(1 + self.concentration_reciprocal))

    @property
    def mode(self):
        k = self.concentration
        return self.scale * ((k - 1) / k) ** k.reciprocal()

    @property
    def variance(self):
        r = self.concentration_reciprocal
        return self.scale.pow(2) * (exp(lgamma(1 + 2 * r)) - exp(2 * lgamma(1 + r)))

    def entropy(self):
        r = self.concentration_reciprocal
        return euler_constant * (1 - r) + log(self.scale * r) + 1
