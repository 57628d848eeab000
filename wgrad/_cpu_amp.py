"""``wgrad.cpu.amp``: torch.cpu.amp's deprecated ``autocast`` and ``GradScaler``, with
torch's deprecation warnings, over ``wgrad.amp``.

Example
-------
>>> import warnings
>>> with warnings.catch_warnings():
...     warnings.simplefilter("ignore")
...     with wgrad.cpu.amp.autocast(enabled=False):
...         y = wgrad.ones(2) + 1
>>> y.dtype
wgrad.float32
"""
import warnings

from . import _dtype as D
from . import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """``wgrad.amp.autocast("cpu", ...)``, deprecated as torch's."""

    def __init__(self, enabled=True, dtype=D.bfloat16, cache_enabled=True):
        warnings.warn("`torch.cpu.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``wgrad.amp.GradScaler("cpu", ...)``, deprecated as torch's."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cpu.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cpu', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cpu", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
