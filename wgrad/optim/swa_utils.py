"""``wgrad.optim.swa_utils``: stochastic weight averaging and exponential moving averages
of a model's parameters (``AveragedModel``), the SWA learning-rate schedule (``SWALR``)
and ``update_bn``, as torch.optim.swa_utils.

Example
-------
>>> from wgrad.optim.swa_utils import AveragedModel
>>> model = wgrad.nn.Linear(2, 1)
>>> swa = AveragedModel(model)
>>> swa.update_parameters(model)
>>> int(swa.n_averaged)
1
"""
import copy
import itertools
import math

from .. import _dtype as D
from .._autograd.grad_mode import no_grad
from .._creation import tensor
from .._tensor import Tensor
from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from .lr_scheduler import LRScheduler, _per_group

__all__ = ["AveragedModel", "SWALR", "update_bn", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if decay < 0.0 or decay > 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place update of a list of averages of one dtype toward the current values by
    ``1 - decay`` (floating and complex: ``lerp_``)."""
    _check_decay(decay)

    def ema_update(ema_param_list, current_param_list, _):
        with no_grad():
            if ema_param_list[0].is_floating_point() or ema_param_list[0].is_complex():
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.lerp_(p_model, 1 - decay)
            else:
                for p_ema, p_model in zip(ema_param_list, current_param_list):
                    p_ema.copy_(p_ema * decay + p_model * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place update of a list of running means of one dtype: floating and complex
    ones ``lerp_`` by ``1 / (n + 1)``; others add ``(p - avg) / (n + 1)`` (by ``addcdiv_``
    where ``n`` is a tensor: torch's integer error)."""
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        with no_grad():
            first = averaged_param_list[0]
            if first.is_floating_point() or first.is_complex():
                w = 1 / (num_averaged + 1)
                for p_avg, p_model in zip(averaged_param_list, current_param_list):
                    p_avg.lerp_(p_model, w)
                return
            for p_avg, p_model in zip(averaged_param_list, current_param_list):
                diff = p_model - p_avg
                if isinstance(num_averaged, Tensor):
                    p_avg.addcdiv_(diff, num_averaged + 1)
                else:
                    p_avg.add_(diff, alpha=1.0 / (num_averaged + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """``decay * ema + (1 - decay) * p``, for one parameter."""
    _check_decay(decay)

    def ema_update(ema_param, current_param, num_averaged):
        with no_grad():
            return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """``avg + (p - avg) / (n + 1)``, for one parameter."""
    def swa_update(averaged_param, current_param, num_averaged):
        with no_grad():
            return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of ``model`` whose parameters (``use_buffers``: and buffers) are averages
    of the ones ``update_parameters`` is given: equal means by default, or ``avg_fn`` /
    ``multi_avg_fn`` (``get_ema_multi_avg_fn()`` for an EMA). ``n_averaged`` counts the
    updates; calling it runs the averaged copy."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None,
                 use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise AssertionError("Only one of avg_fn and multi_avg_fn should be provided")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", tensor(0, dtype=D.int64, device=device))
        self.avg_fn = avg_fn
        self.multi_avg_fn = multi_avg_fn
        self.use_buffers = use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    def update_parameters(self, model):
        """Fold ``model``'s current parameters into the averages (the first call copies
        them)."""
        mine = itertools.chain(self.module.parameters(), self.module.buffers()) \
            if self.use_buffers else self.parameters()
        theirs = itertools.chain(model.parameters(), model.buffers()) \
            if self.use_buffers else model.parameters()
        averaged, current = [], []
        first = int(self.n_averaged) == 0
        for p_avg, p_model in zip(mine, theirs):
            p_model = p_model.detach().to(p_avg.device)
            averaged.append(p_avg.detach())
            current.append(p_model)
            if first:
                p_avg.detach().copy_(p_model)
        if not first:
            n = self.n_averaged
            if self.multi_avg_fn is not None:  # one call per dtype, as torch groups them
                groups = {}
                for p_avg, p_model in zip(averaged, current):
                    pair = groups.setdefault(p_avg.dtype, ([], []))
                    pair[0].append(p_avg)
                    pair[1].append(p_model)
                for group_avg, group_model in groups.values():
                    self.multi_avg_fn(group_avg, group_model, n)
            else:  # on the CPU torch's default is the one-parameter running mean
                avg_fn = self.avg_fn or get_swa_avg_fn()
                for p_avg, p_model in zip(averaged, current):
                    p_avg.copy_(avg_fn(p_avg, p_model, n))
        if not self.use_buffers:  # buffers (batch norm's statistics) follow the model
            for b_avg, b_model in zip(self.module.buffers(), model.buffers()):
                b_avg.detach().copy_(b_model.detach().to(b_avg.device))
        self.n_averaged += 1


def update_bn(loader, model, device=None):
    """Recompute the batch-norm statistics of ``model`` with one pass over ``loader``
    (a batch's first element where it is a list or tuple), as a cumulative average."""
    momenta = {}
    for m in model.modules():
        if isinstance(m, _BatchNorm):
            m.reset_running_stats()
            momenta[m] = m.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for m in momenta:
        m.momentum = None
    with no_grad():
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    for m, momentum in momenta.items():
        m.momentum = momentum
    model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's learning rate to ``swa_lr`` over ``anneal_epochs`` steps
    (``"cos"`` or ``"linear"``), then holds it there."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        for lr, group in zip(_per_group("swa_lr", optimizer, swa_lr), optimizer.param_groups):
            group["swa_lr"] = lr
        if anneal_strategy not in ["cos", "linear"]:
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        self._anneal_strategy = anneal_strategy
        self.anneal_func = self._cosine_anneal if anneal_strategy == "cos" else \
            self._linear_anneal
        if not isinstance(anneal_epochs, int) or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        self.anneal_epochs = anneal_epochs
        super().__init__(optimizer, last_epoch)

    @staticmethod
    def _linear_anneal(t):
        return t

    @staticmethod
    def _cosine_anneal(t):
        return (1 - math.cos(math.pi * t)) / 2

    @staticmethod
    def _get_initial_lr(lr, swa_lr, alpha):
        return swa_lr if alpha == 1 else (lr - alpha * swa_lr) / (1 - alpha)

    def get_lr(self):
        self._warn_get_lr()
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        prev = [self._get_initial_lr(g["lr"], g["swa_lr"], prev_alpha)
                for g in self.optimizer.param_groups]
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        return [g["swa_lr"] * alpha + lr * (1 - alpha)
                for g, lr in zip(self.optimizer.param_groups, prev)]

    def state_dict(self):
        return {k: v for k, v in self.__dict__.items()
                if k not in ("optimizer", "anneal_func")}

    def load_state_dict(self, state_dict):
        self.__dict__.update(state_dict)
        self.anneal_func = self._cosine_anneal if self._anneal_strategy == "cos" else \
            self._linear_anneal
