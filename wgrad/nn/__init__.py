"""``wgrad.nn``: Parameter, Module, the layers, ``init`` and ``utils`` (torch.nn's names and
behaviour)."""
from . import functional  # noqa: F401
from . import init, parallel, utils  # noqa: F401
from .parameter import (Buffer, Parameter, UninitializedBuffer,  # noqa: F401
                        UninitializedParameter)
from .modules import *  # noqa: F401,F403
from .modules import __all__ as _modules_all

__all__ = ["functional", "init", "parallel", "utils", "Parameter", "Buffer",
           "UninitializedParameter", "UninitializedBuffer"] + list(_modules_all)
