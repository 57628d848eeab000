"""Fractional max pooling (Graham, 2014), as ``torch.nn.functional``'s.

# NOTE [Fractional pooling windows]
# Each (batch, channel) plane gets its own pseudo-random windows: per spatial dim, the
# start of output window ``i`` is aten's ``generate_intervals`` of that plane's sample
# ``u`` in [0, 1): ``int((i + u) * alpha) - int(u * alpha)`` with ``alpha = (in - k) /
# (out - 1)``, the last window starting at ``in - k``, evaluated in the input's dtype
# (float32 arithmetic for float32 input, as the C++ kernel's ``scalar_t``; one rounding
# per operation for float16 and bfloat16; ``int`` truncates toward zero and gives
# INT_MIN for a NaN or an overflow, as on x86). One jitted kernel computes the starts
# from the samples (so samples traced by wgrad.compile work), turns them into a
# ``(N, C, windows, k)`` table of flat plane indices, gathers the windows and picks each
# one's winner with the C++ loop's rule (``val > max || isnan(val)`` from ``max = -inf``: the first
# maximum, the last NaN, the window's first element when all are -inf; -inf and the first
# element for an empty window). The gradient scatters ``grad`` to the winners (the max
# pools' backward). Where torch's kernel asserts that a window lies inside the input
# (samples far outside [0, 1), rounding in bfloat16), wgrad raises too, from the same
# formula in numpy, when the samples are concrete. For a sample tensor drawn here
# (``_random_samples=None``) the draws come from wgrad's generator, so the windows differ
# from torch's for the same seed.
"""
import math

import jax.numpy as jnp
import numpy as np

from .. import _creation
from .._autograd.grad_mode import no_grad
from .._tensor import Tensor
from ..ops._primitive import Primitive
from ..ops.elementwise import _floating_only
from ..ops.layer import _concrete

__all__ = ["fractional_max_pool2d", "fractional_max_pool3d",
           "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]

_INT_MIN = -2 ** 31


def _fwd(self, samples, *, k, out_sp):
    nd = len(out_sp)
    lead = self.shape[:-nd]  # (N, C), or (C,) unbatched
    u = samples[:lead[0]] if len(lead) == 2 else samples[0]
    table = _table(jnp, u, self.shape[-nd:], out_sp, k)
    q, kk = table.shape[-2:]
    plane = self.reshape(lead + (math.prod(self.shape[-nd:]),))
    win = jnp.take_along_axis(plane, table.reshape(lead + (q * kk,)), axis=-1)
    win = win.reshape(lead + (q, kk))
    nan = jnp.isnan(win)
    last_nan = kk - 1 - jnp.argmax(nan[..., ::-1], axis=-1)
    first_max = jnp.argmax(jnp.where(nan, jnp.array(-jnp.inf, win.dtype), win), axis=-1)
    pick = jnp.where(nan.any(-1), last_nan, first_max)[..., None]
    val = jnp.take_along_axis(win, pick, -1)[..., 0]
    if min(k) == 0:  # an empty window: the C++ loop compares nothing, keeps -inf, the start
        pick = jnp.zeros_like(pick)
        val = jnp.full(val.shape, -jnp.inf, val.dtype)
    idx = jnp.take_along_axis(table, pick, -1)[..., 0]
    return val.reshape(lead + out_sp), idx.reshape(lead + out_sp)


def _backward(grads, results, self_shape, out_sp):
    """``grad`` scattered (added) to each window's winner in its plane."""
    grad, idx = grads[0], results[1]
    nd = len(out_sp)
    lead = tuple(self_shape[:-nd])
    flat = _creation.zeros(lead + (math.prod(self_shape[-nd:]),), dtype=grad.dtype)
    q = math.prod(out_sp)
    src, at = grad.reshape(lead + (q,)), idx.reshape(lead + (q,))
    return flat.scatter_add(-1, at, src).reshape(self_shape)


_prims = {nd: Primitive(f"fractional_max_pool{nd}d", _fwd, nout=2, nondiff_outputs=(1,),
                        node_name=f"FractionalMaxPool{nd}DBackward0", self=_backward)
          for nd in (2, 3)}


def _ntuple(v, n):
    """torch's ``_pair``/``_triple``: an iterable as a tuple, anything else repeated."""
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


def _int_list(v, n, fn, what, pos):
    """torch's argument parser for an int list (a single int is repeated ``n`` times)."""
    if isinstance(v, Tensor) and v.dim() == 0 and not v.is_floating_point():
        v = int(v)
    if isinstance(v, (bool, int, np.integer)):
        return (int(v),) * n
    if not isinstance(v, (list, tuple)):
        raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be tuple of ints, "
                        f"not {type(v).__name__}")
    for i, x in enumerate(v):
        if not isinstance(x, (int, np.integer)):
            raise TypeError(f"{fn}(): argument '{what}' (position {pos}) must be tuple of "
                            f"ints, but found element of type {type(x).__name__} at pos {i}")
    return tuple(int(x) for x in v)


