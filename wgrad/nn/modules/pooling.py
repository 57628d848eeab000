"""Pooling layers: MaxPool1d/2d/3d, MaxUnpool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveMaxPool1d/2d/3d,
AdaptiveAvgPool1d/2d/3d, LPPool1d/2d/3d (torch.nn's arguments and reprs)."""
from .. import _pooling as P
from .module import Module

__all__ = ["MaxPool1d", "MaxPool2d", "MaxPool3d", "MaxUnpool1d", "MaxUnpool2d", "MaxUnpool3d",
           "AvgPool1d", "AvgPool2d", "AvgPool3d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d",
           "AdaptiveMaxPool3d", "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveAvgPool3d",
           "LPPool1d", "LPPool2d", "LPPool3d"]


class _MaxPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.dilation = dilation
        self.return_indices = return_indices
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.dilation,
                              ceil_mode=self.ceil_mode, return_indices=self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}, "
                f"dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPoolNd):
    """1-D max pooling (:func:`wgrad.nn.functional.max_pool1d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.MaxPool1d(2)(wgrad.tensor([[1., 3., 2., 0.]]))
    tensor([[3., 2.]])
    """
    _fn = staticmethod(P.max_pool1d)


class MaxPool2d(_MaxPoolNd):
    """2-D max pooling (:func:`wgrad.nn.functional.max_pool2d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.MaxPool2d(2)(wgrad.ones(1, 4, 4)).shape
    wgrad.Size([1, 2, 2])
    """
    _fn = staticmethod(P.max_pool2d)


class MaxPool3d(_MaxPoolNd):
    """3-D max pooling (:func:`wgrad.nn.functional.max_pool3d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.MaxPool3d(2)(wgrad.ones(1, 2, 4, 4)).shape
    wgrad.Size([1, 1, 2, 2])
    """
    _fn = staticmethod(P.max_pool3d)


def _tuple(v, n):
    return tuple(v) if isinstance(v, (tuple, list)) else (v,) * n


class _MaxUnpoolNd(Module):
    _n = 1
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, self._n)
        self.stride = _tuple(stride if stride is not None else kernel_size, self._n)
        self.padding = _tuple(padding, self._n)

    def forward(self, input, indices, output_size=None):
        return type(self)._fn(input, indices, self.kernel_size, self.stride, self.padding,
                              output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpoolNd):
    """Inverse of MaxPool1d (:func:`wgrad.nn.functional.max_unpool1d`).

    Example
    -------
    >>> import wgrad
    >>> v, i = wgrad.nn.MaxPool1d(2, return_indices=True)(wgrad.tensor([[1., 3.]]))
    >>> wgrad.nn.MaxUnpool1d(2)(v, i)
    tensor([[0., 3.]])
    """
    _n, _fn = 1, staticmethod(P.max_unpool1d)


class MaxUnpool2d(_MaxUnpoolNd):
    """Inverse of MaxPool2d (:func:`wgrad.nn.functional.max_unpool2d`).

    Example
    -------
    >>> import wgrad
    >>> v, i = wgrad.nn.MaxPool2d(2, return_indices=True)(wgrad.ones(1, 2, 2))
    >>> wgrad.nn.MaxUnpool2d(2)(v, i).shape
    wgrad.Size([1, 2, 2])
    """
    _n, _fn = 2, staticmethod(P.max_unpool2d)


class MaxUnpool3d(_MaxUnpoolNd):
    """Inverse of MaxPool3d (:func:`wgrad.nn.functional.max_unpool3d`).

    Example
    -------
    >>> import wgrad
    >>> v, i = wgrad.nn.MaxPool3d(2, return_indices=True)(wgrad.ones(1, 2, 2, 2))
    >>> wgrad.nn.MaxUnpool3d(2)(v, i).shape
    wgrad.Size([1, 2, 2, 2])
    """
    _n, _fn = 3, staticmethod(P.max_unpool3d)


