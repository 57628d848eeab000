"""Lazy mode's output avals and executables kept on disk across processes.

# NOTE [Lazy disk cache]
# JAX's persistent cache (NOTE [Persistent compilation cache]) saves XLA's compile time,
# but a fresh process still traces every op signature to learn its output shapes
# (``jax.eval_shape``, NOTE [Lazy segments]) and traces and lowers every segment to MLIR to
# find its executable: most of a lazy first step in a warm-cache process (docs/
# performance.md, "Lazy disk cache"). So lazy mode keeps entries of its own beside JAX's,
# keyed by what it records instead of by the lowered program:
# - per recorded function and input avals, the output avals and tree, and per backward
#   kernel and input avals whether it hands gradients on untouched (NOTE [Pass-through
#   kernels]): ``remembered``;
# - per segment, and per full group backward called directly, the executable, serialized
#   by ``jax.experimental.serialize_executable`` (``compiled``), which a later process
#   loads without tracing or lowering anything.
# A function takes part only where it is wgrad's own and its key is exact text: a
# Primitive's forward (the primitive by name, node name, the place of its forward in
# wgrad's source and its rank among primitives with that place, all made while ``import
# wgrad`` runs, so the same source numbers them alike), an op ``jax_function`` lifts from
# one of wgrad's own functions at import (nn's recurrent layers, pooling, interpolation:
# by the function's place, the op's argument tree and static values; ``lift_place``), a
# lazy group's backward (its ops' signatures, sources and outputs) or the once-each
# wrapper of one; every attribute a plain value (numbers by their exact ``repr``,
# strings, NumPy dtypes, enum members, slices, tuples...).
# Anything else (a custom Function's backward, a user's function, an attribute that is an
# object) leaves its segment to be compiled as before.
# Every key also holds a fingerprint of all else that decides the program: wgrad's source
# files (path, size and modification time, read at the end of ``import wgrad``: the code
# the process runs), the versions of Python, NumPy, JAX and
# jaxlib, the backend, its version and device kind, the CPU's model and flags, XLA_FLAGS,
# every JAX configuration value (x64, the default matmul precision, ...) and wgrad's
# default dtype. A change to any of them misses; no process loads another's program for
# other code or settings. Only where JAX sees one device (a loaded executable is bound to
# its device). An entry is written to a temporary file and renamed, so a concurrent
# process never reads half of one; one that cannot be read is recompiled and rewritten.
# An executable that JAX's own persistent cache served cannot be serialized again: one
# process's executable compiled from a cache entry, serialized and loaded in the next,
# fails when it runs ("Function multiply_add_fusion not found", JAX 0.10.2, CPU). So one
# to be kept is compiled past JAX's cache (``_fresh``: a JAX internal, patched for the
# calling thread only; where it is missing no executable is kept), and a loaded one that
# raises falls back, for good, to the jitted function. A custom call's target is set up
# in the process that lowers it: jaxlib fills its LAPACK function pointers (from SciPy)
# then, and a process that only loaded an eigh crashed running it (JAX 0.10.2, CPU). So
# an executable whose custom calls are all jaxlib's LAPACK targets is kept marked
# ``"lapack"``, and ``_load`` sets LAPACK up before loading it (a warm eager matrix_exp
# first step 267 -> ~120 ms, ~90 of them SciPy's import); one with any other custom call
# (a Python callback points into the process that compiled it) is not kept: its entry
# says so (``_NOT_KEPT``), and later processes go through JAX's own cache for it.
# Loading an executable takes ~3 ms (XLA relinks its code), more than the rest of its
# first call; it releases the GIL (but for ~1-2 ms of set-up in a process's first load,
# why loading the first one early does not pay: docs/performance.md, "Nineteenth
# session"). So the first executable a process needs keeps, in a
# ``.next`` entry, the names of those the process needed after it (up to 32), and a later
# process that needs it first loads them on a background thread while its first step is
# recorded (``_start``; joined at exit, before JAX tears its backends down). A process
# that needed fewer than its list named rewrites it at exit: a list that only grew (an
# earlier program that began alike and went on) had the MLP benchmark's first step load
# 24 executables where it needs 2 (first step 20-22 -> 15-20 ms with the short list).
# Likewise the facts (avals, pass-through) a process needed, up to 64, go into one
# ``.facts`` entry named after its first one, which a later process that begins alike
# reads at once instead of one file per op (phase first step: five reads of ~30-50 us).
# The folder is bounded: every 256 writes a process that finds it over 1 GiB
# (``WGRAD_LAZY_CACHE_MB``) removes the entries used least recently (``_trim``; a whole
# test suite run lazily wrote ~250 MB).
# It is on with wgrad's persistent cache, in its directory's ``wgrad-lazy`` folder, and
# off with it (``WGRAD_COMPILE_CACHE=0``; the test suite runs with it off).
"""
import atexit
import enum
import hashlib
import importlib
import os
import pickle
import platform
import re
import sys
import tempfile
import threading

