"""``Variable``: the deprecated pre-0.4 wrapper, kept as torch keeps it.

``Variable(t, requires_grad=...)`` returns a plain Tensor over ``t``'s data, cut from
the graph (as ``t.detach()``, sharing its version counter); ``isinstance(x, Variable)``
is true for every Tensor.
"""
import warnings

import jax.numpy as jnp

from .. import _dtype
from .. import _tensor  # partly initialised here: _tensor imports the autograd package
from .._autograd.engine import get_default_engine

__all__ = ["Variable"]


class _VariableMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _tensor.Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated: ``Variable(tensor, requires_grad=False)`` returns a Tensor.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd import Variable
    >>> v = Variable(wgrad.ones(2), requires_grad=True)
    >>> type(v).__name__, v.requires_grad, isinstance(v, Variable)
    ('Tensor', True, True)
    """

    _execution_engine = get_default_engine()

    def __new__(cls, data=None, requires_grad=False, volatile=False):
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with "
                          "torch.no_grad():` instead.", UserWarning, stacklevel=2)
        Tensor = _tensor.Tensor
        if data is None:
            return Tensor._make(jnp.zeros((0,), _dtype.get_default_dtype().np))
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        t = data.detach()
        if requires_grad:
            t.requires_grad_(True)
        return t
