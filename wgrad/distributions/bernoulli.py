"""The Bernoulli distribution (torch.distributions.Bernoulli)."""
import numbers

from .._autograd.grad_mode import no_grad
from .._creation import arange, bernoulli
from .._tensor import Size
from ..nn import functional as F
from ..ops import log1p, exp, logit
from . import constraints
from .exp_family import ExponentialFamily
from .utils import _ProbsLogits, broadcast_all

__all__ = ["Bernoulli"]

_BOTH_OR_NEITHER = "Either `probs` or `logits` must be specified, but not both."


class Bernoulli(_ProbsLogits, ExponentialFamily):
    """Draws of 1 with probability ``probs`` (or log-odds ``logits``; give exactly one),
    else 0.

    Example
    -------
    >>> m = Bernoulli(wgrad.tensor([0.25]))
    >>> m.log_prob(wgrad.tensor([1.0]))
    tensor([-1.3863])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True
    _mean_carrier_measure = 0

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError(_BOTH_OR_NEITHER)
        given = probs if probs is not None else logits
        (param,) = broadcast_all(given)
        if probs is not None:
            self.probs = param
        else:
            self.logits = param
        self._param = param
        batch_shape = Size() if isinstance(given, numbers.Number) else param.size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_probs(Bernoulli, batch_shape, _instance)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        probs = self.probs
        return (probs >= 0.5).to(probs).masked_fill(probs == 0.5, float("nan"))

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        with no_grad():
            return bernoulli(self.probs.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return -F.binary_cross_entropy_with_logits(logits, value, reduction="none")

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs, reduction="none")

    def enumerate_support(self, expand=True):
        values = arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values

    @property
    def _natural_params(self):
        return (logit(self.probs),)

    def _log_normalizer(self, x):
        return log1p(exp(x))
