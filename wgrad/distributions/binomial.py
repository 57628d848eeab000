"""The binomial distribution (torch.distributions.Binomial)."""
from .._autograd.grad_mode import no_grad
from .._creation import arange, binomial
from .._tensor import Size
from ..ops import abs as abs_, exp, lgamma, log1p
from . import constraints
from .distribution import Distribution
from .utils import _ProbsLogits, broadcast_all

__all__ = ["Binomial"]


def _half_clamped(x):
    """``max(x, 0)``, with gradient 1/2 at 0 (as torch's)."""
    return (x.clamp(min=0) + x - x.clamp(max=0)) / 2


class Binomial(_ProbsLogits, Distribution):
    """The number of successes in ``total_count`` trials of success probability ``probs``
    (or log-odds ``logits``; give exactly one), broadcast together.

    Example
    -------
    >>> m = Binomial(4, wgrad.tensor(0.5))
    >>> m.log_prob(wgrad.tensor(2.0))
    tensor(-0.9808)
    """
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}
    has_enumerate_support = True

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
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
        return self._expanded_probs(Binomial, batch_shape, _instance, "total_count")

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return binomial(self.total_count.expand(shape), self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n, logits = self.total_count, self.logits
        # n log(1 + e^l) = n max(l, 0) + n log1p(e^-|l|), stable for either sign of l
        log_norm = (n * _half_clamped(logits) + n * log1p(exp(-abs_(logits)))
                    - lgamma(n + 1))
        return value * logits - lgamma(value + 1) - lgamma(n - value + 1) - log_norm

    def _homogeneous_count(self, what):
        count = int(self.total_count.max())
        if not self.total_count.min() == count:
            raise NotImplementedError(f"Inhomogeneous total count not supported by `{what}`.")
        return count

    def entropy(self):
        self._homogeneous_count("entropy")
        log_pmf = self.log_prob(self.enumerate_support(False))
        return -(exp(log_pmf) * log_pmf).sum(0)

    def enumerate_support(self, expand=True):
        count = self._homogeneous_count("enumerate_support")
        values = arange(1 + count, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
