"""torch's top-level (ATen) forms of ``nn.functional``'s ops: ``torch.dropout``,
``torch.batch_norm``, ``torch.embedding(weight, indices)``, ``torch.kl_div(..., reduction)``,
the RNN cells, ``native_layer_norm`` and the rest.

Each translates torch's positional signature into the ``wgrad.nn.functional`` op (or the
op-family function behind it), so it shares that op's gradient; only the RNN cells and
``native_*`` normalisations compose a few more ops (torch's formulas). The differences to
the functional forms are torch's: reductions are ints (0 none, 1 mean, 2 sum; any other
value none), ``stride=()`` means the kernel size, dropout's ``p`` is checked with a
RuntimeError, and the functional forms' Python-side checks (a batch of one in
``batch_norm``, the affine grid's sizes) are absent.

Loss reductions: torch 2.13's schemas declare ``reduction=Mean``, but its Python binding
reads that default as 0, so ``torch.kl_div(x, t)`` (reduction omitted) is the unreduced
loss. wgrad's default is 0: what the same torch code gets.
"""
import jax.numpy as jnp
import numpy as np

from .. import _creation
from .._autograd.grad_mode import no_grad
from .._tensor import Tensor, _wrap_dim
from ..ops._out import no_derivative_formula
from ..ops._primitive import Primitive
from ..ops.elementwise import _coef, _real_only, relu
from ..ops.indexing import _no_complex_grad
from ..ops.layer import (_batch_norm, _group_norm, _instance_norm, embedding as _embedding,
                         layer_norm, linear)
from ..ops.loss import _bce_logits, _reduce
from ..ops.reduction import mean, var
from ..ops.shape import broadcast_shapes, pad as _pad
from . import _extra, _sampling
from . import functional as F
from .functional import adaptive_avg_pool1d, channel_shuffle, pixel_shuffle, pixel_unshuffle

__all__ = [
    "dropout", "dropout_", "feature_dropout", "feature_dropout_", "alpha_dropout",
    "alpha_dropout_", "feature_alpha_dropout", "feature_alpha_dropout_",
    "batch_norm", "instance_norm", "embedding",
    "max_pool1d", "max_pool2d", "max_pool3d", "max_pool1d_with_indices", "avg_pool1d",
    "adaptive_avg_pool1d", "adaptive_max_pool1d",
    "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "native_channel_shuffle",
    "threshold", "threshold_", "rrelu", "rrelu_", "selu_", "celu_", "constant_pad_nd",
    "binary_cross_entropy_with_logits", "kl_div", "cosine_embedding_loss",
    "margin_ranking_loss", "hinge_embedding_loss", "triplet_margin_loss", "poisson_nll_loss",
    "ctc_loss",
    "gru_cell", "lstm_cell", "rnn_tanh_cell", "rnn_relu_cell", "conv_tbc",
    "native_layer_norm", "native_batch_norm", "native_group_norm",
    "grid_sampler", "affine_grid_generator",
]


def _check_bool(fn, arg, pos, value):
    """torch's argument parser: a bool argument takes a bool only (not 0 or 1)."""
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be bool, not "
                        f"{type(value).__name__}")


def _check_int(fn, arg, pos, value):
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{fn}(): argument '{arg}' (position {pos}) must be int, not "
                        f"{type(value).__name__}")


# ======================================================================================
# Dropout
# ======================================================================================

def _dropout(fn, input, p, train, inplace, feature, alpha):
    _check_bool(fn, "train", 3, train)
    if not 0 <= p <= 1:
        raise RuntimeError(f"dropout probability has to be between 0 and 1, but got {p:g}")
    return _extra._dropout(input, p, train, inplace, feature, alpha)


