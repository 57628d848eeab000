"""``wgrad.cond`` and ``wgrad.while_loop``: torch's structured control flow, run eagerly.

torch.cond and torch.while_loop with a tensor predicate (cond) or always (while_loop)
hand the functions to Dynamo, which traces them and checks what they return before
running the compiled program; the values and gradients are those of the Python
if-statement or loop they stand for. wgrad runs that if-statement or loop: the branch
taken, or the body, runs op by op, so gradients flow through its ops (into closures and
module parameters too) with those ops' grad_fns (torch's outputs carry
CondAutogradOpBackward / WhileLoopAutogradOpBackward). torch's argument checks and the
checks of what the functions return are made on what runs: a predicate that is no
boolean scalar, operands that are no tensors, a loop body whose outputs differ from the
carried values in number, shape or dtype, or alias them; the branch not taken is not
traced, so a mismatch between the two branches' outputs is not seen
(docs/differences.md).
"""
from . import _dtype as D
from ._tensor import Tensor

__all__ = ["cond", "while_loop", "map_instances"]


def _flatten(tree):
    """torch's pytree leaves and structure of tuples, lists, dicts and namedtuples (None is
    a leaf, dicts keep their order)."""
    if isinstance(tree, Tensor):
        return [tree], None
    if isinstance(tree, dict):
        leaves, specs = [], []
        for v in tree.values():
            lv, sv = _flatten(v)
            leaves += lv
            specs.append(sv)
        return leaves, (type(tree), list(tree.keys()), specs)
    if isinstance(tree, (list, tuple)):
        leaves, specs = [], []
        for v in tree:
            lv, sv = _flatten(v)
            leaves += lv
            specs.append(sv)
        return leaves, (type(tree), None, specs)
    return [tree], None


def _unflatten(spec, leaves):
    it = iter(leaves)

    def build(s):
        if s is None:
            return next(it)
        kind, keys, specs = s
        children = [build(c) for c in specs]
        if keys is not None:
            return kind(zip(keys, children))
        if hasattr(kind, "_fields"):
            return kind(*children)
        return kind(children)
    return build(spec)


def map_instances(kind, f, tree):
    """``tree`` (tuples, lists, dicts, namedtuples) with each leaf of type ``kind`` mapped
    by ``f``."""
    if isinstance(tree, kind):
        return f(tree)
    if isinstance(tree, dict):
        return type(tree)((k, map_instances(kind, f, v)) for k, v in tree.items())
    if isinstance(tree, tuple) and hasattr(tree, "_fields"):
        return type(tree)(*(map_instances(kind, f, v) for v in tree))
    if isinstance(tree, (list, tuple)):
        return type(tree)(map_instances(kind, f, v) for v in tree)
    return tree


def cond(pred, true_fn, false_fn, operands=()):
    """``true_fn(*operands)`` if ``pred`` else ``false_fn(*operands)``, as torch.cond run
    eagerly (see the module): ``pred`` is a Python bool/int/float or a one-element
    tensor, ``operands`` a tuple or list of (nested) tensors.

    Example
    -------
    >>> x = wgrad.tensor([0., 1.], requires_grad=True)
    >>> y = wgrad.cond(x.sum() > 0, lambda t: t.cos(), lambda t: t.sin(), (x,))
    >>> y.sum().backward()
    >>> x.grad
    tensor([-0.0000, -0.8415])
    """
    if isinstance(pred, (bool, int, float)):
        return true_fn(*operands) if pred else false_fn(*operands)
    if not isinstance(pred, (bool, Tensor)):
        raise RuntimeError(f"Expected pred to be bool or tensor, but got {pred}.")
    if pred.numel() != 1:
        raise RuntimeError(f"Expected pred to be bool or single-element tensor, but got "
                           f"{pred}.")
    if not callable(true_fn) or not callable(false_fn):
        raise RuntimeError("Expect both branches to be callable.")
    if not isinstance(operands, (tuple, list)) or \
            any(not isinstance(t, Tensor) for t in _flatten(operands)[0]):
        raise RuntimeError("Expect operands to be a tuple of possibly nested dict/list/tuple "
                           f"that only consists of tensor leaves, but got {operands}.")
    branch = true_fn if bool(pred) else false_fn
    out = branch(*operands)
    _check_no_alias("torch.cond", _flatten(operands)[0], _flatten(out)[0])
    return out


