"""Adafactor (torch.optim.Adafactor): factored second moments, relative step sizes.

The rule runs in the one jitted computation per param group (NOTE [One dispatch per
step]); what torch computes on the host from ``.item()`` (the relative step size, the
parameter's RMS, the update's clipping denominator) is computed in double inside it, from
the same single-precision norms (NOTE [Scalars in the rules]).
"""
import math

import jax.numpy as jnp

from .._creation import _host_filled
from .._tensor import Tensor, _make
from . import _functional as F
from ._common import scalar_state, value, zeros_like
from .optimizer import Optimizer

__all__ = ["Adafactor"]


def _zeros(shape, dtype):
    """A zero state array of ``shape`` (made on the host where it can be, as
    ``filled_like``'s: NOTE [Fillers on the host])."""
    a = _host_filled(tuple(shape), 0, dtype)
    return _make(jnp.zeros(shape, dtype) if a is None else a)


def _num(x):
    return float(x._data.reshape(())) if isinstance(x, Tensor) else x


def _norm(x, axis=None):
    """torch.norm(x, 2) (over ``axis``, kept), in ``x``'s dtype."""
    keep = axis is not None
    return jnp.sqrt(jnp.sum(x * x, axis=axis, keepdims=keep))


def _pymax(a, b):
    """Python's ``max(a, b)`` (``a`` unless ``b > a``; a NaN ``b`` gives ``a``)."""
    return jnp.where(b > a, b, a)


def _adafactor(o, h, p, g, s, c):
    """torch's ``_single_tensor_adafactor`` for one real parameter."""
    step = s["step"] + 1
    w = h["lr"].dtype
    t = step.astype(w)
    one_minus_beta2 = t ** h["beta2_decay"]
    inv_sqrt = 1 / t ** 0.5
    rho = jnp.where(inv_sqrt < h["lr"], inv_sqrt, h["lr"])  # min(lr, 1 / sqrt(t))
    alpha = _pymax(h["eps2"], _norm(p).astype(w) / math.sqrt(p.size)) * rho
    if o["weight_decay"]:
        p = p * c(1 - h["lr"] * h["weight_decay"])
    new = {"step": step}
    eps1 = h["eps1"]
    if g.ndim > 1:
        row_mean = jnp.square(_norm(g, -1)) / g.shape[-1]
        col_mean = jnp.square(_norm(g, -2)) / g.shape[-2]
        row = new["row_var"] = F._lerp(s["row_var"], row_mean, c(one_minus_beta2))
        col = new["col_var"] = F._lerp(s["col_var"], col_mean, c(one_minus_beta2))
        var = row * col  # row_var @ col_var: an outer product ([.., m, 1] @ [.., 1, n])
        var = var / jnp.maximum(jnp.mean(row, axis=-2, keepdims=True), c(eps1))
    else:
        var = new["variance"] = F._lerp(s["variance"], g * g, c(one_minus_beta2))
    update = (1 / jnp.sqrt(jnp.maximum(var, c(eps1 * eps1)))) * g
    denom = _pymax(1.0, _norm(update).astype(w) / (math.sqrt(update.size) * h["d"]))
    return p + c(-alpha / denom) * update, new


F.RULES["adafactor"] = _adafactor  # group_update finds its rule by name


class Adafactor(Optimizer):
    """Adafactor (torch.optim.Adafactor): second moments factored into row and column
    averages over the last two dimensions of a parameter of two or more dimensions (a
    full ``variance`` for vectors and scalars), relative step size ``min(lr, 1/sqrt(t))``
    scaled by the parameter's RMS, update clipping at ``d``, decoupled weight decay
    ``lr * weight_decay``. ``eps=(None, 1e-3)``: ``eps[0]`` None is the machine epsilon of
    the group's first parameter with a gradient, as in torch. Complex parameters raise at
    ``step``, as in torch. ``foreach`` is accepted (the step is one XLA computation per
    param group either way).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.ones(2, 3, requires_grad=True)
    >>> opt = wgrad.optim.Adafactor([w], lr=0.01)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> w[0]
    tensor([0.9900, 0.9900, 0.9900], grad_fn=<SelectBackward0>)
    >>> sorted(opt.state[w]), tuple(opt.state[w]["row_var"].shape)
    (['col_var', 'row_var', 'step'], (2, 1))
    """

    _rule = "adafactor"

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _num(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 >= beta2_decay:
            raise ValueError(f"beta2_decay should be <= 0 but is: {beta2_decay}")
        if eps[0] is not None and not 0.0 <= eps[0]:
            raise ValueError(f"epsilon1 should be >= 0 but is: {eps[0]}")
        if not 0.0 <= eps[1]:
            raise ValueError(f"epsilon2 should be >= 0 but is: {eps[1]}")
        if not 1.0 <= d:
            raise ValueError(f"Clipping threshold d should be >= 1 but is: {d}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight_decay should be >= 0 but is: {weight_decay}")
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            for p in group["params"]:
                st = self.state.get(p, {})
                if st and not isinstance(st["step"], Tensor):
                    st["step"] = scalar_state(float(st["step"]))

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        g = p._grad
        if g.ndim > 1:  # (p.grad.new_zeros: the gradient's dtype)
            shape, dt = g._data.shape, g._data.dtype
            state["row_var"] = _zeros(shape[:-1] + (1,), dt)
            state["col_var"] = _zeros(shape[:-2] + (1,) + shape[-1:], dt)
        else:
            state["variance"] = zeros_like(g)

    def _update_group(self, group):
        for p in group["params"]:
            if p._grad is not None:
                if p.is_complex():
                    raise RuntimeError("Adafactor does not support complex parameters")
                if p.numel() == 0:  # torch's rms: norm / numel ** 0.5, a Python division
                    raise ZeroDivisionError("float division by zero")
        super()._update_group(group)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0))

    def _hyper(self, g):
        eps1, eps2 = g["eps"]
        if eps1 is None:  # torch: the machine epsilon of the first parameter it updates
            first = next(p for p in g["params"] if p._grad is not None)
            eps1 = float(jnp.finfo(first._data.dtype).eps)
        return {"lr": value(g["lr"]), "beta2_decay": g["beta2_decay"], "eps1": eps1,
                "eps2": eps2, "d": g["d"], "weight_decay": g["weight_decay"]}
