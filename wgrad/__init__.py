"""wgrad: PyTorch's autograd semantics on JAX arrays.

``import wgrad as torch`` runs ordinary autograd code; complex gradients follow PyTorch's
conjugate-Wirtinger convention (``.grad`` is the conjugate of ``jax.grad``).

Importing wgrad turns on JAX's 64-bit mode (``jax_enable_x64``) so that float64,
complex128 and int64 exist, as in torch; set ``WGRAD_DISABLE_X64=1`` before import to
keep JAX in 32-bit mode (64-bit dtypes then raise a clear error).
"""
import jax as _jax

from . import _dtype
from . import _compile_cache

if _dtype.X64_ENABLED:
    _jax.config.update("jax_enable_x64", True)
_compile_cache.configure()  # NOTE [Persistent compilation cache]
_compile_cache.share_mlir_context()  # NOTE [Shared MLIR context]

from ._dtype import (bfloat16, bool, complex64, complex128, dtype, float16,  # noqa: E402,A004
                     float32, float64, get_default_dtype, int8, int16, int32, int64,
                     promote_types, set_default_dtype, uint8)
from ._dtype import as_dtype as _as_dtype  # noqa: E402,F401
from ._device import device  # noqa: E402
from ._precision import (get_float32_matmul_precision,  # noqa: E402
                         set_float32_matmul_precision)
from ._tensor import Size, Tensor  # noqa: E402
from ._tensor_str import set_printoptions  # noqa: E402
from . import ops  # noqa: E402
from .ops import *  # noqa: E402,F401,F403
from .ops._promote import result_type  # noqa: E402
from ._creation import *  # noqa: E402,F401,F403
from . import autograd  # noqa: E402
from . import backends, cuda, distributed, fft, jax, linalg, nn, optim, utils  # noqa: E402
from ._legacy import *  # noqa: E402,F401,F403
from .serialization import load, save  # noqa: E402
from .jax import compile, from_dlpack, from_jax, jax_function, to_jax  # noqa: E402,A004
from . import func  # noqa: E402
from .ops._lazy import lazy  # noqa: E402
from ._autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: E402
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)

from .ops._storage import TypedStorage, UntypedStorage  # noqa: E402
import math as _math  # noqa: E402

inf, nan, pi, e = _math.inf, _math.nan, _math.pi, _math.e


class memory_format:
    """A memory layout name (torch.memory_format). wgrad keeps no strides: layouts are
    accepted and ignored (docs/differences.md)."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"wgrad.{self._name}"


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")

half, float, double = float16, float32, float64  # noqa: A001
cfloat, cdouble, long, short, int = complex64, complex128, int64, int16, int32  # noqa: A001
chalf = None
__version__ = "0.1.0"


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(input):
    return input.numel()


def is_nonzero(input):
    if input.numel() != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    return input.item() != 0  # bool(x), which the dtype ``bool`` shadows here
