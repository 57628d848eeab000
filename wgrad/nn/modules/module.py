"""``nn.Module``: the base class of every layer (torch.nn.Module's API and messages)."""
import collections
import collections.abc
import itertools
import warnings
import weakref

from ... import _dtype as D
from ..._creation import zeros_like
from ..._tensor import Tensor
from ...autograd.function import Function
from ...autograd.grad_mode import no_grad
from ..parameter import Buffer, Parameter, is_lazy

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook"]


# -- hooks ---------------------------------------------------------------------------

class _Hooks(collections.OrderedDict):
    """An ordered hook table (``prepend=True`` moves a hook to the front)."""


class RemovableHandle:
    """Returned by ``register_*_hook``; ``remove()`` unregisters the hook (also as a
    context manager)."""

    _ids = itertools.count()

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = next(RemovableHandle._ids)
        extra = () if extra_dict is None else \
            extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(e) for e in extra)

    def remove(self):
        d = self.hooks_dict_ref()
        if d is not None:
            d.pop(self.id, None)
        for ref in self.extra_dict_ref:
            e = ref()
            if e is not None:
                e.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _add(table, hook, prepend, extra=()):
    """Register ``hook`` in ``table``, its id marked in each of the ``extra`` tables."""
    h = RemovableHandle(table, extra_dict=list(extra))
    table[h.id] = hook
    if prepend:
        table.move_to_end(h.id, last=False)
    for e in extra:
        e[h.id] = True
    return h


# -- global hooks (torch.nn.modules.module.register_module_*) -------------------------
# Hooks common to every module, for debugging and profiling, as torch's: forward and
# backward hooks run before each module's own; registration hooks run when a buffer,
# parameter or submodule is registered and may replace it.
_global_forward_pre_hooks = _Hooks()
_global_forward_hooks = _Hooks()
_global_forward_hooks_with_kwargs = _Hooks()
_global_forward_hooks_always_called = _Hooks()
_global_backward_pre_hooks = _Hooks()
_global_backward_hooks = _Hooks()
_global_buffer_registration_hooks = _Hooks()
_global_module_registration_hooks = _Hooks()
_global_parameter_registration_hooks = _Hooks()


def register_module_forward_pre_hook(hook):
    """A forward pre-hook ``hook(module, args)`` common to all modules (runs before each
    module's own); returns a RemovableHandle."""
    return _add(_global_forward_pre_hooks, hook, False)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """A forward hook ``hook(module, args, output)`` (``hook(module, args, kwargs,
    output)`` with ``with_kwargs``) common to all modules; ``always_call`` runs it even
    when the module raises."""
    h = _add(_global_forward_hooks, hook, False, [_global_forward_hooks_always_called]
             if always_call else ())
    if with_kwargs:
        _global_forward_hooks_with_kwargs[h.id] = True
    return h


def register_module_full_backward_pre_hook(hook):
    """A backward pre-hook ``hook(module, grad_output)`` common to all modules."""
    return _add(_global_backward_pre_hooks, hook, False)


def register_module_full_backward_hook(hook):
    """A backward hook ``hook(module, grad_input, grad_output)`` common to all modules."""
    return _add(_global_backward_hooks, hook, False)


def register_module_buffer_registration_hook(hook):
    """``hook(module, name, buffer)`` runs on every ``register_buffer``; a non-None
    result is registered instead."""
    return _add(_global_buffer_registration_hooks, hook, False)


def register_module_module_registration_hook(hook):
    """``hook(module, name, submodule)`` runs whenever a submodule is registered; a
    non-None result is registered instead."""
    return _add(_global_module_registration_hooks, hook, False)


def register_module_parameter_registration_hook(hook):
    """``hook(module, name, param)`` runs on every ``register_parameter`` of a
    Parameter; a non-None result is registered instead."""
    return _add(_global_parameter_registration_hooks, hook, False)


def _registration(hooks, module, name, value):
    for hook in hooks.values():
        out = hook(module, name, value)
        if out is not None:
            value = out
    return value


