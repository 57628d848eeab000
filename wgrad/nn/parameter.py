"""``nn.Parameter`` (a leaf Tensor a Module registers as a parameter) and ``nn.Buffer``."""

from .._creation import empty
from .._tensor import Tensor, _init, _new, register_pytree
from ..ops._views import link_alias

__all__ = ["Parameter", "Buffer", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]

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


# -- uninitialized parameters and buffers (the lazy modules, nn/modules/lazy.py) -----------

class UninitializedTensorMixin:
    """A parameter or buffer whose shape is not known yet: ``materialize(shape)`` gives it
    data and turns it into ``cls_to_become``."""

    __slots__ = ()

    def materialize(self, shape, device=None, dtype=None):
        """Give it an (uninitialized, here zero) array of ``shape``, on ``device`` and of
        ``dtype`` (its own by default), and make it a ``cls_to_become``."""
        if device is None:
            device = self.data.device
        if dtype is None:
            dtype = self.data.dtype
        self.data = empty(shape, device=device, dtype=dtype)
        self.__class__ = self.cls_to_become

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error "
            "usually happens in `load_state_dict` when trying to load an uninitialized "
            "parameter into an initialized one. Call `forward` to initialize the parameters "
            "before accessing their attributes.")

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self):
        return f"<{self.__class__.__name__}>"

    def __reduce_ex__(self, proto):
        return (self.__class__, (self.requires_grad,))


def is_lazy(param):
    """Whether ``param`` is an ``UninitializedParameter`` or ``UninitializedBuffer``."""
    return isinstance(param, UninitializedTensorMixin)


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module before its first forward: no shape yet; it becomes a
    ``Parameter`` when materialized. Using it in an op before that fails (torch raises a
    ValueError naming the op; wgrad's op sees an empty array and raises its shape error).
    """

    cls_to_become = Parameter

    def __new__(cls, requires_grad=True, device=None, dtype=None):
        return Parameter.__new__(cls, empty(0, device=device, dtype=dtype), requires_grad)

    def __init__(self, requires_grad=True, device=None, dtype=None):
        pass

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        result = type(self)(self.requires_grad, self.data.device, self.data.dtype)
        memo[id(self)] = result
        return result


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module before its first forward; a plain Tensor once
    materialized."""

    __slots__ = ()
    cls_to_become = Tensor

    def __new__(cls, requires_grad=False, device=None, dtype=None):
        data = empty(0, device=device, dtype=dtype)
        t = _new(cls)
        _init(t, data._data, None, 0)
        if requires_grad:
            t._requires_grad = True
        return t

    def __init__(self, requires_grad=False, device=None, dtype=None):
        pass

