"""wgrad: PyTorch's autograd semantics on JAX arrays.

``import wgrad as torch`` runs ordinary autograd code; complex gradients follow PyTorch's
conjugate-Wirtinger convention (``.grad`` is the conjugate of ``jax.grad``).

Importing wgrad turns on JAX's 64-bit mode (``jax_enable_x64``) so that float64,
complex128 and int64 exist, as in torch; set ``WGRAD_DISABLE_X64=1`` before import to
keep JAX in 32-bit mode (64-bit dtypes then raise a clear error). It also has JAX's CPU
backend run each computation on the calling thread (NOTE [CPU dispatch] in
_compile_cache.py; ``WGRAD_CPU_ASYNC_DISPATCH=1`` keeps JAX's asynchronous default).
"""
import jax as _jax

from . import _dtype
from . import _compile_cache

if _dtype.X64_ENABLED:
    _jax.config.update("jax_enable_x64", True)
_compile_cache.synchronous_cpu_dispatch()  # NOTE [CPU dispatch]
_compile_cache.configure()  # NOTE [Persistent compilation cache]
_compile_cache.share_mlir_context()  # NOTE [Shared MLIR context]

from ._dtype import (bfloat16, bool, can_cast, complex64, complex128, dtype,  # noqa: E402,A004
                     finfo, float16, float32, float64, get_default_dtype, iinfo, int8, int16,
                     int32, int64, promote_types, set_default_dtype, uint8)
from ._dtype import as_dtype as _as_dtype  # noqa: E402,F401
from ._device import device  # noqa: E402
from ._device import default_jax_device as _default_jax_device  # noqa: E402
from ._precision import (get_float32_matmul_precision,  # noqa: E402
                         set_float32_matmul_precision)
from ._tensor import Size, Tensor, layout, strided  # noqa: E402
from ._tensor_str import set_printoptions  # noqa: E402
from . import ops  # noqa: E402
from .ops import *  # noqa: E402,F401,F403
from .ops._promote import result_type  # noqa: E402
from ._creation import *  # noqa: E402,F401,F403
from ._gamma_draws import *  # noqa: E402,F401,F403  (_standard_gamma, _sample_dirichlet, ...)
from . import autograd  # noqa: E402
from . import backends, cuda, distributed, fft, jax, linalg, nn, optim, utils  # noqa: E402
from . import amp, distributions, random, signal, special, testing  # noqa: E402
from . import quasirandom  # noqa: E402
from .amp import autocast, get_autocast_dtype, is_autocast_enabled  # noqa: E402
from ._lowrank import lobpcg, pca_lowrank, svd_lowrank  # noqa: E402
from .nn._toplevel import *  # noqa: E402,F401,F403  (torch.dropout, torch.lstm_cell...)
from ._legacy import *  # noqa: E402,F401,F403
from .serialization import load, save  # noqa: E402
from .jax import compile, from_dlpack, from_jax, jax_function, to_jax  # noqa: E402,A004
from .utils.dlpack import to_dlpack  # noqa: E402
from . import func  # noqa: E402
from .ops._lazy import lazy  # noqa: E402
from ._autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,  # noqa: E402
                                 is_inference_mode_enabled, no_grad, set_grad_enabled)
from ._autograd.anomaly_mode import (is_anomaly_check_nan_enabled,  # noqa: E402
                                     is_anomaly_enabled)
from .func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)
from . import accelerator, compiler, cpu, jit, profiler  # noqa: E402
from ._control_flow import cond, while_loop  # noqa: E402
from ._range import range  # noqa: E402,A004  (torch.range, deprecated)
from .jit import _fork_now as fork, _wait_now as wait  # noqa: E402  (torch.fork, torch.wait)
newaxis = None  # torch.newaxis

from .ops._storage import TypedStorage, UntypedStorage  # noqa: E402
import math as _math  # noqa: E402
import os as _os  # noqa: E402
import warnings as _warnings  # noqa: E402

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


def is_inference(input):
    """Whether ``input`` is an inference tensor (made under ``inference_mode``).

    Example
    -------
    >>> with wgrad.inference_mode():
    ...     x = wgrad.ones(1)
    >>> wgrad.is_inference(x)
    True
    """
    return _tensor_arg("is_inference", input).is_inference()


def detach(input):
    """``input.detach()``: the same data, cut from the graph.

    Example
    -------
    >>> wgrad.detach(wgrad.ones(1, requires_grad=True)).requires_grad
    False
    """
    return _tensor_arg("detach", input).detach()


def detach_(input):
    """``input.detach_()``: cut ``input`` (no view) from the graph, in place.

    Example
    -------
    >>> x = wgrad.ones(1, requires_grad=True) * 2
    >>> wgrad.detach_(x).requires_grad
    False
    """
    return _tensor_arg("detach_", input).detach_()


