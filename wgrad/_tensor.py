"""Tensor: a jax.Array plus autograd metadata. Dunders are one-line delegates to ops."""
import warnings
from copy import deepcopy as _deepcopy
from weakref import ref as _weakref

import jax
import numpy as np

from . import _dtype, _tensor_str
from ._autograd import forward_ad as _fw
from ._autograd.graph import AccumulateGrad, _add_hook, _HookDict
from ._autograd.grad_mode import _state as _grad_state
from ._device import device as _device
from ._tensor_storage import StorageMethods as _StorageMethods

__all__ = ["Tensor", "Size", "layout", "strided"]

_SingleDevice = jax.sharding.SingleDeviceSharding


def _dev_id(d):
    return d.id


class Size(tuple):
    """A tensor's shape (a tuple), printed as torch prints it."""

    __slots__ = ()

    def __repr__(self):
        return f"wgrad.Size({list(self)})"

    # slices, concatenations and repeats stay Sizes, as torch.Size's
    def __getitem__(self, i):
        r = tuple.__getitem__(self, i)
        return Size(r) if isinstance(i, slice) else r

    def __add__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(self, other))

    def __radd__(self, other):
        if not isinstance(other, tuple):
            return NotImplemented
        return Size(tuple.__add__(other, self))

    def __mul__(self, n):
        return Size(tuple.__mul__(self, n))

    __rmul__ = __mul__

    def numel(self):
        n = 1
        for s in self:
            n *= s
        return n


class layout:
    """A tensor layout (torch.layout); every wgrad tensor is ``strided``."""

    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"wgrad.{self._name}"


strided = layout("strided")


class _VersionCounter:
    """Shared by a tensor and all its views; bumped by every in-place op."""

    __slots__ = ("v",)

    def __init__(self):
        self.v = 0


_ERR_LEAF_FLAG = ("you can only change requires_grad flags of leaf variables. If you want to "
                  "use a computed variable in a subgraph that doesn't require differentiation "
                  "use var_no_grad = var.detach().")


_ERR_DEEPCOPY = ("Only Tensors created explicitly by the user (graph leaves) support the "
                 "deepcopy protocol at the moment.  If you were attempting to deepcopy a "
                 "module, this may be because of a torch.nn.utils.weight_norm usage, see "
                 "https://github.com/pytorch/pytorch/pull/103001")

# torch's errors for ``del t.<name>`` on autograd attributes (``del t.grad`` is allowed)
_NO_DELETE = {"data": "Deleting tensor data is not allowed. Delete tensor instead!",
              "requires_grad": "requires_grad must be a bool",
              "_grad_fn": "Deletion of _grad_fn not allowed. Detach tensor instead!",
              "grad_fn": "Deletion of _grad_fn not allowed. Detach tensor instead!",
              "_backward_hooks": "Deletion of _backwards_hooks not allowed!"}


# NOTE [Tensor creation cost]
# Tensor defines ``__delattr__`` (torch's errors for ``del t._grad_fn`` and the like), and
# CPython serves ``__setattr__`` and ``__delattr__`` through one type slot: a class that
# defines either stores every attribute through a Python-level ``__setattr__`` lookup and
# call, which the interpreter cannot specialize. Setting a new tensor's 13 fields that way
# took 2.1 us, more than recording a lazy op. So the fields live in ``_Fields``, and
# ``_make`` fills them on an instance of ``_Fresh`` (same layout, plain attribute stores)
# before turning it into a Tensor with one ``__class__`` assignment: 0.52-0.56 us
# (figures in docs/performance.md).
class _Fields:
    """The fields of a Tensor (NOTE [Tensor creation cost])."""

    __slots__ = ("_data", "_requires_grad", "_grad", "_grad_fn", "_output_nr", "_vc",
                 "_base", "_retains_grad", "_hooks", "_post_acc_hooks", "_grad_acc",
                 "_is_inference", "_view_meta", "__weakref__")


class _Fresh(_Fields):
    """A Tensor while ``_make`` fills its fields."""

    __slots__ = ()


