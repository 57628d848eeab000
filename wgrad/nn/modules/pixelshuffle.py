"""PixelShuffle and PixelUnshuffle."""
from .. import _interpolation as I
from .module import Module

__all__ = ["PixelShuffle", "PixelUnshuffle"]


class PixelShuffle(Module):
    """``(*, C r^2, H, W) -> (*, C, H r, W r)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.PixelShuffle(2)(wgrad.ones(1, 4, 1, 1)).shape
    wgrad.Size([1, 1, 2, 2])
    """

    def __init__(self, upscale_factor):
        super().__init__()
        self.upscale_factor = upscale_factor

    def forward(self, input):
        return I.pixel_shuffle(input, self.upscale_factor)

    def extra_repr(self):
        return f"upscale_factor={self.upscale_factor}"


class PixelUnshuffle(Module):
    """``(*, C, H r, W r) -> (*, C r^2, H, W)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.PixelUnshuffle(2)(wgrad.ones(1, 1, 2, 2)).shape
    wgrad.Size([1, 4, 1, 1])
    """

    def __init__(self, downscale_factor):
        super().__init__()
        self.downscale_factor = downscale_factor

    def forward(self, input):
        return I.pixel_unshuffle(input, self.downscale_factor)

    def extra_repr(self):
        return f"downscale_factor={self.downscale_factor}"
