"""Spatial transformers: ``grid_sample`` (bilinear, nearest, bicubic; zeros, border and
reflection padding) and ``affine_grid``, as torch.nn.functional's.

# NOTE [Grid sampling]
# grid_sample reads the input at the points of ``grid`` ((x, y[, z]) in [-1, 1], x along
# the last spatial dim). The forward is written in JAX and lifted with jax_function, so
# its backward (input and grid) is JAX's derivative of the same formula, one jitted
# kernel each way. torch's kernels differentiate the same piecewise formulas by hand;
# where a piece ends (a clipped or reflected coordinate at a border, floor at an integer)
# the derivative follows torch's choice because the pieces are written as torch's
# kernels branch: ``where`` on torch's comparisons, so a border counts as outside (zero
# gradient), a reflection flips the sign on torch's side, and floor, round and the tap
# indices carry no gradient. At a point exactly on a pixel boundary (an unnormalised
# coordinate that is an integer) the derivative is one-sided. torch's 2-D kernel computes
# the align_corners=False coordinate ((c + 1) * size - 1) / 2 with a fused multiply-add;
# wgrad computes the same single rounding exactly (``_fused_mul_sub``), so that the pixel
# 'nearest' picks at a tie (-1/3 on a side of 3: coordinate 0.5000000000000001, pixel 1)
# does not depend on whether XLA fuses (it did at its default CPU level, not at level 0
# nor on an H100, where 36 of 1,048 test points picked the other pixel). torch's own 2-D
# and 3-D kernels can pick different sides at a boundary; such a gradient is the other
# one-sided derivative.
"""
import functools
import itertools
import warnings

import jax
import jax.numpy as jnp

from .._creation import linspace, ones, tensor
from ..jax.interop import jax_function
from ..ops import stack

__all__ = ["grid_sample", "affine_grid"]

_MODES = ("bilinear", "nearest", "bicubic")
_PADDING = ("zeros", "border", "reflection")
_ALIGN_WARNING = ("Default grid_sample and affine_grid behavior has changed to "
                  "align_corners=False since 1.3.0. Please specify align_corners=True if the "
                  "old behavior is desired. See the documentation of grid_sample for details.")
_CUBIC_A = -0.75  # torch's cubic convolution coefficient


# -- coordinates (torch's grid_sampler_unnormalize / compute_source_index) ---------------

def _unnormalize(c, size, align_corners):
    if align_corners:
        return (c + 1) / 2 * (size - 1)
    return _fused_mul_sub(c + 1, size, 1) / 2


@functools.partial(jax.custom_jvp, nondiff_argnums=(1, 2))
def _fused_mul_sub(t, n, k):
    """``t * n - k`` rounded once, as a fused multiply-add gives it (torch's 2-D grid
    sampler computes the unnormalised coordinate so), whether or not XLA fuses it: a
    pixel that ``round`` picks at a tie must not depend on the backend or its
    optimisation level (NOTE [Grid sampling]). The product is made exact: float32 and
    narrower in float64 (or float32), float64 split into halves of 26 and 27 bits
    (Dekker), each of whose products with a size below 2**26 is exact."""
    if t.dtype == jnp.float64:
        bits = jax.lax.bitcast_convert_type(t, jnp.int64)
        hi = jax.lax.bitcast_convert_type(bits & jnp.int64(-(1 << 27)), jnp.float64)
        return (hi * n - k) + (t - hi) * n
    wide = jnp.float64 if jax.config.jax_enable_x64 else jnp.float32
    if jnp.finfo(wide).nmant <= jnp.finfo(t.dtype).nmant:  # float32 without 64-bit types
        return t * n - k
    return (t.astype(wide) * n - k).astype(t.dtype)


@_fused_mul_sub.defjvp
def _fused_mul_sub_jvp(n, k, primals, tangents):
    return _fused_mul_sub(primals[0], n, k), tangents[0] * n


def _clip(c, size):
    # torch's clip_coordinates_set_grad: a border is outside (zero gradient there)
    hi = size - 1
    return jnp.where(c <= 0, jnp.zeros_like(c), jnp.where(c >= hi, jnp.full_like(c, hi), c))


def _reflect(c, twice_low, twice_high):
    # torch's reflect_coordinates_set_grad: the sign of (c - min) decides, 0 counts positive
    if twice_low == twice_high:
        return jnp.zeros_like(c)
    lo = twice_low / 2
    span = (twice_high - twice_low) / 2
    d = c - lo
    d = jnp.where(d < 0, -d, d)
    extra = jnp.fmod(d, span)
    flips = jax.lax.stop_gradient(jnp.floor(d / span))
    even = jnp.fmod(flips, 2) == 0
    return jnp.where(even, extra + lo, span - extra + lo)


