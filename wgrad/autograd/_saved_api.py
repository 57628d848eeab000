"""``wgrad.autograd.SavedTensor``: the type of ``grad_fn._raw_saved_<name>``, as torch
exposes it: usable with ``isinstance``, not constructible from Python."""
from .._autograd import saved as _saved

__all__ = ["SavedTensor"]


class _SavedTensorMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, _saved.SavedTensor)

    def __subclasscheck__(cls, other):
        return issubclass(other, _saved.SavedTensor)


class SavedTensor(metaclass=_SavedTensorMeta):
    """A value saved for backward (see ``wgrad.autograd.saved.SavedTensor``); only
    autograd creates them.

    Example
    -------
    >>> import wgrad
    >>> y = wgrad.ones(2, requires_grad=True).exp()
    >>> isinstance(y.grad_fn._raw_saved_result, wgrad.autograd.SavedTensor)
    True
    """

    def __new__(cls, *args, **kwargs):
        raise RuntimeError("Trying to create a SavedTensor object from Python is forbidden.")
