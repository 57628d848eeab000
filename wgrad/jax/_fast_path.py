"""The fast path of a compiled step: generated straight-line guards (NOTE [Fast path]).

# NOTE [Fast path]
# The general call path computes, on every call, the same few facts: whether discovery
# would find the same tensors (NOTE [Cached discovery]), which argument is which captured
# or new tensor, which tensors have a ``.grad``, which arrays may be donated, and from
# these the spec that picks the jitted function. After a call in the common form
# (positional Tensors only, no static arguments), the step keeps a fast path for that
# call's spec: a function generated for it (straight-line code, its objects bound as
# constants) that checks each of those facts against the spec and, when all agree, calls
# the spec's jitted function directly. Any difference returns MISS, and the general path
# runs and installs the fast path of the spec it used, so a fast path never decides
# anything the general path would decide differently. Measured on the phase-retrieval
# step (bench/bench_compile.py), each step synced: the work before the XLA dispatch went
# from 12-15 us to 4-6 us (Python right after a synced step runs about twice as slowly as
# in a hot loop), most of wgrad.compile's gap to jax.jit(jax.grad) there.
#
# Each family of facts has its own guard generator below; a generator returns the lines
# of its guards (``if <fact differs>: return MISS``), or None when its facts cannot be
# checked by identity (the step then has no fast path for that spec).
"""
import sys
import types

from .._tensor import Tensor
from ._discovery import FunctionState, same

__all__ = ["MISS", "fast_path"]

MISS = object()
_getrefcount = sys.getrefcount


def _sole_owner_refs():
    """getrefcount of an array held only by its Tensor, as a fast path's local sees it."""
    env = {"_rc": _getrefcount}
    exec("def probe(t):\n    d0 = t._data\n    return _rc(d0)\n", env)  # noqa: S102
    holder = types.SimpleNamespace(_data=object())
    return env["probe"](holder)


_FAST_SOLE_OWNER_REFS = _sole_owner_refs()


class _Constants:
    """Objects a generated fast path refers to, bound as globals ``k0``, ``k1``, ..."""

    def __init__(self, env):
        self.env = env
        self.names = {}

    def __call__(self, v):
        name = self.names.get(id(v))
        if name is None:
            name = self.names[id(v)] = f"k{len(self.names)}"
            self.env[name] = v
        return name


def _argument_guards(spec, captured, const):
    """Each argument is the captured tensor, or the new tensor, of the spec's slot.
    Returns the guards and, per slot of a new tensor, the first argument in it."""
    nc = len(captured)
    guard = [f"if len(args) != {len(spec.pos)}: return MISS"]
    if spec.pos:
        guard.append("".join(f"a{j}, " for j in range(len(spec.pos))) + "= args")
    first = {}  # slot of a new (argument) tensor -> the first argument in it
    for j, p in enumerate(spec.pos):
        if p < nc:
            guard.append(f"if a{j} is not {const(captured[p])}: return MISS")
        elif p in first:
            guard.append(f"if a{j} is not a{first[p]}: return MISS")
        else:
            guard.append(f"if not isinstance(a{j}, Tensor) or id(a{j}) in index: return MISS")
            guard += [f"if a{j} is a{q}: return MISS" for q in first.values()]
            first[p] = j
    return guard, first


def _discovery_guards(checks, const):
    """Discovery would find the same tensors: every check's state is the same objects."""
    guard = []
    for state, obj, old in checks:
        if old is None:  # an empty closure cell: discovery walks again on every call
            return None
        if isinstance(state, FunctionState):
            f = const(obj)
            now = [f"{f}.__code__", f"{f}.__defaults__", f"{f}.__kwdefaults__",
                   *(f"{const(c)}.cell_contents" for c in state.cells),
                   *(f"{const(state.globals)}.get({n!r})" for n in state.names)]
            guard += [f"if {x} is not {const(o)}: return MISS" for x, o in zip(now, old)]
        else:
            guard.append(f"if not same({const(state)}({const(obj)}), {const(old)}): "
                         "return MISS")
    return guard


def _flag_guards(spec, names, arrays):
    """Each tensor's autograd flags are the spec's (no hooks); binds its data array."""
    guard = []
    for i, t in enumerate(names):
        if not isinstance(spec.flags[i], bool):  # hooks: compared on the general path
            return None
        guard.append(f"if {t}._requires_grad is not {spec.flags[i]} or {t}._hooks is not None "
                     f"or {t}._post_acc_hooks is not None or {t}._retains_grad: return MISS")
        guard.append(f"d{i} = {t}._data")
        arrays.append(f"d{i}")
    return guard


def _grad_guards(spec, names, arrays):
    """The tensors with a ``.grad`` are the spec's; binds their gradient arrays."""
    guard = []
    for i, t in enumerate(names):
        if spec.has_grad[i]:
            guard += [f"if {t}._grad is None: return MISS", f"e{i} = {t}._grad._data"]
            arrays.append(f"e{i}")
        else:
            guard.append(f"if {t}._grad is not None: return MISS")
    return guard


def _donation_guards(spec, arrays, n_captured):
    """The donation mask is the spec's, as CompiledStep._inputs computes it."""
    guard = []
    for j, (a, m) in enumerate(zip(arrays, spec.mask)):
        if n_captured <= j < spec.n and not spec.flags[j]:  # data: never donated
            continue
        guard.append(f"if _rc({a}) {'>' if m else '<='} {_FAST_SOLE_OWNER_REFS}: "
                     "return MISS")
    return guard


def fast_path(step, key, spec, found, fn):
    """Generate the fast path of ``step`` for ``spec`` (its ``_Spec``; ``key`` is the
    cache key it was made from): a function ``fast(step, args)`` that returns the call's
    outputs, or MISS. None where discovery must walk again on every call."""
    captured, index, checks = found
    env = {"Tensor": Tensor, "isinstance": isinstance, "id": id, "len": len,
           "_rc": _getrefcount, "MISS": MISS, "same": same, "fn": fn, "spec": key,
           "index": index}
    const = _Constants(env)
    guard, first = _argument_guards(spec, captured, const)
    found_guard = _discovery_guards(checks, const)
    if found_guard is None:
        return None
    guard += found_guard
    names = [const(t) for t in captured] + [f"a{j}" for j in first.values()]
    arrays = []
    flag_guard = _flag_guards(spec, names, arrays)
    if flag_guard is None:
        return None
    guard += flag_guard
    guard += _grad_guards(spec, names, arrays)
    if step.donate:
        guard += _donation_guards(spec, arrays, len(captured))
    src = ("def fast(self, args):\n    try:\n" + "".join(f"        {g}\n" for g in guard) +
           "    except ValueError:  # an empty closure cell\n        return MISS\n"
           f"    return self._run(fn, spec, [{', '.join(names)}], [{', '.join(arrays)}], ())\n")
    exec(src, env)  # noqa: S102
    return env["fast"]
