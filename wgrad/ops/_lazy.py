"""Lazy segments: ops recorded into one pending XLA computation, run when a value is needed.

# NOTE [Lazy segments]
# Eager wgrad pays one XLA dispatch per op and per backward node (5-7 us on a CPU). Under
# ``wgrad.lazy()`` (or ``WGRAD_LAZY=1``) a Primitive call does not dispatch: its output
# shapes and dtypes come from ``jax.eval_shape`` (cached per primitive, attributes and
# input avals, so a shape error still raises at the op, with torch's message), and the
# call is appended to the pending *segment*. Its outputs are plain Tensors whose array
# slot holds a ``Pending`` (segment, index, aval) instead of a jax.Array.
#
# Reading the data forces. The first time lazy mode is switched on in a process (at import
# under WGRAD_LAZY=1, else at the first ``lazy()`` block) ``Tensor._data`` becomes a
# property over the slot, and the metadata methods read the slot without forcing
# (``_install``); a process that never uses lazy mode keeps the bare slot (a property costs
# eager code ~8% on a small-op chain, docs/performance.md). The first read of a pending
# tensor's ``_data`` runs its segment and puts the array into the slot. So every place that
# needs a value (``.item()``, ``.numpy()``, ``.jax()``, ``bool()``, printing, a hook reading
# its gradient, an op implemented on the host, in-place ops and views, which read their
# input's array) flushes without knowing about laziness; metadata (``shape``, ``dtype``,
# ``ndim``, ``device``...) is answered from the aval. A result's type is ``Tensor``, as in
# eager mode. Only the recording code reads the slot raw: ``raw()``, and ``_data`` itself
# while this thread's ``tls.raw`` flag is set (around ``Primitive._record`` and a node's
# kernel call, so that the OpNode and its SavedTensors keep the Pending rather than force
# it).
#
# A flush runs the segment as ONE ``jax.jit`` of the recorded calls, cached by its
# structure: the sequence of (function, input tree, where each input comes from: an
# earlier output of the segment or the i-th distinct outside array; kept in one flat list,
# no tuple per call for the garbage collector to walk), the outside arrays'
# avals, and which outputs are still referenced (by reference count, see _flush: values no
# Tensor or saved tensor holds are not returned, XLA drops them). Python scalars enter as
# arguments (device constants), so a loop whose learning rate changes does not recompile.
# A loop body that repeats records the same structure each time and hits the cache.
#
# When a segment flushes: a value is read (above); the segment reaches CAP calls (a
# group's backward counts as its ops); the outermost ``lazy()`` block exits;
# ``backward()`` starts, where dispatch is asynchronous (a GPU, or JAX's asynchronous CPU
# dispatch: XLA runs the forward while the backward is recorded; with it a phase-retrieval
# step took 0.491 against 0.605 ms with forward and backward in one segment, minima of 15
# interleaved rounds, 2026-11-26), but not with wgrad's synchronous CPU dispatch (NOTE [CPU
# dispatch]): there the forward would only wait, and one segment of both is faster (phase
# 0.288 against 0.319 ms, medians of 40 interleaved rounds, chain 3% faster, MLP ties,
# 2026-11-27); ``backward()`` returns (its gradients are then concrete); ``flush()``.
# ``grad()`` does not flush first: its backward joins the pending forward's segment.
# Ops that run eagerly instead (their
# inputs are forced first): views and in-place ops (they read their input's array:
# version counters, storage and CopySlices keep their eager semantics), ``jit=False``
# primitives (device moves), anything under a JAX trace (wgrad.compile, a user's jit),
# and everything while forward AD is active, anomaly mode is on, or saved-tensor hooks
# are installed.
#
# Backward: the differentiable ops of a segment form one backward node whose backward is
# one recorded call (NOTE [Lazy backward groups] in _lazy_graph.py), or one direct call
# where it weighs CAP or more and would fill a segment alone. Nodes outside groups
# record their cached backward kernel (NOTE [One formula, two uses]) into the segment like
# a forward op, and the engine sums gradients with a recorded add. With create_graph the
# formulas are recorded ops, and so lazy as well. Hooks, retain_grad and ``.grad``
# accumulation run as in eager mode (a hook that reads its gradient's values forces the
# segment).
#
# CAP: XLA's CPU compile time grows faster than linearly with the length of a chain of
# complex ops (a 50-op chain took ~9 s on 2026-11-23, a first step of 190 mixed complex
# ops 0.8-1.1 s on 2026-11-27), so a segment holds at most CAP calls (WGRAD_LAZY_CAP; 48, chosen by
# measurement, docs/performance.md "Segment cap"): a call that weighs more than one (a
# group's backward) and would take a non-empty segment past CAP flushes it first. The
# structure cache is bounded (NOTE [Bounded caches]): first in, first out, CACHE_MAX
# computations. Where segments repeat, the cap grows (NOTE [Segment cap growth]).
# Threads: the flag is process-wide and one lock guards the segment, so values recorded on
# one thread can be read on another.
#
# Rounding: inside one segment XLA fuses consecutive elementwise ops and contracts
# ``a * b + c`` into a fused multiply-add (XLA's CPU and GPU compilers always allow it;
# no flag turns it off, and an optimization barrier is removed before fusion), so a lazy
# result can differ from eager mode's in the last bits, and a computation's bits depend on
# where its segment was cut. gradcheck flushes before each backward it compares, so its
# reentrancy check (bit for bit, as torch's) sees the same segments twice. Backward nodes
# whose kernel checks values on the host (the gauge checks of eig/eigh/svd,
# ``Primitive.lazy_backward``) run eagerly.
"""
import math
import os
import threading
from functools import partial
from sys import getrefcount as _getrefcount
from weakref import ref as _weakref

