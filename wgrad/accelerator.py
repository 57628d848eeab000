"""``wgrad.accelerator``: torch.accelerator, the device-agnostic face of ``wgrad.cuda``.

wgrad's accelerator is a GPU that JAX sees (``wgrad.cuda``), so ``is_available()`` is
``wgrad.cuda.is_available()`` and ``current_accelerator()`` is ``device("cuda")`` exactly
then. Without one, every function behaves as in a CPU-only build of torch: the queries
that only count answer ``False``/``None``/0, the others raise torch's RuntimeError
"Cannot access accelerator device when none is available." (or "Accelerator expected"
for a device named by string). With a GPU the index functions, ``synchronize`` and the
memory counters go to ``wgrad.cuda`` (``memory_stats`` under torch's key names); what JAX
does not expose raises NotImplementedError: streams (``current_stream``, ``set_stream``),
graphs (``Graph``), resetting the allocator's peaks, and ``get_memory_info`` (JAX reports
its allocator's limit, not the device's free and total memory).

Example
-------
>>> wgrad.accelerator.is_available() == wgrad.cuda.is_available()
True
"""
import collections
import warnings

from . import _dtype as D
from . import cuda as _cuda
from ._device import device as _device

__all__ = ["Graph", "current_accelerator", "current_device_idx", "current_device_index",
           "get_device_capability", "current_stream", "device_count", "device_index",
           "empty_cache", "empty_host_cache", "get_memory_info", "is_available",
           "max_memory_allocated", "max_memory_reserved", "memory_allocated",
           "memory_reserved", "memory_stats", "reset_accumulated_memory_stats",
           "reset_peak_memory_stats", "set_device_idx", "set_device_index", "set_stream",
           "synchronize"]

_NONE = "Cannot access accelerator device when none is available."


def _none():
    return RuntimeError(_NONE)


def _jax_lacks(what):
    return NotImplementedError(
        f"wgrad.accelerator.{what}: JAX does not expose this for its GPUs (it schedules "
        f"streams, graphs and the allocator itself; docs/differences.md)")


def is_available():
    """Whether there is an accelerator: a GPU that JAX sees (``wgrad.cuda.is_available``).

    Example
    -------
    >>> wgrad.accelerator.is_available() == (wgrad.accelerator.device_count() > 0)
    True
    """
    return _cuda.is_available()


def current_accelerator(check_available=False):
    """``device("cuda")`` when JAX sees a GPU, else None (``check_available`` changes
    nothing: wgrad's accelerator is one that is there).

    Example
    -------
    >>> acc = wgrad.accelerator.current_accelerator()
    >>> acc is None or acc.type == "cuda"
    True
    """
    return _device("cuda") if _cuda.is_available() else None


def device_count():
    """The number of GPUs JAX sees (0 without one).

    Example
    -------
    >>> wgrad.accelerator.device_count() == wgrad.cuda.device_count()
    True
    """
    return _cuda.device_count()


def _get_device_index(device, optional):
    """torch's reading of a device argument: an int as it is, a device or a string naming
    the accelerator's type (its index, or the current index when ``optional``)."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    index = None
    if isinstance(device, _device):
        acc = current_accelerator()
        if acc is None:
            raise RuntimeError("Accelerator expected")
        if acc.type != device.type:
            raise ValueError(f"{device.type} doesn't match the current accelerator {acc}.")
        index = device.index
    if index is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        return current_device_index()
    return index


def current_device_index():
    """The index of the current GPU (``wgrad.cuda.current_device()``); raises without one.

    Example
    -------
    >>> if wgrad.accelerator.is_available():
    ...     assert wgrad.accelerator.current_device_index() == wgrad.cuda.current_device()
    """
    if not _cuda.is_available():
        raise _none()
    return _cuda.current_device()


def set_device_index(device, /):
    """Make ``device`` (an index, ``"cuda:1"``, a device) the current GPU; a negative
    index changes nothing, as torch's.

    Example
    -------
    >>> wgrad.accelerator.set_device_index(-1)  # a no-op, with or without a GPU
    """
    index = _get_device_index(device, optional=False)
    if not _cuda.is_available():
        if index < 0:
            return
        raise _none()
    _cuda.set_device(index)


def current_device_idx():
    """Deprecated: :func:`current_device_index`, with torch's FutureWarning."""
    warnings.warn("Use `current_device_index` instead.", FutureWarning, stacklevel=2)
    return current_device_index()


def set_device_idx(device, /):
    """Deprecated: :func:`set_device_index`, with torch's FutureWarning."""
    warnings.warn("Use `set_device_index` instead.", FutureWarning, stacklevel=2)
    return set_device_index(device)


