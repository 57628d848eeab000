"""The update rules of the first-order optimizers, and the one jitted computation per
param group that applies them (NOTE [One dispatch per step] in optimizer.py).

# NOTE [Complex parameters in optim]
# torch.optim runs every algorithm but SGD (and LBFGS, which flattens with view_as_real)
# on ``torch.view_as_real`` of complex parameters, gradients and state: a complex number
# is two independent real numbers, so second moments, maxima, signs and square roots are
# taken per real component (Adam's exp_avg_sq of z is (Re g)^2 and (Im g)^2, not |g|^2).
# SGD's update is linear with real coefficients, which acts on each component alike, so
# its complex arithmetic equals the real view's, and it runs so (``_LINEAR``). Every
# rule is elementwise, so the real view of a complex parameter is the same as running
# the rule on the real parts and on the imaginary parts as two real parameters; that is
# what ``_apply`` does for the other rules (no interleaved copy: XLA fuses
# real/imag/complex into the update loop), and the results go back into complex arrays:
# the state torch shows (``exp_avg`` of a complex parameter is complex) with the same
# values. Scalar state (step, mu_product, eta, mu) is real and shared by both parts.

# NOTE [Scalars in the rules]
# torch computes bias corrections and step sizes from ``step.item()`` in Python floats
# (double) and casts the final coefficient to the parameter's dtype when it multiplies a
# tensor. The rules do the same: traced hyper-parameters and scalar state are promoted to
# the widest float (float64 with x64) for scalar arithmetic, and ``c(x)`` casts a
# coefficient to the parameter's real dtype where torch's kernel would. Scalar state is
# stored back in its own dtype (float32 ``step``, ``mu_product``, ``eta``, ``mu``), so its
# rounding matches torch's too.
"""
import functools
import sys

import jax
import jax.numpy as jnp

from ..ops._lazy_disk import DeferredJit

__all__ = ["group_update", "RULES"]

_SCALAR_STATE = frozenset(("step", "mu_product", "eta", "mu"))
# an array nothing else holds is referenced by its Tensor, the caller's list or dict, the
# loop variable and getrefcount's argument
_SOLE_OWNER_REFS = 4
_getrefcount = sys.getrefcount


def _wide():
    return jnp.float64 if jax.config.jax_enable_x64 else jnp.float32


def _lerp(a, b, w):
    """torch.lerp's formula (two branches on the weight, for accuracy near 1)."""
    d = b - a
    return jnp.where(jnp.abs(w) < 0.5, a + w * d, b - d * (1 - w))


def _wd(o, h, p, g, c):
    """Coupled L2 weight decay: grad + weight_decay * param."""
    return g + c(h["weight_decay"]) * p if o["weight_decay"] else g


def _decay(o, h, p, g, c):
    """Coupled (added to the gradient) or decoupled (param scaled) weight decay."""
    if not o["weight_decay"]:
        return p, g
    if o.get("decoupled"):
        return p * c(1 - h["lr"] * h["weight_decay"]), g
    return p, g + c(h["weight_decay"]) * p


# ======================================================================================
# The rules: (options, hyper, param, grad, state, c) -> (param, state); real arrays
# ======================================================================================

def sgd(o, h, p, g, s, c):
    g = _wd(o, h, p, g, c)
    new = {}
    if o["momentum"]:
        buf = s.get("momentum_buffer")
        if buf is None:
            buf = g
        else:
            buf = buf * c(h["momentum"]) + c(1 - h["dampening"]) * g
        new["momentum_buffer"] = buf
        g = g + c(h["momentum"]) * buf if o["nesterov"] else buf
    return p + c(-h["lr"]) * g, new


def adam(o, h, p, g, s, c):
    step = s["step"] + 1
    p, g = _decay(o, h, p, g, c)
    b1, b2 = h["beta1"], h["beta2"]
    m = _lerp(s["exp_avg"], g, c(1 - b1))
    v = s["exp_avg_sq"] * c(b2) + c(1 - b2) * g * g
    t = step.astype(b1.dtype)
    step_size = h["lr"] / (1 - b1 ** t)
    bc2_sqrt = jnp.sqrt(1 - b2 ** t)
    new = {"step": step, "exp_avg": m, "exp_avg_sq": v}
    if o["amsgrad"]:
        v = new["max_exp_avg_sq"] = jnp.maximum(s["max_exp_avg_sq"], v)
    denom = jnp.sqrt(v) / c(bc2_sqrt) + c(h["eps"])
    return p + c(-step_size) * m / denom, new


