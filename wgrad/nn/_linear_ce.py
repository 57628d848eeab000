"""``torch.nn.functional.linear_cross_entropy``: ``cross_entropy(linear(input, weight, bias),
target)`` in one call, optionally over chunks of the batch so that the whole
``(batch, classes)`` logits matrix never exists at once.

# NOTE [Chunked linear cross entropy]
# With ``options=None`` the loss is the composition of wgrad's ``linear`` and
# ``cross_entropy`` (every target form, higher-order gradients, compile). With a
# ``LinearCrossEntropyOptions`` and a loss the chunked path supports (class-index int64
# targets, ``out_features == ()``, no label smoothing), torch's chunked algorithm runs
# instead: the batch is cut into ``batch_chunk_size`` rows; per chunk the logits
# ``x W^T + b`` are shifted by their row maximum, the loss gathers the target logit and
# the log of the softmax denominator, each weighted by ``-w[t] / d`` (``d`` the summed
# weight of the kept rows for "mean", 1 for "sum"; ignored rows get 0), and, for the
# scalar reductions, the gradients are formed right there from ``p = softmax * weight``:
#     db = -sum_n p + index_add(t, w),  dx = w W[t] - p W,  dW = -p^T x + index_add(t, w x).
# Backward scales these by the incoming gradient (consumed unless ``allow_retain_graph``:
# a second backward raises, as torch's). With ``reduction="none"`` the forward only
# computes the per-row losses and backward recomputes the chunks with the incoming
# gradient folded into the row weights. Float16/bfloat16 inputs are computed in
# ``acc_dtype`` (float32 by default). As torch's, the gradients it returns are not
# differentiable again. Indices are checked as torch's chunked kernels check them
# (``RuntimeError``/``IndexError`` rather than cross_entropy's messages).
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._autograd.grad_mode import is_grad_enabled
from .._tensor import _make
from ..autograd.function import Function
from ..ops.layer import _CPP, _concrete, linear
from ..ops.loss import cross_entropy

__all__ = ["linear_cross_entropy"]

_REDUCTIONS = ("mean", "sum", "none")
_TWICE = ("linear_cross_entropy chunked backward called twice; retain_graph=True / double "
          "backward are not supported.")


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """``cross_entropy(linear(input, linear_weight, linear_bias), target)``: ``input``
    ``(in_features,)`` or ``(N, in_features)``, ``linear_weight`` ``(C, in_features)`` or
    ``(C, d_1, ..., d_K, in_features)`` for a K-dimensional loss (batched input only),
    ``target`` class indices or, shaped as the logits, class probabilities.
    ``ignore_index`` defaults to -100 for class indices and must stay ``None`` for
    probabilities. ``options`` (a ``wgrad.nn.LinearCrossEntropyOptions``) computes the loss
    over chunks of the batch (NOTE [Chunked linear cross entropy]) with the same values.

    Examples
    --------
    >>> x, w = wgrad.ones(2, 3), wgrad.zeros(4, 3)
    >>> wgrad.nn.functional.linear_cross_entropy(x, w, wgrad.tensor([0, 3]))
    tensor(1.3863)
    """
    if input.dim() < 1 or input.dim() > 2:
        raise RuntimeError(f"expected input with dimensionality 1 or 2, got {input.dim()}")
    if linear_weight.dim() < 2:
        raise RuntimeError(f"expected linear_weight with dimensionality at least 2, got "
                           f"{linear_weight.dim()}")
    batch = tuple(input.shape[:-1])
    in_features = input.shape[-1]
    if in_features != linear_weight.shape[-1]:
        raise RuntimeError(f"expected equal input and linear_weight last dimensions "
                           f"(in_features), got {input.shape[-1]} and "
                           f"{linear_weight.shape[-1]}, respectively")
    num_classes = linear_weight.shape[0]
    out_features = tuple(linear_weight.shape[1:-1])
    if linear_bias is not None and tuple(linear_bias.shape) != (num_classes, *out_features):
        raise RuntimeError(f"expected linear_bias shape {(num_classes, *out_features)}, got "
                           f"{tuple(linear_bias.shape)}")
    if out_features and not batch:
        raise RuntimeError(f"K-dimensional loss defined by linear_weight shape "
                           f"{tuple(linear_weight.shape)} requires batched input, "
                           f"(N, {in_features}), got unbatched input with shape "
                           f"{tuple(input.shape)}")
    logits_shape = (*batch, num_classes, *out_features)
    if tuple(target.shape) == logits_shape and ignore_index is not None:
        raise RuntimeError("ignore_index cannot be specified when target contains "
                           "probabilities")
    ignore_index = -100 if ignore_index is None else ignore_index

    if options is not None:
        chunked = (reduction in _REDUCTIONS and label_smoothing == 0.0
                   and target.dtype is D.int64 and not out_features)
        if not chunked:
            bias_shape = None if linear_bias is None else tuple(linear_bias.shape)
            warnings.warn(
                f"linear_cross_entropy: ``options`` ignored; chunked path needs reduction "
                f"in {{'mean','sum','none'}}, label_smoothing == 0, target.dtype == int64, "
                f"out_features == (). Got reduction={reduction!r}, label_smoothing="
                f"{label_smoothing}, target.dtype={target.dtype}, out_features="
                f"{out_features}, tracing=False, linear_bias.shape={bias_shape}.",
                stacklevel=2)
        else:
            return _chunked(input, linear_weight, target, linear_bias, weight, reduction,
                            ignore_index, options)

    return _reference(input, linear_weight, target, linear_bias, weight, reduction,
                      ignore_index, label_smoothing)


def _reference(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
               label_smoothing):
    """The composition itself: ``linear`` with the weight's class dims flattened, then
    ``cross_entropy`` on the logits reshaped to ``(*batch, C, d_1, ..., d_K)``."""
    num_classes, in_features = linear_weight.shape[0], linear_weight.shape[-1]
    out_features = tuple(linear_weight.shape[1:-1])
    logits_shape = (*input.shape[:-1], num_classes, *out_features)
    if out_features:
        rows = math.prod(out_features, start=num_classes)
        linear_weight = linear_weight.reshape((rows, in_features))
        if linear_bias is not None:
            linear_bias = linear_bias.reshape(rows)
    logits = linear(input, linear_weight, linear_bias).reshape(logits_shape)
    return cross_entropy(logits, target, weight=weight, reduction=reduction,
                         ignore_index=ignore_index, label_smoothing=label_smoothing)


# ======================================================================================
# The chunked path (NOTE [Chunked linear cross entropy])
# ======================================================================================

def _chunked(input, linear_weight, target, linear_bias, weight, reduction, ignore_index,
             options):
    unbatched = input.dim() == 1
    if unbatched:
        input, target = input.unsqueeze(0), target.unsqueeze(0)
    n, f = input.shape
    c = linear_weight.shape[0]
    opts = options._adjust(num_batches=n, in_features=f, num_classes=c, dtype=input.dtype,
                           device=input.device)
    dtype, acc = input.dtype, opts.acc_dtype
    if dtype is not acc and not (dtype in (D.float16, D.bfloat16) and acc is D.float32):
        raise RuntimeError(f"linear_cross_entropy supports float32 acc_dtype with "
                           f"float16/bfloat16 inputs, but got {acc} acc_dtype and {dtype} "
                           f"inputs.")
    if linear_weight.dtype is not dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_CPP[dtype.name]} != {_CPP[linear_weight.dtype.name]}")
    if tuple(target.shape) != (n,):  # cross_entropy's shape errors
        return _reference(input.squeeze(0) if unbatched else input, linear_weight,
                          target.squeeze(0) if unbatched else target, linear_bias, weight,
                          reduction, ignore_index, 0.0)
    _check_indices(target, weight, ignore_index, c)
    grad = is_grad_enabled()
    needs = tuple(grad and t is not None and t.requires_grad
                  for t in (input, linear_weight, linear_bias))
    if reduction == "none":
        out = _ChunkedNone.apply(input, linear_weight, target, linear_bias, weight,
                                 ignore_index, opts.batch_chunk_size, acc)
    else:
        out = _ChunkedScalar.apply(input, linear_weight, target, linear_bias, weight,
                                   reduction, ignore_index, opts.batch_chunk_size, acc,
                                   opts.allow_retain_graph, needs)
    if out.dtype is not input.dtype:  # bfloat16: see _out_dtype
        out = out.to(input.dtype)
    return out.squeeze(0) if unbatched and reduction == "none" else out


def _out_dtype(dtype, acc):
    """The loss's dtype as the chunked Functions return it: the input's, but ``acc``
    (float32) for bfloat16, whose numpy kind autograd.Function does not take for a
    differentiable output (the cast to bfloat16 follows the Function)."""
    return dtype.np if dtype.np.kind in "fc" else acc.np


def _check_indices(target, weight, ignore_index, c):
    """The index errors of torch's chunked kernels (gather, index_select)."""
    if not _concrete(target) or target.numel() == 0:
        return
    t = np.asarray(target._data)
    kept = t[t != ignore_index]
    if weight is not None and ((kept < 0) | (kept >= weight.numel())).any():
        raise IndexError("index out of range in self")  # the class weights, read first
    bad = kept[(kept < 0) | (kept >= c)]
    if bad.size:
        raise RuntimeError(f"index {int(bad[0])} is out of bounds for dimension 1 with size "
                           f"{c}")