import jax
from jax._src.array import ArrayImpl as _ArrayImpl  # the class of concrete arrays
from jax._src.config import trace_context as _trace_context  # what jit keys on besides avals

from .._autograd.lazy_mode import state
from .._device import default_jax_device as _default_jax_device
from .._device import device as _device
from .._device import several_devices as _several_devices
from .._dtype import from_np as _from_np
from .._tensor import DATA_SLOT, Tensor, Size, _wrap_dim
from . import _lazy_disk as _disk

__all__ = ["lazy", "flush", "stats", "Pending", "NotLazy", "raw", "tls", "record",
           "abstract", "CAP", "dispatch_overlaps", "flush_full", "reset_cap"]

CAP = BASE_CAP = int(os.environ.get("WGRAD_LAZY_CAP", "48"))  # CAP: the cap now
CAP_MAX = max(BASE_CAP, int(os.environ.get("WGRAD_LAZY_CAP_MAX", str(4 * BASE_CAP))))
GROW_AFTER = 64
CACHE_MAX = 256
_AVAL_MAX = 4096

_SLOT = DATA_SLOT  # the member descriptor of Tensor's ``_data`` slot
_get_slot = _SLOT.__get__
_set_slot = _SLOT.__set__
_lock = threading.RLock()


class _Local(threading.local):
    raw = False


_tls = tls = _Local()
_stats = {"segments": 0, "ops": 0, "compiles": 0, "cache_hits": 0, "loaded": 0}
_growth = {"hits": 0, "misses": 0, "after": GROW_AFTER}
_cap_followers = []  # modules' functions that keep a copy of CAP (_lazy_graph)


class Pending:
    """The not yet computed output ``idx`` of a segment: its shape, dtype and weak type
    (``aval``, a tuple), and the array once computed. ``pack``: True once a saved tensor
    holds it, then the _Pack its segment returned it in (its piece ``at``; NOTE [Packed
    outputs])."""

    __slots__ = ("seg", "idx", "aval", "shape", "dtype", "weak_type", "value", "pack", "at",
                 "__weakref__")

    def __init__(self, seg, idx, aval):
        self.seg = seg
        self.idx = idx
        self.aval = aval
        self.shape, self.dtype, self.weak_type = aval
        self.value = None
        self.pack = None

    ndim = property(lambda self: len(self.shape))

    @property
    def size(self):
        n = 1
        for s in self.shape:
            n *= s
        return n

    def devices(self):
        v = self.value  # a segment runs on the default device (NOTE [The default device])
        return v.devices() if v is not None else {_default_jax_device()}

    def force(self):
        if self.value is None:
            with _lock:
                if self.value is None:
                    if self.pack.__class__ is not _Pack:
                        _flush(self.seg, self)
                    pk = self.pack
                    if self.value is None and pk.__class__ is _Pack:
                        self.value = pk.pieces()[self.at]
        return self.value

    def __repr__(self):
        return f"Pending({self.aval})"