def _trunc(xp, x):
    """C's ``static_cast<int>`` on x86: toward zero; INT_MIN when not representable."""
    x = x.astype(xp.float64)
    ok = xp.isfinite(x) & (x > _INT_MIN - 1) & (x < 2 ** 31)
    return xp.where(ok, xp.trunc(xp.where(ok, x, 0.0)), _INT_MIN).astype(xp.int64)


def _starts(xp, u, n_in, n_out, k):
    """aten's ``generate_intervals`` for every plane, with numpy or jax.numpy (``xp``):
    samples ``u`` in the input's dtype -> ``u.shape + (n_out,)`` window starts (NOTE
    [Fractional pooling windows])."""
    parts = []
    if n_out > 1:
        dt = u.dtype
        alpha = xp.asarray(n_in - k, dt) / xp.asarray(n_out - 1, dt)
        i = xp.arange(n_out - 1).astype(dt)
        d = _trunc(xp, (i + u[..., None]) * alpha) - _trunc(xp, u * alpha)[..., None]
        parts.append(d.astype(xp.int32).astype(xp.int64))  # C int arithmetic wraps
    if n_out > 0:
        parts.append(xp.full(u.shape + (1,), n_in - k, xp.int64))
    return xp.concatenate(parts, -1) if parts else xp.zeros(u.shape + (0,), xp.int64)


def _table(xp, u, sp, out, k):
    """``lead + (prod(out), prod(k))`` flat plane indices of every window's elements, from
    samples ``u`` of shape ``lead + (nd,)`` (2-D samples are (W, H), 3-D ones (T, H, W))."""
    nd, lead = len(sp), tuple(u.shape[:-1])
    flat = xp.zeros(lead + (1,) * (2 * nd), xp.int64)
    for d in range(nd):
        st = _starts(xp, u[..., 1 - d if nd == 2 else d], sp[d], out[d], k[d])
        pos = st[..., None] + xp.arange(max(k[d], 1))  # lead + (out_d, k_d)
        shape = list(lead) + [1] * (2 * nd)
        shape[len(lead) + d], shape[len(lead) + nd + d] = out[d], max(k[d], 1)
        flat = flat + pos.reshape(shape) * math.prod(sp[d + 1:])
    return flat.reshape(lead + (math.prod(out), math.prod(max(x, 1) for x in k)))


def _check_windows(nd, u, sp, out, k):
    """torch's kernel asserts that every window lies in the input (samples far outside
    [0, 1), or rounding in a low-precision dtype, can break that); so does wgrad."""
    if min(k) == 0:  # no window element is visited, nothing is asserted
        return
    for d in range(nd):
        st = _starts(np, u[..., 1 - d if nd == 2 else d], sp[d], out[d], k[d])
        if st.size and (st.min() < 0 or st.max() > sp[d] - k[d]):
            raise RuntimeError(f"fractional_max_pool{nd}d: the random samples place a window "
                               f"outside the input (torch's kernel fails an internal assert "
                               f"here)")


def _fractional(nd, input, kernel_size, output_size, output_ratio, _random_samples):
    fn = f"fractional_max_pool{nd}d"
    dims = nd + 1  # an unbatched input's dims
    if output_size is None and output_ratio is None:
        raise ValueError(f"{fn} requires specifying either an output_size or an output_ratio")
    if output_size is None:
        if nd == 2 and len(output_ratio) > 2:
            raise ValueError(f"{fn} requires output_ratio to either be a single Int or tuple "
                             f"of Ints.")
        ratio = _ntuple(output_ratio, nd)
        output_size = [int(input.size(d - nd) * ratio[d]) for d in range(nd)]
    samples = _random_samples
    if samples is None:
        n_batch = 1 if input.dim() == dims else input.size(0)
        if not (input.dtype.is_floating_point or input.dtype.is_complex):
            raise NotImplementedError(f'"check_uniform_bounds" not implemented for '
                                      f"'{input.dtype.scalar_name}'")
        samples = _creation.rand(n_batch, input.size(-dims), nd, dtype=input.dtype)
    k = _int_list(kernel_size, nd, fn, "kernel_size", 2)
    out = _int_list(output_size, nd, fn, "output_size", 3)
    if samples.requires_grad:
        raise RuntimeError(f"The function '{fn}' is not differentiable with respect to "
                           f"argument 'random_samples'. This input cannot have requires_grad "
                           f"True.")
    _check(nd, input, k, out)
    _check_samples(nd, input, samples)
    _floating_only(f"{fn}_out_frame", input)
    if _concrete(samples):
        with no_grad():
            u = samples.detach()[:input.shape[0] if input.dim() > dims else 1]
        _check_windows(nd, np.asarray(u._data), tuple(input.shape[-nd:]), out, k)
    return _prims[nd](input, samples.detach(), k=k, out_sp=tuple(out))


