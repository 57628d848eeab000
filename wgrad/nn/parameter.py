"""``nn.Parameter`` (a leaf Tensor a Module registers as a parameter) and ``nn.Buffer``."""

from .._creation import empty
from .._tensor import Tensor, _init, _new, register_pytree
from ..ops._views import link_alias

__all__ = ["Parameter", "Buffer"]

_ERR_DTYPE = "Only Tensors of floating point and complex dtype can require gradients"


def _alias(cls, data):
    """A new ``cls`` instance sharing ``data``'s array and version counter (as detach())."""
    if not isinstance(data, Tensor):
        raise AttributeError(f"'{type(data).__name__}' object has no attribute 'detach'")
    t = _new(cls)
    _init(t, data._data, None, 0)
    t._vc = data._vc
    t._is_inference = data._is_inference
    link_alias(data, t, view=False)
    return t


class Parameter(Tensor):
    """A Tensor that is a module parameter: assigning one to a Module attribute registers it.

    ``Parameter(data)`` shares ``data``'s values (an in-place change of one shows in the
    other, as in torch) and is a leaf with ``requires_grad=True`` unless told otherwise.
    Ops on a Parameter return plain Tensors.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Parameter(wgrad.tensor([1., 2.]))
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = empty(0)
        p = _alias(cls, data)
        if requires_grad:
            d = p.dtype
            if not (d.is_floating_point or d.is_complex):
                raise RuntimeError(_ERR_DTYPE)
            p._requires_grad = True
        return p

    def __init__(self, data=None, requires_grad=True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.data.clone(), self._requires_grad)
        memo[id(self)] = result
        return result

    def __reduce_ex__(self, proto):
        return (_rebuild_parameter, (Tensor.__reduce_ex__(self.detach(), proto),
                                     self._requires_grad, type(self)))


def _rebuild_parameter(reduced, requires_grad, cls=Parameter):
    fn, args = reduced
    return cls(fn(*args), requires_grad)


class _BufferMeta(type):
    # torch's Buffer is a marker: instances are plain Tensors flagged as buffers
    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and getattr(obj, "_is_buffer", False)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A Tensor that a Module registers as a buffer when assigned to an attribute.

    ``persistent=False`` keeps it out of the module's ``state_dict``.

    Example
    -------
    >>> import wgrad
    >>> m = wgrad.nn.Module()
    >>> m.count = wgrad.nn.Buffer(wgrad.zeros(1))
    >>> list(m.state_dict())
    ['count']
    """

    def __new__(cls, data=None, *, persistent=True):
        if data is None:
            data = empty(0)
        b = _alias(cls, data)
        b._is_buffer = True
        b.persistent = persistent
        return b

    def __init__(self, data=None, *, persistent=True):
        pass


register_pytree(Parameter)