import jax
from jax._src.array import ArrayImpl as _ArrayImpl  # the class of concrete arrays
import jaxlib
import numpy as np

from .. import _compile_cache
from .. import _precision
from .._autograd import engine as _engine
from .. import _dtype as _D
from .._device import several_devices

try:  # optional: without them executables are not kept (avals still are)
    _serialize = importlib.import_module("jax.experimental.serialize_executable")
    _jax_compiler = importlib.import_module("jax._src.compiler")  # a JAX internal: _fresh
except ImportError:  # pragma: no cover (another JAX)
    _serialize = _jax_compiler = None
try:  # JAX internals the eager route builds its dispatcher from (NOTE [Eager disk cache])
    _pxla = importlib.import_module("jax._src.interpreters.pxla")
    _PJIT = (importlib.import_module("jax._src.lib")._jax.pjit, _pxla.JitGlobalCppCacheKeys,
             importlib.import_module("jax._src.tree_util").dispatch_registry,
             _pxla.cc_shard_arg, _pxla.MeshExecutable.create_cpp_call)
except (ImportError, AttributeError):  # pragma: no cover (another JAX): plain jax.jit
    _PJIT = None
if _serialize is None:  # pragma: no cover
    _PJIT = None
try:  # jaxlib's LAPACK bindings: their set-up before a kept LAPACK call is loaded
    _LAPACK = importlib.import_module("jaxlib.cpu._lapack")
except ImportError:  # pragma: no cover (another jaxlib): such executables are not kept
    _LAPACK = None

__all__ = ["register", "lift_place", "lifted_key", "seal", "directory", "remembered",
           "compiled", "DeferredJit", "FusedJit", "top_level", "kept", "add_arrays"]

_WGRAD = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_state = {"dir": False, "sealed": False, "stamp": None, "config": (None, ""),
          "src": None,  # wgrad's source files as imported (seal)
          "fallbacks": 0,  # loaded executables that raised (_Loaded, _eager)
          "loads": 0,  # executables loaded (_obtain)
          "writes": 0}
_SITES = {}    # a primitive's place -> how many primitives have it so far
_PLAIN = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
_ATOMS = frozenset([type(None), bool, int, float, complex, str, bytes])
_DTYPES = {}  # np.dtype -> its text (a few dozen dtypes at most)


class _Unkeyed(Exception):
    """A value with no exact text: what holds it is not kept on disk."""


def register(prim):
    """Give ``prim`` its place for disk keys (``prim._disk``), or None where it has none:
    made after ``import wgrad`` (``seal``), or by a function outside wgrad's source."""
    code = getattr(prim.fwd, "__code__", None)
    if _state["sealed"] or code is None or not code.co_filename.startswith(_WGRAD):
        prim._disk = None
        return
    place = (prim.name, prim.node_name, code.co_filename[len(_WGRAD) + 1:],
             code.co_firstlineno)  # the file relative to wgrad's folder
    rank = _SITES.get(place, 0)
    _SITES[place] = rank + 1
    prim._disk = place + (rank,)


def lift_place(f):
    """The place in disk keys of the ops ``jax_function`` lifts from ``f``: where ``f`` is
    one of wgrad's own functions without a closure, lifted while ``import wgrad`` runs
    (nn's recurrent layers, pooling, interpolation), by file, line and rank as
    ``register``'s; else None (a user's function: its ops are not kept)."""
    code = getattr(f, "__code__", None)
    if _state["sealed"] or code is None or getattr(f, "__closure__", None) or \
            not code.co_filename.startswith(_WGRAD):
        return None
    place = ("lift", code.co_filename[len(_WGRAD) + 1:], code.co_firstlineno)
    rank = _SITES.get(place, 0)
    _SITES[place] = rank + 1
    return place + (rank,)


