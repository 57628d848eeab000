"""Torch-named dtypes over numpy/JAX dtypes."""
import builtins
import os

import ml_dtypes  # installed with jax
import numpy as np

__all__ = ["dtype", "get_default_dtype", "set_default_dtype", "as_dtype", "promote_types",
           "can_cast", "X64_ENABLED", "finfo", "iinfo"]

# NOTE [64-bit dtypes]
# wgrad enables JAX's x64 mode at import so float64/complex128/int64 exist, as in torch.
# WGRAD_DISABLE_X64=1 opts out: asking for a 64-bit dtype then raises, and integer
# tensors default to int32.
X64_ENABLED = os.environ.get("WGRAD_DISABLE_X64", "0") in ("", "0", "false", "False")


class dtype:
    """A tensor element type, printed as torch prints it (``wgrad.float32``)."""

    __slots__ = ("name", "np", "is_complex", "is_floating_point", "is_signed", "itemsize",
                 "_category")

    def __init__(self, name, np_dtype, category):
        self.name = name
        self.np = np.dtype(np_dtype)
        self._category = category  # 0 bool, 1 int, 2 float, 3 complex
        self.is_complex = category == 3
        self.is_floating_point = category == 2
        self.is_signed = name not in ("bool", "uint8")
        self.itemsize = self.np.itemsize

    def __repr__(self):
        return "wgrad." + self.name

    def __reduce__(self):
        return (as_dtype, (self.name,))

    @property
    def scalar_name(self):
        """torch's C++ ScalarType name ("Float", "ComplexDouble", ...), as torch's error
        messages print a dtype."""
        return _SCALAR_NAMES[self.name]

    @property
    def legacy_type(self):
        """torch's legacy tensor type name, as ``Tensor.type()`` gives it
        ("torch.FloatTensor")."""
        return f"torch.{self.scalar_name}Tensor"

    def to_real(self):
        return {"complex64": float32, "complex128": float64}.get(self.name, self)

    def to_complex(self):
        return {"float32": complex64, "float64": complex128, "float16": complex64,
                "bfloat16": complex64}.get(self.name, self)


def _bf16():
    return ml_dtypes.bfloat16


bool = dtype("bool", np.bool_, 0)  # noqa: A001 - torch's name
uint8 = dtype("uint8", np.uint8, 1)
int8 = dtype("int8", np.int8, 1)
int16 = dtype("int16", np.int16, 1)
int32 = dtype("int32", np.int32, 1)
int64 = dtype("int64", np.int64, 1)
float16 = dtype("float16", np.float16, 2)
bfloat16 = dtype("bfloat16", _bf16(), 2)
float32 = dtype("float32", np.float32, 2)
float64 = dtype("float64", np.float64, 2)
complex64 = dtype("complex64", np.complex64, 3)
complex128 = dtype("complex128", np.complex128, 3)

# NOTE [dtype names]
# The one table of torch's ScalarType names, behind dtype.scalar_name and legacy_type.
_SCALAR_NAMES = {"bool": "Bool", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "float16": "Half", "bfloat16": "BFloat16",
                 "float32": "Float", "float64": "Double", "complex64": "ComplexFloat",
                 "complex128": "ComplexDouble"}

_ALL = [bool, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64,
        complex64, complex128]
_BY_NP = {d.np: d for d in _ALL}
_BY_NAME = {d.name: d for d in _ALL}
_BY_NAME.update(half=float16, float=float32, double=float64, cfloat=complex64,
                cdouble=complex128, long=int64, int=int32, short=int16)
_64BIT = {"int64", "float64", "complex128"}

_default = [float32]


def get_default_dtype():
    """The dtype of floating tensors made from Python floats (``float32`` unless set)."""
    return _default[0]


def set_default_dtype(d):
    d = as_dtype(d)
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default[0] = d


def default_int():
    return int64 if X64_ENABLED else int32


def default_complex():
    return complex128 if _default[0] is float64 else complex64


def check_x64(d):
    if not X64_ENABLED and d.name in _64BIT:
        raise RuntimeError(
            f"wgrad.{d.name} is unavailable: WGRAD_DISABLE_X64 is set, so JAX runs in 32-bit "
            f"mode. Use a 32-bit dtype, or unset WGRAD_DISABLE_X64 before importing wgrad.")
    return d


