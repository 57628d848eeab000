"""SGD, ASGD and Rprop."""
from ._common import check_fused, check_lr, full_like, scalar_state, value, zeros_like
from .optimizer import Optimizer

__all__ = ["SGD", "ASGD", "Rprop"]


def _nonzero(x):
    return not isinstance(x, (int, float)) or x != 0


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum, dampening, Nesterov
    momentum, weight decay and maximization (torch.optim.SGD). Complex parameters are
    updated with complex arithmetic, which equals the real view's (NOTE [Complex
    parameters in optim]). ``foreach``, ``fused`` and ``differentiable`` are accepted;
    every step is one XLA computation per param group (NOTE [One dispatch per step]), and
    ``differentiable=True`` raises at ``step``.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = wgrad.optim.SGD([w], lr=0.5, momentum=0.9)
    >>> for _ in range(2):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     _ = opt.step()
    >>> w
    tensor([-0.9000,  0.9000], requires_grad=True)
    """

    _rule = "sgd"

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        check_lr(lr)
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not isinstance(weight_decay, (int, float)) or weight_decay < 0.0:
            if isinstance(weight_decay, (int, float)):
                raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening,
                        weight_decay=weight_decay, nesterov=nesterov, maximize=maximize,
                        foreach=foreach, differentiable=differentiable, fused=fused)
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)

    def _init_state(self, p, state, group):
        pass  # the momentum buffer is the first step's gradient

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", _nonzero(g["weight_decay"])),
                ("momentum", _nonzero(g["momentum"])), ("nesterov", bool(g["nesterov"])))

    def _hyper(self, g):
        return {"lr": value(g["lr"]), "momentum": value(g["momentum"]),
                "dampening": value(g["dampening"]), "weight_decay": value(g["weight_decay"])}


class ASGD(Optimizer):
    """Averaged stochastic gradient descent (torch.optim.ASGD); state ``step``, ``eta``,
    ``mu`` (0-dim) and ``ax`` (the average), complex parameters on their real view.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.ASGD([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> sorted(opt.state[w])
    ['ax', 'eta', 'mu', 'step']
    """

    _rule = "asgd"

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_lr(lr)
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        foreach=foreach, maximize=maximize, differentiable=differentiable,
                        capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        lr = group["lr"]
        state["step"] = scalar_state()
        state["eta"] = scalar_state(value(lr))
        state["mu"] = scalar_state(1.0)
        state["ax"] = zeros_like(p)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", _nonzero(g["weight_decay"])))

    def _hyper(self, g):
        return {k: value(g[k]) for k in ("lr", "lambd", "alpha", "t0", "weight_decay")}


class Rprop(Optimizer):
    """Resilient backpropagation (torch.optim.Rprop); state ``step``, ``prev`` and
    ``step_size`` (initialised to ``lr``, ``complex(lr, lr)`` for complex parameters, whose
    components are two independent reals).

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0, -1.0], requires_grad=True)
    >>> opt = wgrad.optim.Rprop([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> w
    tensor([ 0.9000, -0.9000], requires_grad=True)
    """

    _rule = "rprop"

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 < etas[0] < 1.0 < etas[1]:
            raise ValueError(f"Invalid eta values: {etas[0]}, {etas[1]}")
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, capturable=capturable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        state["prev"] = zeros_like(p)
        state["step_size"] = full_like(p, value(group["lr"]))

    def _static(self, g):
        return (("maximize", bool(g["maximize"])),)

    def _hyper(self, g):
        (em, ep), (smin, smax) = g["etas"], g["step_sizes"]
        return {"etaminus": em, "etaplus": ep, "step_size_min": smin, "step_size_max": smax}
