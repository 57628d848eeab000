"""Activations of ``wgrad.nn.functional`` and their top-level forms.

``__all__`` holds what torch has at top level (``torch.softmax``, ``torch.selu``...);
``FUNCTIONAL`` the names ``wgrad.nn.functional`` takes from here; ``METHODS`` the Tensor
methods. softmax, log_softmax, leaky_relu, elu/selu, celu, gelu, silu, mish and
hardtanh/relu6 are primitives (one dispatch each, torch's node names and formulas); the
others are composites of elementwise ops. Every formula follows NOTE [Conjugate Wirtinger
convention] in _primitive.py; the activations here are real-only in torch except silu,
whose formula is a holomorphic one.
"""
import math

import jax
import jax.numpy as jnp

from .._tensor import _wrap_dim
from ._primitive import Primitive, holomorphic
from .. import _dtype as D
from .elementwise import _floating_only, _kernel_rejects, _real_only, abs, softplus, where

__all__ = ["softmax", "log_softmax", "selu", "celu", "hardshrink", "prelu"]
METHODS = ("softmax", "log_softmax", "hardshrink", "prelu")
FUNCTIONAL = ("softmax", "log_softmax", "softmin", "leaky_relu", "elu", "selu", "celu",
              "gelu", "silu", "mish", "hardtanh", "relu6", "hardshrink", "softshrink", "prelu")

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

_leaky_relu = Primitive(
    "leaky_relu", lambda self, *, negative_slope: jnp.where(self > 0, self,
                                                              self * negative_slope),
    self=lambda grad, self, negative_slope: where(self > 0, grad, grad * negative_slope))


def leaky_relu(input, negative_slope=0.01):
    """``x`` for ``x > 0``, else ``negative_slope * x`` (the slope's side at 0, as torch).

    Examples
    --------
    >>> wgrad.nn.functional.leaky_relu(wgrad.tensor([-1., 2.]), 0.5)
    tensor([-0.5000,  2.0000])
    """
    _kernel_rejects("leaky_relu_cpu", "buic", input)
    return _leaky_relu(input, negative_slope=negative_slope)


# Each activation below is one primitive with torch's node (GeluBackward0, EluBackward0...)
# and torch's formula (derivatives.yaml), written with tensor ops so it differentiates again.

def _elu_fwd(self, *, alpha, scale, input_scale):
    # expm1 sees only x <= 0: a large positive x would overflow the unused branch
    neg = alpha * jnp.expm1(jnp.minimum(self, 0.0) * input_scale)
    out = jnp.where(self > 0, self, neg)
    return out if scale == 1 else out * scale


def _elu_backward(grad, self, alpha, scale, input_scale):
    # exp sees x < 0 only (its derivative is 0 at x == 0, as torch's double backward)
    neg = (where(self < 0, self, 0.) * input_scale).exp() * (alpha * scale * input_scale)
    return grad * where(self > 0, scale, neg)


_elu_prim = Primitive("elu", _elu_fwd, self=_elu_backward)
_celu_prim = Primitive("celu", _elu_fwd, self=_elu_backward)


def _elu(input, alpha, scale, name):
    _floating_only(name, input)
    return _elu_prim(input, alpha=alpha, scale=scale, input_scale=1.0)


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
    _floating_only("elu_cpu", input)
    if alpha == 0:
        raise RuntimeError("ZeroDivisionError: alpha cannot be 0 for CELU")
    return _celu_prim(input, alpha=alpha, scale=1.0, input_scale=1.0 / alpha)


_SQRT_HALF = math.sqrt(0.5)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)


def _gelu_fwd(self, *, approximate):
    if approximate == "tanh":
        inner = _SQRT_2_OVER_PI * (self + 0.044715 * self * self * self)
        return 0.5 * self * (1 + jnp.tanh(inner))
    return 0.5 * self * (1 + jax.scipy.special.erf(self * _SQRT_HALF))


def _gelu_backward(grad, self, approximate):
    if approximate == "tanh":
        x_sq = self * self
        t = (_SQRT_2_OVER_PI * (self + 0.044715 * x_sq * self)).tanh()
        right = 0.5 * self * (1 - t * t) * (_SQRT_2_OVER_PI * (1 + 3 * 0.044715 * x_sq))
        return grad * (0.5 * (1 + t) + right)
    cdf = 0.5 * (1 + (self * _SQRT_HALF).erf())
    pdf = (self * self * -0.5).exp() * (1 / math.sqrt(2 * math.pi))
    return grad * (cdf + self * pdf)


