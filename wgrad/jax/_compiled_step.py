"""wgrad.compile: trace a whole step (forward, backward, update) into one XLA computation.

This module holds the compiled step; the walk that finds its tensors is _discovery.py,
the generated guards of its fast path _fast_path.py.

# NOTE [What compile captures]
# A compiled step is a pure function of the arrays of the Tensors it touches. On each
# call, ``CompiledStep`` collects those Tensors, in a deterministic order:
#   1. Tensors reachable from the step itself: closure cells, default arguments, the
#      globals its code reads, a bound method's ``self``, a ``functools.partial``'s
#      arguments, a callable object's attributes, and recursively through lists, tuples,
#      dicts (keys and values), the attributes of plain objects (an optimizer's
#      ``param_groups`` and ``state``) and the closures/globals of Python functions found
#      there (not library code: jax, numpy, wgrad functions are not entered);
#   2. Tensors reachable from ``capture=`` (anything: a list, a module, an optimizer);
#   3. Tensors at the leaves of the (non-static) arguments (lists, tuples, dicts, pytrees)
#      not found already.
# 1 and 2 are found by a walk that is cached and re-checked by identity on each call
# (NOTE [Cached discovery]). Their ``_data`` and ``.grad`` data become the jit inputs;
# tracers are swapped into the same Tensor objects while the step runs, and afterwards the
# arrays that changed are written back into those objects (so ``p.data = ...``,
# ``p -= lr * p.grad``, ``p.grad = None`` and gradient accumulation persist); an input the
# step leaves unchanged is no output (an output would be a copy), unless it was donated.
# Tensors the step newly stores into captured objects (an optimizer's lazily created
# state) are written back too, detached; the next call sees them as inputs and traces once
# more. Anything else is a compile-time constant: Python numbers and objects read by the
# step, Tensors it cannot reach, random draws made while tracing. Python side effects
# (print, appending to a list) happen only while tracing.
"""
import collections
import functools
import sys
import warnings

import jax

from .. import _precision
from ..ops._lazy_disk import FusedJit
from .._tensor import Tensor, _make
from ._discovery import unchanged, walk_roots
from ._fast_path import MISS, fast_path
from ._pytree import _is_tensor, _merge_static, _norm_argnums, _split_static

__all__ = ["compile", "CompiledStep"]

_TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                  jax.errors.TracerIntegerConversionError)
_ERR_CONTROL_FLOW = (
    "wgrad.compile: the step used the value of a traced tensor in Python ({what}). Inside a "
    "compiled step, tensors hold abstract values that exist only when the XLA computation "
    "runs, so Python `if`/`while` on a tensor, bool(), .item(), float(), int(), .tolist() "
    "and .numpy() cannot see them. Either: (1) express the choice with tensor ops "
    "(wgrad.where(cond, a, b), masks, clamp); (2) pass the deciding value as a static "
    "argument, wgrad.compile(step, static_argnums=(i,)), which retraces for each new value; "
    "(3) return the value from the step and decide in Python after the call; or (4) run "
    "the step eagerly, without wgrad.compile.")
# an array no one else holds is referenced by its Tensor, the call's list, the loop
# variable and getrefcount's argument
_SOLE_OWNER_REFS = 4
_getrefcount = sys.getrefcount


def compile(step=None, *, static_argnums=(), donate=True, capture=None):  # noqa: A001
    """Compile a whole wgrad step (forward, backward, ``.grad`` accumulation, the update
    under ``no_grad``, hooks) into one XLA computation with ``jax.jit``.

    The Tensors the step reads are found as NOTE [What compile captures] says; their
    arrays are the computation's inputs and the updated arrays are written back into the
    same Tensor objects after each call. Returns the step's outputs (Tensors come back
    as detached Tensors). Retraces when shapes, dtypes, the set of captured tensors
    (which have a ``.grad``, require grad, have hooks) or a static argument change. With
    ``donate=True`` an input array that no one else references (checked per call) is
    donated, so parameters are updated in place; the arrays of arguments that do not
    require grad (data) are never donated.

    Parameters
    ----------
    step : callable
        The step. Usable as a decorator, with or without arguments.
    static_argnums : int or tuple of int
        Arguments that are hashable Python values baked into the trace.
    donate : bool
        Donate the buffers of captured tensors when safe.
    capture : object, optional
        More objects to search for tensors (a list of parameters, an optimizer).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0, -2.0], requires_grad=True)
    >>> @wgrad.compile
    ... def step(x):
    ...     loss = ((w * x).sum() - 1.0) ** 2
    ...     loss.backward()
    ...     with wgrad.no_grad():
    ...         w.data = w.data - 0.1 * w.grad
    ...     w.grad = None
    ...     return loss
    >>> step(wgrad.tensor([1.0, 1.0]))
    tensor(4.)
    >>> w
    tensor([ 1.4000, -1.6000], requires_grad=True)
    """
    if step is None:
        return functools.partial(compile, static_argnums=static_argnums, donate=donate,
                                 capture=capture)
    return CompiledStep(step, static_argnums=static_argnums, donate=donate, capture=capture)


