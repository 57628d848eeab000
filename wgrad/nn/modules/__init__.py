"""The module classes of ``wgrad.nn``, one file per family as in torch.nn.modules.

A new family file adds one ``from .<family> import *`` line above the ``__all__`` line;
``__all__`` collects every public class imported here.
"""
import types as _types

from .module import Module  # noqa: F401
from .container import *  # noqa: F401,F403
from .linear import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .sparse import *  # noqa: F401,F403
from .normalization import *  # noqa: F401,F403
from .dropout import *  # noqa: F401,F403
from .flatten import *  # noqa: F401,F403
from .activation import *  # noqa: F401,F403
from .loss import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .rnn import *  # noqa: F401,F403
from .upsampling import *  # noqa: F401,F403
from .pixelshuffle import *  # noqa: F401,F403
from .fold import *  # noqa: F401,F403
from .activation_1b import *  # noqa: F401,F403
from .dropout_1b import *  # noqa: F401,F403
from .lazy import *  # noqa: F401,F403
from .more import *  # noqa: F401,F403
from .transformer import *  # noqa: F401,F403
from .remaining import *  # noqa: F401,F403
from .linear_ce import *  # noqa: F401,F403

__all__ = [n for n, v in list(globals().items())
           if not n.startswith("_") and not isinstance(v, _types.ModuleType)]