def dropout(input, p, train):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)`` while
    ``train``; ``input`` itself otherwise (and for ``p = 0``).

    Example
    -------
    >>> x = wgrad.ones(3)
    >>> wgrad.dropout(x, 0.5, False) is x
    True
    """
    return _dropout("dropout", input, p, train, False, False, False)


def dropout_(input, p, train):
    """In-place :func:`dropout`.

    Example
    -------
    >>> wgrad.dropout_(wgrad.ones(2), 1.0, True)
    tensor([0., 0.])
    """
    return _dropout("dropout_", input, p, train, True, False, False)


def feature_dropout(input, p, train):
    """:func:`dropout` of whole channels: one draw per ``(sample, channel)`` (dims 0, 1).

    Example
    -------
    >>> wgrad.feature_dropout(wgrad.ones(2, 2), 0.0, True)
    tensor([[1., 1.],
            [1., 1.]])
    """
    return _dropout("feature_dropout", input, p, train, False, True, False)


def feature_dropout_(input, p, train):
    """In-place :func:`feature_dropout`.

    Example
    -------
    >>> wgrad.feature_dropout_(wgrad.ones(1, 2), 1.0, True)
    tensor([[0., 0.]])
    """
    return _dropout("feature_dropout_", input, p, train, True, True, False)


def alpha_dropout(input, p, train):
    """Dropout for SELU networks: dropped elements take SELU's saturation value and the
    result is affinely rescaled to keep zero mean and unit variance.

    Example
    -------
    >>> x = wgrad.ones(3)
    >>> wgrad.alpha_dropout(x, 0.5, False) is x
    True
    """
    return _dropout("alpha_dropout", input, p, train, False, False, True)


def alpha_dropout_(input, p, train):
    """In-place :func:`alpha_dropout`.

    Example
    -------
    >>> wgrad.alpha_dropout_(wgrad.ones(2), 1.0, True)
    tensor([0., 0.])
    """
    return _dropout("alpha_dropout_", input, p, train, True, False, True)


def feature_alpha_dropout(input, p, train):
    """:func:`alpha_dropout` with one draw per ``(sample, channel)``.

    Example
    -------
    >>> x = wgrad.ones(2, 3)
    >>> wgrad.feature_alpha_dropout(x, 0.5, False) is x
    True
    """
    return _dropout("feature_alpha_dropout", input, p, train, False, True, True)


def feature_alpha_dropout_(input, p, train):
    """In-place :func:`feature_alpha_dropout`.

    Example
    -------
    >>> wgrad.feature_alpha_dropout_(wgrad.ones(1, 2), 1.0, True)
    tensor([[0., 0.]])
    """
    return _dropout("feature_alpha_dropout_", input, p, train, True, True, True)


# ======================================================================================
# Normalisation, embedding
# ======================================================================================

def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """``wgrad.nn.functional.batch_norm`` in torch's top-level argument order
    (``cudnn_enabled`` is ignored); a batch of one value per channel is allowed, as torch.

    Example
    -------
    >>> x = wgrad.tensor([[1.], [3.]])
    >>> wgrad.batch_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    _check_bool("batch_norm", "training", 6, training)
    _wrap_dim(1, input.ndim)
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps)[0]


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """``wgrad.nn.functional.instance_norm`` in torch's top-level argument order
    (``cudnn_enabled`` is ignored).

    Example
    -------
    >>> x = wgrad.tensor([[[1., 3.]]])
    >>> wgrad.instance_norm(x, None, None, None, None, True, 0.1, 1e-5, False)
    tensor([[[-1.0000,  1.0000]]])
    """
    _check_bool("instance_norm", "use_input_stats", 6, use_input_stats)
    _wrap_dim(1, input.ndim)
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the integer ``indices`` (torch's top-level order: the table
    first). The row ``padding_idx`` gets no gradient; a ``padding_idx`` outside
    ``[0, num_embeddings)`` (the default -1) means none.

    Example
    -------
    >>> wgrad.embedding(wgrad.eye(3), wgrad.tensor([2, 0]))
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    n = weight.shape[0] if weight.ndim == 2 else 0
    pad = padding_idx if 0 <= padding_idx < n else None
    _no_complex_grad("embedding", weight)
    return _embedding(indices, weight, pad, scale_grad_by_freq=scale_grad_by_freq,
                      sparse=sparse)


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """``(out, mean, rstd)``: :func:`wgrad.layer_norm` and the statistics it used, shaped
    ``input.shape[:-k] + (1,) * k`` for ``k = len(normalized_shape)`` (``rstd =
    1 / sqrt(var + eps)``, the biased variance). Only ``out`` is differentiable, as torch.

    Example
    -------
    >>> out, mu, rstd = wgrad.native_layer_norm(wgrad.tensor([[1., 3.]]), [2], None, None, 0.)
    >>> out, mu, rstd
    (tensor([[-1.,  1.]]), tensor([[2.]]), tensor([[1.]]))
    """
    out = layer_norm(input, normalized_shape, weight, bias, eps)
    k = 1 if isinstance(normalized_shape, int) else len(normalized_shape)
    dims = tuple(range(input.ndim - k, input.ndim))
    with no_grad():
        mu = mean(input, dims, keepdim=True)
        rstd = (var(input, dims, keepdim=True, correction=0) + eps).rsqrt()
    return out, mu, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """``(out, save_mean, save_invstd)``: :func:`batch_norm` and, in training, the batch
    mean and ``1 / sqrt(var + eps)`` per channel (empty tensors in evaluation, as torch on
    the CPU). Only ``out`` is differentiable, as torch.

    Example
    -------
    >>> x = wgrad.tensor([[1.], [3.]])
    >>> wgrad.native_batch_norm(x, None, None, None, None, True, 0.1, 0.)[1:]
    (tensor([2.]), tensor([1.]))
    """
    _check_bool("native_batch_norm", "training", 6, training)
    _wrap_dim(1, input.ndim)
    out, mu, v = _batch_norm(input, running_mean, running_var, weight, bias, training,
                             momentum, eps)
    if not training:
        empty = _creation.zeros(0, dtype=input.dtype)
        return out, empty, empty.clone()
    with no_grad():
        return out, mu.detach().reshape(-1), (v.detach() + eps).rsqrt().reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """``(out, mean, rstd)``: :func:`wgrad.group_norm` of ``input`` seen as ``(N, C, HxW)``
    and its statistics per sample and group, ``(N, group)``; all three are differentiable,
    as torch.

    Example
    -------
    >>> x = wgrad.tensor([[[1.], [3.]]])
    >>> wgrad.native_group_norm(x, None, None, 1, 2, 1, 1, 0.)
    (tensor([[[-1.],
             [ 1.]]]), tensor([[2.]]), tensor([[1.]]))
    """
    if input.numel() != N * C * HxW:
        raise RuntimeError("Expected X.numel() == N * C * HxW to be true, but got false.  "
                           "(Could this error message be improved?  If so, please report an "
                           "enhancement request to PyTorch.)")
    if group <= 0 or C % group:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={group}")
    for name, t in (("weight", weight), ("bias", bias)):
        if t is not None and (t.ndim != 1 or t.numel() != C):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(t.shape)} "
                               f"and input of shape {list(input.shape)}")
    if tuple(input.shape[:2]) != (N, C):
        raise NotImplementedError(f"native_group_norm: wgrad takes N and C as the input's "
                                  f"first two sizes, got N={N}, C={C} for an input of shape "
                                  f"{list(input.shape)}")
    _real_only("GroupNormKernelImpl", input)
    out, mu, rstd = _group_norm(input, group, weight, bias, eps)
    return out, mu.reshape(N, group), rstd.reshape(N, group)


