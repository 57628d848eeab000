"""``wgrad.func.vmap``: jax.vmap of a wgrad function, as one lowered call (NOTE [Lowered
calls] in _lower.py)."""
import functools

import jax

from .. import _tensor
from .._tensor import Tensor, _make
from ..ops.shape import cat
from ._lower import call_lowered, flatten, func_name, key_of, set_key, torch_spec, unflatten

__all__ = ["vmap"]

_RANDOMNESS = ("error", "different", "same")
_TENSOR_FILE = _tensor.__file__
_TRACER_ERRORS = (jax.errors.ConcretizationTypeError, jax.errors.TracerArrayConversionError,
                  jax.errors.TracerIntegerConversionError)
_ERR_CONTROL_FLOW = ("vmap: It looks like you're attempting to use a Tensor in some "
                     "data-dependent control flow. We don't support that yet, please file an "
                     "issue at https://github.com/pytorch/pytorch/issues .")

_ERR_ITEM = ("vmap: It looks like you're calling .item() on a Tensor. We don't support vmap "
             "over calling .item() on a Tensor, please try to rewrite what you're doing with "
             "other operations. If error is occurring somewhere inside PyTorch internals, "
             "please file a bug report.")


def _raised_in_item(e):
    tb = e.__traceback__
    while tb is not None:
        code = tb.tb_frame.f_code
        if code.co_name == "item" and code.co_filename == _TENSOR_FILE:
            return True
        tb = tb.tb_next
    return False


def vmap(func, in_dims=0, out_dims=0, randomness="error", *, chunk_size=None):
    """Vectorize ``func`` over a batch dimension of its inputs, as ``torch.func.vmap``.

    ``in_dims`` (an int, or a tuple matching the positional arguments, nested like them;
    ``None`` for an argument that is not batched) says which dimension of each input is
    mapped; ``out_dims`` where the batch dimension goes in each output. The whole call
    runs as one XLA computation (``jax.vmap`` under ``jax.jit``) and is differentiable by
    ``backward()`` and forward AD (NOTE [Lowered calls] in wgrad/func/_lower.py); transforms
    nested inside (``vmap(grad(f))``) use wgrad's own autograd. Random ops inside raise
    torch's error unless ``randomness="same"`` (one draw shared by the batch) or
    ``"different"`` (independent draws per example, run as one computation per example).
    ``chunk_size`` maps that many examples per computation.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import vmap
    >>> y = wgrad.tensor([[1., 2.], [3., 4.], [5., 6.]])
    >>> vmap(lambda x, y: (x * y).sum())(wgrad.ones(3, 2), y)
    tensor([ 3.,  7., 11.])
    >>> vmap(lambda x: x * y.sum(), in_dims=1)(wgrad.ones(2, 3))
    tensor([[21., 21.],
            [21., 21.],
            [21., 21.]])
    """
    if randomness not in _RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and (not isinstance(chunk_size, int) or chunk_size <= 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. "
                         f"(got {chunk_size})")

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        return _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs)
    return set_key(wrapped, ("vmap", key_of(func), _hashable(in_dims), _hashable(out_dims),
                             randomness, chunk_size))


def _hashable(x):
    try:
        hash(x)
        return x
    except TypeError:
        return repr(x)


def _broadcast_dims(dims, tree, what, name, dims_repr):
    """One dim per leaf of ``tree`` from the prefix tree ``dims``."""
    out = []
    try:
        parts = jax.tree_util.tree_map(lambda d, sub: (d, sub), dims, tree,
                                       is_leaf=lambda x: x is None)
        pieces = jax.tree_util.tree_leaves(parts, is_leaf=lambda x: isinstance(x, tuple)
                                           and len(x) == 2 and (x[0] is None or
                                                                isinstance(x[0], int)))
    except (ValueError, TypeError):
        pieces = None
    if pieces is None:
        raise ValueError(
            f"vmap({name}, {dims_repr})(<inputs>): {what}_dims is not compatible with the "
            f"structure of `{what}puts`. {what}_dims has structure "
            f"{torch_spec(dims)} but {what}puts has structure {torch_spec(tree)}.")
    for d, sub in pieces:
        out.extend([d] * len(flatten(sub)[0]))
    return out


