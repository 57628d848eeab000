"""Lazy backward groups: the ops of a lazy segment recorded as one backward node.

# NOTE [Lazy backward groups]
# Under ``wgrad.lazy()`` a differentiable Primitive call does not build an OpNode: it
# appends one record (primitive, attributes, which inputs need
# grad, their shapes, where each input comes from, what it saves) to the open *group*, a
# single Node (``GroupNode``) whose outputs are all the group's differentiable results.
# A result tensor's ``_grad_fn`` is the group and its ``_output_nr`` its index there. The
# engine sees one node: its backward runs the recorded ops' cached backward kernels
# (NOTE [One formula, two uses]) in reverse, inside ONE jitted function per (group
# structure: per op its signature's number, ``_sig_id``, its sources and outputs; which
# outputs receive a gradient), recorded into the lazy segment (a
# backward that follows a forward not yet run joins its computation, except where
# ``backward()`` runs the forward first, NOTE [Lazy segments]); one that runs CAP ops
# or more, which would fill a segment alone, is called directly (no segment bookkeeping
# around it: ~20 us less per group in the chain benchmark). Per op this costs a record
# instead of a Node, and no engine step, no input buffer, no kernel dispatch in backward.
# The function's arguments are the incoming gradients and the saved values of the ops
# that run, gathered flat where all are arrays (``_leaves``: the usual case, without a
# pytree flatten per call), else through ``tree_flatten`` (an absent input saved as None,
# index components).
#
# Nothing of torch's graph is lost: whatever looks at a group's inside *explodes* it
# first, building the OpNodes the ops would have had in eager mode (same names, edges,
# saved values, sequence and topological numbers): ``Tensor.grad_fn`` / ``output_nr``,
# ``Node.next_functions``, ``register_hook`` and ``retain_grad`` on a result, a result
# named in ``grad(inputs=)`` / ``backward(inputs=)`` / ``get_gradient_edge``, an in-place
# op moving a retained gradient. Printing a tensor names its op without exploding. Edges
# recorded before keep pointing at the group; a backward started after the explosion
# follows them to the OpNodes inside (engine ``_edges_of``), one already running when it
# happens runs the OpNodes through an inner engine call (``_apply_nodes``), and so does a
# backward that records (create_graph), carries tangents or checks anomalies: node by
# node, exactly as in eager mode, with the hooks registered on those nodes.
#
# Values: the group keeps SavedTensors (version checks, release after backward, the
# "backward through the graph a second time" error) as OpNodes do; only those of the
# ops a backward ran are released (per thread: several may run through one group). An
# input that is a result of the same group is saved by its array and a weak reference
# (``SavedTensor._weak``), or the group and that tensor would form a reference cycle.
#
# Records: a call appends no object of its own but six entries to the group's flat list
# of records (where its inputs come from and its outputs, as tuples shared by the calls
# with equal ones; its sequence and topological numbers; where its saved values start and
# end in the group's flat ``vals``) beside its signature entry, which every call of that
# signature shares. No object per call, then, for the garbage collector: a long forward
# pass neither sets off young collections nor fills the oldest generation with records
# that die at backward (a full collection walks every object the process holds:
# docs/performance.md, "Ninth session" and "Twelfth session").
#
# Boundaries: each thread records into its own open group, held weakly (a group no tensor
# needs is freed at once). A new group starts at CAP ops (compile time, NOTE [Lazy
# segments]), when a backward starts on the thread (no group grows under a running
# backward), after an explosion, after a custom Function's forward (its node is numbered
# before the ops it recorded, and its backward may run them), and when an input's node was
# made after the group began without being in it (a view or in-place op of one of its
# results, a custom Function): that node may lead back into the group, which would then
# wait on itself.
# ``WGRAD_LAZY_GROUPS=0`` turns groups off (one OpNode per op, as before).
"""
import itertools
import os
from threading import get_ident
from weakref import ref as _weakref

import jax
from jax._src.array import ArrayImpl as _ArrayImpl  # the class of concrete arrays

from .._autograd import anomaly_mode as _anomaly
from .._autograd.engine import _current_task, get_default_engine
from .._autograd.forward_ad import state as _fw
from .._autograd.grad_mode import _state
from .._autograd.graph import _SEQ_MAX, Node, _seq as _node_seq, edges_needed
from .._autograd.lazy_mode import group as _open
from .._autograd.lazy_mode import state as _lazy_state
from .._autograd.saved import SavedTensor, release_saved
from .._tensor import Tensor, _make
from .. import _dtype as _D
from . import _lazy
from . import _lazy_disk as _disk
from . import _primitive as _P
from ._promote import result_type as _result_type