def lifted_key(place, parts):
    """The place in disk keys of one op lifted at ``place`` (``lift_place``): that place
    and the exact text of ``parts`` (what else decides its program: the argument tree and
    static values), or None where either is missing."""
    try:
        return None if place is None else place + (_text(parts),)
    except _Unkeyed:
        return None


def seal():
    """The end of ``import wgrad``: primitives made later get no place (their rank could
    depend on what a program imported first). wgrad's source files are stamped now, where
    the cache is on: the code this process runs is what was imported (a file edited later
    must not name its programs), and the first lazy step does not pay the ~1 ms."""
    _state["sealed"] = True
    if _compile_cache.cache_dir() is not None:
        _state["src"] = _source_stamp()


def directory():
    """Where entries go, or None (NOTE [Lazy disk cache])."""
    d = _state["dir"]
    if d is False:
        d = None
        base = _compile_cache.cache_dir()
        if base is not None and not several_devices():
            d = os.path.join(base, "wgrad-lazy")
            try:
                os.makedirs(d, exist_ok=True)
            except OSError:
                d = None
        _state["dir"] = d
    return d


def _text(v):
    """Exact text of a plain value; _Unkeyed for anything else."""
    t = type(v)
    if t in _PLAIN:
        return f"{t.__name__}:{v!r}"
    if t is tuple or t is list:
        for x in v:
            if type(x) not in _ATOMS:
                return t.__name__[0] + "(" + ",".join([_text(x) for x in v]) + ")"
        return t.__name__[0] + repr(v)  # atoms only: their repr tells 1, 1.0, True apart
    if t is dict:
        return "d(" + ",".join([_text(k) + "=" + _text(x) for k, x in v.items()]) + ")"
    if t is slice:
        return f"s({_text(v.start)},{_text(v.stop)},{_text(v.step)})"
    if t is jax.tree_util.PyTreeDef:
        return "T" + str(v)
    if isinstance(v, np.dtype):
        text = _DTYPES.get(v)
        if text is None:  # NumPy's ``name`` is Python code: ~10 us a call
            text = _DTYPES[v] = f"dt:{v.name}:{v.str}"
        return text
    if isinstance(v, np.generic):
        return f"np:{v.dtype.name}:{v!r}"
    if isinstance(v, enum.Enum):  # jax.lax.Precision...: by class and member name
        return f"E:{type(v).__module__}.{type(v).__qualname__}.{v.name}"
    place = getattr(v, "_disk", False)
    if place is not False:  # a Primitive
        if place is None:
            raise _Unkeyed
        return "P" + _text(place)
    src = getattr(v, "_wg_src", None)  # a recorded function (its origin, set where made)
    if src is not None:
        text = getattr(v, "_wg_text", None)
        if text is None:  # once per function: a segment names each of its ops' functions
            text = v._wg_text = "F" + _text(src)
        return text
    raise _Unkeyed


def _source_stamp():
    """wgrad's source files by path, size and modification time."""
    out = []
    _scan(_WGRAD, out, len(_WGRAD) + 1)
    return "|".join(out)


def _scan(folder, out, cut):
    with os.scandir(folder) as it:
        entries = sorted(it, key=lambda e: e.name)
    for e in entries:
        if e.is_dir():
            if e.name != "__pycache__":
                _scan(e.path, out, cut)
        elif e.name.endswith(".py"):
            st = e.stat()
            out.append(f"{e.path[cut:]}:{st.st_size}:{st.st_mtime_ns}")


_CPU_LINES = re.compile(r"^(?:model name|flags)\b.*\n", re.M)


def _cpu():
    """The CPU's model and flags (every distinct line: cores may differ)."""
    try:
        with open("/proc/cpuinfo") as f:
            return "".join(sorted(set(_CPU_LINES.findall(f.read()))))
    except OSError:
        return platform.processor() + platform.machine()