def adamax(o, h, p, g, s, c):
    step = s["step"] + 1
    g = _wd(o, h, p, g, c)
    b1, b2 = h["beta1"], h["beta2"]
    m = _lerp(s["exp_avg"], g, c(1 - b1))
    u = jnp.maximum(s["exp_inf"] * c(b2), jnp.abs(g) + c(h["eps"]))
    clr = h["lr"] / (1 - b1 ** step.astype(b1.dtype))
    return p + c(-clr) * m / u, {"step": step, "exp_avg": m, "exp_inf": u}


def nadam(o, h, p, g, s, c):
    step = s["step"] + 1
    t = step.astype(h["lr"].dtype)
    b1, b2, lr = h["beta1"], h["beta2"], h["lr"]
    bc2 = 1 - b2 ** t
    p, g = _decay(o, h, p, g, c)
    mu = b1 * (1.0 - 0.5 * 0.96 ** (t * h["momentum_decay"]))
    mu_next = b1 * (1.0 - 0.5 * 0.96 ** ((t + 1) * h["momentum_decay"]))
    mu_product = s["mu_product"] * mu.astype(s["mu_product"].dtype)
    m = _lerp(s["exp_avg"], g, c(1 - b1))
    v = s["exp_avg_sq"] * c(b2) + c(1 - b2) * g * g
    denom = jnp.sqrt(v / c(bc2)) + c(h["eps"])
    mp = mu_product.astype(t.dtype)
    mp_next = mp * mu_next
    p = p + c(-lr * (1.0 - mu) / (1.0 - mp)) * g / denom
    p = p + c((-lr * mu_next) / (1.0 - mp_next)) * m / denom
    return p, {"step": step, "mu_product": mu_product, "exp_avg": m, "exp_avg_sq": v}


def radam(o, h, p, g, s, c):
    step = s["step"] + 1
    t = step.astype(h["lr"].dtype)
    b1, b2, lr = h["beta1"], h["beta2"], h["lr"]
    p, g = _decay(o, h, p, g, c)
    m = _lerp(s["exp_avg"], g, c(1 - b1))
    v = s["exp_avg_sq"] * c(b2) + c(1 - b2) * g * g
    bc1, bc2 = 1 - b1 ** t, 1 - b2 ** t
    mhat = m / c(bc1)
    rho_inf = 2 / (1 - b2) - 1
    rho_t = rho_inf - 2 * t * (b2 ** t) / bc2
    rect = jnp.sqrt(jnp.abs((rho_t - 4) * (rho_t - 2) * rho_inf /
                            ((rho_inf - 4) * (rho_inf - 2) * rho_t)))
    adaptive = c(bc2 ** 0.5) / (jnp.sqrt(v) + c(h["eps"]))
    rectified = mhat * c(lr) * adaptive * c(rect)
    upd = jnp.where(rho_t > 5.0, rectified, mhat * c(lr))
    return p - upd, {"step": step, "exp_avg": m, "exp_avg_sq": v}


def adagrad(o, h, p, g, s, c):
    step = s["step"] + 1
    g = _wd(o, h, p, g, c)
    clr = h["lr"] / (1 + (step.astype(h["lr"].dtype) - 1) * h["lr_decay"])
    acc = s["sum"] + g * g
    std = jnp.sqrt(acc) + c(h["eps"])
    return p + c(-clr) * g / std, {"step": step, "sum": acc}


def adadelta(o, h, p, g, s, c):
    step = s["step"] + 1
    g = _wd(o, h, p, g, c)
    rho, eps = h["rho"], c(h["eps"])
    sq = s["square_avg"] * c(rho) + c(1 - rho) * g * g
    delta = jnp.sqrt(s["acc_delta"] + eps) / jnp.sqrt(sq + eps) * g
    acc = s["acc_delta"] * c(rho) + c(1 - rho) * delta * delta
    return p + c(-h["lr"]) * delta, {"step": step, "square_avg": sq, "acc_delta": acc}


