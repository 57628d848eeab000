"""Discrete Fourier transforms: the three primitives behind ``wgrad.fft``.

Like ATen, every transform reduces to one of ``_fft_c2c`` (complex to complex),
``_fft_r2c`` (real to the one-sided or full spectrum) and ``_fft_c2r`` (one-sided
spectrum to real), each with an explicit normalization (``"none"``, ``"sqrtn"``, ``"n"``:
the factor the unnormalized transform is multiplied by). The backward formulas are
PyTorch's (FunctionsManual.cpp fft_r2c_backward / fft_c2r_backward), written with these
same primitives, so double backward records through them. Zero padding and truncation
(``n``/``s``) happen before the transform with ``pad``, which is differentiable.

Only ``stft`` and ``istft`` are star-exported (torch has them as ``torch.stft`` and
``Tensor.stft``, not in ``torch.fft``): ``wgrad.fft`` (a submodule) is the namespace of the
transforms, and a top-level ``fft`` function would shadow it.
"""
import math
import warnings

import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._creation import ones
from .._tensor import _make, _wrap_dim
from ._primitive import Primitive
from .elementwise import view_as_real
from .indexing import _unfold_backward, unfold
from .shape import pad

__all__ = ["stft", "istft"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ("stft", "istft")


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
    size = x.shape
    nd = len(size)
    if dim is not None:
        if isinstance(dim, int):
            dims = (_wrap_dim(dim, nd),)
        else:
            dims = tuple([_wrap_dim(d, nd) for d in dim])
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
        shape = tuple([size[d] for d in dims])
    else:
        shape = tuple([size[d] if n == -1 else int(n) for n, d in zip(s, dims)])
    for n in shape:
        _check_n(n)
    return shape, dims


def resize(x, dims, shape):
    size = x.shape
    for d, n in zip(dims, shape):
        if size[d] != n:
            x = _pad_dim(x, d, n - size[d])
            size = x.shape
    return x


def _no_half(x):
    """torch's CPU FFTs (pocketfft, MKL) have no float16/bfloat16 version."""
    if x.dtype in (D.float16, D.bfloat16) and x.device.type == "cpu":
        raise RuntimeError(f"Unsupported dtype {x.dtype.scalar_name}")


def to_complex(x):
    _no_half(x)
    d = x.dtype
    if d.is_complex:
        return x
    if not d.is_floating_point:
        x = x.to(D.get_default_dtype())
    return x.to(D.complex128 if x.dtype is D.float64 else D.complex64)


def to_real(x, name):
    _no_half(x)
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


# ======================================================================================
# Short-time transforms: framing (unfold), a window and a batched transform; istft's
# overlap-add is unfold's adjoint. Every step is a differentiable op, so the gradients
# are those of the composition, as torch's.
# ======================================================================================

_WARN_NO_WINDOW = (
    "A window was not provided. A rectangular window will be applied,which is known to cause "
    "spectral leakage. Other windows such as torch.hann_window or torch.hamming_window are "
    "recommended to reduce spectral leakage.To suppress this warning and use a rectangular "
    "window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
_WARN_NO_WINDOW_INVERSE = (
    "A window was not provided. A rectangular window will be applied.Please provide the same "
    "window used by stft to make the inversion lossless.To suppress this warning and use a "
    "rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.")
_WARN_REAL_STFT = (
    "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
    "return complex tensors for all inputs, and return_complex=False will raise an error.\n"
    "Note: you can still call torch.view_as_real on the complex output to recover the old "
    "return format.")
_ERR_ONESIDED = "Cannot have onesided output if window or input is complex"


def _type_str(t):
    """A tensor's type as torch's argument reports print it."""
    d = t.dtype
    return f"CPU{d.scalar_name}Type" if d.is_complex else d.legacy_type


def _flag(v):
    return "None" if v is None else str(int(v))


def _window_str(window):
    return "None" if window is None else f"{_type_str(window)}{{{list(window.shape)}}}"


def _centered(window, win_length, n_fft, like):
    """The window zero-padded on both sides to ``n_fft`` (ones when ``window`` is None)."""
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real())
    left = (n_fft - win_length) // 2
    return pad(window, (left, n_fft - win_length - left))


def stft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
         pad_mode="reflect", normalized=False, onesided=None, return_complex=None,
         align_to_window=None):
    """Short-time Fourier transform: the transforms of the ``window``-ed frames of length
    ``n_fft`` taken every ``hop_length`` samples of a 1-D signal or a batch of them, as
    ``(B?, N, frames)`` (``N = n_fft // 2 + 1`` when ``onesided``, the default for real
    input and window). ``center`` pads ``n_fft // 2`` on both sides in ``pad_mode``.

    Example
    -------
    >>> wgrad.stft(wgrad.ones(4), 2, hop_length=2, window=wgrad.ones(2), center=False,
    ...            return_complex=True)
    tensor([[2.+0.j, 2.+0.j],
            [0.+0.j, 0.+0.j]])
    """
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:  # as torch.functional.stft: pad a 3-D view, then view back
        nd, p = input.ndim, n_fft // 2
        x = pad(input.reshape((1,) * (3 - nd) + tuple(input.shape)), (p, p), pad_mode)
        input = x.reshape(tuple(x.shape)[-nd:])
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if window is None:
        warnings.warn(_WARN_NO_WINDOW, UserWarning, stacklevel=2)
    if return_complex is None:
        return_complex = input.is_complex() or (window is not None and window.is_complex())
        if not return_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in "
                               "a future PyTorch release.")
    if not return_complex:
        warnings.warn(_WARN_REAL_STFT, UserWarning, stacklevel=2)

    def fail(message):
        raise RuntimeError(
            f"stft({_type_str(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_str(window)}, normalized={int(normalized)}, "
            f"onesided={_flag(onesided)}, return_complex={int(return_complex)}, "
            f"align_to_window={_flag(align_to_window)}) : {message}")

    if not (input.is_floating_point() or input.is_complex()):
        fail("expected a tensor of floating point or complex values")
    if input.ndim not in (1, 2):
        fail("expected a 1D or 2D tensor")
    n = input.shape[-1]
    if n_fft <= 0 or n_fft > n:
        fail(f"expected 0 < n_fft < {n}, but got n_fft={win if align_to_window else n_fft}")
    if hop <= 0:
        fail(f"expected hop_length > 0, but got hop_length={hop}")
    if win <= 0 or win > n_fft:
        fail(f"expected 0 < win_length <= n_fft, but got win_length={win}")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(f"expected a 1D window tensor of size equal to win_length={win}, but got window "
             f"with size {list(window.shape)}")
    x = input
    if align_to_window and win < n_fft:  # frames start where the (centered) window does
        left = (n_fft - win) // 2
        x = pad(x, (left, left))
        _check_aligned_frames(x, n, n_fft, hop, win)
    frames = unfold(x, -1, n_fft, hop)
    if window is not None or win < n_fft:
        frames = frames * _centered(window, win, n_fft, input)
    if frames.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"MKL FFT doesn't support tensors of type: "
                           f"{frames.dtype.scalar_name}")
    norm = "sqrtn" if normalized else "none"
    last = (frames.ndim - 1,)
    if frames.is_complex():
        if onesided:
            raise RuntimeError(_ERR_ONESIDED)
        out = _fft_c2c(frames, dim=last, norm=norm, forward=True)
    else:
        out = _fft_r2c(frames, dim=last, norm=norm, onesided=onesided is None or onesided)
    out = out.transpose(-1, -2)
    return out if return_complex else view_as_real(out)


