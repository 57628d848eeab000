"""Convolutions: one primitive over ``jax.lax.conv_general_dilated`` and torch's conv1d/conv2d.

# NOTE [Convolution backward as convolutions]
# A convolution is bilinear in (input, weight). Its gradients are the two transposed
# convolutions, each again a general dilated convolution with permuted dimension numbers
# (strides and dilations swap roles; feature groups become batch groups for the weight).
# Written with the same primitive, the gradients are recorded under create_graph, so double
# backward works. Conjugate Wirtinger: the input's gradient is the transpose applied to
# ``grad`` with the *conjugated* weight, and vice versa.
"""
import jax

from .. import _precision
from ._primitive import Primitive
from ._out import _CPP

__all__ = ["conv1d", "conv2d", "conv3d"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ()


def _dilate(shape, d):
    return tuple(0 if s == 0 else 1 + di * (s - 1) for s, di in zip(shape, d))


def _spec_t(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _take(shape, idx):
    return tuple(shape[i] for i in idx)


def _axis_out_of(src, size1, x):
    shape = list(x.shape)
    shape[src:src + 1] = [size1, shape[src] // size1]
    return x.reshape(tuple(shape))


def _axis_into(src, dst, x):
    perm = [i for i in range(x.ndim) if i != src]
    perm.insert(dst, src)
    shape = [s for i, s in enumerate(x.shape) if i != src]
    shape[dst] *= x.shape[src]
    return x.permute(tuple(perm)).reshape(tuple(shape))


def _lhs_padding(in_s, win_s, strides, out_s, padding, lhs_dil, rhs_dil):
    lhs_d, rhs_d, out_d = _dilate(in_s, lhs_dil), _dilate(win_s, rhs_dil), _dilate(out_s, strides)
    before = tuple(r - lo - 1 for r, (lo, _) in zip(rhs_d, padding))
    after = tuple(a + r - 1 - o - b for a, r, o, b in zip(lhs_d, rhs_d, out_d, before))
    return tuple(zip(before, after))


def _rhs_padding(in_s, win_s, strides, out_s, padding, lhs_dil, rhs_dil):
    lhs_d, rhs_d, out_d = _dilate(in_s, lhs_dil), _dilate(win_s, rhs_dil), _dilate(out_s, strides)
    lo = tuple(p for p, _ in padding)
    hi = tuple(o - a + r - p - 1 for o, a, r, p in zip(out_d, lhs_d, rhs_d, lo))
    return tuple(zip(lo, hi))


def _conv_fwd(lhs, rhs, *, strides, padding, lhs_dil, rhs_dil, dn, fgc, bgc, dtype, precision):
    return jax.lax.conv_general_dilated(
        lhs.astype(dtype), rhs.astype(dtype), window_strides=strides, padding=padding,
        lhs_dilation=lhs_dil, rhs_dilation=rhs_dil,
        dimension_numbers=jax.lax.ConvDimensionNumbers(*dn), feature_group_count=fgc,
        batch_group_count=bgc, precision=precision)  # NOTE [Float32 precision]


def _conv_lhs_backward(grad, rhs, lhs_shape, strides, padding, lhs_dil, rhs_dil, dn, fgc,
                       bgc, dtype, precision):
    lhs_spec, rhs_spec, out_spec = dn
    rhs = rhs.conj()
    groups = fgc
    if fgc > 1:
        rhs = _axis_into(rhs_spec[0], rhs_spec[1], _axis_out_of(rhs_spec[0], fgc, rhs))
    elif bgc > 1:
        rhs = _axis_into(rhs_spec[0], rhs_spec[1], _axis_out_of(rhs_spec[0], bgc, rhs))
        groups = bgc
    pad = _lhs_padding(_take(lhs_shape, lhs_spec[2:]), _take(rhs.shape, rhs_spec[2:]), strides,
                       _take(grad.shape, out_spec[2:]), padding, lhs_dil, rhs_dil)
    out = _conv(grad, rhs.flip(tuple(rhs_spec[2:])), strides=lhs_dil, padding=pad,
                lhs_dil=strides, rhs_dil=rhs_dil, dn=(out_spec, _spec_t(rhs_spec), lhs_spec),
                fgc=groups, bgc=1, dtype=dtype, precision=precision)
    if bgc > 1:
        out = _axis_into(lhs_spec[1], lhs_spec[0], _axis_out_of(lhs_spec[1], bgc, out))
    return out


def _conv_rhs_backward(grad, lhs, rhs_shape, strides, padding, lhs_dil, rhs_dil, dn, fgc,
                       bgc, dtype, precision):
    lhs_spec, rhs_spec, out_spec = dn
    if bgc > 1:
        fgc, bgc = bgc, 1
    elif fgc > 1:
        fgc, bgc = 1, fgc
    pad = _rhs_padding(_take(lhs.shape, lhs_spec[2:]), _take(rhs_shape, rhs_spec[2:]), strides,
                       _take(grad.shape, out_spec[2:]), padding, lhs_dil, rhs_dil)
    return _conv(lhs.conj(), grad, strides=rhs_dil, padding=pad, lhs_dil=lhs_dil,
                 rhs_dil=strides, dn=(_spec_t(lhs_spec), _spec_t(out_spec), _spec_t(rhs_spec)),
                 fgc=fgc, bgc=bgc, dtype=dtype, precision=precision)


_conv = Primitive("convolution", _conv_fwd, lhs=_conv_lhs_backward, rhs=_conv_rhs_backward)


def _tuple(v, n, name):
    if isinstance(v, int):
        return (v,) * n
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        raise RuntimeError(f"expected {name} to be a single integer value or a list of {n} "
                           f"values to match the convolution dimensions, but got "
                           f"{name}={list(v)}")
    return v


def _convnd(name, nsp, input, weight, bias, stride, padding, dilation, groups):
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    unbatched = input.ndim == nsp + 1
    if unbatched:
        input = input.unsqueeze(0)
    if weight.ndim != nsp + 2:
        raise RuntimeError(f"weight should have at least three dimensions")
    c = input.shape[1]
    if weight.shape[1] * groups != c:
        raise RuntimeError(f"Given groups={groups}, weight of size {list(weight.shape)}, "
                           f"expected input{list(input.shape)} to have "
                           f"{weight.shape[1] * groups} channels, but got {c} channels "
                           f"instead")
    if weight.shape[0] % groups:
        raise RuntimeError("Given groups=%d, expected weight to be divisible by %d at dimension "
                           "0, but got weight of size %s instead"
                           % (groups, groups, list(weight.shape)))
    stride = _tuple(stride, nsp, "stride")
    dilation = _tuple(dilation, nsp, "dilation")
    k = tuple(weight.shape[2:])
    if isinstance(padding, str):
        if padding == "valid":
            pad = ((0, 0),) * nsp
        elif padding == "same":
            if any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
            total = [d * (kk - 1) for d, kk in zip(dilation, k)]
            pad = tuple((t // 2, t - t // 2) for t in total)
        else:
            raise ValueError(f"Invalid padding string '{padding}', should be one of "
                             f"{{'valid', 'same'}}")
    else:
        pad = tuple((p, p) for p in _tuple(padding, nsp, "padding"))
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"Input type ({_CPP[input.dtype.name]}) and bias type "
                           f"({_CPP[bias.dtype.name]}) should be the same")
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{weight.dtype.scalar_name}")
    spec = tuple(range(nsp + 2))
    dtype = input.dtype
    out = _conv(input, weight, strides=stride, padding=pad, lhs_dil=(1,) * nsp,
                rhs_dil=dilation, dn=(spec, spec, spec), fgc=int(groups), bgc=1,
                dtype=dtype.np, precision=_precision.conv_precision())
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nsp)
    return out.squeeze(0) if unbatched else out


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """1-D convolution (cross-correlation, as torch) over ``(N, C, L)`` or ``(C, L)``.

    Examples
    --------
    >>> x = wgrad.ones(1, 1, 4, dtype=wgrad.complex128)
    >>> wgrad.nn.functional.conv1d(x, wgrad.ones(1, 1, 2, dtype=wgrad.complex128)).shape
    wgrad.Size([1, 1, 3])
    """
    return _convnd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """2-D convolution over ``(N, C, H, W)`` or ``(C, H, W)``; ``padding`` may be an int, a
    pair, ``'valid'`` or ``'same'``.

    Examples
    --------
    >>> x = wgrad.ones(1, 2, 4, 4)
    >>> wgrad.nn.functional.conv2d(x, wgrad.ones(3, 2, 3, 3), padding="same").shape
    wgrad.Size([1, 3, 4, 4])
    """
    return _convnd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """3-D convolution over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` (volumes: MRI, CT);
    ``padding`` may be an int, a triple, ``'valid'`` or ``'same'``.

    Examples
    --------
    >>> x = wgrad.ones(1, 2, 3, 4, 4)
    >>> wgrad.nn.functional.conv3d(x, wgrad.ones(3, 2, 1, 3, 3), padding=(0, 1, 1)).shape
    wgrad.Size([1, 3, 3, 4, 4])
    """
    return _convnd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)

