"""``wgrad.nn``: only the functional ops (``wgrad.nn.functional``) so far."""
from . import functional  # noqa: F401

__all__ = ["functional"]
