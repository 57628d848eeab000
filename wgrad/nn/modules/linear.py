"""Identity, Linear, Bilinear."""
import math

from ..._creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Identity", "Linear", "Bilinear"]


def reset_kaiming(weight, bias, keep_bias_without_fan_in=False):
    """torch's default initialisation of Linear and Conv layers: kaiming-uniform weight
    (a = sqrt(5)), bias uniform in +-1/sqrt(fan_in); with no fan-in the bias is zero
    (Linear) or left as it is (Conv, ``keep_bias_without_fan_in``)."""
    init.kaiming_uniform_(weight, a=math.sqrt(5))
    if bias is not None:
        fan_in, _ = init._calculate_fan_in_and_fan_out(weight)
        if fan_in > 0 or not keep_bias_without_fan_in:
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(bias, -bound, bound)


class Identity(Module):
    """Returns its input unchanged; accepts and ignores any constructor arguments.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Identity(54, unused="x")(wgrad.ones(2))
    tensor([1., 1.])
    """

    def __init__(self, *args, **kwargs):
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """``y = x @ weight.T + bias`` with weight ``(out_features, in_features)``; real or
    complex (``dtype=wgrad.cfloat``).

    Weight and bias start as U(-1/sqrt(in_features), 1/sqrt(in_features)), torch's
    ``kaiming_uniform_(a=sqrt(5))``.

    Example
    -------
    >>> import wgrad
    >>> m = wgrad.nn.Linear(3, 2, dtype=wgrad.cfloat)
    >>> m(wgrad.ones(4, 3, dtype=wgrad.cfloat)).shape
    wgrad.Size([4, 2])
    """

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in_features, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        reset_kaiming(self.weight, self.bias)

    def forward(self, input):
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Bilinear(Module):
    """``y = x1^T A x2 + b`` with weight ``(out_features, in1_features, in2_features)``.

    Example
    -------
    >>> import wgrad
    >>> m = wgrad.nn.Bilinear(2, 3, 4)
    >>> m(wgrad.ones(5, 2), wgrad.ones(5, 3)).shape
    wgrad.Size([5, 4])
    """

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        self.in1_features = in1_features
        self.in2_features = in2_features
        self.out_features = out_features
        self.weight = Parameter(empty(out_features, in1_features, in2_features,
                                      device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_features, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.weight.size(1))
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