# ======================================================================================
# Pooling, shuffles, padding
# ======================================================================================

def _stride(stride):
    """torch's ``stride=[]`` (the default): the kernel size."""
    if stride is None or (not isinstance(stride, (int, np.integer)) and len(stride) == 0):
        return None
    return stride


def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``wgrad.nn.functional.max_pool1d`` (``stride=()``: the kernel size).

    Example
    -------
    >>> wgrad.max_pool1d(wgrad.tensor([[1., 3., 2., 0.]]), 2)
    tensor([[3., 2.]])
    """
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``wgrad.nn.functional.max_pool2d`` (``stride=()``: the kernel size).

    Example
    -------
    >>> wgrad.max_pool2d(wgrad.ones(1, 4, 4), 2).shape
    wgrad.Size([1, 2, 2])
    """
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    """``wgrad.nn.functional.max_pool3d`` (``stride=()``: the kernel size).

    Example
    -------
    >>> wgrad.max_pool3d(wgrad.ones(1, 2, 4, 4), 2).shape
    wgrad.Size([1, 1, 2, 2])
    """
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """``(values, indices)`` of :func:`max_pool1d`: each maximum's index along the input's
    last dimension.

    Example
    -------
    >>> wgrad.max_pool1d_with_indices(wgrad.tensor([[1., 3., 2., 0.]]), 2)
    (tensor([[3., 2.]]), tensor([[1, 2]]))
    """
    return F.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                     ceil_mode)