def rmsprop(o, h, p, g, s, c):
    step = s["step"] + 1
    g = _wd(o, h, p, g, c)
    alpha = h["alpha"]
    sq = s["square_avg"] * c(alpha) + c(1 - alpha) * g * g
    new = {"step": step, "square_avg": sq}
    if o["centered"]:
        ga = new["grad_avg"] = _lerp(s["grad_avg"], g, c(1 - alpha))
        avg = jnp.sqrt(sq - ga * ga)
    else:
        avg = jnp.sqrt(sq)
    avg = avg + c(h["eps"])
    if o["momentum"]:
        buf = new["momentum_buffer"] = s["momentum_buffer"] * c(h["momentum"]) + g / avg
        return p + c(-h["lr"]) * buf, new
    return p + c(-h["lr"]) * g / avg, new


def rprop(o, h, p, g, s, c):
    step = s["step"] + 1
    sign = jnp.sign(g * s["prev"])
    etaminus = c(h["etaminus"])
    factor = jnp.where(sign > 0, c(h["etaplus"]), jnp.where(sign < 0, etaminus, c(1.0)))
    size = jnp.clip(s["step_size"] * factor, c(h["step_size_min"]), c(h["step_size_max"]))
    g = jnp.where(factor == etaminus, jnp.zeros_like(g), g)
    return p - jnp.sign(g) * size, {"step": step, "prev": g, "step_size": size}


def asgd(o, h, p, g, s, c):
    step = s["step"] + 1
    g = _wd(o, h, p, g, c)
    w = h["lr"].dtype
    eta = s["eta"].astype(w)
    p = p * c(1 - h["lambd"] * eta)
    p = p + c(-eta) * g
    mu = s["mu"]
    ax = jnp.where(mu != 1, s["ax"] + (p - s["ax"]) * mu.astype(p.dtype), p)
    t = step.astype(w)
    lr = h["lr"]
    new_eta = lr / ((1 + h["lambd"] * lr * t) ** h["alpha"])
    new_mu = 1 / jnp.maximum(1.0, t - h["t0"])
    return p, {"step": step, "eta": new_eta.astype(s["eta"].dtype),
               "mu": new_mu.astype(s["mu"].dtype), "ax": ax}


# Rules whose update is linear with real coefficients: on a complex parameter they run in
# complex arithmetic, as torch's SGD does (NOTE [Complex parameters in optim]). Splitting
# into real and imaginary parts gives the same values but XLA then runs the update as two
# passes and cannot write the donated buffers in place: SGD with momentum over 100
# complex64[4096] parameters, 0.63 ms split against 0.34 ms (bench/bench_optim.py).
_LINEAR = (sgd,)

RULES = {f.__name__: f for f in (sgd, adam, adamax, nadam, radam, adagrad, adadelta, rmsprop,
                                 rprop, asgd)}


# ======================================================================================
# The group computation
# ======================================================================================

def _apply(rule, o, h, p, g, s):
    """The rule on one parameter; a complex one as two real ones, its real and imaginary
    parts (the real view, without interleaving: NOTE [Complex parameters in optim])."""
    rd = jnp.real(p).dtype if jnp.iscomplexobj(p) else p.dtype

    def c(x):
        return jnp.asarray(x).astype(rd)
    if not jnp.iscomplexobj(p):
        return rule(o, h, p, g.astype(rd), s, c)
    if rule in _LINEAR:  # complex arithmetic is the real view's; one pass, half the work
        return rule(o, h, p, g.astype(p.dtype), s, c)
    parts = []
    for part in (jnp.real, jnp.imag):
        sp = {k: (v if k in _SCALAR_STATE else part(v)) for k, v in s.items()}
        parts.append(rule(o, h, part(p), part(g).astype(rd), sp, c))
    (p_re, new_re), (p_im, new_im) = parts
    new = {k: (v if k in _SCALAR_STATE else jax.lax.complex(v, new_im[k]))
           for k, v in new_re.items()}
    return jax.lax.complex(p_re, p_im), new


