"""The multinomial distribution (torch.distributions.Multinomial)."""
import math

from .._creation import ones_like, tensor
from .._tensor import Size
from ..ops import exp, lgamma
from . import constraints
from .binomial import Binomial
from .categorical import Categorical
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["Multinomial"]


class Multinomial(Distribution):
    """The counts of each of ``K`` categories in ``total_count`` (an int) draws of a
    :class:`Categorical` of ``probs`` or ``logits`` (give exactly one).

    ``log_prob`` allows any total per value (the sum of its counts); ``sample`` draws
    ``total_count`` trials.

    Example
    -------
    >>> m = Multinomial(2, wgrad.tensor([1.0, 1.0]))
    >>> m.log_prob(wgrad.tensor([1.0, 1.0]))
    tensor(-0.6931)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not isinstance(total_count, int):
            raise NotImplementedError("inhomogeneous total_count is not supported")
        self.total_count = total_count
        self._categorical = Categorical(probs=probs, logits=logits)
        self._binomial = Binomial(total_count=total_count, probs=self.probs)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        categorical = self._categorical.expand(batch_shape)
        return self._expanded(
            Multinomial, batch_shape, _instance, total_count=self.total_count,
            _categorical=categorical,
            _binomial=Binomial(self.total_count, probs=categorical.probs,
                               validate_args=False))

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @constraints.dependent_property(is_discrete=True, event_dim=1)
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        draws = self._categorical.sample(Size((self.total_count,)) + sample_shape)
        # (total_count, *sample, *batch) -> (*sample, *batch, total_count)
        draws = draws.permute(*range(1, draws.dim()), 0)
        counts = draws.new_zeros(self._extended_shape(sample_shape))
        counts.scatter_add_(-1, draws, ones_like(draws))
        return counts.type_as(self.probs)

    def entropy(self):
        n = self.total_count
        # log(n!) in the default dtype, as torch's lgamma of an int tensor (math.lgamma
        # is exact where a float32 lgamma may be a few ulps off)
        term1 = n * self._categorical.entropy() - tensor(math.lgamma(n + 1))
        support = self._binomial.enumerate_support(expand=False)[1:]
        weights = lgamma(support + 1)
        term2 = (exp(self._binomial.log_prob(support)) * weights).sum([0, -1])
        return term1 + term2

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # 0 * log(0) counts as 0
        logits = logits.masked_fill((value == 0) & (logits == -math.inf), 0)
        return (lgamma(value.sum(-1) + 1) - lgamma(value + 1).sum(-1)
                + (logits * value).sum(-1))