def _fingerprint():
    """A hash of everything besides the key itself that decides a program (NOTE [Lazy
    disk cache]); the settings are read at every call (they may change in a process)."""
    if _state["stamp"] is None:
        dev = jax.devices()[0]
        _state["stamp"] = "\n".join([
            sys.version, np.__version__, jax.__version__, jaxlib.__version__,
            dev.platform, str(dev.client.platform_version), str(dev.device_kind), _cpu(),
            _state["src"] or _source_stamp()])
    values = (tuple(jax.config.values.items()), os.environ.get("XLA_FLAGS", ""),
              _D._default[0])
    seen, h = _state["config"]
    if values != seen:  # hashed again where a value changed since the last call
        h = hashlib.sha256("\n".join([
            _state["stamp"], values[1], repr(sorted(values[0])),  # names differ: sorted by them
            repr(values[2].np)]).encode())
        _state["config"] = (values, h)
    return h


def _digest(kind, parts, fp=None):
    """The file name of an entry, or None where a part has no exact text; ``fp``: the
    ``_fingerprint()`` where the caller has it."""
    try:
        text = _text(parts)
    except _Unkeyed:
        return None
    h = (fp or _fingerprint()).copy()
    h.update(kind.encode())
    h.update(text.encode())
    return h.hexdigest() + "." + kind


def _read(name, touch=False):
    """The entry ``name``, or None; ``touch``: renew its time (it was used: _trim)."""
    path = os.path.join(_state["dir"], name)
    try:
        with open(path, "rb") as f:
            value = pickle.load(f)
        if touch:
            os.utime(path)
        return value
    except Exception:  # absent, half-written by a crashed writer, another format
        return None


def _write(name, value):
    d = _state["dir"]
    try:
        fd, tmp = tempfile.mkstemp(dir=d, prefix=".tmp")
        with os.fdopen(fd, "wb") as f:
            pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, os.path.join(d, name))  # atomic: readers see all of it or none
    except Exception:  # a full disk, a removed directory: the entry is not kept
        try:
            os.remove(tmp)
        except Exception:
            pass
    _state["writes"] += 1
    if _state["writes"] % _TRIM_EVERY == 0:
        _trim(d, MAX_BYTES)


MAX_BYTES = int(float(os.environ.get("WGRAD_LAZY_CACHE_MB", "1024")) * 2 ** 20)
_TRIM_EVERY = 256


def _trim(d, limit):
    """Remove the least recently used entries (by modification time, which a load
    renews) until the folder holds at most 3/4 of ``limit`` bytes, where it holds more."""
    try:
        entries = []
        total = 0
        with os.scandir(d) as it:
            for e in it:
                if e.is_file():
                    st = e.stat()
                    entries.append((st.st_mtime_ns, st.st_size, e.path))
                    total += st.st_size
        if total <= limit:
            return
        entries.sort()
        for _, size, path in entries:
            if total <= limit * 3 // 4:
                break
            os.remove(path)
            total -= size
    except OSError:  # another process trims too
        pass


def remembered(kind, fn, parts, compute):
    """``compute()``, a fact about wgrad's own function ``fn`` over ``parts`` (its output
    avals, whether it passes gradients through) that no process has to trace for again:
    read from the entry an earlier process wrote, else computed and written. ``fn`` is a
    recorded function, or a lifted op's place (``lifted_key``)."""
    if directory() is None or (type(fn) is not tuple and getattr(fn, "_wg_src", None) is None):
        return compute()
    name = _digest(kind, (fn, parts))
    if name is None:
        return compute()
    got = _facts["got"].get(name) if _facts["root"] else _first_fact(name)
    if got is None:
        got = _read(name)
        if type(got) is not tuple or len(got) != 1:
            got = (compute(),)
            _write(name, got)
        _fact(name, got)
    return got[0]


# The facts a process needed first, in one entry (NOTE [Lazy disk cache]): a warm first
# step reads one file for them instead of one per op.
_facts = {"root": None, "got": {}}
_FACTS_MAX = 64


def _first_fact(name):
    """At the process's first fact: the entry of the facts that the last process which
    began with it needed, or None."""
    f = _facts
    f["root"] = name.rsplit(".", 1)[0] + ".facts"
    got = _read(f["root"])
    if type(got) is tuple and len(got) == 1 and type(got[0]) is dict:
        f["got"] = got[0]
    return f["got"].get(name)


def _fact(name, got):
    """Add a fact this process read or computed to the facts entry of its first one."""
    f = _facts
    if len(f["got"]) < _FACTS_MAX:
        f["got"] = {**f["got"], name: got}  # a new dict: a reader may hold the old one
        _write(f["root"], (f["got"],))