def _row_weights(target, weight, ignore_index, reduction, acc, scale=None):
    """Per row: the target class's weight (0 where ignored), signed and normalised as the
    chunk loop uses it; and the targets with the ignored rows pointed at class 0."""
    t = target._data
    keep = t != ignore_index
    t = jnp.where(keep, t, 0)
    w = jnp.ones(t.shape, acc) if weight is None else weight._data.astype(acc)[t]
    w = jnp.where(keep, w, 0)
    if reduction == "mean":
        d = w.sum()
        w = w / jnp.where(d == 0, jnp.nan, -d)
    elif reduction == "sum":
        w = -w
    elif scale is not None:  # "none", backward: the incoming gradient folded in
        w = -w * scale.astype(acc)
    return t, w


@jax.jit
def _chunk_loss(x, lw, lb, t):
    """Per row of the chunk: the shifted target logit and the log of the softmax
    denominator."""
    z = x @ lw.T + lb
    z = z - z.max(axis=1, keepdims=True)
    zt = jnp.take_along_axis(z, t[:, None], axis=1)[:, 0]
    return zt, jnp.log(jnp.exp(z).sum(axis=1))


@jax.jit
def _chunk_grads(x, lw, lb, t, w):
    """The chunk's loss and its gradients with respect to x, lw and lb."""
    z = x @ lw.T + lb
    z = z - z.max(axis=1, keepdims=True)
    zt = jnp.take_along_axis(z, t[:, None], axis=1)[:, 0]
    e = jnp.exp(z)
    s = e.sum(axis=1)
    loss = w @ zt - w @ jnp.log(s)
    p = e * (w / s)[:, None]
    gb = jnp.zeros(lw.shape[0], x.dtype).at[t].add(w) - p.sum(axis=0)
    gx = lw[t] * w[:, None] - p @ lw
    gw = jnp.zeros(lw.shape, x.dtype).at[t].add(x * w[:, None]) - p.T @ x
    return loss, gx, gw, gb