__all__ = ["ENABLED", "GroupNode", "record"]

ENABLED = os.environ.get("WGRAD_LAZY_GROUPS", "1").strip() not in ("0", "false", "no", "off")
CAP = _lazy.CAP


def _follow_cap(n):  # NOTE [Segment cap growth]: read as a global on every call
    global CAP
    CAP = n


_lazy._cap_followers.append(_follow_cap)
_PLANS = {}
_REC = 6  # entries per call in a group's flat ``recs``: srcs, outs, seq, topo, v0, v1


def records(recs):
    """A group's flat ``recs`` as one (srcs, outs, seq, topo, v0, v1) tuple per call."""
    return zip(*[iter(recs)] * _REC)

_raw = _lazy.raw
_weak_saved = SavedTensor._weak


class GroupNode(Node):
    """One backward node for the differentiable ops of a lazy segment (NOTE [Lazy backward
    groups]); never handed to user code: it explodes into OpNodes first."""

    __slots__ = ("sigs", "recs", "vals", "num_outputs", "_ext", "_out_topo", "_map", "_ran",
                 "_key", "_key_len", "_start")
    _is_group = True

    def __init__(self):
        super().__init__([])
        # per recorded call (NOTE [Lazy backward groups], "Records"): its signature
        # entry, its record (srcs, outs, seq, topo, v0, v1: _REC entries of the flat
        # ``recs``, ``records``), its saved values vals[v0:v1]
        self.sigs = []
        self.recs = []
        self.vals = []
        self.num_outputs = 0
        self._ext = {}          # (node, nr) -> its index in _edges
        self._out_topo = []     # the topological number each output's OpNode would have
        self._map = None        # after explosion: output index -> (OpNode, its output_nr)
        self._ran = {}          # thread -> the ops its last apply ran (release_variables)
        self._key = None
        self._key_len = -1
        self._start = self._seq_nr  # a node with a larger number may depend on this group

    def name(self):
        return "LazyGroupBackward"

    def _name_of(self, idx):
        """The node name of output ``idx``'s op, without exploding (printing)."""
        if self._map is not None:
            return self._map[idx][0].name()
        for (sig, _, _, _), rec in zip(self.sigs, records(self.recs)):
            if idx in rec[1]:
                return sig[0].node_class(sig[1], sig[3], sig[2]).__name__
        return self.name()

    # -- explosion ---------------------------------------------------------------------
    def _resolve(self, idx):
        """``(OpNode, output_nr)`` of output ``idx``, exploding the group first."""
        if self._map is None:
            self._explode()
        return self._map[idx]

    def _explode(self):
        with _lazy._lock:
            if self._map is not None:
                return
            r = _open.ref
            if r is not None and r() is self:
                _open.ref = None
            out = [None] * self.num_outputs
            ext = self._edges
            vals = self.vals
            for (sig, attrs, _, _), rec in zip(self.sigs, records(self.recs)):
                srcs, outs, seq, topo, v0, v1 = rec
                edges = []
                for s in srcs:
                    edges.append((None, 0) if s is None else out[s] if s >= 0 else ext[~s])
                prim, akey, needs, in_meta, out_meta = sig
                cls = prim.node_class(akey, in_meta, needs)
                if cls._keep is not None:  # NOTE [Node edges]
                    edges = [edges[i] for i in cls._keep]
                node = cls(tuple(edges), sequence_nr=seq)
                node._topological_nr = topo
                node.prim = prim
                node.attrs = attrs
                node.akey = akey
                node.needs = needs
                node.num_outputs = prim.nout
                node.in_meta = in_meta
                node.out_meta = out_meta
                node.saved = dict(zip([n for n, _ in prim.save_plan(needs)], vals[v0:v1]))
                for i, j in enumerate(outs):
                    if j is not None:
                        out[j] = (node, i)
                for v in vals[v0:v1]:
                    for s in (v if type(v) is tuple else (v,)):
                        if type(s) is not SavedTensor:
                            continue
                        if s._ref is not None and s._grad_fn is None:  # an earlier op's
                            s._grad_fn, s._output_nr = out[s._output_nr]
            self._map = out

    def _keep(self, a):
        """The SavedTensor of input ``a``: by weak reference where ``a`` is a result of
        this group (a strong one would be a cycle through ``a._grad_fn``)."""
        if a is not None and a._grad_fn is self:
            return _weak_saved(a, _held(_raw(a)))
        return _P._save(a)

    # hooks go to the OpNode of the output they are registered for
    def _register_tensor_pre_hook(self, output_nr, fn):
        node, nr = self._resolve(output_nr)
        return node._register_tensor_pre_hook(nr, fn)

    def _set_retains_grad_hook(self, output_nr, fn):
        node, nr = self._resolve(output_nr)
        node._set_retains_grad_hook(nr, fn)

    def register_hook(self, fn):
        raise RuntimeError("internal error: a hook on a lazy backward group")

    register_prehook = register_hook

    # -- backward ----------------------------------------------------------------------
    def apply(self, grads):
        if self._map is not None or _state.grad or _fw.active or _anomaly._state.enabled:
            return self._apply_nodes(grads)
        try:
            return self._apply_group(grads)
        except NotImplementedError:
            if edges_needed(self) is None:
                raise
            # an op's missing formula, maybe of an input not asked for: op by op
            return self._apply_nodes(grads)

    def _apply_group(self, grads):
        mask = tuple(g is not None for g in grads)
        if not any(mask):
            return [None] * len(self._edges)
        with _lazy._lock:  # another thread may still be adding ops: the ones known now
            recs = self.recs
            n = len(self.sigs)
            if self._key_len != n:
                self._key = tuple(zip([e[3] for e in self.sigs], recs[0::_REC], recs[1::_REC]))
                self._key_len = n
            key = (self._key, len(self._edges), mask)
            plan = _PLANS.get(key)
            if plan is None:
                plan = _build(self.sigs[:n], list(records(recs[:n * _REC])), self.num_outputs,
                              len(self._edges), mask)
                if len(_PLANS) >= _P.CACHE_MAX:  # NOTE [Bounded caches]
                    del _PLANS[next(iter(_PLANS))]
                _PLANS[key] = plan
        fn, active, where, plain = plan
        tls = _lazy.tls
        prev, tls.raw = tls.raw, True
        try:
            gs = [g._data for g in grads if g is not None]
            if _lazy_state.on:
                outs = None
                if len(active) < CAP:  # else it would run alone in its segment: call it
                    leaves = self._leaves(gs, active, where)
                    tree = plain
                    if leaves is None:
                        leaves, tree = self._flattened(gs, active, where)
                    try:
                        outs = _lazy.record(fn, leaves, tree, weight=len(active))
                    except _lazy.NotLazy:  # a tracer: under a JAX trace
                        pass
                    if outs is None:
                        outs = _call_once_each(fn, tree, *_distinct(leaves, False))
                else:
                    once = _distinct(self._gathered(gs, active, where), True)
                    tree = plain
                    if once is None:
                        leaves, tree = self._flattened(gs, active, where)
                        once = _distinct(leaves, False)
                    outs = _call_once_each(fn, tree, *once)
            else:  # recorded lazily, run after: its values may still be Pendings
                leaves, tree = self._flattened(gs, active, where)
                outs = fn(*tree.unflatten([x.force() if x.__class__ is _Pending else x
                                           for x in leaves]))
        finally:
            tls.raw = prev
        self._ran[get_ident()] = active
        return [_make(o) if o is not None else None for o in outs]

    def _apply_nodes(self, grads):
        """Backward through the OpNodes (exploding first): an inner engine call from the
        outputs that got a gradient, capturing what reaches the outside edges. Used
        once the group was looked at (its hooks are on those nodes), and for a backward
        that records (create_graph), carries tangents or checks anomalies."""
        self._explode()
        roots, gs = [], []
        for j, g in enumerate(grads):
            if g is not None:
                roots.append(self._map[j])
                gs.append(g)
        if not roots:
            return [None] * len(self._edges)
        task = _current_task()
        keep = task.keep_graph if task is not None else True
        # the outside edges as this inner call follows them (an exploded group's into its
        # OpNodes); two that lead to the same place get its gradient once; those the
        # outer call does not need (grad(inputs=...)) are not asked for
        needed = edges_needed(self)
        first = {}
        where = []
        for i, (n, nr) in enumerate(self._edges):
            if needed is not None and not needed[i]:
                where.append(None)
                continue
            if n._is_group and n._map is not None:
                n, nr = n._map[nr]
            where.append(first.setdefault((n, nr), len(first)))
        got = get_default_engine().execute(roots, gs, keep, _state.grad, list(first),
                                           accumulate_grad=False, boundary=True)
        out = []
        for i in where:
            out.append(None if i is None else got[i])
            if i is not None:
                got[i] = None
        return out

    def _flattened(self, gs, active, where):
        """``tree_flatten`` of ``gs`` and the saved values of the ops that run, a list per
        op (``where``: per op, the indices of the values its kernel takes in ``vals``):
        the general way to gather them (an absent input saved as None, index
        components)."""
        vals = self.vals
        return jax.tree_util.tree_flatten(
            (gs, [[self._value(vals[j], i) for j in js] for i, js in zip(active, where)]))

    def _gathered(self, gs, active, where):
        """``gs`` and the saved values of the ops that run, flat, in tree_flatten's order
        where each is a concrete array or a Pending, the usual case (NOTE [Lazy backward
        groups]); ``_leaves`` and ``_distinct(strict=True)`` check that it is."""
        out = list(gs)
        vals = self.vals
        for i, js in zip(active, where):
            for j in js:
                v = vals[j]
                x = _saved_array(v) if v.__class__ is SavedTensor else None
                out.append(self._value(v, i) if x is None else x)
        return out

    def _leaves(self, gs, active, where):
        """``_gathered``, where every one is a concrete array or a Pending, else None
        (then ``_flattened`` gathers them)."""
        out = self._gathered(gs, active, where)
        for x in out:
            if x.__class__ is not _Pending and x.__class__ is not _ArrayImpl:
                return None
        return out

    def _value(self, v, i):
        if type(v) is SavedTensor:
            if v._is_none and not v._released:
                return None
            x = _saved_array(v)
            if x is not None:
                return x
            # the error of an OpNode (version, freed, detached), with its name: explode
            outs = self.recs[i * _REC + 1]
            self._explode()
            node = self._map[next(j for j in outs if j is not None)][0]
            t = v.unpack(node)
            return t._data if t is not None else None
        if type(v) is tuple:  # index components: arrays saved, the rest as they are
            return tuple(self._value(s, i) if type(s) is SavedTensor else s for s in v)
        return _P.device_constant(v)

    def release_variables(self):
        ran = self._ran.pop(get_ident(), ())  # () after _apply_nodes: its nodes released
        recs, vals = self.recs, self.vals
        if len(ran) == len(self.sigs):  # every op ran: all the values
            return release_saved(vals)
        return release_saved([v for i in ran
                              for v in vals[recs[i * _REC + 4]:recs[i * _REC + 5]]])