def get_device(input):
    """The index of ``input``'s accelerator, -1 for a CPU tensor.

    Example
    -------
    >>> wgrad.get_device(wgrad.ones(1))
    -1
    """
    return _tensor_arg("get_device", input).get_device()


def typename(obj, /):
    """The qualified name of ``obj``'s type: a tensor's legacy type name
    (``"torch.FloatTensor"``), else ``module.QualName`` of a class or an instance.

    Example
    -------
    >>> wgrad.typename(wgrad.ones(1)), wgrad.typename(3)
    ('torch.FloatTensor', 'int')
    """
    if isinstance(obj, Tensor):
        return obj.type()
    named = obj if hasattr(obj, "__qualname__") or hasattr(obj, "__name__") else type(obj)
    module = getattr(named, "__module__", "") or ""
    name = getattr(named, "__qualname__", None) or named.__name__
    return name if module in ("", "builtins") else f"{module}.{name}"


def is_storage(obj, /):
    """Whether ``obj`` is a storage (``Tensor.storage()``, ``untyped_storage()``).

    Example
    -------
    >>> x = wgrad.ones(1)
    >>> wgrad.is_storage(x.untyped_storage()), wgrad.is_storage(x)
    (True, False)
    """
    return type(obj) in (TypedStorage, UntypedStorage)


