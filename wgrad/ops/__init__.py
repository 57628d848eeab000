"""Differentiable primitives, one module per family, and the Tensor methods they give.

# NOTE [Tensor methods]
# Which functions are also Tensor methods is declared, never inferred: each family module
# lists them in ``METHODS`` (torch's ``variants: method`` in native_functions.yaml), and
# _bind_methods below binds exactly those, plus the few whose method form differs from
# the function (``where``, ``type_as``, the casters ``float``/``double``/...). A function
# that torch has only as ``torch.<name>`` (view_as_real, cat, einsum, ...) stays a
# function. tests/test_tensor_methods.py checks the set against torch.Tensor, and
# wgrad/_tensor.pyi (tools/gen_tensor_stub.py) lists it for editors.
"""
from .. import _dtype
from .._tensor import Tensor
from . import elementwise, indexing, linear_algebra, reduction, shape
from . import _out

for _family in ("elementwise", "shape", "reduction", "linear_algebra", "indexing"):
    _out.install(vars(globals()[_family]), _family)  # NOTE [out= arguments]
del _family
from .elementwise import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linear_algebra import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from . import conv, spectral  # noqa: F401  (spectral: stft/istft; wgrad.fft has the rest)
from .conv import *  # noqa: F401,F403
from .spectral import *  # noqa: F401,F403
from . import compare
from .compare import *  # noqa: F401,F403
from . import inplace  # noqa: E402  (after the families it wraps)
from .inplace import *  # noqa: F401,F403
from . import activation, copies, layer, loss
_out.install(vars(activation), "activation")  # NOTE [out= arguments]
_out.install(vars(layer), "layer")
from .activation import *  # noqa: F401,F403
from .layer import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .copies import *  # noqa: F401,F403
from ._views import conj_bits, is_contiguous  # noqa: F401  (read by Tensor)
from .. import _creation  # noqa: E402  (its new_* methods; it imports ops.shape)
_out.install(vars(_creation), "creation")

# the public functions only: ``from .ops import *`` binds no module (wgrad.shape, ...)
_FAMILIES = (elementwise, shape, reduction, linear_algebra, indexing, inplace, conv, spectral,
             compare, activation, layer, loss, copies)
__all__ = [name for mod in _FAMILIES for name in mod.__all__]


def _bind_methods():
    """Tensor methods: exactly each family's ``METHODS`` (NOTE [Tensor methods]), plus the
    methods whose Tensor form differs from the function."""
    for mod in _FAMILIES + (_creation,):  # _creation: new_zeros, ... (no op family)
        for name in mod.METHODS:
            fn = getattr(mod, name)
            setattr(Tensor, name, getattr(fn, "without_out", fn))  # NOTE [out= arguments]
    Tensor._sum_to = shape.sum_to_size
    Tensor.where = lambda self, condition, y: elementwise.where(condition, self, y)
    Tensor.type_as = lambda self, other: shape.to(self, other.dtype)
    for name, dt in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                     ("cfloat", "complex64"), ("cdouble", "complex128"), ("long", "int64"),
                     ("int", "int32"), ("bool", "bool"), ("byte", "uint8"), ("char", "int8"),
                     ("short", "int16"), ("bfloat16", "bfloat16")):
        setattr(Tensor, name, _caster(dt))
    Tensor.chalf = _chalf


def _caster(name):
    def cast(self, memory_format=None):
        return shape.to(self, getattr(_dtype, name))
    cast.__name__ = name
    return cast


def _chalf(self, memory_format=None):
    """torch's ``Tensor.chalf()`` casts to complex32, a dtype JAX does not have."""
    raise NotImplementedError("chalf(): wgrad has no complex32 (ComplexHalf) dtype, as JAX "
                              "has none; use cfloat() for complex64")


_bind_methods()
