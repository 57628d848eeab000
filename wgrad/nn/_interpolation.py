"""Resampling: interpolate (nearest, nearest-exact, linear, bilinear, bicubic, trilinear,
area), pixel_shuffle / pixel_unshuffle, and fold / unfold (col2im / im2col).

# NOTE [Separable taps]
# Every interpolation mode, and adaptive average pooling, is separable: along each spatial
# dim an output sample is a weighted sum of a few input samples (1 for nearest, 2 for
# linear, 4 for cubic, a window for area). A tap table per dim, ``idx (out, taps)`` and
# ``w (out, taps)``, is built once in numpy from torch's source-index formulas (in float32
# for single-precision inputs, as torch's kernels compute them) and cached; the dims are
# applied last to first, the order in which torch's kernels nest their weights, inside one
# ``jax_function``: one dispatch forward, one backward (the transposed taps, a
# scatter-add).
"""
import functools
import math
import warnings

import jax.numpy as jnp
import numpy as np

from ..jax.interop import jax_function

__all__ = ["interpolate", "upsample", "upsample_nearest", "upsample_bilinear",
           "pixel_shuffle", "pixel_unshuffle", "fold", "unfold"]

_MODES = ("nearest | linear | bilinear | bicubic | trilinear | lanczos | area | nearest-exact")


# -- tap tables (NOTE [Separable taps]) ----------------------------------------------
def _scale(n, o, scale, ft):
    """torch's compute_scales_value: 1/scale_factor when one was given, else in/out."""
    if scale is not None and scale > 0:
        return ft(1.0 / scale)
    return ft(n) / ft(o)


@functools.lru_cache(maxsize=512)
def _taps(spec):
    kind, n, o = spec[:3]
    i = np.arange(o)
    if kind == "adaptive":
        start, end = (i * n) // o, -((-(i + 1) * n) // o)
        k = int((end - start).max()) if o else 1
        idx = start[:, None] + np.arange(k)[None, :]
        ok = idx < end[:, None]
        return np.where(ok, idx, 0), ok.astype(np.float64), (end - start).astype(np.float64)
    scale, single = spec[3], spec[-1]
    ft = np.float32 if single else np.float64
    if kind in ("nearest", "nearest-exact"):
        if kind == "nearest" and o == n:
            src = i
        elif kind == "nearest" and o == 2 * n:
            src = i >> 1
        else:
            s = _scale(n, o, scale, np.float32)
            off = 0.0 if kind == "nearest" else 0.5
            src = np.floor(np.float32((i + off) * np.float64(s))).astype(np.int64)
        return np.minimum(src, n - 1)[:, None], None, None
    align = spec[4]
    if align:
        s = ft(n - 1) / ft(o - 1) if o > 1 else ft(0)
        real = s * i.astype(ft)
    else:
        s = _scale(n, o, scale, ft)
        # torch's kernels compile ``scale * (i + 0.5) - 0.5`` to a fused multiply-add: one
        # rounding (the float32 product is exact in float64); two differed in 3% of taps
        real = (np.float64(s) * (i + 0.5) - 0.5).astype(ft) if single else \
            s * (i + 0.5) - 0.5
    if kind == "linear":
        real = np.where(real < 0, ft(0), real)
        i0 = np.minimum(np.floor(real).astype(np.int64), n - 1)
        lam = np.clip(real - i0.astype(ft), 0, 1).astype(ft)
        i1 = i0 + (i0 < n - 1)
        return np.stack([i0, i1], 1), np.stack([ft(1) - lam, lam], 1), None
    # cubic: torch's A = -0.75 and indices clamped to the border
    i0 = np.floor(real).astype(np.int64)
    t = (real - i0.astype(ft)).astype(ft)
    a = ft(-0.75)

    def c1(x):
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def c2(x):
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    w = np.stack([c2(t + 1), c1(t), c1(1 - t), c2(2 - t)], 1).astype(ft)
    idx = np.clip(i0[:, None] - 1 + np.arange(4)[None, :], 0, n - 1)
    return idx, w, None


def _adaptive_taps(n, o):
    return ("adaptive", int(n), int(o))


def _taps_jax(x, specs):
    nd = len(specs)
    for j in reversed(range(nd)):
        axis = x.ndim - nd + j
        idx, w, div = _taps(specs[j])
        shp = [1] * x.ndim
        shp[axis] = idx.shape[0]
        if w is None:
            x = jnp.take(x, jnp.asarray(idx[:, 0]), axis=axis)
            continue
        rdt = jnp.zeros((), x.dtype).real.dtype
        acc = None
        for t in range(idx.shape[1]):
            term = jnp.take(x, jnp.asarray(idx[:, t]), axis=axis) * \
                jnp.asarray(w[:, t].reshape(shp), rdt)
            acc = term if acc is None else acc + term
        if div is not None:
            acc = acc / jnp.asarray(div.reshape(shp), rdt)
        x = acc
    return x


