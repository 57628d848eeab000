"""``wgrad.signal.windows``: torch.signal.windows' window functions, built as torch's are
from ``linspace`` (torch's values bit for bit, NOTE [linspace's values]) and elementwise
ops, so a window made with ``requires_grad=True`` is differentiable in its points.

Example
-------
>>> wgrad.signal.windows.hann(5)
tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
"""
import collections.abc
import math

from .. import _creation
from .. import _dtype as D
from .._tensor import strided
from ..ops import abs as _abs, cos, exp, i0, minimum, sin, sqrt

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(name, M, dtype, layout):
    """torch's checks; the dtype (the default float dtype when None)."""
    dtype = D.get_default_dtype() if dtype is None else dtype
    if M < 0:
        raise ValueError(f"{name} requires non-negative window length, got M={M}")
    if layout is not strided:
        raise ValueError(f"{name} is implemented for strided tensors only, got: {layout}")
    if dtype not in (D.float32, D.float64):
        raise ValueError(f"{name} expects float32 or float64 dtypes, got: {dtype}")
    return dtype


def _points(start, end, M, dtype, device, requires_grad):
    return _creation.linspace(start, end, M, dtype=dtype, device=device,
                              requires_grad=requires_grad)


def _short(M, dtype, device, requires_grad):
    """The window of length 0 (empty) or 1 (one), or None."""
    if M == 0:
        return _creation.empty(0, dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return _creation.ones(1, dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def exponential(M, *, center=None, tau=1.0, sym=True, dtype=None, layout=strided,
                device=None, requires_grad=False):
    """``exp(-|n - center| / tau)``."""
    dtype = _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return _short(M, dtype, device, requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / tau
    return exp(-_abs(_points(-center * c, (-center + (M - 1)) * c, M, dtype, device,
                              requires_grad)))


def cosine(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """``sin(pi (n + 1/2) / M)`` (the sine window)."""
    dtype = _checks("cosine", M, dtype, layout)
    if M == 0:
        return _short(M, dtype, device, requires_grad)
    c = math.pi / (M + 1 if not sym and M > 1 else M)
    return sin(_points(0.5 * c, (0.5 + (M - 1)) * c, M, dtype, device, requires_grad))


def gaussian(M, *, std=1.0, sym=True, dtype=None, layout=strided, device=None,
             requires_grad=False):
    """``exp(-(n - (M - 1) / 2)^2 / (2 std^2))``."""
    dtype = _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return _short(M, dtype, device, requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    c = 1 / (std * math.sqrt(2))
    k = _points(start * c, (start + (M - 1)) * c, M, dtype, device, requires_grad)
    return exp(-(k ** 2))


def kaiser(M, *, beta=12.0, sym=True, dtype=None, layout=strided, device=None,
           requires_grad=False):
    """``i0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / i0(beta)``."""
    dtype = _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    short = _short(M, dtype, device, requires_grad)
    if short is not None:
        return short
    b = _creation.tensor(beta, dtype=dtype, device=device)
    c = 2.0 * b / (M if not sym else M - 1)
    end = minimum(b, -b + (M - 1) * c)
    k = _points(-beta, end.item(), M, dtype, device, requires_grad)
    return i0(sqrt(b * b - k ** 2)) / i0(b)


def general_cosine(M, *, a, sym=True, dtype=None, layout=strided, device=None,
                   requires_grad=False):
    """``sum_i (-1)^i a_i cos(2 pi i n / (M - 1))``."""
    dtype = _checks("general_cosine", M, dtype, layout)
    short = _short(M, dtype, device, requires_grad)
    if short is not None:
        return short
    if not isinstance(a, collections.abc.Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    c = 2 * math.pi / (M if not sym else M - 1)
    k = _points(0, (M - 1) * c, M, dtype, device, requires_grad)
    a_i = _creation.tensor([(-1) ** i * w for i, w in enumerate(a)], dtype=dtype,
                           device=device, requires_grad=requires_grad)
    i = _creation.arange(a_i.shape[0], dtype=a_i.dtype, device=device,
                         requires_grad=requires_grad)
    return (a_i.unsqueeze(-1) * cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha=0.54, sym=True, dtype=None, layout=strided, device=None,
                    requires_grad=False):
    """``alpha - (1 - alpha) cos(2 pi n / (M - 1))``."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hamming window (``general_hamming`` with alpha 0.54)."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Hann window (``general_hamming`` with alpha 0.5)."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The Blackman window (``general_cosine`` with 0.42, 0.5, 0.08)."""
    dtype = _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """The triangular window ``1 - |2n / (M - 1) - 1|``."""
    dtype = _checks("bartlett", M, dtype, layout)
    short = _short(M, dtype, device, requires_grad)
    if short is not None:
        return short
    c = 2 / (M if not sym else M - 1)
    return 1 - _abs(_points(-1, -1 + (M - 1) * c, M, dtype, device, requires_grad))


def nuttall(M, *, sym=True, dtype=None, layout=strided, device=None, requires_grad=False):
    """Nuttall's minimum 4-term Blackman-Harris window."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
