"""In-place ops: the ``_`` variants, ``__setitem__``, writing through views (NOTE
[Views] in _views.py).

# NOTE [In-place ops]
# JAX arrays are immutable, so an in-place op computes the new value out of place from a
# *snapshot* of the tensor (a fresh Tensor with the same array and gradient edge, so a
# formula that needs the old value saves the snapshot: torch's clone of original_self for
# free), then rebinds ``_data``, bumps the version counter shared by every alias of the
# data, and rewrites the graph: the tensor's grad_fn becomes the op's node (output_nr 0).
# Saved ``result``s of that node are re-pointed at the tensor's counter, at the new
# version, so a later in-place change of the tensor is caught (NOTE [Saved tensor versions]).
"""
import math
import operator
import warnings
from weakref import ref as _weakref

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._creation import _host_memory, _lock as _rng_lock, _num, _random, _rng, tensor
from .._tensor import Tensor, _make
from .._autograd import forward_ad as _fw
from .._autograd.grad_mode import _state
from .._autograd.saved import SavedTensor
from . import elementwise as _E
from . import indexing as _I
from . import linear_algebra as _L
from . import reduction as _R
from . import shape as _S
from ._primitive import OpNode, Primitive
from ._out import _CPP, kind_rank
from .compare import _check_tensor
from ._views import _replay, _write, _write_raw, check_view_inplace, rebind as _rebind
from ._views import fill_chain, split_chain, write_filled
from ._views import storage_ids

# elementwise ops whose ``<name>_`` variant torch has
_ELEMENTWISE = (
    "add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "neg",
    "negative", "pow", "reciprocal", "square", "exp", "log", "log2", "log10", "log1p",
    "expm1", "sqrt", "rsqrt", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
    "tanh", "sigmoid", "relu", "erf", "abs", "absolute", "sgn", "sign", "conj_physical",
    "clamp", "clip", "masked_fill", "floor", "ceil", "round", "trunc", "frac", "atan2",
    "hypot", "lerp", "addcmul", "addcdiv", "exp2", "deg2rad", "rad2deg", "eq", "ne", "lt",
    "le", "gt", "ge", "bitwise_not", "bitwise_and", "bitwise_or", "bitwise_xor",
    "logical_not", "logical_and", "logical_or", "logical_xor", "lgamma", "digamma",
    "polygamma", "erfinv", "erfc", "xlogy", "fmod", "nan_to_num", "logit", "sinc",
    "heaviside", "copysign", "clamp_min", "clamp_max", "igamma", "igammac", "float_power",
    "gcd", "lcm", "i0", "ldexp", "nextafter", "mvlgamma", "bitwise_left_shift",
    "bitwise_right_shift", "arccos", "arcsin", "arctan", "arctan2", "divide", "multiply",
    "subtract", "greater", "greater_equal", "less", "less_equal", "not_equal", "fix")
_OTHER = {"cumsum": _R, "cumprod": _R, "addmm": _L, "addmv": _L, "addbmm": _L,
          "baddbmm": _L, "addr": _L, "renorm": _R}
_INDEXING = ("index_put", "index_add", "index_copy", "index_reduce", "scatter", "scatter_add",
             "masked_scatter", "put", "index_fill", "scatter_reduce", "tril", "triu")

__all__ = ([n + "_" for n in _ELEMENTWISE] + [n + "_" for n in _INDEXING] +
           [n + "_" for n in _OTHER] +
           ["copy_", "zero_", "fill_", "normal_", "uniform_", "bernoulli_", "exponential_",
            "asinh_", "acosh_", "atanh_", "fill_diagonal_", "arcsinh_", "arccosh_", "arctanh_",
            "fill", "as_strided_"])

# in-place view ops: Tensor methods only, as in torch
_VIEW_METHODS = ("transpose_", "t_", "squeeze_", "unsqueeze_", "swapdims_", "swapaxes_",
                 "set_", "resize_", "resize_as_")
# torch's in-place random fills and Python callbacks: Tensor methods only
_METHODS_ONLY = ("random_", "cauchy_", "geometric_", "log_normal_", "apply_", "map_",
                 "map2_", "resize", "resize_as")

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = (tuple(n for n in __all__ if n.endswith("_"))  # fill: torch.fill only
           + _VIEW_METHODS + _METHODS_ONLY)

_ERR_LEAF = "a leaf Variable that requires grad is being used in an in-place operation."
_ERR_VIEW_LEAF = ("a view of a leaf Variable that requires grad is being used in an in-place "
                  "operation.")
_ERR_INFERENCE = ("Inplace update to inference tensor outside InferenceMode is not allowed."
                  "You can make a clone to get a normal tensor before doing inplace update."
                  "See https://github.com/pytorch/rfcs/pull/17 for more details.")
_ERR_OVERLAP = ("unsupported operation: more than one element of the written-to tensor "
                "refers to a single memory location. Please clone() the tensor before "
                "performing the operation.")


# CopySlices: base with the view region replaced by src (torch's CopySlices node)
# (``values``: the chain's index values, NOTE [Index values in view chains])
_mask_slices = Primitive(
    "mask_slices", lambda self, values, *, chain: write_filled(chain, self, 0, values),
    self=lambda grad, values, chain: _mask_slices(grad, _I._raw(values), chain=chain))
