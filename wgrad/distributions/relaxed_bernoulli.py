"""The relaxed (Concrete) Bernoulli distributions (torch.distributions.RelaxedBernoulli,
LogitRelaxedBernoulli)."""
import numbers

from .._creation import rand
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import SigmoidTransform
from .utils import _ProbsLogits, broadcast_all, clamp_probs

__all__ = ["LogitRelaxedBernoulli", "RelaxedBernoulli"]


class LogitRelaxedBernoulli(_ProbsLogits, Distribution):
    """The logit of a RelaxedBernoulli of ``temperature`` and ``probs`` (or ``logits``,
    not both): ``(logit(U) + logits) / temperature``, ``U`` uniform (Maddison et al.,
    2017; Jang et al., 2017).

    Example
    -------
    >>> m = LogitRelaxedBernoulli(wgrad.tensor(0.5), probs=wgrad.tensor([0.25]))
    >>> m.log_prob(wgrad.tensor([0.0]))
    tensor([-2.3671])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self.temperature = temperature
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        super().__init__(Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded_probs(LogitRelaxedBernoulli, batch_shape, _instance,
                                    temperature=self.temperature)

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        probs = clamp_probs(self.probs.expand(shape))
        u = clamp_probs(rand(shape, dtype=probs.dtype, device=probs.device))
        return (u.log() - (-u).log1p() + probs.log() - (-probs).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        diff = logits - value.mul(self.temperature)
        return self.temperature.log() + diff - 2 * diff.exp().log1p()


class RelaxedBernoulli(TransformedDistribution):
    """The relaxed Bernoulli distribution on ``(0, 1)`` of ``temperature`` and ``probs``
    (or ``logits``): the sigmoid of a LogitRelaxedBernoulli, with reparameterized
    samples.

    Example
    -------
    >>> m = RelaxedBernoulli(wgrad.tensor(0.5), probs=wgrad.tensor([0.25]))
    >>> m.log_prob(wgrad.tensor([0.5]))
    tensor([-0.9808])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(LogitRelaxedBernoulli(temperature, probs, logits),
                         SigmoidTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedBernoulli, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs
