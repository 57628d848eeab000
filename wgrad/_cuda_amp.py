"""``wgrad.cuda.amp``: torch.cuda.amp's deprecated ``autocast`` and ``GradScaler``, with
torch's deprecation warnings, over ``wgrad.amp``."""
from . import _dtype as D
from ._device_amp import deprecated_amp

__all__ = ["autocast", "GradScaler"]

autocast, GradScaler = deprecated_amp("cuda", D.float16, __name__)