class _WrappedHook:
    """A load_state_dict pre-hook, called with the module first when ``module`` is set
    (held weakly, as torch's)."""

    def __init__(self, hook, module=None):
        self.hook = hook
        self.module = None if module is None else weakref.ref(module)

    def __call__(self, *args):
        if self.module is None:
            return self.hook(*args)
        m = self.module()
        if m is None:
            raise RuntimeError("You are trying to call the hook of a dead Module!")
        return self.hook(m, *args)


# NOTE [Module backward hooks]
# register_full_backward_hook follows torch's BackwardHook: the module's inputs that require
# grad pass through an identity Function before forward, and its outputs that require grad
# through another after it. The outputs' identity node runs first in backward and records grad_output (running
# the backward pre-hooks, which may replace it); the inputs' identity node then receives
# every grad_input at once, calls hook(module, grad_input, grad_output) and returns what
# the hook returns. When no input requires grad, the hooks run at the outputs' node with
# grad_input all None.

class _BackwardHookFunction(Function):
    """The identity on the tensors that require grad; its backward runs the hooks."""

    @staticmethod
    def forward(ctx, state, side, *args):
        ctx.state, ctx.side = state, side
        return args

    @staticmethod
    def backward(ctx, *grads):
        return (None, None) + tuple(ctx.state.on_grads(ctx.side, grads))


class _BackwardHookState:
    # torch's packing: grad_input holds zeros for tensor inputs that get no gradient
    # (unused, or not requiring grad) and None for other arguments; grad_output holds
    # None for outputs that do not require grad
    def __init__(self, module, hooks, pre_hooks):
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.n_inputs = 0
        self.input_pos = None
        self.input_zeros = {}
        self.n_outputs = 0
        self.output_pos = ()

    @staticmethod
    def _wrap(state, side, items):
        pos = [i for i, a in enumerate(items) if isinstance(a, Tensor) and a.requires_grad]
        if not pos:
            return None, items
        wrapped = _BackwardHookFunction.apply(state, side, *[items[i] for i in pos])
        out = list(items)
        for i, w in zip(pos, wrapped):
            out[i] = w
        return pos, out

    def setup_inputs(self, args):
        self.n_inputs = len(args)
        self.input_pos, out = self._wrap(self, "in", args)
        if self.input_pos is None:
            return args
        self.input_zeros = {i: a for i, a in enumerate(args)
                            if isinstance(a, Tensor) and i not in self.input_pos}
        return tuple(out)

    def setup_outputs(self, result):
        is_tuple = isinstance(result, tuple)
        outs = list(result) if is_tuple else [result]
        pos, outs = self._wrap(self, "out", outs)
        if pos is None:
            return result
        self.n_outputs, self.output_pos = len(outs), pos
        return tuple(outs) if is_tuple else outs[0]

    def _pack(self, grads, pos, n, zeros=None):
        full = [None] * n
        for i, t in (zeros or {}).items():
            full[i] = zeros_like(t)
        for i, g in zip(pos, grads):
            full[i] = g
        return tuple(full)

    def on_grads(self, side, grads):
        m = self.module
        if side == "out":
            packed = self._pack(grads, self.output_pos, self.n_outputs)
            for hook in self.pre_hooks:
                res = hook(m, packed)
                if res is not None:
                    res = res if isinstance(res, tuple) else (res,)
                    if len(res) != len(packed):
                        raise RuntimeError(f"Backward pre hook returned an invalid number of "
                                           f"grad_output, got {len(res)}, but expected "
                                           f"{len(packed)}")
                    packed = res
            self.grad_outputs = packed
            if self.input_pos is None:
                warnings.warn("Full backward hook is firing when gradients are computed with "
                              "respect to module outputs since no inputs require gradients. "
                              "See https://docs.pytorch.org/docs/main/generated/torch.nn."
                              "Module.html#torch.nn.Module.register_full_backward_hook for "
                              "more details.", UserWarning, stacklevel=2)
                grad_inputs = (None,) * self.n_inputs
                for hook in self.hooks:
                    res = hook(m, grad_inputs, self.grad_outputs)
                    if res is not None and not all(r is None for r in res):
                        raise RuntimeError("Backward hook for Modules where no input requires "
                                           "gradient should always return None or None for "
                                           "all gradients.")
            return [packed[i] for i in self.output_pos]
        packed = self._pack(grads, self.input_pos, self.n_inputs, self.input_zeros)
        for hook in self.hooks:
            res = hook(m, packed, self.grad_outputs)
            if res is not None:
                res = res if isinstance(res, tuple) else (res,)
                if len(res) != len(packed):
                    raise RuntimeError(f"Backward hook returned an invalid number of "
                                       f"grad_input, got {len(res)}, but expected "
                                       f"{len(packed)}")
                packed = res
        return [packed[i] for i in self.input_pos]


