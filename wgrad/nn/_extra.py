"""More of ``torch.nn.functional``: prelu (from ``wgrad/ops/activation.py``, where it is
also a Tensor method), rrelu, hardswish, hardsigmoid, softsign,
tanhshrink, threshold, glu, logsigmoid, gumbel_softmax, the channel dropouts
(dropout1d/2d/3d, alpha_dropout, feature_alpha_dropout), local_response_norm,
channel_shuffle and the margin losses (multi_margin_loss, multilabel_margin_loss,
triplet_margin_with_distance_loss).

All are composites of wgrad ops, so they need no formulas of their own. The piecewise ones
are written with ``where`` so that the gradient at a breakpoint is torch's: the branch that
torch's backward takes there (e.g. hardswish'(-3) = 0 and hardswish'(3) = 1, hardsigmoid'(3) = 0,
prelu'(0) = weight) is the one whose expression is selected.
"""
import warnings

import jax
import jax.numpy as jnp

from .. import _creation
from ..ops import _out
from ..ops._primitive import Primitive
from ..ops.activation import prelu
from ..ops.elementwise import (_coef, _floating_only, _real_only, relu, sigmoid, softplus,
                               tanh, where)
from ..ops.shape import cat
from ..ops.layer import pairwise_distance
from ..ops.loss import (_check_reduction, _check_triplet_dims, _concrete, _legacy_reduction,
                        _reduce, _triplet)
from ..ops.inplace import _apply
from . import functional as F  # (imported by functional, after what is used here)

__all__ = ["prelu", "rrelu", "rrelu_", "hardswish", "hardsigmoid", "softsign", "tanhshrink",
           "threshold", "threshold_", "glu", "logsigmoid", "gumbel_softmax", "dropout1d",
           "dropout2d",
           "dropout3d", "alpha_dropout", "feature_alpha_dropout", "local_response_norm",
           "channel_shuffle", "multi_margin_loss", "multilabel_margin_loss",
           "triplet_margin_with_distance_loss"]


def _inplace(fn, input, inplace):
    return _apply(input, fn) if inplace else fn(input)


# -- activations ------------------------------------------------------------------------
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    """Randomized leaky ReLU: while ``training`` each negative element is scaled by its own
    slope drawn from U(lower, upper); otherwise by the fixed slope ``(lower + upper) / 2``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.rrelu(wgrad.tensor([-1., 2.]), 0.2, 0.4)
    tensor([-0.3000,  2.0000])
    """
    return _rrelu(input, lower, upper, training, inplace, None)


def _rrelu(input, lower, upper, training, inplace, generator):
    """:func:`rrelu`, the slopes drawn from ``generator`` (torch.rrelu's argument)."""
    if lower > upper:
        raise RuntimeError("Lower bound should be less than or equal to the upper bound")
    _floating_only("leaky_relu_cpu", input)

    def f(x):
        if training:
            slope = _creation.rand(*x.shape, generator=generator, dtype=x.dtype)
            slope = slope * (upper - lower) + lower
        else:
            slope = (lower + upper) / 2
        return where(x > 0, x, x * slope)
    return _inplace(f, input, inplace)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """In-place :func:`rrelu`.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.rrelu_(wgrad.tensor([-1., 2.]), 0.2, 0.4)
    tensor([-0.3000,  2.0000])
    """
    return rrelu(input, lower, upper, training, inplace=True)


def hardswish(input, inplace=False):
    """``x * relu6(x + 3) / 6``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.hardswish(wgrad.tensor([-4., 0., 1., 4.]))
    tensor([-0.0000, 0.0000, 0.6667, 4.0000])
    """
    _real_only("hardswish_cpu", input)
    return _inplace(_hardswish, input, inplace)


def _hardswish_slope(x):
    """torch's hardswish_backward factor: 0 up to -3, x / 3 + 1/2 strictly inside (-3, 3),
    1 from 3 on."""
    return where(x <= -3, 0., where(x < 3, x / 3 + 0.5, 1.))


