"""The categorical distribution (torch.distributions.Categorical)."""
from .._creation import arange, full, multinomial
from .._dtype import finfo, int64
from .._tensor import Size
from ..ops import broadcast_tensors, clamp
from . import constraints
from .distribution import Distribution
from .utils import _ProbsLogits

__all__ = ["Categorical"]


class Categorical(_ProbsLogits, Distribution):
    """Category indices ``0 .. K-1`` drawn with the (normalized) weights ``probs``, or
    ``softmax(logits)``, along the last dim (give exactly one; other dims are the batch).

    ``probs`` reads back normalized to sum to 1, ``logits`` normalized by their logsumexp.

    Example
    -------
    >>> m = Categorical(wgrad.tensor([1.0, 1.0, 2.0]))
    >>> m.log_prob(wgrad.tensor(2))
    tensor(-0.6931)
    """
    arg_constraints = {"probs": constraints.simplex, "logits": constraints.real_vector}
    has_enumerate_support = True
    _binary = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            if probs.dim() < 1:
                raise ValueError("`probs` parameter must be at least one-dimensional.")
            self.probs = probs / probs.sum(-1, keepdim=True)
            self._param = self.probs
        else:
            if logits.dim() < 1:
                raise ValueError("`logits` parameter must be at least one-dimensional.")
            self.logits = logits - logits.logsumexp(dim=-1, keepdim=True)
            self._param = self.logits
        self._num_events = self._param.size()[-1]
        batch_shape = self._param.size()[:-1] if self._param.dim() > 1 else Size()
        super().__init__(batch_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._get_checked_instance(Categorical, _instance)
        param_shape = Size(tuple(batch_shape) + (self._num_events,))
        for name in names:
            setattr(new, name, getattr(self, name).expand(param_shape))
        new._param = getattr(new, names[-1])
        new._num_events = self._num_events
        Distribution.__init__(new, Size(batch_shape), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=True, event_dim=0)
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    def _nan_full(self):
        probs = self.probs
        return full(self._extended_shape(), float("nan"), dtype=probs.dtype,
                    device=probs.device)

    @property
    def mean(self):
        return self._nan_full()

    @property
    def mode(self):
        return self.probs.argmax(dim=-1)

    @property
    def variance(self):
        return self._nan_full()

    def sample(self, sample_shape=Size()):
        sample_shape = Size(sample_shape)
        rows = self.probs.reshape(-1, self._num_events)
        draws = multinomial(rows, sample_shape.numel(), True).T
        return draws.reshape(self._extended_shape(sample_shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value, log_pmf = broadcast_tensors(value.long().unsqueeze(-1), self.logits)
        return log_pmf.gather(-1, value[..., :1]).squeeze(-1)

    def entropy(self):
        logits = clamp(self.logits, min=finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = arange(self._num_events, dtype=int64, device=self._param.device)
        values = values.view((-1,) + (1,) * len(self._batch_shape))
        return values.expand((-1,) + tuple(self._batch_shape)) if expand else values