def _tensor_arg(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return input


# -- runtime settings --------------------------------------------------------------------
# XLA sizes its own thread pools: the thread counts are kept and returned as torch's are,
# and change nothing (docs/differences.md); deterministic mode is a flag, as wgrad's
# kernels are deterministic on the CPU.

def _cores():
    return len(_os.sched_getaffinity(0)) if hasattr(_os, "sched_getaffinity") else \
        (_os.cpu_count() or 1)


_settings = {"threads": _cores(), "interop_threads": _cores(), "deterministic": False,
             "warn_only": False}


def _set_threads(name, key, n):
    if type(n) is not type(0):  # the builtin int (the dtype ``int`` shadows it here)
        raise RuntimeError(f"{name} expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError(f"{name} expects a positive integer")
    _settings[key] = n


def get_num_threads():
    """The number of intra-op threads (kept for torch code; XLA uses its own pool).

    Example
    -------
    >>> wgrad.get_num_threads() >= 1
    True
    """
    return _settings["threads"]


def set_num_threads(int):  # noqa: A002  (torch's parameter name)
    """Set the number that :func:`get_num_threads` returns (XLA's pool is unchanged)."""
    _set_threads("set_num_threads", "threads", int)


def get_num_interop_threads():
    """The number of inter-op threads (kept for torch code; XLA uses its own pool)."""
    return _settings["interop_threads"]


def set_num_interop_threads(int):  # noqa: A002  (torch's parameter name)
    """Set the number that :func:`get_num_interop_threads` returns."""
    _set_threads("set_num_interop_threads", "interop_threads", int)


def _check_bool(fn, arg, pos, value):
    if not isinstance(value, type(True)):  # the builtin bool
        where = f" (position {pos})" if pos else ""
        raise TypeError(f"{fn}(): argument '{arg}'{where} must be bool, not "
                        f"{type(value).__name__}")


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Ask for deterministic algorithms (``warn_only``: warn, not raise, where there is
    none). wgrad's kernels are deterministic on the CPU, so there this sets the flags only;
    on a GPU it raises (warns with ``warn_only``) unless XLA's deterministic mode was set
    when the process started (``XLA_FLAGS=--xla_gpu_deterministic_ops=true``).

    Example
    -------
    >>> wgrad.use_deterministic_algorithms(True)
    >>> wgrad.are_deterministic_algorithms_enabled()
    True
    >>> wgrad.use_deterministic_algorithms(False)
    """
    _check_bool("_set_deterministic_algorithms", "mode", 1, mode)
    _check_bool("_set_deterministic_algorithms", "warn_only", 0, warn_only)
    if mode and _jax.default_backend() == "gpu" and \
            "--xla_gpu_deterministic_ops=true" not in _os.environ.get("XLA_FLAGS", ""):
        # XLA's GPU scatters and reductions may use atomics; only a flag read when the
        # backend starts makes them deterministic
        msg = ("use_deterministic_algorithms(True): XLA's GPU kernels are deterministic "
               "only when the process starts with XLA_FLAGS=--xla_gpu_deterministic_ops=true "
               "(set it before importing wgrad)")
        if not warn_only:
            raise RuntimeError(msg)
        _warnings.warn(msg, UserWarning, stacklevel=2)
    _settings["deterministic"], _settings["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    """Whether :func:`use_deterministic_algorithms` turned the mode on."""
    return _settings["deterministic"]


def is_deterministic_algorithms_warn_only_enabled():
    """Whether deterministic mode was turned on with ``warn_only=True``."""
    return _settings["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """:func:`use_deterministic_algorithms` by torch's debug mode: ``"default"``/0 (off),
    ``"warn"``/1 (on, warning only), ``"error"``/2 (on)."""
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    elif isinstance(debug_mode, type(0)):  # the builtin int (wgrad.int is a dtype)
        if debug_mode not in (0, 1, 2):
            raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                               f"{debug_mode}")
    else:
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    """The debug mode :func:`set_deterministic_debug_mode` names: 0, 1 or 2.

    Example
    -------
    >>> wgrad.get_deterministic_debug_mode()
    0
    """
    if not _settings["deterministic"]:
        return 0
    return 1 if _settings["warn_only"] else 2


def set_anomaly_enabled(enabled, check_nan=True):
    """Turn anomaly detection on or off (``autograd.set_detect_anomaly`` without the
    context manager).

    Example
    -------
    >>> wgrad.set_anomaly_enabled(True)
    >>> wgrad.is_anomaly_enabled()
    True
    >>> wgrad.set_anomaly_enabled(False)
    """
    _check_bool("set_anomaly_enabled", "enabled", 1, enabled)
    _check_bool("set_anomaly_enabled", "check_nan", 2, check_nan)
    autograd.set_detect_anomaly(enabled, check_nan)


# -- devices, warnings, denormals, autocast ------------------------------------------------
# wgrad allocates on JAX's default device (NOTE [The default device] in _device.py): a GPU
# when JAX has one, where torch's default is the CPU; set_default_device moves it, for JAX
# as well (it is JAX's jax_default_device setting).

def get_default_device():
    """The device new tensors are made on: JAX's default device.

    Example
    -------
    >>> wgrad.get_default_device()
    device(type='cpu')
    """
    return device.of_jax(_default_jax_device())


_device_class = device


def set_default_device(device):  # noqa: F811  (torch's parameter name)
    """Make ``device`` the default device of new tensors (None: JAX's own default, the
    first device of its default platform). This is JAX's ``jax_default_device`` setting,
    so new JAX arrays made outside wgrad go there too.

    Example
    -------
    >>> wgrad.set_default_device("cpu")
    >>> wgrad.ones(2).device
    device(type='cpu')
    >>> wgrad.set_default_device(None)
    """
    if device is None:
        _jax.config.update("jax_default_device", None)
        return
    # torch's error for a device that is not there, before anything changes
    _jax.config.update("jax_default_device", _device_class(device).jax_device())


_settings["warn_always"] = False


def set_warn_always(b):
    """Ask for torch's warn-once warnings every time (kept as a flag: wgrad's warnings are
    Python warnings, shown as Python's filters say).

    Example
    -------
    >>> wgrad.set_warn_always(False)
    >>> wgrad.is_warn_always_enabled()
    False
    """
    if not isinstance(b, type(True)):  # the builtin bool
        raise RuntimeError(f"setWarnOnlyOnce expects a bool, but got {type(b).__name__}")
    _settings["warn_always"] = b


def is_warn_always_enabled():
    """Whether :func:`set_warn_always` turned the flag on."""
    return _settings["warn_always"]


def set_flush_denormal(mode):
    """Whether flushing subnormal numbers to zero is set as asked. XLA decides on its own:
    its CPU kernels flush them (docs/differences.md), so ``True`` is answered True where
    JAX has its CPU platform (torch's setting is the CPU's too), and ``False`` (keep them)
    is not possible: False, as torch where unsupported.

    Example
    -------
    >>> wgrad.set_flush_denormal(False)
    False
    """
    if not isinstance(mode, type(True)):
        raise RuntimeError(f"flush_denormal expects a bool, but got {type(mode).__name__}")
    return mode and _cpu_platform()


def _cpu_platform():
    """Whether JAX has its CPU platform (beside a GPU too; JAX_PLATFORMS can leave it out)."""
    try:
        return len(_jax.devices("cpu")) > 0
    except RuntimeError:
        return False


def is_autocast_enabled(device_type=None):
    """False: wgrad has no autocast.

    Example
    -------
    >>> wgrad.is_autocast_enabled()
    False
    """
    if device_type is not None:
        device(device_type)  # the error for a name that is no device
    return False


def get_autocast_dtype(device_type):
    """The dtype torch's autocast would use on ``device_type`` (bfloat16 on the CPU,
    float16 on CUDA); wgrad itself has no autocast.

    Example
    -------
    >>> wgrad.get_autocast_dtype("cpu")
    wgrad.bfloat16
    """
    kind = device(device_type).type
    if kind == "tpu":
        raise NotImplementedError("get_autocast_dtype('tpu'): torch has no TPU autocast")
    return bfloat16 if kind == "cpu" else float16


# NOTE [Lazy disk cache]: the primitives made while wgrad was imported have their places;
# any made later have none
ops._lazy_disk.seal()
