"""More torch.nn modules over functionals wgrad already has: activations (CELU, ReLU6,
Hardshrink, Softshrink, Softmin), distances, the padding modules, GroupNorm, RMSNorm,
InstanceNorm1d/2d/3d, BatchNorm3d and the remaining loss modules. Each calls the
``nn.functional`` op of its name; constructors, defaults and reprs are torch's."""
import warnings

from ..._creation import empty
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .loss import _Loss, _WeightedLoss
from .module import Module
from .normalization import _BatchNorm, affine_parameters, reset_affine

__all__ = ["CELU", "ReLU6", "Hardshrink", "Softshrink", "Softmin", "CosineSimilarity",
           "PairwiseDistance", "GroupNorm", "RMSNorm", "InstanceNorm1d", "InstanceNorm2d",
           "InstanceNorm3d", "BatchNorm3d", "CosineEmbeddingLoss", "GaussianNLLLoss",
           "HingeEmbeddingLoss", "MarginRankingLoss", "MultiLabelSoftMarginLoss",
           "PoissonNLLLoss", "SoftMarginLoss", "TripletMarginLoss", "LocalResponseNorm",
           "ChannelShuffle", "MultiMarginLoss", "MultiLabelMarginLoss",
           "TripletMarginWithDistanceLoss"]


# -- activations and distances ------------------------------------------------------------

class CELU(Module):
    """``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha, self.inplace = alpha, inplace

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class ReLU6(Module):
    """``min(max(0, x), 6)``."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu6(input, self.inplace)

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class Hardshrink(Module):
    """``x`` where ``|x| > lambd``, else 0."""

    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return F.hardshrink(input, self.lambd)

    def extra_repr(self):
        return f"{self.lambd}"


class Softshrink(Hardshrink):
    """``x - lambd`` above ``lambd``, ``x + lambd`` below ``-lambd``, else 0."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Softmin(Module):
    """``softmax(-x)`` over ``dim``."""

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmin(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class CosineSimilarity(Module):
    """Cosine similarity of two inputs along ``dim``."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """The ``p``-norm of ``x1 - x2 + eps`` along the last dim."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


# -- padding ---------------------------------------------------------------------------------

def _pad_module(name, nd, mode, doc):
    def __init__(self, padding, value=0.0):
        Module.__init__(self)
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) \
            else (padding,) * (2 * nd)
        if mode == "constant":
            self.value = float(value)

    def forward(self, input):
        if mode == "constant":
            return F.pad(input, self.padding, "constant", self.value)
        return F.pad(input, self.padding, mode)

    def extra_repr(self):
        if name.startswith("ConstantPad"):
            return f"padding={self.padding}, value={self.value}"
        return f"{self.padding}"

    if name.startswith("ConstantPad"):
        def init(self, padding, value):
            __init__(self, padding, value)
    else:
        def init(self, padding):
            __init__(self, padding)
    return type(name, (Module,), {"__init__": init, "forward": forward, "__doc__": doc,
                                  "extra_repr": extra_repr, "__module__": __name__})


for _nd in (1, 2, 3):
    for _kind, _mode, _what in (("ConstantPad", "constant", "a constant value"),
                                ("ZeroPad", "constant", "zeros"),
                                ("ReflectionPad", "reflect", "the reflection of the input"),
                                ("ReplicationPad", "replicate", "the input's edge values"),
                                ("CircularPad", "circular", "the input wrapped around")):
        _name = f"{_kind}{_nd}d"
        globals()[_name] = _pad_module(_name, _nd, _mode,
                                       f"Pad the last {_nd} dim(s) with {_what} "
                                       f"(``F.pad``); ``padding`` is an int or a "
                                       f"{2 * _nd}-tuple.")
        __all__.append(_name)


# -- normalisation ---------------------------------------------------------------------------

class GroupNorm(Module):
    """Normalise over groups of channels (weight ones, bias zeros)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        self.num_groups, self.num_channels, self.eps, self.affine = (num_groups, num_channels,
                                                                    eps, affine)
        affine_parameters(self, affine, bias, (num_channels,), device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        reset_affine(self)

    def forward(self, input):
        return F.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, "
                f"affine={self.affine}, bias={self.bias is not None}")


class RMSNorm(Module):
    """Root-mean-square normalisation over the trailing ``normalized_shape`` dims."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(normalized_shape)
        self.eps, self.elementwise_affine = eps, elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(*self.normalized_shape, device=device, dtype=dtype))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self):
        if self.elementwise_affine:
            init.ones_(self.weight)

    def forward(self, x):
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class BatchNorm3d(_BatchNorm):
    """Batch normalisation over ``(N, C, D, H, W)`` input."""

    def _check_input_dim(self, input):
        if input.dim() != 5:
            raise ValueError(f"expected 5D input (got {input.dim()}D input)")


