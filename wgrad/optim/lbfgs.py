"""L-BFGS with an optional strong-Wolfe line search (torch.optim.LBFGS).

Parameters are handled as one flat real vector: complex parameters enter it as their
real view (real and imaginary parts interleaved), as in torch, so inner products are
Re<a, b> and the curvature pairs are those of the real problem (NOTE [Complex parameters
in optim]). Scalars that torch keeps as 0-dim tensors of the parameters' dtype (inner
products, ``H_diag``, ``ro``, ``al``) are 0-dim arrays here too, and NumPy scalars of that
dtype where Python decides on them (NumPy's promotion of a Python number against them is
torch's against a 0-dim tensor), and Python numbers where torch has Python numbers, so the
float32 rounding of a trajectory matches torch's.

# NOTE [LBFGS kernels]
# Each vector computation of an iteration is one jitted kernel, kept on disk as wgrad's
# ops are (``kept``, NOTE [Eager disk cache]): moving the parameters along the direction,
# gathering the flat gradient, the inner products, each step of the two-loop recursion.
# Done with jnp one op at a time, an evaluation of the line search cost ~0.6 ms besides
# the closure (slicing and reshaping the flat vector, real/imag views: ~25 JAX dispatches),
# and a warm process traced 14 functions in its first step. torch's ``add_(x, alpha=a)``
# is a fused multiply-add on CPU (its vectorized kernel); XLA contracts ``p + a * x``
# within one kernel into the same, so the moved parameters and the recursion's updates
# are torch's bit for bit, where separate multiply and add ops rounded twice.
"""
import jax
import jax.numpy as jnp
import numpy as np

from .._tensor import Tensor, _make
from ..autograd.grad_mode import enable_grad
from ..ops._lazy_disk import kept
from ._common import check_lr, value
from .optimizer import Optimizer, _assign

__all__ = ["LBFGS"]


def _real_flat(a):
    if jnp.iscomplexobj(a):
        a = jnp.stack([jnp.real(a), jnp.imag(a)], axis=-1)
    return a.reshape(-1)


def _flat(pairs):
    """The flat real gradient: each (gradient or None, parameter)'s real view, zeros where
    a parameter has no gradient."""
    return jnp.concatenate([
        jnp.zeros(2 * p.size if jnp.iscomplexobj(p) else p.size, jnp.real(p).dtype)
        if g is None else _real_flat(g) for g, p in pairs])


def _moved(params, t, d):
    """Each parameter plus ``t`` times its slice of the flat direction ``d`` (torch's
    ``add_(.., alpha=t)``: ``t`` cast to the parameter's real dtype, one multiply-add)."""
    out, off = [], 0
    for a in params:
        rdt = jnp.real(a).dtype
        tt = jnp.asarray(t).astype(rdt)
        if jnp.iscomplexobj(a):
            n = 2 * a.size
            u = d[off:off + n].reshape(a.shape + (2,)).astype(rdt)
            new = jax.lax.complex(jnp.real(a) + tt * u[..., 0], jnp.imag(a) + tt * u[..., 1])
        else:
            n = a.size
            new = a + tt * d[off:off + n].reshape(a.shape).astype(a.dtype)
        out.append(new.astype(a.dtype))
        off += n
    return tuple(out)


def _curvature(g, prev_g, d, t):
    """The new pair y = g - prev_g, s = d * t, and y.s, y.s / y.y, 1 / y.s."""
    y, s = g - prev_g, d * jnp.asarray(t).astype(d.dtype)
    ys = jnp.dot(y, s)
    return y, s, ys, ys / jnp.dot(y, y), 1.0 / ys


def _back(s, y, q, ro):
    """The first loop's step: al = s.q * ro, then q.add_(y, alpha=-al)."""
    al = jnp.dot(s, q) * ro
    return al, q + (-al) * y


def _forth(y, s, r, ro, al):
    """The second loop's step: be = y.r * ro, then r.add_(s, alpha=al - be)."""
    return r + (al - jnp.dot(y, r) * ro) * s


def _max_abs(v, t):
    return jnp.max(jnp.abs(v * jnp.asarray(t).astype(v.dtype)))


_FLAT = kept("lbfgs.flat", _flat)
_MOVED = kept("lbfgs.moved", _moved)
_CURVATURE = kept("lbfgs.curvature", _curvature)
_BACK = kept("lbfgs.back", _back)
_FORTH = kept("lbfgs.forth", _forth)
_DOT = kept("lbfgs.dot", jnp.dot)
_MAX_ABS = kept("lbfgs.max_abs", _max_abs)  # of v * t: torch's d.mul(t).abs().max()
_SUM_ABS = kept("lbfgs.sum_abs", lambda v: jnp.sum(jnp.abs(v)))
_MUL = kept("lbfgs.mul", lambda v, h: v * h)
_NEG = kept("lbfgs.neg", jnp.negative)