class device_index:
    """Context manager: ``device`` (an index; None changes nothing) is the current GPU
    inside, the previous one again after.

    Example
    -------
    >>> with wgrad.accelerator.device_index(None):
    ...     pass
    """

    def __init__(self, device, /):
        self.idx = device
        self.prev_idx = -1

    def __enter__(self):
        if self.idx is not None:
            if not _cuda.is_available():
                raise _none()
            self.prev_idx = _cuda.current_device()
            if self.idx >= 0:
                _cuda.set_device(self.idx)

    def __exit__(self, *exc_info):
        if self.idx is not None and self.prev_idx >= 0:
            _cuda.set_device(self.prev_idx)


def current_stream(device=None, /):
    """torch's current stream: JAX keeps its streams to itself, so this raises
    (NotImplementedError with a GPU, torch's error without one)."""
    _get_device_index(device, optional=True)
    if not _cuda.is_available():
        raise _none()
    raise _jax_lacks("current_stream")


def set_stream(stream):
    """Set the current stream: raises, as :func:`current_stream`."""
    if not _cuda.is_available():
        raise _none()
    raise _jax_lacks("set_stream")


def synchronize(device=None, /):
    """Wait for the work queued on a GPU (``wgrad.cuda.synchronize``); raises without one,
    as torch's."""
    index = _get_device_index(device, optional=True)
    if not _cuda.is_available():
        raise _none()
    _cuda.synchronize(index)


def get_device_capability(device=None, /):
    """``{"supported_dtypes": {...}}``: the dtypes wgrad can place on the GPU (all of its
    dtypes; the 64-bit ones only in JAX's 64-bit mode). Raises without a GPU."""
    _get_device_index(device, optional=True)
    if not _cuda.is_available():
        raise _none()
    names = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
             "float32", "float64", "complex64", "complex128"]
    if not D.X64_ENABLED:
        names = [n for n in names if n not in ("int64", "float64", "complex128")]
    return {"supported_dtypes": {getattr(D, n) for n in names}}


class Graph:
    """torch.accelerator.Graph (CUDA graph capture and replay): XLA compiles whole
    programs instead (``wgrad.compile``), so constructing one raises."""

    def __new__(cls, keep_graph=False, *, pool=None, capture_error_mode="default"):
        if not _cuda.is_available():
            raise _none()
        raise _jax_lacks("Graph")


def _allocator():
    if not _cuda.is_available():
        raise _none()


def empty_cache():
    """``wgrad.cuda.empty_cache()`` (JAX's allocator returns nothing on request); raises
    without a GPU, as torch's."""
    _allocator()
    _cuda.empty_cache()


def empty_host_cache():
    """Nothing to release: wgrad keeps no pinned host memory. Raises without a GPU."""
    _allocator()


def memory_stats(device_index=None, /):
    """The GPU's allocator statistics under torch's names, from JAX's
    (``allocated_bytes.all.current``/``.peak``: bytes held by live arrays;
    ``reserved_bytes.all.current``/``.peak``: JAX's pool), in torch's sorted order.
    Raises without a GPU."""
    _allocator()
    i = _get_device_index(device_index, optional=True)
    stats = {"allocated_bytes.all.current": _cuda.memory_allocated(i),
             "allocated_bytes.all.peak": _cuda.max_memory_allocated(i),
             "reserved_bytes.all.current": _cuda.memory_reserved(i),
             "reserved_bytes.all.peak": _cuda.max_memory_reserved(i)}
    return collections.OrderedDict(sorted(stats.items()))


def memory_allocated(device_index=None, /):
    """Bytes held by live arrays on the GPU (``wgrad.cuda.memory_allocated``)."""
    return memory_stats(device_index).get("allocated_bytes.all.current", 0)


def max_memory_allocated(device_index=None, /):
    """The peak of :func:`memory_allocated` since the process started."""
    return memory_stats(device_index).get("allocated_bytes.all.peak", 0)


def memory_reserved(device_index=None, /):
    """Bytes JAX's allocator holds on the GPU (``wgrad.cuda.memory_reserved``)."""
    return memory_stats(device_index).get("reserved_bytes.all.current", 0)


def max_memory_reserved(device_index=None, /):
    """The peak of :func:`memory_reserved` since the process started."""
    return memory_stats(device_index).get("reserved_bytes.all.peak", 0)


def reset_accumulated_memory_stats(device_index=None, /):
    """Raises with a GPU (JAX's allocator counts from the process start and cannot be
    reset), torch's error without one."""
    _allocator()
    _get_device_index(device_index, optional=True)
    raise _jax_lacks("reset_accumulated_memory_stats")


def reset_peak_memory_stats(device_index=None, /):
    """Raises with a GPU (JAX keeps its peaks from the process start), torch's error
    without one."""
    _allocator()
    _get_device_index(device_index, optional=True)
    raise _jax_lacks("reset_peak_memory_stats")


def get_memory_info(device_index=None, /):
    """torch's ``(free, total)`` device memory: JAX reports its allocator's limit, not the
    device's free and total memory, so this raises with a GPU (torch's error without)."""
    _get_device_index(device_index, optional=True)
    if not _cuda.is_available():
        raise _none()
    raise _jax_lacks("get_memory_info")