def _distinct(leaves, strict):
    """``(uniq, pos)``: each distinct array among ``leaves`` once (Pendings computed by
    now, or computed here; a packed one as its pack), and per leaf where it is in
    ``uniq`` (an index, or ``(index, offset, size, shape)`` for a piece of a pack; NOTE
    [Packed outputs]). ``strict``: None where a leaf is neither an array nor a Pending."""
    first = {}
    uniq = []
    pos = []
    for x in leaves:
        c = x.__class__
        if c is _Pending:
            v = x.value
            if v is None:
                pk = x.pack
                a = pk.array if pk.__class__ is _Pack else None
                if a is not None:  # the pack, sliced inside (read once: another thread
                    k = first.get(id(a))  # may split it meanwhile)
                    if k is None:
                        k = first[id(a)] = len(uniq)
                        uniq.append(a)
                    pos.append((k,) + pk.layout[x.at])
                    continue
                v = x.force()
            x = v
        elif strict and c is not _ArrayImpl:
            return None
        k = first.get(id(x))
        if k is None:
            k = first[id(x)] = len(uniq)
            uniq.append(x)
        pos.append(k)
    return uniq, pos


def _call_once_each(fn, tree, uniq, pos):
    """``fn(*tree.unflatten(leaves))`` for the leaves ``_distinct`` made ``(uniq, pos)`` of,
    each distinct array passed once: the saved values of a group repeat (a constant or a
    weight every op of a loop saves), and each argument of a call costs (a 48-op chain
    group: 37 leaves, 15 distinct, 23 -> 12 us). The wrapper per pattern of repeats is
    cached (NOTE [Bounded caches])."""
    key = (fn, tree, tuple(pos), _lazy._trace_context())  # the settings: see _lazy._flush
    f = _ONCE.get(key)
    if f is None:
        def f(*u, pos=key[2]):
            return fn(*tree.unflatten([u[k] if k.__class__ is int else _piece(u[k[0]], k[1:])
                                       for k in pos]))
        f, _ = _disk.compiled(("once", fn, tree, key[2]), _disk.FusedJit(f), uniq)
        with _lazy._lock:  # several threads may run backwards
            if len(_ONCE) >= _P.CACHE_MAX:
                del _ONCE[next(iter(_ONCE))]
            _ONCE[key] = f
    return f(*uniq)


