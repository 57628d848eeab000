"""Exponential-family distributions (torch.distributions.ExponentialFamily)."""
from .distribution import Distribution
from .utils import _grad

__all__ = ["ExponentialFamily"]


class ExponentialFamily(Distribution):
    """A distribution of density ``exp(<t(x), theta> - F(theta) + k(x))``: subclasses give
    the natural parameters ``theta``, the log normalizer ``F`` and the mean carrier measure
    ``E[k(x)]``; the entropy (and the Bregman form of KL between two members of one
    family) follows by differentiating ``F``."""

    @property
    def _natural_params(self):
        raise NotImplementedError

    def _log_normalizer(self, *natural_params):
        raise NotImplementedError

    @property
    def _mean_carrier_measure(self):
        raise NotImplementedError

    def entropy(self):
        """``F(theta) - <theta, grad F(theta)> - E[k(x)]``, by autograd."""
        params = [p.detach().requires_grad_() for p in self._natural_params]
        log_norm = self._log_normalizer(*params)
        result = log_norm - self._mean_carrier_measure
        for p, g in zip(params, _grad(log_norm.sum(), params)):
            result = result - (p * g).reshape(tuple(self._batch_shape) + (-1,)).sum(-1)
        return result