# -- helpers ---------------------------------------------------------------------------

def _typename(obj):
    if isinstance(obj, Tensor):
        return obj.dtype.legacy_type
    cls = type(obj)
    mod = cls.__module__
    return cls.__qualname__ if mod in (None, "builtins") else f"{mod}.{cls.__qualname__}"


def _addindent(s, n):
    lines = s.split("\n")
    if len(lines) == 1:
        return s
    return lines[0] + "\n" + "\n".join(" " * n + line for line in lines[1:])


class _IncompatibleKeys(collections.namedtuple("IncompatibleKeys",
                                               ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return (f"_IncompatibleKeys(missing_keys={self.missing_keys!r}, "
                f"unexpected_keys={self.unexpected_keys!r})")

    __str__ = __repr__


def _check_name(kind, name, module, allow_existing):
    if not isinstance(name, str):
        raise TypeError(f"{kind} name should be a string. Got {type(name).__name__}")
    if "." in name:
        if kind == "module":
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        raise KeyError(f'{kind} name can\'t contain "."')
    if name == "":
        raise KeyError(f'{kind} name can\'t be empty string ""')
    if hasattr(module, name) and name not in allow_existing:
        raise KeyError(f"attribute '{name}' already exists")


def _parse_to(args, kwargs):
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    non_blocking = kwargs.pop("non_blocking", False)
    kwargs.pop("memory_format", None)
    if kwargs:
        raise TypeError(f"to() received an invalid combination of arguments - got "
                        f"{tuple(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, D.dtype):
            dtype = a
        elif isinstance(a, bool):
            non_blocking = a
        else:
            device = a
    if dtype is not None:
        dtype = D.as_dtype(dtype)
        if not (dtype.is_floating_point or dtype.is_complex):
            raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but "
                            f"got desired dtype={dtype!r}")
    return device, dtype, non_blocking


_EXTRA_STATE = "_extra_state"


def _init_hook_tables(d):
    for name in ("_forward_hooks_always_called", "_state_dict_hooks", "_state_dict_pre_hooks",
                 "_load_state_dict_pre_hooks", "_load_state_dict_post_hooks"):
        if name not in d:
            d[name] = _Hooks()


class _HookedCall:
    """One call of a module with hooks, as torch's ``_call_impl``: global forward
    pre-hooks, then the module's; backward hooks wrap inputs and outputs (NOTE [Module
    backward hooks]); forward hooks (global first). If anything raises, the forward
    hooks registered with ``always_call`` that have not run yet run with the output so
    far (None if forward did not return), their own errors turned into warnings."""

    def __init__(self, module, args, kwargs):
        self.module, self.args, self.kwargs = module, args, kwargs
        self.result = None
        self.called = set()

    def __call__(self):
        m, args, kwargs = self.module, self.args, self.kwargs
        for hid, hook in (*_global_forward_pre_hooks.items(), *m._forward_pre_hooks.items()):
            if hid in m._forward_pre_hooks_with_kwargs:
                res = hook(m, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError(f"forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {res}.")
                    args, kwargs = res
            else:
                res = hook(m, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
            self.args, self.kwargs = args, kwargs
        state = None
        hooks = [*_global_backward_hooks.values(), *m._backward_hooks.values()]
        pre_hooks = [*_global_backward_pre_hooks.values(), *m._backward_pre_hooks.values()]
        if hooks or pre_hooks:
            state = _BackwardHookState(m, hooks, pre_hooks)
            args = self.args = state.setup_inputs(args)
        self.result = m.forward(*args, **kwargs)
        for hid, hook in (*_global_forward_hooks.items(), *m._forward_hooks.items()):
            if hid in m._forward_hooks_always_called or \
                    hid in _global_forward_hooks_always_called:
                self.called.add(hid)
            if hid in m._forward_hooks_with_kwargs or hid in _global_forward_hooks_with_kwargs:
                res = hook(m, args, kwargs, self.result)
            else:
                res = hook(m, args, self.result)
            if res is not None:
                self.result = res
        if state is not None:
            self.result = state.setup_outputs(self.result)
        return self.result

    def always_called_hooks(self):
        m = self.module
        for hid, hook in _global_forward_hooks.items():
            if hid in _global_forward_hooks_always_called and hid not in self.called:
                self._silenced(lambda: hook(m, self.args, self.result), "global module")
        for hid, hook in m._forward_hooks.items():
            if hid in m._forward_hooks_always_called and hid not in self.called:
                if hid in m._forward_hooks_with_kwargs:
                    self._silenced(lambda: hook(m, self.args, self.kwargs, self.result),
                                   "module")
                else:
                    self._silenced(lambda: hook(m, self.args, self.result), "module")

    def _silenced(self, call, kind):
        try:
            res = call()
        except Exception as e:
            warnings.warn(f"{kind} forward hook with ``always_call=True`` raised an exception "
                          f"that was silenced as another error was raised in forward: {e}",
                          stacklevel=4)
            return
        if res is not None:
            self.result = res


# -- Module ----------------------------------------------------------------------------

class Module:
    """Base class for all neural network modules (torch.nn.Module).

    Assigning a ``Parameter``, a ``Module`` or a ``Buffer`` to an attribute registers it;
    ``parameters()``, ``state_dict()``, ``to()``, ``train()``/``eval()`` and the hooks
    then act on the whole tree.

    Example
    -------
    >>> import wgrad
    >>> class Scale(wgrad.nn.Module):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.s = wgrad.nn.Parameter(wgrad.ones(2))
    ...     def forward(self, x):
    ...         return x * self.s
    >>> m = Scale()
    >>> [name for name, _ in m.named_parameters()]
    ['s']
    >>> m(wgrad.tensor([1., 2.]))
    tensor([1., 2.], grad_fn=<MulBackward0>)
    """

    dump_patches = False
    _version = 1
    training: bool
    call_super_init = False

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = {}
        d["_buffers"] = {}
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = {}
        d["_forward_pre_hooks"] = _Hooks()
        d["_forward_pre_hooks_with_kwargs"] = _Hooks()
        d["_forward_hooks"] = _Hooks()
        d["_forward_hooks_with_kwargs"] = _Hooks()
        d["_backward_hooks"] = _Hooks()
        d["_backward_pre_hooks"] = _Hooks()
        _init_hook_tables(d)

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    # -- registration --------------------------------------------------------------------
    def register_buffer(self, name, tensor, persistent=True):
        """Add a buffer (state that is not a parameter, e.g. running statistics);
        ``persistent=False`` keeps it out of ``state_dict``."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        _check_name("buffer", name, self, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            f"(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = tensor.detach()
        tensor = _registration(_global_buffer_registration_hooks, self, name, tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Add a parameter (a ``Parameter`` or None) under ``name``."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        _check_name("parameter", name, self, self._parameters)
        if param is None:
            self._parameters[name] = None
            return
        if not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter '{name}' "
                            f"(torch.nn.Parameter or None required)")
        if param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model "
                             f"parameters must be created explicitly. To express '{name}' as "
                             f"a function of another Tensor, compute the value in the "
                             f"forward() method.")
        param = _registration(_global_parameter_registration_hooks, self, name, param)
        self._parameters[name] = param

    def add_module(self, name, module):
        """Add a child module (or None) under ``name``."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        _check_name("module", name, self, self._modules)
        self._modules[name] = _registration(_global_module_registration_hooks, self, name,
                                            module)

    def register_module(self, name, module):
        """Alias of ``add_module``."""
        self.add_module(name, module)

    def get_submodule(self, target):
        """The submodule at the dotted path ``target`` ("" is this module)."""
        if target == "":
            return self
        mod = self
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(mod._get_name() + " has no attribute `" + item + "`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at the dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at the dotted path ``target``."""
        path, _, name = target.rpartition(".")
        mod = self.get_submodule(path)
        if not hasattr(mod, name):
            raise AttributeError(mod._get_name() + " has no attribute `" + name + "`")
        if name not in mod._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(mod, name)

    # -- attributes ----------------------------------------------------------------------
    def __getattr__(self, name):
        d = self.__dict__
        for table in ("_parameters", "_buffers", "_modules"):
            t = d.get(table)
            if t is not None and name in t:
                return t[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__
        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            _remove_from(name, d, self._buffers, self._modules,
                         self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                f"(torch.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            _remove_from(name, d, self._parameters, self._buffers,
                         self._non_persistent_buffers_set)
            modules[name] = _registration(_global_module_registration_hooks, self, name, value)
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module '{name}' "
                                f"(torch.nn.Module or None expected)")
            modules[name] = _registration(_global_module_registration_hooks, self, name, value)
            return
        buffers = d.get("_buffers")
        if isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                f"(torch.nn.Buffer, torch.Tensor or None expected)")
            if isinstance(value, Buffer):
                persistent = value.persistent
                _remove_from(name, d, self._parameters, self._modules)
            else:
                persistent = name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        object.__setattr__(self, name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            object.__delattr__(self, name)

    def __dir__(self):
        keys = set(dir(type(self))) | set(self.__dict__) | set(self._parameters) | \
            set(self._modules) | set(self._buffers)
        return sorted(k for k in keys if not k[0].isdigit())

    def __setstate__(self, state):
        self.__dict__.update(state)
        _init_hook_tables(self.__dict__)  # state pickled before a table existed

    # -- iteration -----------------------------------------------------------------------
    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        memo = set()
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
        for mprefix, mod in mods:
            for k, v in get_members(mod):
                if v is None or (remove_duplicate and id(v) in memo):
                    continue
                if remove_duplicate:
                    memo.add(id(v))
                yield (mprefix + ("." if mprefix else "") + k, v)

    def parameters(self, recurse=True):
        """Iterate over the parameters (each shared parameter once)."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterate over ``(dotted name, parameter)`` pairs."""
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        """Iterate over the buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """Iterate over ``(dotted name, buffer)`` pairs."""
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self):
        """Iterate over the immediate child modules."""
        for _, m in self.named_children():
            yield m

    def named_children(self):
        """Iterate over ``(name, child)`` pairs (each child once)."""
        memo = set()
        for name, m in self._modules.items():
            if m is not None and id(m) not in memo:
                memo.add(id(m))
                yield name, m

    def modules(self):
        """Iterate over all modules of the tree, this one first."""
        for _, m in self.named_modules():
            yield m

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """Iterate over ``(dotted name, module)`` pairs of the tree, this one first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, m in self._modules.items():
            if m is None:
                continue
            sub = prefix + ("." if prefix else "") + name
            yield from m.named_modules(memo, sub, remove_duplicate)

    __hash__ = object.__hash__

    # -- modes ---------------------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode on this module and all its children; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for m in self.children():
            m.train(mode)
        return self

    def eval(self):
        """``train(False)``."""
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set ``requires_grad`` of every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all parameters (to None by default)."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                g = p.grad
                if g.grad_fn is not None:
                    g.detach_()
                else:
                    g.requires_grad_(False)
                g.zero_()

    # -- conversion ----------------------------------------------------------------------
    def _apply(self, fn, recurse=True):
        if recurse:
            for m in self.children():
                m._apply(fn)
        with no_grad():
            for key, p in self._parameters.items():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:  # NOTE: the Parameter object is kept; only its data changes
                    p.data = new
                if p.grad is not None:
                    g = fn(p.grad)
                    if g is not p.grad:
                        p.grad.data = g
            for key, b in self._buffers.items():
                if b is not None:
                    self._buffers[key] = fn(b)
        return self

    def apply(self, fn):
        """Call ``fn(module)`` on every child (recursively), then on this module."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    def to(self, *args, **kwargs):
        """Move and/or cast parameters and buffers in place: ``to(device)``,
        ``to(dtype)``, ``to(device, dtype)``, ``to(tensor)``. Only floating point and complex
        tensors change dtype; parameters keep their identity. Unlike torch, a complex dtype
        gives no "experimental feature" warning."""
        device, dtype, _ = _parse_to(args, dict(kwargs))

        def convert(t):
            if t.is_floating_point() or t.is_complex():
                return t.to(device=device, dtype=dtype)
            return t.to(device=device)
        return self._apply(convert)

    def _cast(self, dtype, kinds):
        return self._apply(lambda t: t.to(dtype) if kinds(t) else t)

    def float(self):
        """Cast floating point parameters and buffers to float32."""
        return self._cast(D.float32, Tensor.is_floating_point)

    def double(self):
        """Cast floating point parameters and buffers to float64."""
        return self._cast(D.float64, Tensor.is_floating_point)

    def half(self):
        """Cast floating point parameters and buffers to float16."""
        return self._cast(D.float16, Tensor.is_floating_point)

    def bfloat16(self):
        """Cast floating point parameters and buffers to bfloat16."""
        return self._cast(D.bfloat16, Tensor.is_floating_point)

    def cfloat(self):
        """wgrad extension: cast floating point and complex parameters and buffers to
        complex64 (torch's ``to(torch.cfloat)`` without the warning)."""
        return self._cast(D.complex64, lambda t: t.is_floating_point() or t.is_complex())

    def cdouble(self):
        """wgrad extension: cast floating point and complex parameters and buffers to
        complex128."""
        return self._cast(D.complex128, lambda t: t.is_floating_point() or t.is_complex())

    def cpu(self):
        """Move parameters and buffers to the CPU."""
        return self._apply(lambda t: t.cpu())

    def cuda(self, device=None):
        """Move parameters and buffers to a GPU."""
        return self._apply(lambda t: t.cuda(device))

    def type(self, dst_type):
        """Cast all parameters and buffers to ``dst_type``."""
        return self._apply(lambda t: t.to(dst_type))

    def share_memory(self):
        return self

    # -- state dict ----------------------------------------------------------------------
    def get_extra_state(self):
        """Extra state to store in ``state_dict()`` under ``<prefix>_extra_state``:
        override it with ``set_extra_state`` (the base methods are never called)."""
        raise RuntimeError(
            "Reached a code path in Module.get_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def set_extra_state(self, state):
        """Restore what ``get_extra_state`` returned, from ``load_state_dict``."""
        raise RuntimeError(
            "Reached a code path in Module.set_extra_state() that should never be called. "
            "Please file an issue at https://github.com/pytorch/pytorch/issues/new?template="
            "bug-report.yml to report this bug.")

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()
        if getattr(type(self), "get_extra_state", Module.get_extra_state) \
                is not Module.get_extra_state:
            destination[prefix + _EXTRA_STATE] = self.get_extra_state()

    def state_dict(self, *args, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of every parameter and persistent buffer by dotted name
        (detached unless ``keep_vars``), with torch's ``_metadata`` (each module's
        ``_version`` by prefix), extra state and state dict hooks."""
        if args:  # torch's deprecated positional form (destination, prefix, keep_vars)
            warnings.warn("Positional args are being deprecated, use kwargs instead. Refer to "
                          "https://pytorch.org/docs/main/generated/torch.nn.Module.html"
                          "#torch.nn.Module.state_dict for details.", FutureWarning,
                          stacklevel=2)
            if destination is None:
                destination = args[0]
            if len(args) > 1 and prefix == "":
                prefix = args[1]
            if len(args) > 2 and keep_vars is False:
                keep_vars = args[2]
        if destination is None:
            destination = collections.OrderedDict()
            destination._metadata = collections.OrderedDict()
        local_metadata = dict(version=self._version)
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = local_metadata
        for hook in self._state_dict_pre_hooks.values():
            hook(self, prefix, keep_vars)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, m in self._modules.items():
            if m is not None:
                m.state_dict(destination=destination, prefix=prefix + name + ".",
                             keep_vars=keep_vars)
        for hook in self._state_dict_hooks.values():
            out = hook(self, destination, prefix, local_metadata)
            if not getattr(hook, "_from_public_api", False):
                if out is not None:  # the private API may return a new dict
                    destination = out
            elif out is not None:
                raise RuntimeError("state_dict post-hook must return None")
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs):
        """Copy this module's own parameters, persistent buffers and extra state from
        ``state_dict`` (torch's signature, for overrides)."""
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {k: v for k, v in self._buffers.items()
                      if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                  persistent.items()) if v is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  f'torch.Tensor or Tensor-like object from checkpoint but '
                                  f'received {type(value)}')
                continue
            lazy = is_lazy(param)  # NOTE [Lazy modules]: no shape yet, nothing to compare
            if lazy and is_lazy(value):
                continue  # both uninitialized: nothing to copy
            if not lazy and param.ndim == 0 and tuple(value.shape) == (1,):  # torch 0.3
                value = value[0]
            if not lazy and tuple(value.shape) != tuple(param.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{_size_repr(value.shape)} from checkpoint, the shape in "
                                  f"current model is {_size_repr(param.shape)}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(value, Parameter):
                                value = Parameter(value, requires_grad=param.requires_grad)
                            else:
                                value.requires_grad_(param.requires_grad)
                        setattr(self, name, value)
                    else:
                        param.copy_(value)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f'dimensions in the model are {_size_repr(param.shape)} and '
                                  f'whose dimensions in the checkpoint are '
                                  f'{_size_repr(value.shape)}, an exception occurred : '
                                  f'{ex.args}.')
        extra_key = prefix + _EXTRA_STATE
        if getattr(type(self), "set_extra_state", Module.set_extra_state) \
                is not Module.set_extra_state:
            if extra_key in state_dict:
                self.set_extra_state(state_dict[extra_key])
            elif strict:
                missing_keys.append(extra_key)
        elif strict and extra_key in state_dict:
            unexpected_keys.append(extra_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_key:
                    head = key[len(prefix):].split(".", 1)
                    if len(head) > 1:
                        if head[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif head[0] not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy parameters and buffers from ``state_dict`` (shapes must match).

        With ``strict`` (the default), missing and unexpected keys raise torch's
        ``RuntimeError``; the return value names them either way. ``assign=True`` puts the
        state dict's tensors into the module instead of copying into its own.
        """
        if not isinstance(state_dict, collections.abc.Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing, unexpected, errors = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = collections.OrderedDict(state_dict)  # overrides may add keys to it
        if metadata is not None:
            state_dict._metadata = metadata

        def load(module, local_state, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            if assign:
                local_metadata["assign_to_params_buffers"] = assign
            module._load_from_state_dict(local_state, prefix, local_metadata, True, missing,
                                         unexpected, errors)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {k: v for k, v in local_state.items()
                                 if k.startswith(child_prefix)}, child_prefix)
            keys = _IncompatibleKeys(missing, unexpected)  # hooks may edit the lists
            for hook in module._load_state_dict_post_hooks.values():
                if hook(module, keys) is not None:
                    raise AssertionError(
                        "Hooks registered with ``register_load_state_dict_post_hook`` are not"
                        " expected to return new values, if incompatible_keys need to be "
                        "modified, it should be done inplace.")
        load(self, state_dict)
        if strict:
            if unexpected:
                errors.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected)))
            if missing:
                errors.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing)))
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                type(self).__name__, "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    def register_state_dict_pre_hook(self, hook):
        """``hook(module, prefix, keep_vars)`` runs before ``state_dict`` saves this
        module."""
        return _add(self._state_dict_pre_hooks, hook, False)

    def register_state_dict_post_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata)`` runs after ``state_dict``
        saved this module and its children; it edits the dict in place (returns None)."""
        hook._from_public_api = True
        return _add(self._state_dict_hooks, hook, False)

    def _register_state_dict_hook(self, hook):
        # torch's older private form: a returned dict replaces the root's state dict
        if getattr(hook, "_from_public_api", False):
            raise RuntimeError("Cannot register the same function as the state dict post hook "
                               "that was previously registered via "
                               "register_state_dict_post_hook")
        return _add(self._state_dict_hooks, hook, False)

    def register_load_state_dict_pre_hook(self, hook):
        """``hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)`` runs before this module loads its entries."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        h = RemovableHandle(self._load_state_dict_pre_hooks)
        self._load_state_dict_pre_hooks[h.id] = _WrappedHook(hook, self if with_module
                                                             else None)
        return h

    def register_load_state_dict_post_hook(self, hook):
        """``hook(module, incompatible_keys)`` runs after this module and its children
        loaded; it may edit ``incompatible_keys.missing_keys``/``unexpected_keys`` in
        place (returning a value raises)."""
        return _add(self._load_state_dict_post_hooks, hook, False)

    # -- hooks ---------------------------------------------------------------------------
    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """``hook(module, args)`` (or ``hook(module, args, kwargs)`` with ``with_kwargs``)
        runs before ``forward``; a non-None result replaces the arguments."""
        return _add(self._forward_pre_hooks, hook, prepend,
                    [self._forward_pre_hooks_with_kwargs] if with_kwargs else ())

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """``hook(module, args, output)`` (or ``hook(module, args, kwargs, output)``) runs
        after ``forward``; a non-None result replaces the output. ``always_call`` runs it
        even when forward (or an earlier hook) raises, then the error propagates."""
        extra = ([self._forward_hooks_with_kwargs] if with_kwargs else []) + \
            ([self._forward_hooks_always_called] if always_call else [])
        return _add(self._forward_hooks, hook, prepend, extra)

    def register_full_backward_hook(self, hook, prepend=False):
        """``hook(module, grad_input, grad_output)`` runs when the gradients with respect
        to the module's inputs are computed; a non-None result replaces grad_input
        (NOTE [Module backward hooks])."""
        return _add(self._backward_hooks, hook, prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """``hook(module, grad_output)`` runs when the gradients with respect to the
        module's outputs are computed; a non-None result replaces grad_output."""
        return _add(self._backward_pre_hooks, hook, prepend)

    def _call_impl(self, *args, **kwargs):
        d = self.__dict__
        if not (d["_forward_pre_hooks"] or d["_forward_hooks"] or d["_backward_hooks"]
                or d["_backward_pre_hooks"] or _global_forward_pre_hooks
                or _global_forward_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        run = _HookedCall(self, args, kwargs)
        try:
            return run()
        except Exception:
            run.always_called_hooks()
            raise

    __call__ = _call_impl

    # -- printing ------------------------------------------------------------------------
    def _get_name(self):
        return type(self).__name__

    def extra_repr(self):
        """The text inside this module's parentheses in ``repr`` (override in layers)."""
        return ""

    def __repr__(self):
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + _addindent(repr(m), 2)
                       for key, m in self._modules.items()]
        lines = extra_lines + child_lines
        s = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                s += extra_lines[0]
            else:
                s += "\n  " + "\n  ".join(lines) + "\n"
        return s + ")"


def _size_repr(shape):
    return f"torch.Size({list(shape)})"


def _remove_from(name, *tables):
    for t in tables:
        if name in t:
            if isinstance(t, dict):
                del t[name]
            else:
                t.discard(name)

