"""Losses of ``wgrad.nn.functional``: mse, l1, smooth_l1, huber, nll, cross_entropy,
binary_cross_entropy (with logits), kl_div, Poisson and Gaussian NLL, the margin and
embedding losses, with torch's signatures, reductions, shape checks and messages.

All are composites except binary_cross_entropy, a primitive so that its gradient is
torch's ``(x - t) / max(x (1 - x), 1e-12)`` at ``x`` in {0, 1} too (a composite of the
clamped logs would give 0 / 0 there). None is a torch top-level function with this
signature, so ``__all__`` is empty and ``FUNCTIONAL`` lists what ``wgrad.nn.functional``
takes from here. Index checks (a target out of range) read values on the host, and are
skipped while tracing (``wgrad.compile``), where the value is not known.
"""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make
from ._primitive import Primitive
from .activation import log_softmax
from .elementwise import _real_only, abs, clamp, log, minimum, softplus, where
from .layer import _concrete, pairwise_distance
from .shape import broadcast_tensors
from .reduction import mean, sum, true_mean

__all__ = []
METHODS = ()
FUNCTIONAL = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "nll_loss",
              "cross_entropy", "binary_cross_entropy", "binary_cross_entropy_with_logits",
              "kl_div", "poisson_nll_loss", "gaussian_nll_loss", "margin_ranking_loss",
              "hinge_embedding_loss", "soft_margin_loss", "multilabel_soft_margin_loss",
              "cosine_embedding_loss", "triplet_margin_loss")

_REDUCTIONS = ("none", "mean", "sum")


# ======================================================================================
# Reductions and checks shared by the losses
# ======================================================================================

