"""Lowering for wgrad.func: a wgrad function run on Tensors that wrap JAX tracers, as one
differentiable wgrad op.

# NOTE [Lowered calls]
# ``vmap`` (and a ``jvp`` nested inside another one) run the user's function inside a
# JAX transformation: its wgrad ops act on Tensors whose arrays are JAX tracers. The
# whole call becomes one ``jax_function`` op (wgrad/jax/interop.py) whose inputs are
#   1. the Tensors at the leaves of the call's arguments, and
#   2. the Tensors the function reads without taking them as arguments (closure cells,
#      globals, a module's parameters and buffers), found by wgrad.compile's discovery
#      walk (NOTE [What compile captures]) and swapped for tracers while the function is
#      traced, so that they are inputs, never constants baked into a cached computation.
# The op's forward is one jitted XLA computation, cached per (transform, function,
# argument structure, captured tensors, the state the discovery walk checked: a new Python
# value in a closure cell or a global the function reads traces again) and then per
# shapes and dtypes; its backward and
# its tangents are JAX's vjp/jvp of that computation (NOTE [Crossing the convention
# boundary]), so outputs are differentiable by wgrad's tape and forward AD, to any order.
# The function runs in a clean room (``clean_room``): grad mode off, no dual level, no
# tangents; transforms nested inside (grad, jvp, vmap) start afresh there, with wgrad's
# own engine and forward AD on the tracers. Consequences: a derivative taken *through* a
# vmap boundary is JAX's derivative of the forward computation (equal to torch's except
# at torch's special points, e.g. abs at 0, and custom autograd.Function backwards);
# transforms inside the boundary are wgrad's (torch's rules exactly). A captured tensor
# mutated inside the function is an error (the mutation would be lost).
"""
import collections
import contextlib
import threading
import weakref

import jax

from .. import _creation
from .._autograd import forward_ad as _fw_core
from .._autograd.grad_mode import _state as _grad_state
from .._tensor import Tensor
from ..jax._discovery import unchanged, walk_roots
from ..jax._pytree import _is_tensor
from ..jax.interop import jax_function

__all__ = ["set_key", "key_of", "clean_room", "in_clean_room", "torch_spec", "captured",
           "call_lowered", "random_mode", "flatten", "unflatten", "func_name", "RANDOM_ERROR"]

RANDOM_ERROR = ("vmap: called random operation while in randomness error mode. Please either "
                "use the 'same' or 'different' randomness flags on vmap or perform the "
                "randomness operation out of vmap")
_ERR_MUTATED = ("wgrad.func: the function mutated a tensor it captures (through a closure, a "
                "global or a module) inside a transform that traces it (vmap); the mutation "
                "cannot be kept. Pass the tensor as an argument, or mutate it outside.")
_local = threading.local()


# NOTE [Transform keys]
# Each wrapper a wgrad.func transform returns is registered with a key (the transform, the
# key of the function it wraps, its options), so that wrappers made anew for every call,
# ``vmap(grad(f))(x)`` in a loop, find the same cached computation. The table is weak and
# private: functools.wraps copies no key to a user's function that wraps one of ours.
_keys = weakref.WeakKeyDictionary()


def set_key(wrapper, key):
    _keys[wrapper] = key
    return wrapper


def key_of(f):
    """The cache key of ``f``: its transform key, or ``f`` itself."""
    try:
        return _keys.get(f, f)
    except TypeError:  # not weakly referable or not hashable: the object itself
        return f


def flatten(tree):
    return jax.tree_util.tree_flatten(tree, is_leaf=_is_tensor)


def unflatten(treedef, leaves):
    return jax.tree_util.tree_unflatten(treedef, leaves)


def torch_spec(obj, indent=0):
    """The structure of a pytree written as torch's TreeSpec prints it (for messages)."""
    if isinstance(obj, (tuple, list, dict)) and not isinstance(obj, Tensor):
        if isinstance(obj, dict):
            context, children = repr(list(obj.keys())), list(obj.values())
        else:
            context, children = "None", list(obj)
        inner = ""
        if children:
            indent += 2
            parts = [torch_spec(c, indent) for c in children]
            inner = parts[0] + ("," if len(parts) > 1 else "") + ",".join(
                "\n" + " " * indent + p for p in parts[1:])
        return f"TreeSpec({type(obj).__name__}, {context}, [{inner}])"
    return "*"


def func_name(f):
    return getattr(f, "__name__", None) or repr(f)


_room_gen = [0]  # generations below 0 belong to the levels entered in clean rooms
_room_lock = threading.Lock()


def in_clean_room():
    return getattr(_local, "depth", 0) > 0


@contextlib.contextmanager
def clean_room(vmap=False):
    """Grad mode off, forward AD suspended (no level, no tangents), for code traced by a
    lowered call (NOTE [Lowered calls]); everything is restored afterwards."""
    st = _fw_core.state
    saved_fw = (st.active, st.level, st.generation, dict(_fw_core._tangents))
    saved_grad = _grad_state.grad
    _local.depth = getattr(_local, "depth", 0) + 1
    st.active, st.level = False, -1
    # levels entered inside count from a range of their own, so that no later level of
    # the outer code ever has a generation that one inside had (NOTE [Forward AD state])
    with _room_lock:
        _room_gen[0] -= 1 << 20
        st.generation = _room_gen[0]
    _fw_core._tangents.clear()
    _grad_state.grad = False
    _grad_state.vmap_depth += bool(vmap)
    try:
        yield
    finally:
        _grad_state.vmap_depth -= bool(vmap)
        _local.depth -= 1
        _grad_state.grad = saved_grad
        _fw_core._tangents.clear()
        _fw_core._tangents.update(saved_fw[3])
        st.active, st.level, st.generation = saved_fw[:3]


