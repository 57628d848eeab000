"""wgrad.compile: trace a whole step (forward, backward, update) into one XLA computation.

# NOTE [What compile captures]
# A compiled step is a pure function of the arrays of the Tensors it touches. On each
# call, ``CompiledStep`` collects those Tensors, in a deterministic order:
#   1. Tensors at the leaves of the (non-static) arguments (lists, tuples, dicts, pytrees);
#   2. Tensors reachable from the step itself: closure cells, default arguments, the
#      globals its code names, a bound method's ``self``, a ``functools.partial``'s
#      arguments, a callable object's attributes, and recursively through lists, tuples,
#      dicts (keys and values), the attributes of plain objects (an optimizer's
#      ``param_groups`` and ``state``) and the closures/globals of Python functions found
#      there (not library code: jax, numpy, wgrad functions are not entered);
#   3. Tensors reachable from ``capture=`` (anything: a list, a module, an optimizer).
# Their ``_data`` and ``.grad`` data become the jit inputs; tracers are swapped into the
# same Tensor objects while the step runs, and afterwards the resulting arrays are written
# back into those objects (so ``p.data = ...``, ``p.grad = None`` and gradient
# accumulation persist). Tensors the step newly stores into captured objects (an
# optimizer's lazily created state) are written back too, detached; the next call sees
# them as inputs and traces once more. Anything else is a compile-time constant: Python
# numbers and objects read by the step, Tensors it cannot reach, random draws made while
# tracing. Python side effects (print, appending to a list) happen only while tracing.
"""
import functools
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


