"""torch's legacy typed-tensor constructors: ``LongTensor([0, 2])``, ``FloatTensor(2, 3)``.

Each is a class whose call makes a Tensor of its dtype: from data (a list, tuple or
number sequence), or of a shape (sizes or a Size; zero-filled, where torch leaves memory
uninitialised); ``isinstance(t, FloatTensor)`` is true for float32 tensors.
"""
import warnings

from . import _dtype
from ._creation import tensor, zeros
from ._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor",
           "set_default_tensor_type"]


class _TypedTensorMeta(type):
    def __instancecheck__(cls, other):
        return isinstance(other, Tensor) and other.dtype is cls.dtype


def _is_size(args):
    return all(isinstance(a, int) and not isinstance(a, bool) for a in args)


def _typed(name, dt):
    def new(cls, *args, device=None):
        if len(args) == 1 and isinstance(args[0], Tensor):
            t = args[0]
            if t.dtype is not dt:
                raise TypeError(f"expected {dt!r} (got {t.dtype!r})")
            return t
        if len(args) == 1 and isinstance(args[0], tuple) and _is_size(args[0]):
            args = args[0]  # a Size
        if _is_size(args):
            return zeros(*(args or (0,)), dtype=dt, device=device)
        if len(args) == 1:
            return tensor(args[0], dtype=dt, device=device)
        raise TypeError(f"{name}(): expected sizes or a sequence of numbers")
    doc = f"Legacy constructor of {dt!r} tensors (from data, or of a shape)."
    return _TypedTensorMeta(name, (), {"__new__": new, "dtype": dt, "__doc__": doc,
                                       "__module__": "wgrad"})


FloatTensor = _typed("FloatTensor", _dtype.float32)
DoubleTensor = _typed("DoubleTensor", _dtype.float64)
HalfTensor = _typed("HalfTensor", _dtype.float16)
BFloat16Tensor = _typed("BFloat16Tensor", _dtype.bfloat16)
ByteTensor = _typed("ByteTensor", _dtype.uint8)
CharTensor = _typed("CharTensor", _dtype.int8)
ShortTensor = _typed("ShortTensor", _dtype.int16)
IntTensor = _typed("IntTensor", _dtype.int32)
LongTensor = _typed("LongTensor", _dtype.int64)
BoolTensor = _typed("BoolTensor", _dtype.bool)


def set_default_tensor_type(t):
    """torch's deprecated ``set_default_tensor_type``: the default dtype of a legacy type
    (``wgrad.DoubleTensor``) or its name (``"torch.DoubleTensor"``), with torch's warning.

    Example
    -------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     wgrad.set_default_tensor_type(wgrad.DoubleTensor)
    ...     made = wgrad.zeros(1).dtype
    ...     wgrad.set_default_tensor_type("torch.FloatTensor")
    >>> made
    wgrad.float64
    """
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, str):
        if t.startswith("torch.cuda."):
            raise TypeError(f"type {t} not available. Torch not compiled with CUDA enabled.")
        d = _dtype.from_legacy_type(t)
        if d is None:
            raise ModuleNotFoundError(f"No module named '{t.rsplit('.', 1)[0]}'")
        if not d.is_floating_point:
            raise TypeError("only floating-point types are supported as the default type")
    elif isinstance(t, _TypedTensorMeta):
        d = t.dtype
        if not d.is_floating_point:
            raise TypeError("only floating-point types are supported as the default type")
    else:
        raise TypeError("invalid type object: only floating-point types are supported as "
                        "the default type")
    _dtype.set_default_dtype(d)
