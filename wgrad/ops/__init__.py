"""Differentiable primitives, one module per family, and the Tensor methods they give."""
from .._tensor import Tensor
from . import elementwise, indexing, linalg, reduction, shape
from .elementwise import *  # noqa: F401,F403
from .indexing import *  # noqa: F401,F403
from .linalg import *  # noqa: F401,F403
from .reduction import *  # noqa: F401,F403
from .shape import *  # noqa: F401,F403
from . import conv, fft  # noqa: F401  (fft: no __all__; wgrad.fft is the namespace)
from .conv import *  # noqa: F401,F403
from . import inplace  # noqa: E402  (after the families it wraps)
from .inplace import *  # noqa: F401,F403
from . import activation, layer, loss  # noqa: E402  (nn's families; Tensor methods: METHODS)
from .activation import *  # noqa: F401,F403,E402
from .layer import *  # noqa: F401,F403,E402

_FAMILIES = (elementwise, shape, reduction, linalg, indexing, inplace, conv, fft)

# Functions that are not Tensor methods in torch (or clash with Tensor attributes).
_NOT_METHODS = {"complex", "polar", "where", "cat", "concat", "concatenate", "stack", "hstack",
                "vstack", "broadcast_tensors", "broadcast_shapes", "numpy_T", "to", "real",
                "imag", "getitem", "is_complex", "is_floating_point", "einsum", "atleast_1d",
                "atleast_2d", "meshgrid", "block_diag", "cartesian_prod", "pad",
                "conv1d", "conv2d", "tensordot", "vector_norm", "trapezoid", "var_mean",
                "std_mean", "chain_matmul", "multi_dot", "softplus"}


def _bind_methods():
    for mod in _FAMILIES:
        for name in mod.__all__:
            if name not in _NOT_METHODS and not hasattr(Tensor, name):
                setattr(Tensor, name, getattr(mod, name))
    for mod in (activation, layer, loss):
        for name in mod.METHODS:
            setattr(Tensor, name, getattr(mod, name))
    Tensor.to = shape.to
    Tensor._sum_to = shape.sum_to_size
    Tensor.where = lambda self, condition, y: elementwise.where(condition, self, y)
    Tensor.type_as = lambda self, other: shape.to(self, other.dtype)
    for name, dt in (("float", "float32"), ("double", "float64"), ("half", "float16"),
                     ("cfloat", "complex64"), ("cdouble", "complex128"), ("long", "int64"),
                     ("int", "int32"), ("bool", "bool")):
        setattr(Tensor, name, _caster(dt))


def _caster(name):
    def cast(self, memory_format=None):
        from .. import _dtype
        return shape.to(self, getattr(_dtype, name))
    cast.__name__ = name
    return cast


_bind_methods()