def avg_pool1d(input, kernel_size, stride=(), padding=0, ceil_mode=False,
               count_include_pad=True):
    """``wgrad.nn.functional.avg_pool1d`` (``stride=()``: the kernel size).

    Example
    -------
    >>> wgrad.avg_pool1d(wgrad.tensor([[1., 2., 3., 4.]]), 2)
    tensor([[1.5000, 3.5000]])
    """
    return F.avg_pool1d(input, kernel_size, _stride(stride), padding, ceil_mode,
                        count_include_pad)


def adaptive_max_pool1d(input, output_size):
    """``(values, indices)`` of adaptive 1-D max pooling (torch's top-level form always
    returns the indices).

    Example
    -------
    >>> wgrad.adaptive_max_pool1d(wgrad.tensor([[1., 3., 2., 5., 4.]]), 2)
    (tensor([[3., 5.]]), tensor([[1, 3]]))
    """
    return F.adaptive_max_pool1d_with_indices(input, output_size)


def _shuffle_fwd(self, *, groups):
    s = self.shape
    x = self.reshape(s[:1] + (groups, s[1] // groups) + s[2:])
    return jnp.swapaxes(x, 1, 2).reshape(s)


# torch has no derivative for it (channel_shuffle has one): backward raises torch's error
_native_channel_shuffle = Primitive("native_channel_shuffle", _shuffle_fwd,
                                    node_name="NotImplemented",
                                    self=no_derivative_formula("native_channel_shuffle"))


def native_channel_shuffle(input, groups):
    """:func:`channel_shuffle`'s values, without a derivative (torch's native kernel: a
    backward through it raises, as torch's).

    Example
    -------
    >>> wgrad.native_channel_shuffle(wgrad.arange(4.).reshape(1, 4, 1), 2).flatten()
    tensor([0., 2., 1., 3.])
    """
    _check_int("native_channel_shuffle", "groups", 2, groups)
    _extra._check_channel_shuffle(input, groups)
    return _native_channel_shuffle(input, groups=int(groups))


def constant_pad_nd(input, pad, value=0):
    """Pad (or crop, where negative) the last ``len(pad) // 2`` dims by ``pad`` (last dim
    first, ``(left, right)`` pairs) with ``value``, cast to the input's dtype as torch.

    Example
    -------
    >>> wgrad.constant_pad_nd(wgrad.tensor([1., 2.]), [1, 0], 9.)
    tensor([9., 1., 2.])
    """
    pad = [int(p) for p in pad]
    if len(pad) % 2:
        raise RuntimeError(f"Length of pad must be even but instead it equals {len(pad)}")
    if len(pad) // 2 > input.ndim:
        raise RuntimeError(f"Length of pad should be no more than twice the number of "
                           f"dimensions of the input. Pad length is {len(pad)}while the input "
                           f"has {input.ndim}dimensions.")
    return _pad(input, pad, "constant", _coef(value, input.dtype))


# ======================================================================================
# Activations
# ======================================================================================

def threshold(input, threshold, value):
    """``value`` where ``input <= threshold``, else ``input`` (NaN stays NaN).

    Example
    -------
    >>> wgrad.threshold(wgrad.tensor([0.5, 2.]), 1.0, -1.0)
    tensor([-1.,  2.])
    """
    return _extra.threshold(input, threshold, value)


def threshold_(input, threshold, value):
    """In-place :func:`threshold`.

    Example
    -------
    >>> wgrad.threshold_(wgrad.tensor([0.5, 2.]), 1.0, 0.0)
    tensor([0., 2.])
    """
    return _extra.threshold(input, threshold, value, inplace=True)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """Randomized leaky ReLU: while ``training`` each negative element is scaled by a slope
    drawn from U(lower, upper) (from ``generator``, default wgrad's); otherwise by
    ``(lower + upper) / 2``.

    Example
    -------
    >>> wgrad.rrelu(wgrad.tensor([-1., 2.]), 0.2, 0.4)
    tensor([-0.3000,  2.0000])
    """
    return _extra._rrelu(input, lower, upper, training, False, generator)


def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """In-place :func:`rrelu`.

    Example
    -------
    >>> wgrad.rrelu_(wgrad.tensor([-1., 2.]), 0.2, 0.4)
    tensor([-0.3000,  2.0000])
    """
    return _extra._rrelu(input, lower, upper, training, True, generator)


def selu_(input):
    """In-place :func:`wgrad.selu`.

    Example
    -------
    >>> wgrad.selu_(wgrad.tensor([0., 1.]))
    tensor([0.0000, 1.0507])
    """
    return F.selu_(input)


def celu_(input, alpha=1.0):
    """In-place :func:`wgrad.celu`.

    Example
    -------
    >>> wgrad.celu_(wgrad.tensor([0., 2.]))
    tensor([0., 2.])
    """
    return F.celu_(input, alpha)


# ======================================================================================
# Losses (reduction: an int, see the module's docstring)
# ======================================================================================

_REDUCTIONS = {1: "mean", 2: "sum"}


def _reduction(fn, pos, reduction):
    _check_int(fn, "reduction", pos, reduction)
    return _REDUCTIONS.get(int(reduction), "none")


def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=0):
    """``wgrad.nn.functional.binary_cross_entropy_with_logits`` with an int ``reduction``;
    ``input`` and the weights broadcast to ``target``'s shape (with ``pos_weight``, input
    and target have that shape), as torch's top-level form.

    Example
    -------
    >>> wgrad.binary_cross_entropy_with_logits(wgrad.zeros(2), wgrad.tensor([0., 1.]), None,
    ...                                        None, 1)
    tensor(0.6931)
    """
    r = _reduction("binary_cross_entropy_with_logits", 5, reduction)
    _real_only("log_sigmoid_cpu", input, target)
    given = [t for t in (input, target, weight, pos_weight) if t is not None]
    shape = broadcast_shapes(*(tuple(t.shape) for t in given))
    # torch computes in place into a tensor of target's shape (and input's, with pos_weight)
    for t in ((input, target) if pos_weight is not None else (target,)):
        if tuple(t.shape) != shape:
            raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the broadcast "
                               f"shape {list(shape)}")
    return _bce_logits(input, target, weight, pos_weight, reduction=r)


