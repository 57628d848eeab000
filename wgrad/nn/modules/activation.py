"""Activation modules; each calls the ``nn.functional`` op of its name."""
from .. import functional as F
from .module import Module

__all__ = ["ReLU", "LeakyReLU", "ELU", "SELU", "GELU", "SiLU", "Mish", "Softplus", "Sigmoid",
           "Tanh", "Hardtanh", "Softmax", "LogSoftmax"]


def _inplace_repr(inplace):
    return "inplace=True" if inplace else ""


class ReLU(Module):
    """``max(0, x)`` elementwise.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.ReLU()(wgrad.tensor([-1., 2.]))
    tensor([0., 2.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.relu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class LeakyReLU(Module):
    """``x`` for x >= 0, ``negative_slope * x`` below.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.LeakyReLU(0.5)(wgrad.tensor([-2., 2.]))
    tensor([-1.,  2.])
    """

    def __init__(self, negative_slope=1e-2, inplace=False):
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return f"negative_slope={self.negative_slope}" + (", inplace=True" if self.inplace
                                                          else "")


class ELU(Module):
    """``x`` for x > 0, ``alpha * (exp(x) - 1)`` below.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.ELU()(wgrad.tensor([0., 1.]))
    tensor([0., 1.])
    """

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return f"alpha={self.alpha}" + (", inplace=True" if self.inplace else "")


class SELU(Module):
    """Scaled ELU with torch's fixed alpha and scale.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.SELU()(wgrad.tensor([0.]))
    tensor([0.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.selu(input, self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class GELU(Module):
    """``x * Phi(x)`` (``approximate='tanh'``: the tanh approximation).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.GELU()(wgrad.tensor([0.]))
    tensor([0.])
    """

    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, approximate=self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """``x * sigmoid(x)``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.SiLU()(wgrad.tensor([0.]))
    tensor([0.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.silu(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Mish(Module):
    """``x * tanh(softplus(x))``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Mish()(wgrad.tensor([0.]))
    tensor([0.])
    """

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def forward(self, input):
        return F.mish(input, inplace=self.inplace)

    def extra_repr(self):
        return _inplace_repr(self.inplace)


class Softplus(Module):
    """``log(1 + exp(beta * x)) / beta``, linear above ``threshold``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Softplus()(wgrad.tensor([30.]))
    tensor([30.])
    """

    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class Sigmoid(Module):
    """``1 / (1 + exp(-x))`` (complex inputs too).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Sigmoid()(wgrad.tensor([0.]))
    tensor([0.5000])
    """

    def forward(self, input):
        return input.sigmoid()


class Tanh(Module):
    """``tanh(x)`` (complex inputs too).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Tanh()(wgrad.tensor([0.]))
    tensor([0.])
    """

    def forward(self, input):
        return input.tanh()


class Hardtanh(Module):
    """``x`` clamped to ``[min_val, max_val]``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Hardtanh()(wgrad.tensor([-3., 0.5, 3.]))
    tensor([-1.0000,  0.5000,  1.0000])
    """

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False, min_value=None,
                 max_value=None):
        super().__init__()
        if min_value is not None:
            min_val = min_value
        if max_value is not None:
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if self.max_val <= self.min_val:
            raise AssertionError()

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return f"min_val={self.min_val}, max_val={self.max_val}" + (
            ", inplace=True" if self.inplace else "")


class Softmax(Module):
    """``exp(x) / sum(exp(x))`` along ``dim``.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.Softmax(dim=0)(wgrad.tensor([0., 0.]))
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Module):
    """``log(softmax(x))`` along ``dim``, computed stably.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.LogSoftmax(dim=0)(wgrad.tensor([0., 0.])).exp()
    tensor([0.5000, 0.5000])
    """

    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.log_softmax(input, self.dim, _stacklevel=5)

    def extra_repr(self):
        return f"dim={self.dim}"