# NOTE [Deferred jit]
# ``jax.jit(f)`` costs 30-80 us (JAX inspects f's signature and builds its C++ dispatcher),
# and a lazy first step makes one per op signature (its forward), per node signature (its
# backward kernel), per segment, per group and per group called directly (its once-each
# wrapper): 18 in the MLP benchmark's first step, 12 in the phase step's. In a warm-cache
# process none of them is called: loaded executables stand for segments and groups
# (``compiled``), a group runs its kernels' plain functions (``k.fun``) and the avals are
# remembered. So these five are ``DeferredJit``s, which make the jitted function at their
# first use (a call, ``lower``, ``trace``) and keep it; one costs an extra Python call
# (~0.1 us) where it is called. Attributes set on it (``_wg_src``, a kernel's ``names``...)
# are its own; any other lookup fails as on a plain object, so that reading a key
# (``_text``) never builds one. First lazy steps in warm-cache processes, 14 and 8
# alternating runs (docs/performance.md, "Seventeenth session"): MLP 17.1 -> 13.5 ms,
# phase 8.7 -> 5.7, chain 28.0 -> 25.8 (medians).
class DeferredJit:
    """``jax.jit(fun)``, made at its first use (NOTE [Deferred jit])."""

    __slots__ = ("fun", "_jitted", "__dict__", "__weakref__")

    def __init__(self, fun, **jit_kwargs):
        self.fun = fun
        self._jitted = None
        if jit_kwargs:
            self._kw = jit_kwargs  # for jax.jit (donate_argnums...)

    def jitted(self):
        j = self._jitted
        if j is None:
            src = self.__dict__.get("_wg_src")
            if src is not None and src[0] in _EAGER_KINDS and _PJIT is not None \
                    and directory() is not None:
                j = _eager(self)  # NOTE [Eager disk cache]
            else:
                j = self.plain()
            self._jitted = j
        return j

    def plain(self):
        """``jax.jit(fun)`` itself (for ``lower`` and ``trace``)."""
        j = self.__dict__.get("_plain")
        if j is None:
            j = self._plain = jax.jit(self.fun, **self.__dict__.get("_kw", {}))
        return j

    def __call__(self, *args, **kwargs):
        j = self._jitted
        if j is None:
            j = self.jitted()
        return j(*args, **kwargs)

    def lower(self, *args, **kwargs):
        return self.plain().lower(*args, **kwargs)

    def trace(self, *args, **kwargs):
        return self.plain().trace(*args, **kwargs)

    def _cache_size(self):
        return 0 if self._jitted is None else self._jitted._cache_size()


try:  # trace_ctx.is_top_level's test, without its two property calls (70 of 140 ns)
    _core = importlib.import_module("jax._src.core")  # a JAX internal: the trace context
    _trace_ref, _axis_env = _core.trace_state_strong_ref, _core.axis_env_state
    _eval_trace, _top_axis_env = _core.eval_trace, _core.top_axis_env
    _core.trace_ctx.is_top_level  # the test this one stands for

    def top_level():
        """Whether no JAX trace is under way (a call is not nested in another program)."""
        return _trace_ref.value is _eval_trace and _axis_env.value is _top_axis_env
except AttributeError:  # another JAX: taken as nested (no device constants, no options)
    def top_level():
        return False


class FusedJit(DeferredJit):
    """A :class:`DeferredJit` of a whole program (a lazy segment, a group's backward, a
    wgrad.compile step; ``jit_kwargs`` for jax.jit) compiled with ``FUSED_OPTIONS`` (NOTE
    [Rounding in fused programs]); called inside another trace, where JAX refuses compiler
    options, it runs as a plain jit."""

    __slots__ = ()

    def __init__(self, fun, **jit_kwargs):
        super().__init__(fun, compiler_options=_precision.FUSED_OPTIONS, **jit_kwargs)

    def __call__(self, *args, **kwargs):
        if not top_level():
            j = self.__dict__.get("_inner")
            if j is None:
                kw = {k: v for k, v in self._kw.items() if k != "compiler_options"}
                j = self._inner = jax.jit(self.fun, **kw)
            return j(*args, **kwargs)
        j = self._jitted
        if j is None:
            j = self.jitted()
        return j(*args, **kwargs)