class Tensor(_StorageMethods, _Fields):
    """An n-dimensional array (a ``jax.Array``) that can record autograd history.

    Example
    -------
    >>> import wgrad
    >>> z = wgrad.tensor([1 + 1j], requires_grad=True)
    >>> (z.abs() ** 2).sum().backward()
    >>> z.grad
    tensor([2.0000+2.0000j])
    """

    __slots__ = ()  # the fields are _Fields' (NOTE [Tensor creation cost])

    def __init__(self, data=()):
        t = _tensor_fn(data, dtype=_dtype.get_default_dtype() if not isinstance(data, Tensor)
                       else None)
        _init(self, t._data, None, 0)

    @staticmethod
    def _make(data, grad_fn=None, output_nr=0):
        return _make(data, grad_fn, output_nr)

    def _new_like_data(self, data):
        return _make(data)

    # -- metadata --------------------------------------------------------------------
    @property
    def shape(self):
        return Size(self._data.shape)

    def size(self, dim=None):
        if dim is None:
            return Size(self._data.shape)
        return self._data.shape[_wrap_dim(dim, self._data.ndim)]

    @property
    def dtype(self):
        return _dtype.from_np(self._data.dtype)

    @property
    def device(self):
        try:
            devs = self._data.devices()
        except Exception:  # a tracer has no committed device
            return _device("cpu")
        # an array sharded over several devices: the first of them (a set has no order)
        return _device.of_jax(next(iter(devs)) if len(devs) == 1 else min(devs, key=_dev_id))

    @property
    def ndim(self):
        return self._data.ndim

    def dim(self):
        return self._data.ndim

    ndimension = dim

    def numel(self):
        return int(self._data.size)

    nelement = numel

    def is_complex(self):
        return self.dtype.is_complex

    def is_floating_point(self):
        return self.dtype.is_floating_point

    def is_inference(self):
        return self._is_inference

    @property
    def _version(self):
        return self._vc.v

    def _is_view(self):
        return self._base is not None

    def _neg_view(self):
        """A view with torch's negative bit: negated values, ``is_neg()`` true."""
        return _ops.elementwise._neg_view(self)

    # -- autograd metadata ---------------------------------------------------------------
    @property
    def grad_fn(self):
        if self._view_meta is not None:
            _check_stale_view(self)
        fn = self._grad_fn
        if fn is not None and fn._is_group:
            return self._ungroup()
        return fn

    def _ungroup(self):
        """This tensor's own OpNode where its ``_grad_fn`` is a lazy backward group (NOTE
        [Lazy backward groups] in ops/_lazy_graph.py): the group explodes."""
        fn = self._grad_fn
        if fn is not None and fn._is_group:
            fn, self._output_nr = fn._resolve(self._output_nr)
            self._grad_fn = fn
        return fn

    @property
    def is_leaf(self):
        if self._view_meta is not None:
            _check_stale_view(self)
        return self._grad_fn is None

    @property
    def output_nr(self):
        self._ungroup()
        return self._output_nr

    @property
    def requires_grad(self):
        return self._requires_grad or self._grad_fn is not None

    @requires_grad.setter
    def requires_grad(self, flag):
        self.requires_grad_(flag)

    def requires_grad_(self, requires_grad=True):
        """Set whether autograd records operations on this (leaf) tensor."""
        if self._grad_fn is not None:
            if not requires_grad:
                raise RuntimeError(_ERR_LEAF_FLAG)
            return self
        if requires_grad:
            d = self.dtype
            if not (d.is_floating_point or d.is_complex):
                raise RuntimeError("only Tensors of floating point dtype can require "
                                   "gradients")
            if self._is_inference and not _grad_state.inference:
                raise RuntimeError("Setting requires_grad=True on inference tensor outside "
                                   "InferenceMode is not allowed.")
        self._requires_grad = bool(requires_grad)
        return self

    @property
    def grad(self):
        if self._grad_fn is not None and not self._retains_grad and self._grad is None:
            warnings.warn(
                "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. "
                "Its .grad attribute won't be populated during autograd.backward(). If you "
                "indeed want the .grad field to be populated for a non-leaf Tensor, use "
                ".retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by "
                "mistake, make sure you access the leaf Tensor instead.", UserWarning,
                stacklevel=2)
        return self._grad

    @grad.setter
    def grad(self, value):
        if value is not None:
            if not isinstance(value, Tensor):
                raise TypeError(f"assigned grad expected to be a Tensor or None but got grad "
                                f"of type {type(value).__name__}")
            if value.dtype is not self.dtype:
                raise RuntimeError("assigned grad has data of a different type")
            if value.shape != self.shape:
                raise RuntimeError("assigned grad has data of a different size")
        self._grad = value

    @grad.deleter
    def grad(self):
        self._grad = None

    def __delattr__(self, name):
        msg = _NO_DELETE.get(name)
        if msg is not None:
            raise RuntimeError(msg)
        object.__delattr__(self, name)

    @property
    def volatile(self):
        warnings.warn("volatile was removed (Variable.volatile is always False)", UserWarning,
                      stacklevel=2)
        return False

    @property
    def _backward_hooks(self):
        return self._hooks

    @_backward_hooks.setter
    def _backward_hooks(self, hooks):
        self._hooks = hooks

    @property
    def retains_grad(self):
        return self._retains_grad

    def retain_grad(self):
        """Populate ``.grad`` for this non-leaf tensor during backward."""
        if not self.requires_grad:
            raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
        if self._grad_fn is None or self._retains_grad:
            return
        self._ungroup()
        ref = _weakref(self)

        def retain(g):
            t = ref()
            if t is None:
                return
            if t._grad is None:
                t._grad = g.clone() if _grad_state.grad else _make(g._data)
            elif _grad_state.grad:
                t._grad = t._grad + g
            else:
                t._grad = _make(t._grad._data + g._data)
        self._grad_fn._set_retains_grad_hook(self._output_nr, retain)
        self._retains_grad = True

    def register_hook(self, hook):
        """Register ``hook(grad) -> Tensor or None``, called with this tensor's gradient;
        a returned tensor replaces the gradient. Returns a removable handle."""
        if not self.requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._grad_fn is not None:
            return self._ungroup()._register_tensor_pre_hook(self._output_nr, hook)
        if self._hooks is None:
            self._hooks = _HookDict()
        return _add_hook(self._hooks, hook)

    def register_post_accumulate_grad_hook(self, hook):
        """Register ``hook(tensor)``, called after ``.grad`` of this leaf was accumulated."""
        if self._grad_fn is not None:
            raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf "
                               "tensors")
        if not self._requires_grad:
            raise RuntimeError("cannot register a hook on a tensor that doesn't require "
                               "gradient")
        if self._post_acc_hooks is None:
            self._post_acc_hooks = _HookDict()
        return _add_hook(self._post_acc_hooks, hook)

    def _gradient_edge(self):
        """``(node, input_nr)`` where this tensor's gradient enters the graph."""
        if self._grad_fn is not None:
            return self._grad_fn, self._output_nr
        if not self._requires_grad:
            return None, 0
        acc = self._grad_acc() if self._grad_acc is not None else None
        if acc is None:
            acc = AccumulateGrad(self)
            self._grad_acc = _weakref(acc)
        return acc, 0

    def _accumulate_grad(self, g):
        """AccumulateGrad's update of ``.grad`` (torch's accumulate_grad.h rules)."""
        old = self._grad
        ps = getattr(self._data, "sharding", None)  # None: a tracer
        if type(ps) is not _SingleDevice and ps is not None:
            g = _transfer.reshard(g, ps)  # NOTE [Gradients keep their parameters' shardings]
        if old is None:
            # create_graph: torch copies into a fresh buffer, so .grad.grad_fn is CopyBackwards
            # (lazily, a pending gradient stays pending: NOTE [Lazy segments])
            if _grad_state.grad:
                self._grad = _make(_raw_data(g)).copy_(g)
            elif _stealable(g):  # NOTE [Stolen gradients]
                self._grad = g
            else:
                self._grad = _make(_raw_data(g))
        elif _grad_state.grad:
            self._grad = old + g
        else:
            old._data = _add_arrays(old._data, g._data)
            old._vc.v += 1

    def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
        """Accumulate the gradient of this tensor into the ``.grad`` of graph leaves."""
        _backward(self, gradient, retain_graph, create_graph, inputs=inputs)

    def detach(self):
        """A tensor with the same data and version counter, cut from the graph."""
        t = _make(self._data)
        t._vc = self._vc
        t._is_inference = self._is_inference
        _link_alias(self, t, view=False)
        return t

    def detach_(self):
        if self._base is not None:
            raise RuntimeError(
                "Can't detach views in-place. Use detach() instead. If you are using "
                "DistributedDataParallel (DDP) for training, and gradient_as_bucket_view is "
                "set as True, gradients are views of DDP buckets, and hence detach_() cannot "
                "be called on these gradients. To fix this error, please refer to the "
                "Optimizer.zero_grad() function in torch/optim/optimizer.py as the solution.")
        self._grad_fn = None
        self._requires_grad = False
        self._output_nr = 0
        if _fw.state.active:  # detached from forward AD too, as torch
            _fw.set_tangent(self, None)
        return self

    @property
    def data(self):
        """A detached alias of this tensor with its own version counter (NOTE [Views])."""
        t = _make(self._data)
        t._is_inference = self._is_inference
        return _link_alias(self, t, view=False, counter=True)

    @data.setter
    def data(self, value):
        if not isinstance(value, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(value).__name__}")
        if self._requires_grad and not (value.is_floating_point() or value.is_complex()):
            raise RuntimeError("data set to a tensor that requires gradients must be floating "
                               "point or complex dtype")
        _rebind(self, value)

    # -- conversion --------------------------------------------------------------------
    def numpy(self, *, force=False):
        if self.requires_grad and not force and _grad_state.grad:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. Use "
                               "tensor.detach().numpy() instead.")
        for bit, name, fix in zip(_ops.conj_bits(self), ("conjugate", "negative"),
                                  ("conj", "neg")):
            if bit and not force:
                raise RuntimeError(f"Can't call numpy() on Tensor that has {name} bit set. "
                                   f"Use tensor.resolve_{fix}().numpy() instead.")
        return np.asarray(self._data)

    def __array__(self, dtype=None, copy=None):
        a = np.asarray(self._data)
        return a.astype(dtype) if dtype is not None else a

    # JAX interchange (NOTE [Tensor as a pytree] below; the bridges are in wgrad/jax/)
    def jax(self): return self._data
    def __jax_array__(self): return self._data
    def __dlpack_device__(self): return self._data.__dlpack_device__()
    def cpu(self, memory_format=None): return _transfer.to_device(self, "cpu")
    def cuda(self, device=None, non_blocking=False, memory_format=None):
        return _transfer.cuda(self, device)

    def __dlpack__(self, *args, **kwargs):
        if self.requires_grad:
            raise BufferError("Can't export tensors that require gradient, use "
                              "tensor.detach()")
        return self._data.__dlpack__(*args, **kwargs)

    def item(self):
        if self._data.size != 1:
            raise RuntimeError(f"a Tensor with {self._data.size} elements cannot be converted "
                               f"to Scalar")
        return np.asarray(self._data).reshape(()).item()

    def tolist(self):
        return np.asarray(self._data).tolist()

    def __len__(self):
        if self._data.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self._data.shape[0]

    def __iter__(self):
        if self._data.ndim == 0:
            raise TypeError("iteration over a 0-d tensor")
        return iter(self.unbind(0))

    def __bool__(self):
        if self._data.size != 1:
            raise RuntimeError(f"Boolean value of Tensor with more than one value is "
                               f"ambiguous")
        d = self._data
        if isinstance(d, jax.core.Tracer):  # JAX's TracerBoolConversionError, as in a trace
            return bool(d.reshape(()))
        return bool(np.asarray(d).reshape(()))  # on the host: a jnp reshape traces

    def __float__(self):
        return float(self.item().real if self.is_complex() else self.item())

    def __int__(self):
        return int(self.item())

    def __complex__(self):
        return complex(self.item())

    def __index__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex or self._data.size != 1:
            raise TypeError("only integer tensors of a single element can be converted to "
                            "an index")
        return int(self.item())

    __hash__ = object.__hash__

    def __repr__(self):
        return _repr(self)

    def __format__(self, spec):  # torch's: a 0-d tensor formats as its number
        if self._data.ndim == 0:
            return format(self.item(), spec)
        if spec:
            raise TypeError("unsupported format string passed to Tensor.__format__")
        return repr(self)

    def __reduce_ex__(self, proto):
        return (_tensor_fn, (np.asarray(self._data), self.dtype, None, self._requires_grad))

    def __deepcopy__(self, memo):
        """torch's rules: leaves only; ``requires_grad``, ``.grad`` (itself deep-copied) and
        a subclass's attributes are copied; one copy per object in ``memo``."""
        if self._grad_fn is not None:
            raise RuntimeError(_ERR_DEEPCOPY)
        new = memo.get(id(self))
        if new is not None:
            return new
        new = _new(type(self))
        _init(new, self._data, None, 0)  # arrays are immutable: the copy's own from here
        new._requires_grad = self._requires_grad
        if self._grad is not None:
            new._grad = _deepcopy(self._grad, memo)
        if hasattr(self, "__dict__"):
            new.__dict__ = _deepcopy(self.__dict__, memo)
        memo[id(self)] = new
        return new

    # -- dunders: one-line delegates to ops --------------------------------------------
    def __add__(self, o): return _raw_ops.add(self, o)
    def __radd__(self, o): return _raw_ops.add(self, o)  # torch's order (graph edges)
    def __sub__(self, o): return _raw_ops.sub(self, o)
    def __rsub__(self, o): return _raw_ops.rsub(self, o)  # torch's RsubBackward1
    def __mul__(self, o): return _raw_ops.mul(self, o)
    def __rmul__(self, o): return _raw_ops.mul(self, o)  # torch's order (graph edges)
    def __truediv__(self, o): return _raw_ops.div(self, o)
    def __rtruediv__(self, o): return _raw_ops.mul(_raw_ops.reciprocal(self), o)  # torch's
    def __floordiv__(self, o): return _raw_ops.floor_divide(self, o)
    def __rfloordiv__(self, o): return _raw_ops.floor_divide(o, self)
    def __mod__(self, o): return _raw_ops.remainder(self, o)
    def __rmod__(self, o): return _raw_ops.remainder(o, self)
    def __pow__(self, o): return _raw_ops.pow(self, o)
    def __rpow__(self, o): return _raw_ops.pow(o, self)
    def __matmul__(self, o): return _raw_ops.matmul(self, o)
    def __rmatmul__(self, o): return _raw_ops.matmul(o, self)
    def __neg__(self): return _raw_ops.neg(self)
    def __pos__(self): return self
    def __abs__(self): return _raw_ops.abs(self)
    def __invert__(self):
        if self.dtype.is_floating_point or self.dtype.is_complex:  # torch's operator message
            raise TypeError("~ (operator.invert) is only implemented on integer and "
                            "Boolean-type tensors")
        return _raw_ops.bitwise_not(self)
    def __and__(self, o): return _raw_ops.bitwise_and(self, o)
    def __rand__(self, o): return _raw_ops.bitwise_and(o, self)
    def __or__(self, o): return _raw_ops.bitwise_or(self, o)
    def __ror__(self, o): return _raw_ops.bitwise_or(o, self)
    def __xor__(self, o): return _raw_ops.bitwise_xor(self, o)
    def __rxor__(self, o): return _raw_ops.bitwise_xor(o, self)
    def __lshift__(self, o): return _raw_ops.bitwise_left_shift(self, o)
    def __rlshift__(self, o): return _raw_ops.bitwise_left_shift(o, self)
    def __rshift__(self, o): return _raw_ops.bitwise_right_shift(self, o)
    def __rrshift__(self, o): return _raw_ops.bitwise_right_shift(o, self)
    def __eq__(self, o): return _raw_ops.eq(self, o)
    def __ne__(self, o): return _raw_ops.ne(self, o)
    def __lt__(self, o): return _raw_ops.lt(self, o)
    def __le__(self, o): return _raw_ops.le(self, o)
    def __gt__(self, o): return _raw_ops.gt(self, o)
    def __ge__(self, o): return _raw_ops.ge(self, o)
    def __getitem__(self, idx): return _raw_ops.getitem(self, idx)
    def __setitem__(self, idx, v): _ops.inplace.setitem(self, idx, v)
    def __iadd__(self, o): return _raw_ops.add_(self, o)
    def __isub__(self, o): return _raw_ops.sub_(self, o)
    def __imul__(self, o): return _raw_ops.mul_(self, o)
    def __itruediv__(self, o): return _raw_ops.div_(self, o)
    def __ifloordiv__(self, o): return _raw_ops.floor_divide_(self, o)
    def __imod__(self, o): return _raw_ops.remainder_(self, o)
    def __ipow__(self, o): return _raw_ops.pow_(self, o)
    def __iand__(self, o): return _raw_ops.bitwise_and_(self, o)
    def __ior__(self, o): return _raw_ops.bitwise_or_(self, o)
    def __ixor__(self, o): return _raw_ops.bitwise_xor_(self, o)
    def __ilshift__(self, o): return _raw_ops.bitwise_left_shift_(self, o)
    def __irshift__(self, o): return _raw_ops.bitwise_right_shift_(self, o)

    @property
    def T(self): return _ops.numpy_T(self)
    @property
    def mT(self): return _ops.transpose(self, -2, -1) if self.ndim >= 2 else _no_mat(self, "mT")
    @property
    def H(self): return _ops.adjoint(self) if self.ndim == 2 else _no_mat(self, "H")
    @property
    def mH(self): return _ops.adjoint(self) if self.ndim >= 2 else _no_mat(self, "mH")
    @property
    def real(self): return _ops.real(self)
    @property
    def imag(self): return _ops.imag(self)


