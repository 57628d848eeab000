"""``wgrad.fft``: torch.fft's transforms with PyTorch's gradients.

Every function takes torch's ``n``/``s`` (zero-pad or truncate, differentiably), ``dim``
and ``norm`` (``"backward"`` default, ``"ortho"``, ``"forward"``). Real-to-complex
transforms (rfft*, ihfft) give a real input the real part of its complex gradient;
complex-to-real ones (irfft*, hfft) use only the one-sided half of their input, and their
gradient is torch's (fft_c2r_backward: the doubled bins carry twice the weight).
"""
from . import _dtype as D
from ._tensor import _make
from .ops import _out
from .ops import spectral as _f

import jax.numpy as _jnp

__all__ = ["fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2",
           "irfft2", "rfftn", "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn",
           "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _one(x, n, dim):
    return _f.canonical_dims(x, None if n is None else (n,), (dim,))


def fft(input, n=None, dim=-1, norm=None, *, out=None):
    """One-dimensional discrete Fourier transform.

    Examples
    --------
    >>> wgrad.fft.fft(wgrad.tensor([1., 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    shape, dims = _one(input, n, dim)
    if not input.is_complex():  # torch's fft of a real signal: one R2C node, full spectrum
        return _f.r2c("fft", input, shape, dims, norm, True, onesided=False)
    return _f.c2c(input, shape, dims, norm, True)


def ifft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`fft`.

    Examples
    --------
    >>> wgrad.fft.ifft(wgrad.tensor([4.+0j, 0., 0., 0.]))
    tensor([1.+0.j, 1.+0.j, 1.+0.j, 1.+0.j])
    """
    shape, dims = _one(input, n, dim)
    return _f.c2c(input, shape, dims, norm, False)


def fftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional transform over ``dim`` (all dims, or the last ``len(s)``).

    Examples
    --------
    >>> wgrad.fft.fftn(wgrad.ones(2, 2))
    tensor([[4.+0.j, 0.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    return _c2c_n(input, s, dim, norm, True)


def ifftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`fftn`."""
    return _c2c_n(input, s, dim, norm, False)


def fft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional transform (``fftn`` over the last two dims by default)."""
    return _c2c_n(input, s, dim, norm, True)


def ifft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Inverse of :func:`fft2`."""
    return _c2c_n(input, s, dim, norm, False)


def _c2c_n(input, s, dim, norm, forward):
    """fftn/ifftn without their ``out=`` wrapper (fft2 and ifft2 call it directly)."""
    shape, dims = _f.canonical_dims(input, s, dim)
    return _f.c2c(input, shape, dims, norm, forward)


def rfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Transform of a real signal: the one-sided spectrum (``n // 2 + 1`` bins).

    Examples
    --------
    >>> wgrad.fft.rfft(wgrad.tensor([1., 1., 1., 1.]))
    tensor([4.+0.j, 0.+0.j, 0.+0.j])
    """
    shape, dims = _one(input, n, dim)
    return _f.r2c("rfft", input, shape, dims, norm, True)


def irfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`rfft`: a real signal of length ``n`` (``2 * (size - 1)``).

    Examples
    --------
    >>> wgrad.fft.irfft(wgrad.tensor([4.+0j, 0., 0.]))
    tensor([1., 1., 1., 1.])
    """
    _, dims = _one(input, None, dim)
    return _f.c2r(input, (n,), dims, norm, False, 2 * (input.shape[dims[0]] - 1))


def rfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional :func:`rfft`; the last transformed dim is one-sided."""
    shape, dims = _f.canonical_dims(input, s, dim)
    return _f.r2c("rfftn", input, shape, dims, norm, True)


def irfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`rfftn`; ``s[-1]`` is the real output length of the last dim."""
    return _c2r_n(input, s, dim, norm, False)


def _c2r_n(input, s, dim, norm, forward):
    """irfftn (``forward`` False) and hfftn (True, of the conjugate, as torch's: one C2R
    node over every dim) without their ``out=`` wrapper."""
    if s is not None:
        s = tuple(s)
        shape, dims = _f.canonical_dims(input, tuple(-1 for _ in s), dim)
        shape = tuple(input.shape[d] if n == -1 else int(n) for n, d in zip(s, dims))
        for n in shape[:-1]:
            _f._check_n(n)
        last = None if s[-1] == -1 else shape[-1]
        shape = shape[:-1] + (last,)
    else:
        shape, dims = _f.canonical_dims(input, None, dim)
        shape = shape[:-1] + (None,)
    x = _f.to_complex(input).conj() if forward else input
    return _f.c2r(x, shape, dims, norm, forward, 2 * (input.shape[dims[-1]] - 1))


def hfftn(input, s=None, dim=None, norm=None, *, out=None):
    """N-dimensional :func:`hfft`: the transform of a signal Hermitian-symmetric in every
    transformed dim, given by its one-sided half in the last (a real result of length
    ``s[-1]``, by default ``2 * (size - 1)``)."""
    return _c2r_n(input, s, dim, norm, True)


def hfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`hfftn`.

    Examples
    --------
    >>> wgrad.fft.hfft2(wgrad.tensor([[1.+0j, 0.], [0., 0.]]))
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _c2r_n(input, s, dim, norm, True)


def ihfftn(input, s=None, dim=None, norm=None, *, out=None):
    """Inverse of :func:`hfftn`: a real signal's ``ifftn``, one-sided in the last dim (as
    torch: the last dim's R2C, then the conjugate and the other dims' inverse C2C)."""
    return _ihfft_n(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`ihfftn`.

    Examples
    --------
    >>> wgrad.fft.ihfft2(wgrad.tensor([[4., 0.], [0., 0.]]))
    tensor([[1.-0.j, 1.-0.j],
            [1.+0.j, 1.+0.j]])
    """
    return _ihfft_n(input, s, dim, norm)


def _ihfft_n(input, s, dim, norm):
    shape, dims = _f.canonical_dims(input, s, dim)
    half = _f.r2c("ihfftn", input, shape[-1:], dims[-1:], norm, False)
    if len(dims) == 1:
        return half.conj()
    return _f.c2c(half.conj_physical(), shape[:-1], dims[:-1], norm, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`rfftn`."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None, *, out=None):
    """Two-dimensional :func:`irfftn`."""
    return irfftn(input, s, dim, norm)


def hfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Transform of a Hermitian-symmetric signal given by its one-sided half (real result).

    Examples
    --------
    >>> wgrad.fft.hfft(wgrad.tensor([1.+0j, 0., 0.]))
    tensor([1., 1., 1., 1.])
    """
    _, dims = _one(input, None, dim)
    return _f.c2r(_f.to_complex(input).conj(), (n,), dims, norm, True,
                  2 * (input.shape[dims[0]] - 1))


def ihfft(input, n=None, dim=-1, norm=None, *, out=None):
    """Inverse of :func:`hfft`: the one-sided half of ``ifft`` of a real signal.

    Examples
    --------
    >>> wgrad.fft.ihfft(wgrad.tensor([1., 1., 1., 1.]))
    tensor([1.-0.j, 0.-0.j, 0.-0.j])
    """
    shape, dims = _one(input, n, dim)
    return _f.r2c("ihfft", input, shape, dims, norm, False).conj()


def _freq_dtype(dtype, name):
    dt = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"{name} requires a floating point or complex dtype")
    return dt


def fftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False):
    """Sample frequencies of an ``n``-point transform with spacing ``d``.

    Examples
    --------
    >>> wgrad.fft.fftfreq(4)
    tensor([ 0.0000,  0.2500, -0.5000, -0.2500])
    """
    dt = _freq_dtype(dtype, "fftfreq")
    t = _make(_jnp.fft.fftfreq(n, d).astype(dt.np))
    return t.requires_grad_() if requires_grad else t


def rfftfreq(n, d=1.0, *, dtype=None, device=None, layout=None, requires_grad=False):
    """Sample frequencies of :func:`rfft` of an ``n``-point signal.

    Examples
    --------
    >>> wgrad.fft.rfftfreq(5)
    tensor([0.0000, 0.2000, 0.4000])
    """
    dt = _freq_dtype(dtype, "rfftfreq")
    t = _make(_jnp.fft.rfftfreq(n, d).astype(dt.np))
    return t.requires_grad_() if requires_grad else t


def _shift(input, dim, sign):
    if dim is None:
        dim = tuple(range(input.ndim))
    elif isinstance(dim, int):
        dim = (dim,)
    dim = tuple(dim)
    if not dim:
        return input
    shifts = tuple(sign * (input.shape[d] // 2) for d in dim)
    return input.roll(shifts, dim)


def fftshift(input, dim=None):
    """Move the zero-frequency bin to the centre (a roll by ``n // 2``).

    Examples
    --------
    >>> wgrad.fft.fftshift(wgrad.fft.fftfreq(4))
    tensor([-0.5000, -0.2500,  0.0000,  0.2500])
    """
    return _shift(input, dim, 1)


def ifftshift(input, dim=None):
    """Inverse of :func:`fftshift`."""
    return _shift(input, dim, -1)


_out.install(globals(), "fft")  # NOTE [out= arguments]
