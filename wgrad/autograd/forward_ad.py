"""Forward-mode AD: dual tensors carry a tangent that every op pushes forward.

NOTE [Forward AD state] (wgrad/_autograd/forward_ad.py) says where tangents live;
NOTE [Tangents of primitives] (wgrad/ops/_primitive.py) how ops compute them.
"""
from collections import namedtuple

from .._autograd import forward_ad as _core
from .._autograd.grad_mode import _DecoratorContextManager
from .._autograd.grad_mode import _state as _grad_state
from .._tensor import Tensor
from ..ops import shape as _shape
from ..ops._views import conj_bits as _conj_bits, link_alias as _link_alias
from ..ops._views import strides_of as _strides_of

__all__ = ["UnpackedDualTensor", "enter_dual_level", "exit_dual_level", "make_dual",
           "unpack_dual", "dual_level"]

_ERR_NO_LEVEL = ("Trying to create a dual Tensor for forward AD but no level exists, make "
                 "sure to enter_dual_level() first.")


def __getattr__(name):
    # torch exposes the active level as a module global
    if name == "_current_level":
        return _core.current_level()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def enter_dual_level():
    """Enter a new forward grad level and return its index (0: torch allows no nesting).

    Example
    -------
    >>> import wgrad.autograd.forward_ad as fwAD
    >>> lvl = fwAD.enter_dual_level()
    >>> fwAD.exit_dual_level(level=lvl)
    """
    return _core.enter_level()


def exit_dual_level(*, level=None):
    """Exit the forward grad level ``level`` (the current one by default); every tangent
    of that level is dropped.

    Example
    -------
    >>> import wgrad.autograd.forward_ad as fwAD
    >>> lvl = fwAD.enter_dual_level()
    >>> fwAD.exit_dual_level()
    """
    if level is None:
        level = _core.current_level()
    if level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    _core.exit_level(level)


def _check_level(level, op):
    if level is None:
        return _core.current_level()
    if not isinstance(level, int) or level < 0:
        raise RuntimeError("Dual level must be a positive number.")
    if _core.current_level() >= 0 and level != _core.current_level():
        raise RuntimeError(f"Invalid level given to {op}")
    return level


def make_dual(tensor, tangent, *, level=None):
    """A view of ``tensor`` whose tangent (forward gradient) is ``tangent``.

    Parameters
    ----------
    tensor : Tensor
        The primal, floating point or complex.
    tangent : Tensor
        Its tangent, of the same shape.
    level : int, optional
        The dual level (the current one by default).

    Example
    -------
    >>> import wgrad
    >>> import wgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(wgrad.tensor([0., 1.]), wgrad.tensor([1., 1.]))
    ...     fwAD.unpack_dual(x.sin()).tangent
    tensor([1.0000, 0.5403])
    """
    if level is None:
        level = _core.current_level()
    if level < 0:
        raise RuntimeError(_ERR_NO_LEVEL)
    level = _check_level(level, "_make_dual")
    if not isinstance(tensor, Tensor) or not isinstance(tangent, Tensor):
        bad = tensor if not isinstance(tensor, Tensor) else tangent
        raise TypeError(f"make_dual(): argument '{'primal' if bad is tensor else 'tangent'}' "
                        f"must be Tensor, not {type(bad).__name__}")
    if not (tensor.is_floating_point() or tensor.is_complex()):
        raise ValueError(f"Expected primal to be floating point or complex, but got: "
                         f"{tensor.dtype}")
    if not (tangent.is_floating_point() or tangent.is_complex()):
        raise ValueError(f"Expected tangent to be floating point or complex, but got: "
                         f"{tangent.dtype}")
    if tuple(tangent.shape) != tuple(tensor.shape):
        raise RuntimeError(
            f"Trying to set a forward gradient that has a different size than that of the "
            f"original Tensor, this is not supported. Tensor is of size "
            f"{list(tensor.shape)} while the given forward gradient is of size "
            f"{list(tangent.shape)}.")
    if _core.get_tangent(tangent) is not None:
        raise RuntimeError(f"Setting a forward grad that itself has a forward gradient at the "
                           f"same level{level} is not supported.")
    if _core.get_tangent(tensor) is not None:
        raise RuntimeError(f"Making a dual Tensor based on a Tensor that already has a "
                           f"forward gradient at the same level {level} is not supported.")
    if not _same_layout(tensor, tangent):
        tangent = tangent.clone()  # torch copies a tangent laid out unlike its primal
    if _grad_state.inference:  # as torch: an alias of the same data, not a view
        out = _link_alias(tensor, Tensor._make(tensor._data), view=False)
    else:
        out = _primal_view(tensor)
    _core.set_tangent(out, tangent)
    return out


def _same_layout(a, b):
    """Strides, offset and storage size (NOTE [Strides without strides]) and conjugate
    bits as torch's metadata check of a tangent against its primal."""
    if a.numel() == 0 and b.numel() == 0:
        return True
    return (_strides_of(a) == _strides_of(b) and len(a.storage()) == len(b.storage())
            and _conj_bits(a) == _conj_bits(b))


def _primal_view(tensor):
    if tensor._base is not None and tensor._view_meta is None:
        # an alias made without view metadata (a custom Function's returned input)
        out = Tensor._make(tensor._data)
        out._vc, out._base = tensor._vc, tensor._base
        return out
    t = _core.get_tangent(tensor)
    if t is None:
        return _shape.view_as(tensor, tensor)
    # a view of a dual tensor is dual: the primal alone is taken without it
    _core.set_tangent(tensor, None)
    try:
        return _shape.view_as(tensor, tensor)
    finally:
        _core.set_tangent(tensor, t)


UnpackedDualTensor = namedtuple("UnpackedDualTensor", ["primal", "tangent"])
UnpackedDualTensor.__doc__ = ("Namedtuple returned by :func:`unpack_dual` containing the "
                              "primal and tangent components of the dual tensor.")


def unpack_dual(tensor, *, level=None):
    """``UnpackedDualTensor(primal, tangent)``: a view of ``tensor``'s primal and its
    tangent at ``level`` (None when it has none).

    Example
    -------
    >>> import wgrad
    >>> import wgrad.autograd.forward_ad as fwAD
    >>> with fwAD.dual_level():
    ...     x = fwAD.make_dual(wgrad.tensor([2.]), wgrad.tensor([1.]))
    ...     fwAD.unpack_dual(x * x)
    UnpackedDualTensor(primal=tensor([4.]), tangent=tensor([4.]))
    """
    if level is None:
        level = _core.current_level()
    if level < 0:
        return UnpackedDualTensor(tensor, None)
    _check_level(level, "_fw_primal")
    t = _core.get_tangent(tensor)
    if t is None:
        return UnpackedDualTensor(tensor, None)
    return UnpackedDualTensor(_primal_view(tensor), t)


class dual_level(_DecoratorContextManager):
    """Context manager (and decorator) for forward AD: computations inside use the dual
    level it enters, and every tangent is dropped when it exits.

    Example
    -------
    >>> import wgrad
    >>> import wgrad.autograd.forward_ad as fwAD
    >>> x, v = wgrad.tensor([1., 2.]), wgrad.tensor([1., 0.])
    >>> with fwAD.dual_level():
    ...     y = fwAD.make_dual(x, v) ** 2
    ...     jvp = fwAD.unpack_dual(y).tangent
    >>> jvp
    tensor([2., 0.])
    """

    def __enter__(self):
        return enter_dual_level()

    def __exit__(self, exc_type, exc_value, traceback):
        exit_dual_level()
