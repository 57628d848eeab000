"""``wgrad.autograd.graph``: torch.autograd.graph's names.

The graph itself (Node, GradientEdge, hooks, saved-tensor hook state) lives in
``wgrad._autograd.graph``, which knows no Tensor; what needs a Tensor is here.
"""
import jax
import numpy as np

from .._autograd.graph import (GradientEdge, Node, disable_saved_tensors_hooks,
                               get_gradient_edge, register_multi_grad_hook,
                               saved_tensors_hooks)
from .._tensor import Tensor
from ._allow_mutation import allow_mutation_on_saved_tensors

__all__ = ["Node", "GradientEdge", "get_gradient_edge", "increment_version",
           "register_multi_grad_hook", "saved_tensors_hooks", "save_on_cpu",
           "disable_saved_tensors_hooks", "allow_mutation_on_saved_tensors"]


def increment_version(tensor):
    """Bump the version counter of ``tensor`` (or of each tensor in an iterable), as an
    in-place change made outside wgrad would: saved copies of it then refuse to unpack.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(2)
    >>> wgrad.autograd.graph.increment_version(x)
    >>> x._version
    1
    """
    for t in ((tensor,) if isinstance(tensor, Tensor) else tensor):
        t._vc.v += 1


class save_on_cpu(saved_tensors_hooks):
    """Saved tensors live in host memory (numpy copies) until backward needs them, then
    go back to the device they came from.

    ``pin_memory`` is accepted for torch compatibility; JAX has no pinned host buffers.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(3, requires_grad=True)
    >>> with wgrad.autograd.graph.save_on_cpu():
    ...     y = (x.exp() * x).sum()
    >>> y.backward()
    """

    def __init__(self, pin_memory=False, device_type="cuda"):
        super().__init__(_pack_on_cpu, _unpack_from_cpu)


def _pack_on_cpu(t):
    data = t._data
    try:
        dev = next(iter(data.devices()))
    except Exception:  # a tracer: nothing to offload
        return (None, data)
    return (dev, np.array(data, copy=True))


def _unpack_from_cpu(packed):
    dev, arr = packed
    return Tensor._make(arr if dev is None else jax.device_put(arr, dev))
