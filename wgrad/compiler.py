"""``wgrad.compiler``: torch.compiler's functions for the code that calls them.

wgrad's compiler is ``wgrad.compile`` (a step traced by JAX into one XLA program), which
``compile`` here calls. There is no Dynamo: ``is_compiling()``, ``is_dynamo_compiling()``
and ``is_exporting()`` are False, the decorators that steer Dynamo (``disable``,
``allow_in_graph``, ``assume_constant_result``, ``substitute_in_graph``,
``nested_compile_region``, ``wrap_numpy``) leave functions computing what they compute
eagerly, ``set_stance`` is kept as a setting (a context manager and decorator, as
torch's) that ``wgrad.compile`` does not read, and ``reset`` has nothing to clear.
Choosing Dynamo backends (``list_backends``, ``get_default_backend``,
``set_default_backend``) and loading Dynamo's compiled artifacts
(``load_compiled_function``) raise NotImplementedError: wgrad has one backend, XLA.

Example
-------
>>> wgrad.compiler.is_compiling()
False
>>> @wgrad.compiler.disable
... def f(x):
...     return x + 1
>>> f(1)
2
"""
import functools
import inspect
import types

import numpy as np

from ._control_flow import map_instances
from ._creation import as_tensor
from ._tensor import Tensor
from .jax import compile as _wgrad_compile
from .nn import Parameter as _Parameter

__all__ = ["compile", "assume_constant_result", "reset", "allow_in_graph",
           "substitute_in_graph", "list_backends", "disable", "set_default_backend",
           "get_default_backend", "set_stance", "set_enable_guard_collectives",
           "cudagraph_mark_step_begin", "load_compiled_function", "wrap_numpy",
           "is_compiling", "is_dynamo_compiling", "is_exporting", "save_cache_artifacts",
           "load_cache_artifacts", "keep_portable_guards_unsafe",
           "skip_guard_on_inbuilt_nn_modules_unsafe", "skip_guard_on_all_nn_modules_unsafe",
           "keep_tensor_guards_unsafe", "skip_guard_on_globals_unsafe",
           "skip_all_guards_unsafe", "nested_compile_region"]


def _no_dynamo(what):
    return NotImplementedError(
        f"wgrad.compiler.{what}: wgrad has no Dynamo and one compiler backend, XLA through "
        f"jax.jit (wgrad.compile); torch.compile's backends and artifacts do not exist here")


def compile(*args, **kwargs):  # noqa: A001  (torch.compiler.compile)
    """``wgrad.compile(*args, **kwargs)`` (torch.compiler.compile calls torch.compile)."""
    return _wgrad_compile(*args, **kwargs)


def is_compiling():
    """False: no Dynamo trace is ever running.

    Example
    -------
    >>> wgrad.compiler.is_compiling()
    False
    """
    return False


def is_dynamo_compiling():
    """False: wgrad has no Dynamo."""
    return False


def is_exporting():
    """False: wgrad has no torch.export."""
    return False


def reset():
    """Nothing to clear: ``wgrad.compile`` keeps its programs per compiled function."""


def allow_in_graph(fn):
    """``fn`` (a list or tuple: a list of them), unchanged; a non-callable is torch's
    AssertionError."""
    if isinstance(fn, (list, tuple)):
        return [allow_in_graph(x) for x in fn]
    if not callable(fn):
        raise AssertionError("allow_in_graph expects a callable")
    return fn


def assume_constant_result(fn):
    """``fn``, marked as torch's is; it still runs on every call."""
    fn._dynamo_marked_constant = True
    return fn


class _Disabled:
    """What ``disable()`` without a function returns: a decorator (returning the function
    unchanged) that is also a do-nothing context manager."""

    def __call__(self, fn):
        return fn

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


def disable(fn=None, recursive=True, *, reason=None):
    """``fn`` unchanged (there is no Dynamo to keep out); without ``fn``, a decorator that
    returns its function.

    Example
    -------
    >>> g = wgrad.compiler.disable(recursive=False)(abs)
    >>> g(-2)
    2
    """
    return _Disabled() if fn is None else fn


def _is_function(value):
    return isinstance(value, (types.FunctionType, types.BuiltinFunctionType,
                              types.MethodDescriptorType, types.WrapperDescriptorType))


def _sig_ident(sig):
    skip = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_POSITIONAL,
            inspect.Parameter.VAR_KEYWORD)
    params = sig.parameters.values()
    return (tuple(p.name for p in params if p.kind not in skip),
            {p.name for p in params if p.kind == inspect.Parameter.KEYWORD_ONLY},
            {p.name: p.default for p in params if p.kind not in skip[1:]})


_WILDCARD = _sig_ident(inspect.signature(lambda *args, **kwargs: None))
_substituted = set()


