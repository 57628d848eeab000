"""Pytree and argument helpers that the JAX bridges and wgrad.compile share: Tensor
leaves, static arguments split off and merged back, abstract-value keys."""
import jax

from .._tensor import Tensor

__all__ = ["_is_tensor", "_aval_key", "_split_static", "_merge_static", "_norm_argnums"]


def _is_tensor(x):
    return isinstance(x, Tensor)


def _aval_key(a):
    return (a.shape, a.dtype, bool(getattr(jax.typeof(a), "weak_type", False)))


def _split_static(args, static_argnums):
    """``(static positions, their values, the other arguments)``."""
    if not static_argnums:
        return (), (), args
    n = len(args)
    static = tuple(sorted({i % n for i in static_argnums if -n <= i < n}))
    svals = tuple(args[i] for i in static)
    dyn = tuple(a for i, a in enumerate(args) if i not in static)
    return static, svals, dyn


def _merge_static(static, svals, dyn):
    """The inverse of ``_split_static``."""
    out = list(dyn)
    for i, v in zip(static, svals):
        out.insert(i, v)
    return out


def _norm_argnums(static_argnums):
    return (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
