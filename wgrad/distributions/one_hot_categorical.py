"""One-hot categorical distributions (torch.distributions.OneHotCategorical and
OneHotCategoricalStraightThrough)."""
from .._creation import eye
from .._tensor import Size
from ..nn import functional as F
from . import constraints
from .categorical import Categorical
from .distribution import Distribution

__all__ = ["OneHotCategorical", "OneHotCategoricalStraightThrough"]


class OneHotCategorical(Distribution):
    """A :class:`Categorical` whose samples are one-hot vectors of size ``K``.

    Example
    -------
    >>> m = OneHotCategorical(wgrad.tensor([1.0, 1.0, 2.0]))
    >>> m.log_prob(wgrad.tensor([0.0, 0.0, 1.0]))
    tensor(-0.6931)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    support = constraints.one_hot
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(OneHotCategorical, batch_shape, _instance,
                              _categorical=self._categorical.expand(batch_shape))

    def _new(self, *args, **kwargs):
        return self._categorical._new(*args, **kwargs)

    @property
    def _param(self):
        return self._categorical._param

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self._categorical.probs

    @property
    def mode(self):
        probs = self._categorical.probs
        return F.one_hot(probs.argmax(dim=-1), num_classes=probs.shape[-1]).to(probs)

    @property
    def variance(self):
        probs = self._categorical.probs
        return probs * (1 - probs)

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def sample(self, sample_shape=Size()):
        indices = self._categorical.sample(Size(sample_shape))
        return F.one_hot(indices, self._categorical._num_events).to(self._categorical.probs)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.max(-1)[1])

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        n = self._event_shape[0]
        values = eye(n, dtype=self._param.dtype, device=self._param.device)
        values = values.view((n,) + (1,) * len(self._batch_shape) + (n,))
        return values.expand((n,) + tuple(self._batch_shape) + (n,)) if expand else values


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A :class:`OneHotCategorical` with ``rsample``: the one-hot draw plus
    ``probs - probs.detach()``, the straight-through gradient estimator (Bengio et al.,
    2013).

    Example
    -------
    >>> m = OneHotCategoricalStraightThrough(wgrad.tensor([1.0, 3.0]))
    >>> m.mean
    tensor([0.2500, 0.7500])
    """
    has_rsample = True

    def rsample(self, sample_shape=Size()):
        draws = self.sample(sample_shape)
        probs = self._categorical.probs
        return draws + (probs - probs.detach())
