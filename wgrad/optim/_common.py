"""Helpers shared by the optimizer classes: option checks and state constructors."""
import jax.numpy as jnp

from .._creation import filled, filled_like
from .._dtype import get_default_dtype
from .._tensor import Tensor, _make

__all__ = ["check_lr", "check_fused", "scalar_state", "zeros_like", "full_like", "value"]


def check_lr(lr):
    """torch's checks of a learning rate (a number or a 1-element Tensor)."""
    if isinstance(lr, Tensor):
        if lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        lr_v = float(lr._data.reshape(()))
    else:
        lr_v = lr
    if not 0.0 <= lr_v:
        raise ValueError(f"Invalid learning rate: {lr}")


def check_fused(fused, foreach, differentiable):
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


def _scalar_dtype():
    """torch's ``_get_scalar_dtype``: float64 when that is the default dtype."""
    return jnp.float64 if get_default_dtype().itemsize == 8 else jnp.float32


def scalar_state(v=0.0):
    """A 0-dim ``step``-like state tensor (float32, or float64 under a float64 default)."""
    return _make(filled(v, _scalar_dtype()))


def zeros_like(p):
    return _make(filled_like(p._data, 0))


def full_like(p, v):
    """``full_like(p, v)``; ``v`` becomes ``complex(v, v)`` for a complex ``p``, as torch's
    Adagrad and Rprop initialise (each real component gets ``v``)."""
    if jnp.iscomplexobj(p._data):
        v = v * (1 + 1j)  # complex(v, v), also for a traced v
    return _make(filled_like(p._data, v))


def value(x):
    """A hyper-parameter as a traced argument: a Tensor's array, else the number."""
    return x._data.reshape(()) if isinstance(x, Tensor) else x
