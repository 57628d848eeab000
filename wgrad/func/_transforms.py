"""The differentiation transforms of wgrad.func: grad, grad_and_value, vjp, jvp, linearize,
jacrev, jacfwd, hessian.

# NOTE [Transforms on wgrad's autograd]
# grad and vjp run the function once on fresh inputs that require grad and call
# ``autograd.grad`` (wgrad's engine, torch's formulas and special points, custom
# Functions, hooks on intermediate tensors); jvp runs it on dual tensors of
# ``autograd.forward_ad``. So the complex conventions are torch.func's by construction:
# grad/vjp give ``.backward()``'s conjugate-Wirtinger values, jvp gives forward AD's
# R-linear pushforward (``jax.jvp``'s). The result stays on wgrad's tape (create_graph)
# only when someone can differentiate it: grad mode is on and an argument, or a tensor
# the function captures, requires grad, or carries a tangent; otherwise results are
# detached, as torch's are. Under a vmap (NOTE [Lowered calls]) the same code runs on
# tracers. jacrev and jacfwd are vmaps of vjp and jvp over a basis (one computation);
# a jvp inside another dual level (nested forward mode, which forward_ad forbids) runs
# as a lowered call, in a clean room where it may enter its own level.
"""
import functools

import numpy as np

from .._autograd import forward_ad as _fw_core
from .._autograd.grad_mode import _state as _grad_state
from .._autograd.grad_mode import enable_grad
from .._autograd.graph import _hooks_state
from .._creation import tensor, zeros_like
from .._tensor import Tensor
from ..autograd import forward_ad as fwAD
from ..autograd import grad as _autograd_grad
from ._lower import (call_lowered, captured, flatten, in_clean_room, key_of, set_key,
                     torch_spec, unflatten)
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]

_ERR_SAVED_HOOKS = ("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor "
                    "hooks. Please open an issue with your use case.")


# -- helpers -----------------------------------------------------------------------------
def _argnums(argnums, n):
    """``argnums`` normalized to a tuple of non-negative positions, with torch's errors."""
    if isinstance(argnums, int) and not isinstance(argnums, bool):
        nums = (argnums,)
    elif isinstance(argnums, tuple) and all(isinstance(a, int) for a in argnums):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")
        nums = argnums
    else:
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    out = []
    for a in nums:
        if not -n <= a < n:
            raise RuntimeError(f"Got argnum={a}, but only {n} positional inputs")
        out.append(a % n)
    if len(set(out)) != len(out):
        raise RuntimeError(f"argnums elements must be unique, got {argnums}")
    return tuple(out)


def _diff_args(args, argnums):
    nums = _argnums(argnums, len(args))
    diff = args[nums[0]] if isinstance(argnums, int) else tuple(args[i] for i in nums)
    return nums, diff


def _replace(args, argnums, nums, new):
    args = list(args)
    if isinstance(argnums, int):
        args[nums[0]] = new
    else:
        for i, v in zip(nums, new):
            args[i] = v
    return args


def _check_no_saved_hooks():
    if _hooks_state().stack:
        raise RuntimeError(_ERR_SAVED_HOOKS)


def _check_tensors(leaves):
    for x in leaves:
        if not isinstance(x, Tensor):
            raise ValueError(f"Thing passed to transform API must be Tensor, got {type(x)}")


def _has_tangent(t):
    return _fw_core.state.active and _fw_core.get_tangent(t) is not None


def _differentiable(t):
    return isinstance(t, Tensor) and (t.requires_grad or _has_tangent(t))


def _need_graph(tensors, roots):
    """NOTE [Transforms on wgrad's autograd]: whether results must stay differentiable."""
    if not (_grad_state.grad or _fw_core.state.active):
        return False
    if any(_differentiable(t) for t in tensors):
        return True
    if in_clean_room():
        return False
    return any(_differentiable(t) for t in captured(roots))


