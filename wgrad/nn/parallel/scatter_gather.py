"""``scatter``, ``scatter_kwargs`` and ``gather``: nested tuples, lists, dicts and
namedtuples of tensors split across GPUs and joined again (torch.nn.parallel's; without a
GPU their tensor parts raise as a CPU-only torch's, NOTE [CUDA communication without a
GPU])."""
import warnings

from ..._tensor import Tensor
from . import _functions

__all__ = ["scatter", "scatter_kwargs", "gather"]


def is_namedtuple(obj):
    """Whether ``obj`` is a namedtuple (deprecated, as in torch)."""
    warnings.warn("`is_namedtuple` is deprecated, please use the python checks instead",
                  FutureWarning, stacklevel=2)
    return _is_namedtuple(obj)


def _is_namedtuple(obj):
    return isinstance(obj, tuple) and hasattr(obj, "_asdict") and hasattr(obj, "_fields")


def scatter(inputs, target_gpus, dim=0):
    """One piece of ``inputs`` per GPU of ``target_gpus``: tensors cut along ``dim``,
    containers rebuilt around their pieces, anything else repeated.

    Examples
    --------
    >>> wgrad.nn.parallel.scatter((1, "a"), [0, 1])
    [(1, 'a'), (1, 'a')]
    """
    def scatter_map(obj):
        if isinstance(obj, Tensor):
            return _functions.scatter(target_gpus, None, dim, obj)
        if _is_namedtuple(obj):
            return [type(obj)(*args) for args in zip(*map(scatter_map, obj))]
        if isinstance(obj, tuple) and len(obj) > 0:
            return list(zip(*map(scatter_map, obj)))
        if isinstance(obj, list) and len(obj) > 0:
            return [list(i) for i in zip(*map(scatter_map, obj))]
        if isinstance(obj, dict) and len(obj) > 0:
            return [type(obj)(i) for i in zip(*map(scatter_map, obj.items()))]
        return [obj for _ in target_gpus]

    return scatter_map(inputs)


def scatter_kwargs(inputs, kwargs, target_gpus, dim=0):
    """:func:`scatter` of the positional ``inputs`` and of ``kwargs``, padded with empty
    tuples or dicts to the same number of pieces.

    Examples
    --------
    >>> wgrad.nn.parallel.scatter_gather.scatter_kwargs((), {"a": 1}, [0, 1])
    (((), ()), ({'a': 1}, {'a': 1}))
    """
    scattered_inputs = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered_inputs) < len(scattered_kwargs):
        scattered_inputs.extend(() for _ in range(len(scattered_kwargs) - len(scattered_inputs)))
    elif len(scattered_kwargs) < len(inputs):  # torch compares with len(inputs) here
        scattered_kwargs.extend({} for _ in range(len(scattered_inputs) - len(scattered_kwargs)))
    return tuple(scattered_inputs), tuple(scattered_kwargs)


def gather(outputs, target_device, dim=0):
    """The per-GPU ``outputs`` joined: tensors concatenated along ``dim`` on
    ``target_device`` ("cpu" for the CPU), containers rebuilt, None kept.

    Examples
    --------
    >>> wgrad.nn.parallel.gather([{"a": None}, {"a": None}], 0)
    {'a': None}
    """
    def gather_map(outputs):
        out = outputs[0]
        if isinstance(out, Tensor):
            return _functions.gather(target_device, dim, *outputs)
        if out is None:
            return None
        if isinstance(out, dict):
            if not all(len(out) == len(d) for d in outputs):
                raise ValueError("All dicts must have the same number of keys")
            return type(out)((k, gather_map([d[k] for d in outputs])) for k in out)
        if _is_namedtuple(out):
            return type(out)._make(map(gather_map, zip(*outputs, strict=True)))
        return type(out)(map(gather_map, zip(*outputs, strict=True)))

    return gather_map(outputs)
