"""Conv1d/2d/3d and ConvTranspose1d/2d/3d (real or complex weights)."""

from ..._creation import empty
from .. import functional as F
from ..parameter import Parameter
from .linear import reset_kaiming
from .module import Module

__all__ = ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose1d", "ConvTranspose2d", "ConvTranspose3d"]

_PADDING_MODES = {"zeros", "reflect", "replicate", "circular"}


def _ntuple(n):
    def parse(x):
        if isinstance(x, (tuple, list)):
            return tuple(x)
        return (x,) * n
    return parse


_single, _pair, _triple = _ntuple(1), _ntuple(2), _ntuple(3)


class _ConvNd(Module):
    _n = 0

    def __init__(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
                 transposed, output_padding, groups, bias, padding_mode, device=None,
                 dtype=None):
        super().__init__()
        if groups <= 0:
            raise ValueError("groups must be a positive integer")
        if in_channels % groups != 0:
            raise ValueError("in_channels must be divisible by groups")
        if out_channels % groups != 0:
            raise ValueError("out_channels must be divisible by groups")
        if isinstance(padding, str):
            valid = {"same", "valid"}
            if padding not in valid:
                raise ValueError(f"Invalid padding string {padding!r}, should be one of "
                                 f"{valid}")
            if padding == "same" and any(s != 1 for s in stride):
                raise ValueError("padding='same' is not supported for strided convolutions")
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"padding_mode must be one of {_PADDING_MODES}, but got "
                             f"padding_mode='{padding_mode}'")
        self.in_channels = in_channels
        self.out_channels = out_channels
        self.kernel_size = kernel_size
        self.stride = stride
        self.padding = padding
        self.dilation = dilation
        self.transposed = transposed
        self.output_padding = output_padding
        self.groups = groups
        self.padding_mode = padding_mode
        if isinstance(padding, str):
            self._reversed_padding_repeated_twice = [0, 0] * len(kernel_size)
            if padding == "same":
                for d, k, i in zip(dilation, kernel_size,
                                   range(len(kernel_size) - 1, -1, -1)):
                    total = d * (k - 1)
                    left = total // 2
                    self._reversed_padding_repeated_twice[2 * i] = left
                    self._reversed_padding_repeated_twice[2 * i + 1] = total - left
        else:
            self._reversed_padding_repeated_twice = [p for p in reversed(padding)
                                                     for _ in range(2)]
        shape = ((in_channels, out_channels // groups) if transposed
                 else (out_channels, in_channels // groups)) + tuple(kernel_size)
        self.weight = Parameter(empty(*shape, device=device, dtype=dtype))
        if bias:
            self.bias = Parameter(empty(out_channels, device=device, dtype=dtype))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self):
        reset_kaiming(self.weight, self.bias, keep_bias_without_fan_in=True)

    def extra_repr(self):
        n = len(self.kernel_size)
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * n:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * n:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * n:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s

    def __setstate__(self, state):
        super().__setstate__(state)
        if not hasattr(self, "padding_mode"):
            self.padding_mode = "zeros"


class _Conv(_ConvNd):
    _conv = None
    _tuple = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride),
                         padding if isinstance(padding, str) else t(padding), t(dilation),
                         False, t(0), groups, bias, padding_mode, device, dtype)

    def _conv_forward(self, input, weight, bias):
        conv = type(self)._conv
        if self.padding_mode != "zeros":
            mode = "constant" if self.padding_mode == "zeros" else self.padding_mode
            return conv(F.pad(input, self._reversed_padding_repeated_twice, mode=mode),
                        weight, bias, self.stride, self._tuple(0), self.dilation, self.groups)
        return conv(input, weight, bias, self.stride, self.padding, self.dilation,
                    self.groups)

    def forward(self, input):
        return self._conv_forward(input, self.weight, self.bias)


class Conv1d(_Conv):
    """1-D convolution over ``(N, C_in, L)`` (or unbatched ``(C_in, L)``) input; real or
    complex.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Conv1d(2, 4, 3, padding=1)(wgrad.ones(1, 2, 5)).shape
    wgrad.Size([1, 4, 5])
    """

    _conv = staticmethod(F.conv1d)
    _tuple = staticmethod(_single)