def _reaches_outside(results, own):
    """Whether the tape behind ``results`` reaches a leaf other than the fresh inputs
    ``own``, or a result carries a tangent: then someone outside can differentiate it."""
    own_ids = {id(t) for t in own}
    stack, seen = [], set()
    for t in flatten(results)[0]:
        if not isinstance(t, Tensor):
            continue
        if _has_tangent(t):
            return True
        if t.grad_fn is not None:
            stack.append(t.grad_fn)
        elif t.requires_grad and id(t) not in own_ids:
            return True
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        var = getattr(node, "variable", None)
        if var is not None:
            if id(var) not in own_ids:
                return True
            continue
        stack.extend(n for n, _ in node.next_functions if n is not None)
    return False


def _fresh_input(x):
    """A tensor that requires grad, standing for ``x`` (linked to ``x``'s graph and tangent
    when it has them)."""
    if _differentiable(x):
        xi = x.clone()
    else:
        xi = x.detach()
    if not xi.requires_grad:
        xi.requires_grad_()
    return xi


def _own(leaves, ins):
    """The fresh inputs that stand for non-differentiable arguments (their own leaves)."""
    return [i for x, i in zip(leaves, ins) if not _differentiable(x)]


def _detach_tree(tree):
    leaves, td = flatten(tree)
    return unflatten(td, [x.detach() if isinstance(x, Tensor) else x for x in leaves])


def _grads(outs, ins, cts, create):
    """``autograd.grad`` of the outputs that require grad; zeros for unused inputs."""
    pairs = [(o, c) for o, c in zip(outs, cts) if o.requires_grad]
    gs = [None] * len(ins)
    if pairs:
        gs = _autograd_grad([o for o, _ in pairs], ins, [c for _, c in pairs],
                            retain_graph=True, create_graph=create, allow_unused=True)
    return [zeros_like(x) if g is None else g for g, x in zip(gs, ins)]


# -- grad ---------------------------------------------------------------------------------
def grad(func, argnums=0, has_aux=False):
    """The gradient of a scalar ``func`` with respect to the argument(s) ``argnums``.

    As ``torch.func.grad``: for a real function of complex inputs the result is
    ``.backward()``'s conjugate-Wirtinger gradient (the conjugate of ``jax.grad``).
    Arguments may be pytrees (tuples, lists, dicts) of Tensors; ``has_aux=True`` means
    ``func`` returns ``(output, aux)`` and the call returns ``(grad, aux)``. Composes with
    the other transforms (``grad(grad(f))``, ``vmap(grad(f))``).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import grad
    >>> grad(lambda x: (x ** 3).sum())(wgrad.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    >>> grad(lambda z: (z * z.conj()).real.sum())(wgrad.tensor([1 + 2j]))
    tensor([2.+4.j])
    """
    gv = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        g, value = gv(*args, **kwargs)
        return (g, value[1]) if has_aux else g
    set_key(wrapper, ("grad", key_of(func), argnums, has_aux))
    return wrapper


