"""Discovery for wgrad.compile: the walk that finds the Tensors a step reads (NOTE [What
compile captures] in _compiled_step.py), and the checks that tell when a cached walk is
still valid.
"""
import dis
import functools
import operator
import types

import jax

from .._tensor import Tensor

__all__ = ["walk_roots", "unchanged", "same", "FunctionState"]

_LIBRARY_MODULES = ("jax", "jaxlib", "numpy", "wgrad", "builtins", "functools", "hypothesis",
                    "_pytest", "pytest", "typing", "collections", "threading")
_MAX_DEPTH = 8
_is = operator.is_
_cell_contents = operator.attrgetter("cell_contents")


# NOTE [Cached discovery]
# Walking the step's closures, globals and objects costs microseconds per call, so the
# walk is cached. While walking, every mutable thing it enters records a check: a state
# function and the state it returned (the items of a list, the keys and values of a
# dict or of an object's ``__dict__``, a function's code, defaults, closure cell contents
# and the globals its code names). The walk is a function of those identities alone, so
# when every state is the same objects again (compared with ``is``, no recursion), the
# walk would find the same tensors in the same order; otherwise it runs again. The
# recorded states hold their objects, so no id is reused while a check refers to it.
def unchanged(checks):
    try:
        for state, obj, old in checks:
            if not same(state(obj), old):
                return False
    except ValueError:  # an empty closure cell: walk again
        return False
    return True


def same(new, old):
    return len(new) == len(old) and all(map(_is, new, old))


def walk_roots(roots, add, checks=None, optimizers=None):
    """Call ``add`` on every Tensor reachable from ``roots``; append to ``optimizers``
    (when given) every wgrad optimizer found on the way."""
    seen = set()
    for r in roots:
        _walk(r, add, seen, 0, checks, optimizers)


# library objects that hold a step's state (a module's parameters and buffers, an
# optimizer's state): searched like user objects, unlike the rest of wgrad
_STATEFUL = ("wgrad.nn.", "wgrad.optim.")


def _is_library(obj):
    mod = getattr(obj, "__module__", None) or ""
    return mod.split(".", 1)[0] in _LIBRARY_MODULES


def _dict_state(d):
    return (*d, *d.values())


def _object_state(x):
    d = vars(x)
    return (type(x), *d, *d.values())


class FunctionState:
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


def _walk(x, add, seen, depth, checks, optimizers=None):
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
            _walk(v, add, seen, d, checks, optimizers)
    elif isinstance(x, dict):
        _check(checks, _dict_state, x)
        for k, v in x.items():
            _walk(k, add, seen, d, checks, optimizers)
            _walk(v, add, seen, d, checks, optimizers)
    elif isinstance(x, functools.partial):
        _walk(x.func, add, seen, d, checks, optimizers)
        _walk(x.args, add, seen, d, checks, optimizers)
        _walk(x.keywords, add, seen, d, checks, optimizers)
    elif isinstance(x, types.MethodType):
        _walk(x.__self__, add, seen, d, checks, optimizers)
        _walk(x.__func__, add, seen, d, checks, optimizers)
    elif isinstance(x, types.FunctionType):
        if depth > 0 and _is_library(x):  # the step itself is always searched
            return
        names = _global_names(x.__code__)
        _check(checks, FunctionState(x, names), x)
        for c in x.__closure__ or ():
            try:
                _walk(c.cell_contents, add, seen, d, checks, optimizers)
            except ValueError:  # an empty cell
                pass
        _walk(x.__defaults__, add, seen, d, checks, optimizers)
        _walk(x.__kwdefaults__, add, seen, d, checks, optimizers)
        g = x.__globals__
        for name in names:
            if name in g:
                _walk(g[name], add, seen, d, checks, optimizers)
    elif isinstance(x, (types.ModuleType, type, jax.Array)) or callable(
            getattr(x, "__jax_array__", None)):
        return  # (a CompiledStep is library code: the branch below skips it)
    elif hasattr(x, "__dict__") and not (_is_library(type(x)) and
                                         not type(x).__module__.startswith(_STATEFUL)):
        _check(checks, _object_state, x)
        if optimizers is not None and type(x).__module__.startswith("wgrad.optim.") and \
                hasattr(x, "param_groups"):
            optimizers.append(x)
        for v in list(vars(x).values()):
            _walk(v, add, seen, d, checks, optimizers)


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
