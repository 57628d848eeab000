"""``data_parallel``, the functional form of ``DataParallel``: scatter the inputs over
the GPUs, run a replica of the module on each, gather the outputs (torch.nn.parallel's).
Without a GPU it raises, as a CPU-only torch's (``DataParallel`` runs the module
instead)."""
import itertools

from ... import cuda as _cuda
from ..modules.remaining import DataParallel
from . import comm
from .comm import _get_device_index
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter_kwargs

__all__ = ["DataParallel", "data_parallel"]


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """``module(*inputs, **module_kwargs)`` split along ``dim`` over the GPUs
    ``device_ids`` (all by default), the outputs gathered on ``output_device``
    (``device_ids[0]`` by default; -1 or "cpu": the CPU). The module's parameters and
    buffers must be on ``device_ids[0]``.

    Examples
    --------
    >>> ok = wgrad.cuda.is_available()
    >>> try:
    ...     y = wgrad.nn.parallel.data_parallel(wgrad.nn.ReLU(), wgrad.ones(2))
    ... except RuntimeError as e:  # no GPU: torch's error without an accelerator
    ...     ok = str(e) == "device type could not be determined"
    >>> ok
    True
    """
    if not isinstance(inputs, tuple):
        inputs = (inputs,) if inputs is not None else ()
    if not _cuda.is_available():
        raise RuntimeError("device type could not be determined")
    if device_ids is None:
        device_ids = list(range(_cuda.device_count()))
    if output_device is None:
        output_device = device_ids[0]
    device_ids = [_get_device_index(x, True) for x in device_ids]
    output_device = _get_device_index(output_device, True)
    src = comm._dev(device_ids[0])
    for t in itertools.chain(module.parameters(), module.buffers()):
        if t.device != src:
            raise RuntimeError(f"module must have its parameters and buffers on device {src} "
                               f"(device_ids[0]) but found one of them on device: {t.device}")
    inputs, module_kwargs = scatter_kwargs(inputs, module_kwargs, device_ids, dim)
    if not inputs and not module_kwargs:
        inputs, module_kwargs = ((),), ({},)
    if len(device_ids) == 1:
        return module(*inputs[0], **module_kwargs[0])
    used = device_ids[:len(inputs)]
    replicas = replicate(module, used)
    outputs = parallel_apply(replicas, inputs, module_kwargs, used)
    return gather(outputs, output_device, dim)