_hardswish = Primitive(
    "hardswish", lambda self: jnp.where(self <= -3, self * 0, jnp.where(
        self < 3, self * (self + 3) / 6, self)),
    self=lambda grad, self: grad * _hardswish_slope(self))
_hardsigmoid = Primitive(
    "hardsigmoid", lambda self: jnp.where((self > -3) & (self < 3), self / 6 + 0.5,
                                          (self >= 3).astype(self.dtype)),
    self=lambda grad, self: where((self > -3) & (self < 3), grad / 6, 0.))
_log_sigmoid = Primitive(
    "log_sigmoid", lambda self: -jax.nn.softplus(-self), node_name="LogSigmoidBackward0",
    self=lambda grad, self: grad * (-self).sigmoid())


def hardsigmoid(input, inplace=False):
    """``relu6(x + 3) / 6``; the gradient is 1/6 strictly inside (-3, 3), 0 elsewhere.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.hardsigmoid(wgrad.tensor([-4., 0., 4.]))
    tensor([0.0000, 0.5000, 1.0000])
    """
    _real_only("hardsigmoid_cpu", input)
    return _inplace(_hardsigmoid, input, inplace)


def softsign(input):
    """``x / (1 + |x|)`` (complex input as torch: divided by the real ``1 + |z|``).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.softsign(wgrad.tensor([-1., 3.]))
    tensor([-0.5000,  0.7500])
    """
    return input / (input.abs() + 1)


def tanhshrink(input):
    """``x - tanh(x)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.tanhshrink(wgrad.tensor([0.]))
    tensor([0.])
    """
    return input - tanh(input)


def threshold(input, threshold, value, inplace=False):
    """``x`` where ``x > threshold``, else ``value``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.threshold(wgrad.tensor([0.5, 2.]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    _real_only("threshold_cpu", input)
    th, value = _coef(threshold, input.dtype), _coef(value, input.dtype)
    # NaN is kept, as torch's ``x <= threshold ? value : x``
    return _inplace(lambda x: where(x <= th, value, x), input, inplace)


_threshold = threshold


def threshold_(input, threshold, value):
    """In-place :func:`threshold`.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.threshold_(wgrad.tensor([0.5, 2.]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return _threshold(input, threshold, value, inplace=True)


def glu(input, dim=-1):
    """Gated linear unit: ``a * sigmoid(b)`` for the halves ``a, b`` of ``input`` along
    ``dim``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.glu(wgrad.tensor([2., 0.]))
    tensor([1.])
    """
    if input.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    _real_only("glu_cpu", input)
    d = dim + input.ndim if dim < 0 else dim
    if input.shape[d] % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size "
                           f"{input.shape[d]}")
    return _glu(input, dim=d)


def _glu_backward(grad, self, dim):
    a, b = self.chunk(2, dim)
    s = sigmoid(b)
    return cat([grad * s, grad * a * s * (1 - s)], dim)


# torch's GluBackward0: one node
_glu = Primitive("glu", lambda self, *, dim: jax.nn.glu(self, axis=dim), self=_glu_backward)


def logsigmoid(input):
    """``log(sigmoid(x)) = -softplus(-x)``, computed stably.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.logsigmoid(wgrad.tensor([0.]))
    tensor([-0.6931])
    """
    _real_only("log_sigmoid_cpu", input)
    return _log_sigmoid(input)


# -- channel dropouts -------------------------------------------------------------------
_ALPHA = 1.7580993408473766  # -SELU's lambda * alpha: the value SELU saturates to


def gumbel_softmax(logits, tau=1, hard=False, eps=1e-10, dim=-1):
    """A sample of the Gumbel-softmax distribution over ``dim``: ``softmax((logits + g) /
    tau)`` with Gumbel(0, 1) noise ``g``; with ``hard`` the one-hot of its argmax, whose
    gradient is the soft sample's (straight-through). The noise comes from wgrad's
    generator (``wgrad.manual_seed``): torch's distribution, not its stream.

    Example
    -------
    >>> import wgrad
    >>> y = wgrad.nn.functional.gumbel_softmax(wgrad.zeros(2, 3), tau=0.5, hard=True)
    >>> y.sum(-1)
    tensor([1., 1.])
    """
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    gumbels = -_creation.empty_like(logits).exponential_().log()
    y_soft = ((logits + gumbels) / tau).softmax(dim)
    if not hard:
        return y_soft
    index = y_soft.max(dim, keepdim=True)[1]
    y_hard = _creation.zeros_like(logits).scatter_(dim, index, 1.0)
    return y_hard - y_soft.detach() + y_soft


def _check_p(p):
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input, p, feature):
    if feature:
        if input.ndim < 2:
            raise RuntimeError("Feature dropout requires at least 2 dimensions in the input")
        shape = tuple(input.shape[:2]) + (1,) * (input.ndim - 2)
    else:
        shape = tuple(input.shape)
    _real_only("bernoulli_scalar_cpu_", input)
    if not input.dtype.is_floating_point:  # torch scales an integer mask in place
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype.scalar_name}")
    return (_creation.rand(*shape) < 1 - p).to(input.dtype)