_Spec = collections.namedtuple("_Spec", "tree pos static svals has_grad mask n flags n_lr "
                                        "hyper")
_Spec.__doc__ = "Everything about a call that is baked into its trace (its cache key)."


class CompiledStep:
    """The callable returned by :func:`wgrad.compile`."""

    def __init__(self, step, *, static_argnums=(), donate=True, capture=None):
        self.step = step
        self.static_argnums = _norm_argnums(static_argnums)
        self.donate = donate
        self.capture = capture
        self._cache = {}
        self._found = None  # (captured tensors, their positions by id, checks)
        self._tensors = None
        self._new_state = None  # set while tracing: tensors the step newly stored
        self._fast = None  # the guarded fast path of the last call (NOTE [Fast path])
        self._fasts = {}  # spec -> its fast path, for the current discovery
        self._precision = _precision.generation[0]  # NOTE [Float32 precision]
        self._optimizers = ()  # the wgrad optimizers discovery found (NOTE [Learning rates])
        self._lr_groups = None  # set while running: the groups whose lr is a jit input
        functools.update_wrapper(self, step)

    def _roots(self):
        return (self.step, self.capture)

    def _discover(self):
        """Walk for the captured tensors (NOTE [What compile captures], 1 and 2) and
        record the checks that tell whether a new walk would differ (NOTE [Cached
        discovery] in _discovery.py)."""
        tensors, index, checks = [], {}, []

        def add(t):
            if id(t) not in index:
                index[id(t)] = len(tensors)
                tensors.append(t)
        optimizers = []
        walk_roots(self._roots(), add, checks, optimizers)
        self._optimizers = tuple(optimizers)
        found = self._found = (tuple(tensors), index, checks)
        self._fast, self._fasts = None, {}
        return found

    def __call__(self, *args, **kwargs):
        if self._precision != _precision.generation[0]:  # traced under another conv flag
            self._precision = _precision.generation[0]
            self._cache.clear()
            self._fast, self._fasts = None, {}
        fast = self._fast
        if fast is not None and not kwargs:
            out = fast(self, args)
            if out is not MISS:
                return out
        found = self._found
        if found is None or not unchanged(found[2]):
            found = self._discover()
        tensors, tree, pos, static, svals, dyn_leaves = self._arguments(found, args, kwargs)
        arrays, has_grad, mask, flags = self._inputs(tensors, len(found[0]))
        lr_groups, hyper = _optimizer_hyper(self._optimizers)
        if lr_groups:
            dyn_leaves = list(dyn_leaves) + [float(g["lr"]) for g in lr_groups]
        spec = (tree, tuple(pos), static, svals, tuple(has_grad), tuple(mask), len(tensors),
                tuple(flags), len(lr_groups), hyper)
        fn = self._cache.get(spec)
        self._lr_groups = lr_groups
        try:
            if fn is None:
                fn = self._cache[spec] = self._jit(spec)
                out = self._run_first(fn, spec, tensors, arrays, dyn_leaves)
            else:
                out = self._run(fn, spec, tensors, arrays, dyn_leaves)
        finally:
            self._lr_groups = None
        # the fast path passes no learning rates: only without float ones
        if tree is None and self._found is found and not lr_groups:
            self._keep_fast_path(spec, found, fn)
        return out

    def _arguments(self, found, args, kwargs):
        """The call's tensors (the captured ones, then new argument tensors), its argument
        tree (None for the common call: positional Tensors only), the slot of each
        argument leaf in the tensors (-1: not a Tensor), the static arguments and their
        values, and the leaves that are not Tensors."""
        captured, index, _ = found
        if not kwargs and not self.static_argnums:
            # the common call, tensors only: no pytree flattening
            tensors, pos = list(captured), []
            for a in args:
                if not isinstance(a, Tensor):
                    break
                i = index.get(id(a))
                pos.append(_position(a, tensors, len(captured)) if i is None else i)
            else:
                return tensors, None, pos, (), (), ()
        tensors = list(captured)
        static, svals, dyn = _split_static(args, self.static_argnums)
        leaves, tree = jax.tree_util.tree_flatten((dyn, kwargs), is_leaf=_is_tensor)
        pos, dyn_leaves = [], []
        for x in leaves:
            if isinstance(x, Tensor):
                i = index.get(id(x))
                pos.append(_position(x, tensors, len(captured)) if i is None else i)
            else:
                pos.append(-1)
                dyn_leaves.append(x)
        return tensors, tree, pos, static, svals, dyn_leaves

    def _run_first(self, fn, spec, tensors, arrays, dyn_leaves):
        """The first call of a new spec, which compiles it."""
        with warnings.catch_warnings():
            # compiling: a donated buffer may have no output to alias (a .grad set to
            # None, a parameter given a new shape); donation is a hint
            warnings.filterwarnings("ignore", "Some donated buffers were not usable")
            return self._run(fn, spec, tensors, arrays, dyn_leaves)

    def _keep_fast_path(self, spec, found, fn):
        """Install the fast path of ``spec`` for the next call (made once per spec and
        discovery)."""
        fast = self._fasts.get(spec, MISS)
        if fast is MISS:
            fast = self._fasts[spec] = fast_path(self, spec, _Spec._make(spec), found, fn)
        self._fast = fast

    def _inputs(self, tensors, n_captured):
        """The jit inputs (data arrays, then .grad arrays), which tensors have a .grad,
        which inputs to donate, and each tensor's autograd flags (plain loops: cheaper
        than comprehensions here)."""
        arrays, has_grad, grad_arrays, flags = [], [], [], []
        for t in tensors:
            arrays.append(t._data)
            flags.append(_autograd_flags(t))
            if t._grad is None:
                has_grad.append(False)
            else:
                has_grad.append(True)
                grad_arrays.append(t._grad._data)
        if grad_arrays:
            arrays += grad_arrays
            del grad_arrays[:]
        if not self.donate:
            return arrays, has_grad, [False] * len(arrays), flags
        mask = []
        for a in arrays:
            mask.append(_getrefcount(a) <= _SOLE_OWNER_REFS)
        # an argument that does not require grad is data: it comes back unchanged, and an
        # input that is neither changed nor donated needs no output at all
        for i in range(n_captured, len(tensors)):
            if not tensors[i]._requires_grad:
                mask[i] = False
        return arrays, has_grad, mask, flags

    def _run(self, fn, spec, tensors, arrays, dyn_leaves):
        """Call the jitted ``fn`` and write its results back into ``tensors``."""
        self._tensors = tensors
        try:
            out, datas, grads, new = fn(*arrays, *dyn_leaves)
        except BaseException:
            self._new_state = None
            raise
        finally:
            self._tensors = None
        for i, d in datas.items():
            tensors[i]._data = d
        for i, g in grads.items():
            t = tensors[i]
            if g is None:
                t._grad = None
            elif t._grad is not None:
                t._grad._data = g
            else:
                t._grad = _make(g)
        if self._new_state is not None:  # this call traced
            for t, d in zip(self._new_state, new):
                t._data = d
                t._grad_fn = None
            if new:  # the next call sees the new tensors as inputs: no reuse of this trace
                self._cache.pop(spec, None)
                self._found, self._fast, self._fasts = None, None, {}
            self._new_state = None
        return out

    def _jit(self, spec):
        spec = _Spec._make(spec)
        k = len(spec.mask)

        def fn(*flat):
            return self._run_traced(spec, flat[:k], flat[k:])
        # NOTE [Rounding in fused programs]
        return FusedJit(fn, donate_argnums=tuple(i for i, m in enumerate(spec.mask) if m))

    def _run_traced(self, spec, arrays, dyn_leaves):
        tensors, n = self._tensors, spec.n
        lr_groups = self._lr_groups
        if spec.n_lr:  # NOTE [Learning rates]: the traced values stand in for the floats
            lrs = dyn_leaves[len(dyn_leaves) - spec.n_lr:]
            dyn_leaves = dyn_leaves[:len(dyn_leaves) - spec.n_lr]
            old_lrs = [g["lr"] for g in lr_groups]
            for g, v in zip(lr_groups, lrs):
                g["lr"] = v
        saved = [(t._data, t._grad, None if t._grad is None else t._grad._data, t._grad_fn,
                  t._output_nr) for t in tensors]
        grad_in = [None] * n  # (traced input, donated) per tensor with a .grad
        try:
            j = n
            for i, (t, a, hg) in enumerate(zip(tensors, arrays, spec.has_grad)):
                t._data = a
                if hg:
                    t._grad._data = arrays[j]
                    grad_in[i] = (arrays[j], spec.mask[j])
                    j += 1
            if spec.tree is None:
                dyn, kwargs = [tensors[p] for p in spec.pos], {}
            else:
                dit = iter(dyn_leaves)
                leaves = [tensors[p] if p >= 0 else next(dit) for p in spec.pos]
                dyn, kwargs = jax.tree_util.tree_unflatten(spec.tree, leaves)
            try:
                out = self.step(*_merge_static(spec.static, spec.svals, dyn), **kwargs)
            except _TRACER_ERRORS as e:
                raise RuntimeError(_ERR_CONTROL_FLOW.format(what=type(e).__name__)) from e
            # outputs only for what changed (an unchanged output would be a copy) and
            # for donated inputs (their buffers must come back, aliased, not lost)
            datas, grads = {}, {}
            for i, t in enumerate(tensors):
                if t._data is not arrays[i] or spec.mask[i]:
                    datas[i] = _keep_layout(t._data, saved[i][0])
                g, gin = t._grad, grad_in[i]
                if g is None:
                    if gin is not None:
                        grads[i] = None
                elif gin is None or g._data is not gin[0] or gin[1]:
                    grads[i] = _keep_layout(g._data, saved[i][0])
            ids = {id(t) for t in tensors}
            new = []
            walk_roots(self._roots() + (out,), lambda t: new.append(t)
                        if id(t) not in ids and isinstance(t._data, jax.core.Tracer)
                        and not any(t is s for s in new) else None)
            out_ids = {id(x) for x in jax.tree_util.tree_leaves(out, is_leaf=_is_tensor)}
            new = [t for t in new if id(t) not in out_ids]
            self._new_state = new
            return out, datas, grads, [t._data for t in new]
        finally:
            for t, (d, g, gd, fn, nr) in zip(tensors, saved):
                t._data, t._grad, t._grad_fn, t._output_nr = d, g, fn, nr
                if g is not None:
                    g._data = gd
            if spec.n_lr:
                for g, v in zip(lr_groups, old_lrs):
                    g["lr"] = v


