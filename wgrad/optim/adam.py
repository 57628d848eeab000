"""The Adam family: Adam, AdamW, Adamax, NAdam, RAdam."""
from .._tensor import Tensor
from ._common import check_fused, check_lr, scalar_state, value, zeros_like
from .optimizer import Optimizer

__all__ = ["Adam", "AdamW", "Adamax", "NAdam", "RAdam"]


def _check(lr, betas, eps, weight_decay):
    check_lr(lr)
    if not 0.0 <= eps:
        raise ValueError(f"Invalid epsilon value: {eps}")
    for i, b in enumerate(betas):
        bv = float(b._data.reshape(())) if isinstance(b, Tensor) else b
        if not 0.0 <= bv < 1.0:
            raise ValueError(f"Invalid beta parameter at index {i}: {b}")
    if not 0.0 <= weight_decay:
        raise ValueError(f"Invalid weight_decay value: {weight_decay}")


def _betas(g):
    b1, b2 = g["betas"]
    return {"lr": value(g["lr"]), "beta1": value(b1), "beta2": value(b2), "eps": g["eps"],
            "weight_decay": value(g["weight_decay"])}


def _moments(p, state):
    state["step"] = scalar_state()
    state["exp_avg"] = zeros_like(p)
    state["exp_avg_sq"] = zeros_like(p)


class Adam(Optimizer):
    """Adam (torch.optim.Adam), with ``amsgrad``, L2 or decoupled weight decay and
    ``maximize``. Complex parameters are optimised on their real view, so the second
    moment is per real component (NOTE [Complex parameters in optim]). ``foreach``,
    ``fused``, ``capturable`` and ``differentiable`` are accepted; the step is one XLA
    computation per param group either way, and ``differentiable=True`` raises at
    ``step``.

    Example
    -------
    >>> import wgrad
    >>> z = wgrad.tensor([1 + 1j], requires_grad=True)
    >>> opt = wgrad.optim.Adam([z], lr=0.1)
    >>> (z.abs() ** 2).sum().backward(); _ = opt.step()
    >>> z
    tensor([0.9000+0.9000j], requires_grad=True)
    """

    _rule = "adam"
    _decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        _check(lr, betas, eps, weight_decay)
        if isinstance(lr, Tensor) and foreach and not capturable:
            raise ValueError("lr as a Tensor is not supported for capturable=False and "
                             "foreach=True")
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float)) or
                (isinstance(betas[0], Tensor) and isinstance(betas[1], Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, maximize=maximize, foreach=foreach,
                        capturable=capturable, differentiable=differentiable, fused=fused,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _init_state(self, p, state, group):
        _moments(p, state)
        if group["amsgrad"]:
            state["max_exp_avg_sq"] = zeros_like(p)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("amsgrad", bool(g["amsgrad"])),
                ("weight_decay", g["weight_decay"] != 0),
                ("decoupled", bool(g.get("decoupled_weight_decay", self._decoupled))))

    _hyper = staticmethod(_betas)


class AdamW(Adam):
    """Adam with decoupled weight decay (torch.optim.AdamW: Adam with
    ``decoupled_weight_decay=True`` and ``weight_decay=0.01``).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.AdamW([w], lr=0.1)
    >>> opt.defaults["decoupled_weight_decay"], opt.defaults["weight_decay"]
    (True, 0.01)
    """

    _decoupled = True

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

    def __setstate__(self, state):
        super().__setstate__(state)
        for g in self.param_groups:
            g["decoupled_weight_decay"] = True


class Adamax(Optimizer):
    """Adamax, Adam with the infinity norm (torch.optim.Adamax); complex parameters on
    their real view (the max is per real component).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.Adamax([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    _rule = "adamax"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        _check(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        state["exp_avg"] = zeros_like(p)
        state["exp_inf"] = zeros_like(p)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0))

    _hyper = staticmethod(_betas)


class NAdam(Optimizer):
    """Adam with Nesterov momentum (torch.optim.NAdam), with ``momentum_decay`` and
    optional decoupled weight decay; state ``step``, ``mu_product``, ``exp_avg``,
    ``exp_avg_sq``.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.NAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> sorted(opt.state[w])
    ['exp_avg', 'exp_avg_sq', 'mu_product', 'step']
    """

    _rule = "nadam"

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        _check(lr, betas, eps, weight_decay)
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize,
                        foreach=foreach, capturable=capturable, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        state["mu_product"] = scalar_state(1.0)
        state["exp_avg"] = zeros_like(p)
        state["exp_avg_sq"] = zeros_like(p)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0),
                ("decoupled", bool(g["decoupled_weight_decay"])))

    def _hyper(self, g):
        h = _betas(g)
        h["momentum_decay"] = g["momentum_decay"]
        return h


class RAdam(Optimizer):
    """Rectified Adam (torch.optim.RAdam), optionally with decoupled weight decay.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.RAdam([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> w
    tensor([0.8000], requires_grad=True)
    """

    _rule = "radam"

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        _check(lr, betas, eps, weight_decay)
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize, foreach=foreach, capturable=capturable,
                        decoupled_weight_decay=decoupled_weight_decay,
                        differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        _moments(p, state)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0),
                ("decoupled", bool(g["decoupled_weight_decay"])))

    _hyper = staticmethod(_betas)
