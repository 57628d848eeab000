"""The Optimizer base class: torch.optim.Optimizer's contract on wgrad Tensors.

# NOTE [One dispatch per step]
# A step of a first-order optimizer updates every parameter of a param group with one
# jitted XLA computation over the lists (a pytree) of parameter, gradient and state arrays
# (``_functional.group_update``). The algorithm's per-tensor rule is traced once per
# parameter inside that computation, so XLA sees all the elementwise work of the group at
# once. What can change from step to step without changing the computation (the learning
# rate set by a scheduler, betas, weight decay, each parameter's step count) is a traced
# argument; only structural options (amsgrad, nesterov, maximize, which state exists) and
# the shapes/dtypes are part of the cache key, so a scheduler never recompiles a step.
# The results are written back as an in-place update under no_grad (``_assign``): the
# same Tensor objects, their version counters bumped, views of them re-read. Buffers of
# parameters and state that nothing but their Tensor holds are donated to the computation.
"""
import collections
import copy
import functools
import warnings
from itertools import chain

import jax
import jax.numpy as jnp

from .._dtype import float32 as _float32
from .._tensor import Tensor, _make
from ..autograd.grad_mode import enable_grad, no_grad
from ..ops._primitive import device_constant
from ..ops._views import _write
from . import _functional as F

__all__ = ["Optimizer", "required", "register_optimizer_step_pre_hook",
           "register_optimizer_step_post_hook"]


