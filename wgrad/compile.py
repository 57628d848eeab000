"""wgrad.compile: trace a whole step (forward, backward, update) into one XLA computation.

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
import dis
import functools
import operator
import sys
import types
import warnings

import jax

from ._tensor import Tensor, _make
from .interop import _is_tensor, _merge_static, _norm_argnums, _split_static

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
_LIBRARY_MODULES = ("jax", "jaxlib", "numpy", "wgrad", "builtins", "functools", "hypothesis",
                    "_pytest", "pytest", "typing", "collections", "threading")
_MAX_DEPTH = 8
# an array no one else holds is referenced by its Tensor, the call's list, the loop
# variable and getrefcount's argument
_SOLE_OWNER_REFS = 4
_getrefcount = sys.getrefcount
_is = operator.is_
_cell_contents = operator.attrgetter("cell_contents")


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


_Spec = collections.namedtuple("_Spec", "tree pos static svals has_grad mask n flags")
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
        functools.update_wrapper(self, step)

    def _roots(self):
        return (self.step, self.capture)

    def _discover(self):
        """Walk for the captured tensors (NOTE [What compile captures], 1 and 2) and
        record the checks that tell whether a new walk would differ (NOTE [Cached
        discovery])."""
        tensors, index, checks = [], {}, []

        def add(t):
            if id(t) not in index:
                index[id(t)] = len(tensors)
                tensors.append(t)
        _walk_roots(self._roots(), add, checks)
        found = self._found = (tuple(tensors), index, checks)
        self._fast, self._fasts = None, {}
        return found

    def __call__(self, *args, **kwargs):
        fast = self._fast
        if fast is not None and not kwargs:
            out = fast(self, args)
            if out is not _MISS:
                return out
        found = self._found
        if found is None or not _unchanged(found[2]):
            found = self._discover()
        captured, index, _ = found
        tensors, tree = list(captured), ()
        if not kwargs and not self.static_argnums:
            # the common call, tensors only: no pytree flattening
            tree = static = svals = dyn_leaves = ()
            pos = []
            for a in args:
                if not isinstance(a, Tensor):
                    break
                i = index.get(id(a))
                pos.append(_position(a, tensors, len(captured)) if i is None else i)
            else:
                tree = None
        if tree is not None:
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
        arrays, has_grad, mask, flags = self._inputs(tensors, len(captured))
        spec = (tree, tuple(pos), static, svals, tuple(has_grad), tuple(mask), len(tensors),
                tuple(flags))
        fn = self._cache.get(spec)
        if fn is None:
            fn = self._cache[spec] = self._jit(spec)
            with warnings.catch_warnings():
                # compiling: a donated buffer may have no output to alias (a .grad set to
                # None, a parameter given a new shape); donation is a hint
                warnings.filterwarnings("ignore", "Some donated buffers were not usable")
                out = self._run(fn, spec, tensors, arrays, dyn_leaves)
        else:
            out = self._run(fn, spec, tensors, arrays, dyn_leaves)
        if tree is None and self._found is found:
            fast = self._fasts.get(spec, _MISS)
            if fast is _MISS:
                fast = self._fasts[spec] = _fast_path(self, spec, found, fn)
            self._fast = fast
        return out

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
        return jax.jit(fn, donate_argnums=tuple(i for i, m in enumerate(spec.mask) if m))

    def _run_traced(self, spec, arrays, dyn_leaves):
        tensors, n = self._tensors, spec.n
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
                    datas[i] = t._data
                g, gin = t._grad, grad_in[i]
                if g is None:
                    if gin is not None:
                        grads[i] = None
                elif gin is None or g._data is not gin[0] or gin[1]:
                    grads[i] = g._data
            ids = {id(t) for t in tensors}
            new = []
            _walk_roots(self._roots() + (out,), lambda t: new.append(t)
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


# -- fast path -------------------------------------------------------------------------
# NOTE [Fast path]
# The general call path computes, on every call, the same few facts: whether discovery
# would find the same tensors (NOTE [Cached discovery]), which argument is which captured
# or new tensor, which tensors have a ``.grad``, which arrays may be donated, and from
# these the spec that picks the jitted function. After a call in the common form
# (positional Tensors only, no static arguments), the step keeps a fast path for that
# call's spec: a function generated for it (straight-line code, its objects bound as
# constants) that checks each of those facts against the spec and, when all agree, calls
# the spec's jitted function directly. Any difference returns _MISS, and the general path
# runs and installs the fast path of the spec it used, so a fast path never decides
# anything the general path would decide differently. Measured on the phase-retrieval
# step (bench/bench_compile.py), each step synced: the work before the XLA dispatch went
# from 12-15 us to 4-6 us (Python right after a synced step runs about twice as slowly as
# in a hot loop), most of wgrad.compile's gap to jax.jit(jax.grad) there.
_MISS = object()


def _sole_owner_refs():
    """getrefcount of an array held only by its Tensor, as a fast path's local sees it."""
    env = {"_rc": _getrefcount}
    exec("def probe(t):\n    d0 = t._data\n    return _rc(d0)\n", env)  # noqa: S102
    holder = types.SimpleNamespace(_data=object())
    return env["probe"](holder)


