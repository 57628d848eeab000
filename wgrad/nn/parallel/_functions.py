"""torch.nn.parallel's autograd functions (Broadcast, Gather, Scatter) as compositions of
differentiable wgrad ops: copies to devices, ``chunk``/``split`` and ``cat`` carry the
gradients back, as torch's hand-written backwards do (NOTE [CUDA communication without
a GPU])."""
import warnings

from . import comm
from .comm import _get_device_index

__all__ = ["broadcast", "gather", "scatter"]


def broadcast(target_gpus, *inputs):
    """Copies of ``inputs`` on each of ``target_gpus``, flattened device by device
    (torch's ``Broadcast.apply``)."""
    if any(comm._on_cpu(i) for i in inputs):
        raise AssertionError("Broadcast function not implemented for CPU tensors")
    target_gpus = [_get_device_index(x, True) for x in target_gpus]
    if len(inputs) == 0:
        return ()
    copies = comm._broadcast_coalesced(inputs, target_gpus)
    return tuple(t for per_device in copies for t in per_device)


def gather(target_device, dim, *inputs):
    """``inputs`` (GPU tensors) concatenated along ``dim`` on ``target_device`` (torch's
    ``Gather.apply``): scalars gathered along 0 become a vector, with torch's warning."""
    if any(comm._on_cpu(i) for i in inputs):
        raise AssertionError("Gather function not implemented for CPU tensors")
    if target_device != "cpu":
        target_device = _get_device_index(target_device, True)
    if all(t.dim() == 0 for t in inputs) and dim == 0:
        inputs = tuple(t.view(1) for t in inputs)
        warnings.warn("Was asked to gather along dimension 0, but all input tensors were "
                      "scalars; will instead unsqueeze and return a vector.", stacklevel=3)
    return comm._gather(inputs, dim, target_device, stacklevel=3)


def scatter(target_gpus, chunk_sizes, dim, input):
    """``input`` cut along ``dim`` and copied to ``target_gpus`` (torch's
    ``Scatter.apply``)."""
    target_gpus = [_get_device_index(x, True) for x in target_gpus]
    return comm._scatter(input, target_gpus, chunk_sizes, dim)
