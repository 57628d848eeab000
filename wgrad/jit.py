"""``wgrad.jit``: torch.jit's helpers as model code meets them in eager mode.

wgrad has no TorchScript: it runs Python eagerly and compiles with XLA (``wgrad.compile``,
``wgrad.lazy``). So ``script`` returns its argument unchanged and ``trace`` returns the
function or module it was given, both computing exactly what the eager object computes
(torch's ``trace`` bakes the path the example inputs took: code whose control flow
depends on the data is where the two differ, docs/differences.md). The decorators
(``ignore``, ``unused``, ``export``, ``interface``, ``_overload_method``...) leave the
function usable as torch's do, ``is_scripting()``/``is_tracing()`` are False, and
``fork`` runs the function at once, returning a completed ``Future``. What needs a
TorchScript program (``save``, ``load``, ``freeze``, ``CompilationUnit``...) raises
NotImplementedError. The deprecation warnings torch gives are given here too.

Example
-------
>>> import warnings
>>> m = wgrad.nn.Linear(2, 1)
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore", DeprecationWarning)
...     wgrad.jit.script(m) is m
True
>>> wgrad.jit.is_scripting()
False
"""
import ast
import collections
import collections.abc
import contextlib
import inspect
import textwrap
import threading
import types
import typing
import warnings
from typing import Final  # noqa: F401  (torch.jit.Final is typing.Final)

from .nn import Module as _Module

__all__ = ["Attribute", "CompilationUnit", "Error", "Future", "ScriptFunction", "ScriptModule",
           "annotate", "enable_onednn_fusion", "export", "export_opnames", "fork", "freeze",
           "interface", "ignore", "isinstance", "load", "onednn_fusion_enabled",
           "optimize_for_inference", "save", "script", "script_if_tracing",
           "set_fusion_strategy", "strict_fusion", "trace", "trace_module", "unused", "wait",
           "is_scripting", "is_tracing", "Final", "script_method", "fuser",
           "optimized_execution", "TracerWarning", "ScriptWarning", "TracingCheckError"]

_builtin_isinstance = isinstance


def _deprecated(what, instead="`torch.compile` or `torch.export`"):
    warnings.warn(f"`torch.jit.{what}` is deprecated. Please switch to {instead}.",
                  DeprecationWarning, stacklevel=3)


def _no_torchscript(what, instead):
    return NotImplementedError(
        f"wgrad.jit.{what}: wgrad has no TorchScript (script and trace return the eager "
        f"object, so there is no compiled program); {instead}")


# -- what model code asks ---------------------------------------------------------------

def is_scripting():
    """False: code never runs under TorchScript's compiler in wgrad.

    Example
    -------
    >>> wgrad.jit.is_scripting()
    False
    """
    return False


def is_tracing():
    """False: ``trace`` runs nothing, so code never runs under a tracer.

    Example
    -------
    >>> wgrad.jit.is_tracing()
    False
    """
    return False


def annotate(the_type, the_value):
    """``the_value``: the type is a hint for TorchScript's compiler.

    Example
    -------
    >>> wgrad.jit.annotate(list, [])
    []
    """
    return the_value


Attribute = collections.namedtuple("Attribute", ["value", "type"])
Attribute.__doc__ = """``Attribute(value, type)``, as torch's eager one (a named tuple); a
``ScriptModule`` stores its ``value``."""


def _unwrap_optional(x):
    if x is None:
        raise AssertionError("Unwrapping null optional")
    return x


class Error(Exception):
    """torch.jit.Error: an error raised inside a TorchScript program (never raised by
    wgrad, which runs none)."""


class TracerWarning(Warning):
    """torch.jit.TracerWarning (for ``warnings.filterwarnings``; wgrad's ``trace`` gives
    none)."""


class ScriptWarning(Warning):
    """torch.jit.ScriptWarning (for ``warnings.filterwarnings``)."""


class TracingCheckError(Exception):
    """torch.jit.TracingCheckError (never raised: ``trace`` checks nothing)."""


# -- decorators -----------------------------------------------------------------------

_IGNORE = "ignore (leave as a call to Python, cannot be torch.jit.save'd)"
_UNUSED = "unused (ignored and replaced with raising of an exception)"
_EXPORT = "export (compile this function even if nothing calls it)"


def export(fn):
    """Mark a module's method as a TorchScript entry point; the method is unchanged.

    Example
    -------
    >>> def f(x):
    ...     return x
    >>> wgrad.jit.export(f) is f
    True
    """
    fn._torchscript_modifier = _EXPORT
    return fn