def _check_aligned_frames(x, n, n_fft, hop, win):
    """torch frames an aligned signal as ``1 + (n - win_length) // hop`` strided views of
    the padded signal, which overrun it when ``n_fft - win_length`` is odd and the last
    frame ends at the signal's end: torch's storage error then."""
    frames = 1 + (n - win) // hop
    rows, length, size = (x.shape[0] if x.ndim == 2 else 1), x.shape[-1], x.dtype.itemsize
    need = (rows - 1) * length + (frames - 1) * hop + n_fft
    if need > rows * length:
        raise RuntimeError(
            f"setStorage: sizes [{rows}, {frames}, {n_fft}], strides [{length}, {hop}, 1], "
            f"storage offset 0, and itemsize {size} requiring a storage size of {need * size} "
            f"are out of bounds for storage of size {rows * length * size}")


def _dim_error(ndim, dim):
    return IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                      f"{ndim - 1}], but got {dim})")


def istft(input, n_fft, hop_length=None, win_length=None, window=None, center=True,
          normalized=False, onesided=None, length=None, return_complex=False):
    """Inverse of :func:`stft`: the least-squares signal of a complex STFT ``(B?, N,
    frames)`` by overlap-add of the inverse transforms, divided by the overlap-added
    squared window (which must not vanish). ``length`` trims or zero-pads the result.

    Example
    -------
    >>> x = wgrad.arange(8.)
    >>> w = wgrad.hann_window(4)
    >>> s = wgrad.stft(x, 4, hop_length=1, window=w, return_complex=True)
    >>> wgrad.istft(s, 4, hop_length=1, window=w)
    tensor([0., 1., 2., 3., 4., 5., 6., 7.])
    """
    hop = n_fft >> 2 if hop_length is None else hop_length
    win = n_fft if win_length is None else win_length
    if not input.is_complex():
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is None:
        warnings.warn(_WARN_NO_WINDOW_INVERSE, UserWarning, stacklevel=2)
    real_ndim = input.ndim + 1  # torch works on view_as_real(input)
    for dim in (-2, -3):
        if real_ndim < -dim:
            raise _dim_error(real_ndim, dim)
    n_frames, fft_size = input.shape[-1], input.shape[-2]
    expected = n_fft + hop * (n_frames - 1)

    def fail(message):
        raise RuntimeError(
            f"istft({_type_str(input)}{list(input.shape)}, n_fft={n_fft}, hop_length={hop}, "
            f"win_length={win}, window={_window_str(window)}, center={int(center)}, "
            f"normalized={int(normalized)}, onesided={_flag(onesided)}, "
            f"length={'None' if length is None else length}, "
            f"return_complex={int(return_complex)}) {message}")

    if input.numel() == 0:
        fail(": input tensor cannot be empty.")
    if real_ndim not in (3, 4):
        fail(f": expected a tensor with 3 or 4 dimensions, but got {real_ndim}")
    side = fft_size != n_fft if onesided is None else bool(onesided)
    if side and n_fft // 2 + 1 != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft / 2 + 1 when onesided=True, but got {fft_size}")
    if not side and n_fft != fft_size:
        fail(": expected the frequency dimension (3rd to the last) of the input tensor to "
             f"match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop <= win:
        fail(": expected 0 < hop_length <= win_length")
    if not 0 < win <= n_fft:
        fail(": expected 0 < win_length <= n_fft")
    if window is not None and (window.ndim != 1 or window.shape[0] != win):
        fail(": Invalid window shape. window has to be 1D and length of `win_length`")
    w = _centered(window, win, n_fft, input)
    x = input.transpose(-1, -2)  # (B?, frames, N)
    norm = "sqrtn" if normalized else "n"
    last = (x.ndim - 1,)
    if return_complex:
        if side:
            raise RuntimeError(_ERR_ONESIDED)
        x = _fft_c2c(x, dim=last, norm=norm, forward=False)
    else:
        if window is not None and window.is_complex():
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not side:
            x = x.narrow(-1, 0, n_fft // 2 + 1)
        x = _fft_c2r(x, dim=last, norm=norm, last_dim_size=n_fft)
    frames = x * w
    y = _unfold_backward(frames, shape=tuple(frames.shape[:-2]) + (expected,),
                         dim=frames.ndim - 2, size=n_fft, step=hop)
    envelope = _unfold_backward((w * w).expand(n_frames, n_fft), shape=(expected,), dim=0,
                                size=n_fft, step=hop)
    start = n_fft // 2 if center else 0
    if length is not None:
        end = start + length
    else:
        end = -(n_fft // 2) if center else expected
    y, envelope = y[..., start:end], envelope[start:end]
    if envelope.numel() == 0:
        raise RuntimeError("min(): Expected reduction dim to be specified for input.numel() "
                           "== 0. Specify the reduction dim with the 'dim' argument.")
    if bool(envelope.abs().min() < 1e-11):
        fail("window overlap add min: 1\n[ CPUBoolType{} ]")
    y = y / envelope
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        y = pad(y, (0, end - expected))
    return y