def grad_and_value(func, argnums=0, has_aux=False):
    """``(gradient, value)`` of a scalar ``func`` (``(gradient, (value, aux))`` with
    ``has_aux``), as ``torch.func.grad_and_value``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import grad_and_value
    >>> grad_and_value(lambda x: (x ** 2).sum())(wgrad.tensor([1.0, 2.0]))
    (tensor([2., 4.]), tensor(5.))
    """
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        _check_no_saved_hooks()
        nums, diff = _diff_args(args, argnums)
        leaves, tree = flatten(diff)
        _check_tensors(leaves)
        all_tensors = [x for x in flatten((args, kwargs))[0] if isinstance(x, Tensor)]
        need = _need_graph(all_tensors, (func,))
        where = "grad_and_value(f)(*args)"
        with enable_grad():
            ins = [_fresh_input(x) for x in leaves]
            out = func(*_replace(args, argnums, nums, unflatten(tree, ins)), **kwargs)
            out, aux = _split_aux(out, has_aux, where)
            if not isinstance(out, Tensor):
                raise RuntimeError(f"{where}: Expected f(*args) to return a Tensor, got "
                                   f"{type(out)}")
            if out.dim() != 0:
                raise RuntimeError(f"{where}: Expected f(*args) to return a scalar Tensor, got "
                                   f"tensor with {out.dim()} dims. Maybe you wanted to use "
                                   f"the vjp or jacrev APIs instead?")
            if out.requires_grad:
                gs = _autograd_grad(out, ins, create_graph=need, allow_unused=True)
            else:
                gs = [None] * len(ins)
            gs = [zeros_like(x) if g is None else g for g, x in zip(gs, ins)]
        g = unflatten(tree, gs)
        if need and not _reaches_outside((gs, out, aux), _own(leaves, ins)):
            need = False
        if not need:
            g, out, aux = _detach_tree(g), out.detach(), _detach_tree(aux)
        return (g, (out, aux)) if has_aux else (g, out)
    set_key(wrapper, ("grad_and_value", key_of(func), argnums, has_aux))
    return wrapper


def _split_aux(out, has_aux, where):
    if not has_aux:
        return out, None
    if not (isinstance(out, tuple) and len(out) == 2):
        raise RuntimeError(f"{where}: output of function f should be a tuple: (output, aux) "
                           f"if has_aux is True")
    return out


# -- vjp ----------------------------------------------------------------------------------
def vjp(func, *primals, has_aux=False):
    """``(func(*primals), vjp_fn)`` (and ``aux`` with ``has_aux``), as ``torch.func.vjp``.

    ``vjp_fn(cotangents)`` equals ``autograd.grad(outputs, primals, cotangents)``: for
    complex functions, torch's convention (the conjugate of ``jax.vjp`` applied to the
    conjugate cotangent). It returns a tuple with one entry per primal.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import vjp
    >>> out, vjp_fn = vjp(lambda z: z * z, wgrad.tensor([1 + 2j]))
    >>> vjp_fn(wgrad.tensor([1 + 0j]))      # conj(f'(z)) = 2 conj(z)
    (tensor([2.-4.j]),)
    """
    out, vjp_fn, aux, _, _ = _vjp(func, primals, has_aux)
    return (out, vjp_fn, aux) if has_aux else (out, vjp_fn)


def _vjp(func, primals, has_aux):
    """vjp's ``(output, vjp_fn, aux, the fresh inputs, the outputs on the tape)``."""
    where = "vjp(f, *primals)"
    _check_no_saved_hooks()
    leaves, tree = flatten(primals)
    _check_tensors(leaves)
    need = _need_graph(leaves, (func,))
    with enable_grad():
        ins = [_fresh_input(x) for x in leaves]
        out = func(*unflatten(tree, ins))
        out, aux = _split_aux(out, has_aux, where)
        oleaves, otree = flatten(out)
        for o in oleaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")

    def vjp_fn(cotangents, *, retain_graph=True, create_graph=None):
        cleaves, ctree = flatten(cotangents)
        if ctree != otree:
            raise RuntimeError(f"Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{_spec(ctree)}, primal output: {_spec(otree)}")
        for i, (o, c) in enumerate(zip(oleaves, cleaves)):
            if tuple(o.shape) != tuple(c.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                                   f"{c.shape!r} and output[{i}] has a shape of {o.shape!r}.")
        create = need or any(_differentiable(c) for c in cleaves) if create_graph is None \
            else create_graph
        with enable_grad():
            gs = _grads(oleaves, ins, cleaves, create)
        if not create:
            gs = [g.detach() for g in gs]
        return unflatten(tree, gs)

    if need and not _reaches_outside((oleaves, aux), _own(leaves, ins)):
        need = False
    if not need:
        out, aux = _detach_tree(out), _detach_tree(aux)
    return out, vjp_fn, aux, ins, oleaves


