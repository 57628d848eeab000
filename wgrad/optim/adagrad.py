"""Adagrad, Adadelta and RMSprop."""
from ._common import check_fused, check_lr, full_like, scalar_state, value, zeros_like
from .optimizer import Optimizer

__all__ = ["Adagrad", "Adadelta", "RMSprop"]


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad). As in torch, the state (``step`` and ``sum``, the
    latter ``initial_accumulator_value`` per real component) is created by the
    constructor; complex parameters on their real view.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.Adagrad([w], lr=0.1)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> w
    tensor([0.9000], requires_grad=True)
    """

    _rule = "adagrad"

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0,
                 initial_accumulator_value=0, eps=1e-10, foreach=None, *, maximize=False,
                 differentiable=False, fused=None):
        check_lr(lr)
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(f"Invalid initial_accumulator_value value: "
                             f"{initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, foreach=foreach,
                        maximize=maximize, differentiable=differentiable, fused=fused)
        super().__init__(params, defaults)
        check_fused(fused, foreach, differentiable)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        state["sum"] = full_like(p, group["initial_accumulator_value"])

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0))

    def _hyper(self, g):
        return {"lr": value(g["lr"]), "lr_decay": g["lr_decay"], "eps": g["eps"],
                "weight_decay": g["weight_decay"]}


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta); complex parameters on their real view.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.Adadelta([w])
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> sorted(opt.state[w])
    ['acc_delta', 'square_avg', 'step']
    """

    _rule = "adadelta"

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_lr(lr)
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize,
                        capturable=capturable, foreach=foreach, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        state["square_avg"] = zeros_like(p)
        state["acc_delta"] = zeros_like(p)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0))

    def _hyper(self, g):
        return {"lr": value(g["lr"]), "rho": g["rho"], "eps": g["eps"],
                "weight_decay": g["weight_decay"]}


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop) with ``alpha``, ``centered`` and ``momentum``;
    complex parameters on their real view.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.tensor([1.0], requires_grad=True)
    >>> opt = wgrad.optim.RMSprop([w], lr=0.01, centered=True, momentum=0.9)
    >>> (w * w).sum().backward(); _ = opt.step()
    >>> sorted(opt.state[w])
    ['grad_avg', 'momentum_buffer', 'square_avg', 'step']
    """

    _rule = "rmsprop"

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        check_lr(lr)
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = dict(lr=lr, momentum=momentum, alpha=alpha, eps=eps, centered=centered,
                        weight_decay=weight_decay, capturable=capturable, foreach=foreach,
                        maximize=maximize, differentiable=differentiable)
        super().__init__(params, defaults)

    def _init_state(self, p, state, group):
        state["step"] = scalar_state()
        state["square_avg"] = zeros_like(p)
        if group["momentum"] > 0:
            state["momentum_buffer"] = zeros_like(p)
        if group["centered"]:
            state["grad_avg"] = zeros_like(p)

    def _static(self, g):
        return (("maximize", bool(g["maximize"])), ("weight_decay", g["weight_decay"] != 0),
                ("centered", bool(g["centered"])), ("momentum", g["momentum"] > 0))

    def _hyper(self, g):
        return {"lr": value(g["lr"]), "alpha": g["alpha"], "eps": g["eps"],
                "weight_decay": g["weight_decay"], "momentum": g["momentum"]}
