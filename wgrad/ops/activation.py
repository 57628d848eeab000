"""Activations: softmax and log_softmax (primitives), and the composite activations of
``wgrad.nn.functional`` (leaky_relu, elu, selu, celu, gelu, silu, mish, hardtanh, relu6).

``__all__`` holds what torch has at top level (``torch.softmax``, ``torch.selu``...);
``FUNCTIONAL`` the names ``wgrad.nn.functional`` takes from here; ``METHODS`` the Tensor
methods. Only softmax and log_softmax are primitives (one dispatch each, torch's node
names); the rest are composites of elementwise ops, so their gradients need no formula.
Every formula follows NOTE [Conjugate Wirtinger convention] in _primitive.py; the
activations here are real-only in torch except silu, so no conjugates appear.
"""
import math

import jax

from .._tensor import _wrap_dim
from ._primitive import Primitive
from .elementwise import _real_only, abs, clamp, erf, expm1, softplus, tanh, where

__all__ = ["softmax", "log_softmax", "selu", "celu", "hardshrink"]
METHODS = ("softmax", "log_softmax", "hardshrink")
FUNCTIONAL = ("softmax", "log_softmax", "softmin", "leaky_relu", "elu", "selu", "celu",
              "gelu", "silu", "mish", "hardtanh", "relu6", "hardshrink", "softshrink")

# torch's SELU constants (Klambauer et al., 2017)
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


# ======================================================================================
# softmax, log_softmax (primitives)
# ======================================================================================

def _softmax_fwd(self, *, dim):
    return jax.nn.softmax(self, axis=dim)


def _log_softmax_fwd(self, *, dim):
    return jax.nn.log_softmax(self, axis=dim)


# the Jacobian of softmax is diag(s) - s s^T: J^T g = s * (g - <g, s>)
_softmax = Primitive(
    "softmax", _softmax_fwd, node_name="SoftmaxBackward0",
    self=lambda grad, result, dim: result * (grad - (grad * result).sum(dim, keepdim=True)))
# d log_softmax = I - 1 s^T: J^T g = g - s * sum(g)
_log_softmax = Primitive(
    "log_softmax", _log_softmax_fwd, node_name="LogSoftmaxBackward0",
    self=lambda grad, result, dim: grad - result.exp() * grad.sum(dim, keepdim=True))


def _softmax_call(prim, kernel, input, dim, dtype):
    if dtype is not None:
        input = input.to(dtype)
    d = input.dtype
    if not d.is_floating_point:
        raise NotImplementedError(f'"{kernel}" not implemented for \'{d.scalar_name}\'')
    dim = _wrap_dim(dim, input.ndim)
    if input.ndim == 0:  # a 0-d tensor is its own (one-element) softmax dimension
        return prim(input.reshape((1,)), dim=0).reshape(())
    return prim(input, dim=dim)


def softmax(input, dim, dtype=None):
    """``exp(x) / sum(exp(x))`` along ``dim`` (torch.softmax; see also
    ``wgrad.nn.functional.softmax``). ``dtype`` casts the input first. Real input only,
    as torch.

    Examples
    --------
    >>> wgrad.softmax(wgrad.tensor([0., 0.]), 0)
    tensor([0.5000, 0.5000])
    """
    return _softmax_call(_softmax, "softmax_lastdim_kernel_impl", input, dim, dtype)


def log_softmax(input, dim, dtype=None):
    """``x - logsumexp(x)`` along ``dim``, computed stably (torch.log_softmax).

    Examples
    --------
    >>> wgrad.log_softmax(wgrad.tensor([0., 0.]), 0)
    tensor([-0.6931, -0.6931])
    """
    return _softmax_call(_log_softmax, "log_softmax_lastdim_kernel_impl", input, dim, dtype)


def softmin(input, dim, dtype=None):
    """``softmax(-x)`` along ``dim``.

    Examples
    --------
    >>> wgrad.nn.functional.softmin(wgrad.tensor([0., 0.]), 0)
    tensor([0.5000, 0.5000])
    """
    if dtype is not None:
        input = input.to(dtype)
    return softmax(-input, dim)


# ======================================================================================
# Composite activations
# ======================================================================================

