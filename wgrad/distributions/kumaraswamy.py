"""The Kumaraswamy distribution (torch.distributions.Kumaraswamy)."""
import math

from .._creation import full_like
from ..ops import digamma, exp, lgamma, log, pow as pow_
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, PowerTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Kumaraswamy"]


def _moments(a, b, n):
    """The ``n``-th raw moment, ``b * B(1 + n / a, b)``."""
    arg = 1 + n / a
    return b * exp(lgamma(arg) + lgamma(b) - lgamma(arg + b))


class Kumaraswamy(TransformedDistribution):
    """The Kumaraswamy distribution on ``[0, 1]`` of concentrations ``concentration1``
    (a) and ``concentration0`` (b): density ``a b x^(a-1) (1 - x^a)^(b-1)``, the law of
    ``(1 - U ** (1 / b)) ** (1 / a)``, ``U`` uniform.

    Example
    -------
    >>> m = Kumaraswamy(wgrad.tensor([2.0]), wgrad.tensor([3.0]))
    >>> m.log_prob(wgrad.tensor([0.5])), m.cdf(wgrad.tensor([0.5]))
    (tensor([0.5232]), tensor([0.5781]))
    """
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        base = Uniform(full_like(self.concentration0, 0), full_like(self.concentration0, 1),
                       validate_args=validate_args)
        transforms = [PowerTransform(exponent=self.concentration0.reciprocal()),
                      AffineTransform(loc=1.0, scale=-1.0),
                      PowerTransform(exponent=self.concentration1.reciprocal())]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Kumaraswamy, _instance)
        new.concentration1 = self.concentration1.expand(batch_shape)
        new.concentration0 = self.concentration0.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    @property
    def mean(self):
        return _moments(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        a, b = self.concentration1, self.concentration0
        log_mode = b.reciprocal() * (-b).log1p() - (-b * a).log1p()
        log_mode[(b < 1) | (a < 1)] = math.nan
        return log_mode.exp()

    @property
    def variance(self):
        return (_moments(self.concentration1, self.concentration0, 2)
                - pow_(self.mean, 2))

    def entropy(self):
        t1 = 1 - self.concentration1.reciprocal()
        t0 = 1 - self.concentration0.reciprocal()
        h0 = digamma(self.concentration0 + 1) + euler_constant
        return t0 + t1 * h0 - log(self.concentration1) - log(self.concentration0)
