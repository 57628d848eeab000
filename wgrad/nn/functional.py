"""``wgrad.nn.functional``: torch.nn.functional's convolutions, layers, activations and
losses, with torch's signatures, defaults and messages.

The computations live in the op families (``wgrad/ops/conv.py``, ``layer.py``,
``activation.py``, ``loss.py``: each lists what it gives here in ``FUNCTIONAL``); this
module adds what only the functional API has: ``inplace=`` flags, softmax's implicit
``dim`` (deprecated in torch, with its warning), and dropout, which draws from wgrad's
random generator.
"""
import warnings

from .. import _creation
from ..ops import activation as _A
from ..ops.activation import (celu as _celu, elu as _elu, gelu, hardtanh as _hardtanh,
                              leaky_relu as _leaky_relu, mish as _mish, relu6 as _relu6,
                              selu as _selu, silu as _silu)
from ..ops.conv import conv1d, conv2d
from ..ops.elementwise import _real_only, relu as _relu, sigmoid, softplus, tanh
from ..ops.inplace import _apply, relu_
from ..ops.layer import (batch_norm, bilinear, conv_transpose1d, conv_transpose2d,
                         cosine_similarity, embedding, layer_norm, linear, normalize, one_hot,
                         pairwise_distance)
from ..ops.loss import (binary_cross_entropy, binary_cross_entropy_with_logits,
                        cross_entropy, huber_loss, kl_div, l1_loss, mse_loss, nll_loss,
                        smooth_l1_loss)
from ..ops.shape import pad

__all__ = [
    # convolutions and layers
    "conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d", "linear", "bilinear",
    "embedding", "dropout", "layer_norm", "batch_norm", "normalize", "one_hot",
    "cosine_similarity", "pairwise_distance", "pad",
    # activations
    "relu", "relu6", "leaky_relu", "elu", "selu", "celu", "gelu", "silu", "mish",
    "softplus", "sigmoid", "tanh", "hardtanh", "softmax", "log_softmax", "softmin",
    "relu_", "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_",
    # losses
    "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "cross_entropy", "nll_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div",
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
    (``wgrad.manual_seed``). Real input only, as torch.

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
    if p == 1:
        scale = 0.0
    else:
        keep = _creation.rand(*input.shape, dtype=input.dtype) < 1 - p
        scale = keep.to(input.dtype) / (1 - p)
    return _maybe_inplace(lambda x: x * scale, input, inplace)

# pooling, interpolation, more activations and the channel dropouts (issue 26)
from ._pooling import *  # noqa: E402,F401,F403
from ._interpolation import *  # noqa: E402,F401,F403
from ._extra import *  # noqa: E402,F401,F403
from . import _extra, _interpolation, _pooling  # noqa: E402
__all__ += _pooling.__all__ + _interpolation.__all__ + _extra.__all__  # noqa: PLE0605