def kl_div(input, target, reduction=0, *, log_target=False):
    """The pointwise KL divergence ``t (log t - x)`` (``t`` given as log-probabilities when
    ``log_target``), reduced by an int ``reduction`` (1: the mean over all elements,
    without the functional form's warning).

    Example
    -------
    >>> x = wgrad.tensor([0.25, 0.75]).log()
    >>> wgrad.kl_div(x, wgrad.tensor([0.5, 0.5]), 2)
    tensor(0.1438)
    """
    r = _reduction("kl_div", 3, reduction)
    return _reduce(F.kl_div(input, target, reduction="none", log_target=log_target), r)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    """``wgrad.nn.functional.cosine_embedding_loss`` with an int ``reduction``.

    Example
    -------
    >>> x = wgrad.tensor([[1., 0.]])
    >>> wgrad.cosine_embedding_loss(x, x, wgrad.tensor([1.]))
    tensor([0.])
    """
    r = _reduction("cosine_embedding_loss", 5, reduction)
    return F.cosine_embedding_loss(input1, input2, target, margin, reduction=r)


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    """``wgrad.nn.functional.margin_ranking_loss`` with an int ``reduction``.

    Example
    -------
    >>> wgrad.margin_ranking_loss(wgrad.tensor([1.]), wgrad.tensor([2.]), wgrad.tensor([1.]))
    tensor([1.])
    """
    r = _reduction("margin_ranking_loss", 5, reduction)
    return F.margin_ranking_loss(input1, input2, target, margin, reduction=r)


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    """``wgrad.nn.functional.hinge_embedding_loss`` with an int ``reduction``.

    Example
    -------
    >>> wgrad.hinge_embedding_loss(wgrad.tensor([0.3, 0.3]), wgrad.tensor([1., -1.]))
    tensor([0.3000, 0.7000])
    """
    r = _reduction("hinge_embedding_loss", 4, reduction)
    return F.hinge_embedding_loss(input, target, margin, reduction=r)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                        reduction=0):
    """``wgrad.nn.functional.triplet_margin_loss`` with an int ``reduction``.

    Example
    -------
    >>> a, q = wgrad.tensor([[0., 0.]]), wgrad.tensor([[3., 4.]])
    >>> wgrad.triplet_margin_loss(a, a, q, eps=0.0)
    tensor([0.])
    """
    r = _reduction("triplet_margin_loss", 8, reduction)
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=r)


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """``wgrad.nn.functional.poisson_nll_loss`` in torch's top-level form (every argument
    given, ``reduction`` an int).

    Example
    -------
    >>> wgrad.poisson_nll_loss(wgrad.tensor([0.]), wgrad.tensor([1.]), True, False, 1e-8, 1)
    tensor(1.)
    """
    r = _reduction("poisson_nll_loss", 6, reduction)
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps, reduction=r)


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    """``wgrad.nn.functional.ctc_loss`` with an int ``reduction``.

    Example
    -------
    >>> lp = wgrad.zeros(2, 1, 2).log_softmax(2)
    >>> wgrad.ctc_loss(lp, wgrad.tensor([[1]]), [2], [1])
    tensor([0.2877])
    """
    r = _reduction("ctc_loss", 6, reduction)
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank, r,
                      zero_infinity)