def _host(x):
    """A 0-dim array as a NumPy scalar of its dtype, for Python's decisions on it."""
    return np.asarray(x)[()]


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """Minimiser of the cubic through (x1, f1, slope g1) and (x2, f2, slope g2), clamped
    to ``bounds`` (default: the interval); the midpoint when the cubic has no minimum."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj, x, t, d, f, g, gtd, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """Line search along ``d`` from step ``t`` for a point satisfying the strong Wolfe
    conditions (sufficient decrease c1, curvature c2): bracket, then zoom by cubic
    interpolation. Returns (loss, flat grad, step, number of evaluations)."""
    d_norm = _host(_MAX_ABS(d, 1))
    f_new, g_new = obj(x, t, d)
    evals = 1
    gtd_new = _host(_DOT(g_new, d))
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    it = 0
    bracket = None
    # phase 1: find an interval containing a point that satisfies the conditions
    while it < max_ls:
        if f_new > (f + c1 * t * gtd) or (it > 1 and f_new >= f_prev):
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bf, bg, bgtd = [t], [f_new], [g_new], [gtd_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bf, bg, bgtd = [t_prev, t], [f_prev, f_new], [g_prev, g_new], \
                [gtd_prev, gtd_new]
            break
        lo_step, hi_step = t + 0.01 * (t - t_prev), t * 10
        t_prev, t = t, _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                                          bounds=(lo_step, hi_step))
        f_prev, g_prev, gtd_prev = f_new, g_new, gtd_new
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = _host(_DOT(g_new, d))
        it += 1
    if it == max_ls:
        bracket, bf, bg = [0, t], [f, f_new], [g, g_new]
        bgtd = [gtd, gtd_new]
    # phase 2: zoom into the bracket
    insufficient = False
    low, high = (0, 1) if bf[0] <= bf[-1] else (1, 0)
    while not done and it < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bf[0], bgtd[0], bracket[1], bf[1], bgtd[1])
        bmax, bmin = max(bracket), min(bracket)
        eps = 0.1 * (bmax - bmin)
        if min(bmax - t, t - bmin) < eps:
            # too close to an end: move away unless the last step did not progress
            if insufficient or t >= bmax or t <= bmin:
                t = bmax - eps if abs(t - bmax) < abs(t - bmin) else bmin + eps
                insufficient = False
            else:
                insufficient = True
        else:
            insufficient = False
        f_new, g_new = obj(x, t, d)
        evals += 1
        gtd_new = _host(_DOT(g_new, d))
        it += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bf[low]:
            bracket[high], bf[high], bg[high], bgtd[high] = t, f_new, g_new, gtd_new
            low, high = (0, 1) if bf[0] <= bf[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bf[high], bg[high], bgtd[high] = \
                    bracket[low], bf[low], bg[low], bgtd[low]
            bracket[low], bf[low], bg[low], bgtd[low] = t, f_new, g_new, gtd_new
    return bf[low], bg[low], bracket[low], evals


def _arr(x):
    return x._data if isinstance(x, Tensor) else x


def _scalar(x):
    """A step length or curvature scalar from the state: a NumPy scalar where it was a
    0-dim tensor, else the Python number."""
    x = _arr(x)
    return _host(x) if isinstance(x, jax.Array) else x


def _tensor(x):
    """For the state: 0-dim arrays and NumPy scalars as tensors (torch keeps tensors
    there), Python numbers as they are."""
    if isinstance(x, np.generic):
        x = jnp.asarray(x)
    return _make(x) if isinstance(x, jax.Array) else x


class LBFGS(Optimizer):
    """L-BFGS (torch.optim.LBFGS), ``line_search_fn`` None or ``"strong_wolfe"``. One
    param group only; ``step(closure)`` needs a closure that re-evaluates the loss (and
    its gradients) and returns the closure's first loss.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([3.0, -2.0], requires_grad=True)
    >>> opt = wgrad.optim.LBFGS([w], line_search_fn="strong_wolfe")
    >>> def closure():
    ...     opt.zero_grad()
    ...     loss = ((w - 1.0) ** 2).sum()
    ...     loss.backward()
    ...     return loss
    >>> _ = opt.step(closure)
    >>> bool((w - 1.0).abs().max() < 1e-4)
    True
    """

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        check_lr(lr)
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def __setstate__(self, state):
        super().__setstate__(state)
        self._params = self.param_groups[0]["params"]

    # -- the flat real vector of all parameters (NOTE [LBFGS kernels]) --------------------
    def _flat_grad(self):
        return _FLAT(tuple((None if p._grad is None else p._grad._data, p._data)
                           for p in self._params))

    def _add_grad(self, t, d):
        new = _MOVED(tuple(p._data for p in self._params), float(t), d)
        for p, a in zip(self._params, new):
            _assign(p, a)

    def _directional_evaluate(self, closure, x, t, d):
        self._add_grad(t, d)
        loss = float(closure())
        g = self._flat_grad()
        for p, a in zip(self._params, x):
            _assign(p, a)
        return loss, g

    def step(self, closure):
        """Run up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        group = self.param_groups[0]
        lr = float(value(group["lr"]))
        max_iter, max_eval = group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history = group["line_search_fn"], group["history_size"]

        def evaluate():
            with enable_grad():
                return closure()
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        orig_loss = evaluate()
        loss = float(orig_loss)
        evals = 1
        state["func_evals"] += 1
        g = self._flat_grad()
        if _host(_MAX_ABS(g, 1)) <= tol_grad:
            return orig_loss
        d, t = _arr(state.get("d")), _scalar(state.get("t"))
        dirs = [_arr(v) for v in state.get("old_dirs") or []]
        stps = [_arr(v) for v in state.get("old_stps") or []]
        ro = [_arr(v) for v in state.get("ro") or []]
        h_diag = _arr(state.get("H_diag"))
        prev_g, prev_loss = _arr(state.get("prev_flat_grad")), state.get("prev_loss")
        al = [_arr(v) for v in state["al"]] if "al" in state else None
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            # the direction: two-loop recursion over the curvature pairs
            if state["n_iter"] == 1:
                d, dirs, stps, ro, h_diag = _NEG(g), [], [], [], 1
            else:
                y, s, ys, h_new, ro_new = _CURVATURE(g, prev_g, d, float(t))
                if _host(ys) > 1e-10:
                    if len(dirs) == history:
                        dirs.pop(0)
                        stps.pop(0)
                        ro.pop(0)
                    dirs.append(y)
                    stps.append(s)
                    ro.append(ro_new)
                    h_diag = h_new
                if al is None:
                    al = [None] * history
                q = _NEG(g)
                for i in range(len(dirs) - 1, -1, -1):
                    al[i], q = _BACK(stps[i], dirs[i], q, ro[i])
                r = _MUL(q, h_diag)
                for i in range(len(dirs)):
                    r = _FORTH(dirs[i], stps[i], r, ro[i], al[i])
                d = r
            prev_g, prev_loss = g, loss
            # the step length
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / _host(_SUM_ABS(g))) * lr
            else:
                t = lr
            gtd = _host(_DOT(g, d))
            if gtd > -tol_change:
                break
            ls_evals = 0
            if line_search is not None:
                if line_search != "strong_wolfe":
                    raise RuntimeError("only 'strong_wolfe' is supported")
                x0 = [p._data for p in self._params]

                def obj(x, t, d):
                    return self._directional_evaluate(evaluate, x, t, d)
                loss, g, t, ls_evals = _strong_wolfe(obj, x0, t, d, loss, g, gtd,
                                                     max_ls=max_eval - evals)
                self._add_grad(t, d)
                opt_cond = _host(_MAX_ABS(g, 1)) <= tol_grad
            else:
                self._add_grad(t, d)
                if n_iter != max_iter:
                    loss = float(evaluate())
                    g = self._flat_grad()
                    opt_cond = _host(_MAX_ABS(g, 1)) <= tol_grad
                    ls_evals = 1
            evals += ls_evals
            state["func_evals"] += ls_evals
            # stopping conditions
            if n_iter == max_iter or evals >= max_eval or opt_cond:
                break
            if _host(_MAX_ABS(d, float(t))) <= tol_change:
                break
            if abs(loss - prev_loss) < tol_change:
                break
        state["d"], state["t"] = _tensor(d), _tensor(t)
        state["old_dirs"] = [_make(v) for v in dirs]
        state["old_stps"] = [_make(v) for v in stps]
        state["ro"] = [_make(v) for v in ro]
        state["H_diag"] = _tensor(h_diag)
        state["prev_flat_grad"] = _tensor(prev_g)
        state["prev_loss"] = prev_loss
        if al is not None:
            state["al"] = [_tensor(v) for v in al]
        return orig_loss