_taps_op = jax_function(_taps_jax, static_argnums=(1,), name="separable_taps")


def _apply_taps(x, specs):
    if all(_taps(s)[1] is None and s[1] == s[2] for s in specs):
        return x.clone()
    return _taps_op(x, tuple(specs))


# -- interpolate ------------------------------------------------------------------------
_NEED = {"linear": 3, "bilinear": 4, "bicubic": 4, "trilinear": 5}


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """Resample ``(N, C, *spatial)`` input to ``size`` or by ``scale_factor``.

    Modes: 'nearest', 'nearest-exact', 'linear' (3-D), 'bilinear' / 'bicubic' (4-D),
    'trilinear' (5-D) and 'area' (adaptive average pooling), with torch's source-index
    formulas; ``align_corners`` maps corner samples onto each other; a ``scale_factor``
    is used as given in the index formula unless ``recompute_scale_factor=True``.
    Floating and complex inputs (torch: floating only).

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.tensor([[[1., 2.]]])
    >>> wgrad.nn.functional.interpolate(x, scale_factor=2, mode="linear")
    tensor([[[1.0000, 1.2500, 1.7500, 2.0000]]])
    """
    if mode in ("nearest", "area", "nearest-exact"):
        if align_corners is not None:
            raise ValueError("align_corners option can only be set with the interpolating "
                             "modes: linear | bilinear | bicubic | trilinear")
    elif align_corners is None:
        align_corners = False
    dim = input.ndim - 2
    sp = list(input.shape[2:])
    if size is not None and scale_factor is not None:
        raise ValueError("only one of size or scale_factor should be defined")
    if size is not None:
        scales = None
        if isinstance(size, (list, tuple)):
            if len(size) != dim:
                raise ValueError(
                    f"Input and output must have the same number of spatial dimensions, but got "
                    f"input with spatial dimensions of {sp} and output size of {size}. Please "
                    f"provide input tensor in (N, C, d1, d2, ...,dK) format and output size in "
                    f"(o1, o2, ...,oK) format.")
            out = [int(s) for s in size]
        else:
            out = [int(size)] * dim
    elif scale_factor is not None:
        out = None
        if isinstance(scale_factor, (list, tuple)):
            if len(scale_factor) != dim:
                raise ValueError(
                    f"Input and scale_factor must have the same number of spatial dimensions, "
                    f"but got input with spatial dimensions of {sp} and scale_factor of shape "
                    f"{scale_factor}. Please provide input tensor in (N, C, d1, d2, ...,dK) "
                    f"format and scale_factor in (s1, s2, ...,sK) format.")
            scales = [float(s) for s in scale_factor]
        else:
            scales = [float(scale_factor)] * dim
    else:
        raise ValueError("either size or scale_factor should be defined")
    if recompute_scale_factor and size is not None:
        raise ValueError("recompute_scale_factor is not meaningful with an explicit size.")
    if mode == "area" and out is None:
        recompute_scale_factor = True
    if out is None:
        out = [math.floor(float(n) * s) for n, s in zip(sp, scales)]
    if recompute_scale_factor:
        scales = None
    if antialias:
        raise NotImplementedError("interpolate: antialias=True is not supported by wgrad")
    if input.ndim not in (3, 4, 5) or (mode not in _NEED and mode not in
                                       ("nearest", "nearest-exact", "area")):
        raise NotImplementedError(f"Input Error: Only 3D, 4D and 5D input Tensors supported "
                                  f"(got {input.ndim}D) for the modes: {_MODES} (got {mode})")
    if mode in _NEED and input.ndim != _NEED[mode]:
        raise NotImplementedError(f"Got {input.ndim}D input, but {mode} mode needs "
                                  f"{_NEED[mode]}D input")
    if any(o <= 0 for o in out):
        raise RuntimeError(f"Input and output sizes should be greater than 0, but got input "
                           f"({', '.join(f'{c}: {n}' for c, n in zip('DHW'[-dim:], sp))}) "
                           f"output ({', '.join(f'{c}: {n}' for c, n in zip('DHW'[-dim:], out))})")
    single = input.dtype.itemsize <= 4 if not input.dtype.is_complex else \
        input.dtype.itemsize <= 8
    if mode == "area":
        specs = [_adaptive_taps(n, o) for n, o in zip(sp, out)]
    else:
        kind = {"bilinear": "linear", "trilinear": "linear", "bicubic": "cubic"}.get(mode, mode)
        sc = scales if scales is not None else [None] * dim
        specs = [(kind, n, o, s, bool(align_corners), single)
                 if kind in ("linear", "cubic") else (kind, n, o, s, single)
                 for n, o, s in zip(sp, out, sc)]
    return _apply_taps(input, specs)