class AvgPool1d(Module):
    """1-D average pooling (:func:`wgrad.nn.functional.avg_pool1d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AvgPool1d(2)(wgrad.tensor([[1., 3.]]))
    tensor([[2.]])
    """

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        super().__init__()
        self.kernel_size = _tuple(kernel_size, 1)
        self.stride = _tuple(stride if stride is not None else kernel_size, 1)
        self.padding = _tuple(padding, 1)
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad

    def forward(self, input):
        return P.avg_pool1d(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                            self.count_include_pad)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class _AvgPoolNd(Module):
    _fn = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding = padding
        self.ceil_mode = ceil_mode
        self.count_include_pad = count_include_pad
        self.divisor_override = divisor_override

    def forward(self, input):
        return type(self)._fn(input, self.kernel_size, self.stride, self.padding, self.ceil_mode,
                              self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool2d(_AvgPoolNd):
    """2-D average pooling (:func:`wgrad.nn.functional.avg_pool2d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AvgPool2d(2)(wgrad.ones(1, 2, 2))
    tensor([[[1.]]])
    """
    _fn = staticmethod(P.avg_pool2d)


class AvgPool3d(_AvgPoolNd):
    """3-D average pooling (:func:`wgrad.nn.functional.avg_pool3d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AvgPool3d(2)(wgrad.ones(1, 2, 2, 2))
    tensor([[[[1.]]]])
    """
    _fn = staticmethod(P.avg_pool3d)


class _AdaptiveMaxPoolNd(Module):
    _fn = None

    def __init__(self, output_size, return_indices=False):
        super().__init__()
        self.output_size = output_size
        self.return_indices = return_indices

    def forward(self, input):
        return type(self)._fn(input, self.output_size, self.return_indices)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveMaxPool1d(_AdaptiveMaxPoolNd):
    """Adaptive 1-D max pooling (:func:`wgrad.nn.functional.adaptive_max_pool1d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AdaptiveMaxPool1d(1)(wgrad.tensor([[1., 3., 2.]]))
    tensor([[3.]])
    """
    _fn = staticmethod(P.adaptive_max_pool1d)


class AdaptiveMaxPool2d(_AdaptiveMaxPoolNd):
    """Adaptive 2-D max pooling (:func:`wgrad.nn.functional.adaptive_max_pool2d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AdaptiveMaxPool2d((1, None))(wgrad.ones(1, 3, 4)).shape
    wgrad.Size([1, 1, 4])
    """
    _fn = staticmethod(P.adaptive_max_pool2d)


class AdaptiveMaxPool3d(_AdaptiveMaxPoolNd):
    """Adaptive 3-D max pooling (:func:`wgrad.nn.functional.adaptive_max_pool3d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AdaptiveMaxPool3d(1)(wgrad.ones(1, 2, 3, 4)).shape
    wgrad.Size([1, 1, 1, 1])
    """
    _fn = staticmethod(P.adaptive_max_pool3d)


class _AdaptiveAvgPoolNd(Module):
    _fn = None

    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def forward(self, input):
        return type(self)._fn(input, self.output_size)

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_AdaptiveAvgPoolNd):
    """Adaptive 1-D average pooling (:func:`wgrad.nn.functional.adaptive_avg_pool1d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AdaptiveAvgPool1d(1)(wgrad.tensor([[1., 3.]]))
    tensor([[2.]])
    """
    _fn = staticmethod(P.adaptive_avg_pool1d)


class AdaptiveAvgPool2d(_AdaptiveAvgPoolNd):
    """Adaptive 2-D average pooling (:func:`wgrad.nn.functional.adaptive_avg_pool2d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AdaptiveAvgPool2d(1)(wgrad.ones(1, 3, 4))
    tensor([[[1.]]])
    """
    _fn = staticmethod(P.adaptive_avg_pool2d)


class AdaptiveAvgPool3d(_AdaptiveAvgPoolNd):
    """Adaptive 3-D average pooling (:func:`wgrad.nn.functional.adaptive_avg_pool3d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.AdaptiveAvgPool3d(1)(wgrad.ones(1, 2, 3, 4)).shape
    wgrad.Size([1, 1, 1, 1])
    """
    _fn = staticmethod(P.adaptive_avg_pool3d)


class _LPPoolNd(Module):
    _fn = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type = norm_type
        self.kernel_size = kernel_size
        self.stride = stride
        self.ceil_mode = ceil_mode

    def forward(self, input):
        return type(self)._fn(input, float(self.norm_type), self.kernel_size, self.stride,
                              self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, "
                f"stride={self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPoolNd):
    """1-D power-average pooling (:func:`wgrad.nn.functional.lp_pool1d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.LPPool1d(2, 2)(wgrad.tensor([[3., 4.]]))
    tensor([[5.]])
    """
    _fn = staticmethod(P.lp_pool1d)


class LPPool2d(_LPPoolNd):
    """2-D power-average pooling (:func:`wgrad.nn.functional.lp_pool2d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.LPPool2d(1, 2)(wgrad.ones(1, 2, 2))
    tensor([[[4.]]])
    """
    _fn = staticmethod(P.lp_pool2d)


class LPPool3d(_LPPoolNd):
    """3-D power-average pooling (:func:`wgrad.nn.functional.lp_pool3d`).

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.LPPool3d(1, 2)(wgrad.ones(1, 2, 2, 2))
    tensor([[[[8.]]]])
    """
    _fn = staticmethod(P.lp_pool3d)