class NotLazy(Exception):
    """An input that cannot enter a segment (not a jax.Array): run the call eagerly."""


class _Segment:
    __slots__ = ("ops", "refs", "ext", "ext_ids", "ext_avals", "weight")

    def __init__(self):
        self.weight = 0      # ops recorded, a group's backward counting as its ops
        self.ops = []        # per call, flat: fn, input treedef or None, n, n input refs
        self.refs = []       # the Pending of each output value, in order (see _flush)
        self.ext = []        # the distinct outside arrays
        self.ext_ids = {}    # id(array) -> its index in ext
        self.ext_avals = []


_seg = [_Segment()]
_CACHE = {}
_AVALS = {}


raw = _get_slot  # ``raw(t)``: t's array slot as it is, a jax.Array or a Pending


def abstract(tree):
    """``tree`` with every array and Pending replaced by a ShapeDtypeStruct; NotLazy for
    any other leaf."""
    def one(x):
        if x.__class__ is not Pending and not isinstance(x, jax.Array):
            raise NotLazy
        return jax.ShapeDtypeStruct(x.shape, x.dtype, weak_type=x.weak_type)
    return jax.tree_util.tree_map(one, tree)


def _out_avals(fn, treedef, avals):
    key = (fn, treedef, avals)
    r = _AVALS.get(key)
    if r is None:
        def traced():
            args = [None if a is None else jax.ShapeDtypeStruct(a[0], a[1], weak_type=a[2])
                    for a in avals]
            out = jax.eval_shape(fn, *args) if treedef is None \
                else jax.eval_shape(fn, *treedef.unflatten(args))
            leaves, otree = jax.tree_util.tree_flatten(out)
            return otree, tuple((o.shape, o.dtype, bool(o.weak_type)) for o in leaves)
        otree, oavals = _disk.remembered("aval", fn, (treedef, avals), traced)
        r = (otree, oavals, otree.num_leaves == 1 and otree.num_nodes == 1,
             {})  # the call's table for its callers (lazy backward groups' signatures)
        if len(_AVALS) >= _AVAL_MAX:
            _AVALS.clear()
        _AVALS[key] = r
    return r


def record(fn, leaves, treedef=None, weight=1, meta=False):
    """Append ``fn(*leaves)`` (``fn(*treedef.unflatten(leaves))``) to the segment and
    return its outputs as Pendings, in the shape of ``fn``'s output. ``leaves`` are
    jax.Arrays or Pendings. Raises what ``fn`` raises on these shapes, and NotLazy for
    a leaf that is neither. ``weight``: how many ops ``fn`` counts as against CAP.
    ``meta``: return ``(outputs, table)`` instead, the table a dict kept with the
    computed output avals of (fn, input avals), for the caller's own per-signature data."""
    with _lock:
        seg = _seg[0]
        if weight > 1 and seg.weight and seg.weight + weight > CAP:
            _flush(seg)  # a segment holds at most CAP calls' weight (NOTE [Lazy segments])
            seg = _seg[0]
        n_ext, n_ops, n_refs = len(seg.ext), len(seg.ops), len(seg.refs)
        try:
            res, table = _record(seg, fn, leaves, treedef, weight)
            return (res, table) if meta else res
        except BaseException:  # NotLazy, a shape error: the segment as it was
            if seg is _seg[0]:
                del seg.ops[n_ops:], seg.refs[n_refs:]  # pieces of packs (_piece_of)
                if len(seg.ext) > n_ext:
                    for x in seg.ext[n_ext:]:
                        seg.ext_ids.pop(id(x), None)
                    del seg.ext[n_ext:], seg.ext_avals[n_ext:]
            raise


