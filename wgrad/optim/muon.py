"""Muon (torch.optim.Muon): momentum orthogonalized by a Newton-Schulz iteration."""
import math

import jax.numpy as jnp

from .._tensor import Tensor
from . import _functional as F
from ._common import value, zeros_like
from .optimizer import Optimizer

__all__ = ["Muon"]

# Keller Jordan's quintic Newton-Schulz coefficients and defaults, as torch's
EPS = 1e-7
DEFAULT_A = 3.4445
DEFAULT_B = -4.7750
DEFAULT_C = 2.0315
DEFAULT_NS_STEPS = 5

# NOTE [Muon in bfloat16]
# torch runs the Newton-Schulz iteration in bfloat16: the update is cast to bfloat16,
# divided by its Frobenius norm, and each step is two ``addmm``s whose products
# accumulate in float32 and are rounded to bfloat16 once, with their ``beta``/``alpha``
# terms, at the end. The rule does the same (bfloat16 operands, float32 ``dot`` with the
# scaled addend added in float32, one rounding), so for small matrices its result is
# torch's bit for bit; for large ones the two float32 sums are taken in another order and
# an element may round to the neighbouring bfloat16 value (256x384: about half the
# elements differ by one bfloat16 ulp). The bfloat16 result is added to the parameter in
# the parameter's dtype, as torch's ``add_`` does.
_bf16, _f32 = jnp.bfloat16, jnp.float32


def _num(x):
    return float(x._data.reshape(())) if isinstance(x, Tensor) else x


def _addmm(x, m1, m2, beta, alpha=None):
    """torch.addmm on bfloat16 operands: ``beta * x + alpha * m1 @ m2`` accumulated in
    float32, rounded to bfloat16 once (NOTE [Muon in bfloat16])."""
    prod = jnp.dot(m1, m2, preferred_element_type=_f32)
    if alpha is not None:
        prod = alpha * prod
    return (beta * x.astype(_f32) + prod).astype(_bf16)


def _newton_schulz(g, coefficients, steps, eps):
    """torch's ``_zeropower_via_newtonschulz``: ``steps`` quintic iterations on the
    bfloat16 matrix ``g`` scaled to Frobenius norm 1 (a wide one transposed)."""
    a, b, c = (k.astype(_f32) for k in coefficients)
    x = g.astype(_f32).astype(_bf16)  # (a double rounds through float, as in torch)
    tall = g.shape[0] > g.shape[1]
    if tall:
        x = x.T
    norm = jnp.sqrt(jnp.sum(jnp.square(x.astype(_f32)))).astype(_bf16)
    norm = jnp.maximum(norm.astype(_f32), eps.astype(_f32)).astype(_bf16)
    x = (x.astype(_f32) / norm.astype(_f32)).astype(_bf16)
    for _ in range(steps):
        gram = jnp.dot(x, x.T, preferred_element_type=_f32).astype(_bf16)
        gram_update = _addmm(gram, gram, gram, b, c)
        x = _addmm(x, gram_update, x, a)
    return x.T if tall else x


def _ratio(adjust_lr_fn, shape):
    """torch's ``_adjust_lr`` factor for a parameter of ``shape``."""
    rows, cols = shape[:2]
    if adjust_lr_fn is None or adjust_lr_fn == "original":
        return math.sqrt(max(1, rows / cols))
    if adjust_lr_fn == "match_rms_adamw":
        return 0.2 * math.sqrt(max(rows, cols))
    return 1.0


def _muon(o, h, p, g, s, c):
    """torch's ``_single_tensor_muon`` for one real 2-D parameter."""
    buf = F._lerp(s["momentum_buffer"], g, c(1 - h["momentum"]))
    update = F._lerp(g, buf, c(h["momentum"])) if o["nesterov"] else buf
    update = _newton_schulz(update, (h["a"], h["b"], h["c"]), o["ns_steps"], h["eps"])
    lr = h["lr"]
    p = p * c(1 - lr * h["weight_decay"])
    p = p + c(-(lr * _ratio(o["adjust_lr_fn"], p.shape))) * update.astype(p.dtype)
    return p, {"momentum_buffer": buf}


F.RULES["muon"] = _muon  # group_update finds its rule by name


class Muon(Optimizer):
    """Muon (torch.optim.Muon): SGD momentum (Nesterov by default) whose update is
    orthogonalized by ``ns_steps`` Newton-Schulz iterations in bfloat16 (NOTE [Muon in
    bfloat16]), decoupled weight decay ``lr * weight_decay``, and the learning rate scaled
    per shape by ``adjust_lr_fn`` (``None``/``"original"``: ``sqrt(max(1, A/B))``;
    ``"match_rms_adamw"``: ``0.2 * sqrt(max(A, B))``). Only 2-D parameters, as in torch;
    complex parameters raise at ``step``. Like torch's, it takes no ``foreach`` or
    ``maximize``.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.eye(2, requires_grad=True)
    >>> opt = wgrad.optim.Muon([w], lr=0.1, weight_decay=0.0)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> w
    tensor([[0.8875, 0.0000],
            [0.0000, 0.8875]], requires_grad=True)
    """

    _rule = "muon"

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= _num(lr):
            raise ValueError(f"Learning rate should be >= 0 but is: {lr}")
        if not 0.0 <= momentum:
            raise ValueError(f"momentum should be >= 0 but is: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"weight decay should be >= 0 but is: {weight_decay}")
        if adjust_lr_fn is not None and adjust_lr_fn not in ["original", "match_rms_adamw"]:
            raise ValueError(f"Adjust learning rate function {adjust_lr_fn} is not supported")
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                if p.ndim != 2:
                    raise ValueError("Muon only supports 2D parameters whereas we found a "
                                     f"parameter with size: {p.size()}")

    def _init_state(self, p, state, group):
        state["momentum_buffer"] = zeros_like(p._grad)

    def _update_group(self, group):
        # torch's checks, in its order: all parameters' dtypes, then per parameter its
        # gradient's rank and the iteration's options
        params = [p for p in group["params"] if p._grad is not None]
        for p in params:
            if p.is_complex():
                raise RuntimeError("Muon does not support complex parameters")
        for p in params:
            if p._grad.ndim != 2:
                raise ValueError("Param gradient must be a 2D matrix")
            if group["ns_steps"] >= 100:
                raise ValueError("Number of steps must be less than 100 for computational "
                                 "efficiency")
            if len(group["ns_coefficients"]) != 3:
                raise ValueError("Coefficients must be a tuple of exactly 3 values")
        super()._update_group(group)

    def _static(self, g):
        return (("nesterov", bool(g["nesterov"])), ("ns_steps", g["ns_steps"]),
                ("adjust_lr_fn", g["adjust_lr_fn"]))

    def _hyper(self, g):
        a, b, c = g["ns_coefficients"]
        return {"lr": value(g["lr"]), "weight_decay": g["weight_decay"],
                "momentum": g["momentum"], "a": a, "b": b, "c": c, "eps": g["eps"]}
