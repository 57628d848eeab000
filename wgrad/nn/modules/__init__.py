"""The module classes of ``wgrad.nn``, one file per family as in torch.nn.modules."""
from .module import Module  # noqa: F401

__all__ = ["Module"]