def unused(fn):
    """Mark a function (or property) TorchScript should not compile; it is unchanged and
    runs as before in eager mode.

    Example
    -------
    >>> def f(x):
    ...     return x + 1
    >>> wgrad.jit.unused(f)(1)
    2
    """
    if _builtin_isinstance(fn, property):
        fn.fget._torchscript_modifier = _UNUSED
        if fn.fset:
            fn.fset._torchscript_modifier = _UNUSED
        return fn
    fn._torchscript_modifier = _UNUSED
    return fn


def ignore(drop=False, **kwargs):
    """Mark a function TorchScript leaves to Python: ``@ignore`` or ``@ignore(drop)``; the
    function is unchanged. ``drop=True`` (deprecated) warns as torch's.

    Example
    -------
    >>> @wgrad.jit.ignore
    ... def f(x):
    ...     return x * 2
    >>> f(3)
    6
    """
    if callable(drop):
        drop._torchscript_modifier = _IGNORE
        return drop
    if not _builtin_isinstance(drop, bool):
        raise RuntimeError(f"Argument to @torch.jit.ignore must be a bool or a function but "
                           f"got {drop}")
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn("ignore(drop_on_export=True) has been deprecated. TorchScript will now "
                      "drop the function call on compilation. Use torch.jit.unused now. {}",
                      FutureWarning, stacklevel=2)
        drop = drop_on_export
    elif drop:
        warnings.warn("ignore(True) has been deprecated. TorchScript will now drop the "
                      "function call on compilation. Use torch.jit.unused now. {}",
                      FutureWarning, stacklevel=2)

    def decorator(fn):
        fn._torchscript_modifier = _UNUSED if drop else _IGNORE
        return fn
    return decorator


def _drop(fn):
    fn._torchscript_modifier = "_drop (function is fully ignored, declaration can be " \
        "unscriptable)"
    return fn