# NOTE [Learning rates]
# An optimizer's learning rate is the hyper-parameter a scheduler changes between steps.
# When a captured optimizer's group holds it as a Python number, the number is a jit
# input (a weakly typed scalar) that stands in for ``group["lr"]`` while the step is
# traced, so a scheduler's new value reaches the compiled step without a retrace. Its
# other Python-number options (momentum, betas, weight decay, ...) are part of the spec:
# changing one retraces. A step with such learning rates takes the general path (the
# fast path passes no extra inputs); a learning rate held in a Tensor is an ordinary
# captured tensor.
def _optimizer_hyper(optimizers):
    """The param groups whose lr is a Python number, and the other scalar options of
    every group of ``optimizers`` (part of the spec)."""
    if not optimizers:
        return (), ()
    lr_groups, hyper = [], []
    for opt in optimizers:
        for g in opt.param_groups:
            if isinstance(g.get("lr"), (int, float)):
                lr_groups.append(g)
            hyper.append(tuple((k, v) for k, v in g.items()
                               if k not in ("params", "lr") and _scalar_option(v)))
    return lr_groups, tuple(hyper)


def _scalar_option(v):
    if isinstance(v, tuple):
        return all(_scalar_option(x) for x in v)
    return v is None or isinstance(v, (bool, int, float, str))


