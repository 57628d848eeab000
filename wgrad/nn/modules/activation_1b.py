"""PReLU, RReLU, Hardswish, Hardsigmoid, Softsign, Tanhshrink, Threshold, GLU, LogSigmoid,
Softmax2d (torch.nn's arguments and reprs; the functions are in ``nn/_extra.py``)."""
from ... import _creation
from .. import _extra as E
from .. import init
from ..parameter import Parameter
from ...ops.activation import softmax
from .module import Module

__all__ = ["PReLU", "RReLU", "Hardswish", "Hardsigmoid", "Softsign", "Tanhshrink", "Threshold",
           "GLU", "LogSigmoid", "Softmax2d"]


class PReLU(Module):
    """``x`` for ``x > 0``, else ``weight * x``, with ``num_parameters`` learnable slopes (1,
    or one per channel) starting at ``init``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.PReLU()(wgrad.tensor([-4., 1.]))
    tensor([-1.,  1.], grad_fn=<WhereBackward0>)
    """

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        self.num_parameters = num_parameters
        self.init = init
        self.weight = Parameter(_creation.empty(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        init.constant_(self.weight, self.init)

    def forward(self, input):
        return E.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class RReLU(Module):
    """Randomized leaky ReLU: slopes drawn from U(lower, upper) in training mode, the fixed
    slope ``(lower + upper) / 2`` in eval mode.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.RReLU(0.2, 0.4).eval()(wgrad.tensor([-1., 1.]))
    tensor([-0.3000,  1.0000])
    """

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        return E.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"lower={self.lower}, upper={self.upper}{inplace_str}"


class _Inplace(Module):
    _fn = None

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return type(self)._fn(input, self.inplace)


class Hardswish(_Inplace):
    """``x * relu6(x + 3) / 6``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Hardswish()(wgrad.tensor([4.]))
    tensor([4.])
    """
    _fn = staticmethod(E.hardswish)


class Hardsigmoid(_Inplace):
    """``relu6(x + 3) / 6``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Hardsigmoid()(wgrad.tensor([0.]))
    tensor([0.5000])
    """
    _fn = staticmethod(E.hardsigmoid)


class Softsign(Module):
    """``x / (1 + |x|)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Softsign()(wgrad.tensor([1.]))
    tensor([0.5000])
    """

    def forward(self, input):
        return E.softsign(input)


class Tanhshrink(Module):
    """``x - tanh(x)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Tanhshrink()(wgrad.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input):
        return E.tanhshrink(input)


class Threshold(Module):
    """``x`` where ``x > threshold``, else ``value``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Threshold(1.0, -1.0)(wgrad.tensor([0., 2.]))
    tensor([-1.,  2.])
    """

    def __init__(self, threshold, value, inplace=False):
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        return E.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        inplace_str = ", inplace=True" if self.inplace else ""
        return f"threshold={self.threshold}, value={self.value}{inplace_str}"


class GLU(Module):
    """Gated linear unit over ``dim``: ``a * sigmoid(b)`` for the two halves.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.GLU()(wgrad.tensor([2., 0.]))
    tensor([1.])
    """

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return E.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSigmoid(Module):
    """``log(sigmoid(x))``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.LogSigmoid()(wgrad.tensor([0.]))
    tensor([-0.6931])
    """

    def forward(self, input):
        return E.logsigmoid(input)


class Softmax2d(Module):
    """Softmax over the channel dim of ``(N, C, H, W)`` or ``(C, H, W)`` input.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Softmax2d()(wgrad.zeros(2, 1, 1)).flatten()
    tensor([0.5000, 0.5000])
    """

    def forward(self, input):
        if input.ndim not in (3, 4):
            raise ValueError(f"Softmax2d: expected input to be 3D or 4D, got {input.ndim}D "
                             f"instead")
        return softmax(input, -3)