def _operands(input, linear_weight, linear_bias, acc):
    x = input._data.astype(acc)
    lw = linear_weight._data.astype(acc)
    lb = (jnp.zeros(lw.shape[0], acc) if linear_bias is None
          else linear_bias._data.astype(acc))
    return x, lw, lb


def _grads(input, linear_weight, linear_bias, t, w, chunk, acc):
    """Loss and gradients summed over the chunks (gradient of x chunk by chunk)."""
    x, lw, lb = _operands(input, linear_weight, linear_bias, acc)
    loss, gxs, gw, gb = jnp.zeros((), acc), [], 0, 0
    for i in range(0, x.shape[0], chunk):
        lo, gx, gwc, gbc = _chunk_grads(x[i:i + chunk], lw, lb, t[i:i + chunk],
                                        w[i:i + chunk])
        loss, gw, gb = loss + lo, gw + gwc, gb + gbc
        gxs.append(gx)
    gx = jnp.concatenate(gxs) if gxs else jnp.zeros(x.shape, acc)
    if not gxs:
        gw, gb = jnp.zeros(lw.shape, acc), jnp.zeros(lb.shape, acc)
    return loss, gx, gw, gb


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default(Function):
    """Mean/sum reductions: loss and gradients in the forward pass; backward scales them
    (torch's custom op, its node name included)."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, reduction,
                ignore_index, chunk, acc, allow_retain_graph, needs):
        t, w = _row_weights(target, weight, ignore_index, reduction, acc.np)
        dtype = input.dtype.np
        if any(needs):
            loss, gx, gw, gb = _grads(input, linear_weight, linear_bias, t, w, chunk, acc.np)
            grads = (gx, gw, gb)
            ctx.grads = [g.astype(dtype) if need else None for g, need in zip(grads, needs)]
        else:
            x, lw, lb = _operands(input, linear_weight, linear_bias, acc.np)
            loss = jnp.zeros((), acc.np)
            for i in range(0, x.shape[0], chunk):
                zt, lse = _chunk_loss(x[i:i + chunk], lw, lb, t[i:i + chunk])
                loss = loss + w[i:i + chunk] @ zt - w[i:i + chunk] @ lse
        if reduction == "mean" and input.shape[0] == 0:
            loss = jnp.asarray(jnp.nan, acc.np)
        ctx.allow_retain_graph = allow_retain_graph
        return _make(loss.astype(_out_dtype(input.dtype, acc)))

    @staticmethod
    def backward(ctx, grad_output):
        grads = ctx.grads
        if not ctx.allow_retain_graph:
            if grads is None:
                raise RuntimeError(_TWICE)
            ctx.grads = None
        g = grad_output._data
        out = [None if a is None else _make(a * g.astype(a.dtype)) for a in grads]
        return out[0], out[1], None, out[2], None, None, None, None, None, None, None


_ChunkedScalar = GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_default


class GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default(
        Function):
    """``reduction="none"``: per-row losses; backward recomputes the chunks with the
    incoming gradient folded into the row weights."""

    @staticmethod
    def forward(ctx, input, linear_weight, target, linear_bias, weight, ignore_index, chunk,
                acc):
        t, w = _row_weights(target, weight, ignore_index, "none", acc.np)
        x, lw, lb = _operands(input, linear_weight, linear_bias, acc.np)
        rows = []
        for i in range(0, x.shape[0], chunk):
            zt, lse = _chunk_loss(x[i:i + chunk], lw, lb, t[i:i + chunk])
            rows.append((lse - zt) * w[i:i + chunk])
        loss = jnp.concatenate(rows) if rows else jnp.zeros((0,), acc.np)
        ctx.save_for_backward(input, linear_weight, target, linear_bias, weight)
        ctx.ignore_index, ctx.chunk, ctx.acc = ignore_index, chunk, acc
        return _make(loss.astype(_out_dtype(input.dtype, acc)))

    @staticmethod
    def backward(ctx, grad_output):
        input, linear_weight, target, linear_bias, weight = ctx.saved_tensors
        t, w = _row_weights(target, weight, ctx.ignore_index, "none", ctx.acc.np,
                            scale=grad_output._data)
        _, gx, gw, gb = _grads(input, linear_weight, linear_bias, t, w, ctx.chunk,
                               ctx.acc.np)
        need = ctx.needs_input_grad
        dtype = input.dtype.np
        out = [_make(g.astype(dtype)) if need[i] else None
               for i, g in zip((0, 1, 3), (gx, gw, gb))]
        return out[0], out[1], None, out[2], None, None, None, None


_ChunkedNone = (
    GeneratedBackwardFor_torch_nn__linear_cross_entropy_batch_chunked_no_reduction_default)