# -- random ops inside vmap ---------------------------------------------------------------
_rng_lock = threading.Lock()
_rng_stack = []  # (mode, thread) of the lowered calls being traced, innermost last
_real_rng = _creation._rng


def _guarded_rng(generator):
    me = threading.get_ident()
    mode = next((m for m, t in reversed(_rng_stack) if t == me), "same")  # other threads draw
    if mode == "error":
        raise RuntimeError(RANDOM_ERROR)
    return _real_rng(generator)  # 'different' runs one example per trace (wgrad/func/_vmap.py)


@contextlib.contextmanager
def random_mode(mode):
    """Random draws (all of them go through ``_creation._rng``) follow vmap's
    ``randomness``: 'error' raises torch's error, 'same' draws once for the whole batch
    (a host draw of the per-example shape); 'different' reaches here one example at a time."""
    with _rng_lock:
        entry = (mode, threading.get_ident())
        _rng_stack.append(entry)
        _creation._rng = _guarded_rng
    try:
        yield
    finally:
        with _rng_lock:
            _rng_stack.remove(entry)
            if not _rng_stack:
                _creation._rng = _real_rng


# -- captured tensors ---------------------------------------------------------------------
_walks = collections.OrderedDict()  # roots' ids -> (roots, tensors, checks)
_MAX_CACHE = 64


def captured(roots):
    """The Tensors reachable from ``roots`` (functions, modules) as wgrad.compile finds
    them, cached with compile's identity checks (NOTE [Cached discovery])."""
    return _walk(roots)[0]


def _walk(roots):
    """``(tensors, token)``: the token is a new object whenever the walk had to run again
    because something it depends on changed (a closure cell, a global the code reads, an
    attribute), so that a computation traced under the old state is not reused."""
    # a wrapper is named by its key (NOTE [Transform keys]): wrappers with equal keys close
    # over the same function and options
    key = tuple(_keys.get(r) or id(r) for r in roots)
    hit = _walks.get(key)
    if hit is not None and all(a is b or _keys.get(a) is not None
                               for a, b in zip(hit[0], roots)) and unchanged(hit[2]):
        _walks.move_to_end(key)
        return hit[1], hit[3]
    tensors, seen, checks = [], set(), []

    def add(t):
        if id(t) not in seen:
            seen.add(id(t))
            tensors.append(t)
    walk_roots(roots, add, checks)
    tensors, token = tuple(tensors), object()
    _walks[key] = (tuple(roots), tensors, checks, token)
    if len(_walks) > _MAX_CACHE:
        _walks.popitem(last=False)
    return tensors, token


@contextlib.contextmanager
def _swapped(tensors, arrays):
    saved = [(t._data, t._grad_fn, t._output_nr) for t in tensors]
    for t, a in zip(tensors, arrays):
        t._data = a
    try:
        yield
        for t, a in zip(tensors, arrays):
            if t._data is not a:
                raise RuntimeError(_ERR_MUTATED)
    finally:
        for t, (d, fn, nr) in zip(tensors, saved):
            t._data, t._grad_fn, t._output_nr = d, fn, nr


# -- the lowered call ---------------------------------------------------------------------
_ops = collections.OrderedDict()  # cache key -> jax_function


def call_lowered(key, roots, build, tensors, name, randomness="error", vmap=False):
    """Run ``build`` as one differentiable wgrad op (NOTE [Lowered calls]).

    ``build(arrays)`` is a JAX function of the arrays of ``tensors`` returning a flat
    tuple of arrays; it is traced with the captured tensors of ``roots`` swapped for
    tracers, in a clean room, with random draws following ``randomness``. ``key`` (None:
    no reuse) names everything else ``build`` depends on. Returns a tuple of Tensors.
    """
    cap, token = _walk(roots)
    op = None
    if key is not None and randomness != "same":
        # the token: Python values the function reads (closure cells, globals) are baked
        # into the trace, so a change there traces again, as wgrad.compile does
        full = (key, token, tuple(map(id, cap)))
        op = _ops.get(full)
        if op is not None:
            _ops.move_to_end(full)
    if op is None:
        cell = []

        def fn(arrays, cap_arrays):
            with clean_room(vmap), random_mode(randomness), _swapped(cell[0], cap_arrays):
                return tuple(build(arrays))
        op = jax_function(fn, name=name)
        op._wgrad_func_cap = cell
        if key is not None and randomness != "same":
            _ops[full] = op
            if len(_ops) > _MAX_CACHE:
                _ops.popitem(last=False)
    cell = op._wgrad_func_cap
    cell[:] = [cap]
    cap_in = list(cap)
    if any(t.requires_grad or _fw_core.get_tangent(t) is not None for t in cap):
        used = getattr(op, "_wgrad_func_used", None)
        if used is None:
            used = op._wgrad_func_used = _used_captured(op, tensors, cap)
        cap_in = [t if u else t.detach() for t, u in zip(cap, used)]
    return op(list(tensors), cap_in)


def _used_captured(op, tensors, cap):
    """Which captured tensors the traced computation reads: the others get no edge on the
    tape (a module's own parameters under functional_call, say)."""
    fn = op.__wrapped__
    closed = jax.make_jaxpr(fn)([t._data for t in tensors], [t._data for t in cap])
    jaxpr = closed.jaxpr
    cap_vars = jaxpr.invars[len(tensors):]
    read = {id(v) for e in jaxpr.eqns for v in e.invars}
    read.update(id(v) for v in jaxpr.outvars)
    return [id(v) in read for v in cap_vars]
