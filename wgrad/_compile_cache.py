"""The persistent compilation cache: XLA executables kept on disk across processes.

# NOTE [Persistent compilation cache]
# Every op kernel, backward kernel and lazy segment (NOTE [Lazy segments]) is compiled by
# XLA the first time it meets a new shape: 50-600 ms per new kernel on a CPU, paid again
# by every fresh process (a notebook restart, a test run). At import wgrad points JAX's
# own persistent cache at a user cache directory, with the thresholds lowered so that the
# small kernels of eager code are kept too (JAX keeps only compilations over 1 s by
# default). Where it goes:
# - ``WGRAD_COMPILE_CACHE=0`` (or ``off``, ``false``, ``no``): no cache;
# - ``WGRAD_COMPILE_CACHE=<dir>``: that directory;
# - else ``$XDG_CACHE_HOME/wgrad/jax``, or ``~/.cache/wgrad/jax``.
# A user who configured JAX's cache (``jax_compilation_cache_dir`` set, or the
# ``JAX_COMPILATION_CACHE_DIR`` variable) keeps theirs, thresholds included. A directory
# that cannot be created or written to leaves the cache off with one warning; import never
# fails because of it. Measured first-call latencies are in docs/performance.md.

# NOTE [Shared MLIR context]
# A warm persistent cache still leaves JAX to trace and lower every new kernel to MLIR
# before it can look the executable up, and each lowering creates a new MLIR context and
# loads every dialect into it: ~3 ms of the ~9 ms a kernel's first call costs with a warm
# cache. ``share_mlir_context`` makes JAX's ``make_ir_context`` hand out one context per
# thread (a context holds any number of modules; one per thread because MLIR contexts are
# not thread-safe). Measured first steps in a warm-cache process (bench/bench_cold.py's
# workloads, 2026-11-24, two runs each): chain 137/157 ms -> 92/94 ms, MLP 85/118 -> 70/75,
# phase 66/85 -> 39/57; and 1,200 lowerings of new shapes grew the process by 552 MB
# instead of 2,509 MB (the per-lowering contexts stay alive with their executables). The
# modules, and so the cache keys and executables, are the same. It patches a JAX internal:
# where ``jax._src.interpreters.mlir.make_ir_context`` is missing, nothing changes;
# ``WGRAD_SHARED_MLIR_CONTEXT=0`` turns it off.

# NOTE [CPU dispatch]
# JAX's CPU backend runs a computation it estimates as more than cheap on a worker thread
# and hands the result back (asynchronous dispatch). On the sessions' 2-core machines that
# handoff costs 25-60 us a call: a complex64 64x256 product of two arrays takes 48-70 us
# dispatched that way and 8 us on the calling thread, an 8x8 matmul 33-48 us against 6
# (figures in docs/performance.md, "CPU dispatch"). Eager wgrad code calls XLA once per
# op and mostly waits for the result soon after, so the overlap the handoff buys is small
# and its cost is paid per op: at import wgrad has the CPU backend run every computation
# on the calling thread (``jax_cpu_enable_async_dispatch`` off), as it turns on
# ``jax_enable_x64``. It applies to the whole process and only where the CPU backend is
# not yet created; a JAX program that keeps computing while its Python runs ahead may
# want it back: ``WGRAD_CPU_ASYNC_DISPATCH=1`` (or a ``JAX_CPU_ENABLE_ASYNC_DISPATCH``
# variable, the user's own choice) leaves JAX's default.
"""
import importlib
import os
import tempfile
import threading
import warnings

import jax

try:  # a JAX internal (NOTE [Shared MLIR context]); without it nothing is patched
    _jax_mlir = importlib.import_module("jax._src.interpreters.mlir")
except ImportError:  # pragma: no cover (another JAX layout)
    _jax_mlir = None

__all__ = ["configure", "cache_dir", "default_dir", "share_mlir_context",
           "synchronous_cpu_dispatch"]

_OFF = ("0", "off", "false", "no", "")
_state = {"dir": None}


def default_dir():
    """``$XDG_CACHE_HOME/wgrad/jax``, or ``~/.cache/wgrad/jax``."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "wgrad", "jax")


def _writable(path):
    try:
        os.makedirs(path, exist_ok=True)
        fd, probe = tempfile.mkstemp(dir=path, prefix=".probe")
        os.close(fd)
        os.remove(probe)
        return True
    except OSError:
        return False


def configure(environ=None):
    """Turn JAX's persistent cache on as NOTE [Persistent compilation cache] says;
    returns the directory used, or None."""
    env = os.environ if environ is None else environ
    if jax.config.jax_compilation_cache_dir or env.get("JAX_COMPILATION_CACHE_DIR"):
        return None  # the user's own configuration wins
    choice = env.get("WGRAD_COMPILE_CACHE")
    if choice is not None and choice.strip().lower() in _OFF:
        return None
    path = os.path.abspath(os.path.expanduser(choice)) if choice else default_dir()
    if not _writable(path):
        warnings.warn(f"wgrad: the compilation cache directory {path!r} is not writable; "
                      f"compiled kernels are not cached across processes (set "
                      f"WGRAD_COMPILE_CACHE to another directory, or to 0)", RuntimeWarning,
                      stacklevel=3)
        return None
    jax.config.update("jax_compilation_cache_dir", path)
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", -1)
    _state["dir"] = path
    return path


def cache_dir():
    """The directory wgrad pointed JAX's persistent cache at, or None."""
    return _state["dir"]


def share_mlir_context(environ=None):
    """One MLIR context per thread for JAX's lowerings (NOTE [Shared MLIR context]);
    returns whether it is on."""
    env = os.environ if environ is None else environ
    if env.get("WGRAD_SHARED_MLIR_CONTEXT", "1").strip().lower() in _OFF:
        return False
    mlir = _jax_mlir
    make = getattr(mlir, "make_ir_context", None)
    if make is None:
        return False
    if getattr(make, "_wgrad_shared", False):
        return True
    local = threading.local()

    def shared_ir_context():
        ctx = getattr(local, "context", None)
        if ctx is None:
            ctx = local.context = make()
        return ctx
    shared_ir_context._wgrad_shared = True
    shared_ir_context.__wrapped__ = make
    mlir.make_ir_context = shared_ir_context
    return True


def synchronous_cpu_dispatch(environ=None):
    """Have JAX's CPU backend run computations on the calling thread (NOTE [CPU
    dispatch]); returns whether wgrad set it."""
    env = os.environ if environ is None else environ
    if env.get("WGRAD_CPU_ASYNC_DISPATCH", "0").strip().lower() not in _OFF \
            or "JAX_CPU_ENABLE_ASYNC_DISPATCH" in env:
        return False
    jax.config.update("jax_cpu_enable_async_dispatch", False)
    return True