def leaky_relu(input, negative_slope=0.01):
    """``x`` for ``x > 0``, else ``negative_slope * x`` (the slope's side at 0, as torch).

    Examples
    --------
    >>> wgrad.nn.functional.leaky_relu(wgrad.tensor([-1., 2.]), 0.5)
    tensor([-0.5000,  2.0000])
    """
    _real_only("leaky_relu_cpu", input)
    return where(input > 0, input, input * negative_slope)


def _elu(input, alpha, scale, name):
    _real_only(name, input)
    # expm1 sees only x <= 0: a large positive x would overflow the unused branch, and
    # its zero gradient times inf would be nan
    neg = alpha * expm1(clamp(input, max=0.0))
    out = where(input > 0, input, neg)
    return out if scale == 1 else out * scale


def elu(input, alpha=1.0):
    """``x`` for ``x > 0``, else ``alpha * (exp(x) - 1)``.

    Examples
    --------
    >>> wgrad.nn.functional.elu(wgrad.tensor([0., 1.]))
    tensor([0., 1.])
    """
    return _elu(input, alpha, 1, "elu_cpu")


def selu(input):
    """``scale * elu(x, alpha)`` with the self-normalising constants of torch.selu.

    Examples
    --------
    >>> wgrad.selu(wgrad.tensor([0.]))
    tensor([0.])
    """
    return _elu(input, _SELU_ALPHA, _SELU_SCALE, "elu_cpu")


def celu(input, alpha=1.0):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Examples
    --------
    >>> wgrad.celu(wgrad.tensor([0., 2.]))
    tensor([0., 2.])
    """
    _real_only("elu_cpu", input)
    neg = alpha * expm1(clamp(input, max=0.0) / alpha)
    return where(input > 0, input, neg)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def gelu(input, approximate="none"):
    """``x * Phi(x)`` (``approximate='none'``, with erf) or its tanh approximation
    (``approximate='tanh'``).

    Examples
    --------
    >>> wgrad.nn.functional.gelu(wgrad.tensor([0.]))
    tensor([0.])
    """
    if approximate not in ("none", "tanh"):
        raise RuntimeError("approximate argument must be either none or tanh.")
    _real_only("GeluKernelImpl", input)
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (input + 0.044715 * input * input * input)
        return 0.5 * input * (1 + tanh(inner))
    return 0.5 * input * (1 + erf(input * _SQRT_HALF))


def silu(input):
    """``x * sigmoid(x)`` (complex input too, as torch).

    Examples
    --------
    >>> wgrad.nn.functional.silu(wgrad.tensor([0.]))
    tensor([0.])
    """
    return input * input.sigmoid()


def mish(input):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> wgrad.nn.functional.mish(wgrad.tensor([0.]))
    tensor([0.])
    """
    _real_only("mish_cpu", input)
    return input * tanh(softplus(input))


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """``clamp(x, min_val, max_val)``; the gradient passes only strictly inside the range
    (torch's hardtanh_backward), unlike clamp's, which includes the ends.

    Examples
    --------
    >>> wgrad.nn.functional.hardtanh(wgrad.tensor([-2., 0.5, 3.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if input.is_complex():
        raise RuntimeError("clamp is not supported for complex types")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    inside = (input > min_val) & (input < max_val)
    return where(inside, input, clamp(input, min_val, max_val).detach())


def relu6(input):
    """``hardtanh(x, 0, 6)``.

    Examples
    --------
    >>> wgrad.nn.functional.relu6(wgrad.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0)



def hardshrink(input, lambd=0.5):
    """``x`` where ``|x| > lambd``, else 0.

    Examples
    --------
    >>> wgrad.hardshrink(wgrad.tensor([-1., 0.2, 0.7]))
    tensor([-1.0000,  0.0000,  0.7000])
    """
    _real_only("hardshrink_cpu", input)
    return where(abs(input) > lambd, input, 0.0)


def softshrink(input, lambd=0.5):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0.

    Examples
    --------
    >>> wgrad.nn.functional.softshrink(wgrad.tensor([-1., 0.2, 0.75]))
    tensor([-0.5000,  0.0000,  0.2500])
    """
    _real_only("softshrink_cpu", input)
    if lambd < 0:
        raise RuntimeError(f"lambda must be in range [0, 3.40282e+38] for input dtype "
                           f"{input.dtype.scalar_name}, but found {lambd:g}")
    return where(input > lambd, input - lambd, where(input < -lambd, input + lambd, 0.0))
