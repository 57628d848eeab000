"""``ctc_loss``: the connectionist temporal classification loss, as torch's.

# NOTE [CTC gradient]
# The negative log-likelihood of each target sequence is the forward (alpha) recursion of
# Graves et al. in log space, one ``lax.scan`` over time in one jitted kernel. torch's
# backward of ``_ctc_loss`` is not the partial derivative with respect to log_probs: it
# returns ``exp(log_probs) - occupancy`` (``occupancy`` = the posterior of each label at
# each time, which is minus the true partial derivative), which equals the true gradient
# once it flows back through the log_softmax that produced log_probs (the extra exp term
# sums to one per time step and log_softmax's backward removes it). wgrad returns torch's
# quantity: the occupancy is JAX's derivative of the same recursion, the exp term is added
# for the time steps inside each input length, and a sample whose loss is infinite gets a
# zero gradient under ``zero_infinity``. As in torch, this backward has no derivative of
# its own.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._creation import tensor
from .._tensor import Tensor
from ..ops._primitive import Primitive
from ..ops.elementwise import where

__all__ = ["ctc_loss"]


def _logaddexp(a, b):
    """log(exp(a) + exp(b)) whose derivative is 0, not NaN, where both are -inf (an
    unreachable state of the recursion)."""
    m = jnp.maximum(a, b)
    dead = m == -jnp.inf
    ms = jnp.where(dead, jnp.zeros_like(m), m)
    s = jnp.exp(a - ms) + jnp.exp(b - ms)
    return jnp.where(dead, m, ms + jnp.log(jnp.where(dead, jnp.ones_like(s), s)))


def _nll(lp, targets, input_lengths, target_lengths, blank):
    """-log p(target_n | lp[:, n]) for each n: lp (T, N, C), targets (N, S) padded."""
    t_max, n, _ = lp.shape
    s = targets.shape[1]
    ext = jnp.full((n, 2 * s + 1), blank, jnp.int32).at[:, 1::2].set(targets)
    skip = jnp.zeros(ext.shape, bool).at[:, 2:].set((ext[:, 2:] != blank) &
                                                   (ext[:, 2:] != ext[:, :-2]))
    lpe = jnp.take_along_axis(lp, jnp.broadcast_to(ext[None], (t_max,) + ext.shape), axis=2)
    ninf = jnp.asarray(-jnp.inf, lp.dtype)
    alpha = jnp.full(ext.shape, ninf, lp.dtype)
    alpha = alpha.at[:, 0].set(lpe[0, :, 0])
    if ext.shape[1] > 1:
        alpha = alpha.at[:, 1].set(jnp.where(target_lengths > 0, lpe[0, :, 1], ninf))
    alpha = jnp.where((input_lengths > 0)[:, None], alpha, ninf)

    def step(a, xs):
        lpe_t, t = xs
        a1 = jnp.concatenate([jnp.full((n, 1), ninf, lp.dtype), a[:, :-1]], axis=1)
        a2 = jnp.concatenate([jnp.full((n, 2), ninf, lp.dtype), a[:, :-2]], axis=1)
        new = _logaddexp(_logaddexp(a, a1), jnp.where(skip, a2, ninf)) + lpe_t
        return jnp.where((t < input_lengths)[:, None], new, a), None
    alpha, _ = jax.lax.scan(step, alpha, (lpe[1:], jnp.arange(1, t_max)))
    last = jnp.take_along_axis(alpha, (2 * target_lengths)[:, None], axis=1)[:, 0]
    prev = jnp.take_along_axis(alpha, jnp.maximum(2 * target_lengths - 1, 0)[:, None],
                               axis=1)[:, 0]
    return -_logaddexp(last, jnp.where(target_lengths > 0, prev, ninf))


def _fwd(log_probs, targets, input_lengths, target_lengths, *, blank, zero_infinity):
    return _nll(log_probs, targets, input_lengths, target_lengths, blank)


def _torch_grad(grad, log_probs, targets, input_lengths, target_lengths, result, *, blank,
                zero_infinity):
    """torch's ``_ctc_loss_backward``: ``grad_n * (exp(lp) - occupancy)`` inside each
    input length, zero elsewhere (NOTE [CTC gradient])."""
    _, vjp = jax.vjp(lambda lp: _nll(lp, targets, input_lengths, target_lengths, blank),
                     log_probs)
    g = grad
    if zero_infinity:
        g = jnp.where(jnp.isinf(result), jnp.zeros_like(g), g)
    d_nll, = vjp(g)  # = -grad_n * occupancy
    inside = (jnp.arange(log_probs.shape[0])[:, None] < input_lengths[None, :])[..., None]
    out = jnp.where(inside, jnp.exp(log_probs) * g[None, :, None] + d_nll,
                    jnp.zeros((), log_probs.dtype))
    # an impossible alignment (infinite loss): zero under zero_infinity, else torch's NaN
    fill = jnp.zeros((), out.dtype) if zero_infinity else jnp.asarray(jnp.nan, out.dtype)
    return jnp.where(jnp.isinf(result)[None, :, None] & inside, fill, out)


def _no_double_backward(grad):
    raise RuntimeError("derivative for aten::_ctc_loss_backward is not implemented")


_ctc_backward = Primitive("_ctc_loss_backward", _torch_grad, node_name="CtcLossBackward0Backward",
                          grad=_no_double_backward, log_probs=_no_double_backward)
_ctc = Primitive(
    "ctc_loss", _fwd, node_name="CtcLossBackward0",
    log_probs=lambda grad, log_probs, targets, input_lengths, target_lengths, result, blank,
    zero_infinity: _ctc_backward(grad, log_probs, targets, input_lengths, target_lengths,
                                 result, blank=blank, zero_infinity=zero_infinity))


def _ints(x):
    if isinstance(x, Tensor):
        return np.asarray(x.detach()._data).astype(np.int64).reshape(-1)
    if not isinstance(x, (list, tuple)):
        raise TypeError(f"ctc_loss() received an invalid combination of arguments - got "
                        f"input_lengths or target_lengths of type {type(x).__name__}, but "
                        f"expected a Tensor or a tuple of ints")
    return np.asarray(x, dtype=np.int64).reshape(-1)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The CTC loss of ``log_probs`` (T, N, C) or (T, C) (log-softmax outputs) against
    ``targets`` (N, S) padded, or 1-D concatenated, with per-sample ``input_lengths`` and
    ``target_lengths`` (tensors or sequences). ``reduction``: 'mean' (each loss divided by
    its target length, then the batch mean), 'sum' or 'none'; ``zero_infinity`` zeroes
    impossible alignments' losses and gradients. The gradient is torch's (NOTE [CTC
    gradient]).

    Example
    -------
    >>> import wgrad
    >>> lp = wgrad.zeros(3, 1, 2).log_softmax(2)
    >>> wgrad.nn.functional.ctc_loss(lp, wgrad.tensor([[1]]), [3], [1], reduction="sum")
    tensor(0.2877)
    """
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{reduction} is not a valid value for reduction")
    unbatched = log_probs.dim() == 2
    if unbatched:
        log_probs = log_probs.unsqueeze(1)
        targets = targets.unsqueeze(0) if targets.dim() == 1 else targets
    t_max, n = log_probs.shape[0], log_probs.shape[1]
    il, tl = _ints(input_lengths), _ints(target_lengths)
    tg = np.asarray(targets.detach()._data).astype(np.int64)
    if tg.ndim == 1:  # concatenated: pad to (N, max length)
        width = int(tl.max()) if tl.size else 0
        padded = np.zeros((n, width), np.int64)
        start = 0
        for i, k in enumerate(tl):
            padded[i, :k] = tg[start:start + k]
            start += k
        tg = padded
    elif tl.size and tg.shape[1] < tl.max():
        raise RuntimeError(f"Expected tensor to have size at least {int(tl.max())} at "
                           f"dimension 1, but got size {tg.shape[1]} for argument #2 "
                           f"'targets' (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    if il.size and il.max() > t_max:
        raise RuntimeError(f"Expected input_lengths to have value at most {t_max}, but got "
                           f"value {int(il.max())} (while checking arguments for "
                           f"ctc_loss_allocate_outputs)")
    i32 = D.int32
    nll = _ctc(log_probs, tensor(tg, dtype=i32), tensor(il, dtype=i32), tensor(tl, dtype=i32),
               blank=int(blank), zero_infinity=bool(zero_infinity))
    if zero_infinity:
        nll = where(nll == float("inf"), 0.0, nll)
    if reduction == "mean":
        lengths = tensor(np.maximum(tl, 1), dtype=nll.dtype)
        return (nll / lengths).mean()
    if reduction == "sum":
        return nll.sum()
    return nll.squeeze(0) if unbatched else nll
