"""``convert_conv2d_weight_memory_format`` / ``convert_conv3d_weight_memory_format``
(torch.nn.utils.memory_format). wgrad keeps no strides (memory formats are accepted and
ignored), so the weights keep their values and objects; the formats torch rejects for a
weight raise its errors."""
from ...ops.shape import check_memory_format
from ..modules.conv import Conv2d, Conv3d, ConvTranspose2d, ConvTranspose3d

__all__ = ["convert_conv2d_weight_memory_format", "convert_conv3d_weight_memory_format"]

def _check_format(weight, memory_format):
    """torch's errors of ``weight.contiguous(memory_format=...)`` for this format."""
    check_memory_format("clone", weight.dim(), memory_format)
    if getattr(memory_format, "_name", None) == "preserve_format":
        raise RuntimeError("Unsupported memory formatPreserve")


def _convert(module, memory_format, kinds):
    if isinstance(module, kinds):
        _check_format(module.weight, memory_format)
    for child in module.children():
        _convert(child, memory_format, kinds)
    return module


def convert_conv2d_weight_memory_format(module, memory_format):
    """Give the weight of every ``Conv2d``/``ConvTranspose2d`` in ``module`` (itself
    included) ``memory_format``; returns ``module``. In wgrad only the checks remain.

    Example
    -------
    >>> m = wgrad.nn.Sequential(wgrad.nn.Conv2d(2, 2, 1))
    >>> wgrad.nn.utils.convert_conv2d_weight_memory_format(m, wgrad.channels_last) is m
    True
    """
    return _convert(module, memory_format, (Conv2d, ConvTranspose2d))


def convert_conv3d_weight_memory_format(module, memory_format):
    """Give the weight of every ``Conv3d``/``ConvTranspose3d`` in ``module`` (itself
    included) ``memory_format``; returns ``module``. In wgrad only the checks remain.

    Example
    -------
    >>> m = wgrad.nn.Sequential(wgrad.nn.Conv3d(2, 2, 1))
    >>> wgrad.nn.utils.convert_conv3d_weight_memory_format(m, wgrad.channels_last_3d) is m
    True
    """
    return _convert(module, memory_format, (Conv3d, ConvTranspose3d))