def _record(seg, fn, leaves, treedef, weight):
    refs = []
    avals = []
    ext_ids = seg.ext_ids
    for x in leaves:
        if x is None:  # an absent optional input (a layer's bias): part of the structure
            refs.append(None)
            avals.append(None)
            continue
        if x.__class__ is Pending:
            if x.seg is seg:
                refs.append(x.idx)
                avals.append(x.aval)
                continue
            a = x.aval
            pk = x.pack
            if pk.__class__ is _Pack and x.value is None and pk.values is None:
                refs.append(_piece_of(seg, x))  # NOTE [Packed outputs]
                avals.append(a)
                continue
            x = x.force()  # an earlier segment's: a concrete array on the default device
            i = ext_ids.get(id(x))
            if i is None:
                if x is None:
                    raise NotLazy
                i = ext_ids[id(x)] = len(seg.ext)
                seg.ext.append(x)
                seg.ext_avals.append(a)
            refs.append(~i)
            avals.append(a)
            continue
        i = ext_ids.get(id(x))
        if i is None:
            i = ext_index(seg, x)
        refs.append(~i)
        avals.append(seg.ext_avals[i])
    otree, oavals, single, table = _out_avals(fn, treedef, tuple(avals))
    seg.ops.extend((fn, treedef, len(refs), *refs))  # flat: no tuple alive per call
    srefs = seg.refs
    if single:
        res = Pending(seg, len(srefs), oavals[0])
        srefs.append(res)
    else:
        outs = []
        for a in oavals:
            p = Pending(seg, len(srefs), a)
            srefs.append(p)
            outs.append(p)
        res = otree.unflatten(outs)
    seg.weight += weight
    if seg.weight >= CAP:
        flush_full(seg)
    return res, table


def ext_index(seg, x):
    """The index of the outside array ``x`` among ``seg``'s inputs, added if new; NotLazy
    for anything that cannot be one (not a concrete jax.Array on the default device)."""
    i = seg.ext_ids.get(id(x))
    if i is None:
        if x.__class__ is not _ArrayImpl and (  # a concrete array: the usual case, no ABC
                not isinstance(x, jax.Array) or isinstance(x, jax.core.Tracer)):
            raise NotLazy
        if _several_devices() and x.devices() != {_default_jax_device()}:
            raise NotLazy  # segments run on the default device
        i = seg.ext_ids[id(x)] = len(seg.ext)
        seg.ext.append(x)
        a = x.aval
        seg.ext_avals.append((a.shape, a.dtype, a.weak_type))
    return i


def _calls(ops):
    """A segment's flat record (_Segment.ops) as (fn, treedef, refs) per call."""
    out = []
    i = 0
    while i < len(ops):
        n = ops[i + 2]
        out.append((ops[i], ops[i + 1], ops[i + 3:i + 3 + n]))
        i += 3 + n
    return out


def _build(calls, live, packs):
    def run(*ext):
        vals = []
        for fn, treedef, refs in calls:
            xs = [None if r is None else vals[r] if r >= 0 else ext[~r] for r in refs]
            out = fn(*xs) if treedef is None else fn(*treedef.unflatten(xs))
            vals.extend(jax.tree_util.tree_leaves(out))
        return [vals[i] for i in live] + [  # NOTE [Packed outputs]
            jax.numpy.concatenate([vals[i].reshape(-1) for i in grp]) for grp in packs]
    # NOTE [Deferred jit], NOTE [Rounding in fused programs]
    return _disk.FusedJit(run)


# NOTE [Packed outputs]
# XLA's CPU runtime spends ~1.3 us per output of a computation (a 192-op chain segment:
# 13 us returning 2 arrays, 71 us returning 49; a trivial one 5 us against 66), and a
# segment returns every value something still holds: in a loop, mostly the values its
# backward group saved (each ``sin`` its input). So the values that saved tensors hold
# (``Pending.pack`` True, set where a group saves a result of its own) come back
# concatenated, one array per dtype where there are PACK_MIN or more (the same chain
# segment: 14 us), each Pending keeping its pack and its place there. A group's backward
# called directly (``_lazy_graph._call_once_each``) takes the pack and slices inside its
# computation, one recorded into a later segment (``_record``) takes the pack as an outside
# array and a recorded slice; anything else that reads such a value (a hook, a print, an
# op of a later segment) splits the whole pack once (one call, all its values). Weakly
# typed values stay outputs of their own (a piece of a concatenation would lose the weak
# type).
PACK_MIN = 4
_UNPACKERS = {}


