"""Thread-local grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode."""
import functools
import inspect
import threading
import warnings

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled", "inference_mode",
           "is_inference_mode_enabled"]


class _State(threading.local):
    def __init__(self):
        self.grad = True
        self.inference = False
        self.vmap_depth = 0  # wgrad.func.vmap calls being traced on this thread


_state = _State()


def is_grad_enabled():
    """Whether operations record autograd history on this thread."""
    return _state.grad


def is_inference_mode_enabled():
    return _state.inference


_WARN_CLASS = ("Decorating classes is deprecated and will be disabled in future versions. You "
               "should only decorate functions or methods. To preserve the current behavior "
               "of class decoration, you can directly decorate the `__init__` method and "
               "nothing else.")


class _DecoratorContextManager:
    """Usable as ``with mode():``, ``@mode()`` and bare ``@mode``."""

    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and callable(args[0]) and cls in (no_grad, enable_grad):
            return cls()(args[0])
        return super().__new__(cls)

    def __call__(self, func):
        if inspect.isclass(func):  # deprecated in torch: only construction runs in the mode
            warnings.warn(_WARN_CLASS, FutureWarning, stacklevel=2)
            cls = func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        if inspect.isgeneratorfunction(func):
            @functools.wraps(func)
            def gen_wrapper(*args, **kwargs):
                gen = func(*args, **kwargs)
                try:
                    with self.clone():
                        response = gen.send(None)
                    while True:
                        try:
                            request = yield response
                        except GeneratorExit:
                            with self.clone():
                                gen.close()
                            raise
                        except BaseException as e:  # forward throws into the generator
                            with self.clone():
                                response = gen.throw(e)
                        else:
                            with self.clone():
                                response = gen.send(request)
                except StopIteration as e:
                    return e.value
            return gen_wrapper

        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            with self.clone():
                return func(*args, **kwargs)
        return wrapper

    def clone(self):
        return self.__class__()


class no_grad(_DecoratorContextManager):
    """Disable gradient recording on this thread.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(2, requires_grad=True)
    >>> with wgrad.no_grad():
    ...     y = x * 2
    >>> y.requires_grad
    False
    """

    def __enter__(self):
        self.prev = _state.grad
        _state.grad = False

    def __exit__(self, *exc):
        _state.grad = self.prev


class enable_grad(_DecoratorContextManager):
    """Enable gradient recording on this thread (inside ``no_grad``, say)."""

    def __enter__(self):
        self.prev = _state.grad
        _state.grad = True

    def __exit__(self, *exc):
        _state.grad = self.prev


class set_grad_enabled(_DecoratorContextManager):
    """Set grad mode: as a function call it takes effect at once; as a context manager
    or decorator it restores the previous mode on exit."""

    def __init__(self, mode):
        self.prev = _state.grad
        self.mode = bool(mode)
        _state.grad = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _state.grad = self.prev

    def __call__(self, func):
        _state.grad = self.prev
        return super().__call__(func)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """Like no_grad, and tensors made inside are inference tensors: they can never be
    saved for backward (``Tensor.is_inference()``)."""

    def __new__(cls, mode=True):
        if callable(mode) and not isinstance(mode, bool):
            return cls()(mode)
        return super().__new__(cls)

    def __init__(self, mode=True):
        self.mode = mode

    def __enter__(self):
        self.prev = (_state.grad, _state.inference)
        if self.mode:
            _state.grad, _state.inference = False, True
        else:
            _state.inference = False

    def __exit__(self, *exc):
        _state.grad, _state.inference = self.prev

    def clone(self):
        return self.__class__(self.mode)