def interface(obj):
    """Mark a class as a TorchScript interface (torch's DeprecationWarning); the class is
    unchanged.

    Example
    -------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     @wgrad.jit.interface
    ...     class Runs:
    ...         def run(self, x):
    ...             pass
    >>> Runs.__name__
    'Runs'
    """
    warnings.warn("`torch.jit.interface` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    return obj


_OVERLOAD_EXAMPLE = """
Example usage of overload function:
@torch.jit._overload
def my_function(x: type0) -> type0: # decl 1
    pass

@torch.jit._overload
def my_function(x: type1) -> type1: # decl 2
    pass

def my_function(x):                 # implementation
    if isinstance(x, type0):
        return x
    elif isinstance(x, type1):
        return x
"""


def _check_overload_body(func):
    """torch's check that an overload declaration's body is ``pass`` or ``...``."""
    try:
        source = textwrap.dedent(inspect.getsource(func))
    except (OSError, TypeError):
        warnings.warn(f"Unable to retrieve source for @torch.jit._overload function: {func}.",
                      stacklevel=3)
        return
    body = ast.parse(source).body[0].body
    one = body[0] if len(body) == 1 else None
    if not (_builtin_isinstance(one, ast.Pass) or (
            _builtin_isinstance(one, ast.Expr) and _builtin_isinstance(one.value, ast.Constant)
            and one.value.value is Ellipsis)):
        raise RuntimeError(
            "Only `pass` statement or `...` can be the body of overload declaration:\n"
            + "\n".join(source.split("\n")[:3]) + " <- Expecting `pass` or `...` here!\n"
            + _OVERLOAD_EXAMPLE)


def _overload(func):
    """An overload declaration for TorchScript (the body must be ``pass`` or ``...``); the
    implementation defined after it is what runs."""
    _check_overload_body(func)
    return func


def _overload_method(func):
    """An overload declaration of a method, as :func:`_overload`."""
    _check_overload_body(func)
    return func


def script_method(fn):
    """A ``ScriptModule`` method to compile (torch's DeprecationWarning); unchanged."""
    _deprecated("script_method")
    return fn


# -- script and trace ---------------------------------------------------------------------

def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """``obj`` itself (a function, module or class), with torch's DeprecationWarning:
    calling it computes what TorchScript's compiled version would, eagerly.

    Example
    -------
    >>> import warnings
    >>> def f(x):
    ...     return x * 2
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     wgrad.jit.script(f) is f
    True
    """
    _deprecated("script")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    return obj


def _check_forward_inputs(example_inputs, example_kwarg_inputs):
    if example_inputs is None and not _builtin_isinstance(example_kwarg_inputs, dict):
        raise RuntimeError("example_kwarg_inputs should be a dict")


def trace(func, example_inputs=None, optimize=None, check_trace=True, check_inputs=None,
          check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
          _compilation_unit=None, example_kwarg_inputs=None, _store_inputs=True):
    """``func`` itself (a function or a module), with torch's DeprecationWarning. Nothing
    runs now; each call runs ``func`` eagerly, so data-dependent control flow follows the
    data (torch's trace replays the path the example inputs took).

    Example
    -------
    >>> import warnings
    >>> m = wgrad.nn.Linear(2, 1)
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     traced = wgrad.jit.trace(m, wgrad.ones(1, 2))
    >>> traced is m
    True
    """
    _deprecated("trace")
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect. Use `with "
                      "torch.jit.optimized_execution()` instead", FutureWarning, stacklevel=2)
    if _builtin_isinstance(func, ScriptModule):
        warnings.warn("The input to trace is already a ScriptModule, tracing it is a no-op. "
                      "Returning the object as is.", stacklevel=2)
        return func
    bound = getattr(func, "__self__", None)
    if _builtin_isinstance(func, _Module) or (_builtin_isinstance(bound, _Module)
                                              and func.__name__ == "forward"):
        _check_forward_inputs(example_inputs, example_kwarg_inputs)
        _deprecated("trace_method")  # torch traces a module's forward by trace_module
        return func
    if _builtin_isinstance(bound, _Module):
        raise AttributeError("trace doesn't support compiling individual module's functions."
                             "\nPlease use trace_module")
    return func


def trace_module(mod, inputs, optimize=None, check_trace=True, check_inputs=None,
                 check_tolerance=1e-5, strict=True, _force_outplace=False, _module_class=None,
                 _compilation_unit=None, example_inputs_is_kwarg=False, _store_inputs=True):
    """``mod`` itself (its methods run eagerly), with torch's DeprecationWarning and
    argument checks."""
    _deprecated("trace_method")
    if not _builtin_isinstance(mod, _Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not _builtin_isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    return mod


def script_if_tracing(fn):
    """``fn``: it would be scripted only while tracing, and wgrad never traces."""
    return fn


_script_if_tracing = script_if_tracing


# -- what needs a TorchScript program -----------------------------------------------------

class ScriptModule(_Module):
    """torch.jit.ScriptModule as a base class: an ``nn.Module`` whose
    ``@script_method``\\ s run eagerly and whose ``Attribute(value, type)`` attributes store
    ``value``. ``script`` never returns one (it returns the module it is given)."""

    def __setattr__(self, name, value):
        if _builtin_isinstance(value, Attribute):
            value = value.value
        super().__setattr__(name, value)

    def save(self, f, **kwargs):
        raise _no_torchscript("ScriptModule.save", "save its state_dict with wgrad.save")


class ScriptFunction:
    """torch.jit.ScriptFunction (for ``isinstance`` checks: ``script`` returns the function
    itself, never one of these)."""

    def __init__(self, *args, **kwargs):
        raise TypeError("wgrad.jit.ScriptFunction: No constructor defined!")


class CompilationUnit:
    """TorchScript source compiled to functions: raises NotImplementedError."""

    def __init__(self, lang=None, _frames_up=0):
        raise _no_torchscript("CompilationUnit", "define the functions in Python")


def save(m, f, _extra_files=None):
    """Raises NotImplementedError: there is no TorchScript program to save; save the
    weights with ``wgrad.save(m.state_dict(), f)`` and rebuild the module in code."""
    raise _no_torchscript("save", "save the weights with wgrad.save(m.state_dict(), f) and "
                                  "rebuild the module in Python")


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """Raises NotImplementedError: wgrad cannot run TorchScript archives; build the module
    in Python and load its weights with ``load_state_dict(wgrad.load(f))``."""
    raise _no_torchscript("load", "build the module in Python and load weights saved with "
                                  "wgrad.save (module.load_state_dict(wgrad.load(f)))")


def freeze(mod, preserved_attrs=None, optimize_numerics=True):
    """Raises NotImplementedError (freezing inlines a TorchScript module's weights)."""
    raise _no_torchscript("freeze", "use the module in eval mode (mod.eval()) as it is")


def optimize_for_inference(mod, other_methods=None):
    """Raises NotImplementedError (a TorchScript graph pass)."""
    raise _no_torchscript("optimize_for_inference",
                          "use the module in eval mode, or wgrad.compile for one XLA program")


def export_opnames(m):
    """Raises NotImplementedError (the operator list of a TorchScript module)."""
    raise _no_torchscript("export_opnames", "there are no TorchScript operators to list")


def last_executed_optimized_graph():
    """Raises NotImplementedError (no TorchScript graph ran)."""
    raise _no_torchscript("last_executed_optimized_graph", "there is no graph")


# -- fusion and execution settings: kept, and change nothing ------------------------------

_settings = {"onednn": False, "strategy": [("STATIC", 2), ("DYNAMIC", 10)]}


@contextlib.contextmanager
def optimized_execution(should_optimize):
    """A context manager for TorchScript's executor: does nothing in eager wgrad."""
    yield


@contextlib.contextmanager
def fuser(name):
    """A context manager choosing TorchScript's fuser (``fuser0``-``fuser3``, ``none``):
    checks the name, as torch, and changes nothing."""
    if name not in ("fuser0", "fuser1", "fuser2", "fuser3", "none"):
        raise Exception(f"unrecognized fuser option (name: {name})")  # noqa: TRY002
    yield


def set_fusion_strategy(strategy):
    """Keep TorchScript's fusion strategy (torch's DeprecationWarning) and return the one
    before it; nothing is fused differently."""
    warnings.warn("`torch.jit.set_fusion_strategy` is deprecated. Please use `torch.compile` "
                  "instead.", DeprecationWarning, stacklevel=2)
    old, _settings["strategy"] = _settings["strategy"], list(strategy)
    return old


def enable_onednn_fusion(enabled):
    """Keep the oneDNN fusion flag (it changes nothing here)."""
    _settings["onednn"] = bool(enabled)


def onednn_fusion_enabled():
    """The flag :func:`enable_onednn_fusion` set (False by default)."""
    return _settings["onednn"]


class strict_fusion:
    """TorchScript's fusion check: warns "Only works in script mode", as torch does
    outside a scripted function, and does nothing."""

    def __init__(self):
        warnings.warn("Only works in script mode", stacklevel=2)

    def __enter__(self):
        pass

    def __exit__(self, type, value, tb):  # noqa: A002  (torch's names)
        pass


# -- isinstance with typing containers ------------------------------------------------------

_RAW = {dict: "dict", list: "list", tuple: "tuple", typing.Dict: "Dict",  # noqa: UP006
        typing.List: "List", typing.Optional: "Optional", typing.Tuple: "Tuple"}  # noqa: UP006


def _missing_args(target_type):
    name = _RAW.get(target_type) if _builtin_isinstance(target_type, collections.abc.Hashable) \
        else None
    if name is None:
        return
    if name.endswith("ict"):
        raise RuntimeError(f"Attempted to use {name} without contained types. Please add "
                           f"contained type, e.g. {name}[int, int]")
    raise RuntimeError(f"Attempted to use {name} without a contained type. Please add a "
                       f"contained type, e.g. {name}[int]")


def _warn_empty(obj):
    if obj == [] or obj == {} or obj == ():
        warnings.warn("The inner type of a container is lost when calling torch.jit.isinstance "
                      "in eager mode. For example, List[int] would become list and therefore "
                      "falsely return True for List[float] or List[str].", stacklevel=4)


def _element_is(el, el_type):
    return _container_is(el, el_type) if typing.get_origin(el_type) else \
        _builtin_isinstance(el, el_type)


def _container_is(obj, target_type):
    origin = typing.get_origin(target_type)
    _missing_args(target_type)
    args = typing.get_args(target_type)
    if origin is list:
        _warn_empty(obj)
        return _builtin_isinstance(obj, list) and all(_element_is(e, args[0]) for e in obj)
    if origin is dict:
        _warn_empty(obj)
        return _builtin_isinstance(obj, dict) and all(
            _builtin_isinstance(k, args[0]) and _element_is(v, args[1]) for k, v in obj.items())
    if origin is tuple:
        _warn_empty(obj)
        return _builtin_isinstance(obj, tuple) and len(obj) == len(args) and all(
            _element_is(e, t) for e, t in zip(obj, args))
    if origin is typing.Union or origin is types.UnionType:
        if obj is None:
            return True
        for t in args:
            if typing.get_origin(t):  # torch decides on the first container type it meets
                return _container_is(obj, t)
            if _builtin_isinstance(obj, t):
                return True
    return False


def isinstance(obj, target_type):  # noqa: A001  (torch.jit.isinstance)
    """``isinstance`` that also checks typing containers' element types
    (``List[Tensor]``, ``Dict[str, int]``, ``Optional[...]``, ``Tuple[...]``), as torch's
    eager ``torch.jit.isinstance``.

    Example
    -------
    >>> from typing import List
    >>> wgrad.jit.isinstance([wgrad.ones(1)], List[wgrad.Tensor])
    True
    >>> wgrad.jit.isinstance([1], List[wgrad.Tensor])
    False
    """
    if _builtin_isinstance(target_type, collections.abc.Container):
        if not _builtin_isinstance(target_type, tuple):
            raise RuntimeError("The second argument to `torch.jit.isinstance` must be a type or "
                               "a tuple of types")
        return any(isinstance(obj, t) for t in target_type)
    if typing.get_origin(target_type):
        return _container_is(obj, target_type)
    _missing_args(target_type)
    return _builtin_isinstance(obj, target_type)


# -- fork / wait ----------------------------------------------------------------------------

class Future:
    """The result of work that may not be done yet (torch.jit.Future, torch.futures.Future).
    ``fork`` returns one already completed; ``Future()`` is completed by ``set_result`` or
    ``set_exception`` (``wait`` blocks until then).

    Example
    -------
    >>> fut = wgrad.jit.Future()
    >>> fut.set_result(3)
    >>> fut.done(), fut.wait(), fut.then(lambda f: f.wait() + 1).wait()
    (True, 3, 4)
    """

    __class_getitem__ = classmethod(types.GenericAlias)

    def __init__(self, *, devices=None):
        self._event = threading.Event()
        self._lock = threading.Lock()
        self._value = self._error = None
        self._callbacks = []

    def done(self):
        """Whether a result or an error is set."""
        return self._event.is_set()

    def wait(self):
        """Block until completed; the result, or the error raised."""
        self._event.wait()
        if self._error is not None:
            raise self._error
        return self._value

    def value(self):
        """The result of a completed future (the error raised if it failed)."""
        if not self.done():
            raise RuntimeError("Future.value(): the future is not completed yet")
        return self.wait()

    def set_result(self, result):
        """Complete the future with ``result`` and run its callbacks."""
        self._complete(result, None)

    def set_exception(self, result):
        """Complete the future with the error ``result`` (raised by ``wait``)."""
        if not _builtin_isinstance(result, Exception):
            raise AssertionError(f"{result} is of type {type(result)}, not an Exception.")
        self._complete(None, result)

    def _complete(self, value, error):
        with self._lock:
            if self._event.is_set():
                raise RuntimeError("Attempting to mark a completed Future as complete again. "
                                   "Note that a Future can only be marked completed once.")
            self._value, self._error = value, error
            self._event.set()
            callbacks, self._callbacks = self._callbacks, []
        for cb in callbacks:
            cb(self)

    def add_done_callback(self, callback):
        """Run ``callback(self)`` when completed (now, if it is)."""
        with self._lock:
            if not self._event.is_set():
                self._callbacks.append(callback)
                return
        callback(self)

    def then(self, callback):
        """A new future completed with ``callback(self)`` once this one is."""
        out = Future()

        def run(fut):
            try:
                result = callback(fut)
            except Exception as e:
                out.set_exception(RuntimeError(f"Got the following error when running the "
                                               f"callback: {type(e).__name__}: {e}"))
            else:
                out.set_result(result)
        self.add_done_callback(run)
        return out


def _fork_now(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` now (an error is raised here); its completed Future."""
    fut = Future()
    fut.set_result(func(*args, **kwargs))
    return fut


def _wait_now(future):
    """The value of ``future``."""
    if not _builtin_isinstance(future, Future):
        raise TypeError(f"wait(): argument 'future' must be Future, not "
                        f"{type(future).__name__}")
    return future.wait()


def fork(func, *args, **kwargs):
    """Run ``func(*args, **kwargs)`` and return a completed :class:`Future` of its value
    (torch too runs it at once outside TorchScript), with torch's DeprecationWarning.

    Example
    -------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", DeprecationWarning)
    ...     fut = wgrad.jit.fork(lambda a, b: a + b, 1, b=2)
    ...     value = wgrad.jit.wait(fut)
    >>> value
    3
    """
    warnings.warn("`torch.jit.fork` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return _fork_now(func, *args, **kwargs)


def wait(future):
    """The value of a :class:`Future` (see :func:`fork`), with torch's DeprecationWarning."""
    warnings.warn("`torch.jit.wait` is deprecated. Please use `torch.compile` instead.",
                  DeprecationWarning, stacklevel=2)
    return _wait_now(future)


_fork, _wait = fork, wait
_fork_now.__name__ = _fork_now.__qualname__ = "fork"  # wgrad.fork, as torch.fork
_wait_now.__name__ = _wait_now.__qualname__ = "wait"
