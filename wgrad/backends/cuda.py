"""``wgrad.backends.cuda``: ``matmul.allow_tf32`` (torch's cuBLAS flag)."""
import jax

from .. import _precision

__all__ = ["matmul", "is_built"]


class _Matmul:
    """``backends.cuda.matmul``: ``allow_tf32`` is ``get_float32_matmul_precision() !=
    'highest'``; setting True selects 'high', False 'highest', as torch's legacy flag."""

    __slots__ = ()

    @property
    def allow_tf32(self):
        return _precision.get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, flag):
        _precision.set_float32_matmul_precision("high" if flag else "highest")

    def __repr__(self):
        return f"<wgrad.backends.cuda.matmul allow_tf32={self.allow_tf32}>"


matmul = _Matmul()


def is_built():
    """Whether JAX can run on CUDA here (torch: whether torch was built with CUDA)."""
    try:
        return len(jax.devices("gpu")) > 0
    except RuntimeError:
        return False