_copy_slices_prim = Primitive(
    "copy_slices", lambda self, src, values, *, chain: write_filled(chain, self, src, values),
    node_name="CopySlices",
    self=lambda grad, values, chain: _mask_slices(grad, _I._raw(values), chain=chain),
    src=lambda grad, values, chain: _replay(fill_chain(chain, _I._raw(values)), grad))


def _copy_slices(base, src, chain):
    structure, values = split_chain(chain)
    return _copy_slices_prim(base, src, values, chain=structure)


# ======================================================================================
# The in-place protocol (NOTE [In-place ops])
# ======================================================================================

def _check(t):
    if _state.grad:
        check_view_inplace(t, False)  # NOTE [View creation meta]
        if t._grad_fn is None and t._requires_grad:
            raise RuntimeError(_ERR_LEAF)
        b = t._base
        if b is not None and b._grad_fn is None and b._requires_grad:
            raise RuntimeError(_ERR_VIEW_LEAF)
    if t._is_inference and not _state.inference:
        raise RuntimeError(_ERR_INFERENCE)
    m = t._view_meta
    if m is not None and not m.writable:
        # the chain repeats elements (expand, as_strided); this view may still not
        ids = storage_ids(t)[0]
        if ids is None or np.unique(ids).size != ids.size:
            raise RuntimeError(_ERR_OVERLAP)


def _snapshot(t):
    s = _make(t._data, t._grad_fn, t._output_nr)
    s._requires_grad = t._requires_grad
    s._grad_acc = t._grad_acc
    return s


def _conform(t, out):
    if not isinstance(out, Tensor):
        out = _make(jnp.asarray(out))
    if out._data.shape != t._data.shape:
        raise RuntimeError(f"output with shape {list(t.shape)} doesn't match the broadcast "
                           f"shape {list(out.shape)}")
    if out._data.dtype != t._data.dtype:
        if kind_rank(out._data.dtype) > kind_rank(t._data.dtype):
            raise RuntimeError(f"result type {out.dtype.scalar_name} can't be cast to the "
                               f"desired output type {t.dtype.scalar_name}")
        out = out.to(t.dtype)
    return out


def _adopt_saved(out, vc, version):
    node = out._grad_fn
    if not isinstance(node, OpNode):
        return
    for v in node.saved.values():
        for s in (v if isinstance(v, tuple) else (v,)):
            if isinstance(s, SavedTensor) and s._vc is out._vc:
                s._vc, s._version = vc, version


def _rehome(t, fn, nr):
    """Give ``t`` the history ``(fn, nr)``; a retain_grad hook moves along with it (torch
    moves it to the new grad_fn, so ``.grad`` is that of the latest version)."""
    if t._retains_grad:
        t._ungroup()  # the hook sits on its OpNode (NOTE [Lazy backward groups])
    old, old_nr = t._grad_fn, t._output_nr
    t._grad_fn, t._output_nr = fn, nr
    if t._retains_grad and old is not None and (old is not fn or old_nr != nr):
        hooks = old._retains_grad_hooks
        hook = hooks.pop(old_nr, None) if hooks else None
        if hook is not None and fn is not None:
            fn._set_retains_grad_hook(nr, hook)


def _apply(t, compute):
    """Run ``compute(snapshot_of_t)`` and make its value and history ``t``'s."""
    _check(t)
    b = t._base
    if b is not None and _state.grad and t._grad_fn is not None and (
            b._grad_fn is not None or b._requires_grad):
        # the op's input is the view replayed on the base, not the view's own node: as in
        # torch's CopySlices, hooks registered on the view before the change do not fire
        snap = _replay(t._view_meta.bchain, _snapshot(b))
    else:
        snap = _snapshot(t)
    if _fw.state.active:
        _fw.set_tangent(snap, _fw.get_tangent(t))
    out = _conform(t, compute(snap))
    vc = t._vc
    version = vc.v + 1
    rec = out._grad_fn is not None
    if rec:
        check_view_inplace(t, True)
    if rec:
        _adopt_saved(out, vc, version)
    base = t._base
    regraph = False
    if base is not None and _state.grad and (rec or base._grad_fn is not None):
        bnew = _copy_slices(_snapshot(base), out, chain=t._view_meta.bchain)
        _write(base, bnew._data)
        _rehome(base, bnew._grad_fn, 0)
        regraph = True
    else:
        _write(t, out._data)
        if base is None and _state.grad and (rec or snap.requires_grad):
            # a non-differentiable result (lt_, floor_ on ints...) cuts the history
            _rehome(t, *((out._grad_fn, out._output_nr) if rec else (None, 0)))
            regraph = t._view_meta is not None
    vc.v = version
    if _fw.state.active:
        _inplace_tangent(t, out)
    if regraph:
        for a in t._view_meta.storage.live():
            b = a._base
            if b is not None and b._grad_fn is not None:
                r = _replay(a._view_meta.bchain, b)
                _rehome(a, r._grad_fn, r._output_nr)
    return t


def rebase_view_history(t):
    """A custom Function changed the view ``t`` in place (``ctx.mark_dirty``) and ``t``'s
    history is now its node: the base's history becomes CopySlices over it and every view
    of the base is regenerated, as for a built-in in-place op (NOTE [Views])."""
    base = t._base
    out = _make(t._data, t._grad_fn, t._output_nr)
    bnew = _copy_slices(_snapshot(base), out, chain=t._view_meta.bchain)
    _rehome(base, bnew._grad_fn, 0)
    for a in t._view_meta.storage.live():
        b = a._base
        if b is not None and b._grad_fn is not None:
            r = _replay(a._view_meta.bchain, b)
            _rehome(a, r._grad_fn, r._output_nr)


def _inplace_tangent(t, out):
    """The tangent of ``out`` becomes ``t``'s, written into its base's tangent and seen
    by every view of that base, as the values are (NOTE [Tangents of primitives])."""
    to = _fw.get_tangent(out)
    base = t._base if t._base is not None else t
    bt = _fw.get_tangent(base)
    if to is None and bt is None:
        return
    if base is t:
        new = to
    else:
        if to is None:
            to = _make(jnp.zeros_like(t._data))
        braw = bt._data if bt is not None else jnp.zeros_like(base._data)
        new = _make(_write_raw(t._view_meta.bchain, braw, to._data))
    _fw.set_tangent(base, new)
    m = t._view_meta
    st = m.storage if m is not None else None
    for a in (st.live() if st is not None else ()):
        if a._base is base:
            _fw.set_tangent(a, _replay(a._view_meta.bchain, new) if new is not None else None)


def _variant(module, name):
    def inplace(input, *args, **kwargs):
        fn = getattr(module, name)
        if name in ("abs", "absolute") and input.is_complex():  # a real result: torch raises
            raise RuntimeError("In-place abs is not supported for complex tensors.")
        if name == "ldexp" and not (input.is_floating_point() or input.is_complex()):
            raise RuntimeError(f"ldexp can't be cast to the desired output type "
                               f"{input.dtype.scalar_name}")
        if name == "mvlgamma":
            _E.mvlgamma_args(input, *args, **kwargs)  # torch's argument errors come first
            if not input.is_floating_point():
                raise RuntimeError(f"mvlgamma: result type {input.dtype.scalar_name} can't be "
                                   f"cast to the desired output type "
                                   f"{D.get_default_dtype().scalar_name}")
        if name == "float_power" and input.dtype not in (D.float64, D.complex128):
            want = "ComplexDouble" if input.is_complex() else "Double"
            raise RuntimeError(f"the base given to float_power_ has dtype "
                               f"{input.dtype.scalar_name} but the operation's result "
                               f"requires dtype {want}")

        def compute(s):
            return fn(s, *[s if a is input else a for a in args], **kwargs)
        return _apply(input, compute)
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = (f"In-place version of :func:`wgrad.{name}`: writes the result into "
                       f"``input`` (and through to its base if it is a view), bumps its "
                       f"version and returns it.")
    return inplace


for _n in _ELEMENTWISE:
    globals()[_n + "_"] = _variant(_E, _n)
for _n in _INDEXING:
    globals()[_n + "_"] = _variant(_I, _n)
for _n, _m in _OTHER.items():
    globals()[_n + "_"] = _variant(_m, _n)
del _n, _m


# logical ops in place: torch records no node for them (they have no derivative), so the
# tensor keeps its history and its gradient ignores the change (even on a leaf that requires
# grad): the write happens as under no_grad, and the version counter is bumped
def _logical_variant(name):
    variant = globals()[name + "_"]

    def inplace(input, *args, **kwargs):
        prev, _state.grad = _state.grad, False
        try:
            return variant(input, *args, **kwargs)
        finally:
            _state.grad = prev
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = (f"In-place :func:`wgrad.{name}` in ``input``'s dtype; as torch's, it "
                       f"records no node (the tensor keeps its history).")
    return inplace


for _n in ("logical_not", "logical_and", "logical_or", "logical_xor"):
    globals()[_n + "_"] = _logical_variant(_n)
del _n


# comparisons in place: the result takes ``input``'s dtype, so a float input inside
# autograd keeps a node, whose gradient is zero (torch's EqBackward0 for a number, 1 for a
# tensor, and so on); the aliases (greater_, not_equal_...) record their op's node
_COMPARISONS = {"eq": jnp.equal, "ne": jnp.not_equal, "lt": jnp.less, "le": jnp.less_equal,
                "gt": jnp.greater, "ge": jnp.greater_equal}
_COMPARISON_ALIASES = {"greater": "gt", "greater_equal": "ge", "less": "lt",
                       "less_equal": "le", "not_equal": "ne"}


def _comparison_variant(name):
    op = _COMPARISON_ALIASES.get(name, name)
    cmp = _COMPARISONS[op]
    prim = Primitive(
        op + "_", lambda self, other, *, dtype: cmp(self.astype(dtype), jnp.asarray(
            other, dtype)).astype(self.dtype),
        scalar_overload=True,
        node_name_of=lambda akey, in_meta: _camel_backward(op, "0" if in_meta[1] is None
                                                           else "1"),
        self=_E._zero_grad, other=_E._zero_grad)
    def inplace(input, other):
        def compute(s):
            o = s if other is input else other
            d = _E.result_type(s, o)
            if d.is_complex and op not in ("eq", "ne"):  # as the out-of-place op: no order
                raise NotImplementedError(f'"{op}_cpu" not implemented for '
                                          f"'{d.scalar_name}'")
            return prim(s, o, dtype=d.np)
        return _apply(input, compute)
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = (f"In-place version of :func:`wgrad.{name}`: ``input`` becomes the "
                       f"comparison's result in its own dtype (zero gradient, as torch's).")
    return inplace


for _n in (*_COMPARISONS, *_COMPARISON_ALIASES):
    globals()[_n + "_"] = _comparison_variant(_n)
del _n


# inverse hyperbolic functions in place: torch has no derivative for them
def _no_derivative_variant(name):
    fwd = getattr(jnp, "arc" + name[1:])
    prim = Primitive(name + "_", lambda self: fwd(self),
                     node_name=_camel_backward(name, "1"),
                     self=_E._no_derivative(f"inplace version of {name}"))

    def inplace(input):
        return _apply(input, lambda s: _E._unary_float(prim, s))
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = (f"In-place ``{name}``; as torch, its derivative is not implemented "
                       f"(use :func:`wgrad.{name}`).")
    return inplace


def _camel_backward(name, n):
    return name.capitalize() + "Backward" + n


asinh_ = _no_derivative_variant("asinh")
acosh_ = _no_derivative_variant("acosh")
atanh_ = _no_derivative_variant("atanh")
arcsinh_, arccosh_, arctanh_ = asinh_, acosh_, atanh_


# ======================================================================================
# In-place view ops: transpose_, t_, squeeze_, unsqueeze_, swapdims_, as_strided_
# ======================================================================================

def _view_inplace(t, fn):
    """Make ``t`` the view ``fn(t)``: its data, history and place in the view chain
    change, it stays a view of the same base (or no view), keeps its creation mark (NOTE
    [View creation meta]) and its version is bumped."""
    _check(t)
    m = t._view_meta
    creation, label = (m.creation, m.label) if m is not None else (0, None)
    r = fn(t)
    if r is t:
        return t
    rm = r._view_meta
    st = rm.storage
    st.aliases = [w for w in st.aliases if w() is not r]
    if all(w() is not t for w in st.aliases):
        st.aliases.append(_weakref(t))
    t._data = r._data
    t._view_meta = rm
    rm.creation, rm.label = creation, label
    if t._base is None:
        rm.bchain = ()
    if r._grad_fn is not None:
        _rehome(t, r._grad_fn, r._output_nr)
    t._vc.v += 1
    return t


def transpose_(input, dim0, dim1):
    return _view_inplace(input, lambda s: _S.transpose(s, dim0, dim1))


def swapdims_(input, dim0, dim1):
    return transpose_(input, dim0, dim1)


swapaxes_ = swapdims_


def t_(input):
    return _view_inplace(input, _S.t)


def squeeze_(input, dim=None):
    return _view_inplace(input, lambda s: _S.squeeze(s, dim))


def unsqueeze_(input, dim):
    return _view_inplace(input, lambda s: _S.unsqueeze(s, dim))


def as_strided_(input, size, stride, storage_offset=None):
    return _view_inplace(input, lambda s: _S.as_strided(s, size, stride, storage_offset))


def set_(input, source=None, storage_offset=0, size=None, stride=None):
    """Make ``input`` an alias of ``source``'s data (torch's ``set_(Tensor)``); its version
    is bumped and its gradient accumulator is a new one, as torch."""
    _check(input)
    if source is None:
        source = _make(jnp.zeros((0,), input._data.dtype))
    elif not isinstance(source, Tensor):
        raise TypeError("set_() with a storage is not supported by wgrad; pass a tensor")
    if size is not None:
        source = _S.as_strided(source, size, stride, storage_offset)
    _rebind(input, source)
    input._grad_acc = None
    input._vc.v += 1
    return input


def resize_(input, *sizes, memory_format=None):
    """Resize ``input`` in place: the leading elements are kept, new ones are zeros
    (torch leaves them uninitialized). A no-op when the shape is already ``sizes``."""
    shape = _S._new_size(sizes, input._data.dtype.itemsize)
    if shape == tuple(input.shape):
        return input
    if input.requires_grad:
        raise RuntimeError("cannot resize variables that require grad")
    n = int(np.prod(shape, dtype=np.int64))
    flat = input._data.reshape(-1)[:n]
    flat = jnp.concatenate([flat, jnp.zeros((n - flat.size,), flat.dtype)])
    _rebind(input, _make(flat.reshape(shape)))
    input._vc.v += 1
    return input


def resize_as_(input, the_template, memory_format=None):
    return resize_(input, tuple(the_template.shape))


def resize(input, *sizes):
    """Deprecated (torch warns): ``input`` viewed with ``sizes``, which must keep the
    number of elements (a copy where the layout has no such view).

    Example
    -------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     wgrad.arange(4.).resize(2, 2).shape
    wgrad.Size([2, 2])
    """
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return _resize(input, sizes)


def resize_as(input, tensor):
    """Deprecated (torch warns): ``input.resize(tensor.size())``."""
    warnings.warn("non-inplace resize_as is deprecated", UserWarning, stacklevel=2)
    return _resize(input, tuple(tensor.shape))


def _resize(input, sizes):
    n = math.prod(sizes)  # a tuple given as one argument makes torch's message too
    if n != input.numel():
        shown = "x".join(str(s) for s in sizes)
        raise RuntimeError(f"requested resize to {shown} ({n} elements in total), but the "
                           f"given tensor has a size of {'x'.join(map(str, input.shape))} "
                           f"({input.numel()} elements). autograd's resize can only change "
                           f"the shape of a given tensor, while preserving the number of "
                           f"elements. ")
    return _S.reshape(input, sizes)


