"""The geometric distribution (torch.distributions.Geometric)."""
import numbers

from .._autograd.grad_mode import no_grad
from .._dtype import finfo
from .._creation import zeros_like
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from .distribution import Distribution
from .utils import _ProbsLogits, broadcast_all

__all__ = ["Geometric"]


class Geometric(_ProbsLogits, Distribution):
    """The number of failures before the first success of Bernoulli trials of success
    probability ``probs`` in ``(0, 1]`` (or log-odds ``logits``; give exactly one):
    ``P(k) = (1 - p)^k p``, ``k = 0, 1, ...``.

    Example
    -------
    >>> m = Geometric(wgrad.tensor([0.5]))
    >>> m.log_prob(wgrad.tensor([2.0]))
    tensor([-2.0794])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        batch_shape = Size() if isinstance(given, numbers.Number) else given.size()
        super().__init__(batch_shape, validate_args=validate_args)
        if self._validate_args and probs is not None:
            value = self.probs
            valid = value > 0
            if not valid.all():
                raise ValueError(
                    f"Expected parameter probs ({type(value).__name__} of shape "
                    f"{tuple(value.shape)}) of distribution {self!r} to be positive but "
                    f"found invalid values:\n{value.data[~valid]}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded_probs(Geometric, batch_shape, _instance)

    @property
    def mean(self):
        return 1.0 / self.probs - 1.0

    @property
    def mode(self):
        return zeros_like(self.probs)

    @property
    def variance(self):
        return (1.0 / self.probs - 1.0) / self.probs

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        tiny = finfo(self.probs.dtype).tiny
        with no_grad():
            u = self.probs.new(shape).uniform_(tiny, 1)
            return (u.log() / (-self.probs).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, probs = broadcast_all(value, self.probs)
        # a sure success (p = 1) has log P(0) = 0, not 0 * log(0)
        probs = probs.masked_fill((probs == 1) & (value == 0), 0)
        return value * (-probs).log1p() + self.probs.log()

    def entropy(self):
        return (F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")
                / self.probs)