class _Pack:
    """A segment's saved values of one dtype, concatenated (NOTE [Packed outputs]): the
    array, per value its (offset, size, shape), and the values once split."""

    __slots__ = ("array", "layout", "values")

    def __init__(self, array, layout):
        self.array = array
        self.layout = layout
        self.values = None

    def pieces(self):
        if self.values is None:
            f = _UNPACKERS.get(self.layout)
            if f is None:
                if len(_UNPACKERS) >= CACHE_MAX:  # NOTE [Bounded caches]
                    _UNPACKERS.clear()
                f = _UNPACKERS[self.layout] = jax.jit(partial(split_pack, layout=self.layout))
            self.values = f(self.array)
            self.array = None
        return self.values


def split_pack(a, layout):
    """The values of the concatenation ``a`` laid out as ``layout`` (NOTE [Packed
    outputs]); traced."""
    return [_slice_piece(a, k) for k in layout]


def _piece_of(seg, p):
    """The index in ``seg`` of the packed value ``p`` of an earlier segment: its pack an
    outside array of ``seg``, sliced by a call recorded here (NOTE [Packed outputs])."""
    pk = p.pack
    i = ext_index(seg, pk.array)
    k = pk.layout[p.at]
    fn = _SLICERS.get(k)
    if fn is None:
        if len(_SLICERS) >= CACHE_MAX:  # NOTE [Bounded caches]
            _SLICERS.clear()
        fn = _SLICERS[k] = partial(_slice_piece, k=k)
        fn._wg_src = ("piece",) + k  # NOTE [Lazy disk cache]
    seg.ops.extend((fn, None, 1, ~i))
    out = Pending(seg, len(seg.refs), p.aval)
    seg.refs.append(out)
    return out.idx


def _slice_piece(a, k):
    o, n, shape = k
    return jax.lax.slice(a, (o,), (o + n,)).reshape(shape)


_SLICERS = {}


def _layout(avals):
    """Per value of a pack its (offset, size, shape) (NOTE [Packed outputs])."""
    out = []
    o = 0
    for shape, _, _ in avals:
        n = math.prod(shape)
        out.append((o, n, shape))
        o += n
    return tuple(out)


def _flush(seg, wanted=None):
    """Run ``seg`` (the current one or an older one that still holds values); whether
    its computation was new to this process (None for an empty segment). ``wanted``: the
    Pending whose read runs it, returned on its own (NOTE [Packed outputs])."""
    with _lock:
        if seg is _seg[0]:
            _seg[0] = _Segment()
        if not seg.ops:
            return None
        # An output is live when something besides the segment holds its Pending (a
        # Tensor, a SavedTensor): its reference count is above the segment's list, the
        # reference and getrefcount's argument. No weak reference per output: fewer objects
        # for the cyclic garbage collector (NOTE [Recording cost]).
        live = []
        keep = []
        saved = {}  # dtype -> indices of values saved tensors hold: NOTE [Packed outputs]
        refs = seg.refs
        for i in range(len(refs)):
            if _getrefcount(refs[i]) > 2:
                p = refs[i]
                if p.pack is True and not p.weak_type and p is not wanted:
                    grp = saved.get(p.dtype)
                    if grp is None:
                        grp = saved[p.dtype] = []
                    grp.append(i)
                else:
                    live.append(i)
                    keep.append(p)
        packs = []
        for grp in saved.values():
            if len(grp) >= PACK_MIN:
                packs.append(tuple(grp))
            else:
                for i in grp:
                    live.append(i)
                    keep.append(refs[i])
        ops = tuple(seg.ops)
        live = tuple(live)
        packs = tuple(packs)
        # the settings a jitted function is keyed by too (the matmul precision...): an
        # executable made under others is not the program asked for now
        key = (ops, tuple(seg.ext_avals), live, packs, _trace_context())
        got = _CACHE.get(key)
        new = got is None
        if new:
            calls = _calls(ops)
            comp, loaded = _disk.compiled(("seg", ops, live, packs), _build(calls, live, packs),
                                          seg.ext)
            _stats["loaded"] += loaded  # NOTE [Lazy disk cache]
            if len(_CACHE) >= CACHE_MAX:  # NOTE [Bounded caches]
                del _CACHE[next(iter(_CACHE))]
            layouts = tuple(_layout([refs[i].aval for i in grp]) for grp in packs)
            got = _CACHE[key] = (comp, len(calls), layouts)
            _stats["compiles"] += 1
        else:
            _stats["cache_hits"] += 1
        comp, n_calls, layouts = got
        _stats["segments"] += 1
        _stats["ops"] += n_calls
        ext = seg.ext
        seg.ops, seg.refs, seg.ext, seg.ext_ids, seg.ext_avals = [], [], [], {}, []
        seg.weight = 0
        outs = comp(*ext)
        for p, v in zip(keep, outs):  # a tensor over p takes v at its next read
            p.value = v
            p.seg = None
        n = len(keep)
        for k, grp in enumerate(packs):
            pk = _Pack(outs[n + k], layouts[k])
            for j, i in enumerate(grp):
                p = refs[i]
                p.pack = pk
                p.at = j
                p.seg = None
        return new