# ======================================================================================
# Python callbacks: apply_, map_, map2_ (host-side loops, no autograd, as torch's)
# ======================================================================================

def _scalar_caster(d):
    """How torch unpacks a callback's Python result into an element of dtype ``d``."""
    if d is D.bool:
        return bool
    if d.is_complex:
        return complex
    if d.is_floating_point:
        def to_float(v):
            if isinstance(v, (str, bytes)) or not hasattr(v, "__float__"):
                raise TypeError(f"must be real number, not {type(v).__name__}")
            return float(v)
        return to_float
    return lambda v: int(v) if isinstance(v, float) else operator.index(v)


def _callback(name, input, others, fn):
    if input.requires_grad:
        raise RuntimeError(f"Can't call {name}() on Variable that requires grad. Use "
                           f"var.detach().{name}() instead.")
    arrays = [np.asarray(input._data)]
    for arg, t in others:
        if t.dtype is not input.dtype:
            raise TypeError(f"{name}: expected {input.type()} for {arg} (got {t.type()})")
        arrays.append(np.asarray(_S.expand(t, tuple(input.shape))._data))
    cast = _scalar_caster(input.dtype)
    flat = [a.reshape(-1).tolist() for a in arrays]
    out = np.array([cast(fn(*vs)) for vs in zip(*flat)], dtype=input._data.dtype)
    new = _make(jnp.asarray(out.reshape(input._data.shape)))
    return _apply(input, lambda s: new)


def apply_(input, callable):  # noqa: A002  (torch's parameter name)
    """Replace each element ``x`` of ``input`` (a tensor that does not require grad) by
    ``callable(x)``, in place; slow, as torch's, and run on the host.

    Example
    -------
    >>> wgrad.tensor([1, 2]).apply_(lambda x: x * 10)
    tensor([10, 20])
    """
    return _callback("apply_", input, (), callable)


def map_(input, tensor, callable):  # noqa: A002
    """Replace each element ``x`` of ``input`` by ``callable(x, y)``, ``y`` the element of
    ``tensor`` (broadcast to ``input``'s shape, of its dtype) at the same place.

    Example
    -------
    >>> wgrad.tensor([1., 2.]).map_(wgrad.tensor([10.]), lambda x, y: x + y)
    tensor([11., 12.])
    """
    return _callback("map_", input, (("'other'", tensor),), callable)


def map2_(input, x, y, callable):  # noqa: A002
    """``map_`` with two tensors: ``callable(a, b, c)`` of the elements of ``input``, ``x``
    and ``y`` at each place.

    Example
    -------
    >>> wgrad.zeros(2).map2_(wgrad.ones(2), wgrad.tensor([1., 2.]), lambda a, b, c: b + c)
    tensor([2., 3.])
    """
    return _callback("map2_", input, (("argument 'x'", x), ("argument 'y'", y)), callable)


# ======================================================================================
# copy_, zero_, fill_, __setitem__
# ======================================================================================

_zeros = Primitive("zeros_like", lambda self: jnp.zeros_like(self), self=lambda grad: None)


def _copy_fwd(self, src):
    return jnp.broadcast_to(_S.convert(src, self.dtype), self.shape)


_copy = Primitive("copy", _copy_fwd, node_name="CopyBackwards",
                  self=lambda grad: _zeros(grad), src=lambda grad: grad)
_zero = Primitive("zero", lambda self: jnp.zeros_like(self), node_name="ZeroBackward0",
                  self=lambda grad: _zeros(grad))


def _fill_fwd(self, value, *, inplace=False):  # inplace: names the node only
    if jnp.iscomplexobj(value) and not jnp.iscomplexobj(self):
        value = jnp.real(value)  # torch's cast, with its warning (_check_fill)
    return jnp.full_like(self, value)


# torch's nodes: FillBackward0/1 (fill with a number / a tensor), 2/3 (fill_)
_fill = Primitive("fill", _fill_fwd, scalar_overload=True,
                  node_name_of=lambda akey, in_meta:
                  f"FillBackward{2 * len(akey) + (in_meta[1] is not None)}",
                  self=lambda grad: _zeros(grad), value=lambda grad: grad.sum())


def _as_tensor(v, like):
    if isinstance(v, Tensor):
        return v
    return tensor(v, dtype=like.dtype if not isinstance(v, complex) else None)


def copy_(input, src, non_blocking=False):
    """Copy ``src`` (broadcast, cast to ``input``'s dtype) into ``input``.

    Example
    -------
    >>> x = wgrad.zeros(2, 3)
    >>> x[0].copy_(wgrad.tensor([1., 2., 3.]))
    tensor([1., 2., 3.])
    >>> x
    tensor([[1., 2., 3.],
            [0., 0., 0.]])
    """
    src = _as_tensor(src, input)
    a, b = tuple(input.shape), tuple(src.shape)
    if len(b) > len(a) or any(s not in (1, d) for s, d in zip(b[::-1], a[::-1])):
        if len(b) > len(a):
            raise RuntimeError(f"output with shape {list(a)} doesn't match the broadcast "
                               f"shape {list(np.broadcast_shapes(a, b))}")
        dim = next(i for i, (s, d) in enumerate(zip(b[::-1], a[::-1])) if s not in (1, d))
        raise RuntimeError(f"The size of tensor a ({a[-1 - dim]}) must match the size of "
                           f"tensor b ({b[-1 - dim]}) at non-singleton dimension "
                           f"{len(a) - 1 - dim}")
    return _apply(input, lambda s: _copy(s, src))