def _spec(treedef):
    """A pytree structure written as torch prints it: ``*`` for a leaf."""
    s = str(treedef)
    return s.replace("PyTreeDef(", "", 1)[:-1] if s.startswith("PyTreeDef(") else s


# -- jvp ----------------------------------------------------------------------------------
def jvp(func, primals, tangents, *, strict=False, has_aux=False):
    """``(func(*primals), J @ tangents)`` by forward AD, as ``torch.func.jvp``.

    The tangent convention is forward AD's: the R-linear pushforward
    ``(df/dz) t + (df/dz*) conj(t)``, the same as ``jax.jvp`` (no conjugation).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import jvp
    >>> jvp(lambda z: z * z, (wgrad.tensor([1 + 2j]),), (wgrad.tensor([1j]),))
    (tensor([-3.+4.j]), tensor([-4.+2.j]))
    """
    where = "jvp(f, primals, tangents)"
    if strict:
        raise RuntimeError(f"{where}: strict=True is not supported")
    if not isinstance(primals, tuple):
        raise RuntimeError(f"{where}: Expected primals to be a tuple. E.g. it should be valid "
                           f"to call f(*primals).")
    pleaves, ptree = flatten(primals)
    tleaves, ttree = flatten(tangents)
    if ptree != ttree:
        raise RuntimeError(f"{where}: Expected primals and tangents to have the same python "
                           f"structure. For example, if primals is a tuple of 3 tensors, "
                           f"tangents also must be. Got primals with structure "
                           f"{torch_spec(primals)} and tangents with structure "
                           f"{torch_spec(tangents)}")
    for kind, leaves in (("primals", pleaves), ("tangents", tleaves)):
        for x in leaves:
            if not isinstance(x, Tensor):
                raise RuntimeError(f"{where}: Expected {kind} to only contain Tensors, got "
                                   f"{type(x)}")
    if _fw_core.state.level >= 0:
        return _nested_jvp(func, pleaves, tleaves, ptree, has_aux)
    with fwAD.dual_level():
        duals = [fwAD.make_dual(p, t) for p, t in zip(pleaves, tleaves)]
        out = func(*unflatten(ptree, duals))
        out, aux = _split_aux(out, has_aux, where)
        oleaves, otree = flatten(out)
        prim, tan = [], []
        for o in oleaves:
            if not isinstance(o, Tensor):
                raise RuntimeError(f"{where}: expected f(*primals) to return only tensors, got "
                                   f"unsupported type {type(o)}")
            u = fwAD.unpack_dual(o)
            prim.append(u.primal)
            tan.append(zeros_like(o) if u.tangent is None else u.tangent)
        if has_aux:
            aleaves, atree = flatten(aux)
            aux = unflatten(atree, [fwAD.unpack_dual(a).primal if isinstance(a, Tensor) else a
                                    for a in aleaves])
    res = (unflatten(otree, prim), unflatten(otree, tan))
    return res + (aux,) if has_aux else res


def _nested_jvp(func, pleaves, tleaves, ptree, has_aux):
    """A jvp inside a dual level, as one lowered call (NOTE [Transforms on wgrad's
    autograd])."""
    n = len(pleaves)
    info = {}

    def build(arrays):
        ts = [Tensor._make(a) for a in arrays]
        res = jvp(func, unflatten(ptree, ts[:n]), unflatten(ptree, ts[n:]), has_aux=has_aux)
        leaves, tree = flatten(res)
        info["tree"] = tree
        return tuple(x._data for x in leaves)
    outs = call_lowered(None, (func,), build, pleaves + tleaves, "jvp")
    return unflatten(info["tree"], list(outs))


