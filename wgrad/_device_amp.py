"""torch's deprecated per-device ``autocast`` and ``GradScaler`` (``torch.cuda.amp``,
``torch.cpu.amp``): ``wgrad.amp``'s with the device fixed and torch's FutureWarning."""
import warnings

from . import amp as _amp

__all__ = ["deprecated_amp"]


def deprecated_amp(device, default_dtype, module):
    """``(autocast, GradScaler)`` of ``torch.<device>.amp``, classes of ``module``."""
    def warn(what):
        warnings.warn(f"`torch.{device}.amp.{what}(args...)` is deprecated. Please use "
                      f"`torch.amp.{what}('{device}', args...)` instead.", FutureWarning,
                      stacklevel=3)

    class autocast(_amp.autocast):
        __doc__ = f"""``wgrad.amp.autocast("{device}", ...)``, deprecated as torch's."""

        def __init__(self, enabled=True, dtype=default_dtype, cache_enabled=True):
            warn("autocast")
            super().__init__(device, dtype=dtype, enabled=enabled,
                             cache_enabled=cache_enabled)

    class GradScaler(_amp.GradScaler):
        __doc__ = f"""``wgrad.amp.GradScaler("{device}", ...)``, deprecated as torch's."""

        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            warn("GradScaler")
            super().__init__(device, init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)

    for cls in (autocast, GradScaler):
        cls.__module__ = module
        cls.__qualname__ = cls.__name__
    return autocast, GradScaler
