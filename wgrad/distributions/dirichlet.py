"""The Dirichlet distribution (torch.distributions.Dirichlet)."""
from .._gamma_draws import _dirichlet_grad, _sample_dirichlet
from .._tensor import Size
from ..autograd import Function
from ..autograd.function import once_differentiable
from ..nn import functional as F
from ..ops import digamma, lgamma, xlogy
from . import constraints
from .exp_family import ExponentialFamily

__all__ = ["Dirichlet"]


def _Dirichlet_backward(x, concentration, grad_output):
    """The gradient of Dirichlet samples ``x`` with respect to ``concentration`` (the
    implicit reparameterization gradient of ``wgrad._dirichlet_grad``) applied to
    ``grad_output``."""
    total = concentration.sum(-1, True).expand_as(concentration)
    grad = _dirichlet_grad(x, concentration, total)
    return grad * (grad_output - (x * grad_output).sum(-1, True))


class _Dirichlet(Function):
    """Dirichlet draws that are differentiable in their concentration."""

    @staticmethod
    def forward(ctx, concentration):
        x = _sample_dirichlet(concentration)
        ctx.save_for_backward(x, concentration)
        return x

    @staticmethod
    @once_differentiable
    def backward(ctx, grad_output):
        x, concentration = ctx.saved_tensors
        return _Dirichlet_backward(x, concentration, grad_output)


class Dirichlet(ExponentialFamily):
    """The Dirichlet distribution over the probability simplex, of ``concentration`` (the
    last dim is the event dim).

    Example
    -------
    >>> m = Dirichlet(wgrad.tensor([1.0, 3.0]))
    >>> m.mean
    tensor([0.2500, 0.7500])
    >>> m.log_prob(wgrad.tensor([0.5, 0.5]))
    tensor(-0.2877)
    """
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if concentration.dim() < 1:
            raise ValueError("`concentration` parameter must be at least one-dimensional.")
        self.concentration = concentration
        shape = concentration.shape
        super().__init__(shape[:-1], shape[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Dirichlet, _instance)
        new.concentration = self.concentration.expand(Size(batch_shape) + self.event_shape)
        return self._expanded(Dirichlet, batch_shape, new)

    def rsample(self, sample_shape=()):
        shape = self._extended_shape(sample_shape)
        return _Dirichlet.apply(self.concentration.expand(shape))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        c = self.concentration
        return xlogy(c - 1.0, value).sum(-1) + lgamma(c.sum(-1)) - lgamma(c).sum(-1)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, True)

    @property
    def mode(self):
        above_one = (self.concentration - 1).clamp(min=0.0)
        mode = above_one / above_one.sum(-1, True)
        mask = (self.concentration < 1).all(dim=-1)
        mode[mask] = F.one_hot(mode[mask].argmax(dim=-1), above_one.shape[-1]).to(mode)
        return mode

    @property
    def variance(self):
        c = self.concentration
        total = c.sum(-1, True)
        return c * (total - c) / (total.pow(2) * (total + 1))

    def entropy(self):
        c = self.concentration
        k, total = c.size(-1), c.sum(-1)
        return (lgamma(c).sum(-1) - lgamma(total) - (k - total) * digamma(total)
                - ((c - 1.0) * digamma(c)).sum(-1))

    @property
    def _natural_params(self):
        return (self.concentration,)

    def _log_normalizer(self, x):
        return x.lgamma().sum(-1) - lgamma(x.sum(-1))
