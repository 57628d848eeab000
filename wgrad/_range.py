"""``wgrad.range``: torch.range, the deprecated end-inclusive ``arange``."""
import builtins
import math
import warnings

import numpy as np

from . import _dtype as D
from ._creation import tensor as _tensor
from ._tensor import Tensor
from .ops._out import _factory

__all__ = ["range"]

_DEPRECATED = ("torch.range is deprecated and will be removed in a future release because "
               "its behavior is inconsistent with Python's range builtin. Instead, use "
               "torch.arange, which produces values in [start, end).")


def _shown(v):
    """A number as torch's C++ message prints it (``0``, ``1.5``, ``inf``)."""
    return f"{v:g}" if isinstance(v, (float, np.floating)) else str(v)


def _range(start=0, end=None, step=1, *, dtype=None, layout=None, device=None,
           requires_grad=False):
    """Values from ``start`` to ``end`` inclusive, ``step`` apart, in the default float
    dtype unless ``dtype`` is given (whatever the arguments' types), with torch's
    deprecation warning. As torch's CPU kernel: the count is
    ``int((end - start) / step + 1)`` and value i is ``start + i * step``, computed in
    float64 (float32 for float16/bfloat16; int64, the arguments truncated, for integer
    dtypes) and then cast.

    Example
    -------
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore", UserWarning)
    ...     wgrad.range(1, 2, 0.5)
    tensor([1.0000, 1.5000, 2.0000])
    """
    if end is None:
        raise TypeError('range() missing 1 required positional arguments: "end"')
    warnings.warn(_DEPRECATED, UserWarning, stacklevel=3)  # past _factory's wrapper
    d = D.get_default_dtype() if dtype is None else D.as_dtype(dtype)
    if d == D.bool or d.is_complex:
        raise NotImplementedError(f"\"range_cpu\" not implemented for '{d.scalar_name}'")
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    kind = np.dtype(d.np).kind
    if kind in "iu":
        acc = np.int64
        if not builtins.all(math.isfinite(v) for v in vals):
            raise RuntimeError("value cannot be converted to type int64_t without overflow")
    else:
        acc = np.float64 if d.itemsize >= 4 else np.float32
    xstart, xend, xstep = (acc(v) for v in vals)
    if not (xstep > 0 or xstep < 0):
        raise RuntimeError("step must be nonzero")
    if not (math.isfinite(xstart) and math.isfinite(xend)):
        raise RuntimeError(f"unsupported range: {_shown(xstart)} -> {_shown(xend)}")
    if not ((xstep > 0 and xend >= xstart) or (xstep < 0 and xend <= xstart)):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if kind in "iu":
        size = int((int(xend) - int(xstart)) // int(xstep)) + 1
    else:
        size = int((xend - xstart) / xstep + acc(1))
    values = xstart + np.arange(size, dtype=acc) * xstep
    return _tensor(values.astype(d.np), dtype=d, device=device, requires_grad=requires_grad)


range = _factory(_range, "range")  # noqa: A001  (torch.range; out= as torch's factories)
range.__name__ = range.__qualname__ = "range"
