"""Custom differentiable functions: ``Function`` with a user-written ``backward``.

Torch's API: ``forward(ctx, *args)`` (or ``forward(*args)`` plus ``setup_context(ctx,
inputs, output)``) and ``backward(ctx, *grad_outputs)``, both static; ``Function.apply``
runs forward with grad mode off and, when some input requires grad, links the outputs to
a ``<ClassName>Backward`` node. The node *is* the ``ctx`` object, as in torch.

# NOTE [Custom Function gradients]
# ``backward`` receives one gradient per forward output (dL/ds* for output s, see
# NOTE [Conjugate Wirtinger convention]) and returns one per forward input, ``None`` for
# non-tensor inputs. It runs with grad mode equal to ``create_graph``, so a backward
# written with wgrad ops is itself recorded and can be differentiated again. Saved
# tensors go through SavedTensor (version checks, pack/unpack hooks).
"""
import functools
import inspect
import warnings

import jax.numpy as jnp

from .._autograd import forward_ad as _fw
from .._autograd.grad_mode import _state as _grad_state
from .._autograd.lazy_mode import group as _lazy_group
from .._autograd.graph import Error, Node  # noqa: F401  (Error: torch's name here)
from .._autograd.saved import SavedTensor, release_saved
from .._autograd import anomaly_mode as _anomaly
from .._tensor import Tensor
from ..ops._primitive import _post  # the same post-processing as every op's node
from ..ops._views import IN_CUSTOM_FUNCTION, MULTI_OUTPUT, set_creation
from ..ops.inplace import rebase_view_history

__all__ = ["Function", "FunctionCtx", "BackwardCFunction", "InplaceFunction",
           "once_differentiable"]

_ERR_LEGACY = ("Legacy autograd function with non-static forward method is deprecated. Please "
               "use new-style autograd function with static forward method. (Example: "
               "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")
_ERR_DIRTY = ("Some elements marked as dirty during the forward method were not returned as "
              "output. The inputs that are modified inplace must all be outputs of the Function.")
_ERR_LEAF_INPLACE = "a leaf Variable that requires grad has been used in an in-place operation."
_ERR_TWICE = "trying to differentiate twice a function that was marked with @once_differentiable"


class FunctionCtx:
    """The ``ctx`` methods available in ``forward`` / ``setup_context``."""

    def save_for_backward(self, *tensors):
        """Save tensors (or None) for ``backward``; read them back as ``ctx.saved_tensors``.

        Saving goes through SavedTensor, so modifying a saved tensor in place before
        backward raises, and saved-tensor hooks apply.
        """
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save variables, but argument {i} "
                                f"is of type {type(t).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        """Save tensors (or None) for ``jvp``; read them back there as
        ``ctx.saved_tensors``."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_forward expects all arguments to be tensors; but "
                                f"got unexpected type: {type(t).__name__}")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Mark input tensors that ``forward`` modified in place; they must be returned."""
        self.dirty_tensors = args

    def mark_non_differentiable(self, *args):
        """Mark outputs that do not require grad; backward still gets a (zero) gradient."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """With False, undefined output gradients reach ``backward`` as None, not zeros."""
        self.materialize_grads = bool(value)


class BackwardCFunction(Node, FunctionCtx):
    """The node of one ``Function.apply`` call, and its ``ctx``."""

    _forward_cls = None

    def __init__(self, next_functions):
        super().__init__(next_functions)
        self.to_save = None
        self.dirty_tensors = None
        self.non_differentiable = None
        self.materialize_grads = True
        self.needs_input_grad = ()
        self._saved = None
        self._is_tensor_input = ()
        self._out_meta = ()
        self._nondiff_outputs = frozenset()
        self.num_outputs = 1

    @property
    def saved_tensors(self):
        if getattr(self, "_in_jvp", False):
            return tuple(getattr(self, "saved_for_forward", ()))
        saved = self._saved
        if saved is None:
            if self.to_save is not None:  # read inside forward, before packing
                return tuple(self.to_save)
            return ()
        return tuple(s.unpack(self) for s in saved)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'",
                      DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    @property
    def _raw_saved_tensors(self):
        return tuple(self._saved or ())

    def release_variables(self):
        # NOTE [Releasing saved values] in engine.py
        return release_saved(self._saved) if self._saved is not None else True

    def apply(self, grads):
        cls = self._forward_cls
        if self.materialize_grads:
            # torch's ctx._materialize_non_diff_grads = False leaves the outputs marked
            # non-differentiable at None
            keep = () if getattr(self, "_materialize_non_diff_grads", True) \
                else self._nondiff_outputs
            grads = [_zeros(m) if g is None and m is not None and i not in keep else g
                     for i, (g, m) in enumerate(zip(grads, self._out_meta))]
        result = _user_backward(cls)(self, *grads)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._is_tensor_input)
        if len(result) != n:
            if len(result) > n and all(r is None for r in result[n:]):
                result = result[:n]
            else:
                raise RuntimeError(f"function {self.name()} returned an incorrect number of "
                                   f"gradients (expected {n}, got {len(result)})")
        out = []
        for i, (r, is_t) in enumerate(zip(result, self._is_tensor_input)):
            if not is_t:
                if r is not None:
                    raise RuntimeError(f"function {self.name()} returned a gradient different "
                                       f"than None at position {i + 1}, but the corresponding "
                                       f"forward input was not a Variable")
                continue
            if r is not None and not isinstance(r, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(r).__name__})")
            out.append(r)
        return [_post(r, m, self, i) for i, (r, m) in enumerate(zip(out, self._in_meta))]


def _user_backward(cls):
    """The class's ``backward`` or ``vjp`` (torch allows either, not both)."""
    has_bw = cls.backward is not Function.backward
    has_vjp = cls.vjp is not Function.vjp
    if has_bw and has_vjp:
        raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                           "not allowed. You should only implement one of them.")
    return cls.vjp if has_vjp else cls.backward


