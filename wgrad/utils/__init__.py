"""wgrad.utils: torch.utils' autograd helpers (``checkpoint``), DLPack exchange
(``dlpack``) and data loading (``data``)."""
from . import checkpoint, data, dlpack

__all__ = ["checkpoint", "data", "dlpack"]