_ONCE = {}
_Pack = _lazy._Pack
_piece = _lazy._slice_piece  # (pack, (offset, size, shape)), traced


def _saved_array(v):
    """The array (or Pending) of the SavedTensor ``v`` where unpacking it would pass every
    check and give its own array back (an output; an input alive, unchanged and still
    attached; a result of the group held weakly), else None: GroupNode._value's common
    case, without building a tensor."""
    if v._unpack_hook is None and not v._released and not v._is_none \
            and v._vc.v == v._version:
        if v._is_output:
            return v._data
        t = v._tensor
        if t is None:  # a result of this group, held weakly
            t = v._ref()
            if t is None or t._grad_fn is not None:
                return v._data
        elif not (v._had_fn and t._grad_fn is None):
            return _raw(t)
    return None


def _build(sigs, recs, n_out, n_ext, mask):
    """The jitted backward of a group for the outputs in ``mask``: ``fn(gs, vals)`` with
    the gradients of those outputs and the saved values of the ops that run, returning the
    gradient of each outside edge (None where none flows); with the ops that run and,
    per op, the indices in the group's ``vals`` of the values its kernel takes."""
    has = {j for j, m in enumerate(mask) if m}
    active = []
    for i in range(len(recs) - 1, -1, -1):
        if any(j is not None and j in has for j in recs[i][1]):
            active.append(i)
            for s in recs[i][0]:
                if s is not None and s >= 0:
                    has.add(s)
    steps = []
    at = []
    for i in active:
        (prim, akey, needs, in_meta, out_meta), attrs, _, _ = sigs[i]
        srcs, outs, _, _, v0, _ = recs[i]
        k = prim.kernel(akey, attrs, needs, in_meta, out_meta)
        steps.append((outs, srcs, k))
        pos = {n: v0 + p for p, (n, _) in enumerate(prim.save_plan(needs))}
        at.append(tuple(pos[n] for n in k.names))
    where = [j for j, m in enumerate(mask) if m]

    def run(gs, vals):
        acc = [None] * n_out
        for j, g in zip(where, gs):
            acc[j] = g
        ext = [None] * n_ext
        for (outs, srcs, k), sv in zip(steps, vals):
            og = [acc[j] if j is not None else None for j in outs]
            ins = k.fun(og, sv)
            for s, g in zip(srcs, ins):
                if s is None or g is None:
                    continue
                if s >= 0:
                    acc[s] = g if acc[s] is None else acc[s] + g
                else:
                    e = ~s
                    ext[e] = g if ext[e] is None else ext[e] + g
        return ext
    # the tree of (gs, vals) where every value is an array (GroupNode._leaves)
    plain = jax.tree_util.tree_structure(([0] * len(where), [[0] * len(js) for js in at]))
    # NOTE [Deferred jit], NOTE [Rounding in fused programs]
    fn = _disk.FusedJit(run)
    fn._wg_src = ("g", tuple([(e[0], r[0], r[1]) for e, r in zip(sigs, recs)]), n_out, n_ext,
                  mask)  # NOTE [Lazy disk cache]
    return fn, tuple(active), tuple(at), plain