class Conv2d(_Conv):
    """2-D convolution over ``(N, C_in, H, W)`` (or unbatched) input; real or complex.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Conv2d(1, 2, 3)(wgrad.ones(1, 1, 5, 5)).shape
    wgrad.Size([1, 2, 3, 3])
    """

    _conv = staticmethod(F.conv2d)
    _tuple = staticmethod(_pair)


class _ConvTransposeNd(_ConvNd):
    _fn_name = None
    _tuple = None

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        if padding_mode != "zeros":
            raise ValueError(f'Only "zeros" padding mode is supported for '
                             f'{type(self).__name__}')
        t = self._tuple
        super().__init__(in_channels, out_channels, t(kernel_size), t(stride), t(padding),
                         t(dilation), True, t(output_padding), groups, bias, padding_mode,
                         device, dtype)

    def _output_padding(self, input, output_size, stride, padding, kernel_size,
                        num_spatial_dims, dilation=None):
        if output_size is None:
            return self.output_padding
        has_batch = input.dim() == num_spatial_dims + 2
        output_size = list(output_size)
        if len(output_size) == num_spatial_dims + (2 if has_batch else 1):
            output_size = output_size[-num_spatial_dims:]
        if len(output_size) != num_spatial_dims:
            raise ValueError(f"ConvTranspose{num_spatial_dims}D: for {input.dim()}D input, "
                             f"output_size must have {num_spatial_dims} or "
                             f"{num_spatial_dims + 2} elements (got {len(output_size)})")
        lead = input.dim() - num_spatial_dims
        out = []
        for d in range(num_spatial_dims):
            dil = 1 if dilation is None else dilation[d]
            lo = ((input.size(d + lead) - 1) * stride[d] - 2 * padding[d]
                  + dil * (kernel_size[d] - 1) + 1)
            hi = lo + stride[d] - 1
            if not lo <= output_size[d] <= hi:
                raise ValueError(f"requested an output size of {output_size}, but valid sizes "
                                 f"range from {[lo]} to {[hi]} (for an input of "
                                 f"{list(input.shape[lead:])})")
            out.append(output_size[d] - lo)
        return tuple(out)

    def forward(self, input, output_size=None):
        n = len(self.kernel_size)
        op = self._output_padding(input, output_size, self.stride, self.padding,
                                  self.kernel_size, n, self.dilation)
        fn = getattr(F, self._fn_name)
        return fn(input, self.weight, self.bias, self.stride, self.padding, op, self.groups,
                  self.dilation)


class ConvTranspose1d(_ConvTransposeNd):
    """1-D transposed convolution (the adjoint of Conv1d); real or complex.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.ConvTranspose1d(2, 3, 3, stride=2)(wgrad.ones(1, 2, 4)).shape
    wgrad.Size([1, 3, 9])
    """

    _fn_name = "conv_transpose1d"
    _tuple = staticmethod(_single)


class ConvTranspose2d(_ConvTransposeNd):
    """2-D transposed convolution (the adjoint of Conv2d); real or complex.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.ConvTranspose2d(2, 3, 3)(wgrad.ones(1, 2, 4, 4)).shape
    wgrad.Size([1, 3, 6, 6])
    """

    _fn_name = "conv_transpose2d"
    _tuple = staticmethod(_pair)


class Conv3d(_Conv):
    """3-D convolution over ``(N, C_in, D, H, W)`` (or unbatched) input; real or complex.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Conv3d(1, 2, 3, padding=1)(wgrad.ones(1, 1, 3, 4, 4)).shape
    wgrad.Size([1, 2, 3, 4, 4])
    """

    _conv = staticmethod(F.conv3d)
    _tuple = staticmethod(_triple)


class ConvTranspose3d(_ConvTransposeNd):
    """3-D transposed convolution (the adjoint of Conv3d); real or complex.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.ConvTranspose3d(2, 1, 2, stride=2)(wgrad.ones(1, 2, 2, 2, 2)).shape
    wgrad.Size([1, 1, 4, 4, 4])
    """

    _fn_name = "conv_transpose3d"
    _tuple = staticmethod(_triple)

