"""LinearCrossEntropyLoss: a Linear layer and the cross entropy of its logits in one
module (torch.nn.LinearCrossEntropyLoss), with its options class
(NOTE [Chunked linear cross entropy])."""
import math

from .. import functional as F
from .linear import Linear
from .linear_cross_entropy_options import LinearCrossEntropyOptions
from .loss import _WeightedLoss

__all__ = ["LinearCrossEntropyOptions", "LinearCrossEntropyLoss"]


class LinearCrossEntropyLoss(_WeightedLoss):
    """The cross entropy of ``self.linear(input)``: a bias-free (by default) ``Linear``
    from ``in_features`` to ``num_classes * prod(out_features)`` logits, read as
    ``(num_classes, *out_features)`` (a K-dimensional loss), then
    ``F.linear_cross_entropy`` with the loss settings (``weight`` of shape
    ``(num_classes,)``, ``ignore_index`` None: -100 for class indices) and ``options``.

    Examples
    --------
    >>> loss = wgrad.nn.LinearCrossEntropyLoss(3, 4)
    >>> loss.linear.weight.shape, loss(wgrad.ones(2, 3), wgrad.tensor([0, 3])).shape
    (wgrad.Size([4, 3]), wgrad.Size([]))
    """

    __constants__ = ["num_classes", "out_features", "reduction", "ignore_index",
                     "label_smoothing"]

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        if weight is not None and tuple(weight.shape) != (num_classes,):
            raise RuntimeError(f"expected weight shape to be {(num_classes,)}, got "
                               f"{tuple(weight.shape)}")
        if label_smoothing < 0 or label_smoothing > 1.0:
            raise RuntimeError(f"expected label_smoothing to be in range [0, 1], got "
                               f"{label_smoothing}")
        super().__init__(weight=weight, size_average=None, reduce=None, reduction=reduction)
        self.num_classes = num_classes
        self.out_features = out_features
        self.ignore_index = ignore_index
        self.label_smoothing = label_smoothing
        # the logits' weight is stored flat, (num_classes * prod(out_features), in_features)
        self.linear = Linear(in_features, math.prod(out_features, start=num_classes),
                             bias=bias, device=device, dtype=dtype)
        self.options = options

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        weight = self.linear.weight.reshape((*shape, self.linear.in_features))
        bias = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, weight, target, linear_bias=bias,
                                      weight=self.weight, reduction=self.reduction,
                                      ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
