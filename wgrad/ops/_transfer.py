"""Moving a tensor between devices, differentiably (``Tensor.to(device)``, ``.cpu()``,
``.cuda()``): the gradient moves back to where the input was."""
import jax

from .._device import device as _device
from ._primitive import Primitive

__all__ = ["to_device", "cuda"]


def _move(self, *, device, src):
    return jax.device_put(self, device)


_to_dev = Primitive("to_device", _move, jit=False, node_name="ToCopyBackward0",
                    self=lambda grad, device, src: _to_dev(grad, device=src, src=device))


def _current_jax_device(data):
    try:
        devs = data.devices()
    except Exception:  # a tracer: placement is decided by the enclosing jit
        return None
    return next(iter(devs)) if len(devs) == 1 else None


def to_device(tensor, device):
    """Move ``tensor`` to ``device`` (a string, index or ``wgrad.device``); differentiable:
    the gradient moves back. Returns ``tensor`` itself when it is already there."""
    dst = _device(device).jax_device()
    src = _current_jax_device(tensor._data)
    if src is None or src == dst:
        return tensor
    return _to_dev(tensor, device=dst, src=src)


def cuda(tensor, device=None):
    """``Tensor.cuda(device)``: ``device`` defaults to the current CUDA device."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        device = _device("cuda", device)
    return to_device(tensor, device)