# NOTE [Segment cap growth]
# CAP bounds what one computation holds because XLA's compile time grows faster than the
# number of ops (above). Where segments repeat (a training loop, an optimization step),
# that compile is paid once, while every flush and every group's backward costs the same
# ~20-40 us of Python and dispatch however many ops it holds: longer segments are faster
# there (the 1,200-op chain of bench/run.py, in one process taking turns: cap 96 -7%, 192
# -9%, 288 -11% per step against 48; its first step without a cache compiles 1.9x longer
# at 96 and 4x at 192, docs/performance.md "Segment cap growth"). So the cap grows with
# the evidence that segments repeat: after GROW_AFTER flushes at the cap whose computation
# was cached (at most one in eight new), it doubles, up to CAP_MAX (WGRAD_LAZY_CAP_MAX,
# default 4 * WGRAD_LAZY_CAP; equal to it, the cap never grows); a loop's longer
# segments are then compiled once and repeat in their turn (the chain's growth to 96 and
# then 192 compiled for ~1 and ~2.6 s once, without a cache; later processes load them,
# NOTE [Lazy disk cache]). Where flushes at a grown cap
# keep finding new computations (8 that outnumber the cached ones: code that does not
# repeat, whose compiles the longer segments would only make slower), the cap falls back
# to WGRAD_LAZY_CAP and waits four times as long before growing again. A group of
# backward ops ends at the cap as segments do. Growth moves segment boundaries, so the
# last bits of a result may differ before and after it ("Rounding" above);
# ``stats()["cap"]`` is the cap now. Only flushes at the cap count: a flush to read a
# value says nothing about the loop's length.

def flush_full(seg):
    """Flush ``seg``, which reached the cap, and let the cap grow or fall back (NOTE
    [Segment cap growth]). The caller holds the lock."""
    new = _flush(seg)
    if new is None:
        return
    g = _growth
    if new:
        g["misses"] += 1
        if CAP > BASE_CAP and g["misses"] >= 8 and g["misses"] > g["hits"]:
            g["after"] *= 4
            _set_cap(BASE_CAP)
    else:
        g["hits"] += 1
        if CAP < CAP_MAX and g["hits"] >= g["after"] and 8 * g["misses"] <= g["hits"]:
            _set_cap(min(2 * CAP, CAP_MAX))


def _set_cap(n):
    global CAP
    CAP = n
    for f in _cap_followers:
        f(n)
    _growth["hits"] = _growth["misses"] = 0


def reset_cap():
    """The cap back at WGRAD_LAZY_CAP, its growth forgotten (NOTE [Segment cap growth]):
    for tests that count segments."""
    with _lock:
        _growth["after"] = GROW_AFTER
        _set_cap(BASE_CAP)


def flush():
    """Run the pending segment now."""
    _flush(_seg[0])


def dispatch_overlaps():
    """Whether a flush returns before XLA has finished, so that Python can go on
    recording meanwhile: a GPU, or JAX's asynchronous CPU dispatch (NOTE [CPU dispatch]).
    ``backward()`` flushes the forward first only then (NOTE [Lazy segments])."""
    if _default_jax_device().platform != "cpu":
        return True
    if not _ASYNC_CPU:  # fixed when JAX made its CPU client: read once
        _ASYNC_CPU.append(bool(jax.config.values.get("jax_cpu_enable_async_dispatch", True)))
    return _ASYNC_CPU[0]