def _pad_coord(c, size, padding, align_corners):
    if padding == "border":
        return _clip(c, size)
    if padding == "reflection":
        c = _reflect(c, 0, 2 * (size - 1)) if align_corners else _reflect(c, -1, 2 * size - 1)
        return _clip(c, size)
    return c


def _cubic_weights(t):
    a = _CUBIC_A

    def near(x):  # |x| <= 1
        return ((a + 2) * x - (a + 3)) * x * x + 1

    def far(x):  # 1 < |x| < 2
        return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


# -- sampling ------------------------------------------------------------------------------

def _taps(flat, idx, sizes, w=None):
    """The weighted sum over taps of ``flat`` (N, C, prod(sizes)) at integer coordinates
    ``idx`` (one (T, N, *O) array per spatial dim; T taps), a tap outside the input
    reading zero: (N, C, *O). One gather for all taps."""
    lin = jnp.zeros_like(idx[0])
    ok = None
    for i, n in zip(idx, sizes):
        lin = lin * n + jnp.clip(i, 0, n - 1)
        v = (i >= 0) & (i < n)
        ok = v if ok is None else ok & v
    ntap, nb = lin.shape[:2]
    out_shape = lin.shape[2:]
    picked = flat[jnp.arange(nb)[:, None], :, jnp.moveaxis(lin, 0, 1).reshape(nb, -1)]
    picked = jnp.moveaxis(picked.reshape((nb, ntap) + out_shape + (flat.shape[1],)), -1, 2)
    picked = jnp.where(jnp.moveaxis(ok, 0, 1)[:, :, None], picked, jnp.zeros((), flat.dtype))
    if w is None:
        return picked[:, 0]
    return jnp.sum(picked * jnp.moveaxis(w, 0, 1)[:, :, None], axis=1)


def _grid_sample_jax(inp, grid, mode, padding, align_corners):
    sizes = inp.shape[2:]
    nd = len(sizes)
    flat = inp.reshape(inp.shape[:2] + (-1,))
    # grid's last axis is (x, y[, z]): x indexes the last spatial dim
    coords = [_unnormalize(grid[..., nd - 1 - d], sizes[d], align_corners) for d in range(nd)]
    if mode == "bicubic":
        base = [jax.lax.stop_gradient(jnp.floor(c)) for c in coords]
        wy, wx = (_cubic_weights(c - b) for c, b in zip(coords, base))
        taps = list(itertools.product(range(4), range(4)))
        idx = [jnp.stack([_pad_coord(base[d] - 1 + t[d], sizes[d], padding, align_corners)
                          for t in taps]).astype(jnp.int32) for d in range(2)]
        w = jnp.stack([wy[ty] * wx[tx] for ty, tx in taps])
        return _taps(flat, idx, sizes, w)
    coords = [_pad_coord(c, n, padding, align_corners) for c, n in zip(coords, sizes)]
    if mode == "nearest":
        idx = [jax.lax.stop_gradient(jnp.round(c)).astype(jnp.int32)[None] for c in coords]
        return _taps(flat, idx, sizes)
    lo = [jax.lax.stop_gradient(jnp.floor(c)) for c in coords]
    corners = list(itertools.product((0, 1), repeat=nd))
    idx = [jnp.stack([lo[d] + c[d] for c in corners]).astype(jnp.int32) for d in range(nd)]
    ws = []
    for c in corners:
        w = None
        for d in range(nd):
            wd = coords[d] - lo[d] if c[d] else lo[d] + 1 - coords[d]
            w = wd if w is None else w * wd
        ws.append(w)
    return _taps(flat, idx, sizes, jnp.stack(ws))


_grid_sample_op = jax_function(_grid_sample_jax, static_argnums=(2, 3, 4), name="grid_sampler")