def from_legacy_type(name):
    """The dtype of a legacy type name ("torch.FloatTensor"), or None."""
    for d in _ALL:
        if d.legacy_type == name:
            return d
    return None


def as_dtype(d):
    """Convert a wgrad dtype, numpy/JAX dtype, Python type or name to a wgrad dtype."""
    if isinstance(d, dtype):
        return d
    if isinstance(d, str):
        try:
            return _BY_NAME[d.replace("wgrad.", "").replace("torch.", "")]
        except KeyError:
            raise TypeError(f"unknown dtype {d!r}") from None
    if d is builtins.bool:
        return bool
    if d is int:
        return default_int()
    if d is float:
        return get_default_dtype()
    if d is complex:
        return default_complex()
    try:
        return _BY_NP[np.dtype(d)]
    except (KeyError, TypeError):
        raise TypeError(f"wgrad has no dtype for {d!r}") from None


def from_np(npd):
    d = _BY_NP.get(npd)
    if d is None:
        d = _BY_NP[np.dtype(npd)]
    return d


_PROMOTE = {}


def promote_types(a, b):
    """torch.promote_types: the smallest dtype both ``a`` and ``b`` convert to."""
    key = (a, b)
    r = _PROMOTE.get(key)
    if r is None:
        if a is b:
            r = a
        elif {a.name, b.name} == {"bfloat16", "float16"}:
            r = float32
        elif a.is_complex or b.is_complex:
            real = promote_types(a.to_real(), b.to_real())
            r = complex128 if real in (float64,) else complex64
        elif a._category != b._category:
            # torch: the higher category wins and keeps its width (int64 + float32 ->
            # float32), unlike numpy (float64)
            r = a if a._category > b._category else b
        elif "bfloat16" in (a.name, b.name):  # numpy knows no bfloat16
            other = b if a.name == "bfloat16" else a
            r = float32 if other.name == "float16" else other
        else:
            r = from_np(np.promote_types(a.np, b.np))
        _PROMOTE[key] = r
    return r


def can_cast(from_, to):
    """torch.can_cast: whether a value of dtype ``from_`` may be cast to ``to`` under torch's
    casting rule, which refuses only a step down in kind (complex to real, floating to
    integral, non-bool to bool).

    Example
    -------
    >>> import wgrad
    >>> wgrad.can_cast(wgrad.float64, wgrad.int8), wgrad.can_cast(wgrad.int64, wgrad.float16)
    (False, True)
    """
    for name, pos, v in (("from_", 1, from_), ("to", 2, to)):
        if not isinstance(v, dtype):
            raise TypeError(f"can_cast(): argument '{name}' (position {pos}) must be "
                            f"torch.dtype, not {type(v).__name__}")
    return from_._category <= to._category


class finfo:
    """torch.finfo: the numerical properties of a floating dtype (a complex dtype's
    real part; the default dtype when none is given).

    Example
    -------
    >>> wgrad.finfo(wgrad.float32).eps
    1.1920928955078125e-07
    """

    def __init__(self, type=None):
        d = get_default_dtype() if type is None else as_dtype(type)
        if not (d.is_floating_point or d.is_complex):
            raise TypeError("torch.finfo() requires a floating point input type. Use "
                            "torch.iinfo to handle 'torch.finfo'")
        d = d.to_real()
        info = ml_dtypes.finfo(d.np)
        self.bits = info.bits
        self.eps, self.max, self.min = float(info.eps), float(info.max), float(info.min)
        self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -int(-np.log10(self.eps))  # a power of ten, as torch's
        self.dtype = d.name

    def __eq__(self, other):
        return isinstance(other, finfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("finfo", self.dtype))

    def __repr__(self):
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo: the range of an integer dtype.

    Example
    -------
    >>> wgrad.iinfo(wgrad.uint8).max
    255
    """

    def __init__(self, type):
        d = as_dtype(type)
        if d is bool:
            raise TypeError("torch.bool is not supported by torch.iinfo")
        if d._category != 1:
            raise TypeError("torch.iinfo() requires an integer input type. Use torch.finfo "
                            "to handle 'torch.iinfo'")
        info = np.iinfo(d.np)
        self.bits, self.max, self.min, self.dtype = info.bits, int(info.max), int(info.min), d.name

    def __eq__(self, other):
        return isinstance(other, iinfo) and other.dtype == self.dtype

    def __hash__(self):
        return hash(("iinfo", self.dtype))

    def __repr__(self):
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
