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
from . import _dtype as D
from ._device_amp import deprecated_amp

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = deprecated_amp("cpu", D.bfloat16, __name__)