# ======================================================================================
# RNN cells: torch's formulas from linear and elementwise ops (NOTE [One scan per layer
# and direction] in _rnn.py states them; a cell is one step, so no scan is needed)
# ======================================================================================

def _check_cell(input, states, w_ih, w_hh, gates):
    """torch's checks of a cell's arguments, in torch's order: input size, weights' first
    dims, then each hidden state's batch and hidden sizes."""
    _wrap_dim(1, input.ndim)
    if input.shape[1] != w_ih.shape[1]:
        raise RuntimeError(f"input has inconsistent input_size: got {input.shape[1]} "
                           f"expected {w_ih.shape[1]}")
    hidden = w_hh.shape[1]
    for name, w in (("weight_ih", w_ih), ("weight_hh", w_hh)):
        if w.shape[0] != gates * hidden:
            raise RuntimeError(f"{name} first dim must be {gates} * hidden_size = "
                               f"{gates * hidden}, but got {w.shape[0]}")
    for i, h in enumerate(states):
        if h.shape[0] != input.shape[0]:
            raise RuntimeError(f"Input batch size {input.shape[0]} doesn't match hidden{i} "
                               f"batch size {h.shape[0]}")
        _wrap_dim(1, h.ndim)
        if h.shape[1] != hidden:
            raise RuntimeError(f"hidden{i} has inconsistent hidden_size: got {h.shape[1]}, "
                               f"expected {hidden}")
    if any(t.ndim != 2 for t in (input, w_ih, w_hh) + tuple(states)):
        raise NotImplementedError("RNN cells in wgrad take 2-D input, hidden states and "
                                  "weights")
    if not (input.dtype.is_floating_point or input.is_complex()):
        raise NotImplementedError(f"RNN cells in wgrad take floating or complex input, not "
                                  f"{input.dtype.scalar_name}")


def _linears(input, hx, w_ih, w_hh, b_ih, b_hh):
    """``(W_hh h + b_hh, W_ih x + b_ih)``, in torch's order."""
    return linear(hx, w_hh, b_hh), linear(input, w_ih, b_ih)