def substitute_in_graph(original_fn, *, can_constant_fold_through=False,
                        skip_signature_check=False):
    """A decorator registering a traceable stand-in for ``original_fn``, with torch's
    checks (functions only, matching signatures, once per function); the decorated name
    calls ``original_fn``, as torch's does outside a compiled region."""
    if not _is_function(original_fn):
        raise TypeError(f"substitute_in_graph expects a function but got {type(original_fn)!r}")

    def wrapper(traceable_fn):
        if not _is_function(traceable_fn):
            raise TypeError(f"@substitute_in_graph(...) expects a function but got "
                            f"{type(traceable_fn)!r}")
        if not skip_signature_check:
            try:
                original_sig = inspect.signature(original_fn)
            except ValueError:
                pass
            else:
                traceable_sig = inspect.signature(traceable_fn)
                a, b = _sig_ident(original_sig), _sig_ident(traceable_sig)
                if a != b and _WILDCARD not in (a, b):
                    raise TypeError(f"Signature mismatch between {original_fn} and "
                                    f"{traceable_fn}: {original_sig} != {traceable_sig}")
        if id(original_fn) in _substituted:
            raise ValueError(f"Duplicate polyfilled object {original_fn}")
        _substituted.add(id(original_fn))

        @functools.wraps(traceable_fn)
        def wrapped(*args, **kwargs):
            return original_fn(*args, **kwargs)
        wrapped.__torch_dynamo_original__ = original_fn
        wrapped.__torch_dynamo_polyfill__ = traceable_fn
        return wrapped
    return wrapper


def list_backends(exclude_tags=("debug", "experimental")):
    """Raises NotImplementedError: wgrad's one backend is XLA."""
    raise _no_dynamo("list_backends")


def get_default_backend():
    """Raises NotImplementedError: wgrad's one backend is XLA."""
    raise _no_dynamo("get_default_backend")


def set_default_backend(backend):
    """Raises NotImplementedError: wgrad's one backend is XLA."""
    raise _no_dynamo("set_default_backend")


def load_compiled_function(file, *, f_globals=None, external_data=None):
    """Raises NotImplementedError: there are no Dynamo-compiled functions to load."""
    raise _no_dynamo("load_compiled_function")


_stance = ["default"]


class set_stance:
    """torch's compiler stance (``"default"``, ``"force_eager"``,
    ``"eager_on_recompile"``...), set when called, for a ``with`` block, or around a
    decorated function. It is only kept (``wgrad.compile`` does not read it).

    Example
    -------
    >>> with wgrad.compiler.set_stance("force_eager"):
    ...     pass
    """

    def __init__(self, stance="default", *, skip_guard_eval_unsafe=False, force_backend=None):
        if force_backend is not None and stance != "default":
            raise RuntimeError("non-default stance cannot have force_backend set")
        self.stance = stance
        self.prev = _stance[0]
        _stance[0] = stance

    def __enter__(self):
        _stance[0] = self.stance

    def __exit__(self, exc_type, exc_value, traceback):
        _stance[0] = self.prev

    def __call__(self, fn):
        _stance[0] = self.prev

        @functools.wraps(fn)
        def run(*args, **kwargs):
            with self:
                return fn(*args, **kwargs)
        return run


_guard_collectives = [False]


def set_enable_guard_collectives(enabled):
    """Keep the flag; returns whether it was set before (nothing reads it)."""
    prev, _guard_collectives[0] = _guard_collectives[0], bool(enabled)
    return prev


def cudagraph_mark_step_begin():
    """Nothing to mark: wgrad records no CUDA graphs."""


def wrap_numpy(fn):
    """``fn`` made to take and give tensors: tensor arguments reach it as NumPy arrays and
    the arrays it returns come back as tensors, as torch's in eager mode.

    Example
    -------
    >>> g = wgrad.compiler.wrap_numpy(lambda a: a * 2)
    >>> g(wgrad.tensor([1., 2.]))
    tensor([2., 4.])
    """
    @functools.wraps(fn)
    def wrap(*args, **kwargs):
        args, kwargs = map_instances(Tensor, lambda x: x.numpy(), (args, kwargs))
        return map_instances(np.ndarray, as_tensor, fn(*args, **kwargs))
    return wrap


def save_cache_artifacts():
    """None: Dynamo made no artifacts (wgrad's XLA programs go to its persistent
    compilation cache on their own, NOTE [Persistent compilation cache])."""
    return None


def load_cache_artifacts(serialized_artifacts):
    """None: there are no Dynamo artifacts to load (see :func:`save_cache_artifacts`)."""
    return None


# guard filters for torch.compile's ``guard_filter_fn`` (wgrad.compile has no guards to
# filter; these compute what torch's compute on guard entries)

def keep_portable_guards_unsafe(guard_entries):
    return [g.guard_type in ("GLOBAL_STATE", "SHAPE_ENV")
            or (g.guard_type == "TENSOR_MATCH" and not g.is_global) for g in guard_entries]


def skip_guard_on_inbuilt_nn_modules_unsafe(guard_entries):
    return [not e.orig_guard.source.is_unspecialized_builtin_nn_module() for e in guard_entries]


def skip_guard_on_all_nn_modules_unsafe(guard_entries):
    return [not e.orig_guard.source.is_unspecialized_nn_module() for e in guard_entries]


def keep_tensor_guards_unsafe(guard_entries, keep_parameters=False):
    return [e.guard_type == "TENSOR_MATCH" and (keep_parameters or
                                                not isinstance(e.value, _Parameter))
            for e in guard_entries]


def skip_guard_on_globals_unsafe(guard_entries):
    return [not e.is_global for e in guard_entries]


def skip_all_guards_unsafe(guard_entries):
    return [False for _ in guard_entries]


def nested_compile_region(fn=None, *, options=None, max_reuse_entries=8, reuse_hash_fn=None):
    """Marks a region torch.compile may compile once and reuse; outside a compiled region
    (always, in wgrad) calling it runs ``fn``. Without ``fn``, a decorator."""
    def wrap(f):
        @functools.wraps(f)
        def inner(*args, **kwargs):
            return f(*args, **kwargs)
        return inner
    return wrap if fn is None else wrap(fn)
