"""wgrad.utils: torch.utils' autograd helpers (``checkpoint``)."""
from . import checkpoint

__all__ = ["checkpoint"]