def _check_no_alias(name, inputs, outputs):
    """torch's Dynamo refuses an output that is an input or a view of one."""
    bases = {id(t._base if t._base is not None else t) for t in inputs if isinstance(t, Tensor)}
    for o in outputs:
        if isinstance(o, Tensor) and id(o._base if o._base is not None else o) in bases:
            raise RuntimeError(
                f"{name}: an output aliases an input (it is the input or a view of it); "
                f"torch's higher order ops do not support aliasing. Return a clone "
                f"(`return input.clone()`).")


def _meta(x):
    return (tuple(x.shape), x.dtype) if isinstance(x, Tensor) else type(x).__name__


def while_loop(cond_fn, body_fn, carried_inputs):
    """``while cond_fn(*vals): vals = body_fn(*vals)`` from ``carried_inputs`` (a tuple or
    list of nested tensors and ints), as torch.while_loop run eagerly (see the module):
    ``cond_fn`` returns a boolean scalar tensor or a bool, ``body_fn`` values like the
    carried ones (same number, shapes and dtypes, no aliasing). Returns the last
    ``body_fn`` output, or clones of ``carried_inputs`` when the loop body never runs.

    Example
    -------
    >>> wgrad.while_loop(lambda i, x: i < 3, lambda i, x: (i + 1, x * 2),
    ...                  (wgrad.tensor(0), wgrad.tensor([1., 2.])))
    (tensor(3), tensor([ 8., 16.]))
    """
    if not callable(cond_fn) or not callable(body_fn):
        raise RuntimeError("Expect cond_fn and body_fn to be callable.")
    leaves, spec = _flatten(carried_inputs)
    if not all(isinstance(x, (Tensor, int)) for x in leaves):
        raise AssertionError(f"{leaves} can only be of ({Tensor}, {int}) but got "
                             f"{tuple(type(x) for x in leaves)}")
    if not isinstance(carried_inputs, (tuple, list)):
        raise RuntimeError(f"carried_inputs must be a tuple or list but got "
                           f"{type(carried_inputs)}")
    vals, out, ran = carried_inputs, None, False
    while _loop_pred(cond_fn(*vals)):
        out = body_fn(*vals)
        out_leaves = _flatten(out)[0]
        if len(out_leaves) != len(leaves):
            raise RuntimeError(f"torch.while_loop: expected body_fn_output and carried_inputs "
                               f"to have same number of outputs but got {len(out_leaves)} "
                               f"and {len(leaves)}")
        for i, (o, c) in enumerate(zip(out_leaves, leaves)):
            if _meta(o) != _meta(c):
                raise RuntimeError(f"torch.while_loop: expected body_fn_output and "
                                   f"carried_inputs to have same metadata but found: pair[{i}]"
                                   f" differ: {_meta(o)} vs {_meta(c)}")
        _check_no_alias("torch.while_loop", _flatten(vals)[0], out_leaves)
        vals, ran = _unflatten(spec, out_leaves), True
    if ran:
        return out
    return _unflatten(spec, [x.clone() if isinstance(x, Tensor) else x for x in leaves])


def _loop_pred(pred):
    if isinstance(pred, bool) or (isinstance(pred, Tensor) and pred.dim() == 0
                                  and pred.dtype == D.bool):
        return bool(pred)
    raise RuntimeError(f"cond_fn must return a boolean scalar tensor or a boolean but got "
                       f"{pred}")