_FAST_SOLE_OWNER_REFS = _sole_owner_refs()


def _fast_path(step, spec, found, fn):
    """Generate the fast path (NOTE [Fast path]) of ``step`` for ``spec``: a function
    ``fast(step, args)`` that returns the call's outputs, or _MISS. None where discovery
    must walk again on every call."""
    raw, spec = spec, _Spec._make(spec)
    captured, index, checks = found
    nc = len(captured)
    env = {"Tensor": Tensor, "isinstance": isinstance, "id": id, "len": len, "_rc": _getrefcount,
           "_MISS": _MISS, "_same": _same, "fn": fn, "spec": raw, "index": index}
    consts = {}

    def const(v):
        name = consts.get(id(v))
        if name is None:
            name = consts[id(v)] = f"k{len(consts)}"
            env[name] = v
        return name
    guard = [f"if len(args) != {len(spec.pos)}: return _MISS"]
    if spec.pos:
        guard.append("".join(f"a{j}, " for j in range(len(spec.pos))) + "= args")
    first = {}  # slot of a new (argument) tensor -> the first argument in it
    for j, p in enumerate(spec.pos):
        if p < nc:
            guard.append(f"if a{j} is not {const(captured[p])}: return _MISS")
        elif p in first:
            guard.append(f"if a{j} is not a{first[p]}: return _MISS")
        else:
            guard.append(f"if not isinstance(a{j}, Tensor) or id(a{j}) in index: return _MISS")
            guard += [f"if a{j} is a{q}: return _MISS" for q in first.values()]
            first[p] = j
    for state, obj, old in checks:
        if old is None:  # an empty closure cell: discovery walks again on every call
            return None
        if isinstance(state, _FunctionState):
            f = const(obj)
            now = [f"{f}.__code__", f"{f}.__defaults__", f"{f}.__kwdefaults__",
                   *(f"{const(c)}.cell_contents" for c in state.cells),
                   *(f"{const(state.globals)}.get({n!r})" for n in state.names)]
            guard += [f"if {x} is not {const(o)}: return _MISS" for x, o in zip(now, old)]
        else:
            guard.append(f"if not _same({const(state)}({const(obj)}), {const(old)}): "
                         "return _MISS")
    names = [const(t) for t in captured] + [f"a{j}" for j in first.values()]
    arrays = []
    for i, t in enumerate(names):
        if not isinstance(spec.flags[i], bool):  # hooks: compared on the general path
            return None
        guard.append(f"if {t}._requires_grad is not {spec.flags[i]} or {t}._hooks is not None "
                     f"or {t}._post_acc_hooks is not None or {t}._retains_grad: return _MISS")
        guard.append(f"d{i} = {t}._data")
        arrays.append(f"d{i}")
    for i, t in enumerate(names):
        if spec.has_grad[i]:
            guard += [f"if {t}._grad is None: return _MISS", f"e{i} = {t}._grad._data"]
            arrays.append(f"e{i}")
        else:
            guard.append(f"if {t}._grad is not None: return _MISS")
    if step.donate:  # the donation mask, as CompiledStep._inputs computes it
        for j, (a, m) in enumerate(zip(arrays, spec.mask)):
            if nc <= j < spec.n and not spec.flags[j]:  # data: never donated
                continue
            guard.append(f"if _rc({a}) {'>' if m else '<='} {_FAST_SOLE_OWNER_REFS}: "
                         "return _MISS")
    src = ("def fast(self, args):\n    try:\n" + "".join(f"        {g}\n" for g in guard) +
           "    except ValueError:  # an empty closure cell\n        return _MISS\n"
           f"    return self._run(fn, spec, [{', '.join(names)}], [{', '.join(arrays)}], ())\n")
    exec(src, env)  # noqa: S102
    return env["fast"]