def _sizes(t):
    return "[" + ", ".join(str(s) for s in t.shape) + "]"


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """Sample ``input`` (N, C, H, W) or (N, C, D, H, W) at the normalised points of
    ``grid`` (N, H_out, W_out, 2) or (N, D_out, H_out, W_out, 3), as torch's
    ``grid_sample`` (NOTE [Grid sampling]).

    ``mode``: 'bilinear' (trilinear for 5-D input), 'nearest' or 'bicubic' (4-D only);
    ``padding_mode``: 'zeros', 'border' or 'reflection'; ``align_corners``: whether -1 and 1
    are the centres (True) or the outer edges (False, the default) of the corner pixels.
    Differentiable in ``input`` and ``grid``.

    Example
    -------
    >>> import wgrad
    >>> import wgrad.nn.functional as F
    >>> img = wgrad.arange(4.).reshape(1, 1, 2, 2)
    >>> F.grid_sample(img, wgrad.zeros(1, 1, 1, 2), align_corners=True)
    tensor([[[[1.5000]]]])
    """
    if mode not in _MODES:
        raise ValueError(f"nn.functional.grid_sample(): expected mode to be 'bilinear', "
                         f"'nearest' or 'bicubic', but got: '{mode}'")
    if padding_mode not in _PADDING:
        raise ValueError(f"nn.functional.grid_sample(): expected padding_mode to be 'zeros', "
                         f"'border', or 'reflection', but got: '{padding_mode}'")
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if input.shape[0] != grid.shape[0]:
        raise RuntimeError(f"grid_sampler(): expected grid and input to have same batch size, "
                           f"but got input with sizes {_sizes(input)} and grid with sizes "
                           f"{_sizes(grid)}")
    if grid.shape[-1] != input.dim() - 2:
        raise RuntimeError(f"grid_sampler(): expected grid to have size {input.dim() - 2} in "
                           f"last dimension, but got grid with sizes {_sizes(grid)}")
    for i in range(2, input.dim()):
        if input.shape[i] <= 0:
            raise RuntimeError(f"grid_sampler(): expected input to have non-empty spatial "
                               f"dimensions, but input has sizes {_sizes(input)} with "
                               f"dimension {i} being empty")
    if input.dim() == 5 and mode == "bicubic":
        raise RuntimeError("grid_sampler(): bicubic interpolation only supports 4D input")
    if input.dim() not in (4, 5) or input.dim() != grid.dim():
        kind = "4D" if input.dim() == 4 else "5D"
        raise RuntimeError(f"grid_sampler(): expected {kind} input and grid with same number "
                           f"of dimensions, but got input with sizes {_sizes(input)} and grid "
                           f"with sizes {_sizes(grid)}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"grid_sampler_{input.dim() - 2}d_cpu_kernel_impl" not '
                                  f"implemented for '{input.dtype.scalar_name}'")
    if grid.dtype != input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{grid.dtype.scalar_name}")
    return _grid_sample_op(input, grid, mode, padding_mode, bool(align_corners))


def _linspace_from_neg_one(n, align_corners, dtype):
    if n <= 1:
        return tensor(0.0, dtype=dtype).reshape(1)
    r = linspace(-1, 1, n, dtype=dtype)
    return r if align_corners else r * ((n - 1) / n)


def affine_grid(theta, size, align_corners=None):
    """The sampling grid of the affine maps ``theta`` (N, 2, 3) or (N, 3, 4) for an output of
    ``size`` (N, C, H, W) or (N, C, D, H, W), as torch's ``affine_grid``: differentiable in
    ``theta``; feed it to ``grid_sample``.

    Example
    -------
    >>> import wgrad
    >>> import wgrad.nn.functional as F
    >>> F.affine_grid(wgrad.eye(2, 3).unsqueeze(0), (1, 1, 1, 2), align_corners=False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    if align_corners is None:
        warnings.warn(_ALIGN_WARNING, UserWarning, stacklevel=2)
        align_corners = False
    if not theta.is_floating_point():
        raise ValueError(f"Expected theta to have floating point type, but got "
                         f"{str(theta.dtype).replace('wgrad.', 'torch.')}")
    size = tuple(size)
    if len(size) == 4:
        if theta.dim() != 3 or theta.shape[-2] != 2 or theta.shape[-1] != 3:
            raise ValueError(f"Expected a batch of 2D affine matrices of shape Nx2x3 for size "
                             f"{size}. Got {_torch_size(theta)}.")
    elif len(size) == 5:
        if theta.dim() != 3 or theta.shape[-2] != 3 or theta.shape[-1] != 4:
            raise ValueError(f"Expected a batch of 3D affine matrices of shape Nx3x4 for size "
                             f"{size}. Got {_torch_size(theta)}.")
    else:
        raise NotImplementedError(f"affine_grid only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    elif min(size) <= 0:
        raise ValueError(f"Expected non-zero, positive output size. Got {size}")
    return _affine_grid(theta, size, align_corners)


def _affine_grid(theta, size, align_corners):
    """:func:`affine_grid` after the functional form's checks (torch's
    affine_grid_generator has none of them)."""
    spatial = size[2:]
    n = size[0]
    if theta.shape[0] != n:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{n}, {len(spatial) + 1}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[2]}].")
    nd = len(spatial)
    axes = [_linspace_from_neg_one(s, align_corners, theta.dtype) for s in reversed(spatial)]
    # base grid (*spatial, nd + 1): (x, y[, z], 1) with x along the last spatial dim
    cols = []
    for j, ax in enumerate(axes):
        shape = [1] * nd
        shape[nd - 1 - j] = ax.shape[0]
        cols.append(ax.reshape(shape).expand(spatial))
    cols.append(ones(spatial, dtype=theta.dtype))
    base = stack(cols, -1).reshape(1, -1, nd + 1)
    grid = base @ theta.transpose(1, 2)  # (N, prod(spatial), nd)
    return grid.reshape((n,) + spatial + (nd,))


def _torch_size(t):
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"