class _Loaded:
    """A compiled executable, and the jitted function it stands for, which takes over
    for good where the executable raises (arguments of other types, never expected as
    the key holds their avals; an entry that does not run, NOTE [Lazy disk cache]: its
    file is removed, to be written again by the next process that compiles it)."""

    __slots__ = ("exe", "jitted", "name")

    def __init__(self, exe, jitted, name):
        self.exe = exe
        self.jitted = jitted
        self.name = name

    def __call__(self, *args):
        exe = self.exe
        if exe is not None:
            try:
                return exe(*args)
            except Exception:  # the jitted function raises what is the caller's
                self.exe = None
                _drop(self.name)
        return self.jitted(*args)


def _drop(name):
    """Forget the entry ``name``, whose loaded executable raised when it ran (to be
    compiled and written again by the next process that needs it)."""
    _state["fallbacks"] += 1
    try:
        os.remove(os.path.join(_state["dir"], name))
    except Exception:
        pass


_fresh = threading.local()  # set: this thread compiles past JAX's persistent cache


def _past_jax_cache():
    """Have JAX's compiler skip its persistent cache on threads that set ``_fresh.on``
    (NOTE [Lazy disk cache]); False where this JAX has no such internal."""
    if _state.get("patched") is None:
        get_key = getattr(_jax_compiler, "_get_cache_key", None)
        if get_key is None:
            _state["patched"] = False
        else:
            def cache_key(*args, **kwargs):
                return None if getattr(_fresh, "on", False) else get_key(*args, **kwargs)
            _jax_compiler._get_cache_key = cache_key
            _state["patched"] = True
    return _state["patched"]


def compiled(src, jitted, args):
    """A callable for ``jitted(*args)``: the executable an earlier process stored for
    ``src`` (the exact structure of what ``jitted`` computes) and the arguments' avals,
    else compiled now and stored; ``jitted`` itself where the disk cache is off or ``src``
    has no exact text. Second item: whether it was loaded."""
    if _serialize is None or directory() is None:
        return jitted, False
    avals = []
    for a in args:
        if a.__class__ is not _ArrayImpl:  # a Python number, a tracer: not kept
            return jitted, False
        av = a.aval
        avals.append((av.shape, av.dtype, av.weak_type))
    name = _digest("exe", (src, avals))
    if name is None:
        return jitted, False
    exe, loaded = _obtain(name, jitted, args)
    return (jitted if exe is None else _Loaded(exe, jitted, name)), loaded


_NOT_KEPT = ("jit",)  # an entry saying: this program is not kept, use the jitted function


def _obtain(name, jitted, args):
    """``(executable, loaded)`` for entry ``name``: loaded (on the prefetch thread or now),
    else compiled past JAX's cache and written; ``(None, False)`` where it is not kept
    (a custom call but LAPACK's, NOTE [Lazy disk cache]) or cannot be compiled here."""
    exe = _prefetched(name)
    if exe is None:
        got = _read(name, touch=True)
        if type(got) is tuple and got == _NOT_KEPT:
            return None, False
        if got is not None:
            try:
                exe = _load(got)
            except Exception:  # written by an incompatible runtime: compiled again below
                pass
    if exe is not None:
        _state["loads"] += 1
        return exe, True
    if not _past_jax_cache():
        return None, False
    _fresh.on = True
    try:
        exe = jitted.lower(*args).compile()
        # one that calls back into the process is used here, and later processes go
        # through JAX's own cache (which this compile skipped)
        how = _keeping(exe.as_text())
        _write(name, _NOT_KEPT if how is None else _serialize.serialize(exe) + how)
    except Exception:  # lowering raised (it will again, from the call), or no serializer
        return None, False
    finally:
        _fresh.on = False
    return exe, False


_TARGET = re.compile(r'custom_call_target="([^"]*)"')


def _keeping(text):
    """What an entry adds to the serialized executable of HLO ``text``: ``()``, or
    ``("lapack",)`` where it calls LAPACK (set up before it is loaded); None where it is
    not kept: another custom call (a Python callback's target is this process's)."""
    targets = set(_TARGET.findall(text))
    if not targets:
        return ()
    if _LAPACK is not None and targets <= _lapack_targets():
        return ("lapack",)
    return None


def _lapack_targets():
    if "lapack" not in _state:
        _state["lapack"] = frozenset(_LAPACK.registrations())
    return _state["lapack"]


