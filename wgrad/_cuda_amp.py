"""``wgrad.cuda.amp``: torch.cuda.amp's deprecated ``autocast`` and ``GradScaler``, with
torch's deprecation warnings, over ``wgrad.amp``."""
import warnings

from . import _dtype as D
from . import amp as _amp

__all__ = ["autocast", "GradScaler"]


class autocast(_amp.autocast):
    """``wgrad.amp.autocast("cuda", ...)``, deprecated as torch's."""

    def __init__(self, enabled=True, dtype=D.float16, cache_enabled=True):
        warnings.warn("`torch.cuda.amp.autocast(args...)` is deprecated. Please use "
                      "`torch.amp.autocast('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)


class GradScaler(_amp.GradScaler):
    """``wgrad.amp.GradScaler("cuda", ...)``, deprecated as torch's."""

    def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                 growth_interval=2000, enabled=True):
        warnings.warn("`torch.cuda.amp.GradScaler(args...)` is deprecated. Please use "
                      "`torch.amp.GradScaler('cuda', args...)` instead.", FutureWarning,
                      stacklevel=2)
        super().__init__("cuda", init_scale, growth_factor, backoff_factor, growth_interval,
                         enabled)
