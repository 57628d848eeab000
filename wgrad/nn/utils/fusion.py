"""Folding an eval-mode BatchNorm into the convolution or linear layer before it
(torch.nn.utils.fusion): ``bn(conv(x)) == fused_conv(x)`` with the running statistics."""
import copy

from ..._creation import ones_like, zeros_like
from ...ops.elementwise import rsqrt
from ..parameter import Parameter

__all__ = ["fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights"]


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of ``conv`` (eval mode) with ``bn`` (eval mode, with running statistics)
    folded into its weight and bias; ``transpose`` for a transposed convolution.

    Example
    -------
    >>> conv, bn = wgrad.nn.Conv2d(2, 3, 1).eval(), wgrad.nn.BatchNorm2d(3).eval()
    >>> x = wgrad.randn(1, 2, 4, 4)
    >>> fused = wgrad.nn.utils.fuse_conv_bn_eval(conv, bn)
    >>> bool(wgrad.allclose(fused(x), bn(conv(x)), atol=1e-6))
    True
    """
    if conv.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_conv = copy.deepcopy(conv)
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_conv.weight, fused_conv.bias = fuse_conv_bn_weights(
        fused_conv.weight, fused_conv.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias, transpose)
    return fused_conv


def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The fused ``(weight, bias)`` Parameters of a convolution followed by a BatchNorm
    (``conv_b``, ``bn_w``, ``bn_b`` may be None); the results keep the conv's dtypes.

    Example
    -------
    >>> w, b = wgrad.nn.utils.fuse_conv_bn_weights(
    ...     wgrad.ones(2, 1, 1), None, wgrad.zeros(2), wgrad.ones(2), 0.0,
    ...     wgrad.tensor([2.0, 3.0]), wgrad.tensor([1.0, 1.0]))
    >>> w.flatten().tolist(), b.tolist()
    ([2.0, 3.0], [1.0, 1.0])
    """
    conv_weight_dtype = conv_w.dtype
    conv_bias_dtype = conv_b.dtype if conv_b is not None else conv_weight_dtype
    if conv_b is None:
        conv_b = zeros_like(bn_rm)
    if bn_w is None:
        bn_w = ones_like(bn_rm)
    if bn_b is None:
        bn_b = zeros_like(bn_rm)
    bn_var_rsqrt = rsqrt(bn_rv + bn_eps)
    shape = ([1, -1] if transpose else [-1, 1]) + [1] * (len(conv_w.shape) - 2)
    fused_conv_w = (conv_w * (bn_w * bn_var_rsqrt).reshape(shape)).to(dtype=conv_weight_dtype)
    fused_conv_b = ((conv_b - bn_rm) * bn_var_rsqrt * bn_w + bn_b).to(dtype=conv_bias_dtype)
    return (Parameter(fused_conv_w, conv_w.requires_grad),
            Parameter(fused_conv_b, conv_b.requires_grad))


def fuse_linear_bn_eval(linear, bn):
    """A copy of ``linear`` (eval mode) with ``bn`` (eval mode, ``num_features`` equal to
    ``out_features`` or 1) folded into its weight and bias.

    Example
    -------
    >>> lin, bn = wgrad.nn.Linear(3, 2).eval(), wgrad.nn.BatchNorm1d(2).eval()
    >>> x = wgrad.randn(4, 3)
    >>> fused = wgrad.nn.utils.fuse_linear_bn_eval(lin, bn)
    >>> bool(wgrad.allclose(fused(x), bn(lin(x)), atol=1e-6))
    True
    """
    if linear.training or bn.training:
        raise AssertionError("Fusion only for eval!")
    fused_linear = copy.deepcopy(linear)
    # the bn's channels must broadcast against the linear's last (output) dim
    if linear.out_features != bn.num_features and bn.num_features != 1:
        raise AssertionError("To fuse, linear.out_features == bn.num_features or "
                             "bn.num_features == 1, got linear.out_features="
                             f"{linear.out_features} and bn.num_features={bn.num_features}")
    if bn.running_mean is None or bn.running_var is None:
        raise AssertionError("bn.running_mean and bn.running_var must not be None")
    fused_linear.weight, fused_linear.bias = fuse_linear_bn_weights(
        fused_linear.weight, fused_linear.bias, bn.running_mean, bn.running_var, bn.eps,
        bn.weight, bn.bias)
    return fused_linear


def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The fused ``(weight, bias)`` Parameters of a linear layer followed by a BatchNorm
    (``linear_b`` may be None); the results keep the linear's dtypes.

    Example
    -------
    >>> w, b = wgrad.nn.utils.fuse_linear_bn_weights(
    ...     wgrad.ones(2, 1), None, wgrad.zeros(2), wgrad.ones(2), 0.0,
    ...     wgrad.tensor([2.0, 3.0]), wgrad.tensor([1.0, 1.0]))
    >>> w.flatten().tolist(), b.tolist()
    ([2.0, 3.0], [1.0, 1.0])
    """
    linear_weight_dtype = linear_w.dtype
    linear_bias_dtype = linear_b.dtype if linear_b is not None else linear_weight_dtype
    if linear_b is None:
        linear_b = zeros_like(bn_rm)
    bn_scale = bn_w * rsqrt(bn_rv + bn_eps)
    fused_w = linear_w * bn_scale.unsqueeze(-1).to(dtype=linear_weight_dtype)
    fused_b = ((linear_b - bn_rm) * bn_scale + bn_b).to(dtype=linear_bias_dtype)
    return (Parameter(fused_w, linear_w.requires_grad),
            Parameter(fused_b, linear_b.requires_grad))