def _load(got):
    """The executable of entry ``got``: a serialized executable and its trees, then
    "lapack" where jaxlib's LAPACK is to be set up first, as lowering a call sets it up
    (its function pointers, from SciPy: a loaded call crashes without them)."""
    if len(got) == 4:
        if got[3] != "lapack" or _LAPACK is None:
            raise ValueError(f"an entry of another wgrad: {got[3]!r}")
        _LAPACK.initialize()
    return _serialize.deserialize_and_load(*got[:3])


# NOTE [Eager disk cache]
# An eager op's first call at a new signature (its forward per attributes and input avals,
# its backward kernel per node signature) traces the function, lowers it to MLIR and
# hashes the module for JAX's persistent cache before it loads the executable: 2-4 ms of
# Python per op, most of an eager first step in a warm-cache process (the phase step 55-65
# ms against PyTorch's 1.7, 2026-11-29). Forward functions and kernels are keyed exactly
# already (NOTE [Lazy disk cache]: ``("f", primitive, attributes)``, ``("k", primitive,
# node signature)``), as are an optimizer's group update (``("o", rule, options)``,
# optim/_functional.py), the add that accumulates gradients (``add_arrays``) and wgrad's
# other computations outside its ops (``kept``: the host's checks of a result, isclose,
# sort's argsort; ``("a", name)``: a warm first allclose 42-47 -> ~6 ms, a sort 7 -> 3),
# so their executables are kept in the same folder, per that key, the argument tree and
# the leaves' avals (a Python number's by its type), and a later process loads them
# without tracing anything: warm-cache eager first steps (bench/run.py) chain 123 -> 48
# ms, MLP 56 -> 18, phase 46 -> 13; a first Adam step 284-324 -> 44-47. The dispatcher
# is JAX's own C++ one (``_jax.pjit``, what ``jax.jit`` and a loaded ``Compiled`` are made
# of) with a cache-miss handler of ours: on a signature it
# has not seen it loads the executable (or compiles it past JAX's cache and writes it,
# ``_obtain``) and hands back what the loaded executable's own handler gives, the
# executable included, so that the dispatcher keeps it and every later call of that
# signature runs in C++ as a ``jax.jit`` call would (under ``jax.disable_jit()`` it runs
# the function itself, as ``jax.jit``'s does). Tracers (a call inside a trace), keyword
# arguments and entries that are not kept go to ``jax.jit``'s handler. The in-process
# table of handlers is keyed by the fingerprint too: a setting changed (the matmul
# precision) misses JAX's dispatcher and must not find the old executable here. Only where
# the disk cache is on (the test suite runs with it off: tests/lazy/test_lazy_disk.py
# turns it on); without these JAX internals it is plain ``jax.jit``.
_EAGER_KINDS = frozenset(["f", "k", "o", "a"])
_SCALARS = frozenset([bool, int, float, complex])
_EAGER_MAX = 64  # signatures whose handlers one function keeps (NOTE [Bounded caches])


def _eager(dj):
    """A dispatcher for ``dj`` whose new signatures load their executables from disk
    (NOTE [Eager disk cache])."""
    pjit, keys, registry, shard_arg, _ = _PJIT
    handlers = {}  # (tree, avals, settings) -> (the executable's handler or None, entry)

    def miss(*args, **kwargs):
        if not kwargs and directory() is not None:
            leaves, tree = jax.tree_util.tree_flatten(args)
            avals = []
            for a in leaves:
                c = a.__class__
                if c is _ArrayImpl:
                    av = a.aval
                    avals.append((av.shape, av.dtype, av.weak_type))
                elif c in _SCALARS:  # its aval follows from its type (and x64, keyed)
                    avals.append(c.__name__)
                else:  # a tracer, another value
                    break
            else:
                # the settings too: a change (a JAX context manager) misses JAX's dispatcher
                fp = _fingerprint()
                key = (tree, tuple(avals), fp.digest())
                got = handlers.get(key)
                if got is None:
                    got = _handler(dj, key, args, fp)
                    if len(handlers) >= _EAGER_MAX:
                        handlers.clear()
                    handlers[key] = got
                h, name = got
                if h is not None:
                    try:
                        return h(*args)
                    except Exception:
                        out = dj.plain()._cache_miss(*args)  # raises what is the caller's
                        handlers[key] = (None, name)  # else the entry does not run: JAX's
                        _drop(name)  # path for good
                        return out
        return dj.plain()._cache_miss(*args, **kwargs)

    name = getattr(dj.fun, "__name__", "fun")
    # fun: what runs under jax.disable_jit(), as a jax.jit function's
    return pjit(name, dj.fun, miss, [], [], keys(), registry, shard_arg)