# -- discovery -------------------------------------------------------------------------
# NOTE [Cached discovery]
# Walking the step's closures, globals and objects costs microseconds per call, so the
# walk is cached. While walking, every mutable thing it enters records a check: a state
# function and the state it returned (the items of a list, the keys and values of a
# dict or of an object's ``__dict__``, a function's code, defaults, closure cell contents
# and the globals its code names). The walk is a function of those identities alone, so
# when every state is the same objects again (compared with ``is``, no recursion), the
# walk would find the same tensors in the same order; otherwise it runs again. The
# recorded states hold their objects, so no id is reused while a check refers to it.
def _unchanged(checks):
    try:
        for state, obj, old in checks:
            if not _same(state(obj), old):
                return False
    except ValueError:  # an empty closure cell: walk again
        return False
    return True


def _same(new, old):
    return len(new) == len(old) and all(map(_is, new, old))


def _walk_roots(roots, add, checks=None):
    seen = set()
    for r in roots:
        _walk(r, add, seen, 0, checks)


def _is_library(obj):
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".", 1)[0] in _LIBRARY_MODULES


def _dict_state(d):
    return (*d, *d.values())


def _object_state(x):
    d = vars(x)
    return (type(x), *d, *d.values())


class _FunctionState:
    """The state of a function its walk depends on: code, defaults, the contents of its
    closure cells and the values of the globals it names (a check's state function)."""
    __slots__ = ("cells", "globals", "names")

    def __init__(self, f, names):
        # the closure and the globals dict are fixed for f's lifetime
        self.cells, self.globals, self.names = f.__closure__ or (), f.__globals__, names

    def __call__(self, f):
        return (f.__code__, f.__defaults__, f.__kwdefaults__,
                *map(_cell_contents, self.cells), *map(self.globals.get, self.names))


def _check(checks, state, x):
    if checks is not None:
        try:
            checks.append((state, x, state(x)))
        except ValueError:  # a function with an empty closure cell: always walk again
            checks.append((state, x, None))


def _walk(x, add, seen, depth, checks):
    if x is None or isinstance(x, (int, float, complex, str, bytes, bool)):
        return
    if isinstance(x, Tensor):
        add(x)
        return
    if id(x) in seen or depth > _MAX_DEPTH:
        return
    seen.add(id(x))
    d = depth + 1
    if isinstance(x, (list, tuple)):
        if isinstance(x, list):
            _check(checks, tuple, x)
        for v in x:
            _walk(v, add, seen, d, checks)
    elif isinstance(x, dict):
        _check(checks, _dict_state, x)
        for k, v in x.items():
            _walk(k, add, seen, d, checks)
            _walk(v, add, seen, d, checks)
    elif isinstance(x, functools.partial):
        _walk(x.func, add, seen, d, checks)
        _walk(x.args, add, seen, d, checks)
        _walk(x.keywords, add, seen, d, checks)
    elif isinstance(x, types.MethodType):
        _walk(x.__self__, add, seen, d, checks)
        _walk(x.__func__, add, seen, d, checks)
    elif isinstance(x, types.FunctionType):
        if depth > 0 and _is_library(x):  # the step itself is always searched
            return
        names = _global_names(x.__code__)
        _check(checks, _FunctionState(x, names), x)
        for c in x.__closure__ or ():
            try:
                _walk(c.cell_contents, add, seen, d, checks)
            except ValueError:  # an empty cell
                pass
        _walk(x.__defaults__, add, seen, d, checks)
        _walk(x.__kwdefaults__, add, seen, d, checks)
        g = x.__globals__
        for name in names:
            if name in g:
                _walk(g[name], add, seen, d, checks)
    elif isinstance(x, (types.ModuleType, type, jax.Array, CompiledStep)) or callable(
            getattr(x, "__jax_array__", None)):
        return
    elif hasattr(x, "__dict__") and not (_is_library(type(x)) and
                                         not type(x).__module__.startswith("wgrad.optim")):
        _check(checks, _object_state, x)
        for v in list(vars(x).values()):
            _walk(v, add, seen, d, checks)


_GLOBAL_OPS = frozenset(("LOAD_GLOBAL", "STORE_GLOBAL", "DELETE_GLOBAL", "LOAD_NAME"))


@functools.lru_cache(maxsize=1024)
def _global_names(code):
    """The global names ``code`` (and the code nested in it) reads or writes; not the
    attribute names, which ``co_names`` also lists."""
    names = {i.argval for i in dis.get_instructions(code) if i.opname in _GLOBAL_OPS}
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names.update(_global_names(c))
    return tuple(sorted(names))