def lstm_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One LSTM step, ``(h', c')`` for ``hx = (h, c)``: gates ``i, f, g, o`` (in that order
    along ``w_ih``'s rows), ``c' = sigmoid(f) c + sigmoid(i) tanh(g)``,
    ``h' = sigmoid(o) tanh(c')``.

    Example
    -------
    >>> z = wgrad.zeros(1, 1)
    >>> wgrad.lstm_cell(z, (z, z), wgrad.zeros(4, 1), wgrad.zeros(4, 1))
    (tensor([[0.]]), tensor([[0.]]))
    """
    if isinstance(hx, Tensor) or not isinstance(hx, (tuple, list)):
        raise TypeError(f"lstm_cell(): argument 'hx' (position 2) must be tuple of Tensors, "
                        f"not {type(hx).__name__}")
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = hx
    _check_cell(input, (h, c), w_ih, w_hh, 4)
    gh, gi = _linears(input, h, w_ih, w_hh, b_ih, b_hh)
    i, f, g, o = (gi + gh).chunk(4, 1)
    cy = f.sigmoid() * c + i.sigmoid() * g.tanh()
    return o.sigmoid() * cy.tanh(), cy


def gru_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One GRU step: gates ``r, z, n`` (in that order along ``w_ih``'s rows),
    ``n = tanh(W_in x + b_in + r (W_hn h + b_hn))``, ``h' = (1 - z) n + z h``.

    Example
    -------
    >>> z = wgrad.zeros(1, 1)
    >>> wgrad.gru_cell(z, z, wgrad.zeros(3, 1), wgrad.zeros(3, 1))
    tensor([[0.]])
    """
    _check_cell(input, (hx,), w_ih, w_hh, 3)
    gh, gi = _linears(input, hx, w_ih, w_hh, b_ih, b_hh)
    i_r, i_z, i_n = gi.chunk(3, 1)
    h_r, h_z, h_n = gh.chunk(3, 1)
    r = (i_r + h_r).sigmoid()
    z = (i_z + h_z).sigmoid()
    n = (i_n + r * h_n).tanh()
    return n + z * (hx - n)