def zero_(input):
    """Fill ``input`` with zeros in place.

    Example
    -------
    >>> wgrad.ones(2).zero_()
    tensor([0., 0.])
    """
    return _apply(input, _zero)


def fill_(input, value):
    """Fill ``input`` with ``value`` (a number or a 0-d tensor) in place.

    Example
    -------
    >>> wgrad.zeros(2).fill_(3.)
    tensor([3., 3.])
    """
    _check_fill(input, value)
    return _apply(input, lambda s: _fill(s, value, inplace=True))


def fill(input, value):
    """A new tensor like ``input`` filled with ``value`` (a number or a 0-d tensor, which
    takes the gradient's sum): the out-of-place ``fill_``.

    Example
    -------
    >>> wgrad.fill(wgrad.zeros(2), 3.)
    tensor([3., 3.])
    """
    _check_tensor("fill", "input", 1, input)
    _check_fill(input, value)
    return _fill(input, value)


def _check_fill(input, value):
    """torch's checks of fill's value: a 0-d tensor (a complex one into a real tensor is
    cast, with torch's warning) or a number that fits the dtype."""
    if isinstance(value, Tensor):
        if value.ndim:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        if value.is_complex() and not input.is_complex():
            warnings.warn("Casting complex values to real discards the imaginary part",
                          UserWarning, stacklevel=3)
    elif isinstance(value, (int, float, complex)) or hasattr(value, "item"):
        _E.check_fill_value(input, value, fill=True)
    else:
        bad = (f"      didn't match because some of the arguments have invalid types: "
               f"(Tensor, !{type(value).__name__}!)\n")
        raise TypeError(f"fill() received an invalid combination of arguments - got (Tensor, "
                        f"{type(value).__name__}), but expected one of:\n"
                        f" * (Tensor input, Tensor value)\n{bad}"
                        f" * (Tensor input, Number value)\n{bad}")


def fill_diagonal_(input, fill_value, wrap=False):
    """Fill the main diagonal (``input[i, i, ...]``) with ``fill_value`` in place; with
    ``wrap`` a tall matrix's diagonal restarts below every ``ncols + 1`` rows.

    Example
    -------
    >>> wgrad.zeros(3, 2).fill_diagonal_(1.)
    tensor([[1., 0.],
            [0., 1.],
            [0., 0.]])
    """
    shape = tuple(input.shape)
    if len(shape) < 2:
        raise RuntimeError("dimensions must larger than 1")
    if len(shape) > 2 and len(set(shape)) != 1:
        raise RuntimeError("all dimensions of input must be of equal length")
    if _state.grad and input._grad_fn is None and input._requires_grad:
        raise RuntimeError(_ERR_VIEW_LEAF)  # torch fills a strided view of the input
    if isinstance(fill_value, Tensor):
        fill_value = fill_value.item()  # torch takes a Scalar: no gradient to it
    if wrap and len(shape) == 2:
        coords = np.unravel_index(np.arange(0, input.numel(), shape[1] + 1), shape)
    else:
        coords = (np.arange(min(shape)),) * len(shape)
    setitem(input, tuple(coords), fill_value)
    return input


def setitem(input, idx, value):
    """``input[idx] = value``: basic indices copy into a view (CopySlices), advanced
    indices go through ``index_put_``."""
    key, arrays = _I._normalize(input, idx)
    if not isinstance(value, Tensor):
        _E.check_fill_value(input, value, setitem=True)
    value = _as_tensor(value, input)
    if _I._is_view(key):  # basic indices: a view
        copy_(_I.getitem(input, idx), value)
        return
    if value.dtype is not input.dtype:
        value = value.to(input.dtype)
    _apply(input, lambda s: _I._index_put(s, arrays, value, key=key, accumulate=False))


# ======================================================================================
# In-place random fills: normal_, uniform_, bernoulli_, exponential_
# ======================================================================================

# the drawn value replaces the tensor: zero gradient to its old value, as torch
def _refill(name, node_name):
    return Primitive(name, lambda self, src: src, node_name=node_name,
                     self=lambda grad: _zeros(grad))


_REFILL = {n: _refill(n, b) for n, b in (
    ("normal", "NormalBackward0"), ("uniform", "UniformBackward0"),
    ("bernoulli", "BernoulliBackward2"), ("exponential", "ExponentialBackward0"),
    ("cauchy", "CauchyBackward0"), ("geometric", "GeometricBackward0"),
    ("log_normal", "LogNormalBackward0"), ("random_from_to", "RandomBackward0"),
    ("random_to", "RandomBackward1"), ("random", "RandomBackward2"))}


def _fill_random(input, name, draw, scale, generator, finish):
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        kernel = {"normal": "normal_kernel_cpu", "uniform": "check_uniform_bounds",
                  "exponential": "exponential_cpu"}.get(name)
        if kernel is not None:
            raise NotImplementedError(f'"{kernel}" not implemented for '
                                      f"'{d.scalar_name}'")
    r = _random(draw, scale, tuple(input.shape), generator, d if d.is_floating_point or
                d.is_complex else None, None, False)
    src = _make(jnp.asarray(finish(r._data), input._data.dtype))
    return _apply(input, lambda s: _REFILL[name](s, src))