def _group(rule, static, maximize, hyper, ps, gs, ss):
    o = dict(static)
    w = _wide()
    h = {k: jnp.asarray(v).astype(w) for k, v in hyper.items()}
    out_p, out_s = [], []
    for p, g, s in zip(ps, gs, ss):
        p, new = _apply(rule, o, h, p, -g if maximize else g, s)
        out_p.append(p)
        out_s.append(new)
    return out_p, out_s


@functools.lru_cache(maxsize=256)
def _compiled(rule, static, maximize, donate):
    fn = functools.partial(_group, RULES[rule], static, maximize)
    fn = DeferredJit(fn, donate_argnums=(1, 3) if donate else ())
    fn._wg_src = ("o", rule, static, maximize, donate)  # NOTE [Eager disk cache]
    return fn


def _sole_owners(ps, ss, lists=1):
    """Whether nothing but its Tensor (and the ``lists`` lists or the dict it was
    collected into) holds each parameter and state array, so that donating them is
    safe."""
    for a in ps:
        if _getrefcount(a) > _SOLE_OWNER_REFS + lists - 1:
            return False
    for s in ss:
        for a in s.values():
            if _getrefcount(a) > _SOLE_OWNER_REFS:
                return False
    return True


# NOTE [Chunked groups]
# XLA's CPU compiler spends tens of milliseconds per fusion, and a program over n
# parameters has n update fusions (jit does not share code between identical fusions).
# Measured on a quiet 2-core CPU (docs/optim.md), Adam over complex64[4096] parameters:
# one program for 200 parameters compiles in 3.2 s and steps in 2.30 ms, chunks of 32 in
# 0.31 s and 2.08 ms; for 1000 parameters 22.9 s and 35.5 ms against 0.36 s and 20.2 ms.
# Stacking same-shaped parameters into one array costs more copies than it saves.
# So a group of up to _CHUNK parameters is one program and one dispatch; a larger group is
# split by kind of parameter (shapes, dtypes, state) into chunks of _CHUNK, and chunks
# alike share one compiled program: a model of many parameters of a few kinds compiles a
# few programs of _CHUNK parameters and dispatches n / _CHUNK times per step.
# A linear rule's update is one small fusion per parameter, so its chunks are larger
# (SGD over 128 complex64[4096] parameters compiles in ~0.15 s): 100 parameters are one
# dispatch.
_CHUNK, _CHUNK_LINEAR = 32, 128


def _kind(p, g, s):
    # only groups chunks that can share a program; jit keys its cache on the exact avals
    return (p.shape, p.dtype, g.dtype, tuple(s))


def group_update(rule, static, hyper, ps, gs, ss):
    """Apply ``RULES[rule]`` to every parameter of a group in one jitted computation
    (chunks of a large group: NOTE [Chunked groups]).

    ``static`` is a tuple of ``(name, value)`` structural options (part of the cache key,
    with ``maximize``), ``hyper`` a dict of scalars traced as arguments, ``ps``/``gs``
    the parameter and gradient arrays and ``ss`` a dict of state arrays per parameter.
    Returns the new parameter arrays and a dict of new state arrays per parameter.
    Parameter and state buffers are donated when nothing but their Tensor holds them.
    """
    static = tuple(static)
    maximize = bool(dict(static).pop("maximize", False))
    static = tuple(kv for kv in static if kv[0] != "maximize")
    chunk = _CHUNK_LINEAR if RULES[rule] in _LINEAR else _CHUNK
    if len(ps) <= chunk:
        fn = _compiled(rule, static, maximize, _sole_owners(ps, ss))
        return fn(hyper, ps, gs, ss)
    kinds = {}
    for i in range(len(ps)):  # (no loop variable left holding an array: donation)
        kinds.setdefault(_kind(ps[i], gs[i], ss[i]), []).append(i)
    out_p, out_s = [None] * len(ps), [None] * len(ps)
    for idx in kinds.values():
        for k in range(0, len(idx), chunk):
            sel = idx[k:k + chunk]
            cp, cs = [ps[i] for i in sel], [ss[i] for i in sel]
            fn = _compiled(rule, static, maximize, _sole_owners(cp, cs, lists=2))
            new_p, new_s = fn(hyper, cp, [gs[i] for i in sel], cs)
            for j, i in enumerate(sel):
                out_p[i], out_s[i] = new_p[j], new_s[j]
    return out_p, out_s