def linearize(func, *primals):
    """``(func(*primals), jvp_fn)`` where ``jvp_fn(*tangents)`` is the jvp at ``primals``
    (as ``torch.func.linearize``; wgrad re-runs forward AD on each call).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import linearize
    >>> out, jvp_fn = linearize(lambda x: x.sin(), wgrad.tensor([0.0]))
    >>> jvp_fn(wgrad.tensor([2.0]))
    tensor([2.])
    """
    leaves, _ = flatten(primals)
    _check_tensors(leaves)
    out = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]
    return out, jvp_fn


# -- jacobians ----------------------------------------------------------------------------
def _check_real(leaves, what, name):
    for i, x in enumerate(leaves):
        if x.is_complex():
            raise RuntimeError(f"{name}: Expected all {what} to be real but received complex "
                               f"tensor at flattened input idx: {i}")


def _basis(like, dtypes):
    """The standard basis split per tensor: for tensors of numels n_k (total N), tensors
    of shape (N, *shape_k)."""
    numels = [x.numel() for x in like]
    n = sum(numels)
    eye = np.eye(n)
    out, start = [], 0
    for x, k, d in zip(like, numels, dtypes):
        out.append(tensor(eye[:, start:start + k].reshape((n,) + tuple(x.shape)), dtype=d))
        start += k
    return out


def _blocks(rows, row_like, col_like, cols_last):
    """Split stacked results into the Jacobian's blocks.

    ``rows[j]`` has shape (N, *shape_j) with N the total numel of ``row_like``; block
    (i, j) has shape ``row_like[i].shape + col_like[j].shape`` (reverse mode) or, with
    ``cols_last``, ``col_like[j].shape + row_like[i].shape`` (forward mode).
    """
    out, start = [], 0
    for r in row_like:
        k = r.numel()
        blocks = []
        for res, c in zip(rows, col_like):
            piece = res[start:start + k]
            if cols_last:
                piece = piece.reshape(k, -1).t() if c.numel() else piece.reshape(k, 0).t()
                blocks.append(piece.reshape(tuple(c.shape) + tuple(r.shape)))
            else:
                blocks.append(piece.reshape(tuple(r.shape) + tuple(c.shape)))
        out.append(blocks)
        start += k
    return out


def jacrev(func, argnums=0, *, has_aux=False, chunk_size=None, _preallocate_and_copy=False):
    """The Jacobian of ``func`` by reverse mode (a vmap of ``vjp`` over the basis), as
    ``torch.func.jacrev``; real inputs and outputs only, as in torch.

    The result nests like torch's: the outputs' structure, then the structure of the
    differentiated argument(s); each block has shape ``out.shape + in.shape``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import jacrev
    >>> jacrev(lambda x: x ** 2)(wgrad.tensor([1.0, 2.0]))
    tensor([[2., 0.],
            [0., 4.]])
    """
    @functools.wraps(func)
    def wrapper(*args):
        _check_no_saved_hooks()
        nums, diff = _diff_args(args, argnums)
        leaves, tree = flatten(diff)
        _check_tensors(leaves)
        _check_real(leaves, "inputs", "jacrev")

        def f(*d):
            return func(*_replace(args, argnums, nums, unflatten(tree, list(d))))
        out, _, aux, ins, taped = _vjp(f, leaves, has_aux)
        oleaves, otree = flatten(out)
        _check_real(oleaves, "outputs", "jacrev")
        basis = _basis(oleaves, [o.dtype for o in oleaves])
        if _need_graph(flatten(args)[0], (func,)) or chunk_size is not None:
            rows = _jacrev_vmap(func, args, argnums, nums, tree, basis, otree, chunk_size,
                                has_aux)
        else:
            rows = _jacrev_batched(taped, ins, basis)
        blocks = _blocks(rows, oleaves, leaves, cols_last=False)
        jac = unflatten(otree, [unflatten(tree, b) for b in blocks])
        return (jac, aux) if has_aux else jac
    set_key(wrapper, ("jacrev", key_of(func), argnums, has_aux, chunk_size))
    return wrapper


