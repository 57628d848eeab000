"""The Gumbel (type-I extreme value) distribution (torch.distributions.Gumbel)."""
import math
import numbers

from .._creation import full_like, ones_like
from .._dtype import finfo
from . import constraints
from .transformed_distribution import TransformedDistribution
from .transforms import AffineTransform, ExpTransform
from .uniform import Uniform
from .utils import broadcast_all, euler_constant

__all__ = ["Gumbel"]


class Gumbel(TransformedDistribution):
    """The Gumbel distribution of location ``loc`` and scale ``scale``: the law of
    ``loc - scale * log(-log(U))``, ``U`` uniform on ``(0, 1)``.

    Example
    -------
    >>> m = Gumbel(wgrad.tensor([1.0]), wgrad.tensor([2.0]))
    >>> m.log_prob(wgrad.tensor([1.0])), m.mean
    (tensor([-1.6931]), tensor([2.1544]))
    """
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        info = finfo(self.loc.dtype)
        if isinstance(loc, numbers.Number) and isinstance(scale, numbers.Number):
            base = Uniform(info.tiny, 1 - info.eps, validate_args=validate_args)
        else:
            base = Uniform(full_like(self.loc, info.tiny), full_like(self.loc, 1 - info.eps),
                           validate_args=validate_args)
        # u -> -log(u) -> log(-log(u)) -> loc - scale * log(-log(u))
        transforms = [ExpTransform().inv, AffineTransform(loc=0, scale=-ones_like(self.scale)),
                      ExpTransform().inv, AffineTransform(loc=loc, scale=-self.scale)]
        super().__init__(base, transforms, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Gumbel, _instance)
        new.loc = self.loc.expand(batch_shape)
        new.scale = self.scale.expand(batch_shape)
        return super().expand(batch_shape, _instance=new)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = (self.loc - value) / self.scale
        return (y - y.exp()) - self.scale.log()

    @property
    def mean(self):
        return self.loc + self.scale * euler_constant

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev.pow(2)

    def entropy(self):
        return self.scale.log() + (1 + euler_constant)
