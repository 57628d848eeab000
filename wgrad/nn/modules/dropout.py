"""Dropout."""
from .. import functional as F
from .module import Module

__all__ = ["Dropout"]


class _DropoutNd(Module):
    """The dropout modules' common part: ``p``, ``inplace`` and a functional ``_fn``."""

    _fn = None

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zero each element with probability ``p`` in training mode and scale the rest by
    ``1 / (1 - p)``; the identity in eval mode.

    Example
    -------
    >>> import wgrad
    >>> d = wgrad.nn.Dropout(0.5).eval()
    >>> d(wgrad.ones(3))
    tensor([1., 1., 1.])
    """
    _fn = staticmethod(F.dropout)
