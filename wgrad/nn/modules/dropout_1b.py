"""Dropout1d, Dropout2d, Dropout3d, AlphaDropout, FeatureAlphaDropout (the functions are in
``nn/_extra.py``)."""
from .. import _extra as E
from .dropout import _DropoutNd

__all__ = ["Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"]


class Dropout1d(_DropoutNd):
    """Zero whole channels of ``(N, C, L)`` / ``(C, L)`` input in training mode.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Dropout1d().eval()(wgrad.ones(2, 3)).sum().item()
    6.0
    """
    _fn = staticmethod(E.dropout1d)


class Dropout2d(_DropoutNd):
    """Zero whole channels of ``(N, C, H, W)`` input in training mode.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Dropout2d().eval()(wgrad.ones(1, 2, 2, 2)).sum().item()
    8.0
    """
    _fn = staticmethod(E.dropout2d)


class Dropout3d(_DropoutNd):
    """Zero whole channels of ``(N, C, D, H, W)`` / ``(C, D, H, W)`` input in training mode.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Dropout3d().eval()(wgrad.ones(1, 1, 1, 2)).sum().item()
    2.0
    """
    _fn = staticmethod(E.dropout3d)


class AlphaDropout(_DropoutNd):
    """Alpha dropout for SELU networks (keeps zero mean, unit variance) in training mode.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AlphaDropout().eval()(wgrad.ones(3)).sum().item()
    3.0
    """
    _fn = staticmethod(E.alpha_dropout)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout with one draw per channel, in training mode.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.FeatureAlphaDropout().eval()(wgrad.ones(2, 3)).sum().item()
    6.0
    """
    _fn = staticmethod(E.feature_alpha_dropout)
