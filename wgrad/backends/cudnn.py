"""``wgrad.backends.cudnn``: ``allow_tf32`` (default True, as torch) sets the precision of
float32 convolutions (NOTE [Float32 precision]); ``enabled``, ``benchmark`` and
``deterministic`` are accepted for torch code and change nothing (XLA picks the
convolution algorithms)."""
import sys
import types

import jax

from .. import _precision

__all__ = ["allow_tf32", "enabled", "benchmark", "deterministic", "is_available", "version"]

enabled = True
benchmark = False
deterministic = False


def is_available():
    """Whether a CUDA device (and so cuDNN) is available to JAX."""
    try:
        return len(jax.devices("gpu")) > 0
    except RuntimeError:
        return False


def version():
    """None: JAX links cuDNN itself and does not report its version here."""
    return None


class _CudnnModule(types.ModuleType):
    @property
    def allow_tf32(self):
        return _precision.conv_tf32()

    @allow_tf32.setter
    def allow_tf32(self, flag):
        _precision.set_conv_tf32(flag)


sys.modules[__name__].__class__ = _CudnnModule
