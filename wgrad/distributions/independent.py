"""Batch dims read as event dims (torch.distributions.Independent)."""
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .utils import _sum_rightmost

__all__ = ["Independent"]


class Independent(Distribution):
    """``base_distribution`` with its ``reinterpreted_batch_ndims`` rightmost batch dims
    made event dims: ``log_prob`` and ``entropy`` sum over them.

    Example
    -------
    >>> from wgrad.distributions import Normal
    >>> d = Independent(Normal(wgrad.zeros(3), wgrad.ones(3)), 1)
    >>> d.batch_shape, d.event_shape
    (wgrad.Size([]), wgrad.Size([3]))
    >>> d.log_prob(wgrad.zeros(3))
    tensor(-2.7568)
    """
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n_batch = len(base_distribution.batch_shape)
        if reinterpreted_batch_ndims > n_batch:
            raise ValueError(f"Expected reinterpreted_batch_ndims <= "
                             f"len(base_distribution.batch_shape), actual "
                             f"{reinterpreted_batch_ndims} vs {n_batch}")
        shape = base_distribution.batch_shape + base_distribution.event_shape
        cut = len(shape) - (reinterpreted_batch_ndims + len(base_distribution.event_shape))
        self.base_dist = base_distribution
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        base = self.base_dist.expand(
            batch_shape + self._event_shape[:self.reinterpreted_batch_ndims])
        return self._expanded(Independent, batch_shape, _instance, base_dist=base,
                              reinterpreted_batch_ndims=self.reinterpreted_batch_ndims)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @constraints.dependent_property
    def support(self):
        result = self.base_dist.support
        if self.reinterpreted_batch_ndims:
            result = constraints.independent(result, self.reinterpreted_batch_ndims)
        return result

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=Size()):
        return self.base_dist.sample(sample_shape)

    def rsample(self, sample_shape=Size()):
        return self.base_dist.rsample(sample_shape)

    def log_prob(self, value):
        return _sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return _sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Enumeration over cartesian product is not implemented")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist}, {self.reinterpreted_batch_ndims})"
