"""Discrete Fourier transforms: the three primitives behind ``wgrad.fft``.

Like ATen, every transform reduces to one of ``_fft_c2c`` (complex to complex),
``_fft_r2c`` (real to the one-sided or full spectrum) and ``_fft_c2r`` (one-sided
spectrum to real), each with an explicit normalization (``"none"``, ``"sqrtn"``, ``"n"``:
the factor the unnormalized transform is multiplied by). The backward formulas are
PyTorch's (FunctionsManual.cpp fft_r2c_backward / fft_c2r_backward), written with these
same primitives, so double backward records through them. Zero padding and truncation
(``n``/``s``) happen before the transform with ``pad``, which is differentiable.

Nothing here is star-exported: ``wgrad.fft`` (a submodule) is the public namespace, and a
top-level ``fft`` function would shadow it.
"""
import math

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._tensor import _make, _wrap_dim
from ._primitive import Primitive
from .shape import pad

__all__ = []

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ()


def _scale_by(shape, dim, norm):
    n = math.prod(shape[d] for d in dim)
    return 1.0 if norm == "none" else (1 / math.sqrt(n) if norm == "sqrtn" else 1 / n)


# NOTE [FFT scaling]
# XLA's inverse transforms divide by n; ATen's primitives take the scale as an argument.
# Every scale is applied to the transform's *input* (the transforms are linear): inside a
# compiled program that multiply fuses into whatever produced the input, where a multiply
# of the output would be one more pass over the array after the transform.
def _scaled(x, c):
    return x if c == 1.0 else x * jnp.asarray(c, x.real.dtype)


def _c2c_fwd(self, *, dim, norm, forward):
    c = _scale_by(self.shape, dim, norm)
    if forward:
        return jnp.fft.fftn(_scaled(self, c), axes=dim)
    n = math.prod(self.shape[d] for d in dim)
    return jnp.fft.ifftn(_scaled(self, c * n), axes=dim)


def _r2c_fwd(self, *, dim, norm, onesided):
    x = _scaled(self, _scale_by(self.shape, dim, norm))
    if onesided:
        return jnp.fft.rfftn(x, axes=dim)
    return jnp.fft.fftn(x.astype(jnp.result_type(x.dtype, jnp.complex64)), axes=dim)


def _c2r_fwd(self, *, dim, norm, last_dim_size):
    s = tuple(self.shape[d] for d in dim[:-1]) + (last_dim_size,)
    c = _scale_by(s, range(len(s)), norm) * math.prod(s)
    return jnp.fft.irfftn(_scaled(self, c), s=s, axes=dim)


def _r2c_backward(grad, self_shape, dim, norm, onesided):
    if onesided:
        last = dim[-1]
        missing = self_shape[last] - grad.shape[last]
        if missing > 0:
            grad = _pad_dim(grad, last, missing)
    return _fft_c2c(grad, dim=dim, norm=norm, forward=False)


def _c2r_backward(grad, dim, norm):
    gI = _fft_r2c(grad, dim=dim, norm=norm, onesided=True)
    last = dim[-1]
    double = grad.shape[last] - gI.shape[last]
    if double > 0:
        # bins 1..N-onesided appear twice in the Hermitian-extended spectrum
        w = np.ones(gI.shape[last])
        w[1:1 + double] = 2
        shape = [1] * gI.ndim
        shape[last] = gI.shape[last]
        gI = gI * _make(jnp.asarray(w.reshape(shape), gI._data.real.dtype))
    return gI


_fft_c2c = Primitive("fft_c2c", _c2c_fwd, node_name="FftC2CBackward0",
                     self=lambda grad, dim, norm, forward: _fft_c2c(
                         grad, dim=dim, norm=norm, forward=not forward))
_fft_r2c = Primitive("fft_r2c", _r2c_fwd, node_name="FftR2CBackward0", self=_r2c_backward)
_fft_c2r = Primitive("fft_c2r", _c2r_fwd, node_name="FftC2RBackward0", self=_c2r_backward)


def _pad_dim(x, d, extra):
    """Zero-pad (``extra > 0``) or truncate (``extra < 0``) dim ``d`` at the end."""
    widths = [0, 0] * (x.ndim - d)
    widths[2 * (x.ndim - 1 - d) + 1] = extra
    return pad(x, tuple(widths))


# ======================================================================================
# Argument handling (torch's canonicalize_fft_shape_and_dim_args)
# ======================================================================================

_NORMS = {None: ("none", "n"), "backward": ("none", "n"), "ortho": ("sqrtn", "sqrtn"),
          "forward": ("n", "none")}


def norm_mode(norm, forward):
    if norm not in _NORMS:
        raise RuntimeError(f'Invalid normalization mode: "{norm}"')
    return _NORMS[norm][0 if forward else 1]


def _check_n(n):
    if n < 1:
        raise RuntimeError(f"Invalid number of data points ({n}) specified")


def canonical_dims(x, s, dim):
    """(shape, dims) with ``-1`` entries of ``s`` resolved; ``s=None`` keeps sizes."""
    nd = x.ndim
    if dim is not None:
        dims = (dim,) if isinstance(dim, int) else tuple(dim)
        dims = tuple(_wrap_dim(d, nd) for d in dims)
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
        if s is not None and len(s) != len(dims):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
    elif s is not None:
        if len(s) > nd:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{nd} dimensions.")
        dims = tuple(range(nd - len(s), nd))
    else:
        dims = tuple(range(nd))
    if s is None:
        shape = tuple(x.shape[d] for d in dims)
    else:
        shape = tuple(x.shape[d] if n == -1 else int(n) for n, d in zip(s, dims))
    for n in shape:
        _check_n(n)
    return shape, dims


def resize(x, dims, shape):
    for d, n in zip(dims, shape):
        if x.shape[d] != n:
            x = _pad_dim(x, d, n - x.shape[d])
    return x


def to_complex(x):
    d = x.dtype
    if d.is_complex:
        return x
    if not d.is_floating_point:
        x = x.to(D.get_default_dtype())
    return x.to(D.complex128 if x.dtype is D.float64 else D.complex64)


def to_real(x, name):
    d = x.dtype
    if d.is_complex:
        raise RuntimeError(f"{name} expects a real input tensor, but got {d.scalar_name}")
    if not d.is_floating_point:
        x = x.to(D.get_default_dtype())
    return x


def c2c(x, shape, dims, norm, forward):
    x = resize(to_complex(x), dims, shape)
    return _fft_c2c(x, dim=dims, norm=norm_mode(norm, forward), forward=forward)


def r2c(name, x, shape, dims, norm, forward, onesided=True):
    x = resize(to_real(x, name), dims, shape)
    return _fft_r2c(x, dim=dims, norm=norm_mode(norm, forward), onesided=onesided)


def c2r(x, shape, dims, norm, forward, default_last):
    """``shape[-1]`` is the output length (``default_last`` when ``None``)."""
    last = default_last if shape[-1] is None else shape[-1]
    _check_n(last)
    x = to_complex(x)
    x = resize(x, dims, tuple(shape[:-1]) + (last // 2 + 1,))
    return _fft_c2r(x, dim=dims, norm=norm_mode(norm, forward), last_dim_size=last)
