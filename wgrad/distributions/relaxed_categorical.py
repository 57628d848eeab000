"""The relaxed (Concrete / Gumbel-softmax) one-hot categorical distributions
(torch.distributions.RelaxedOneHotCategorical, ExpRelaxedCategorical)."""
from .._creation import full_like, rand
from .._tensor import Size
from . import constraints
from .categorical import Categorical
from .distribution import Distribution
from .transformed_distribution import TransformedDistribution
from .transforms import ExpTransform
from .utils import broadcast_all, clamp_probs

__all__ = ["ExpRelaxedCategorical", "RelaxedOneHotCategorical"]


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical point of ``temperature`` and ``probs`` (or
    ``logits``): ``log_softmax((logits + G) / temperature)``, ``G`` standard Gumbel
    (Maddison et al., 2017; Jang et al., 2017). Its support is stated as the real
    vectors (the true support is a submanifold of them).

    Example
    -------
    >>> m = ExpRelaxedCategorical(wgrad.tensor(0.5), probs=wgrad.tensor([0.25, 0.75]))
    >>> m.log_prob(wgrad.tensor([-0.5, -1.0]))
    tensor(-2.5033)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        self.temperature = temperature
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(ExpRelaxedCategorical, batch_shape, _instance,
                              temperature=self.temperature,
                              _categorical=self._categorical.expand(batch_shape))

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        u = clamp_probs(rand(shape, dtype=self.logits.dtype, device=self.logits.device))
        gumbels = -((-(u.log())).log())
        scores = (self.logits + gumbels) / self.temperature
        return scores - scores.logsumexp(dim=-1, keepdim=True)

    def log_prob(self, value):
        k = self._categorical._num_events
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        # log Gamma(K) + (K - 1) log(temperature)
        log_scale = (full_like(self.temperature, float(k)).lgamma()
                     - self.temperature.log().mul(-(k - 1)))
        score = logits - value.mul(self.temperature)
        score = (score - score.logsumexp(dim=-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(TransformedDistribution):
    """The relaxed one-hot categorical distribution on the simplex of ``temperature``
    and ``probs`` (or ``logits``): the exp of an ExpRelaxedCategorical, with
    reparameterized samples.

    Example
    -------
    >>> m = RelaxedOneHotCategorical(wgrad.tensor(0.5), probs=wgrad.tensor([0.25, 0.75]))
    >>> m.log_prob(wgrad.tensor([0.5, 0.5]))
    tensor(-0.9808)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        super().__init__(ExpRelaxedCategorical(temperature, probs, logits,
                                               validate_args=validate_args),
                         ExpTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(RelaxedOneHotCategorical, _instance)
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
