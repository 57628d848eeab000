"""wgrad.utils: torch.utils' autograd helpers (``checkpoint``) and DLPack exchange
(``dlpack``)."""
from . import checkpoint, dlpack

__all__ = ["checkpoint", "dlpack"]
