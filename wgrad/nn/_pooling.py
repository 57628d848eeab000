"""Pooling: max/avg/adaptive/lp pools and max_unpool, as in ``torch.nn.functional``.

# NOTE [Pooling as one dispatch]
# A max pool gathers every window of the (flattened) spatial plane with ONE constant index
# table (output position x window offset -> plane index, -1 outside the input), picks the
# winner per window and returns the values and their plane indices from one jitted kernel.
# The table depends only on the geometry, so it is built once (numpy) and cached. The
# gradient scatters ``grad`` to the winners' indices, so ties go where torch sends them:
# the first maximum in the window's row-major order, the last NaN if there is one, the
# first position inside the input when all values are -inf. Adaptive max pools use the same
# kernel with windows padded to the longest one. Average pools are one ``reduce_window`` sum
# times a constant divisor table (count_include_pad, divisor_override, ceil_mode as torch),
# lifted with ``jax_function``, so forward and backward are one dispatch each. Adaptive
# average pools are separable: per spatial dim, a few taps with weights 1/len (see
# ``_interpolation._taps``).
"""
import functools
import math

import jax
import jax.numpy as jnp
import numpy as np

from .. import _creation
from ..jax.interop import jax_function
from ..ops import _out
from ..ops._primitive import Primitive
from ..ops.elementwise import _floating_only, _real_only
from ._interpolation import _apply_taps, _adaptive_taps

__all__ = ["max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices",
           "max_pool2d_with_indices", "max_pool3d_with_indices", "max_unpool1d",
           "max_unpool2d", "max_unpool3d", "avg_pool1d", "avg_pool2d", "avg_pool3d",
           "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
           "adaptive_max_pool1d", "adaptive_max_pool2d", "adaptive_max_pool3d",
           "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
           "adaptive_max_pool3d_with_indices", "lp_pool1d", "lp_pool2d", "lp_pool3d"]

_WORDS = {1: "one", 2: "two", 3: "three"}


# -- argument checks ------------------------------------------------------------------
def _tup(v, n, fn, what, omit=False):
    if isinstance(v, (int, np.integer)):
        return (int(v),) * n
    v = tuple(int(x) for x in v)
    if len(v) == 1:
        return v * n
    if len(v) != n:
        how = "either be omitted, a single int" if omit else "either be a single int"
        if what == "dilation":
            how = "be either a single int"
        raise RuntimeError(f"{fn}: {what} must {how}, or a tuple of {_WORDS[n]} ints")
    return v


def _batched(input, nsp, fn, msg=None):
    if input.ndim not in (nsp + 1, nsp + 2) or 0 in input.shape[-nsp - 1:]:
        if msg is None:
            msg = (f"non-empty {nsp + 1}D or {nsp + 2}D (batch mode) tensor expected for input")
        raise RuntimeError(msg)
    return input.ndim == nsp + 1