def _vmap_call(func, in_dims, out_dims, randomness, chunk_size, args, kwargs):
    name = func_name(func)
    if not isinstance(in_dims, (int, tuple)) or isinstance(in_dims, bool):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` "
                         f"to be int or a (potentially nested) tuple matching the structure "
                         f"of inputs, got: {type(in_dims)}.")
    if not args:
        raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                         f"inputs, or you are trying to vmap over a function with no inputs. "
                         f"The latter is unsupported.")
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(
            f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with "
            f"the structure of `inputs`. in_dims has structure "
            f"{torch_spec(in_dims)} but inputs has structure {torch_spec(args)}.")
    leaf_dims = _broadcast_dims(in_dims, args, "in", name, f"in_dims={in_dims}, ...")
    leaves, tree = flatten(args)
    sizes, axes = [], []
    for x, d in zip(leaves, leaf_dims):
        if d is None:
            axes.append(None)
            continue
        if not isinstance(x, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for an input but the input is of type {type(x)}. We cannot vmap "
                             f"over non-Tensor arguments, please use None as the respective "
                             f"in_dim")
        n = x.dim()
        if not -n <= d < n:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={d} "
                             f"for some input, but that input is a Tensor of dimensionality "
                             f"{n} so expected in_dim to satisfy -{n} <= in_dim < {n}.")
        axes.append(d % n)
        sizes.append(x.shape[d])
    if not sizes:
        raise ValueError("vmap: Expected at least one Tensor to vmap over")
    if any(s != sizes[0] for s in sizes):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    if randomness == "different":
        # random ops draw on the host, once per trace: independent draws for each example
        # are one traced call per example (each draws anew, as "same" does per call)
        return _chunked(func, in_dims, out_dims, "same", 1, leaves, tree, axes, sizes[0],
                        kwargs)
    if chunk_size is not None and chunk_size < sizes[0]:
        return _chunked(func, in_dims, out_dims, randomness, chunk_size, leaves, tree, axes,
                        sizes[0], kwargs)
    return _vmap_once(func, out_dims, randomness, leaves, tree, axes, kwargs, name)


def _chunked(func, in_dims, out_dims, randomness, chunk_size, leaves, tree, axes, n, kwargs):
    """``chunk_size`` examples per computation; outputs concatenated along out_dims."""
    name = func_name(func)
    results = []
    for start in range(0, n, chunk_size):
        k = min(chunk_size, n - start)
        part = [x if a is None else x.narrow(a, start, k) for x, a in zip(leaves, axes)]
        results.append(_vmap_once(func, out_dims, randomness, part, tree, axes, kwargs, name,
                                  want_dims=True))
    outs, otree, odims = results[0]
    merged = []
    for j, d in enumerate(odims):
        if d is None:
            merged.append(outs[j])
        else:
            merged.append(cat([r[0][j] for r in results], d))
    return unflatten(otree, merged)


def _vmap_once(func, out_dims, randomness, leaves, tree, axes, kwargs, name,
               want_dims=False):
    tensors = [x for x in leaves if isinstance(x, Tensor)]
    consts = [None if isinstance(x, Tensor) else x for x in leaves]
    kw_leaves, kw_tree = flatten(kwargs)
    kw_tensors = [x for x in kw_leaves if isinstance(x, Tensor)]
    kw_consts = [None if isinstance(x, Tensor) else x for x in kw_leaves]
    t_axes = [a for x, a in zip(leaves, axes) if isinstance(x, Tensor)]
    n_arg = len(tensors)
    key = None
    if _all_hashable(consts) and _all_hashable(kw_consts):
        key = ("vmap", key_of(func), _hashable(out_dims), randomness, tree, tuple(axes),
               _typed(consts), kw_tree, _typed(kw_consts))
    # filled while tracing: the output structure and dims (shared by the traces of a
    # cached op, which may run in a later call's place)
    if key is None:
        info = {}
    else:
        if len(_seen) > 256:
            _seen.clear()
        info = _seen.setdefault(key, {})

    def body(*arrays):
        it = iter(_wrap(arrays[:n_arg]))
        args = unflatten(tree, [next(it) if c is None else c for c in consts])
        kit = iter(_wrap(arrays[n_arg:]))
        kw = unflatten(kw_tree, [next(kit) if c is None else c for c in kw_consts])
        try:
            out = func(*args, **kw)
        except _TRACER_ERRORS as e:
            raise RuntimeError(_ERR_ITEM if _raised_in_item(e) else _ERR_CONTROL_FLOW) from e
        oleaves, otree = flatten(out)
        odims = _out_dims(out_dims, out, name)
        for o, d in zip(oleaves, odims):
            if not isinstance(o, Tensor) and d is not None:
                raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got "
                                 f"type {type(o)}. Did you mean to set out_dims= to None for "
                                 f"output?")
        # a non-Tensor output (out_dim None) is returned as it is
        info["tree"] = otree
        info["consts"] = [None if isinstance(o, Tensor) else o for o in oleaves]
        info["dims"] = [d for o, d in zip(oleaves, odims) if isinstance(o, Tensor)]
        return tuple(o._data for o in oleaves if isinstance(o, Tensor))

    def build(arrays):
        in_axes = tuple(t_axes) + (None,) * len(kw_tensors)
        # out_axes must be known before tracing: trace once abstractly for the structure
        if "dims" not in info:
            jax.eval_shape(jax.vmap(body, in_axes=in_axes), *arrays)
        try:
            return jax.vmap(body, in_axes=in_axes, out_axes=tuple(info["dims"]))(*arrays)
        except ValueError as e:
            if "out_axes" in str(e) and "None" in str(e):
                raise ValueError(f"vmap({name}, ...): `{name}` can not return a BatchedTensor "
                                 f"when out_dim is None") from None
            raise

    outs = call_lowered(key, (func,), build, tensors + kw_tensors, f"vmap[{name}]",
                        randomness, vmap=True)
    if "tree" not in info:  # a cached op whose record was dropped: trace afresh
        info = {}
        outs = call_lowered(None, (func,), build, tensors + kw_tensors, f"vmap[{name}]",
                            randomness, vmap=True)
    it = iter(outs)
    res = [next(it) if c is None else c for c in info["consts"]]
    if want_dims:
        dit = iter(info["dims"])
        return res, info["tree"], [next(dit) if c is None else None for c in info["consts"]]
    return unflatten(info["tree"], res)


_seen = {}  # cache key -> the output structure of its trace


def _wrap(arrays):
    return [_make(a) for a in arrays]


def _typed(consts):
    """Constants with their types (3 and 3.0 are equal keys but promote differently)."""
    return tuple((type(c), c) for c in consts)


def _all_hashable(xs):
    try:
        hash(tuple(xs))
        return True
    except TypeError:
        return False


def _out_dims(out_dims, out, name):
    if not isinstance(out_dims, (int, tuple)) or isinstance(out_dims, bool):
        raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): expected `out_dims` to be "
                         f"int or a (potentially nested) tuple matching the structure of "
                         f"outputs, got: {type(out_dims)}.")
    dims = _broadcast_dims(out_dims, out, "out", name, f"..., out_dims={out_dims}")
    oleaves = flatten(out)[0]
    res = []
    for o, d in zip(oleaves, dims):
        if d is not None and isinstance(o, Tensor):
            n = o.dim() + 1
            if not -n <= d < n:
                raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): Got out_dim={d} but "
                                 f"the output has {n - 1} dims")
            d = d % n
        res.append(d)
    return res