def compile(step=None, *, static_argnums=(), donate=True, capture=None):  # noqa: A001
    """Compile a whole wgrad step (forward, backward, ``.grad`` accumulation, the update
    under ``no_grad``, hooks) into one XLA computation with ``jax.jit``.

    The Tensors the step reads are found as NOTE [What compile captures] says; their
    arrays are the computation's inputs and the updated arrays are written back into the
    same Tensor objects after each call. Returns the step's outputs (Tensors come back
    as detached Tensors). Retraces when shapes, dtypes, the set of captured tensors or a
    static argument change. With ``donate=True`` an input array that no one else
    references (checked per call) is donated, so parameters are updated in place.

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


class _Spec:
    """Everything about a call that is baked into its trace (hashable)."""

    __slots__ = ("tree", "pos", "static", "svals", "has_grad", "mask", "n", "_hash")

    def __init__(self, tree, pos, static, svals, has_grad, mask, n):
        self.tree, self.pos, self.static, self.svals = tree, pos, static, svals
        self.has_grad, self.mask, self.n = has_grad, mask, n
        self._hash = hash((tree, pos, static, svals, has_grad, mask, n))

    def _key(self):
        return (self.tree, self.pos, self.static, self.svals, self.has_grad, self.mask, self.n)

    def __eq__(self, other):
        return isinstance(other, _Spec) and self._key() == other._key()

    def __hash__(self):
        return self._hash


class CompiledStep:
    """The callable returned by :func:`wgrad.compile`."""

    def __init__(self, step, *, static_argnums=(), donate=True, capture=None):
        self.step = step
        self.static_argnums = _norm_argnums(static_argnums)
        self.donate = donate
        self.capture = capture
        self._cache = {}
        self._tensors = None
        self._new_state = None
        self._traced = False
        functools.update_wrapper(self, step)

    def _collect(self, args, kwargs):
        static, svals, dyn = _split_static(args, self.static_argnums)
        leaves, tree = jax.tree_util.tree_flatten((dyn, kwargs), is_leaf=_is_tensor)
        tensors, index = [], {}

        def add(t):
            i = index.get(id(t))
            if i is None:
                i = index[id(t)] = len(tensors)
                tensors.append(t)
            return i
        pos, dyn_leaves = [], []
        for x in leaves:
            if isinstance(x, Tensor):
                pos.append(add(x))
            else:
                pos.append(-1)
                dyn_leaves.append(x)
        _walk_roots(self._roots(), add)
        return static, svals, tree, tuple(pos), dyn_leaves, tensors, index

    def _roots(self):
        return (self.step, self.capture)

    def __call__(self, *args, **kwargs):
        static, svals, tree, pos, dyn_leaves, tensors, index = self._collect(args, kwargs)
        has_grad = tuple(t._grad is not None for t in tensors)
        arrays = [t._data for t in tensors]
        arrays += [t._grad._data for t in tensors if t._grad is not None]
        if self.donate:
            mask = tuple(sys.getrefcount(a) <= _SOLE_OWNER_REFS for a in arrays)
        else:
            mask = (False,) * len(arrays)
        spec = _Spec(tree, pos, static, svals, has_grad, mask, len(tensors))
        fn = self._cache.get(spec)
        first = fn is None
        if first:
            fn = self._cache[spec] = self._jit(spec)
        donated = [a for a, m in zip(arrays, mask) if m]
        kept = [a for a, m in zip(arrays, mask) if not m]
        del arrays
        self._tensors, self._index, self._traced = tensors, index, False
        try:
            if first:
                with warnings.catch_warnings():
                    # compiling: a donated buffer may have no output to alias (a .grad
                    # set to None, a parameter given a new shape); donation is a hint
                    warnings.filterwarnings("ignore", "Some donated buffers were not usable")
                    out, datas, grads, new = fn(donated, kept, dyn_leaves)
            else:
                out, datas, grads, new = fn(donated, kept, dyn_leaves)
        finally:
            self._tensors = self._index = None
        for t, d in zip(tensors, datas):
            t._data = d
        for t, g in zip(tensors, grads):
            if g is None:
                t._grad = None
            elif t._grad is not None:
                t._grad._data = g
            else:
                t._grad = _make(g)
        if self._traced and self._new_state:
            for t, d in zip(self._new_state, new):
                t._data = d
                t._grad_fn = None
            # the next call sees the new tensors as inputs: this trace is not reused
            self._cache.pop(spec, None)
        self._new_state = None
        return out

    def _jit(self, spec):
        def fn(donated, kept, dyn_leaves):
            dit, kit = iter(donated), iter(kept)
            arrays = [next(dit) if m else next(kit) for m in spec.mask]
            return self._run_traced(spec, arrays, dyn_leaves)
        return jax.jit(fn, donate_argnums=(0,) if any(spec.mask) else ())

    def _run_traced(self, spec, arrays, dyn_leaves):
        self._traced = True
        tensors, index = self._tensors, self._index
        saved = [(t._data, t._grad, None if t._grad is None else t._grad._data, t._grad_fn,
                  t._output_nr) for t in tensors]
        try:
            gi = iter(arrays[spec.n:])
            for t, a, hg in zip(tensors, arrays, spec.has_grad):
                t._data = a
                if hg:
                    t._grad._data = next(gi)
            dit = iter(dyn_leaves)
            leaves = [tensors[p] if p >= 0 else next(dit) for p in spec.pos]
            dyn, kwargs = jax.tree_util.tree_unflatten(spec.tree, leaves)
            try:
                out = self.step(*_merge_static(spec.static, spec.svals, dyn), **kwargs)
            except _TRACER_ERRORS as e:
                raise RuntimeError(_ERR_CONTROL_FLOW.format(what=type(e).__name__)) from e
            datas = [t._data for t in tensors]
            grads = [None if t._grad is None else t._grad._data for t in tensors]
            new = []
            _walk_roots(self._roots() + (out,), lambda t: new.append(t)
                        if id(t) not in index and isinstance(t._data, jax.core.Tracer)
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


# -- discovery -------------------------------------------------------------------------
def _walk_roots(roots, add):
    seen = set()
    for r in roots:
        _walk(r, add, seen, 0)


def _is_library(obj):
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".", 1)[0] in _LIBRARY_MODULES


def _walk(x, add, seen, depth):
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
        for v in x:
            _walk(v, add, seen, d)
    elif isinstance(x, dict):
        for k, v in x.items():
            _walk(k, add, seen, d)
            _walk(v, add, seen, d)
    elif isinstance(x, functools.partial):
        _walk(x.func, add, seen, d)
        _walk(x.args, add, seen, d)
        _walk(x.keywords, add, seen, d)
    elif isinstance(x, types.MethodType):
        _walk(x.__self__, add, seen, d)
        _walk(x.__func__, add, seen, d)
    elif isinstance(x, types.FunctionType):
        if depth > 0 and _is_library(x):  # the step itself is always searched
            return
        for c in x.__closure__ or ():
            try:
                _walk(c.cell_contents, add, seen, d)
            except ValueError:  # an empty cell
                pass
        _walk(x.__defaults__, add, seen, d)
        _walk(x.__kwdefaults__, add, seen, d)
        g = x.__globals__
        for name in _code_names(x.__code__):
            if name in g:
                _walk(g[name], add, seen, d)
    elif isinstance(x, (types.ModuleType, type, jax.Array, CompiledStep)) or callable(
            getattr(x, "__jax_array__", None)):
        return
    elif hasattr(x, "__dict__") and not (_is_library(type(x)) and
                                         not type(x).__module__.startswith("wgrad.optim")):
        for v in list(vars(x).values()):
            _walk(v, add, seen, d)


@functools.lru_cache(maxsize=1024)
def _code_names(code):
    names = set(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names |= _code_names(c)
    return tuple(sorted(names))