# NOTE [Compiled steps keep layouts]
# A step whose inputs are sharded over a mesh (a batch split over devices, replicated or
# sharded parameters) is traced once into one SPMD program: XLA propagates the input
# shardings and inserts the collectives (the sum of a gradient over a sharded batch becomes
# an all-reduce). The arrays written back into a tensor (its new data, its .grad) are
# constrained to the layout its data had on the way in, so parameters, gradients and
# optimizer state keep their shardings from call to call, as they do eagerly (NOTE
# [Gradients keep their parameters' shardings] in ops/_transfer.py).
def _keep_layout(x, like):
    """``x`` (traced) constrained to the sharding of ``like`` (the tensor's input array)
    when that spans several devices and the shapes agree."""
    sh = getattr(like, "sharding", None)
    if sh is None or len(sh.device_set) == 1 or getattr(x, "shape", None) != like.shape:
        return x
    return jax.lax.with_sharding_constraint(x, sh)


def _autograd_flags(t):
    """What a trace bakes in of a tensor's autograd state besides its .grad: whether it
    requires grad and its hooks. A plain bool (requires_grad) when it has no hooks and
    does not retain grad, the common case. Hooks are named by their handles' ids, unique
    per registration (a hook itself need not be hashable)."""
    if t._hooks is None and t._post_acc_hooks is None and not t._retains_grad:
        return t._requires_grad
    return (t._requires_grad, t._retains_grad, tuple(t._hooks or ()),
            tuple(t._post_acc_hooks or ()))


def _position(t, tensors, start):
    """Index of the argument tensor ``t`` among ``tensors[start:]`` (appended if new)."""
    for i in range(start, len(tensors)):
        if tensors[i] is t:
            return i
    tensors.append(t)
    return len(tensors) - 1
