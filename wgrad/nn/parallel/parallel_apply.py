"""``parallel_apply``: each replica applied to its own input on its own GPU
(torch.nn.parallel's). wgrad runs the replicas one after the other (JAX dispatches
asynchronously, so the GPUs still overlap); without a GPU it raises as a CPU-only torch.
"""
import sys
import traceback

from ... import cuda as _cuda
from ..._tensor import Tensor
from .comm import _get_cuda_device_index, _get_device_index

__all__ = ["get_a_var", "parallel_apply"]


def get_a_var(obj):
    """The first tensor in ``obj`` (nested lists, tuples and dict items), or None.

    Examples
    --------
    >>> x = wgrad.ones(1)
    >>> get_a_var([1, {"k": x}]) is x, get_a_var((1, "a"))
    (True, None)
    """
    if isinstance(obj, Tensor):
        return obj
    if isinstance(obj, (list, tuple)):
        for result in map(get_a_var, obj):
            if isinstance(result, Tensor):
                return result
    if isinstance(obj, dict):
        for result in map(get_a_var, obj.items()):
            if isinstance(result, Tensor):
                return result
    return None


def _reraise(exc_info, where):
    """torch's ``ExceptionWrapper.reraise``: the exception's type, its traceback in the
    message."""
    exc_type = exc_info[0]
    msg = (f"Caught {exc_type.__name__} {where}.\nOriginal "
           + "".join(traceback.format_exception(*exc_info)))
    try:
        exception = exc_type(msg)
    except Exception:
        raise RuntimeError(msg) from None
    raise exception


def parallel_apply(modules, inputs, kwargs_tup=None, devices=None):
    """``[modules[i](*inputs[i], **kwargs_tup[i])]``, replica ``i`` on ``devices[i]`` (by
    default the device of a tensor in its input); an input that is not a list or tuple
    is the only argument. An exception in a replica is raised again with where it
    happened.

    Examples
    --------
    >>> wgrad.nn.parallel.parallel_apply([wgrad.nn.ReLU()], [wgrad.ones(1)], None, ["cpu"])
    Traceback (most recent call last):
    ValueError: Expected a cuda device, but got: cpu
    """
    if len(modules) != len(inputs):
        raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                             f"number of inputs {len(inputs)}")
    if kwargs_tup is not None:
        if len(modules) != len(kwargs_tup):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of kwargs_tup {len(kwargs_tup)}")
    else:
        kwargs_tup = ({},) * len(modules)
    if devices is not None:
        if len(modules) != len(devices):
            raise AssertionError(f"The number of modules {len(modules)} is not equal to the "
                                 f"number of devices {len(devices)}")
    else:
        devices = [None] * len(modules)
    devices = [_get_cuda_device_index(x, True) for x in devices]
    if devices and not _cuda.is_available():  # torch.accelerator.current_stream(x)
        raise RuntimeError("Cannot access accelerator device when none is available.")
    if not _cuda.is_available():
        raise AssertionError("No available accelerator found.")
    results = []
    for i, (module, input, kwargs, device) in enumerate(zip(modules, inputs, kwargs_tup,
                                                             devices, strict=True)):
        if device is None:
            t = get_a_var(input)
            if t is None:
                raise AssertionError(f"Caught AssertionError in replica {i}, no device was "
                                     f"provided and no tensor input was found; device cannot "
                                     f"be resolved.")
            device = t.get_device()
        device = _get_device_index(device, True)
        try:
            if not isinstance(input, (list, tuple)):
                input = (input,)
            results.append(module(*input, **kwargs))
        except Exception:
            _reraise(sys.exc_info(), f"in replica {i} on device {device}")
    return results