_new = object.__new__


def _no_mat(t, name):
    n = t.ndim
    if name == "H":
        raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got {n}-D "
                           f"tensor." + (" For batches of matrices, consider using tensor.mH"
                                         if n > 2 else ""))
    raise RuntimeError(f"tensor.{name} is only supported on matrices or batches of matrices. "
                       f"Got {n}-D tensor.")


def _init(t, data, grad_fn, output_nr):
    t._data = data
    t._requires_grad = False
    t._grad = None
    t._grad_fn = grad_fn
    t._output_nr = output_nr
    t._vc = _VersionCounter()
    t._base = None
    t._retains_grad = False
    t._hooks = None
    t._post_acc_hooks = None
    t._grad_acc = None
    t._is_inference = _grad_state.inference
    t._view_meta = None


def _make(data, grad_fn=None, output_nr=0):
    """A new Tensor over ``data`` (NOTE [Tensor creation cost])."""
    t = _new(_Fresh)
    _init(t, data, grad_fn, output_nr)
    t.__class__ = Tensor
    return t


DATA_SLOT = _Fields.__dict__["_data"]  # the member descriptor of the ``_data`` slot
_raw_data = DATA_SLOT.__get__  # the slot itself, even under lazy mode

# NOTE [Stolen gradients]
# As torch's AccumulateGrad, the first gradient of a leaf is kept as the very tensor the
# engine passes (``x.grad is g`` for the hooks that saw it), not a copy, when nothing
# else can write to it: it is no view or alias (its layout is its own), needs no grad,
# and no other leaf kept it already (a backward returning one tensor for two inputs).
# Gradients given by the caller enter the graph as new Tensors (autograd._own), so a
# leaf never keeps the caller's tensor. Otherwise ``.grad`` is a new Tensor over the same
# (immutable) array.
_STOLEN = {}