def _handler(dj, key, args, fp):
    """The cache-miss handler of the executable of ``dj`` at signature ``key`` (and
    ``fp``, the fingerprint), loaded or compiled and written (None where it is not kept),
    and its entry's name."""
    name = _digest("exe", (dj, key[0], key[1]), fp)
    exe = None if name is None else _obtain(name, dj, args)[0]
    try:
        call = None if exe is None else _PJIT[4](exe._executable, exe._params)
        return (None if call is None else call._cache_miss), name
    except Exception:  # pragma: no cover (another JAX's Compiled): jax.jit's path
        return None, name


def kept(name, fun):
    """``jax.jit(fun)``, made at its first use, whose executables are kept on disk as an
    op's are (NOTE [Eager disk cache]): for wgrad's own computations outside its ops (the
    host's checks of a result; ``name``, unique among them, is their key)."""
    dj = DeferredJit(fun)
    dj._wg_src = ("a", name)
    return dj


def add_arrays(x, y):
    """``x + y`` of two arrays, by a jitted add kept on disk where both are concrete (the
    engine's and ``.grad``'s accumulation, NOTE [Eager disk cache])."""
    if x.__class__ is _ArrayImpl and y.__class__ is _ArrayImpl:
        return _ADD(x, y)
    return x + y


def _add(x, y):
    return x + y


_ADD = kept("add", _add)
_engine.add_arrays[0] = add_arrays


# -- prefetching (NOTE [Lazy disk cache]) ----------------------------------------------
_seq = {"root": None, "names": [], "known": []}
_pre = {}  # entry name -> [threading.Event set once loaded, the executable or None]
_threads = []


def _prefetched(name):
    """The executable of entry ``name`` where it is being or was loaded in the background
    (waiting for it), else None; notes that this process needed it."""
    slot = _pre.pop(name, None)
    _note(name)
    if slot is None:
        return None
    slot[0].wait()
    return slot[1]


def _note(name):
    """At the process's first executable, start loading the ones the last process needed
    after it; later ones extend that list (``<root>.next``) where it differs."""
    s = _seq
    if s["root"] is None:
        s["root"] = name
        got = _read(name.rsplit(".", 1)[0] + ".next")
        if type(got) is tuple and len(got) == 1 and type(got[0]) is list:
            s["known"] = got[0]
            _start([n for n in got[0] if n != name])
        return
    names = s["names"]
    if len(names) < _NEXT_MAX and name not in names and name != s["root"]:
        names.append(name)
        if names != s["known"][:len(names)]:
            _write(s["root"].rsplit(".", 1)[0] + ".next", (list(names),))


_NEXT_MAX = 32


def _start(names):
    """Load the entries ``names`` on a background thread: deserializing an executable
    (~3 ms each) releases the GIL, so it overlaps with the recording of the first step."""
    work = []
    for n in names:
        if n not in _pre:
            slot = _pre[n] = [threading.Event(), None]
            work.append((n, slot))
    if not work:
        return

    def run():
        for n, slot in work:  # a slot taken meanwhile is waited on: set every one
            try:
                got = _read(n, touch=True)
                if got is not None:
                    slot[1] = _load(got)
            except Exception:  # loaded again, or compiled, where it is needed
                pass
            finally:
                slot[0].set()
    th = threading.Thread(target=run, name="wgrad-lazy-prefetch", daemon=True)
    _threads.append(th)
    th.start()


@atexit.register
def _join():
    """Let a background load finish before JAX's backends are torn down at exit; and where
    this process needed fewer executables after its first than the list it was given,
    leave the shorter list (loads nobody needs would slow the next first step)."""
    for th in _threads:
        th.join()
    s = _seq
    if s["root"] is not None and s["known"] and s["names"] != s["known"][:_NEXT_MAX] \
            and _state["dir"]:
        _write(s["root"].rsplit(".", 1)[0] + ".next", (list(s["names"]),))