class _RequiredParameter:
    """Singleton class representing a required parameter for an Optimizer."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()

_global_pre_hooks = collections.OrderedDict()
_global_post_hooks = collections.OrderedDict()


class _RemovableHandle:
    _next_id = 0

    def __init__(self, hooks):
        self._hooks = hooks
        self.id = _RemovableHandle._next_id
        _RemovableHandle._next_id += 1

    def remove(self):
        self._hooks.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _register(hooks, hook, prepend=False):
    h = _RemovableHandle(hooks)
    hooks[h.id] = hook
    if prepend:
        hooks.move_to_end(h.id, last=False)
    return h


def register_optimizer_step_pre_hook(hook):
    """Register a pre-hook ``hook(optimizer, args, kwargs)`` run before every optimizer's
    ``step``; it may return ``(new_args, new_kwargs)``. Returns a removable handle."""
    return _register(_global_pre_hooks, hook)


def register_optimizer_step_post_hook(hook):
    """Register a post-hook ``hook(optimizer, args, kwargs)`` run after every optimizer's
    ``step``. Returns a removable handle."""
    return _register(_global_post_hooks, hook)


_KIND = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16",
         "complex64": "ComplexFloat", "complex128": "ComplexDouble", "int64": "Long",
         "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def _typename(obj):
    """torch.typename: ``torch.FloatTensor`` for a tensor, the qualified type name else."""
    if isinstance(obj, Tensor):
        return f"torch.{_KIND.get(obj._data.dtype.name, '')}Tensor"
    t = type(obj)
    mod = t.__module__
    return t.__qualname__ if mod in ("builtins", "__builtin__", None) else f"{mod}.{t.__qualname__}"


def _assign(t, new):
    """Write the array ``new`` into the Tensor ``t`` as an in-place update under no_grad
    does: the same object, its version counter bumped, views/aliases re-read
    (NOTE [In-place ops], NOTE [Views])."""
    _write(t, new)
    t._vc.v += 1


def _use_grad(step):
    """Run ``step`` under no_grad (torch's ``_use_grad_for_differentiable`` with
    differentiable=False), with the step pre/post hooks around it."""
    @functools.wraps(step)
    def wrapper(*args, **kwargs):
        self = args[0]
        for pre in chain(_global_pre_hooks.values(), self._optimizer_step_pre_hooks.values()):
            res = pre(self, args, kwargs)
            if res is not None:
                if isinstance(res, tuple) and len(res) == 2:
                    args, kwargs = res
                else:
                    raise RuntimeError(f"{step} must return None or a tuple of "
                                       f"(new_args, new_kwargs), but got {res}.")
        with no_grad():
            out = step(*args, **kwargs)
        for post in chain(self._optimizer_step_post_hooks.values(), _global_post_hooks.values()):
            post(self, args, kwargs)
        return out
    wrapper._wgrad_step = True
    return wrapper


class Optimizer:
    """Base class for all optimizers (torch.optim.Optimizer).

    Parameters
    ----------
    params : iterable
        Tensors to optimize, ``(name, tensor)`` pairs, or dicts defining param groups.
    defaults : dict
        Default values of the optimization options, filled into each param group.

    Subclasses that are first-order methods declare ``_rule`` (a rule of
    ``_functional``), ``_init_state(p, state, group)``, ``_hyper(group)`` (the traced
    scalars) and ``_static(group)`` (the structural options), and inherit ``step``
    (NOTE [One dispatch per step]).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = wgrad.optim.SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)
    """

    _rule = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        step = cls.__dict__.get("step")
        if step is not None and not getattr(step, "_wgrad_step", False):
            cls.step = _use_grad(step)

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = collections.OrderedDict()
        self._optimizer_step_post_hooks = collections.OrderedDict()
        self._optimizer_state_dict_pre_hooks = collections.OrderedDict()
        self._optimizer_state_dict_post_hooks = collections.OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = collections.OrderedDict()
        self._optimizer_load_state_dict_post_hooks = collections.OrderedDict()
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        groups = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, collections.OrderedDict())
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        s = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            s += "\n" + f"Parameter Group {i}"
            for key in sorted(group.keys()):
                if key != "params":
                    s += "\n" + f"    {key}: {group[key]}"
        return s + "\n)"

    # -- hooks -------------------------------------------------------------------------
    def register_step_pre_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None or (args, kwargs)`` before ``step``."""
        return _register(self._optimizer_step_pre_hooks, hook)

    def register_step_post_hook(self, hook):
        """``hook(optimizer, args, kwargs) -> None`` after ``step``."""
        return _register(self._optimizer_step_post_hooks, hook)

    def register_state_dict_pre_hook(self, hook, prepend=False):
        return _register(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        return _register(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        return _register(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        return _register(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # -- param groups ------------------------------------------------------------------
    def add_param_group(self, param_group):
        """Add a param group (a dict with ``"params"`` and optional options) to
        ``param_groups``; missing options are filled from ``defaults``."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)
        tensors, names = [], []
        for p in param_group["params"]:
            if isinstance(p, tuple):
                names.append(p[0])
                tensors.append(p[1])
            else:
                tensors.append(p)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(p))
            if not self.defaults.get("differentiable", None) and not (
                    p._grad_fn is None or p._retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)
        if len(tensors) != len({id(p) for p in tensors}):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error; see "
                          "github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)
        seen = set()
        for g in self.param_groups:
            seen.update(id(p) for p in g["params"])
            if ("param_names" in param_group) != ("param_names" in g):
                txt = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {txt} to the optimizer")
        if not seen.isdisjoint(id(p) for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # -- zero_grad ---------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Reset the gradients of all optimized tensors: ``.grad = None`` (default) or,
        with ``set_to_none=False``, detached and filled with zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                g = p._grad
                if g is None:
                    continue
                if set_to_none:
                    p._grad = None
                else:
                    if g._grad_fn is not None:
                        g.detach_()
                    else:
                        g._requires_grad = False
                    _assign(g, jnp.zeros_like(g._data))

    # -- state_dict --------------------------------------------------------------------
    def state_dict(self):
        """The optimizer's state as torch lays it out: ``{"state": {index: {...}},
        "param_groups": [{..., "params": [indices]}]}`` (tensors are not copied)."""
        for hook in self._optimizer_state_dict_pre_hooks.values():
            hook(self)
        mapping, start = {}, 0
        packed_groups = []
        for g in self.param_groups:
            packed = {k: v for k, v in g.items() if k != "params"}
            for i, p in enumerate(g["params"], start):
                mapping.setdefault(id(p), i)
            packed["params"] = [mapping[id(p)] for p in g["params"]]
            start += len(packed["params"])
            packed_groups.append(packed)
        packed_state = {(mapping[id(k)] if isinstance(k, Tensor) else k): v
                        for k, v in self.state.items()}
        sd = {"state": packed_state, "param_groups": packed_groups}
        for hook in self._optimizer_state_dict_post_hooks.values():
            res = hook(self, sd)
            if res is not None:
                sd = res
        return sd

    @staticmethod
    def _cast_state(param, value, fused_or_capturable, key):
        if key == "step":
            if fused_or_capturable:
                return value.to(dtype=_float32)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Load a state produced by :meth:`state_dict`: saved indices are matched with
        this optimizer's parameters in order; floating state tensors are cast to their
        parameter's dtype (``step`` is kept as saved)."""
        state_dict = state_dict.copy()
        for hook in self._optimizer_load_state_dict_pre_hooks.values():
            res = hook(self, state_dict)
            if res is not None:
                state_dict = res
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))
        flags = {}
        for g in state_dict["param_groups"]:
            for i in g["params"]:
                flags[i] = bool(g.get("fused") or g.get("capturable"))

        def cast(param, value, pid, key=None):
            if isinstance(value, Tensor):
                return self._cast_state(param, value, flags.get(pid, False), key)
            if isinstance(value, dict):
                return {k: cast(param, v, pid, k) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return type(value)(cast(param, v, pid) for v in value)
            return value

        state = collections.defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                state[id_map[k]] = cast(id_map[k], v, k)
            else:
                state[k] = v
        new_groups = []
        for g, ng in zip(groups, saved_groups):
            ng["params"] = g["params"]
            if "param_names" in g and "param_names" not in ng:
                ng["param_names"] = g["param_names"]
            new_groups.append(ng)
        self.__setstate__({"state": state, "param_groups": new_groups})
        for hook in self._optimizer_load_state_dict_post_hooks.values():
            hook(self)

    # -- the one-dispatch step (NOTE [One dispatch per step]) ----------------------------
    def step(self, closure=None):
        """Perform a single optimization step; ``closure`` re-evaluates the loss and is
        called under grad mode. Returns its loss (None without a closure)."""
        if self._rule is None:
            raise NotImplementedError
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            self._update_group(group)
        return loss

    step = _use_grad(step)

    def _init_state(self, p, state, group):
        raise NotImplementedError

    def _hyper(self, group):
        raise NotImplementedError

    def _static(self, group):
        return ()

    def _update_group(self, group):
        if group.get("differentiable"):
            raise RuntimeError(f"wgrad.optim.{type(self).__name__}: differentiable=True is not "
                               "supported (the update runs as one XLA computation outside "
                               "the autograd graph)")
        # (one pass, written for speed: it runs per parameter per step)
        params, states, ps, gs, ss = [], [], [], [], []
        state = self.state
        for p in group["params"]:
            g = p._grad
            if g is None:
                continue
            st = state[p]
            if not st:
                self._init_state(p, st, group)
            params.append(p)
            states.append(st)
            ps.append(p._data)
            gs.append(g._data)
            ss.append({k: v._data for k, v in st.items() if isinstance(v, Tensor)})
        if not params:
            return
        # NOTE [Python scalars as device constants]: lr, betas, eps... without a transfer
        hyper = {k: device_constant(v) for k, v in self._hyper(group).items()}
        new_ps, new_ss = F.group_update(self._rule, self._static(group), hyper, ps, gs, ss)
        for p, a in zip(params, new_ps):
            _assign(p, a)
        for st, new in zip(states, new_ss):
            for k, a in new.items():
                t = st.get(k)
                if t is None:
                    st[k] = _make(a)
                else:
                    _assign(t, a)