def _jacrev_batched(oleaves, ins, basis):
    """All rows in one batched backward pass (``is_grads_batched``), eagerly."""
    pairs = [(o, b) for o, b in zip(oleaves, basis) if o.requires_grad]
    n = basis[0].shape[0] if basis else 0
    gs = [None] * len(ins)
    if pairs and n:
        with enable_grad():
            gs = _autograd_grad([o for o, _ in pairs], ins, [b for _, b in pairs],
                                retain_graph=True, allow_unused=True, is_grads_batched=True)
    return [zeros_like(x).expand(n, *x.shape) if g is None else g.detach()
            for g, x in zip(gs, ins)]


def _jacrev_vmap(func, args, argnums, nums, tree, basis, otree, chunk_size, has_aux):
    """All rows as one lowered vmap of vjp (differentiable, NOTE [Lowered calls])."""
    n_ct = len(basis)

    def row(*xs):
        cts, a = xs[:n_ct], xs[n_ct:]

        def f(*d):
            return func(*_replace(a, argnums, nums, unflatten(tree, list(d))))
        res = vjp(f, *flatten(_diff_args(a, argnums)[1])[0], has_aux=has_aux)
        return res[1](unflatten(otree, list(cts)))
    set_key(row, ("jacrev-row", key_of(func), nums, has_aux, tree, otree))
    in_dims = (0,) * n_ct + (None,) * len(args)
    return list(vmap(row, in_dims=in_dims, chunk_size=chunk_size)(*basis, *args))


def jacfwd(func, argnums=0, has_aux=False, *, randomness="error"):
    """The Jacobian of ``func`` by forward mode (a vmap of ``jvp`` over the basis), as
    ``torch.func.jacfwd``; real inputs and outputs only, as in torch.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import jacfwd
    >>> jacfwd(lambda x: x.sin())(wgrad.tensor([0.0, 0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    @functools.wraps(func)
    def wrapper(*args):
        nums, diff = _diff_args(args, argnums)
        leaves, tree = flatten(diff)
        _check_tensors(leaves)
        _check_real(leaves, "inputs", "jacfwd")
        basis = _basis(leaves, [x.dtype for x in leaves])
        n_t = len(basis)

        def col(*xs):
            ts, a = xs[:n_t], xs[n_t:]
            d = flatten(_diff_args(a, argnums)[1])[0]

            def f(*dd):
                return func(*_replace(a, argnums, nums, unflatten(tree, list(dd))))
            res = jvp(f, tuple(d), tuple(ts), has_aux=has_aux)
            return res if has_aux else res + (None,)
        set_key(col, ("jacfwd-col", key_of(func), nums, has_aux, tree))
        in_dims = (0,) * n_t + (None,) * len(args)
        primal, tan, aux = vmap(col, in_dims=in_dims, out_dims=(None, 0, None),
                                randomness=randomness)(*basis, *args)
        oleaves, otree = flatten(primal)
        _check_real(oleaves, "outputs", "jacfwd")
        tl = flatten(tan)[0]
        # tl[i] has shape (M, *out_i.shape): columns of block (i, j) for input j
        jac_rows = []
        for o, t in zip(oleaves, tl):
            blocks = _blocks([t], leaves, [o], cols_last=True)
            jac_rows.append([b[0] for b in blocks])
        jac = unflatten(otree, [unflatten(tree, r) for r in jac_rows])
        return (jac, aux) if has_aux else jac
    set_key(wrapper, ("jacfwd", key_of(func), argnums, has_aux, randomness))
    return wrapper


def hessian(func, argnums=0):
    """``jacfwd(jacrev(func, argnums), argnums)``, as ``torch.func.hessian``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import hessian
    >>> hessian(lambda x: (x ** 3).sum())(wgrad.tensor([1.0, 2.0]))
    tensor([[ 6.,  0.],
            [ 0., 12.]])
    """
    h = jacfwd(jacrev(func, argnums), argnums)
    set_key(h, ("hessian", key_of(func), argnums))
    return h