def _saved_result(t, data, nr):
    """A result saved as the OpNode would: its array, rebuilt as output ``nr`` of the node
    that unpacks it."""
    s = SavedTensor(t, True, _held(data))
    s._output_nr = nr
    return s


def _held(d):
    """``d``, a value a saved tensor holds: where it is pending, its segment returns it
    packed (NOTE [Packed outputs])."""
    if d.__class__ is _Pending and d.pack is None:
        d.pack = True
    return d


def _signature(prim, akey, attrs, args, kinds, out):
    """What every call of one op signature records alike: ``(sig, attrs, diff, sid)``,
    ``diff`` None when no output is differentiable (NOTE [Recording cost]), ``sid`` the
    number that stands for ``sig`` in group keys (``_sig_id``)."""
    needs = _P._intern(_P._NEEDS, tuple(k == 2 for k in kinds))
    in_meta = []
    for a, k in zip(args, kinds):
        if k:
            d = _raw(a)
            in_meta.append((d.shape, d.dtype))
        else:
            in_meta.append(None)
    in_meta = _P._intern(_P._IN_META, tuple(in_meta))
    if prim.nout == 1:
        out_meta = None
        diff = None if prim.nondiff_outputs or out.dtype.kind not in _P._DIFF_KINDS \
            else (True,)
    else:
        outs = tuple(out)
        out_meta = tuple((o.shape, o.dtype) for o in outs)
        diff = tuple(i not in prim.nondiff_outputs and o.dtype.kind in _P._DIFF_KINDS
                     for i, o in enumerate(outs))
        if not any(diff):
            diff = None
    sig = (prim, akey, needs, in_meta, out_meta)
    return sig, dict(attrs), diff, _sig_id(sig)