def _dropout(input, p, training, inplace, feature, alpha):
    """ATen's _dropout_impl: a Bernoulli(1 - p) mask (per channel for feature dropout),
    scaled to keep the mean (plain) or the mean and variance of SELU outputs (alpha)."""
    _check_p(p)
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        return _inplace(lambda x: x * 0, input, inplace)
    noise = _noise(input, p, feature)
    if alpha:
        a = 1.0 / ((_ALPHA * _ALPHA * p + 1) * (1 - p)) ** 0.5
        b = (noise - 1) * (_ALPHA * a) + _ALPHA * a * p
        return _inplace(lambda x: x * (noise * a) + b, input, inplace)
    scale = noise / (1 - p)
    return _inplace(lambda x: x * scale, input, inplace)


def dropout1d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, L)`` or ``(C, L)`` input with probability ``p``,
    scaling the rest by ``1 / (1 - p)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.dropout1d(wgrad.ones(2, 3), 0.5, training=False).sum().item()
    6.0
    """
    _check_p(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           f"input. Note that dropout1d exists to provide channel-wise dropout "
                           f"on inputs with 1 spatial dimension, a channel dimension, and an "
                           f"optional batch dimension (i.e. 2D or 3D inputs).")
    if input.ndim == 2:
        if inplace:
            return _apply(input, lambda x: _dropout(x.unsqueeze(0), p, training, False, True,
                                                    False).squeeze(0))
        return _dropout(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
    return _dropout(input, p, training, inplace, True, False)


def _warn_unexpected_ndim(input, spatial):
    """torch's deprecation warning for dropout2d/3d on input that is not (N, )C + spatial."""
    name, n = f"dropout{spatial}d", spatial + 1
    if input.ndim not in (n, n + 1):
        warnings.warn(f"{name}: Received a {input.ndim}-D input to {name}, which is "
                      f"deprecated and will result in an error in a future release. To retain "
                      f"the behavior and silence this warning, please use dropout instead. Note "
                      f"that {name} exists to provide channel-wise dropout on inputs with "
                      f"{spatial} spatial dimensions, a channel dimension, and an optional batch "
                      f"dimension (i.e. {n}D or {n + 1}D inputs).", stacklevel=3)