def _stealable(g):
    m = g._view_meta
    if g._base is not None or (m is not None and (m.chain or len(m.storage.live()) > 1)) \
            or g._grad_fn is not None or g._requires_grad:
        return False
    r = _STOLEN.get(id(g))
    if r is not None and r() is g:
        return False
    if len(_STOLEN) > 4096:
        for k in [k for k, v in _STOLEN.items() if v() is None]:
            del _STOLEN[k]
    _STOLEN[id(g)] = _weakref(g)
    return True


def _wrap_dim(dim, ndim):
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def _repr(t):
    try:
        a = np.asarray(t._data)
    except Exception:  # a tracer
        return f"tensor({t._data!r})"
    fn = t._grad_fn
    if fn is not None and fn._is_group:  # printing does not explode a lazy group
        name = fn._name_of(t._output_nr)
    else:
        try:
            fn = t.grad_fn
        except RuntimeError:  # a stale no_grad view: torch prints its history as invalid
            name = "Invalid"
        else:
            name = type(fn).__name__ if fn is not None else None  # as torch's repr
    dev = t.device
    s = _tensor_str.tensor_repr(a, t.dtype, name, t._requires_grad,
                                None if dev.type == "cpu" else str(dev))
    tangent = _fw.get_tangent(t) if _fw.state.active else None
    if tangent is not None:  # a dual tensor shows its tangent, as torch
        s = s[:-1] + (",\n       " if "\n" in s else ", ") + f"tangent={_repr(tangent)})"
    return s