_ASYNC_CPU = []


def stats(reset=False):
    """Counters since the start (or the last ``stats(reset=True)``, which zeroes them after
    reading): ``segments`` run, ``ops`` recorded, ``compiles`` (new segment structures),
    ``cache_hits``, ``loaded``: of the new structures, those whose executable an
    earlier process left on disk (NOTE [Lazy disk cache]), and ``cap``, the most calls a
    segment holds now (NOTE [Segment cap growth]). A full group's backward called
    directly is not a segment."""
    with _lock:
        out = dict(_stats, cap=CAP)
        if reset:
            for k in _stats:
                _stats[k] = 0
    return out


# -- Tensor over a Pending: _data and metadata (NOTE [Lazy segments]) ----------------------

def _get_data(self):
    d = _get_slot(self)
    if d.__class__ is Pending:
        if _tls.raw:
            return d
        v = d.value
        if v is None:
            v = d.force()
        _set_slot(self, v)
        return v
    return d


def _shape(self):
    return Size(_get_slot(self).shape)


def _size(self, dim=None):
    s = _get_slot(self).shape
    if dim is None:
        return Size(s)
    return s[_wrap_dim(dim, len(s))]


def _dtype(self):
    return _from_np(_get_slot(self).dtype)


def _ndim(self):
    return len(_get_slot(self).shape)


def _numel(self):
    return int(_get_slot(self).size)


def _len(self):
    s = _get_slot(self).shape
    if not s:
        raise TypeError("len() of a 0-d tensor")
    return s[0]


_EAGER_DEVICE = Tensor.device.fget


def _device_of(self):
    if _get_slot(self).__class__ is Pending:
        return _device.of_jax(_default_jax_device())
    return _EAGER_DEVICE(self)


_INSTALLED = [False]


def _install():
    """Switch Tensor to lazy-aware ``_data`` and metadata, once per process."""
    if _INSTALLED[0]:
        return
    with _lock:
        if _INSTALLED[0]:
            return
        for name, fn in (("shape", _shape), ("size", _size), ("dtype", _dtype),
                         ("ndim", _ndim), ("dim", _ndim), ("ndimension", _ndim),
                         ("numel", _numel), ("nelement", _numel), ("__len__", _len),
                         ("device", _device_of)):
            old = Tensor.__dict__[name]
            if isinstance(old, property):
                setattr(Tensor, name, property(fn, doc=old.__doc__))
            else:
                fn.__doc__ = fn.__doc__ or old.__doc__
                setattr(Tensor, name, fn)
        Tensor._data = property(_get_data, _set_slot)
        _INSTALLED[0] = True


class lazy:
    """Record ops into lazy segments inside this block or function (NOTE [Lazy segments]).

    Values are computed when needed (``.item()``, printing, ``.numpy()``, a size cap,
    ``backward()``, leaving the outermost block), each segment as one cached XLA
    computation; results and errors are those of eager mode. ``WGRAD_LAZY=1`` turns it on
    for the whole program.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> with wgrad.lazy():
    ...     y = (x.sin() * 2 + 1).sum()
    ...     y.backward()
    >>> x.grad
    tensor([ 1.0806, -0.8323])
    """

    def __init__(self, enabled=True):
        self.enabled = bool(enabled)
        self._prev = None

    def __enter__(self):
        with _lock:
            self._prev = (state.depth, state.on)
            if self.enabled:
                _install()
                state.depth += 1
                state.on = True
            else:
                flush()
                state.on = False
        return self

    def __exit__(self, *exc):
        with _lock:
            state.depth, state.on = self._prev
            if not state.on:
                flush()

    def __call__(self, fn):
        def wrapper(*args, **kwargs):
            with lazy(self.enabled):
                return fn(*args, **kwargs)
        wrapper.__wrapped__ = fn
        wrapper.__name__ = getattr(fn, "__name__", "wrapper")
        wrapper.__doc__ = getattr(fn, "__doc__", None)
        return wrapper

    stats = staticmethod(stats)
    flush = staticmethod(flush)

    @staticmethod
    def is_enabled():
        """Whether ops are recorded lazily now."""
        return state.on


if state.on:  # WGRAD_LAZY=1
    _install()