def _out_size(size, k, s, p, d, ceil_mode):
    o = (size + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
    if ceil_mode and (o - 1) * s >= size + p:
        o -= 1
    return o


def _geometry(fn, nsp, input, kernel_size, stride, padding, dilation, ceil_mode):
    k = _tup(kernel_size, nsp, fn, "kernel_size")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _tup(stride, nsp, fn, "stride", omit=True)
    p = _tup(padding, nsp, fn, "padding")
    d = _tup(dilation, nsp, fn, "dilation")
    if any(x == 0 for x in s):
        raise RuntimeError("stride should not be zero")
    if any(x <= 0 for x in k):
        raise RuntimeError("kernel size should be greater than zero, but got "
                           + " ".join(f"k{a}: {v}" for a, v in zip("TWH"[-nsp:], k)))
    if any(x <= 0 for x in d):
        raise RuntimeError("dilation should be greater than zero, but got "
                           + " ".join(f"dilation{a}: {v}" for a, v in zip("THW"[-nsp:], d)))
    for kk, pp, dd in zip(k, p, d):
        if pp > ((kk - 1) * dd + 1) // 2 or pp < 0:
            raise RuntimeError(f"pad should be at most half of effective kernel size, but got "
                               f"pad={pp}, kernel_size={kk} and dilation={dd}")
    sp = tuple(input.shape[-nsp:])
    out = tuple(_out_size(n, *a, ceil_mode) for n, *a in zip(sp, k, s, p, d))
    if any(o < 1 for o in out):
        c = input.shape[-nsp - 1]
        raise RuntimeError(f"Given input size: ({'x'.join(map(str, (c,) + sp))}). Calculated "
                           f"output size: ({'x'.join(map(str, (c,) + out))}). Output size is "
                           f"too small")
    return k, s, p, d, out


# -- index tables (NOTE [Pooling as one dispatch]) ------------------------------------
def _combine(dim_tables, sp):
    """Per-dim tables ``(out_d, k_d)`` (-1 outside) -> one ``(prod out, prod k)`` table of
    flat plane indices, -1 where any dim is outside."""
    nd = len(dim_tables)
    strides = [int(np.prod(sp[i + 1:])) for i in range(nd)]
    flat = np.zeros((1,) * (2 * nd), np.int64)
    bad = np.zeros((1,) * (2 * nd), bool)
    for i, t in enumerate(dim_tables):
        shp = [1] * (2 * nd)
        shp[i], shp[nd + i] = t.shape
        t = t.reshape(shp)
        flat = flat + t * strides[i]
        bad = bad | (t < 0)
    flat = np.where(bad, -1, flat)
    q = int(np.prod([t.shape[0] for t in dim_tables]))
    return flat.reshape(q, -1)


@functools.lru_cache(maxsize=256)
def _table(key):
    kind, sp, params = key
    tabs = []
    if kind == "window":
        for n, (k, s, p, d, o) in zip(sp, params):
            pos = (np.arange(o) * s - p)[:, None] + np.arange(k)[None, :] * d
            tabs.append(np.where((pos >= 0) & (pos < n), pos, -1))
    else:  # adaptive: torch's start floor(i*L/out), end ceil((i+1)*L/out)
        for n, o in zip(sp, params):
            i = np.arange(o)
            start, end = (i * n) // o, -((-(i + 1) * n) // o)
            kmax = int((end - start).max()) if o else 1
            pos = start[:, None] + np.arange(kmax)[None, :]
            tabs.append(np.where(pos < end[:, None], pos, -1))
    t = _combine(tabs, sp)
    first_valid = np.argmax(t >= 0, axis=1)
    return t, first_valid


def _max_fwd(self, *, key, out_sp):
    t, first_valid = _table(key)
    n = self.shape[:2]
    plane = self.reshape(n + (-1,))
    p = plane.shape[-1]
    # the padding's value: -inf, or an integer dtype's lowest (torch pools integers too)
    low = -jnp.inf if jnp.issubdtype(self.dtype, jnp.floating) else jnp.iinfo(self.dtype).min
    fill = jnp.array(low, self.dtype)
    padded = jnp.concatenate([plane, jnp.broadcast_to(fill, n + (1,))], axis=-1)
    tt = np.where(t < 0, p, t)
    win = padded[..., tt]                                   # (N, C, Q, K)
    nan = jnp.isnan(win)
    kk = win.shape[-1]
    last_nan = kk - 1 - jnp.argmax(nan[..., ::-1], axis=-1)
    first_max = jnp.argmax(jnp.where(nan, fill, win), axis=-1)
    top = jnp.take_along_axis(win, first_max[..., None], -1)[..., 0]
    k = jnp.where(nan.any(-1), last_nan, jnp.where(top == fill, first_valid, first_max))
    val = jnp.take_along_axis(win, k[..., None], -1)[..., 0]
    idx = jnp.asarray(t)[jnp.arange(t.shape[0]), k]
    return val.reshape(n + out_sp), idx.reshape(n + out_sp)


def _max_backward(grads, results, self_shape):
    grad, idx = grads[0], results[1]
    n = tuple(self_shape[:2])
    flat = _creation.zeros(n + (int(np.prod(self_shape[2:])),), dtype=grad.dtype)
    return flat.scatter_add(-1, idx.flatten(2), grad.flatten(2)).reshape(self_shape)


_max_pool_prim = Primitive("max_pool", _max_fwd, nout=2, nondiff_outputs=(1,),
                      node_name="MaxPoolWithIndicesBackward0", self=_max_backward)


def _max_pool(input, nsp, kernel_size, stride, padding, dilation, ceil_mode, fn, msg=None):
    _real_only("max_pool2d" if nsp < 3 else "max_pool3d", input)
    unbatched = _batched(input, nsp, fn, msg)
    x = input.unsqueeze(0) if unbatched else input
    k, s, p, d, out = _geometry(fn, nsp, x, kernel_size, stride, padding, dilation, ceil_mode)
    key = ("window", tuple(x.shape[2:]), tuple(zip(k, s, p, d, out)))
    val, idx = _max_pool_prim(x, key=key, out_sp=out)
    if unbatched:
        val, idx = val.squeeze(0), idx.squeeze(0)
    return val, idx


def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """1-D max pooling returning ``(values, indices)``; see :func:`max_pool1d`."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    k = _tup(kernel_size, 1, "max_pool1d", "kernel_size")[0]
    p = _tup(padding, 1, "max_pool1d", "padding")[0]
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    s = k if stride is None or (not isinstance(stride, int) and len(stride) == 0) else \
        _tup(stride, 1, "max_pool1d", "stride", omit=True)[0]
    d = _tup(dilation, 1, "max_pool1d", "dilation")[0]
    if s > 0 and d > 0:
        o = _out_size(input.shape[-1], k, s, p, d, ceil_mode)
        if o < 1:
            raise RuntimeError(f"max_pool1d() Invalid computed output size: {o}")
    return _max_pool(input, 1, k, s, p, d, ceil_mode, "max_pool1d")


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """2-D max pooling returning ``(values, indices)``; see :func:`max_pool2d`."""
    return _max_pool(input, 2, kernel_size, stride, padding, dilation, ceil_mode, "max_pool2d")


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    """3-D max pooling returning ``(values, indices)``; see :func:`max_pool3d`."""
    return _max_pool(input, 3, kernel_size, stride, padding, dilation, ceil_mode, "max_pool3d")


_DOC_MAX = """{n}-D max pooling over ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` input.

    Output size per dim: ``floor((L + 2p - d(k-1) - 1) / s) + 1`` (``ceil`` with
    ``ceil_mode``, dropping a last window that would start in the right padding). With
    ``return_indices`` also returns the flat index of each maximum within its input plane
    (what ``max_unpool{n}d`` takes). The gradient goes to the first maximum of each window.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.max_pool{n}d(wgrad.ones({shape}), 2).shape
    wgrad.Size([{out}])
    """


def _check_max_pool1d(input, kernel_size, stride, padding, dilation):
    """torch.max_pool1d's own checks (without indices), in its order, with its messages."""
    def ints(v, what, how):
        v = (int(v),) if isinstance(v, (int, np.integer)) else tuple(int(x) for x in v)
        if len(v) != 1:
            raise RuntimeError(f"max_pool1d() {what} must be {how} of size 1 but got size "
                               f"{len(v)}")
        return v[0]
    if input.ndim not in (2, 3):
        raise RuntimeError(f"max_pool1d: Expected 2D or 3D (batch mode) tensor with optional 0 "
                           f"dim batch size for input, but got:{list(input.shape)}")
    k = ints(kernel_size, "kernel_size", "an int, list of ints or tuple of ints")
    no_stride = stride is None or (not isinstance(stride, (int, np.integer))
                                   and len(stride) == 0)
    s = k if no_stride else ints(stride, "stride",
                                 "None, an int, list of ints, or tuple of ints")
    p = ints(padding, "padding", "an int, list of ints, or tuple of ints")
    d = ints(dilation, "dilation", "an int, list of ints or tuple of ints")
    for what, v in (("kernel_size", k), ("stride", s)):
        if v <= 0:
            raise RuntimeError(f"max_pool1d() {what} must be greater than zero, but got {v}")
    if p < 0:
        raise RuntimeError(f"max_pool1d() padding must be non-negative, but got {p}")
    if p > k // 2:
        raise RuntimeError(f"max_pool1d() padding should be at most half of kernel size, but got "
                           f"padding={p} and kernel_size={k}")
    if d <= 0:
        raise RuntimeError(f"max_pool1d() dilation must be greater than zero, but got {d}")
    if input.requires_grad:  # torch then pools with max_pool2d's kernel, not max_pool1d_impl
        _real_only("max_pool2d", input)
    else:
        _floating_only("max_pool1d_impl", input)


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    if not return_indices:  # torch.max_pool1d (torch.max_pool1d_with_indices otherwise)
        _check_max_pool1d(input, kernel_size, stride, padding, dilation)
    v, i = max_pool1d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (v, i) if return_indices else v


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    v, i = max_pool2d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (v, i) if return_indices else v


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    v, i = max_pool3d_with_indices(input, kernel_size, stride, padding, dilation, ceil_mode)
    return (v, i) if return_indices else v


max_pool1d.__doc__ = _DOC_MAX.format(n=1, shape="1, 4", out="1, 2")
max_pool2d.__doc__ = _DOC_MAX.format(n=2, shape="1, 4, 4", out="1, 2, 2")
max_pool3d.__doc__ = _DOC_MAX.format(n=3, shape="1, 2, 4, 4", out="1, 1, 2, 2")


# -- adaptive max ---------------------------------------------------------------------
def _adaptive_size(output_size, sp, fn):
    n = len(sp)
    if isinstance(output_size, (int, np.integer)) or output_size is None:
        output_size = (output_size,) * n
    output_size = tuple(output_size)
    if len(output_size) != n:
        raise RuntimeError(f"{fn}: output_size must be {n}")
    return tuple(s if o is None else int(o) for o, s in zip(output_size, sp))


def _adaptive_max(input, nsp, output_size, fn):
    _floating_only("adaptive_max_pool3d" if nsp == 3 else "adaptive_max_pool2d", input)
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"{fn}(): Expected {nsp + 1}D or {nsp + 2}D tensor, but got: "
                           f"{list(input.shape)}")
    unbatched = input.ndim == nsp + 1
    x = input.unsqueeze(0) if unbatched else input
    out = _adaptive_size(output_size, tuple(x.shape[2:]), fn)
    key = ("adaptive", tuple(x.shape[2:]), out)
    val, idx = _max_pool_prim(x, key=key, out_sp=out)
    if unbatched:
        val, idx = val.squeeze(0), idx.squeeze(0)
    return val, idx


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling returning ``(values, indices)``."""
    if input.ndim not in (2, 3):
        raise RuntimeError(f"adaptive_max_pool1d(): Expected 2D or 3D tensor, but got: "
                           f"{list(input.shape)}")
    return _adaptive_max(input, 1, output_size, "adaptive_max_pool1d")


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    """Adaptive 2-D max pooling returning ``(values, indices)``."""
    return _adaptive_max(input, 2, output_size, "adaptive_max_pool2d")


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling returning ``(values, indices)``."""
    return _adaptive_max(input, 3, output_size, "adaptive_max_pool3d")


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """Adaptive 1-D max pooling: window ``i`` spans ``[floor(i L / out), ceil((i+1) L / out))``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.adaptive_max_pool1d(wgrad.tensor([[1., 3., 2., 5., 4.]]), 2)
    tensor([[3., 5.]])
    """
    v, i = adaptive_max_pool1d_with_indices(input, output_size)
    return (v, i) if return_indices else v


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """Adaptive 2-D max pooling (``output_size`` entries may be None: keep that size).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.adaptive_max_pool2d(wgrad.ones(1, 5, 7), (2, None)).shape
    wgrad.Size([1, 2, 7])
    """
    v, i = adaptive_max_pool2d_with_indices(input, output_size)
    return (v, i) if return_indices else v


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """Adaptive 3-D max pooling.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.adaptive_max_pool3d(wgrad.ones(1, 3, 4, 5), 2).shape
    wgrad.Size([1, 2, 2, 2])
    """
    v, i = adaptive_max_pool3d_with_indices(input, output_size)
    return (v, i) if return_indices else v


# -- max_unpool -----------------------------------------------------------------------
def _unpool(input, indices, nsp, kernel_size, stride, padding, output_size, fn):
    _real_only(f"max_unpool{nsp}d", input)
    k = _tup(kernel_size, nsp, fn, "kernel_size")
    s = k if stride is None else _tup(stride, nsp, fn, "stride", omit=True)
    p = _tup(padding, nsp, fn, "padding")
    sp = tuple(input.shape[-nsp:])
    default = tuple((n - 1) * ss - 2 * pp + kk for n, kk, ss, pp in zip(sp, k, s, p))
    if output_size is None:
        out = default
    else:
        out = tuple(int(o) for o in output_size)
        if len(out) == nsp + 2:
            out = out[2:]
        elif len(out) == nsp + 1:
            out = out[1:]
        if len(out) != nsp:
            raise ValueError(f"output_size should be a sequence containing {nsp} or {nsp + 2} "
                             f"elements, but it has a length of '{len(output_size)}'")
        for o, dflt, ss in zip(out, default, s):
            if not dflt - ss < o < dflt + ss:
                raise ValueError(f"invalid output_size \"{list(out)}\" (dim {len(out)} must be "
                                 f"between {list(d - x for d, x in zip(default, s))} and "
                                 f"{list(d + x for d, x in zip(default, s))})")
    if tuple(indices.shape) != tuple(input.shape):
        raise RuntimeError(f"Expected shape of indices to be same as that of the input "
                           f"tensor ({list(input.shape)}) but got indices tensor with shape: "
                           f"{list(indices.shape)}")
    unbatched = input.ndim == nsp + 1
    x = input.unsqueeze(0) if unbatched else input
    ix = indices.unsqueeze(0) if unbatched else indices
    plane = int(np.prod(out))
    flat_i = ix.flatten(2)
    if flat_i.numel():
        lo, hi = int(flat_i.min().item()), int(flat_i.max().item())
        if lo < 0 or hi >= plane:
            bad = lo if lo < 0 else hi
            raise RuntimeError(f"Found an invalid max index: {bad} (output volumes are of "
                               f"size {'x'.join(map(str, out))})")
    z = _creation.zeros(tuple(x.shape[:2]) + (plane,), dtype=x.dtype)
    res = z.scatter(-1, flat_i, x.flatten(2)).reshape(tuple(x.shape[:2]) + out)
    return res.squeeze(0) if unbatched else res


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of :func:`max_pool1d`: values placed at ``indices``, zeros elsewhere.

    Example
    -------
    >>> import wgrad
    >>> F = wgrad.nn.functional
    >>> v, i = F.max_pool1d(wgrad.tensor([[1., 3., 2., 0.]]), 2, return_indices=True)
    >>> F.max_unpool1d(v, i, 2)
    tensor([[0., 3., 2., 0.]])
    """
    return _unpool(input, indices, 1, kernel_size, stride, padding, output_size,
                   "max_unpool1d")


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of :func:`max_pool2d`: values placed at ``indices``, zeros elsewhere.

    Example
    -------
    >>> import wgrad
    >>> F = wgrad.nn.functional
    >>> v, i = F.max_pool2d(wgrad.ones(1, 4, 4), 2, return_indices=True)
    >>> F.max_unpool2d(v, i, 2).sum().item()
    4.0
    """
    return _unpool(input, indices, 2, kernel_size, stride, padding, output_size,
                   "max_unpool2d")


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """Inverse of :func:`max_pool3d`: values placed at ``indices``, zeros elsewhere.

    Example
    -------
    >>> import wgrad
    >>> F = wgrad.nn.functional
    >>> v, i = F.max_pool3d(wgrad.ones(1, 2, 2, 2), 2, return_indices=True)
    >>> F.max_unpool3d(v, i, 2).shape
    wgrad.Size([1, 2, 2, 2])
    """
    return _unpool(input, indices, 3, kernel_size, stride, padding, output_size,
                   "max_unpool3d")


# -- average pools --------------------------------------------------------------------
@functools.lru_cache(maxsize=256)
def _divisor(sp, params, count_include_pad, divisor_override):
    if divisor_override is not None:
        return None
    total = np.ones((1,) * len(sp))
    for i, (n, (k, s, p, o)) in enumerate(zip(sp, params)):
        start = np.arange(o) * s - p
        end = np.minimum(start + k, n + p)
        if count_include_pad:
            f = end - start
        else:
            f = np.minimum(end, n) - np.maximum(start, 0)
        shp = [1] * len(sp)
        shp[i] = o
        total = total * f.reshape(shp)
    return total


def _avg_pool_jax(x, geom):
    sp, params, count_include_pad, divisor_override = geom
    nsp = len(sp)
    pads = []
    for n, (k, s, p, o) in zip(sp, params):
        need = (o - 1) * s + k
        pads.append((p, max(p, need - n - p)))
    zero = np.zeros((), x.dtype)  # concrete: JAX then uses its differentiable window sum
    summed = jax.lax.reduce_window(x, zero, jax.lax.add, (1, 1) + tuple(k for k, *_ in params),
                                   (1, 1) + tuple(s for _, s, *_ in params),
                                   ((0, 0), (0, 0)) + tuple(pads))
    summed = summed[(slice(None), slice(None)) + tuple(slice(0, o) for *_, o in params)]
    div = _divisor(sp, params, count_include_pad, divisor_override)
    if div is None:
        return summed / jnp.asarray(divisor_override, summed.real.dtype)
    div = np.where(div == 0, 1, div)  # an empty clamped window sums to 0
    return summed / jnp.asarray(div.reshape((1, 1) + div.shape), summed.real.dtype)


_avg_pool_op = jax_function(_avg_pool_jax, static_argnums=(1,), name="avg_pool")


def _avg_pool(input, nsp, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override, fn):
    x = input.unsqueeze(0) if input.ndim == nsp + 1 else input
    k, s, p, d, out = _geometry(fn, nsp, x, kernel_size, stride, padding, 1, ceil_mode)
    if divisor_override is not None and divisor_override == 0:
        raise RuntimeError("divisor must be not zero")
    geom = (tuple(x.shape[2:]), tuple(zip(k, s, p, out)), bool(count_include_pad),
            divisor_override)
    res = _avg_pool_op(x, geom)
    return res.squeeze(0) if input.ndim == nsp + 1 else res


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """1-D average pooling over ``(N, C, L)`` or ``(C, L)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.avg_pool1d(wgrad.tensor([[1., 2., 3., 4.]]), 2)
    tensor([[1.5000, 3.5000]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"avg_pool1d)")
    _real_only("avg_pool2d", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"avg_pool1d: wgrad averages floating input only (torch "
                                  f"divides {input.dtype.scalar_name} sums in integers)")
    k = _tup(kernel_size, 1, "avg_pool1d", "kernel_size")
    s = None if stride is None else _tup(stride, 1, "avg_pool1d", "stride", omit=True)
    p = _tup(padding, 1, "avg_pool1d", "padding")
    x = input.unsqueeze(-2)
    try:
        res = _avg_pool(x, 2, (1,) + k, None if s is None else (1,) + s, (0,) + p, ceil_mode,
                        count_include_pad, None, "avg_pool2d")
    except RuntimeError as e:
        if str(e).startswith("stride should"):
            raise
        raise RuntimeError(str(e)) from None
    return res.squeeze(-2)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """2-D average pooling over ``(N, C, H, W)`` or ``(C, H, W)``; ``count_include_pad``
    divides by the window size including padding, ``divisor_override`` by a fixed number.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.avg_pool2d(wgrad.ones(1, 3, 3), 2, padding=1,
    ...                                count_include_pad=False)
    tensor([[[1., 1.],
             [1., 1.]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"Expected 3D or 4D (batch mode) tensor with optional 0 dim batch "
                           f"size for input, but got:{list(input.shape)}")
    return _avg_pool(input, 2, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool2d")


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """3-D average pooling over ``(N, C, D, H, W)`` or ``(C, D, H, W)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.avg_pool3d(wgrad.ones(1, 2, 2, 2), 2)
    tensor([[[[1.]]]])
    """
    if input.ndim not in (4, 5):
        raise RuntimeError(f"non-empty 4D or 5D (batch mode) tensor expected for input")
    k = _tup(kernel_size, 3, "avg_pool3d", "kernel_size")
    sp = tuple(input.shape[-3:])
    if any(n + 2 * pp < kk for n, kk, pp in zip(sp, k, _tup(padding, 3, "avg_pool3d",
                                                             "padding"))):
        raise RuntimeError(f"input image (T: {sp[0]} H: {sp[1]} W: {sp[2]}) smaller than kernel "
                           f"size (kT: {k[0]} kH: {k[1]} kW: {k[2]})")
    return _avg_pool(input, 3, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override, "avg_pool3d")


# -- adaptive average -----------------------------------------------------------------
def _adaptive_avg(input, nsp, output_size, fn):
    x = input.unsqueeze(0) if input.ndim == nsp + 1 else input
    out = _adaptive_size(output_size, tuple(x.shape[2:]), fn)
    taps = tuple(_adaptive_taps(n, o) for n, o in zip(x.shape[2:], out))
    res = _apply_taps(x, taps)
    return res.squeeze(0) if input.ndim == nsp + 1 else res


def adaptive_avg_pool1d(input, output_size):
    """Adaptive 1-D average pooling: window ``i`` spans
    ``[floor(i L / out), ceil((i+1) L / out))``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.adaptive_avg_pool1d(wgrad.tensor([[1., 2., 3.]]), 2)
    tensor([[1.5000, 2.5000]])
    """
    if input.ndim not in (2, 3):
        raise RuntimeError(f"Expected 2 to 3 dimensions, but got {input.ndim}-dimensional "
                           f"tensor for argument #1 'self' (while checking arguments for "
                           f"adaptive_avg_pool1d)")
    if isinstance(output_size, (tuple, list)) and len(output_size) != 1:
        raise RuntimeError("adaptive_avg_pool1d: output_size must be 1")
    _floating_only("adaptive_avg_pool2d", input)
    return _adaptive_avg(input, 1, output_size, "adaptive_avg_pool1d")


def adaptive_avg_pool2d(input, output_size):
    """Adaptive 2-D average pooling (``output_size`` entries may be None: keep that size).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.adaptive_avg_pool2d(wgrad.ones(1, 5, 7), 1)
    tensor([[[1.]]])
    """
    if input.ndim not in (3, 4):
        raise RuntimeError(f"adaptive_avg_pool2d(): Expected 3D or 4D tensor, but got "
                           f"{list(input.shape)}")
    return _adaptive_avg(input, 2, output_size, "adaptive_avg_pool2d")


def adaptive_avg_pool3d(input, output_size):
    """Adaptive 3-D average pooling.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.adaptive_avg_pool3d(wgrad.ones(1, 3, 4, 5), 1).shape
    wgrad.Size([1, 1, 1, 1])
    """
    if input.ndim not in (4, 5):
        raise RuntimeError(f"adaptive_avg_pool3d(): Expected 4D or 5D tensor, but got "
                           f"{list(input.shape)}")
    return _adaptive_avg(input, 3, output_size, "adaptive_avg_pool3d")


# -- power-average pools ---------------------------------------------------------------
def _lp(input, nsp, norm_type, kernel_size, stride, ceil_mode, pool):
    k = _tup(kernel_size, nsp, f"lp_pool{nsp}d", "kernel_size")
    if stride is not None:
        out = pool(input.pow(norm_type), k, stride, 0, ceil_mode)
    else:
        out = pool(input.pow(norm_type), k, padding=0, ceil_mode=ceil_mode)
    return (out.sign() * out.abs().relu()).mul(math.prod(k)).pow(1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """Power-average pooling: ``(sum over window of x^p)^(1/p)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.lp_pool1d(wgrad.tensor([[3., 4.]]), 2, 2)
    tensor([[5.]])
    """
    return _lp(input, 1, norm_type, kernel_size, stride, ceil_mode, avg_pool1d)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """2-D power-average pooling: ``(sum over window of x^p)^(1/p)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.lp_pool2d(wgrad.ones(1, 2, 2), 1, 2)
    tensor([[[4.]]])
    """
    return _lp(input, 2, norm_type, kernel_size, stride, ceil_mode, avg_pool2d)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """3-D power-average pooling: ``(sum over window of x^p)^(1/p)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.lp_pool3d(wgrad.ones(1, 2, 2, 2), 1, 2)
    tensor([[[[8.]]]])
    """
    return _lp(input, 3, norm_type, kernel_size, stride, ceil_mode, avg_pool3d)


_out.install(globals(), "pooling")  # NOTE [out= arguments]