def normal_(input, mean=0, std=1, *, generator=None):
    """Fill ``input`` in place with samples of N(mean, std**2) (complex: each part has
    variance std**2 / 2).

    Example
    -------
    >>> x = wgrad.zeros(1000).normal_(2., 0.5)
    >>> bool(abs(x.mean() - 2) < 0.1)
    True
    """
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std}")
    return _fill_random(input, "normal", np.random.Generator.standard_normal,
                        math.sqrt(0.5), generator, lambda a: a * std + mean)


def uniform_(input, from_=0, to=1, *, generator=None, **kwargs):
    """Fill ``input`` in place with samples of U[from, to) (complex: each part).

    Example
    -------
    >>> bool(((wgrad.zeros(100).uniform_(-1, 1)).abs() <= 1).all())
    True
    """
    from_ = kwargs.pop("from", from_)
    if kwargs:
        raise TypeError(f"uniform_() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if from_ > to:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={from_} > to={to}")
    return _fill_random(input, "uniform", np.random.Generator.random, 1, generator,
                        lambda a: a * (to - from_) + from_)


def bernoulli_(input, p=0.5, *, generator=None):
    """Fill ``input`` in place with 1 with probability ``p``, else 0.

    Example
    -------
    >>> wgrad.zeros(3).bernoulli_(1.)
    tensor([1., 1., 1.])
    """
    if input.is_complex():
        raise NotImplementedError(f'"bernoulli_scalar_cpu_" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    if not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return _fill_random(input, "bernoulli", np.random.Generator.random, 1, generator,
                        lambda a: a < p)


def cauchy_(input, median=0, sigma=1, *, generator=None):
    """Fill ``input`` in place with samples of the Cauchy distribution
    ``median + sigma * tan(pi * (U - 1/2))``.

    Example
    -------
    >>> wgrad.zeros(2).cauchy_(generator=None).shape
    wgrad.Size([2])
    """
    if not input.is_floating_point():
        raise RuntimeError(f"Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_CPP[input.dtype.name]}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={_num(sigma)}")
    return _fill_random(input, "cauchy", np.random.Generator.standard_cauchy, 1, generator,
                        lambda a: a * sigma + median)


def log_normal_(input, mean=1, std=2, *, generator=None):
    """Fill ``input`` in place with samples of ``exp(N(mean, std**2))``.

    Example
    -------
    >>> bool((wgrad.zeros(3).log_normal_() > 0).all())
    True
    """
    if not input.is_floating_point():
        raise NotImplementedError(f'"log_normal_cpu" not implemented for '
                                  f"'{input.dtype.scalar_name}'")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={_num(std)}")
    return _fill_random(input, "log_normal", np.random.Generator.standard_normal, 1,
                        generator, lambda a: jnp.exp(a * std + mean))


def geometric_(input, p, *, generator=None):
    """Fill ``input`` in place with the number of Bernoulli(``p``) trials up to the first
    success (1, 2, ...), in ``input``'s dtype.

    Example
    -------
    >>> bool((wgrad.zeros(3, dtype=wgrad.int64).geometric_(0.5) >= 1).all())
    True
    """
    d = input.dtype
    if d.is_complex or d is D.bool:
        raise NotImplementedError(f"\"geometric_cpu\" not implemented for '{d.scalar_name}'")
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={_num(p)}")
    return _draw_into(input, "geometric", generator, lambda rng, shape: rng.geometric(p, shape))


def _draw_into(input, name, generator, draw):
    """Fill ``input`` with ``draw(rng, shape)`` (numbers on the host) cast to its dtype."""
    shape = tuple(input.shape)
    with _rng_lock, _host_memory(shape, input.dtype):
        a = draw(_rng(generator), shape)
    src = _make(jax.device_put(np.asarray(a).astype(input._data.dtype)))
    return _apply(input, lambda s: _REFILL[name](s, src))


_INT64 = (-2 ** 63, 2 ** 63 - 1)
_ERR_RANDOM_ARGS = (
    "random_() received an invalid combination of arguments - got ({}), but expected one of:\n"
    " * (*, torch.Generator generator = None)\n"
    " * (int from, int to, *, torch.Generator generator = None)\n"
    " * (int to, *, torch.Generator generator = None)\n")


def _cast_int(v, dt):
    """``v`` through ``dt`` and back to an integer, as C++'s casts do on x86 (a value out
    of the int64 range, inf included, gives the lowest int64)."""
    f = float(np.asarray(v, np.int64).astype(dt).astype(np.float64))
    return int(f) if _INT64[0] <= f < 2.0 ** 63 else _INT64[0]


def _float_from(v, dt, digits):
    """torch's update_from: the least int >= ``v`` that stays >= it after the cast."""
    up = _cast_int(v + 1, dt)
    return up + (1 << (abs(v + 1).bit_length() - 1 - digits + 1)) if up < v else v


def _float_to(v, dt, digits):
    """torch's update_to: the greatest ``to`` whose ``to - 1`` stays below it after the
    cast."""
    down = _cast_int(v - 1, dt)
    return down - (1 << (abs(v - 1).bit_length() - 1 - digits + 1)) if down >= v else v