def _legacy_reduction(size_average, reduce, reduction):
    """torch's mapping of the deprecated ``size_average``/``reduce`` flags."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    out = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{out}' instead.", stacklevel=3)
    return out


def _check_reduction(reduction):
    if reduction not in _REDUCTIONS and reduction != "batchmean":
        raise ValueError(f"{reduction} is not a valid value for reduction")


def _reduce(loss, reduction, weight=None):
    """``loss`` reduced; with ``weight`` (already multiplied in), 'mean' divides by the
    weights' sum, as torch's weighted pointwise losses."""
    if reduction == "none":
        return loss
    if reduction == "sum":
        return sum(loss)
    if weight is None:
        return mean(loss)
    return sum(loss) / sum(weight.broadcast_to(loss.shape))


def _size(t):
    return f"torch.Size({list(t.shape)})"


def _warn_target_size(input, target):
    if tuple(target.shape) != tuple(input.shape):
        warnings.warn(f"Using a target size ({_size(target)}) that is different to the input "
                      f"size ({_size(input)}). This will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.", stacklevel=3)


def _weighted(loss, input, weight):
    if weight is None:
        return loss
    if tuple(weight.shape) != tuple(input.shape):
        raise ValueError("Weights and input must have the same size.")
    return loss * weight


# ======================================================================================
# Pointwise regression losses
# ======================================================================================

def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``(input - target)^2``, reduced; optional elementwise ``weight`` (the weighted mean
    divides by the weights' sum). Real inputs only, as torch.

    Examples
    --------
    >>> F = wgrad.nn.functional
    >>> F.mse_loss(wgrad.tensor([1., 2.]), wgrad.tensor([1., 4.]))
    tensor(2.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_target_size(input, target)
    _real_only("mse_cpu", input, target)
    if weight is None:  # torch's MseLossBackward0 over the broadcast inputs
        if tuple(input.shape) != tuple(target.shape):
            input, target = broadcast_tensors(input, target)
        return _mse(input, target, reduction=reduction)
    d = input - target
    return _reduce(_weighted(d * d, input, weight), reduction, weight)


# -- pointwise losses as one node each (MseLossBackward0, SmoothL1LossBackward0, ...) ------

def _reduced(loss, reduction):
    """A pointwise loss (arrays) reduced as ``reduction`` says."""
    return loss if reduction == "none" else jnp.sum(loss) if reduction == "sum" \
        else true_mean(loss)


def _chain(slope, grad, reduction):
    """The gradient of a reduced pointwise loss: its elementwise ``slope`` times ``grad``
    (divided by the count for 'mean'), as tensor ops."""
    return slope * grad / slope.numel() if reduction == "mean" else slope * grad


def _mse_fwd(self, target, *, reduction):
    d = self - target
    return _reduced(d * d, reduction)


def _mse_backward(grad, self, target, reduction):
    norm = 2.0 / self.numel() if reduction == "mean" else 2.0
    return norm * (self - target) * grad


_mse = Primitive("mse_loss", _mse_fwd,
                 self=lambda grad, self, target, reduction: _mse_backward(
                     grad, self, target, reduction),
                 target=lambda grad, self, target, reduction: _mse_backward(
                     grad, target, self, reduction))


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """``|input - target|``, reduced (complex inputs give a real loss, as torch).

    Examples
    --------
    >>> wgrad.nn.functional.l1_loss(wgrad.tensor([1., 2.]), wgrad.tensor([1., 4.]))
    tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_target_size(input, target)
    return _reduce(_weighted(abs(input - target), input, weight), reduction, weight)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    """``0.5 d^2 / beta`` where ``|d| < beta``, else ``|d| - 0.5 beta`` (``d = input -
    target``); ``beta = 0`` is the L1 loss.

    Examples
    --------
    >>> wgrad.nn.functional.smooth_l1_loss(wgrad.tensor([0., 0.]), wgrad.tensor([0.5, 3.]))
    tensor(1.3125)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _warn_target_size(input, target)
    if beta < 0:
        raise RuntimeError("smooth_l1_loss does not support negative values for beta.")
    _real_only("smooth_l1_cpu", input, target)
    if beta == 0:
        return _reduce(abs(input - target), reduction)
    if tuple(input.shape) != tuple(target.shape):
        input, target = broadcast_tensors(input, target)
    return _smooth_l1(input, target, reduction=reduction, cut=float(beta))


def _smooth_l1_slope(d, beta):
    # +-1 from |d| = beta on: the slope's own derivative is 1 / beta strictly inside only
    return where(d <= -beta, -1., where(d >= beta, 1., d / beta))


def _huber_slope(d, delta):
    return where(d <= -delta, -delta, where(d >= delta, delta, d))


def _smooth_l1_fwd(self, target, *, reduction, cut):
    d = self - target
    ad = jnp.abs(d)
    return _reduced(jnp.where(ad < cut, 0.5 * d * d / cut, ad - 0.5 * cut), reduction)


def _huber_fwd(self, target, *, reduction, cut):
    d = self - target
    ad = jnp.abs(d)
    return _reduced(jnp.where(ad < cut, 0.5 * d * d, cut * (ad - 0.5 * cut)), reduction)


def _pointwise_loss(name, fwd, slope):
    """A loss of ``d = input - target`` with a cut-off ``cut`` (smooth_l1's beta, huber's
    delta): one node, the gradient ``slope(d, cut)`` for input and its negative for target."""
    return Primitive(
        name, fwd,
        self=lambda grad, self, target, reduction, cut: _chain(
            slope(self - target, cut), grad, reduction),
        target=lambda grad, self, target, reduction, cut: _chain(
            -slope(self - target, cut), grad, reduction))


_smooth_l1 = _pointwise_loss("smooth_l1_loss", _smooth_l1_fwd, _smooth_l1_slope)
_huber = _pointwise_loss("huber_loss", _huber_fwd, _huber_slope)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """``0.5 d^2`` where ``|d| < delta``, else ``delta (|d| - 0.5 delta)``; with ``weight``,
    'mean' is the mean of the weighted losses (as torch; mse_loss and l1_loss divide by
    the weights' sum).

    Examples
    --------
    >>> wgrad.nn.functional.huber_loss(wgrad.tensor([0., 0.]), wgrad.tensor([0.5, 3.]))
    tensor(1.3125)
    """
    _check_reduction(reduction)
    _warn_target_size(input, target)
    if delta <= 0:
        raise RuntimeError("huber_loss does not support non-positive values for delta.")
    _real_only("huber_cpu", input, target)
    if weight is None:
        if tuple(input.shape) != tuple(target.shape):
            input, target = broadcast_tensors(input, target)
        return _huber(input, target, reduction=reduction, cut=float(delta))
    d = input - target
    ad = abs(d)
    loss = where(ad < delta, 0.5 * d * d, delta * (ad - 0.5 * delta))
    # unlike mse_loss and l1_loss, torch's weighted huber 'mean' divides by the count
    return _reduce(_weighted(loss, input, weight), reduction)


# ======================================================================================
# Classification: nll_loss, cross_entropy
# ======================================================================================

def _check_class_weight(weight, c, input=None):
    if weight is not None and input is not None and weight.dtype is not input.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{weight.dtype.scalar_name}")
    if weight is not None and weight.numel() != c:
        raise RuntimeError(f"weight tensor should be defined either for all {c} classes or no "
                           f"classes but got weight tensor of shape: {list(weight.shape)}")


def _check_index_target(input, target):
    """torch's shape and dtype checks of a class-index target; ``input`` is (N, C, ...)
    or (C,)."""
    if input.ndim == 1:
        if target.ndim > 1 or (target.ndim == 1 and target.shape[0] != 1):
            raise ValueError(f"For 1D input, 1D target must have size 1, but got target size: "
                             f"{target.shape[0] if target.ndim == 1 else target.numel()}")
    else:
        n = input.shape[0]
        tn = target.shape[0] if target.ndim else 1
        if tn != n:
            raise ValueError(f"Expected input batch_size ({n}) to match target batch_size "
                             f"({tn}).")
        if input.ndim == 2 and target.ndim != 1:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        want = [n] + list(input.shape[2:])
        if input.ndim > 2 and list(target.shape) != want:
            raise RuntimeError(f"Expected target size {want}, got {list(target.shape)}")
    if target.dtype not in (D.int64, D.uint8):
        raise RuntimeError(f"expected target dtype to be Long or Byte, but got "
                           f"{target.dtype.scalar_name}")


def _nll_fwd(self, target, weight, *, ignore_index, reduction):
    valid = target != ignore_index
    t = jnp.where(valid, target, 0)
    picked = jnp.take_along_axis(self, t[:, None], axis=1)[:, 0]
    w = valid if weight is None else jnp.where(valid, weight[t], 0)
    w = w.astype(self.dtype)
    loss = -picked * w
    if reduction == "none":
        return loss
    if reduction == "sum":
        return loss.sum()
    return loss.sum() / w.sum()


def _target_weights(target, weight, ignore_index, dtype):
    """Each target's class weight (1 without ``weight``), 0 where ignored."""
    valid = target != ignore_index
    if weight is None:
        return valid.to(dtype)
    return where(valid, weight[where(valid, target, 0)], 0.0).to(dtype)


def _nll_backward(grad, target, weight, self_shape, self_dtype, ignore_index, reduction):
    # d loss / d self[n, c] = -w[n] where c == target[n], the incoming gradient spread over
    # the targets (divided by the weights' sum for 'mean')
    w = _target_weights(target, weight, ignore_index, self_dtype)
    if reduction == "mean":
        grad = grad / sum(w)
    coeff = -(grad * w).unsqueeze(1)
    classes = _make(jnp.arange(self_shape[1]).reshape((1, -1) + (1,) * (len(self_shape) - 2)))
    hit = (where(target != ignore_index, target, 0).unsqueeze(1) == classes)
    return where(hit, coeff, 0.0)


_nll_loss = Primitive("nll_loss", _nll_fwd, node_name="NllLossBackward0", self=_nll_backward)


def _nll(logp, target, weight, ignore_index, reduction):
    """The negative log-likelihood of the class-index ``target`` under ``logp`` (N, C,
    ...): one primitive (torch's NllLossBackward0), after one host read of the targets
    for the bounds check."""
    c = logp.shape[1]
    if _concrete(target) and target.numel():
        a = np.asarray(target._data)
        bad = a[((a < 0) | (a >= c)) & (a != ignore_index)]
        if bad.size:
            raise IndexError(f"Target {int(bad[0])} is out of bounds.")
    if weight is not None:
        weight = weight.to(logp.dtype)
    return _nll_loss(logp, target, weight, ignore_index=int(ignore_index),
                     reduction=reduction)


def _batch_form(input, target):
    """(C,) input with a 0-d (or 1-element) target as a batch of one."""
    if input.ndim == 1:
        return input.unsqueeze(0), target.reshape((1,)), True
    return input, target, False


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """``-input[n, target[n]] * weight[target[n]]`` for log-probabilities ``input`` (N, C,
    ...) or (C,); targets equal to ``ignore_index`` count for nothing, and 'mean' divides
    by the weights of the counted targets.

    Examples
    --------
    >>> logp = wgrad.tensor([[-1., -2.], [-3., -4.]])
    >>> wgrad.nn.functional.nll_loss(logp, wgrad.tensor([0, 1]))
    tensor(2.5000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_index_target(input, target)
    _check_class_weight(weight, input.shape[0 if input.ndim == 1 else 1], input)
    x, t, one = _batch_form(input, target)
    loss = _nll(x, t, weight, ignore_index, reduction)
    return loss.reshape(target.shape) if one and reduction == "none" else loss


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """``nll_loss(log_softmax(input, class_dim), target)`` for class indices, or
    ``-sum_c weight_c target_c log_softmax(input)_c`` for class probabilities (``target``
    of ``input``'s shape); ``label_smoothing`` mixes the target with the uniform
    distribution.

    Examples
    --------
    >>> x = wgrad.tensor([[0., 0.], [0., 0.]])
    >>> wgrad.nn.functional.cross_entropy(x, wgrad.tensor([0, 1]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if label_smoothing > 1.0:  # a negative one smooths nothing, as torch's
        raise RuntimeError(f"label_smoothing must be between 0.0 and 1.0. Got: "
                           f"{label_smoothing:g}")
    cdim = 0 if input.ndim == 1 else 1
    c = input.shape[cdim]
    _check_class_weight(weight, c, input)
    if tuple(input.shape) == tuple(target.shape):
        return _cross_entropy_probs(input, target, weight, reduction, label_smoothing, cdim)
    _check_index_target(input, target)
    x, t, one = _batch_form(input, target)
    logp = log_softmax(x, 1)
    loss = _nll(logp, t, weight, ignore_index, reduction)
    if label_smoothing > 0:
        w = _target_weights(t, weight, ignore_index, logp.dtype)
        wl = logp if weight is None else logp * weight.reshape((1, -1) + (1,) * (x.ndim - 2))
        smooth = -sum(wl, 1) * (t != ignore_index).to(logp.dtype)
        if reduction == "sum":
            smooth = sum(smooth)
        elif reduction == "mean":
            smooth = sum(smooth) / sum(w)
        loss = (1 - label_smoothing) * loss + (label_smoothing / c) * smooth
    return loss.reshape(target.shape) if one and reduction == "none" else loss


def _cross_entropy_probs(input, target, weight, reduction, label_smoothing, cdim):
    if not target.dtype.is_floating_point:
        raise RuntimeError(f"Expected floating point type for target with class "
                           f"probabilities, got {target.dtype.scalar_name}")
    c = input.shape[cdim]
    logp = log_softmax(input, cdim)
    if label_smoothing > 0:
        target = target * (1 - label_smoothing) + label_smoothing / c
    prod = logp * target
    if weight is not None:
        prod = prod * weight.reshape((-1,) + (1,) * (input.ndim - cdim - 1))
    loss = -sum(prod, cdim)
    if reduction == "none":
        return loss
    if reduction == "sum":
        return sum(loss)
    return sum(loss) / (input.numel() // c if c else 0)


# ======================================================================================
# Binary cross-entropy
# ======================================================================================

def _bce_fwd(self, target, weight, *, reduction):
    # torch clamps each log at -100, so that x = 0 or 1 gives a finite loss
    loss = -(target * jnp.maximum(jnp.log(self), -100.0)
             + (1 - target) * jnp.maximum(jnp.log(1 - self), -100.0))
    return _reduced(loss if weight is None else loss * weight, reduction)


def _weighted_slope(slope, weight):
    return slope if weight is None else slope * weight


_bce = Primitive(
    "binary_cross_entropy", _bce_fwd, node_name="BinaryCrossEntropyBackward0",
    # torch's binary_cross_entropy_backward: the denominator kept from 0
    self=lambda grad, self, target, weight, reduction: _chain(_weighted_slope(
        (self - target) / clamp(self * (1 - self), min=1e-12), weight), grad, reduction),
    target=lambda grad, self, weight, reduction: _chain(_weighted_slope(
        clamp(log(1 - self), min=-100.0) - clamp(log(self), min=-100.0), weight), grad,
        reduction))


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """``-w (t log x + (1 - t) log(1 - x))`` for probabilities ``x`` in [0, 1], each log
    clamped at -100 as torch.

    Examples
    --------
    >>> x = wgrad.tensor([0.5, 0.5])
    >>> wgrad.nn.functional.binary_cross_entropy(x, wgrad.tensor([0., 1.]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Using a target size ({_size(target)}) that is different to the "
                         f"input size ({_size(input)}) is deprecated. Please ensure they have "
                         f"the same size.")
    _real_only("binary_cross_entropy", input, target)
    if _concrete(input) and input.numel() and (float(input.min()) < 0
                                               or float(input.max()) > 1):
        raise RuntimeError("all elements of input should be between 0 and 1")
    if target.dtype is not input.dtype:
        raise RuntimeError(f"Found dtype {target.dtype.scalar_name} but expected "
                           f"{input.dtype.scalar_name}")
    if weight is not None and tuple(weight.shape) != tuple(input.shape):
        weight = weight.expand(tuple(input.shape))
    return _bce(input, target, weight, reduction=reduction)


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """``binary_cross_entropy(sigmoid(x), t)`` in the stable form ``(1 - t) x + l *
    softplus(-x)`` with ``l = 1 + (pos_weight - 1) t`` (``pos_weight`` broadcast over the
    last dimension, the classes).

    Examples
    --------
    >>> F = wgrad.nn.functional
    >>> F.binary_cross_entropy_with_logits(wgrad.tensor([0., 0.]), wgrad.tensor([0., 1.]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if tuple(target.shape) != tuple(input.shape):
        raise ValueError(f"Target size ({_size(target)}) must be the same as input size "
                         f"({_size(input)})")
    if target.dtype is D.bool:  # torch's 1 - target
        raise RuntimeError("Subtraction, the `-` operator, with two bool tensors is not "
                           "supported. Use the `^` or `logical_xor()` operator instead.")
    _real_only("log_sigmoid_cpu", input, target)
    return _bce_logits(input, target, weight, pos_weight, reduction=reduction)


def _bce_logits_fwd(self, target, weight, pos_weight, *, reduction):
    sp = jax.nn.softplus(-self)  # logaddexp(-x, 0): exact and stable everywhere
    if pos_weight is not None:
        loss = (1 - target) * self + (1 + (pos_weight - 1) * target) * sp
    else:
        loss = (1 - target) * self + sp
    return _reduced(loss if weight is None else loss * weight, reduction)


def _bce_logits_self(grad, self, target, weight, pos_weight, reduction):
    s = self.sigmoid()
    if pos_weight is not None:
        t = pos_weight * target
        slope = (t + 1 - target) * s - t
    else:
        slope = s - target
    return _chain(_weighted_slope(slope, weight), grad, reduction)


def _bce_logits_target(grad, self, weight, pos_weight, reduction):
    slope = -self
    if pos_weight is not None:
        slope = slope + (pos_weight - 1) * softplus(-self, 1.0, float("inf"))
    return _chain(_weighted_slope(slope, weight), grad, reduction)


# torch's BinaryCrossEntropyWithLogitsBackward0: edges (input, target); weight and
# pos_weight have no formula in torch either
_bce_logits = Primitive("binary_cross_entropy_with_logits", _bce_logits_fwd,
                        self=_bce_logits_self, target=_bce_logits_target)


# ======================================================================================
# kl_div
# ======================================================================================

def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    """The pointwise KL divergence ``t (log t - x)`` for log-probabilities ``x`` (``t`` given
    as log-probabilities when ``log_target``), 0 where ``t = 0``; 'batchmean' divides the
    sum by the batch size (the KL divergence proper), 'mean' by the element count (with
    torch's warning).

    Examples
    --------
    >>> x = wgrad.tensor([[0.25, 0.75]]).log()
    >>> wgrad.nn.functional.kl_div(x, wgrad.tensor([[0.5, 0.5]]), reduction="batchmean")
    tensor(0.1438)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if input.is_complex() or target.is_complex():
        raise RuntimeError("kl_div: Complex inputs not supported.")
    if reduction == "mean":
        warnings.warn("reduction: 'mean' divides the total loss by both the batch size and "
                      "the support size.'batchmean' divides only by the batch size, and "
                      "aligns with the KL div math definition.'mean' will be changed to "
                      "behave the same as 'batchmean' in the next major release.",
                      stacklevel=2)
    if log_target:
        loss = target.exp() * (target - input)
    else:
        # xlogy(t, t): 0 at t = 0, and log sees 1 there so the unused branch stays finite
        zero = target == 0
        loss = where(zero, 0.0, target * log(where(zero, 1.0, target))) - target * input
    if reduction == "batchmean":
        return sum(loss) / input.shape[0] if input.ndim else sum(loss)
    return _reduce(loss, reduction)


# ======================================================================================
# More losses: Poisson and Gaussian likelihoods, margins, embeddings
# ======================================================================================

_LOG_2PI = math.log(2 * math.pi)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """``exp(x) - t x`` (``log_input``) or ``x - t log(x + eps)``; ``full`` adds Stirling's
    ``t log t - t + log(2 pi t) / 2`` where ``t > 1``.

    Examples
    --------
    >>> wgrad.nn.functional.poisson_nll_loss(wgrad.tensor([0.]), wgrad.tensor([1.]))
    tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if log_input:
        loss = input.exp() - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        big = target > 1
        safe = where(big, target, 1.0)
        stirling = safe * log(safe) - safe + 0.5 * log(2 * math.pi * safe)
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """``(log(var) + (input - target)^2 / var) / 2`` (plus ``log(2 pi) / 2`` with ``full``),
    ``var`` clamped at ``eps`` in value only, as torch; ``var`` may lack the last dimension
    or have size 1 there (one variance per sample), or be a number.

    Examples
    --------
    >>> F = wgrad.nn.functional
    >>> F.gaussian_nll_loss(wgrad.tensor([1.]), wgrad.tensor([1.]), wgrad.tensor([1.]))
    tensor(0.)
    """
    _check_reduction(reduction)
    if not isinstance(var, Tensor):
        var = _make(jnp.full((), float(var), input._data.dtype))
    if tuple(var.shape) != tuple(input.shape):
        if tuple(input.shape[:-1]) == tuple(var.shape):
            var = var.unsqueeze(-1)
        elif not (tuple(input.shape[:-1]) == tuple(var.shape[:-1]) and var.shape[-1] == 1) \
                and var.ndim != 0:
            raise ValueError("var is of incorrect size")
    if _concrete(var) and var.numel() and float(var.min()) < 0:
        raise ValueError("var has negative entry/entries")
    var = var + (clamp(var, min=eps) - var).detach()
    d = input - target
    loss = 0.5 * (log(var) + d * d / var)
    if full:
        loss = loss + 0.5 * _LOG_2PI
    return _reduce(loss, reduction)


def margin_ranking_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                        reduction="mean"):
    """``max(0, -y (x1 - x2) + margin)``.

    Examples
    --------
    >>> F = wgrad.nn.functional
    >>> F.margin_ranking_loss(wgrad.tensor([1.]), wgrad.tensor([2.]), wgrad.tensor([1.]))
    tensor(1.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(clamp(-target * (input1 - input2) + margin, min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """``x`` where ``y = 1``, ``max(0, margin - x)`` where ``y = -1``.

    Examples
    --------
    >>> F = wgrad.nn.functional
    >>> F.hinge_embedding_loss(wgrad.tensor([0.3, 0.3]), wgrad.tensor([1., -1.]))
    tensor(0.5000)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    neg = where(target != 1, clamp(margin - input, min=0), 0.0)
    return _reduce(neg + where(target != -1, input, 0.0), reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """``log(1 + exp(-y x))``.

    Examples
    --------
    >>> wgrad.nn.functional.soft_margin_loss(wgrad.tensor([0.]), wgrad.tensor([1.]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    return _reduce(softplus(-target * input, 1.0, float("inf")), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """``-(y log sigmoid(x) + (1 - y) log sigmoid(-x))``, weighted per class and averaged
    over the classes (the last dimension) per sample.

    Examples
    --------
    >>> F = wgrad.nn.functional
    >>> F.multilabel_soft_margin_loss(wgrad.tensor([[0., 0.]]), wgrad.tensor([[1., 0.]]))
    tensor(0.6931)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    inf = float("inf")
    loss = target * softplus(-input, 1.0, inf) + (1 - target) * softplus(input, 1.0, inf)
    if weight is not None:
        loss = loss * weight
    loss = mean(loss, input.ndim - 1)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0, size_average=None, reduce=None,
                          reduction="mean"):
    """``1 - cos(x1, x2)`` where ``y = 1``, ``max(0, cos(x1, x2) - margin)`` where ``y =
    -1``; the cosine along the last dimension, its squared norms kept from 0 by 1e-12.

    Examples
    --------
    >>> x = wgrad.tensor([[1., 0.]])
    >>> wgrad.nn.functional.cosine_embedding_loss(x, x, wgrad.tensor([1.]))
    tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    d = input1.ndim - 1
    dot = sum(input1 * input2, d)
    m1, m2 = sum(input1 * input1, d) + 1e-12, sum(input2 * input2, d) + 1e-12
    cos = dot / (m1 * m2).sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, clamp(cos - margin, min=0),
                                                     0.0)
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with ``d`` the pairwise ``p``-distance;
    ``swap`` uses ``min(d(a, n), d(p, n))``.

    Examples
    --------
    >>> a, q = wgrad.tensor([[0., 0.]]), wgrad.tensor([[3., 4.]])
    >>> wgrad.nn.functional.triplet_margin_loss(a, a, q, eps=0.0)
    tensor(0.)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _check_triplet_dims(anchor, positive, negative)
    return _triplet(lambda u, v: pairwise_distance(u, v, p, eps), anchor, positive, negative,
                    margin, swap, reduction)


def _check_triplet_dims(anchor, positive, negative):
    dims = (anchor.dim(), positive.dim(), negative.dim())
    if len(set(dims)) != 1:
        raise RuntimeError(
            "The anchor, positive, and negative tensors are expected to have the same number "
            f"of dimensions, but got: anchor {dims[0]}D, positive {dims[1]}D, and negative "
            f"{dims[2]}D inputs")


def _triplet(distance, anchor, positive, negative, margin, swap, reduction):
    """``max(0, margin + d(a, p) - d(a, n))`` reduced, ``swap`` taking ``min(d(a, n),
    d(p, n))``: the triplet losses' shared body."""
    d_pos = distance(anchor, positive)
    d_neg = distance(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance(positive, negative))
    return _reduce(clamp(margin + d_pos - d_neg, min=0), reduction)
