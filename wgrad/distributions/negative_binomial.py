"""The negative binomial distribution (torch.distributions.NegativeBinomial)."""
from .._autograd.grad_mode import no_grad
from .._creation import poisson
from .._tensor import Size
from ..nn import functional as F
from ..ops import exp, lgamma, sigmoid
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import _ProbsLogits, broadcast_all, lazy_property

__all__ = ["NegativeBinomial"]


class NegativeBinomial(_ProbsLogits, Distribution):
    """The number of successes of Bernoulli trials of success probability ``probs`` in
    ``[0, 1)`` (or log-odds ``logits``; give exactly one) before ``total_count`` (a
    nonnegative real) failures.

    Example
    -------
    >>> m = NegativeBinomial(2.0, wgrad.tensor(0.5))
    >>> m.log_prob(wgrad.tensor(1.0))
    tensor(-1.3863)
    """
    arg_constraints = {"total_count": constraints.greater_than_eq(0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        total_count, param = broadcast_all(total_count, probs if logits is None else logits)
        self.total_count = total_count.type_as(param)
        if logits is None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        super().__init__(param.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_probs(NegativeBinomial, batch_shape, _instance, "total_count")

    @property
    def mean(self):
        return self.total_count * exp(self.logits)

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / sigmoid(-self.logits)

    @lazy_property
    def _gamma(self):
        # not validated: total_count may be 0
        return Gamma(concentration=self.total_count, rate=exp(-self.logits),
                     validate_args=False)

    def sample(self, sample_shape=Size()):
        # a Poisson draw of a Gamma(total_count, exp(-logits)) rate
        with no_grad():
            return poisson(self._gamma.sample(sample_shape=sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        log_unnormalized = n * F.logsigmoid(-logits) + value * F.logsigmoid(logits)
        log_normalization = -lgamma(n + value) + lgamma(1.0 + value) + lgamma(n)
        # n = 0 and value = 0: probability 1, though lgamma(0) is infinite
        log_normalization = log_normalization.masked_fill(n + value == 0.0, 0.0)
        return log_unnormalized - log_normalization