def rnn_tanh_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step, ``h' = tanh(W_ih x + b_ih + W_hh h + b_hh)``.

    Example
    -------
    >>> z = wgrad.zeros(1, 1)
    >>> wgrad.rnn_tanh_cell(z, z, wgrad.zeros(1, 1), wgrad.zeros(1, 1))
    tensor([[0.]])
    """
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    gh, gi = _linears(input, hx, w_ih, w_hh, b_ih, b_hh)
    return (gi + gh).tanh()


def rnn_relu_cell(input, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    """One Elman RNN step with relu, ``h' = relu(W_ih x + b_ih + W_hh h + b_hh)`` (real
    input only, as torch).

    Example
    -------
    >>> z = wgrad.ones(1, 1)
    >>> wgrad.rnn_relu_cell(z, z, -z, z)
    tensor([[0.]])
    """
    _check_cell(input, (hx,), w_ih, w_hh, 1)
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    gh, gi = _linears(input, hx, w_ih, w_hh, b_ih, b_hh)
    return relu(gi + gh)


# ======================================================================================
# conv_tbc, grid sampling
# ======================================================================================

def conv_tbc(input, weight, bias, pad=0):
    """A 1-D convolution over time-major ``input`` ``(time, batch, in_channels)`` with
    ``weight`` ``(kernel_width, in_channels, out_channels)``, ``pad`` steps of zeros at
    both ends (a negative ``pad`` crops): ``(time + 2 pad - kernel_width + 1, batch,
    out_channels)``.

    Example
    -------
    >>> x = wgrad.arange(3.).reshape(3, 1, 1)
    >>> wgrad.conv_tbc(x, wgrad.ones(2, 1, 1), wgrad.zeros(1)).flatten()
    tensor([1., 3.])
    """
    for pos, (name, t) in enumerate((("input", input), ("weight", weight), ("bias", bias)), 1):
        if not isinstance(t, Tensor):  # torch's argument parser
            raise TypeError(f"conv_tbc(): argument '{name}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")
    _check_int("conv_tbc", "pad", 4, pad)
    if input.ndim != 3:
        raise RuntimeError("Input must have 3 dims: time, batch, in_channel")
    if weight.ndim != 3:
        raise RuntimeError("Weight tensor must have 3 dims: kernel_width, in_channels, "
                           "out_channels.")
    if bias.ndim != 1:
        raise RuntimeError("Bias must be 1-D")
    if bias.shape[0] != weight.shape[2]:
        raise RuntimeError("Bias size must equal dim 2 in the weight tensor (output "
                           "channels).")
    if input.shape[2] != weight.shape[1]:
        raise RuntimeError("Input dim 2 (input channels) is not == dim 1 in the weight tensor")
    t, b = input.shape[0], input.shape[1]
    t_out = t + 2 * pad - weight.shape[0] + 1
    if t_out < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {t_out}: "
                           f"[{t_out}, {b}, {weight.shape[2]}]")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{input.dtype.scalar_name} and {weight.dtype.scalar_name}")
    _no_complex_grad("conv_tbc", input, weight, bias)
    if pad < 0:  # conv1d pads only: crop first
        input, pad = input[-pad:t + pad], 0
    out = F.conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias.to(input.dtype),
                   padding=pad)
    return out.permute(2, 0, 1)


_SAMPLING_MODES = ("bilinear", "nearest", "bicubic")
_PADDING_MODES = ("zeros", "border", "reflection")


def grid_sampler(input, grid, interpolation_mode, padding_mode, align_corners):
    """``wgrad.nn.functional.grid_sample`` with torch's int modes: ``interpolation_mode``
    0 bilinear, 1 nearest, 2 bicubic; ``padding_mode`` 0 zeros, 1 border, 2 reflection.

    Example
    -------
    >>> img = wgrad.arange(4.).reshape(1, 1, 2, 2)
    >>> wgrad.grid_sampler(img, wgrad.zeros(1, 1, 1, 2), 0, 0, True)
    tensor([[[[1.5000]]]])
    """
    _check_int("grid_sampler", "interpolation_mode", 3, interpolation_mode)
    _check_int("grid_sampler", "padding_mode", 4, padding_mode)
    _check_bool("grid_sampler", "align_corners", 5, align_corners)
    if not 0 <= interpolation_mode < 3:
        raise RuntimeError(f"grid_sampler(): interpolation_mode must be 0 (bilinear), 1 "
                           f"(nearest) or 2 (bicubic), but got {interpolation_mode}")
    if not 0 <= padding_mode < 3:
        raise RuntimeError(f"grid_sampler(): padding_mode must be 0 (zeros), 1 (border) or "
                           f"2 (reflection), but got {padding_mode}")
    return F.grid_sample(input, grid, _SAMPLING_MODES[interpolation_mode],
                         _PADDING_MODES[padding_mode], bool(align_corners))


def affine_grid_generator(theta, size, align_corners):
    """The sampling grid of the affine maps ``theta`` ``(N, 2, 3)`` or ``(N, 3, 4)`` for an
    output of ``size`` ``(N, C, H, W)`` or ``(N, C, D, H, W)``: ``wgrad.nn.functional.
    affine_grid`` without its Python-side checks (complex ``theta`` and empty sizes work,
    as torch's top-level form).

    Example
    -------
    >>> wgrad.affine_grid_generator(wgrad.eye(2, 3).unsqueeze(0), [1, 1, 1, 2], False)
    tensor([[[[-0.5000,  0.0000],
              [ 0.5000,  0.0000]]]])
    """
    _check_bool("affine_grid_generator", "align_corners", 3, align_corners)
    size = tuple(int(s) for s in size)
    if len(size) not in (4, 5):
        raise RuntimeError("AffineGridGenerator needs 4d (spatial) or 5d (volumetric) "
                           "inputs.")
    if not (theta.dtype.is_floating_point or theta.is_complex()):
        raise NotImplementedError(f"affine_grid_generator: wgrad takes a floating or complex "
                                  f"theta, not {theta.dtype.scalar_name}")
    _wrap_dim(2, theta.ndim)
    nd = len(size) - 2
    if theta.ndim != 3 or theta.shape[0] != size[0] or theta.shape[2] != nd + 1:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{size[0]}, {nd + 1}] but got: [{theta.shape[0]}, "
                           f"{theta.shape[-1]}].")
    if theta.shape[1] != nd:
        shape = [size[0]] + list(size[2:]) + [nd]
        n = int(np.prod(size[2:])) * size[0] * theta.shape[1]
        raise RuntimeError(f"shape '{shape}' is invalid for input of size {n}")
    _no_complex_grad("affine_grid_generator", theta)
    return _sampling._affine_grid(theta, size, align_corners)
