"""Loss modules; each calls the ``nn.functional`` loss of its name with ``reduction``."""
import warnings

from .. import functional as F
from .module import Module

__all__ = ["MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "CrossEntropyLoss", "NLLLoss",
           "BCELoss", "BCEWithLogitsLoss", "KLDivLoss"]


def _legacy_reduction(size_average, reduce):
    """torch's mapping of the deprecated ``size_average``/``reduce`` flags."""
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    if size_average and reduce:
        ret = "mean"
    elif reduce:
        ret = "sum"
    else:
        ret = "none"
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{ret}' instead.", stacklevel=3)
    return ret


class _Loss(Module):
    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = _legacy_reduction(size_average, reduce)
        self.reduction = reduction


class _WeightedLoss(_Loss):
    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)


class MSELoss(_Loss):
    """Mean squared error ``|input - target|^2`` (complex: the squared modulus).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.MSELoss()(wgrad.tensor([1., 2.]), wgrad.tensor([0., 0.]))
    tensor(2.5000)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class L1Loss(_Loss):
    """Mean absolute error ``|input - target|`` (complex: the modulus).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.L1Loss()(wgrad.tensor([1., -3.]), wgrad.tensor([0., 0.]))
    tensor(2.)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(_Loss):
    """Quadratic below ``beta``, linear above (divided by ``beta``).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.SmoothL1Loss()(wgrad.tensor([0.5, 3.]), wgrad.tensor([0., 0.]))
    tensor(1.3125)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__(size_average, reduce, reduction)
        self.beta = beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


class HuberLoss(_Loss):
    """Quadratic below ``delta``, linear (slope ``delta``) above.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.HuberLoss()(wgrad.tensor([0.5, 3.]), wgrad.tensor([0., 0.]))
    tensor(1.3125)
    """

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__(reduction=reduction)
        self.delta = delta

    def forward(self, input, target):
        return F.huber_loss(input, target, reduction=self.reduction, delta=self.delta)


class CrossEntropyLoss(_WeightedLoss):
    """Cross entropy of logits against class indices or class probabilities
    (``weight``, ``ignore_index``, ``label_smoothing``).

    Example
    -------
    >>> import wgrad
    >>> loss = wgrad.nn.CrossEntropyLoss()
    >>> loss(wgrad.zeros(2, 4), wgrad.tensor([0, 3])).item() == wgrad.tensor(4.).log().item()
    True
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, weight=self.weight,
                               ignore_index=self.ignore_index, reduction=self.reduction,
                               label_smoothing=self.label_smoothing)


class NLLLoss(_WeightedLoss):
    """Negative log likelihood of log-probabilities at the target class indices.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.NLLLoss()(wgrad.tensor([[-1., -2.]]), wgrad.tensor([1]))
    tensor(2.)
    """

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        self.ignore_index = ignore_index

    def forward(self, input, target):
        return F.nll_loss(input, target, weight=self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class BCELoss(_WeightedLoss):
    """Binary cross entropy of probabilities in [0, 1].

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.BCELoss()(wgrad.tensor([0.5]), wgrad.tensor([1.])).item() == \
        -wgrad.tensor(0.5).log().item()
    True
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, weight=self.weight,
                                      reduction=self.reduction)


class BCEWithLogitsLoss(_Loss):
    """Binary cross entropy of logits, computed stably (``pos_weight`` weighs positives).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.BCEWithLogitsLoss()(wgrad.tensor([0.]), wgrad.tensor([1.])).item() == \
        wgrad.tensor(2.).log().item()
    True
    """

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__(size_average, reduce, reduction)
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  pos_weight=self.pos_weight,
                                                  reduction=self.reduction)


class KLDivLoss(_Loss):
    """Kullback-Leibler divergence of ``input`` (log-probabilities) from ``target``
    (probabilities, or log-probabilities with ``log_target``).

    Example
    -------
    >>> import wgrad
    >>> p = wgrad.tensor([0.5, 0.5])
    >>> wgrad.nn.KLDivLoss(reduction="sum")(p.log(), p)
    tensor(0.)
    """

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__(size_average, reduce, reduction)
        self.log_target = log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)
