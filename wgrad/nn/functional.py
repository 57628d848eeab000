"""``wgrad.nn.functional``: torch.nn.functional's convolutions, layers, activations and
losses, with torch's signatures, defaults and messages.

The computations live in the op families (``wgrad/ops/conv.py``, ``layer.py``,
``activation.py``, ``loss.py``: each lists what it gives here in ``FUNCTIONAL``); this
module adds what only the functional API has: ``inplace=`` flags, softmax's implicit
``dim`` (deprecated in torch, with its warning), and dropout, which draws from wgrad's
random generator.
"""
import math
import warnings

from .. import _creation, _dtype
from ..ops import activation as _A
from ..ops.activation import (celu as _celu, elu as _elu, gelu, hardshrink,
                              hardtanh as _hardtanh, leaky_relu as _leaky_relu, mish as _mish,
                              relu6 as _relu6, selu as _selu, silu as _silu, softshrink)
from ..ops.conv import conv1d, conv2d, conv3d
from ..ops.elementwise import _real_only, relu as _relu, sigmoid, softplus, tanh
from ..ops.inplace import _apply, relu_
from ..ops.layer import (_concrete, batch_norm, bilinear, conv_transpose1d, conv_transpose2d,
                         conv_transpose3d,
                         cosine_similarity, embedding, group_norm, instance_norm, layer_norm,
                         linear, normalize, one_hot, pairwise_distance, pdist, rms_norm)
from ..ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                        cosine_embedding_loss, cross_entropy, gaussian_nll_loss,
                        hinge_embedding_loss, huber_loss, kl_div, l1_loss, margin_ranking_loss,
                        mse_loss, multilabel_soft_margin_loss, nll_loss, poisson_nll_loss,
                        smooth_l1_loss, soft_margin_loss, triplet_margin_loss)
from ..ops.shape import pad

__all__ = [
    # convolutions and layers
    "conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
    "linear", "bilinear",
    "embedding", "dropout", "layer_norm", "group_norm", "instance_norm", "rms_norm",
    "batch_norm", "normalize", "one_hot", "cosine_similarity", "pairwise_distance", "pdist",
    "pad", "scaled_dot_product_attention",
    # activations
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish",
    "softplus", "sigmoid", "tanh", "hardtanh", "softmax", "log_softmax", "softmin",
    "relu_", "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_", "hardshrink",
    "softshrink",
    # losses
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "poisson_nll_loss",
    "gaussian_nll_loss", "margin_ranking_loss", "hinge_embedding_loss", "soft_margin_loss",
    "multilabel_soft_margin_loss", "cosine_embedding_loss", "triplet_margin_loss",
]


def _maybe_inplace(fn, input, inplace, *args):
    """``fn(input, *args)``, or written into ``input`` (NOTE [In-place ops])."""
    if inplace:
        return _apply(input, lambda s: fn(s, *args))
    return fn(input, *args)


# ======================================================================================
# Activations
# ======================================================================================

def relu(input, inplace=False):
    """``max(x, 0)``; relu'(0) = 0.

    Examples
    --------
    >>> wgrad.nn.functional.relu(wgrad.tensor([-1., 2.]))
    tensor([0., 2.])
    """
    return relu_(input) if inplace else _relu(input)


def relu6(input, inplace=False):
    """``min(max(x, 0), 6)`` (see :func:`hardtanh`)."""
    return _maybe_inplace(_relu6, input, inplace)


def leaky_relu(input, negative_slope=0.01, inplace=False):
    """``x`` for ``x > 0``, else ``negative_slope * x``."""
    return _maybe_inplace(_leaky_relu, input, inplace, negative_slope)


def elu(input, alpha=1.0, inplace=False):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``."""
    return _maybe_inplace(_elu, input, inplace, alpha)


def selu(input, inplace=False):
    """``scale * elu(x, alpha)`` with torch's constants."""
    return _maybe_inplace(_selu, input, inplace)


def celu(input, alpha=1.0, inplace=False):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""
    return _maybe_inplace(_celu, input, inplace, alpha)


def silu(input, inplace=False):
    """``x * sigmoid(x)`` (complex input too, as torch)."""
    return _maybe_inplace(_silu, input, inplace)


def mish(input, inplace=False):
    """``x * tanh(softplus(x))``."""
    return _maybe_inplace(_mish, input, inplace)


def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    """``clamp(x, min_val, max_val)``, gradient 0 at the ends (torch's rule)."""
    return _maybe_inplace(_hardtanh, input, inplace, min_val, max_val)


def leaky_relu_(input, negative_slope=0.01):
    """In-place :func:`leaky_relu`."""
    return leaky_relu(input, negative_slope, inplace=True)


def elu_(input, alpha=1.0):
    """In-place :func:`elu`."""
    return elu(input, alpha, inplace=True)


def selu_(input):
    """In-place :func:`selu`."""
    return selu(input, inplace=True)


def celu_(input, alpha=1.0):
    """In-place :func:`celu`."""
    return celu(input, alpha, inplace=True)


def hardtanh_(input, min_val=-1.0, max_val=1.0):
    """In-place :func:`hardtanh`."""
    return hardtanh(input, min_val, max_val, inplace=True)


def _implicit_dim(name, ndim, stacklevel):
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated. Change the "
                  f"call to include dim=X as an argument.", stacklevel=stacklevel)
    return 0 if ndim in (0, 1, 3) else 1


def softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim``; without ``dim``, torch's deprecated implicit
    choice (0 for 0-, 1- and 3-d input, else 1) with its warning. ``dtype`` casts first.

    Examples
    --------
    >>> wgrad.nn.functional.softmax(wgrad.tensor([[0., 0.]]), dim=1)
    tensor([[0.5000, 0.5000]])
    """
    if dim is None:
        dim = _implicit_dim("softmax", input.ndim, _stacklevel)
    return _A.softmax(input, dim, dtype)


def log_softmax(input, dim=None, _stacklevel=3, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, stably (implicit ``dim`` as :func:`softmax`).

    Examples
    --------
    >>> wgrad.nn.functional.log_softmax(wgrad.tensor([[0., 0.]]), dim=1)
    tensor([[-0.6931, -0.6931]])
    """
    if dim is None:
        dim = _implicit_dim("log_softmax", input.ndim, _stacklevel)
    return _A.log_softmax(input, dim, dtype)


def softmin(input, dim=None, _stacklevel=3, dtype=None):
    """``softmax(-x)`` along ``dim`` (implicit ``dim`` as :func:`softmax`)."""
    if dim is None:
        dim = _implicit_dim("softmin", input.ndim, _stacklevel)
    return _A.softmin(input, dim, dtype)


# ======================================================================================
# Dropout
# ======================================================================================

def dropout(input, p=0.5, training=True, inplace=False):
    """Zero each element with probability ``p`` and scale the rest by ``1 / (1 - p)``
    while ``training``; the identity otherwise. The mask comes from wgrad's generator
    (``wgrad.manual_seed``), on the host: inside ``wgrad.compile`` it is drawn once,
    while tracing (a warning says so). Real input only, as torch.

    Examples
    --------
    >>> x = wgrad.ones(4)
    >>> wgrad.nn.functional.dropout(x, 0.5, training=False) is x
    True
    """
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return input
    _real_only("bernoulli_scalar_cpu_", input)
    if not _concrete(input):
        warnings.warn("dropout while tracing (wgrad.compile): the mask is drawn once, at "
                      "trace time, and every call of the compiled step reuses it",
                      stacklevel=2)
    if p == 1:
        scale = 0.0
    else:
        keep = _creation.rand(*input.shape, dtype=input.dtype) < 1 - p
        scale = keep.to(input.dtype) / (1 - p)
    return _maybe_inplace(lambda x: x * scale, input, inplace)


# ======================================================================================
# Attention
# ======================================================================================

def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0,
                                 is_causal=False, scale=None, enable_gqa=False):
    """``softmax(q k^T * scale + mask) v`` over ``(..., L, E)`` queries and ``(..., S, E)``
    keys, ``scale`` defaulting to ``1 / sqrt(E)``; a boolean ``attn_mask`` marks what may
    be attended, a float one is added; ``is_causal`` masks the upper triangle; with
    ``enable_gqa`` key/value heads (dim -3) are repeated to the query's. ``dropout_p``
    drops attention weights (always, as torch's function: pass 0 in evaluation).

    Examples
    --------
    >>> q = wgrad.ones(1, 2, 4)
    >>> wgrad.nn.functional.scaled_dot_product_attention(q, q, q).shape
    wgrad.Size([1, 2, 4])
    """
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be "
                           "set when is_causal=True")
    if enable_gqa and query.ndim >= 3 and key.shape[-3] != query.shape[-3]:
        rep = query.shape[-3] // key.shape[-3]
        key, value = _repeat_heads(key, rep), _repeat_heads(value, rep)
    e = query.shape[-1]
    s = 1.0 / math.sqrt(e) if scale is None else scale
    scores = (query * s) @ key.transpose(-2, -1)
    if is_causal:
        ell, src = query.shape[-2], key.shape[-2]
        attn_mask = _creation.ones(ell, src, dtype=_dtype.bool).tril()
    if attn_mask is not None:
        if attn_mask.dtype is _dtype.bool:
            scores = scores.masked_fill(attn_mask.logical_not(), float("-inf"))
        else:
            scores = scores + attn_mask
    weights = _A.softmax(scores, -1)
    if dropout_p > 0:
        weights = dropout(weights, dropout_p)
    return weights @ value


def _repeat_heads(t, rep):
    """Each head (dim -3) ``rep`` times in a row (torch's repeat_interleave there)."""
    shape = tuple(t.shape)
    t = t.unsqueeze(-3).expand(shape[:-2] + (rep,) + shape[-2:])
    return t.reshape(shape[:-3] + (shape[-3] * rep,) + shape[-2:])


# pooling, interpolation, more activations and the channel dropouts (issue 26)
from ._pooling import *  # noqa: E402,F401,F403
from ._interpolation import *  # noqa: E402,F401,F403
from ._sampling import *  # noqa: E402,F401,F403
from ._ctc import *  # noqa: E402,F401,F403
from ._embedding_bag import *  # noqa: E402,F401,F403
from ._extra import *  # noqa: E402,F401,F403
from ._attention import *  # noqa: E402,F401,F403
from ._attention import _canonical_mask, _none_or_dtype  # noqa: E402,F401
from . import _attention, _ctc, _embedding_bag, _extra, _interpolation, _pooling  # noqa: E402
from . import _sampling  # noqa: E402
__all__ += (_pooling.__all__ + _interpolation.__all__ + _extra.__all__  # noqa: PLE0605
            + _sampling.__all__ + _ctc.__all__ + _embedding_bag.__all__ + _attention.__all__)
from ._fractional import *  # noqa: E402,F401,F403
from . import _fractional  # noqa: E402
__all__ += _fractional.__all__  # noqa: PLE0605
from ._linear_ce import *  # noqa: E402,F401,F403
from . import _linear_ce  # noqa: E402
__all__ += _linear_ce.__all__  # noqa: PLE0605
# torch's F.conv_tbc and F.native_channel_shuffle are its top-level ops themselves
from ._toplevel import conv_tbc, native_channel_shuffle  # noqa: E402,F401
__all__ += ["conv_tbc", "native_channel_shuffle"]  # noqa: PLE0605
