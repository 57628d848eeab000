"""``wgrad.nn.functional``: conv1d, conv2d (complex inputs and weights) and pad."""
from ..ops.conv import conv1d, conv2d
from ..ops.shape import pad

__all__ = ["conv1d", "conv2d", "pad"]