_SIG_IDS = {}
_SIG_IDS_MAX = 4096
_sig_ids = itertools.count()


def _sig_id(sig):
    """A number for ``sig``, never given to another signature: a group's key (GroupNode.
    apply) hashes and compares numbers, not the signatures' nested tuples (after a clear
    of this bounded table a signature gets a new number: a cache miss, never a false
    hit)."""
    i = _SIG_IDS.get(sig)
    if i is None:
        if len(_SIG_IDS) >= _SIG_IDS_MAX:  # NOTE [Bounded caches]
            _SIG_IDS.clear()
        i = _SIG_IDS[sig] = next(_sig_ids)
    return i


def record(prim, args, akey, attrs, out, meta, kinds):
    """Record a differentiable call into the open group (NOTE [Lazy backward groups]);
    its results, as ``Primitive._record`` returns them. ``meta``: the segment's table for
    this call's (forward, input avals), where its signature is kept; ``kinds``: per
    input, 0 not a Tensor, 1 a Tensor outside autograd, 2 one inside."""
    entry = meta.get(kinds)
    if entry is None:
        entry = meta[kinds] = _signature(prim, akey, attrs, args, kinds, out)
    if entry[2] is None:
        return _make(out) if prim.nout == 1 else tuple(_make(o) for o in out)
    with _lazy._lock:
        return _add(prim, args, kinds, entry, out)


def _place(args, kinds):
    """The open group a call joins (a new one where it must start), where each input
    comes from in it (``srcs``: a result's index, ``~i`` for outside edge i, None for an
    input outside autograd) and the call's topological number. The caller holds the
    segment lock."""
    g = _open.ref
    if g is not None:
        g = g()  # held weakly: a group no tensor needs is freed at once
    if g is None or len(g.sigs) >= CAP or g._map is not None:
        g = GroupNode()
        _open.ref = _weakref(g)
    while True:
        start = g._start
        srcs = []
        topo = 0
        added = None
        for a, k in zip(args, kinds):
            if k != 2:
                srcs.append(None)
                continue
            fn = a._grad_fn
            if fn is g:
                s = a._output_nr
                srcs.append(s)
                t = g._out_topo[s]
            elif fn is not None and fn._seq_nr > start and fn._seq_nr != _SEQ_MAX:
                # this input's node was made after g began, outside it (a view or an
                # in-place op of one of g's results, a custom Function): it may lead
                # back into g, which would then wait on itself. A new group (without the
                # edges this call added to g).
                for e in added or ():
                    del g._ext[e]
                    g._edges.pop()
                g = GroupNode()
                _open.ref = _weakref(g)
                break
            else:
                e = a._gradient_edge()
                if fn is not None and fn._is_group and fn._map is not None:
                    e = fn._map[e[1]]  # an exploded group: the OpNode inside
                ext = g._ext
                i = ext.get(e)
                if i is None:
                    edges = g._edges
                    i = ext[e] = len(edges)
                    edges.append(e)
                    if added is None:
                        added = []
                    added.append(e)
                srcs.append(~i)
                t = e[0]._topological_nr
            if t >= topo:
                topo = t + 1
        else:
            return g, srcs, topo


# A record's ``srcs`` and ``outs`` tuples are shared by the calls that have equal ones (NOTE
# [Lazy backward groups], "Records"): a loop's calls repeat them, and a tuple per call,
# alive until backward, would set the garbage collector off (the chain benchmark: 2,400
# such tuples a forward pass). Keys: the tuple, or for a single output its index; bounded
# (NOTE [Bounded caches]).
_SHARED = {}
_SHARED_MAX = 4096


