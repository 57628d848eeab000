"""A distribution pushed through transforms (torch.distributions.TransformedDistribution)."""
from .._autograd.grad_mode import no_grad
from .._tensor import Size
from . import constraints
from .distribution import Distribution
from .independent import Independent
from .transforms import ComposeTransform, Transform
from .utils import _sum_rightmost

__all__ = ["TransformedDistribution"]


class TransformedDistribution(Distribution):
    """The law of ``Y = f(X)``, ``X ~ base_distribution`` and ``f`` the composition of
    ``transforms``: ``log p(y) = log p(x) - log |det dy/dx|`` with ``x = f^-1(y)``.

    The event shape is the larger of the base distribution's and the transforms' (a
    transform that couples dims makes them one event); the base distribution is expanded
    or wrapped in Independent to fit. LogNormal, Gumbel, HalfNormal, Pareto, Weibull... are
    built on it.

    Example
    -------
    >>> from wgrad.distributions import Normal
    >>> from wgrad.distributions.transforms import ExpTransform
    >>> d = TransformedDistribution(Normal(0.0, 1.0), [ExpTransform()])
    >>> d.log_prob(wgrad.tensor(1.0))
    tensor(-0.9189)
    """
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            self.transforms = [transforms]
        elif isinstance(transforms, list):
            if not all(isinstance(t, Transform) for t in transforms):
                raise ValueError("transforms must be a Transform or a list of Transforms")
            self.transforms = transforms
        else:
            raise ValueError(f"transforms must be a Transform or list, but was {transforms}")

        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        transform = ComposeTransform(self.transforms)
        if len(base_shape) < transform.domain.event_dim:
            raise ValueError(f"base_distribution needs to have shape with size at least "
                             f"{transform.domain.event_dim}, but got {base_shape}.")
        forward_shape = transform.forward_shape(base_shape)
        expanded_base_shape = transform.inverse_shape(forward_shape)
        if base_shape != expanded_base_shape:
            base_distribution = base_distribution.expand(
                expanded_base_shape[:len(expanded_base_shape) - base_event_dim])
        reinterpreted_batch_ndims = transform.domain.event_dim - base_event_dim
        if reinterpreted_batch_ndims > 0:
            base_distribution = Independent(base_distribution, reinterpreted_batch_ndims)
        self.base_dist = base_distribution

        # the transform couples codomain.event_dim dims; the base dist its own, moved
        event_dim = max(transform.codomain.event_dim, base_event_dim
                        + transform.codomain.event_dim - transform.domain.event_dim)
        if len(forward_shape) < event_dim:
            raise AssertionError(f"forward_shape length {len(forward_shape)} must be >= "
                                 f"event_dim {event_dim}")
        cut = len(forward_shape) - event_dim
        super().__init__(forward_shape[:cut], forward_shape[cut:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(TransformedDistribution, _instance)
        batch_shape = Size(batch_shape)
        shape = batch_shape + self.event_shape
        for t in reversed(self.transforms):
            shape = t.inverse_shape(shape)
        new.base_dist = self.base_dist.expand(
            shape[:len(shape) - len(self.base_dist.event_shape)])
        new.transforms = self.transforms
        super(TransformedDistribution, new).__init__(batch_shape, self.event_shape,
                                                     validate_args=False)
        new._validate_args = self._validate_args
        return new

    @constraints.dependent_property(is_discrete=False)
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        support = self.transforms[-1].codomain
        if len(self.event_shape) > support.event_dim:
            support = constraints.independent(support,
                                              len(self.event_shape) - support.event_dim)
        return support

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    def sample(self, sample_shape=Size()):
        """Base samples pushed through the transforms, without gradient."""
        with no_grad():
            x = self.base_dist.sample(sample_shape)
            for transform in self.transforms:
                x = transform(x)
            return x

    def rsample(self, sample_shape=Size()):
        """Reparameterized base samples pushed through the transforms."""
        x = self.base_dist.rsample(sample_shape)
        for transform in self.transforms:
            x = transform(x)
        return x

    def log_prob(self, value):
        """The base log-density at the preimage, minus each transform's log-Jacobian
        summed over the event dims it does not cover."""
        if self._validate_args:
            self._validate_sample(value)
        event_dim = len(self.event_shape)
        log_prob = 0.0
        y = value
        for transform in reversed(self.transforms):
            x = transform.inv(y)
            event_dim += transform.domain.event_dim - transform.codomain.event_dim
            log_prob = log_prob - _sum_rightmost(transform.log_abs_det_jacobian(x, y),
                                                 event_dim - transform.domain.event_dim)
            y = x
        return log_prob + _sum_rightmost(self.base_dist.log_prob(y),
                                         event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """``value``, or ``1 - value`` where the transforms' composition decreases."""
        sign = 1
        for transform in self.transforms:
            sign = sign * transform.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        """The base CDF at the preimage (flipped for decreasing transforms)."""
        for transform in self.transforms[::-1]:
            value = transform.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        """The base quantile pushed through the transforms."""
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for transform in self.transforms:
            value = transform(value)
        return value