_gelu = Primitive("gelu", _gelu_fwd, self=_gelu_backward)


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
    _kernel_rejects("GeluKernelImpl", "buic", input)
    return _gelu(input, approximate=approximate)


def _silu_derivative(self):
    s = self.sigmoid()
    return s * (1 + self * (1 - s))


_silu = Primitive("silu", lambda self: self * jax.nn.sigmoid(self),
                  self=holomorphic(_silu_derivative))
_mish = Primitive(
    "mish", lambda self: self * jnp.tanh(jax.nn.softplus(self)),
    self=lambda grad, self: grad * _mish_derivative(self))


def _mish_derivative(self):
    t = softplus(self).tanh()
    return t + self * self.sigmoid() * (1 - t * t)


def silu(input):
    """``x * sigmoid(x)`` (complex input too, as torch).

    Examples
    --------
    >>> wgrad.nn.functional.silu(wgrad.tensor([0.]))
    tensor([0.])
    """
    _kernel_rejects("silu_cpu", "bui", input)
    return _silu(input)


def mish(input):
    """``x * tanh(softplus(x))``.

    Examples
    --------
    >>> wgrad.nn.functional.mish(wgrad.tensor([0.]))
    tensor([0.])
    """
    _real_only("mish_cpu", input)
    return _mish(input)


def hardtanh(input, min_val=-1.0, max_val=1.0):
    """``clamp(x, min_val, max_val)``; the gradient passes only strictly inside the range
    (torch's hardtanh_backward), unlike clamp's, which includes the ends.

    Examples
    --------
    >>> wgrad.nn.functional.hardtanh(wgrad.tensor([-2., 0.5, 3.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """
    if input.is_complex():
        raise NotImplementedError("clamp is not supported for complex types")
    if input.dtype is D.bool:
        raise RuntimeError("Bool inputs not supported for hardtanh")
    if input.dtype is D.uint8 and (math.trunc(min_val) < 0 or math.trunc(max_val) < 0):
        raise RuntimeError("cannot do hardtanh on an unsigned type with negative limits")
    if min_val > max_val:
        raise ValueError("min_val cannot be greater than max_val")
    return _hardtanh(input, min_val=min_val, max_val=max_val)


# the gradient passes strictly inside the range only (torch's hardtanh_backward)
_hardtanh = Primitive(
    "hardtanh", lambda self, *, min_val, max_val: jnp.clip(  # an integer input stays one
        self, min_val, max_val).astype(self.dtype),
    self=lambda grad, self, min_val, max_val: where(
        (self > min_val) & (self < max_val), grad, 0.))


def relu6(input):
    """``hardtanh(x, 0, 6)``.

    Examples
    --------
    >>> wgrad.nn.functional.relu6(wgrad.tensor([-1., 7.]))
    tensor([0., 6.])
    """
    return hardtanh(input, 0.0, 6.0)



def prelu(input, weight):
    """``x`` for ``x > 0``, else ``weight * x``; ``weight`` has one entry or one per channel
    (dim 1). The gradient at 0 is ``weight``'s side, as torch.

    Examples
    --------
    >>> wgrad.prelu(wgrad.tensor([-2., 3.]), wgrad.tensor([0.25]))
    tensor([-0.5000,  3.0000])
    """
    if weight.dtype is not input.dtype:
        raise RuntimeError(f"prelu: Type promoting not supported. Got "
                           f"{input.dtype.scalar_name} and {weight.dtype.scalar_name}")
    if weight.ndim > 1:
        raise RuntimeError(f"prelu: Expected `weight` to be a scalar or 1D tensor, but got: "
                           f"ndim = {weight.ndim}")
    _floating_only("prelu_cpu", input)
    n = weight.numel()
    if n != 1:
        c = input.shape[1] if input.ndim >= 2 else 1
        if n != c:
            raise RuntimeError(f"Mismatch of parameter numbers and input channel size. Found "
                               f"parameter numbers = {n} and channel size = {c}.")
        w = weight.reshape((1, c) + (1,) * (input.ndim - 2)) if input.ndim >= 2 else weight
    else:
        w = weight.reshape(())
    return where(input > 0, input, w * input)


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
