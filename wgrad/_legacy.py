"""torch's legacy typed-tensor constructors: ``LongTensor([0, 2])``, ``FloatTensor(2, 3)``.

Each is a class whose call makes a Tensor of its dtype: from data (a list, tuple or
number sequence), or of a shape (sizes or a Size; zero-filled, where torch leaves memory
uninitialised); ``isinstance(t, FloatTensor)`` is true for float32 tensors.
"""
from . import _dtype
from ._creation import tensor, zeros
from ._tensor import Tensor

__all__ = ["FloatTensor", "DoubleTensor", "HalfTensor", "BFloat16Tensor", "ByteTensor",
           "CharTensor", "ShortTensor", "IntTensor", "LongTensor", "BoolTensor"]


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
