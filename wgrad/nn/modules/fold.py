"""Fold (col2im) and Unfold (im2col)."""
from .. import _interpolation as I
from .module import Module

__all__ = ["Fold", "Unfold"]


class Fold(Module):
    """Sum sliding blocks ``(N, C k_h k_w, L)`` into ``(N, C, *output_size)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Fold((3, 3), 2)(wgrad.ones(1, 4, 4)).shape
    wgrad.Size([1, 1, 3, 3])
    """

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size = output_size
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return I.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")


class Unfold(Module):
    """Extract sliding blocks: ``(N, C, H, W) -> (N, C k_h k_w, L)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Unfold(2)(wgrad.ones(1, 1, 3, 3)).shape
    wgrad.Size([1, 4, 4])
    """

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size = kernel_size
        self.dilation = dilation
        self.padding = padding
        self.stride = stride

    def forward(self, input):
        return I.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")
