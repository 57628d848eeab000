"""``nn.init``: in-place initialisers with torch's distributions, fans and gains.

# NOTE [Complex initialisation]
# For a complex tensor torch draws uniform_ with the real and imaginary parts each uniform
# in [a, b], and normal_ as ``mean * (1 + 1j) + std * z`` with z a standard complex normal
# (each part N(0, 1/2), so E|w - mean|^2 = std^2). Fans count complex elements like real
# ones, so xavier_/kaiming_ give complex weights the variance (E|w|^2) of the real case.
# orthogonal_ is unitary for complex tensors (torch raises there). trunc_normal_ (which
# torch rejects for complex) draws each part from the truncated normal with std/sqrt(2).
"""
import math
import warnings

import jax
import numpy as np
from jax.scipy.special import ndtri

from .. import _dtype as D
from .._creation import rand, randn, tensor as _tensor
from ..autograd.grad_mode import no_grad

__all__ = ["calculate_gain", "uniform_", "normal_", "trunc_normal_", "constant_", "ones_",
           "zeros_", "eye_", "dirac_", "xavier_uniform_", "xavier_normal_",
           "kaiming_uniform_", "kaiming_normal_", "orthogonal_", "sparse_",
           "uniform", "normal", "constant", "eye", "dirac", "xavier_uniform", "xavier_normal",
           "kaiming_uniform", "kaiming_normal", "orthogonal", "sparse"]

_LINEAR = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """The recommended gain for a nonlinearity (``tanh``: 5/3, ``relu``: sqrt(2), ...).

    Example
    -------
    >>> from wgrad.nn import init
    >>> init.calculate_gain("tanh")
    1.6666666666666667
    """
    if nonlinearity in _LINEAR or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


# Values are drawn and shaped on the host (numpy, from wgrad's generator) and written with
# one copy_: a layer's construction compiles no kernel per parameter shape beyond that copy.

def _fill(tensor, value):
    """Write ``value`` (a numpy array of ``tensor``'s shape) into ``tensor`` without
    recording."""
    with no_grad():
        tensor.copy_(_tensor(np.asarray(value), dtype=tensor.dtype))
    return tensor