class _InstanceNorm(_BatchNorm):
    _dims = None  # the unbatched input's dims

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input_dim(self, input):
        n = self._dims
        if input.dim() not in (n, n + 1):
            raise ValueError(f"expected {n}D or {n + 1}D input (got {input.dim()}D input)")

    def forward(self, input):
        self._check_input_dim(input)
        feature_dim = input.dim() - self._dims
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. "
                          f"You can silence this warning by not passing in num_features, "
                          f"which is not used because affine=False", stacklevel=2)
        unbatched = input.dim() == self._dims
        x = input.unsqueeze(0) if unbatched else input
        out = F.instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                              self.training or not self.track_running_stats,
                              self.momentum if self.momentum is not None else 0.0, self.eps)
        return out.squeeze(0) if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation over ``(N, C, L)`` or ``(C, L)`` input."""
    _dims = 2


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation over ``(N, C, H, W)`` or ``(C, H, W)`` input."""
    _dims = 3


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation over ``(N, C, D, H, W)`` or ``(C, D, H, W)`` input."""
    _dims = 4


# -- losses ----------------------------------------------------------------------------------

class CosineEmbeddingLoss(_Loss):
    """``1 - cos(x1, x2)`` for target 1, ``max(0, cos(x1, x2) - margin)`` for -1."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, margin=self.margin,
                                       reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """The Gaussian negative log-likelihood of ``target`` with mean ``input`` and ``var``."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(None, None, reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, full=self.full, eps=self.eps,
                                   reduction=self.reduction)


class HingeEmbeddingLoss(_Loss):
    """``x`` for target 1, ``max(0, margin - x)`` for -1."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, margin=self.margin,
                                      reduction=self.reduction)


class MarginRankingLoss(_Loss):
    """``max(0, -target * (x1 - x2) + margin)``."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin = margin

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, margin=self.margin,
                                     reduction=self.reduction)


class MultiLabelSoftMarginLoss(_WeightedLoss):
    """Multi-label one-versus-all logistic loss."""

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, weight=self.weight,
                                             reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """Poisson negative log-likelihood (``log_input``: the input is a log-rate)."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, log_input=self.log_input, full=self.full,
                                  eps=self.eps, reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """``log(1 + exp(-target * x))``."""

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with the ``p``-norm distance."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(size_average, reduce, reduction)
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, margin=self.margin, p=self.p,
                                     eps=self.eps, swap=self.swap, reduction=self.reduction)


class MultiMarginLoss(_WeightedLoss):
    """The multi-class hinge loss (``F.multi_margin_loss``), ``p`` 1 or 2."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, reduce, reduction)
        if p not in (1, 2):
            raise ValueError("only p == 1 and p == 2 supported")
        if weight is not None and weight.dim() != 1:
            raise ValueError(f"MultiMarginLoss: expected weight to be None or 1D tensor, got "
                             f"{weight.dim()}D instead")
        self.p, self.margin = p, margin

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, p=self.p, margin=self.margin,
                                   weight=self.weight, reduction=self.reduction)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss (``F.multilabel_margin_loss``)."""

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """``max(d(a, p) - d(a, n) + margin, 0)`` with any distance (a ``PairwiseDistance``
    by default)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False, reduction="mean"):
        super().__init__(size_average=None, reduce=None, reduction=reduction)
        if margin <= 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: expected margin to be greater "
                             f"than 0, got {margin} instead")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


# -- normalisation and shuffling --------------------------------------------------------------

class LocalResponseNorm(Module):
    """Normalisation over ``size`` neighbouring channels (``F.local_response_norm``)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return F.local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


class ChannelShuffle(Module):
    """Shuffles the channels of ``(N, C, ...)`` input in ``groups`` groups
    (``F.channel_shuffle``)."""

    def __init__(self, groups):
        super().__init__()
        self.groups = groups

    def forward(self, input):
        return F.channel_shuffle(input, self.groups)

    def extra_repr(self):
        return f"groups={self.groups}"
