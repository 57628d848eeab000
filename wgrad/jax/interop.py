"""JAX interchange: zero-copy arrays, devices, pytrees, and the two function bridges.

* ``from_jax`` / ``Tensor.jax()`` / ``from_dlpack`` share the device buffer (no copy).
* ``Tensor`` is a JAX pytree (one leaf: its array; NOTE [Tensor as a pytree] in
  _tensor.py), so Tensors flow through ``jax.tree_util`` and ``jax.jit``;
  ``__jax_array__`` lets ``jnp`` functions take them.
* ``jax_function(f)`` lifts a JAX function into a differentiable wgrad op.
* ``to_jax(f)`` turns a wgrad function into a JAX function (a ``jax.custom_vjp``).

# NOTE [Crossing the convention boundary]
# wgrad's backward of an op s = f(z) maps g = dL/ds* to dL/dz* (NOTE [Conjugate Wirtinger
# convention]); JAX's vjp maps a cotangent c to c^T J (+ conj part), which for the same
# function is the conjugate: backward(g) == conj(vjp(conj(g))). Each bridge conjugates
# exactly twice, once on the way in and once on the way out, so that each side sees its
# own convention: jax_function's backward is conj(vjp(conj g)); to_jax's bwd is
# conj(wgrad_backward(conj c)). For real dtypes both conjugations are no-ops.
"""
import ctypes
import functools

import jax
import jax.numpy as jnp
import numpy as np

from .._autograd.grad_mode import set_grad_enabled
from .._tensor import Tensor, _make
from ..autograd import grad as _grad
from ..ops import _lazy_disk
from ..ops._primitive import Primitive
from ._pytree import _aval_key, _is_tensor, _merge_static, _norm_argnums, _split_static

__all__ = ["from_jax", "from_dlpack", "jax_function", "to_jax"]

_DIFF_KINDS = ("f", "c")


# -- arrays ----------------------------------------------------------------------------
def from_jax(a, requires_grad=False):
    """A leaf Tensor over the JAX array ``a``, sharing its buffer (no copy).

    Example
    -------
    >>> import jax.numpy as jnp, wgrad
    >>> a = jnp.arange(3.0)
    >>> t = wgrad.from_jax(a, requires_grad=True)
    >>> t.jax() is a
    True
    """
    if isinstance(a, Tensor):
        a = a._data
    elif not isinstance(a, jax.Array):
        a = jnp.asarray(a)
    t = _make(a)
    if requires_grad:
        t.requires_grad_(True)
    return t


def from_dlpack(ext_tensor):
    """A Tensor sharing memory with any object that implements ``__dlpack__`` (a torch
    tensor, a numpy array, a JAX array, another wgrad Tensor).

    Example
    -------
    >>> import numpy as np, wgrad
    >>> wgrad.from_dlpack(np.arange(3.0))
    tensor([0., 1., 2.], dtype=wgrad.float64)
    """
    if isinstance(ext_tensor, Tensor):
        return _make(ext_tensor._data)
    if type(ext_tensor).__name__ == "PyCapsule":  # a capsule (torch.utils.dlpack's legacy)
        ext_tensor = _Capsule(ext_tensor)
    return _make(jax.dlpack.from_dlpack(ext_tensor))


_get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_get_pointer.restype = ctypes.c_void_p
_get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_is_valid.restype = ctypes.c_int
_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]


