"""``wgrad.nn.functional``: conv1d, conv2d (complex inputs and weights) and pad."""
from ..ops.conv import conv1d, conv2d  # noqa: F401

__all__ = ["conv1d", "conv2d", "pad"]


def __getattr__(name):
    # pad belongs to the shape family; looked up lazily so this module imports either way
    if name == "pad":
        from ..ops import shape
        if hasattr(shape, "pad"):
            return shape.pad
    raise AttributeError(f"module 'wgrad.nn.functional' has no attribute '{name}'")