def dropout2d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, H, W)`` input with probability ``p``, scaling the rest
    by ``1 / (1 - p)``. A 3-D input is read as ``(N, C, L)``, with torch's warning.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.dropout2d(wgrad.ones(1, 2, 2, 2), 0.5, training=False).shape
    wgrad.Size([1, 2, 2, 2])
    """
    _check_p(p)
    _warn_unexpected_ndim(input, 2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", stacklevel=2)
    return _dropout(input, p, training, inplace, True, False)


def dropout3d(input, p=0.5, training=True, inplace=False):
    """Zero whole channels of ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input with probability
    ``p``, scaling the rest by ``1 / (1 - p)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.dropout3d(wgrad.ones(2, 1, 1, 1), 0.5, training=False).shape
    wgrad.Size([2, 1, 1, 1])
    """
    _check_p(p)
    _warn_unexpected_ndim(input, 3)
    if input.ndim == 4:
        if inplace:
            return _apply(input, lambda x: _dropout(x.unsqueeze(0), p, training, False, True,
                                                    False).squeeze(0))
        return _dropout(input.unsqueeze(0), p, training, False, True, False).squeeze(0)
    return _dropout(input, p, training, inplace, True, False)


def alpha_dropout(input, p=0.5, training=False, inplace=False):
    """Dropout for SELU networks: dropped elements are set to SELU's saturation value and
    the result is affinely rescaled to keep zero mean and unit variance.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(3)
    >>> wgrad.nn.functional.alpha_dropout(x, 0.5) is x
    True
    """
    return _dropout(input, p, training, inplace, False, True)


def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    """:func:`alpha_dropout` with one draw per channel (dims 0 and 1).

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(2, 3)
    >>> wgrad.nn.functional.feature_alpha_dropout(x, 0.5) is x
    True
    """
    return _dropout(input, p, training, inplace, True, True)


# -- normalisation, shuffling, margin losses ---------------------------------------------
def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """Each value divided by ``(k + alpha * mean of squares over size neighbouring
    channels) ** beta`` (channels on dim 1, zero-padded at the ends).

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(1, 3, 2)
    >>> wgrad.nn.functional.local_response_norm(x, 2, alpha=1.0, k=1.0)[0, :, 0]
    tensor([0.7378, 0.5946, 0.5946])
    """
    dim = input.dim()
    if dim < 3:
        raise ValueError("Expected 3D or higher dimensionality                          "
                         f"input (got {dim} dimensions)")
    _real_only("avg_pool2d", input)  # torch's pooling takes no complex input here
    if input.numel() == 0:
        return input
    div = input * input
    if dim == 3:
        div = F.pad(div.unsqueeze(1), (0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool2d(div, (size, 1), stride=1).squeeze(1)
    else:
        sizes = tuple(input.shape)
        div = div.reshape(sizes[0], 1, sizes[1], sizes[2], -1)
        div = F.pad(div, (0, 0, 0, 0, size // 2, (size - 1) // 2))
        div = F.avg_pool3d(div, (size, 1, 1), stride=1).squeeze(1).reshape(sizes)
    return input / (div * alpha + k) ** beta


def _check_channel_shuffle(input, groups):
    if input.dim() <= 2:
        raise RuntimeError(f"channel_shuffle expects input with > 2 dims, but got input with "
                           f"sizes {list(input.shape)}")
    if groups <= 0:
        raise RuntimeError(f"Number of groups to divide channels in must be positive. Value "
                           f"of groups:{groups}")
    c = input.shape[1]
    if c % groups:
        raise RuntimeError(f"Number of channels must be divisible by groups. Got {c} channels "
                           f"and {groups} groups.")


def channel_shuffle(input, groups):
    """Channels (dim 1) regrouped: ``(N, g * c, ...)`` read as ``(N, g, c, ...)`` and
    transposed to ``(N, c, g, ...)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.functional.channel_shuffle(wgrad.arange(4.).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    _check_channel_shuffle(input, groups)
    c, shape = input.shape[1], tuple(input.shape)
    out = input.reshape((shape[0], groups, c // groups) + shape[2:]).transpose(1, 2)
    return out.reshape(shape)


def _margin_inputs(input):
    """``input`` as ``(N, C)``; torch's check of its rank."""
    dim = input.dim()
    if not ((dim <= 1 and input.numel() > 0) or (dim == 2 and input.shape[1] > 0)):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch "
                           f"size, but got: {list(input.shape)}")
    return input.reshape(1, -1) if dim <= 1 else input


def _hinge(z, p=1):
    """``max(z, 0) ** p`` with torch's kernels' gradient: zero where ``z == 0`` (relu's)."""
    h = relu(z)
    return h * h if p == 2 else h


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """The multi-class hinge loss: per sample, the mean over classes ``i != y`` of
    ``max(0, margin - x[y] + x[i]) ** p`` (times ``weight[y]``).

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> wgrad.nn.functional.multi_margin_loss(x, wgrad.tensor([3]))
    tensor(0.3250)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    if p not in (1, 2):
        raise ValueError("only p == 1 and p == 2 supported")
    if weight is not None and weight.dim() != 1:
        raise ValueError("weight must be one-dimensional")
    _real_only("multi_margin_loss_cpu_kernel", input)
    x = _margin_inputs(input)
    n, c = x.shape
    if target.dim() > 1 or target.numel() != n:
        raise RuntimeError(
            "multi_margin_loss: target tensor should be 1-D with size equal to the number of "
            f"input samples (batch size). Expected target size [{n}], but got "
            f"{list(target.shape)}. Input has shape {list(input.shape)}.")
    t = target.reshape(n, 1)
    if _concrete(target) and n and bool(((t < 0) | (t >= c)).any()):
        raise RuntimeError("target out of range")
    x_y = x.gather(1, t)
    cls = _creation.arange(c).reshape(1, c)
    h = _hinge(margin - x_y + x, p) * (cls != t).to(x.dtype)
    if weight is not None:
        h = h * weight[t.reshape(n)].reshape(n, 1)
    loss = h.sum(1) / c
    if input.dim() <= 1:
        loss = loss.reshape(tuple(target.shape))
    return _reduce(loss, reduction)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """The multi-label hinge loss: per sample, the sum over its target classes ``j`` (the
    entries of ``target`` before the first -1) and other classes ``i`` of
    ``max(0, 1 - (x[j] - x[i]))``, divided by the number of classes.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.tensor([[0.1, 0.2, 0.4, 0.8]])
    >>> wgrad.nn.functional.multilabel_margin_loss(x, wgrad.tensor([[3, 0, -1, 1]]))
    tensor(0.8500)
    """
    reduction = _legacy_reduction(size_average, reduce, reduction)
    _check_reduction(reduction)
    _real_only("multilabel_margin_loss_forward_out_frame", input)
    x = _margin_inputs(input)
    if tuple(target.shape) != tuple(input.shape):
        raise RuntimeError(f"inconsistent target size: {list(target.shape)} for input of "
                           f"size: {list(input.shape)}")
    n, c = x.shape
    t = target.reshape(n, c)
    valid = (t == -1).cumsum(1) == 0  # before the first -1
    if _concrete(target) and t.numel() and bool((valid & ((t < 0) | (t >= c))).any()):
        raise RuntimeError("argument #2 'target' is out of range")
    idx = where(valid, t, _creation.zeros((), dtype=t.dtype))
    cls = _creation.arange(c).reshape(1, 1, c)
    is_target = ((idx.unsqueeze(2) == cls) & valid.unsqueeze(2)).any(1)  # (n, c)
    x_y = x.gather(1, idx)  # (n, c): x at each listed target
    h = _hinge(1 - x_y.unsqueeze(2) + x.unsqueeze(1))  # [n, j, i]
    keep = valid.unsqueeze(2) & is_target.logical_not().unsqueeze(1)
    loss = (h * keep.to(x.dtype)).sum((1, 2)) / c
    if input.dim() <= 1:
        loss = loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """``max(0, margin + d(a, p) - d(a, n))`` with any distance (default
    ``pairwise_distance``); ``swap`` uses ``min(d(a, n), d(p, n))``.

    Example
    -------
    >>> import wgrad
    >>> a, q = wgrad.tensor([[0., 0.]]), wgrad.tensor([[3., 4.]])
    >>> dist = lambda u, v: (u - v).abs().sum(-1)
    >>> wgrad.nn.functional.triplet_margin_with_distance_loss(a, a, q, distance_function=dist)
    tensor(0.)
    """
    _check_reduction(reduction)
    if margin <= 0:
        raise ValueError(f"margin must be greater than 0, got {margin}")
    _check_triplet_dims(anchor, positive, negative)
    d = distance_function if distance_function is not None else pairwise_distance
    return _triplet(d, anchor, positive, negative, margin, swap, reduction)


_out.install(globals(), "nn_extra")  # NOTE [out= arguments]