class _Capsule:
    """A DLPack capsule as the object ``jax.dlpack.from_dlpack`` takes (it no longer takes
    capsules): ``__dlpack__`` hands the capsule over, ``__dlpack_device__`` reads the
    device from its DLTensor (after the data pointer; in a versioned DLManagedTensor the
    DLTensor follows the version, manager context, deleter and flags, 32 bytes)."""

    def __init__(self, capsule):
        for name, offset in ((b"dltensor", 0), (b"dltensor_versioned", 32)):
            if _is_valid(capsule, name):
                dl_tensor = _get_pointer(capsule, name) + offset
                device = (ctypes.c_int32 * 2).from_address(dl_tensor + ctypes.sizeof(
                    ctypes.c_void_p))
                self._device = (device[0], device[1])
                self._capsule = capsule
                return
        raise TypeError("from_dlpack: expected an unused DLPack capsule ('dltensor'), or an "
                        "object with __dlpack__")

    def __dlpack__(self, *args, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return self._device


# -- jax_function ----------------------------------------------------------------------
def jax_function(f=None, *, static_argnums=(), name=None):
    """Lift a JAX function into a differentiable wgrad op.

    ``f`` takes pytrees of arrays (and the ``static_argnums`` arguments, which must be
    hashable) and returns a pytree of arrays. The lifted function takes the same pytrees
    with Tensors (or arrays, numbers) at the leaves and returns Tensors. Its backward is
    ``conj(jax.vjp(f)(conj(grad)))`` (NOTE [Crossing the convention boundary]), run as one
    cached jitted kernel; the backward is itself a lifted op, so ``create_graph=True`` and
    higher derivatives work. Non-Tensor leaves are constants (no gradient).

    Example
    -------
    >>> import jax.numpy as jnp, wgrad
    >>> energy = wgrad.jax_function(lambda z: jnp.sum(jnp.abs(z) ** 2))
    >>> z = wgrad.tensor([1 + 2j], requires_grad=True)
    >>> energy(z).backward()
    >>> z.grad          # PyTorch's convention: d|z|^2/dz* = 2z
    tensor([2.+4.j])
    """
    if f is None:
        return functools.partial(jax_function, static_argnums=static_argnums, name=name)
    return _lift(f, _norm_argnums(static_argnums), name or getattr(f, "__name__", "f"),
                 _lazy_disk.lift_place(f))


def _lift(f, static_argnums, fname, place):
    """``jax_function``'s lifted function; ``place``: its ops' place in disk keys, or
    None (NOTE [Lazy disk cache])."""
    ops = {}

    @functools.wraps(f)
    def lifted(*args, **kwargs):
        static, svals, dyn = _split_static(args, static_argnums)
        leaves, tree = jax.tree_util.tree_flatten((dyn, kwargs), is_leaf=_is_tensor)
        ts = [x if isinstance(x, Tensor) else  # a NumPy array: put, no conversion traced
              _make(jax.device_put(x) if type(x) is np.ndarray else jnp.asarray(x))
              for x in leaves]
        key = (tree, static, svals, tuple(_aval_key(t._data) for t in ts))
        entry = ops.get(key)
        if entry is None:
            entry = ops[key] = _build_op(f, fname, tree, static, svals,
                                         [t._data for t in ts], place)
        op, out_tree = entry
        out = op(ts)
        return jax.tree_util.tree_unflatten(out_tree, out if isinstance(out, tuple)
                                            else (out,))
    lifted._wgrad_ops = ops
    return lifted


def _build_op(f, fname, tree, static, svals, arrays, place):
    def flat_f(*xs):
        dyn, kw = jax.tree_util.tree_unflatten(tree, xs)
        return f(*_merge_static(static, svals, dyn), **kw)

    def shapes():
        leaves, otree = jax.tree_util.tree_flatten(jax.eval_shape(flat_f, *arrays))
        return otree, tuple((o.shape, o.dtype) for o in leaves)
    key = _lazy_disk.lifted_key(place, (tree, static, svals))
    # tracing f for its output shapes is a process's milliseconds: remembered on disk
    out_tree, out_avals = shapes() if key is None else \
        _lazy_disk.remembered("lift", key, tuple(_aval_key(a) for a in arrays), shapes)
    nout = len(out_avals)
    if nout == 0:
        raise ValueError(f"jax_function: {fname} returned no arrays")

    def fwd(*args):
        outs = jax.tree_util.tree_leaves(flat_f(*args))
        return outs[0] if nout == 1 else tuple(outs)

    n_in = len(arrays)
    diff_in = tuple(i for i, a in enumerate(arrays) if jnp.result_type(a).kind in _DIFF_KINDS)
    diff_out = tuple(j for j, (_, dt) in enumerate(out_avals) if dt.kind in _DIFF_KINDS)

    def vjp_jax(*xs_and_cts):
        xs, cts = xs_and_cts[:n_in], xs_and_cts[n_in:]

        def g(*d):
            full = list(xs)
            for i, v in zip(diff_in, d):
                full[i] = v
            outs = jax.tree_util.tree_leaves(flat_f(*full))
            return tuple(outs[j] for j in diff_out)
        _, vjp = jax.vjp(g, *[xs[i] for i in diff_in])
        return tuple(jnp.conj(r) for r in vjp(tuple(jnp.conj(c) for c in cts)))

    bwd_cell = []

    def backward(gs, args):
        if not bwd_cell:
            bwd_cell.append(_lift(vjp_jax, (), f"{fname}_vjp",
                                  None if op._disk is None else op._disk + ("vjp",)))
        if not diff_in or not diff_out:
            return [None] * len(args)
        res = bwd_cell[0](*args, *[gs[j] for j in diff_out])
        out = [None] * len(args)
        for i, r in zip(diff_in, res):
            out[i] = r
        return out

    if nout == 1:
        formula = lambda grad, args: backward((grad,), args)  # noqa: E731
    else:
        formula = lambda grads, args: backward(grads, args)  # noqa: E731
    op = Primitive(f"jax_function[{fname}]", fwd, nout=nout,
                   node_name="JaxFunctionBackward0", args=formula)
    op._disk = key  # its place in disk keys (NOTE [Lazy disk cache]), None for none
    return op, out_tree


# -- to_jax ----------------------------------------------------------------------------
def to_jax(f=None, *, static_argnums=()):
    """Turn a wgrad function (Tensors in, Tensors out) into a JAX function.

    The result takes pytrees of arrays and returns pytrees of arrays; it is a
    ``jax.custom_vjp`` whose backward runs wgrad's backward and conjugates (NOTE
    [Crossing the convention boundary]), so it works under ``jax.grad``, ``jax.vjp``,
    ``jax.jacrev`` and ``jax.jit`` with JAX's convention on the JAX side. The backward
    re-runs ``f``'s forward (the wgrad graph cannot be a JAX residual), like
    ``jax.checkpoint``.

    Example
    -------
    >>> import jax, jax.numpy as jnp, wgrad
    >>> energy = wgrad.to_jax(lambda z: (z.abs() ** 2).sum())
    >>> z = jnp.array([1 + 2j])
    >>> jax.grad(energy)(z)       # JAX's convention: conj of PyTorch's 2z
    Array([2.-4.j], dtype=complex128)
    """
    if f is None:
        return functools.partial(to_jax, static_argnums=static_argnums)
    static_argnums = _norm_argnums(static_argnums)

    @functools.wraps(f)
    def jf(*args, **kwargs):
        static, svals, dyn = _split_static(args, static_argnums)
        leaves, tree = jax.tree_util.tree_flatten((dyn, kwargs))
        leaves = [jnp.asarray(x) for x in leaves]

        def run(arrays, grad):
            ts = [from_jax(a, requires_grad=grad and jnp.result_type(a).kind in _DIFF_KINDS)
                  for a in arrays]
            d, kw = jax.tree_util.tree_unflatten(tree, ts)
            with set_grad_enabled(grad):
                out = f(*_merge_static(static, svals, d), **kw)
            return out, ts

        @jax.custom_vjp
        def core(*arrays):
            return _arrays_of(run(arrays, False)[0])

        def core_fwd(*arrays):
            return core(*arrays), arrays

        def core_bwd(arrays, cts):
            out, ts = run(arrays, True)
            outs = jax.tree_util.tree_leaves(out, is_leaf=_is_tensor)
            cts = jax.tree_util.tree_leaves(cts)
            pairs = [(o, c) for o, c in zip(outs, cts)
                     if isinstance(o, Tensor) and o.requires_grad
                     and o._data.dtype.kind in _DIFF_KINDS]
            need = [t for t in ts if t.requires_grad]
            gs = [None] * len(need)
            if pairs and need:
                gs = _grad([o for o, _ in pairs], need,
                           [_make(jnp.conj(c).astype(o._data.dtype)) for o, c in pairs],
                           allow_unused=True)
            it = iter(gs)
            res = []
            for t, a in zip(ts, arrays):
                if not t.requires_grad:
                    res.append(np.zeros(a.shape, jax.dtypes.float0))
                    continue
                g = next(it)
                res.append(jnp.zeros_like(a) if g is None else jnp.conj(g._data))
            return tuple(res)

        core.defvjp(core_fwd, core_bwd)
        return core(*leaves)
    return jf


def _arrays_of(out):
    return jax.tree_util.tree_map(lambda x: x._data if isinstance(x, Tensor) else jnp.asarray(x),
                                  out, is_leaf=_is_tensor)
