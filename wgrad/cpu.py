"""``wgrad.cpu``: torch.cpu, the CPU's side of device-agnostic code (``torch.cuda``'s
functions for the CPU: one device, always there, one do-nothing stream).

As torch's, ``synchronize`` returns at once: wgrad runs JAX's CPU computations on the
calling thread (NOTE [CPU dispatch] in _compile_cache.py), so nothing is pending; with
``WGRAD_CPU_ASYNC_DISPATCH=1`` wait for a result with ``.item()`` or ``.numpy()``.
``get_capabilities`` reads the CPU's instruction sets from ``/proc/cpuinfo`` (Linux; only
``architecture`` and ``num_logical_cores`` elsewhere). ``wgrad.cpu.amp`` has torch's
deprecated ``autocast``/``GradScaler`` over ``wgrad.amp``.

Example
-------
>>> wgrad.cpu.is_available(), wgrad.cpu.device_count(), wgrad.cpu.current_device()
(True, 1, 'cpu')
"""
import contextlib
import functools
import os
import sys
import types

from . import _cpu_amp as amp  # torch.cpu.amp (deprecated aliases of wgrad.amp's)

__all__ = ["is_available", "is_initialized", "synchronize", "current_device",
           "current_stream", "stream", "set_device", "device_count", "Stream",
           "StreamContext", "Event", "get_capabilities", "amp"]
sys.modules[__name__ + ".amp"] = amp  # ``from wgrad.cpu.amp import autocast``


def is_available():
    """True: the CPU is always there (for device-agnostic code)."""
    return True


def is_initialized():
    """True: the CPU needs no initialisation."""
    return True


def synchronize(device=None):
    """Returns at once, as torch's: wgrad's CPU computations have finished when an op
    returns (see the module). ``device`` is ignored: there is one CPU device."""


def device_count():
    """1: the CPU is one device (not the number of cores)."""
    return 1


def set_device(device):
    """Does nothing: there is one CPU device."""


def current_device():
    """``"cpu"`` (a string, as torch's)."""
    return "cpu"


class Stream:
    """A stream that orders nothing (the CPU runs ops in program order); for code written
    against ``torch.cuda.Stream``.

    Example
    -------
    >>> s = wgrad.cpu.Stream()
    >>> with wgrad.cpu.stream(s):
    ...     wgrad.cpu.current_stream() is s
    True
    """

    def __init__(self, priority=-1):
        pass

    def wait_stream(self, stream):
        pass

    def record_event(self):
        pass

    def wait_event(self, event):
        pass


class Event:
    """An event that is always reached (``query()`` is True)."""

    def query(self):
        return True

    def record(self, stream=None):
        pass

    def synchronize(self):
        pass

    def wait(self, stream=None):
        pass


_default_stream = Stream()
_current = [_default_stream]


def current_stream(device=None):
    """The stream :func:`stream` made current (the default one outside)."""
    return _current[0]


class StreamContext(contextlib.AbstractContextManager):
    """Makes ``stream`` current inside (None: changes nothing)."""

    def __init__(self, stream):
        self.stream = stream
        self.prev_stream = _default_stream

    def __enter__(self):
        if self.stream is not None:
            self.prev_stream = _current[0]
            _current[0] = self.stream

    def __exit__(self, type, value, traceback):  # noqa: A002  (torch's names)
        if self.stream is not None:
            _current[0] = self.prev_stream


def stream(stream):
    """``StreamContext(stream)``."""
    return StreamContext(stream)


# torch's capability names -> the /proc/cpuinfo flag that says it (x86); arm64 names are
# the kernel's "Features" names where they differ
_X86 = {"sse": "sse", "sse2": "sse2", "sse3": "pni", "ssse3": "ssse3", "sse4_1": "sse4_1",
        "sse4_2": "sse4_2", "sse4a": "sse4a", "avx": "avx", "avx2": "avx2",
        "avx_vnni": "avx_vnni", "avx512_f": "avx512f", "avx512_cd": "avx512cd",
        "avx512_dq": "avx512dq", "avx512_bw": "avx512bw", "avx512_vl": "avx512vl",
        "avx512_ifma": "avx512ifma", "avx512_vbmi": "avx512vbmi",
        "avx512_vbmi2": "avx512_vbmi2", "avx512_bitalg": "avx512_bitalg",
        "avx512_vpopcntdq": "avx512_vpopcntdq", "avx512_vnni": "avx512_vnni",
        "avx512_bf16": "avx512_bf16", "avx512_fp16": "avx512_fp16",
        "avx512_vp2intersect": "avx512_vp2intersect", "avx512_4vnniw": "avx512_4vnniw",
        "avx512_4fmaps": "avx512_4fmaps", "avx10_1": "avx10_1", "avx10_2": "avx10_2",
        "avx_vnni_int8": "avx_vnni_int8", "avx_vnni_int16": "avx_vnni_int16",
        "avx_ne_convert": "avx_ne_convert", "amx_bf16": "amx_bf16", "amx_tile": "amx_tile",
        "amx_int8": "amx_int8", "amx_fp16": "amx_fp16", "fma3": "fma", "fma4": "fma4",
        "f16c": "f16c", "bmi": "bmi1", "bmi2": "bmi2", "popcnt": "popcnt", "lzcnt": "abm",
        "aes": "aes", "sha": "sha_ni", "clflush": "clflush", "clflushopt": "clflushopt",
        "clwb": "clwb"}
_ARM = {"neon": "asimd", "fp16_arith": "asimdhp", "bf16": "bf16", "i8mm": "i8mm",
        "dot": "asimddp", "sve": "sve", "sve2": "sve2", "sve_bf16": "svebf16",
        "sme": "sme", "sme2": "sme2", "atomics": "atomics", "fhm": "asimdfhm",
        "rdm": "asimdrdm", "crc32": "crc32", "aes": "aes", "sha1": "sha1", "sha2": "sha2",
        "pmull": "pmull"}


def _cpu_flags():
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as fh:
            for line in fh:
                key, _, value = line.partition(":")
                if key.strip() in ("flags", "Features"):
                    return set(value.split())
    except OSError:
        pass
    return None


@functools.lru_cache(None)
def get_capabilities():
    """An immutable mapping of the CPU's capabilities under torch's names: ``architecture``,
    ``num_logical_cores`` and, on Linux, whether each instruction set torch names is there
    (from ``/proc/cpuinfo``; torch's cpuinfo library also reports cache sizes, socket and
    physical core counts and the CPU's name, which are left out here).

    Example
    -------
    >>> caps = wgrad.cpu.get_capabilities()
    >>> isinstance(caps["architecture"], str) and caps["num_logical_cores"] >= 1
    True
    """
    arch = (os.uname().machine if hasattr(os, "uname") else
            os.environ.get("PROCESSOR_ARCHITECTURE", "")).lower()
    arch = {"amd64": "x86_64", "arm64": "aarch64"}.get(arch, arch)
    caps = {"architecture": arch, "num_logical_cores": os.cpu_count() or 1}
    flags = _cpu_flags()
    names = _X86 if arch in ("x86_64", "i686", "x86") else _ARM if arch == "aarch64" else {}
    if flags is not None:
        caps.update({k: v in flags for k, v in names.items()})
    return types.MappingProxyType(caps)