def _zeros(meta):
    return Tensor._make(jnp.zeros(meta[0], meta[1]))


_ERR_FUNC_SETUP = ("In order to use an autograd.Function with functorch transforms (vmap, grad, "
                   "jvp, jacrev, ...), it must override the setup_context staticmethod. For more "
                   "details, please see https://pytorch.org/docs/main/notes/extending.func.html")


def _check_vmap_support(cls, setup):
    """torch's errors for a Function called inside wgrad.func.vmap; one with
    ``generate_vmap_rule = True`` runs traced (docs/differences.md, wgrad.func)."""
    if not setup:
        raise RuntimeError(_ERR_FUNC_SETUP)
    if not getattr(cls, "generate_vmap_rule", False):
        raise RuntimeError(f"You tried to vmap over {cls.__name__}, but it does not have vmap "
                           f"support. Please override and implement the vmap staticmethod or "
                           f"set generate_vmap_rule=True. For more details, please see "
                           f"https://pytorch.org/docs/main/notes/extending.func.html")


def _setup_context_defined(cls):
    for c in cls.__mro__:
        if c is Function:
            return False
        if "setup_context" in c.__dict__:
            return True
    return False


class Function:
    """Base class for custom differentiable operations (torch.autograd.Function).

    Example
    -------
    A holomorphic function returns ``grad * f'(z).conj()`` (NOTE [Conjugate Wirtinger
    convention]):

    >>> import wgrad
    >>> class Square(wgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, z):
    ...         ctx.save_for_backward(z)
    ...         return z * z
    ...     @staticmethod
    ...     def backward(ctx, grad):
    ...         z, = ctx.saved_tensors
    ...         return grad * (2 * z).conj()
    >>> z = wgrad.tensor(1 + 2j, requires_grad=True)
    >>> Square.apply(z).grad_fn.name()
    'SquareBackward'
    >>> wgrad.autograd.grad(Square.apply(z), z, wgrad.tensor(1 + 0j))
    (tensor(2.-4.j),)
    """

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardCFunction,),
                                 {"_forward_cls": cls, "__module__": cls.__module__})

    def __init__(self, *args, **kwargs):
        warnings.warn(f"{self.__class__} should not be instantiated. Methods on autograd "
                      f"functions are all static, so you should invoke them on the class "
                      f"itself. Instantiating an autograd function will raise an error in a "
                      f"future version of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(_ERR_LEGACY)

    @staticmethod
    def forward(ctx, *args, **kwargs):
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward "
                                  "mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    # torch.func's vmap rule for the Function (wgrad.func batches by tracing instead)
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError("To use autograd.Function with vmap, you must either "
                                  "override the vmap staticmethod or set "
                                  "generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run ``forward`` on ``args`` and record the ``<ClassName>Backward`` node."""
        setup = _setup_context_defined(cls)
        if _grad_state.vmap_depth:
            _check_vmap_support(cls, setup)
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        elif kwargs:
            bound = inspect.signature(cls.forward).bind(None, *args, **kwargs)
            args, kwargs = bound.args[1:], bound.kwargs
        is_tensor = tuple(isinstance(a, Tensor) for a in args)
        needs = tuple(t and a.requires_grad for a, t in zip(args, is_tensor))
        executable = _grad_state.grad and any(needs)
        edges = tuple(a._gradient_edge() if n else (None, 0)
                      for a, t, n in zip(args, is_tensor, needs) if t)
        ctx = cls._backward_cls(edges if executable else ())
        ctx.needs_input_grad = needs
        ctx._is_tensor_input = is_tensor

        dual = _fw.state.active and any(t and _fw.get_tangent(a) is not None
                                        for a, t in zip(args, is_tensor))
        prev = _grad_state.grad
        _grad_state.grad = False
        if dual:  # NOTE [Custom Function tangents]
            _fw.state.active = False
        try:
            if setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        finally:
            _grad_state.grad = prev
            if dual:
                _fw.state.active = True
            # NOTE [Lazy backward groups]: this node's number predates the ops its forward
            # recorded, and its backward may run them (a reentrant backward through a value
            # kept on ctx): an op of its outputs must not join their group
            _lazy_group.ref = None
        out = _wrap_outputs(ctx, args, output, executable)
        if dual:
            _forward_tangents(cls, ctx, args, out)
        return out


# NOTE [Custom Function tangents]
# When an input of ``apply`` is dual, ``forward`` runs with forward AD off (the Function
# is one primitive, as in torch) and ``jvp(ctx, *tangents)`` gives the outputs' tangents:
# it receives one tangent per input (zeros for a float or complex tensor without one,
# None for any other input) and reads ``ctx.save_for_forward``'s tensors as ``ctx.saved_tensors``. A
# non-differentiable output must get None; an output marked dirty must get its input's
# tangent, modified in place.
_ERR_JVP_NONDIFF = ("Function's jvp returned a gradient at position {}, but  the "
                    "corresponding forward output is not a differentiable Tensor.You should "
                    "return None at that position instead.")
_ERR_JVP_DIRTY = ("An inplace custom Function is not modifying the forward mode gradients "
                  "inplace. If the forward is modifying an input inplace, then the jvp "
                  "function must modify the corresponding gradient inplace.")


def _check_view_tangent(o, t, args, tans):
    """An output that is an input, or a view of one, needs a tangent that is a view of
    that input's tangent (of its base when the tangent is itself a view)."""
    for a, ta in zip(args, tans):
        if ta is None:
            continue
        b = o._base
        if not (o is a or (b is not None and (b is a or b is a._base))):
            continue
        if t._base is None:
            raise RuntimeError("A custom Function's forward is returning a view (or an input "
                               "as-is) but the jvp is not returning a view.")
        if ta._base is None and t._base is not ta:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the given grad input.")
        if ta._base is not None and t._base is not ta._base:
            raise RuntimeError("A custom Function is returning a view but the jvp is not "
                               "returning a view of the same base as the given grad input.")
        return


def _forward_tangents(cls, ctx, args, output):
    tans = []
    for a in args:
        if not isinstance(a, Tensor) or a._data.dtype.kind not in "fcV":
            tans.append(None)
            continue
        t = _fw.get_tangent(a)
        tans.append(t if t is not None else Tensor._make(jnp.zeros_like(a._data)))
    versions = [t._vc.v if isinstance(t, Tensor) else None for t in tans]
    ctx._in_jvp = True
    try:
        res = cls.jvp(ctx, *tans)
    finally:
        ctx._in_jvp = False
    outs = output if isinstance(output, tuple) else (output,)
    res = res if isinstance(res, tuple) else (res,)
    if len(res) != len(outs):
        raise RuntimeError(f"Function's jvp returned an invalid number of forward gradients "
                           f"(expected {len(outs)} but got {len(res)})")
    nondiff = {id(t) for t in (ctx.non_differentiable or ())}
    dirty = {id(t) for t in (ctx.dirty_tensors or ())}
    for i, (o, t) in enumerate(zip(outs, res)):
        if (not isinstance(o, Tensor) or id(o) in nondiff
                or o._data.dtype.kind not in "fcV"):
            if t is not None:
                raise RuntimeError(_ERR_JVP_NONDIFF.format(i))
            continue
        if t is None:
            continue
        if id(o) in dirty:
            if not any(t is ta and ta._vc.v != v
                       for a, ta, v in zip(args, tans, versions) if a is o):
                raise RuntimeError(_ERR_JVP_DIRTY)
        else:
            _check_view_tangent(o, t, args, tans)
        if tuple(t.shape) != tuple(o.shape):
            raise RuntimeError(
                f"Trying to set a forward gradient that has a different size than that of "
                f"the original Tensor, this is not supported. Tensor is of size "
                f"{list(o.shape)} while the given forward gradient is of size "
                f"{list(t.shape)}.")
        _fw.set_tangent(o, t)


class InplaceFunction(Function):
    """A Function whose forward may work in place, as torch's: ``inplace`` is stored."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace


_ERR_DIRTY_VIEW = (
    "If your Function modifies inplace an input that is a view of another Tensor, your "
    "Function cannot return more than one Tensor. This is not supported by the current "
    "autograd engine. You should either make sure the input is not a view (using .clone() "
    "for example) or make your Function only return one Tensor (potentially splitting it "
    "into two Functions: one doing the inplace that returns a single Tensor and a second one "
    "that does the other operations). You can ask on the forum https://discuss.pytorch.org/ "
    "if you need help to do this change.")


def _wrap_outputs(ctx, args, output, executable):
    """Link tensor outputs to ``ctx`` (torch's _wrap_outputs), then pack saved tensors."""
    is_tuple = isinstance(output, tuple)
    outs = list(output) if is_tuple else [output]
    inputs = {id(a): a for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in (ctx.dirty_tensors or ()) if isinstance(t, Tensor)}
    nondiff = {id(t) for t in (ctx.non_differentiable or ()) if isinstance(t, Tensor)}
    if dirty and not dirty <= {id(o) for o in outs}:
        raise RuntimeError(_ERR_DIRTY)
    if not dirty <= set(inputs):
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                      "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                      UserWarning, stacklevel=3)
    if executable and _anomaly._state.enabled:
        _anomaly._record_forward(ctx)
    meta = []
    for i, o in enumerate(outs):
        if not isinstance(o, Tensor):
            meta.append(None)
            continue
        meta.append((o._data.shape, o._data.dtype))
        if not executable:
            continue
        is_input = id(o) in inputs
        if id(o) in dirty:
            if o._grad_fn is None and o._requires_grad:
                raise RuntimeError(_ERR_LEAF_INPLACE)
            if o._base is not None and sum(isinstance(x, Tensor) for x in outs) > 1:
                raise RuntimeError(_ERR_DIRTY_VIEW)
        elif is_input:
            o = outs[i] = _alias(o)
        differentiable = id(o) not in nondiff and o._data.dtype.kind in "fcV"
        if differentiable:
            o._grad_fn = ctx
            o._output_nr = i
            if id(o) in dirty and o._base is not None and o._view_meta is not None:
                rebase_view_history(o)  # CopySlices on the base, as torch
        elif id(o) in dirty or is_input:
            o._grad_fn = None
            o._requires_grad = False
    if _grad_state.grad:  # NOTE [View creation meta]
        kind = MULTI_OUTPUT if len(outs) > 1 else IN_CUSTOM_FUNCTION
        for o in outs:
            if isinstance(o, Tensor) and o._base is not None and o._data.dtype.kind in "fcV":
                set_creation(o, kind)
    ctx._out_meta = tuple(meta)
    ctx._nondiff_outputs = frozenset(i for i, o in enumerate(outs) if id(o) in nondiff)
    ctx.num_outputs = len(outs)
    if executable:
        ctx._in_meta = tuple((a._data.shape, a._data.dtype) for a in args
                             if isinstance(a, Tensor))
        if ctx.to_save is not None:
            out_ids = {id(o) for o in outs if isinstance(o, Tensor) and o._grad_fn is ctx}
            ctx._saved = tuple(SavedTensor(t, is_output=t is not None and id(t) in out_ids)
                               for t in ctx.to_save)
            ctx.to_save = None
    return tuple(outs) if is_tuple else outs[0]


def _alias(t):
    """A new tensor object over the same data and version counter (torch's view_as)."""
    a = Tensor._make(t._data)
    a._vc = t._vc
    a._base = t if t._base is None else t._base
    return a


# -- once_differentiable --------------------------------------------------------------

def _fake_leaf(t):
    if not isinstance(t, Tensor) or t._data.dtype.kind not in "fcV":
        return (None, 0)
    leaf = Tensor._make(t._data)
    leaf.requires_grad_(True)
    return leaf._gradient_edge()


def once_differentiable(fn):
    """Decorate ``backward`` to run it without recording: its result cannot be
    differentiated again (doing so raises, as in torch).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.autograd.function import once_differentiable
    >>> class Exp(wgrad.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         y = x.exp()
    ...         ctx.save_for_backward(y)
    ...         return y
    ...     @staticmethod
    ...     @once_differentiable
    ...     def backward(ctx, grad):
    ...         y, = ctx.saved_tensors
    ...         return grad * y.conj()
    """
    @functools.wraps(fn)
    def wrapper(ctx, *args):
        prev = _grad_state.grad
        _grad_state.grad = False
        try:
            outputs = fn(ctx, *args)
        finally:
            _grad_state.grad = prev
        if not prev:
            return outputs
        if not any(isinstance(a, Tensor) and a.requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        outs = (outputs,) if single else outputs
        # as torch: the node's inputs are fresh leaves over the outputs, so that it has a
        # grad_fn; it never reaches the graph that computed them
        err = Error(_ERR_TWICE, tuple(_fake_leaf(o) for o in outs), len(outs))
        wrapped = tuple(Tensor._make(o._data, err, i) if isinstance(o, Tensor) else o
                        for i, o in enumerate(outs))
        return wrapped[0] if single else wrapped
    return wrapper
