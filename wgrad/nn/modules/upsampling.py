"""Upsample, UpsamplingNearest2d, UpsamplingBilinear2d (over ``nn.functional.interpolate``)."""
from .. import _interpolation as I
from .module import Module

__all__ = ["Upsample", "UpsamplingNearest2d", "UpsamplingBilinear2d"]


class Upsample(Module):
    """Resample by ``size`` or ``scale_factor`` (:func:`wgrad.nn.functional.interpolate`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Upsample(scale_factor=2)(wgrad.tensor([[[1., 2.]]]))
    tensor([[[1., 1., 2., 2.]]])
    """

    def __init__(self, size=None, scale_factor=None, mode="nearest", align_corners=None,
                 recompute_scale_factor=None):
        super().__init__()
        self.name = type(self).__name__
        self.size = size
        if isinstance(scale_factor, tuple):
            self.scale_factor = tuple(float(f) for f in scale_factor)
        else:
            self.scale_factor = float(scale_factor) if scale_factor else None
        self.mode = mode
        self.align_corners = align_corners
        self.recompute_scale_factor = recompute_scale_factor

    def forward(self, input):
        return I.interpolate(input, self.size, self.scale_factor, self.mode, self.align_corners,
                             recompute_scale_factor=self.recompute_scale_factor)

    def extra_repr(self):
        if self.scale_factor is not None:
            info = "scale_factor=" + repr(self.scale_factor)
        else:
            info = "size=" + repr(self.size)
        return info + ", mode=" + repr(self.mode)


class UpsamplingNearest2d(Upsample):
    """Nearest-neighbour 2-D upsampling (deprecated in torch in favour of Upsample).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.UpsamplingNearest2d(scale_factor=2)(wgrad.ones(1, 1, 1, 1)).shape
    wgrad.Size([1, 1, 2, 2])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="nearest")


class UpsamplingBilinear2d(Upsample):
    """Bilinear 2-D upsampling with ``align_corners=True`` (deprecated in torch).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.UpsamplingBilinear2d(size=3)(wgrad.ones(1, 1, 2, 2)).shape
    wgrad.Size([1, 1, 3, 3])
    """

    def __init__(self, size=None, scale_factor=None):
        super().__init__(size, scale_factor, mode="bilinear", align_corners=True)