def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """Deprecated alias of :func:`interpolate`.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.upsample(wgrad.ones(1, 1, 2), scale_factor=2).shape
    wgrad.Size([1, 1, 4])
    """
    warnings.warn("`nn.functional.upsample` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(input, size, scale_factor, mode='nearest')``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.upsample_nearest(wgrad.ones(1, 1, 2), 3).shape
    wgrad.Size([1, 1, 3])
    """
    warnings.warn("`nn.functional.upsample_nearest` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """Deprecated: ``interpolate(..., mode='bilinear', align_corners=True)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.upsample_bilinear(wgrad.ones(1, 1, 2, 2), 3).shape
    wgrad.Size([1, 1, 3, 3])
    """
    warnings.warn("`nn.functional.upsample_bilinear` is deprecated. Use "
                  "`nn.functional.interpolate` instead.", stacklevel=2)
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# -- pixel shuffle --------------------------------------------------------------------
def pixel_shuffle(input, upscale_factor):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.pixel_shuffle(wgrad.arange(4.).reshape(1, 4, 1, 1), 2)
    tensor([[[[0., 1.],
              [2., 3.]]]])
    """
    r = int(upscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_shuffle expects input to have at least 3 dimensions, but got "
                           f"input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_shuffle expects a positive upscale_factor, but got {r}")
    *b, c, h, w = input.shape
    if c % (r * r):
        raise RuntimeError(f"pixel_shuffle expects its input's 'channel' dimension to be "
                           f"divisible by the square of upscale_factor, but input.size(-3)={c} "
                           f"is not divisible by {r * r}")
    nb = len(b)
    x = input.reshape(tuple(b) + (c // (r * r), r, r, h, w))
    x = x.permute(tuple(range(nb)) + tuple(nb + i for i in (0, 3, 1, 4, 2)))
    return x.reshape(tuple(b) + (c // (r * r), h * r, w * r))


def pixel_unshuffle(input, downscale_factor):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``, the inverse of :func:`pixel_shuffle`.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.pixel_unshuffle(wgrad.arange(4.).reshape(1, 1, 2, 2), 2).flatten()
    tensor([0., 1., 2., 3.])
    """
    r = int(downscale_factor)
    if input.ndim < 3:
        raise RuntimeError(f"pixel_unshuffle expects input to have at least 3 dimensions, but "
                           f"got input with {input.ndim} dimension(s)")
    if r <= 0:
        raise RuntimeError(f"pixel_unshuffle expects a positive downscale_factor, but got {r}")
    *b, c, h, w = input.shape
    if h % r:
        raise RuntimeError(f"pixel_unshuffle expects height to be divisible by downscale_factor, "
                           f"but input.size(-2)={h} is not divisible by {r}")
    if w % r:
        raise RuntimeError(f"pixel_unshuffle expects width to be divisible by downscale_factor, "
                           f"but input.size(-1)={w} is not divisible by {r}")
    nb = len(b)
    x = input.reshape(tuple(b) + (c, h // r, r, w // r, r))
    x = x.permute(tuple(range(nb)) + tuple(nb + i for i in (0, 2, 4, 1, 3)))
    return x.reshape(tuple(b) + (c * r * r, h // r, w // r))


# -- fold / unfold ----------------------------------------------------------------------
def _pair(v, name):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * 2
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * 2
    if len(v) != 2:
        raise RuntimeError(f"{name} must be an int or a tuple of two ints")
    return v


@functools.lru_cache(maxsize=256)
def _block_table(padded, k, d, s, blocks):
    tabs = [(np.arange(b) * ss)[:, None] + np.arange(kk)[None, :] * dd
            for b, kk, dd, ss in zip(blocks, k, d, s)]
    # (L, K): block-major rows, kernel offsets row-major, into the padded plane
    t = (tabs[0][:, None, :, None] * padded[1] + tabs[1][None, :, None, :])
    return t.reshape(blocks[0] * blocks[1], k[0] * k[1])


def _unfold_jax(x, geom):
    padded, k, d, s, p, blocks = geom
    n, c = x.shape[:2]
    x = jnp.pad(x, ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    t = _block_table(padded, k, d, s, blocks)
    win = x.reshape(n, c, x.shape[2] * x.shape[3])[..., t]       # (N, C, L, K)
    return jnp.swapaxes(win, -1, -2).reshape(n, c * t.shape[1], t.shape[0])


def _fold_jax(x, geom):
    padded, k, d, s, p, blocks = geom
    t = _block_table(padded, k, d, s, blocks)
    n = x.shape[0]
    c = x.shape[1] // t.shape[1]
    vals = jnp.swapaxes(x.reshape(n, c, t.shape[1], t.shape[0]), -1, -2)
    plane = jnp.zeros((n, c, padded[0] * padded[1]), x.dtype).at[..., t].add(vals)
    plane = plane.reshape(n, c, *padded)
    return plane[:, :, p[0]:padded[0] - p[0], p[1]:padded[1] - p[1]]


_unfold_op = jax_function(_unfold_jax, static_argnums=(1,), name="im2col")
_fold_op = jax_function(_fold_jax, static_argnums=(1,), name="col2im")


def _blocks(sp, k, d, p, s):
    return tuple((n + 2 * pp - dd * (kk - 1) - 1) // ss + 1
                 for n, kk, dd, pp, ss in zip(sp, k, d, p, s))


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """Extract sliding local blocks (im2col): ``(N, C, H, W) -> (N, C k_h k_w, L)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.unfold(wgrad.ones(1, 2, 3, 3), 2).shape
    wgrad.Size([1, 8, 4])
    """
    if input.ndim not in (3, 4) or 0 in input.shape[1:]:
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with possibly 0 batch size "
                           f"and other non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    k, d, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"),
                  _pair(padding, "padding"), _pair(stride, "stride"))
    x = input.unsqueeze(0) if input.ndim == 3 else input
    sp = tuple(x.shape[2:])
    blocks = _blocks(sp, k, d, p, s)
    if any(b < 1 for b in blocks):
        raise RuntimeError(f"Given input with spatial size {sp}, kernel_size={k}, "
                           f"dilation={d}, padding={p}, calculated shape of the array of "
                           f"sliding blocks as {blocks}, but its components must be at least "
                           f"one.")
    padded = (sp[0] + 2 * p[0], sp[1] + 2 * p[1])
    out = _unfold_op(x, (padded, k, d, s, p, blocks))
    return out.squeeze(0) if input.ndim == 3 else out


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """Combine sliding local blocks into a tensor (col2im), summing overlaps:
    ``(N, C k_h k_w, L) -> (N, C, H, W)``; the adjoint of :func:`unfold`.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.fold(wgrad.ones(1, 4, 4), (3, 3), 2)[0, 0]
    tensor([[1., 2., 1.],
            [2., 4., 2.],
            [1., 2., 1.]])
    """
    if input.ndim not in (2, 3) or 0 in input.shape[1:]:
        raise RuntimeError(f"Expected 2D or 3D (batch mode) input tensor with possibly 0 batch "
                           f"size and non-zero dimensions for input, but got: "
                           f"{list(input.shape)}")
    out = _pair(output_size, "output_size")
    k, d, p, s = (_pair(kernel_size, "kernel_size"), _pair(dilation, "dilation"),
                  _pair(padding, "padding"), _pair(stride, "stride"))
    x = input.unsqueeze(0) if input.ndim == 2 else input
    kk = k[0] * k[1]
    if x.shape[1] % kk:
        raise RuntimeError(f"Expected size of input's dimension 1 to be divisible by the product "
                           f"of kernel_size, but got input.size(1)={x.shape[1]} and "
                           f"kernel_size={k}")
    blocks = _blocks(out, k, d, p, s)
    if blocks[0] * blocks[1] != x.shape[2]:
        raise RuntimeError(f"Given output_size={out}, kernel_size={k}, dilation={d}, "
                           f"padding={p}, stride={s}, expected size of input's dimension 2 to "
                           f"match the calculated number of sliding blocks {blocks[0]} * "
                           f"{blocks[1]} = {blocks[0] * blocks[1]}, but got "
                           f"input.size(2)={x.shape[2]}.")
    padded = (out[0] + 2 * p[0], out[1] + 2 * p[1])
    res = _fold_op(x, (padded, k, d, s, p, blocks))
    return res.squeeze(0) if input.ndim == 2 else res