def _check_random_range(lo, hi, d):
    """torch's check of ``[lo, hi]`` against ``d``'s range (and its warning where a float
    dtype cannot hold every integer of it)."""
    cpp = _CPP[d.name]
    info = jnp.finfo(d.np) if d.is_floating_point else np.iinfo(d.np) if d is not D.bool \
        else None
    low, high = (0, 1) if info is None else (float(info.min), float(info.max)) \
        if d.is_floating_point else (int(info.min), int(info.max))
    for v, name in ((lo, "from"), (hi, "to - 1")):
        if not low <= v <= high:
            raise RuntimeError(f"{name} is out of bounds for {cpp}")
    if d.is_floating_point:
        digits = info.nmant + 1
        for v, name in ((lo, "from"), (hi, "to - 1")):
            if not -(1 << digits) <= v <= 1 << digits:
                warnings.warn(f"{name} is out of bounds [-(2^{digits}), 2^{digits}]. Due to "
                              f"precision limitations {cpp} can support discrete uniform "
                              f"distribution only within this range. This warning will "
                              f"become an error in version 1.7 release, please fix the code "
                              f"in advance", UserWarning, stacklevel=4)


def _random_bounds(d, args, kwargs):
    """``(lo, hi, node)``: the inclusive range of ``random_(*args, **kwargs)`` on a tensor
    of dtype ``d`` and the name of its node, with torch's checks."""
    if len(args) > 2:
        raise TypeError(f"random_() takes 2 positional arguments but {len(args)} were given")
    given = list(args) + [kwargs[k] for k in ("from", "to") if k in kwargs]
    n = len(given)
    bad = [v for v in given[:1] if not isinstance(v, int) or isinstance(v, bool)]
    bad += [v for v in given[1:] if v is not None and (not isinstance(v, int) or
                                                       isinstance(v, bool))]
    if bad or (n == 1 and given[0] is None) or set(kwargs) - {"from", "to"} or n > 2:
        got = ", ".join(type(v).__name__ for v in args)
        if kwargs:
            got = (got + ", " if got else "") + "".join(
                f"{k}={type(v).__name__}, " for k, v in kwargs.items())
        raise TypeError(_ERR_RANDOM_ARGS.format(got))
    if d.is_complex:
        if n == 0:
            raise NotImplementedError(f'"random_kernel_cpu" not implemented for '
                                      f"'{d.scalar_name}'")
        what = "random_from_to_impl" if n == 2 and given[1] is None else "check_random_bounds"
        raise RuntimeError(f"{what} handles only integral, floating-point and boolean types")
    digits = jnp.finfo(d.np).nmant + 1 if d.is_floating_point else None
    if n == 0:
        hi = 1 if d is D.bool else 1 << digits if digits else int(np.iinfo(d.np).max)
        return 0, hi, "random"
    lo, to = (0, given[0]) if n == 1 else given
    if to is not None:
        if lo >= to:
            raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                               f"from={lo} >= to={to}")
        if digits:
            lo, to = _float_from(lo, d.np, digits), _float_to(to, d.np, digits)
            if lo >= to:
                raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than "
                                   f"'to' casted to dtype, but got from={lo} >= to={to}")
        _check_random_range(lo, to - 1, d)
        return lo, to - 1, "random_to" if n == 1 else "random_from_to"
    if lo == _INT64[0]:  # all 64-bit integers
        if d not in (D.int64, D.float64, D.float32, D.bfloat16):
            raise RuntimeError("random_full_64_bits_range_kernel_cpu handles only int64, "
                               "double, float and bfloat16")
        return lo, _INT64[1], "random_from_to"
    if digits:
        hi = min(1 << digits, _INT64[1])
        lo = _float_from(lo, d.np, digits)
        if lo >= hi:
            raise RuntimeError(f"random_ expects 'from' casted to dtype to be less than or "
                               f"equal to 'to_inc' casted to dtype, but got from={lo} > "
                               f"to_inc={hi}")
    else:
        hi = 1 if d is D.bool else int(np.iinfo(d.np).max)
    _check_random_range(lo, hi, d)
    return lo, hi, "random_from_to"


def random_(input, *args, generator=None, **kwargs):
    """Fill ``input`` in place with integers drawn uniformly: ``random_(from, to)`` from
    ``[from, to)`` (``to=None``: up to the dtype's largest), ``random_(to)`` from
    ``[0, to)``, ``random_()`` from ``[0, 2**mantissa]`` for a floating dtype (every such
    integer is exact) and ``[0, max]`` for an integer one; torch's bounds checks.

    Example
    -------
    >>> bool(((wgrad.zeros(8).random_(2, 5) >= 2) & (wgrad.zeros(8).random_(5) < 5)).all())
    True
    """
    lo, hi, node = _random_bounds(input.dtype, args, kwargs)
    return _draw_into(input, node, generator, lambda rng, shape: rng.integers(
        lo, hi, shape, dtype=np.int64, endpoint=True))


def exponential_(input, lambd=1, *, generator=None):
    """Fill ``input`` in place with samples of the exponential distribution of rate
    ``lambd``.

    Example
    -------
    >>> bool((wgrad.zeros(10).exponential_(2.) >= 0).all())
    True
    """
    if input.is_complex():
        raise RuntimeError(f"Exponential distribution is a continuous probability "
                           f"distribution. dtype must be a floating point but you specified "
                           f"{input.dtype.scalar_name}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd}")
    return _fill_random(input, "exponential", np.random.Generator.random, 1, generator,
                        lambda a: -jnp.log1p(-a) / lambd)