def _add1(args, kinds, entry, out, ins):
    """_add for a fast-lane call whose one output is differentiable and which saves only
    inputs (Tensors, numbers or absent ones; ``ins``: their indices), as _saved_values
    would save them, without its general cases. The caller holds the segment lock."""
    g, srcs, topo = _place(args, kinds)
    seq = next(_node_seq)
    saved = []
    for i in ins:  # _saved_input(a, g._keep), inline: two calls less a value (0.3-0.4 ms
        a = args[i]  # of a chain step)
        if a is None or isinstance(a, Tensor):
            a = _weak_saved(a, _held(_raw(a))) if a is not None and a._grad_fn is g \
                else _P._save(a)
        saved.append(a)
    n = g.num_outputs
    res = _make(out, g, n)
    g._out_topo.append(topo)
    g.num_outputs = n + 1
    if topo >= g._topological_nr:
        g._topological_nr = topo + 1
    vals = g.vals
    v0 = len(vals)
    vals += saved
    g.sigs.append(entry)
    srcs = tuple(srcs)
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    g.recs.extend((_SHARED.setdefault(srcs, srcs), _SHARED.setdefault(n, (n,)), seq, topo, v0,
                   len(vals)))
    g._seq_nr = seq
    return res


def _add(prim, args, kinds, entry, out):
    """Append the call to the open group (a new one where it must start); its results.
    ``entry``: its signature's ``(sig, attrs, diff, sid)``. The caller holds the segment
    lock."""
    single = prim.nout == 1
    diff = entry[2]
    g, srcs, topo = _place(args, kinds)
    seq = next(_node_seq)
    plan, saved = prim._saved_values(args, entry[0][2], g._keep)
    n = g.num_outputs
    if single:
        results = (_make(out, g, n),)
        g._out_topo.append(topo)
        idx = (n,)
        n += 1
        outs = (out,)
    else:
        outs = tuple(out)
        idx = []
        results = []
        for o, dflag in zip(outs, diff):
            if dflag:
                idx.append(n)
                results.append(_make(o, g, n))
                g._out_topo.append(topo)
                n += 1
            else:
                idx.append(None)
                results.append(_make(o))
        idx = tuple(idx)
    g.num_outputs = n
    if topo >= g._topological_nr:
        g._topological_nr = topo + 1
    if plan and plan[-1][1] < _P._VARIADIC:  # results are saved: they come last
        for k in range(len(plan) - 1, -1, -1):
            i = plan[k][1]
            if i == _P._RESULT:
                saved[k] = _saved_result(results[0], outs[0], 0)
            elif i == _P._RESULTS:
                saved[k] = tuple(_saved_result(r, o, j if d else 0) for j, (r, o, d)
                                 in enumerate(zip(results, outs, diff)))
            else:
                break
    vals = g.vals
    v0 = len(vals)
    vals.extend(saved)
    g.sigs.append(entry)
    srcs = tuple(srcs)
    if len(_SHARED) >= _SHARED_MAX:
        _SHARED.clear()
    g.recs.extend((_SHARED.setdefault(srcs, srcs), _SHARED.setdefault(idx, idx), seq, topo, v0,
                   len(vals)))
    g._seq_nr = seq
    return results[0] if single else tuple(results)


# NOTE [Lazy fast lane]
# Most calls of a lazy loop repeat a signature already seen: the same primitive and
# attributes, inputs of the same avals and kinds (a pending result of the open segment, an
# outside array, a number; inside autograd or not). For a single-output differentiable call
# with at least one input inside autograd, ``fast`` keeps per signature what the general
# path (``_primitive._lazy_call`` -> ``_lazy.record`` -> ``record``) computes alike for
# every such call: the forward, the output aval, the group signature and attributes. A
# hit appends the call to the segment and to the group under one lock
# acquisition, with no shape inference, table lookup or per-input kind list; a miss, or
# anything unusual (an
# input that is not a jax.Array, a JAX trace), leaves the segment as it was and takes the
# general path, whose tables then give the next call its plan. Same records, same order,
# same results: only fewer steps (docs/performance.md, "Lazy fast lane";
# tests/lazy/test_groups.py compares the records of both paths). The elementwise wrappers
# (``_binary``, ``_unary_float``), which know the attribute key their call would make,
# enter the lane directly (``_primitive.lazy_fast``: 0.3-0.8 us less per op than through
# ``Primitive.__call__``), and on a miss lazy mode's general path. A binary op's key
# leaves out its ``dtype`` attribute, the inputs' result type, which the rest of the key
# determines (the inputs' avals and kinds, and the default dtype, which the promotion of
# a Python number reads): no type promotion per call. A plan whose call saves only
# inputs saves them inline, without the general save plan's cases (together 1.0 us less
# per op in the chain benchmark, docs/performance.md "Tenth session"). The lane takes the
# segment lock by ``acquire``/``release`` rather than ``with`` (90 against 170 ns a call;
# "Fourteenth session").
_FAST = {}
_FAST_MAX = 4096
_acquire, _release = _lazy._lock.acquire, _lazy._lock.release
_Pending = _lazy.Pending