# NOTE [Tensor as a pytree]
# A Tensor flattens to one leaf, its array, with ``requires_grad`` (the leaf flag) as
# static aux data. Unflattening builds a fresh leaf Tensor: the autograd graph and
# ``.grad`` do not cross a jax transformation boundary (use jax_function / to_jax /
# wgrad.compile for gradients across it). JAX also unflattens with placeholder leaves
# (None, object()), so unflatten must not inspect the leaf.
def register_pytree(cls):
    """Register the Tensor subclass ``cls`` (Tensor itself, nn.Parameter) as a pytree node
    that flattens to its array and unflattens to a fresh leaf of ``cls``."""
    def unflatten(requires_grad, children):
        t = _new(cls)
        _init(t, children[0], None, 0)
        t._requires_grad = requires_grad
        return t
    jax.tree_util.register_pytree_node(cls, lambda t: ((t._data,), t._requires_grad),
                                       unflatten)


register_pytree(Tensor)

# The layers above that Tensor's one-line delegates call into (DESIGN.md section 3: the
# dunders delegate to ops, backward to autograd.backward). They import Tensor, so they
# are bound last, once Tensor exists.
from . import ops as _ops  # noqa: E402
from .ops import _transfer  # noqa: E402
from .ops._views import link_alias as _link_alias, rebind as _rebind  # noqa: E402
from .ops._views import strides_of as _strides_of  # noqa: E402
from .ops._views import check_stale_view as _check_stale_view  # noqa: E402
from .ops._views import storage_of as _storage_of  # noqa: E402
from .ops import _storage  # noqa: E402
from .ops._lazy_disk import add_arrays as _add_arrays  # noqa: E402
from ._creation import tensor as _tensor_fn  # noqa: E402
from .autograd import backward as _backward  # noqa: E402


class _raw_ops:
    """The ops the dunders call, without their ``out=`` wrapper (NOTE [out= arguments]):
    ``x * y`` passes no ``out``, and the wrapper's frame cost every arithmetic op."""


for _name in ("abs", "add", "add_", "bitwise_and", "bitwise_and_", "bitwise_not",
              "bitwise_or", "bitwise_or_", "bitwise_xor", "bitwise_xor_", "bitwise_left_shift",
              "bitwise_left_shift_", "bitwise_right_shift", "bitwise_right_shift_", "div",
              "div_", "eq",
              "floor_divide", "floor_divide_", "ge", "getitem", "gt", "le", "lt", "matmul",
              "mul", "mul_", "ne", "neg", "pow", "pow_", "reciprocal", "remainder", "remainder_",
              "rsub", "sub", "sub_"):
    _fn = getattr(_ops, _name)
    setattr(_raw_ops, _name, staticmethod(getattr(_fn, "without_out", _fn)))
del _name, _fn
