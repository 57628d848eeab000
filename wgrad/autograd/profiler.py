"""``wgrad.autograd.profiler``: torch.autograd.profiler's ``record_function`` and the
profiler's names.

``record_function(name)`` labels a region, as a context manager or a decorator: the label
goes to JAX's profiler (a ``jax.profiler.TraceAnnotation``), so regions show in a trace
taken with ``jax.profiler.trace``; outside one it costs well under a microsecond. wgrad
has no op-level profiler of torch's kind (XLA runs fused programs, not torch's ops), so
``profile`` raises NotImplementedError when asked to record (``enabled=False``, torch's
off switch, gives a profiler that records nothing, as torch's) rather than return an
empty profile; so do ``emit_nvtx`` and ``emit_itt`` when enabled. Use
``jax.profiler.trace(log_dir)`` (TensorBoard/Perfetto) to see where time goes.

Example
-------
>>> with wgrad.autograd.profiler.record_function("loss"):
...     y = (wgrad.ones(3) * 2).sum()
>>> y
tensor(6.)
"""
import contextlib
import enum

from jax.profiler import TraceAnnotation

__all__ = ["profile", "record_function", "emit_itt", "emit_nvtx", "kineto_available",
           "ProfilerActivity", "DeviceType"]


def _no_profiler(what):
    return NotImplementedError(
        f"{what}: wgrad has no op-level profiler (XLA runs fused programs, not torch's ops); "
        f"take a trace with jax.profiler.trace(log_dir) (record_function's labels show in "
        f"it), or time a region with time.perf_counter() around a synchronizing call "
        f"(.item())")


class ProfilerActivity(enum.IntEnum):
    """The kinds of activity torch's profiler records (torch's values)."""
    CPU = 0
    XPU = 1
    CUDA = 2
    HPU = 3
    MTIA = 4
    PrivateUse1 = 5


class DeviceType(enum.IntEnum):
    """torch's device types as its profiler reports them (torch's values)."""
    CPU = 0
    CUDA = 1
    MKLDNN = 2
    OPENGL = 3
    OPENCL = 4
    IDEEP = 5
    HIP = 6
    FPGA = 7
    MAIA = 8
    XLA = 9
    Vulkan = 10
    Metal = 11
    XPU = 12
    MPS = 13
    Meta = 14
    HPU = 15
    VE = 16
    Lazy = 17
    IPU = 18
    MTIA = 19
    PrivateUse1 = 20


def kineto_available():
    """False: wgrad has no Kineto (torch's profiling library)."""
    return False


class record_function(contextlib.ContextDecorator):  # a decorator too
    """Label a region ``name`` (``args``: an optional string), as a context manager or a
    function decorator; the label goes to JAX's profiler.

    Example
    -------
    >>> @wgrad.autograd.profiler.record_function("double")
    ... def double(x):
    ...     return x * 2
    >>> double(wgrad.ones(2))
    tensor([2., 2.])
    """

    def __init__(self, name, args=None):
        self.name = name
        self.args = args
        self.run_callbacks_on_exit = True
        self.record = None
        self._open = []

    def __enter__(self):
        label = self.name if self.args is None else f"{self.name}({self.args})"
        self.record = TraceAnnotation(label)
        self.record.__enter__()
        self._open.append(self.record)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        if not self.run_callbacks_on_exit:
            return
        if not self._open:
            raise AssertionError("Expected record to be set")
        self._open.pop().__exit__(exc_type, exc_value, traceback)



class profile:
    """torch.autograd.profiler.profile: ``enabled=False`` gives torch's profiler that
    records nothing (``with`` yields None, as torch's); an enabled one raises
    NotImplementedError (see the module).

    Example
    -------
    >>> with wgrad.autograd.profiler.profile(enabled=False) as prof:
    ...     pass
    >>> prof is None
    True
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        if enabled:
            raise _no_profiler("wgrad.autograd.profiler.profile")
        self.enabled = False

    def __enter__(self):
        return None

    def __exit__(self, exc_type, exc_value, traceback):
        return False

    def _nothing(self, *args, **kwargs):
        raise RuntimeError("Profiler didn't finish running: it was disabled (enabled=False), "
                           "so it recorded nothing")

    key_averages = table = total_average = export_chrome_trace = export_stacks = _nothing


class _Emit:
    """``emit_nvtx``/``emit_itt``: do nothing when disabled, raise when enabled."""

    _what = ""

    def __init__(self, enabled=True, record_shapes=False):
        if enabled:
            raise _no_profiler(f"wgrad.autograd.profiler.{self._what}")
        self.enabled = False

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        return False


class emit_nvtx(_Emit):
    """NVTX ranges per op for NVIDIA's profilers: raises when enabled (wgrad's ops are not
    CUDA kernels of their own); ``enabled=False`` does nothing."""
    _what = "emit_nvtx"


class emit_itt(_Emit):
    """ITT ranges per op for Intel VTune: raises when enabled; ``enabled=False`` does
    nothing."""
    _what = "emit_itt"