def fast(prim, args, akey, promote=False):
    """The results of ``prim(*args)`` recorded into the open segment and group (NOTE
    [Lazy fast lane]), or None where the general path must run. ``promote``: ``akey``
    lacks the leading ``dtype`` attribute, which is the inputs' result type."""
    _acquire()  # not ``with``: 90 against 170 ns a call
    try:
        seg = _lazy._seg[0]
        ext_ids = seg.ext_ids
        n_ext = len(seg.ext)
        refs = []
        key = [(prim, _D._default[0]) if promote else prim, akey]
        tracked = False
        for a in args:
            if isinstance(a, Tensor):
                d = _raw(a)
                if a._grad_fn is not None or a._requires_grad:
                    kind = 2
                    tracked = True
                else:
                    kind = 1
                if d.__class__ is _Pending:
                    if d.seg is seg:
                        refs.append(d.idx)
                        key.append(d.aval)
                        key.append(kind)
                        continue
                    d = d.force()
            elif isinstance(a, _P._NUMBER):
                d = _P.device_constant(a)
                if d is a:  # under a JAX trace
                    break
                kind = 0
            elif a is None:  # an absent optional input
                refs.append(None)
                key.append(None)
                key.append(0)
                continue
            else:
                break
            i = ext_ids.get(id(d))
            if i is None:
                try:
                    i = _lazy.ext_index(seg, d)
                except _lazy.NotLazy:
                    break
            refs.append(~i)
            key.append(seg.ext_avals[i])
            key.append(kind)
        else:
            if tracked:
                key = tuple(key)
                plan = _FAST.get(key)
                if plan is None:
                    if promote:
                        plan = _promoted_plan(prim, akey, key, args)
                    else:
                        plan = _plan(prim, akey, key)
                if plan is not None:
                    f, oaval, kinds, entry, ins = plan
                    seg.ops.extend((f, None, len(refs), *refs))  # flat (_lazy._Segment)
                    srefs = seg.refs
                    out = _Pending(seg, len(srefs), oaval)
                    srefs.append(out)
                    seg.weight += 1
                    if seg.weight >= CAP:
                        _lazy.flush_full(seg)
                    if ins is not None:
                        return _add1(args, kinds, entry, out, ins)
                    return _add(prim, args, kinds, entry, out)
        # the general path: the segment as it was
        if len(seg.ext) > n_ext:
            for x in seg.ext[n_ext:]:
                del ext_ids[id(x)]
            del seg.ext[n_ext:], seg.ext_avals[n_ext:]
        return None
    finally:
        _release()


def _promoted_plan(prim, akey, key, args):
    """The plan of a call keyed without its result type (``fast(promote=True)``): that
    of the full key, which the inputs' avals, kinds and the default dtype determine."""
    full = (("dtype", _result_type(*args).np),) + akey
    fkey = (prim, full) + key[2:]
    plan = _FAST.get(fkey) or _plan(prim, full, fkey)
    if plan is not None:
        if len(_FAST) >= _FAST_MAX:  # NOTE [Bounded caches]
            _FAST.clear()
        _FAST[key] = plan
    return plan


def _plan(prim, akey, key):
    """The fast lane's plan for ``key`` from the general path's tables, once a call of
    this signature went through it (else None)."""
    f = prim._fwd_cache.get(akey)
    if f is None:
        return None
    avals = key[2::2]
    kinds = key[3::2]
    r = _lazy._AVALS.get((f, None, avals))
    if r is None or not r[2]:
        return None
    entry = r[3].get(kinds)
    if entry is None or entry[2] != (True,):
        return None
    ins = []  # the inputs the call saves, where it saves nothing else (_add1)
    for _, i in prim.save_plan(entry[0][2]):
        if i < 0:
            ins = None
            break
        ins.append(i)
    plan = (f, r[1][0], kinds, entry, None if ins is None else tuple(ins))
    if len(_FAST) >= _FAST_MAX:  # NOTE [Bounded caches]
        _FAST.clear()
    _FAST[key] = plan
    return plan