def _check(nd, input, k, out):
    """aten's shape checks, in their order, with their messages."""
    fn = f"fractional_max_pool{nd}d"
    words = "Ints" if nd == 2 else "three Ints"
    if len(k) != nd:
        raise RuntimeError(f"{fn}: kernel_size must either be a single Int or tuple of {words}")
    if len(out) != nd:
        raise RuntimeError(f"{fn}: output_size must either be a single Int or tuple of {words}")
    name = fn if nd == 2 else f"{fn}_out"
    shape = list(input.shape)
    if input.dim() not in (nd + 1, nd + 2):
        raise RuntimeError(f"{name}(): Expected {nd + 1}D or {nd + 2}D tensor, but got: "
                           f"{shape}")
    for i in range(1, input.dim()):
        if shape[i] == 0:
            raise RuntimeError(f"{name}(): Expected input to have non-zero size for non-batch "
                               f"dimensions, but got{shape} with dimension {i} being empty.")
    sp = shape[-nd:]
    names = ("height", "width") if nd == 2 else ("time", "height", "width")
    order = (0, 1) if nd == 2 else (0, 2, 1)  # aten's order: T, W, H for 3-D
    for d in order:
        too_large = out[d] + k[d] - 1 > sp[d] if nd == 2 else \
            not (k[d] <= sp[d] and out[d] + k[d] - 1 < sp[d])
        if too_large:
            raise RuntimeError(f"{name}(): pool {names[d]} {k[d]} too large relative to input "
                               f"{names[d]} {sp[d]}")
    if min(out) < 0:
        full = shape[:-nd] + list(out)
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(out)}: "
                           f"{full}")


def _check_samples(nd, input, samples):
    """aten's ``fractional_max_pool_check_shape``."""
    if samples.dtype != input.dtype:
        raise RuntimeError("Expect _random_samples to have the same dtype as input")
    if samples.dim() != 3:
        raise RuntimeError(f"Expect _random_samples to have 3 dimensions, got {samples.dim()}")
    batched = input.dim() == nd + 2
    n, c = (input.shape[0], input.shape[1]) if batched else (1, input.shape[0])
    if samples.shape[0] < n:
        raise RuntimeError("Expect _random_samples.size(0) no less then input batch size.")
    if samples.shape[1] != c:
        raise RuntimeError("Expect _random_samples.size(1) equals to input channel size.")
    if samples.shape[2] != nd:
        raise RuntimeError(f"Expect _random_samples.size(2) equals to {nd}; got "
                           f"{samples.shape[2]}.")


def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """2-D fractional max pooling returning ``(values, indices)``; see
    :func:`fractional_max_pool2d`."""
    return _fractional(2, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None,
                                       output_ratio=None, return_indices=False,
                                       _random_samples=None):
    """3-D fractional max pooling returning ``(values, indices)``; see
    :func:`fractional_max_pool3d`."""
    return _fractional(3, input, kernel_size, output_size, output_ratio, _random_samples)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """2-D fractional max pooling of ``(N, C, H, W)`` or ``(C, H, W)`` input: ``kernel_size``
    windows at pseudo-random starts giving ``output_size`` (or ``output_ratio`` times the
    input size) outputs per plane. ``_random_samples`` ``(N, C, 2)`` in [0, 1) (the W
    sample, then the H one) fixes the windows as torch's kernel does; without it they
    are drawn from wgrad's generator (NOTE [Fractional pooling windows]). With
    ``return_indices`` also returns each maximum's flat index in its plane.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.arange(16.).reshape(1, 1, 4, 4)
    >>> u = wgrad.full((1, 1, 2), 0.5)
    >>> wgrad.nn.functional.fractional_max_pool2d(x, 2, output_size=2, _random_samples=u)
    tensor([[[[ 5.,  7.],
              [13., 15.]]]])
    """
    v, i = fractional_max_pool2d_with_indices(input, kernel_size, output_size, output_ratio,
                                              return_indices, _random_samples)
    return (v, i) if return_indices else v


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """3-D fractional max pooling of ``(N, C, T, H, W)`` or ``(C, T, H, W)`` input
    (``_random_samples`` ``(N, C, 3)``: the T, H and W samples); see
    :func:`fractional_max_pool2d`.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(1, 3, 5, 5, 5)
    >>> wgrad.nn.functional.fractional_max_pool3d(x, 2, output_ratio=0.5).shape
    wgrad.Size([1, 3, 2, 2, 2])
    """
    v, i = fractional_max_pool3d_with_indices(input, kernel_size, output_size, output_ratio,
                                              return_indices, _random_samples)
    return (v, i) if return_indices else v