def _draw(fn, tensor, generator, dtype=None):
    """A float64/complex128 numpy draw of ``tensor``'s shape from ``rand``/``randn``."""
    d = dtype or _draw_dtype(tensor)
    return np.asarray(fn(*tensor.shape, generator=generator, dtype=d)._data)


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fill ``tensor`` with values drawn from U(a, b) (NOTE [Complex initialisation]).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.nn.init.uniform_(wgrad.empty(3), -1, 1)
    >>> bool((w.abs() <= 1).all())
    True
    """
    u = _draw(rand, tensor, generator)
    if tensor.is_complex():
        return _fill(tensor, a * (1 + 1j) + (b - a) * u)
    return _fill(tensor, a + (b - a) * u)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fill ``tensor`` with values drawn from N(mean, std^2) (NOTE [Complex
    initialisation]).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.normal_(wgrad.empty(2, 3)).shape
    wgrad.Size([2, 3])
    """
    z = _draw(randn, tensor, generator)
    shift = mean * (1 + 1j) if tensor.is_complex() else mean
    return _fill(tensor, shift + std * z)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fill ``tensor`` from N(mean, std^2) truncated to [a, b] (inverse-CDF sampling).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.nn.init.trunc_normal_(wgrad.empty(100), std=3.0)
    >>> bool((w.abs() <= 2).all())
    True
    """
    if mean < a - 2 * std or mean > b + 2 * std:
        warnings.warn("mean is more than 2 std from [a, b] in nn.init.trunc_normal_. The "
                      "distribution of values may be incorrect.", stacklevel=2)
    part = std / math.sqrt(2) if tensor.is_complex() else std

    def draw():
        lo, hi = _ndtr((a - mean) / part), _ndtr((b - mean) / part)
        u = _draw(rand, tensor, generator, D.float64)
        return np.asarray(_truncated(u, lo, hi, part, mean, a, b))
    x = draw()
    if tensor.is_complex():
        x = x + 1j * draw()
    return _fill(tensor, x)


def constant_(tensor, val):
    """Fill ``tensor`` with ``val``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.constant_(wgrad.empty(2), 0.5)
    tensor([0.5000, 0.5000])
    """
    with no_grad():
        tensor.fill_(val)
    return tensor


def ones_(tensor):
    """Fill ``tensor`` with ones.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.ones_(wgrad.empty(2))
    tensor([1., 1.])
    """
    return constant_(tensor, 1.0)


def zeros_(tensor):
    """Fill ``tensor`` with zeros.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.zeros_(wgrad.empty(2))
    tensor([0., 0.])
    """
    with no_grad():
        tensor.zero_()
    return tensor


def eye_(tensor):
    """Fill the 2-D ``tensor`` with the identity matrix.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.eye_(wgrad.empty(2, 3))
    tensor([[1., 0., 0.],
            [0., 1., 0.]])
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor, groups=1):
    """Fill the 3-, 4- or 5-D ``tensor`` with the Dirac delta (identity convolution),
    per group.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.nn.init.dirac_(wgrad.empty(2, 2, 3))
    >>> w[:, :, 1]
    tensor([[1., 0.],
            [0., 1.]])
    """
    shape = tuple(tensor.shape)
    if len(shape) not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    if shape[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    per_group = shape[0] // groups
    n = min(per_group, shape[1])
    a = np.zeros(shape, dtype=tensor.dtype.np)
    centre = tuple(s // 2 for s in shape[2:])
    for g in range(groups):
        for d in range(n):
            a[(g * per_group + d, d) + centre] = 1
    return _fill(tensor, a)


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    field = 1
    for s in tuple(tensor.shape)[2:]:
        field *= s
    return tensor.shape[1] * field, tensor.shape[0] * field


def _calculate_correct_fan(tensor, mode):
    mode = mode.lower()
    valid = ["fan_in", "fan_out"]
    if mode not in valid:
        raise ValueError(f"Mode {mode} not supported, please use one of {valid}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """U(-a, a) with a = gain * sqrt(6 / (fan_in + fan_out)) (Glorot and Bengio, 2010).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.nn.init.xavier_uniform_(wgrad.empty(3, 5))
    >>> bool((w.abs() <= (6 / 8) ** 0.5).all())
    True
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """N(0, std^2) with std = gain * sqrt(2 / (fan_in + fan_out)).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.xavier_normal_(wgrad.empty(3, 5)).shape
    wgrad.Size([3, 5])
    """
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    std = gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """U(-bound, bound) with bound = gain * sqrt(3 / fan) (He et al., 2015).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.nn.init.kaiming_uniform_(wgrad.empty(3, 4), nonlinearity="relu")
    >>> bool((w.abs() <= (6 / 4) ** 0.5).all())
    True
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """N(0, std^2) with std = gain / sqrt(fan).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.init.kaiming_normal_(wgrad.empty(3, 4)).shape
    wgrad.Size([3, 4])
    """
    if 0 in tuple(tensor.shape):
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=2)
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def orthogonal_(tensor, gain=1, generator=None):
    """A (semi-)orthogonal matrix (unitary for complex tensors), trailing dimensions
    flattened (Saxe et al., 2013).

    Example
    -------
    >>> import wgrad
    >>> q = wgrad.nn.init.orthogonal_(wgrad.empty(3, 3, dtype=wgrad.float64))
    >>> bool(((q @ q.T) - wgrad.eye(3, dtype=wgrad.float64)).abs().max() < 1e-12)
    True
    """
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.numel() == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = _draw(randn, tensor, generator).reshape(rows, cols)
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    d = np.diagonal(r)
    q = q * np.where(d == 0, 0, d / np.where(d == 0, 1, np.abs(d)))  # sgn(d): unique QR
    if rows < cols:
        q = q.T
    return _fill(tensor, (q * gain).reshape(tuple(tensor.shape)))


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D sparse matrix: N(0, std^2) values with ``ceil(sparsity * rows)`` zeros per
    column.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.nn.init.sparse_(wgrad.empty(4, 3), 0.5)
    >>> int((w == 0).sum())
    6
    """
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    rows, cols = tensor.shape
    n_zeros = int(math.ceil(sparsity * rows))
    values = _draw(randn, tensor, generator) * std
    for c in range(cols):
        idx = np.asarray(rand(rows, generator=generator, dtype=D.float64)._data).argsort()
        values[idx[:n_zeros], c] = 0
    return _fill(tensor, values)


@jax.jit
def _truncated(u, lo, hi, std, mean, a, b):
    # inverse-CDF sampling: one XLA kernel per shape (scipy.special would cost ~0.7 s of
    # import time)
    return jax.numpy.clip(ndtri(lo + (hi - lo) * u) * std + mean, a, b)


def _ndtr(x):
    return 0.5 * (1 + math.erf(x / math.sqrt(2)))


def _draw_dtype(tensor):
    """Draw in double precision (float64/complex128) where available, cast on copy."""
    d = tensor.dtype
    if not (d.is_floating_point or d.is_complex):
        return d
    wide = D.complex128 if d.is_complex else D.float64
    return wide if D.X64_ENABLED else d



def _make_deprecate(meth):
    """``meth`` (an in-place initialiser ``x_``) under its old name ``x``, warning torch's
    FutureWarning at each call.

    Example
    -------
    >>> import warnings
    >>> with warnings.catch_warnings(record=True) as w:
    ...     warnings.simplefilter("always")
    ...     t = wgrad.nn.init.constant(wgrad.empty(2), 3.0)
    >>> t, str(w[0].message)
    (tensor([3., 3.]), '`nn.init.constant` is now deprecated in favor of `nn.init.constant_`.')
    """
    new_name = meth.__name__
    old_name = new_name[:-1]

    def deprecated_init(*args, **kwargs):
        warnings.warn(f"`nn.init.{old_name}` is now deprecated in favor of "
                      f"`nn.init.{new_name}`.", FutureWarning, stacklevel=2)
        return meth(*args, **kwargs)

    deprecated_init.__doc__ = f"""
    {old_name}(...)

    Deprecated in favor of ``wgrad.nn.init.{new_name}``, which it calls after warning.
    """
    deprecated_init.__name__ = old_name
    return deprecated_init


# torch's deprecated names (each warns, then calls the underscore version)
uniform = _make_deprecate(uniform_)
normal = _make_deprecate(normal_)
constant = _make_deprecate(constant_)
eye = _make_deprecate(eye_)
dirac = _make_deprecate(dirac_)
xavier_uniform = _make_deprecate(xavier_uniform_)
xavier_normal = _make_deprecate(xavier_normal_)
kaiming_uniform = _make_deprecate(kaiming_uniform_)
kaiming_normal = _make_deprecate(kaiming_normal_)
orthogonal = _make_deprecate(orthogonal_)
sparse = _make_deprecate(sparse_)
