"""Linear algebra basics: matmul/@, mm, bmm, dot, vdot, outer, inner, einsum, trace."""
import jax.numpy as jnp

from ._primitive import Primitive
from ._promote import result_type

__all__ = ["matmul", "mm", "bmm"]


def _mm_self(grad, other):
    return grad @ other.mH


def _mm_other(grad, self):
    return self.mH @ grad


def _matmul_fwd(self, other, *, dtype):
    return jnp.matmul(self.astype(dtype), other.astype(dtype))


# both operands have >= 2 dims; batch dims broadcast (post-processing sums them back)
_matmul = Primitive("matmul", _matmul_fwd, node_name="MmBackward0",
                    self=_mm_self, other=_mm_other)
_bmm = Primitive("bmm", _matmul_fwd, self=_mm_self, other=_mm_other)


def matmul(input, other):
    """Matrix product with numpy's rules for 1-D operands and batch broadcasting."""
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{input.ndim}D and {other.ndim}D")
    a = input.unsqueeze(0) if input.ndim == 1 else input
    b = other.unsqueeze(-1) if other.ndim == 1 else other
    if a.shape[-1] != b.shape[-2]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({a.shape[-2]}x"
                           f"{a.shape[-1]} and {b.shape[-2]}x{b.shape[-1]})")
    out = _matmul(a, b, dtype=result_type(a, b).np)
    if input.ndim == 1:
        out = out.squeeze(-2)
    if other.ndim == 1:
        out = out.squeeze(-1)
    return out


def mm(input, mat2):
    if input.ndim != 2:
        raise RuntimeError("self must be a matrix")
    if mat2.ndim != 2:
        raise RuntimeError("mat2 must be a matrix")
    return matmul(input, mat2)


def bmm(input, mat2):
    if input.ndim != 3:
        raise RuntimeError("batch1 must be a 3D tensor")
    if mat2.ndim != 3:
        raise RuntimeError("batch2 must be a 3D tensor")
    if input.shape[0] != mat2.shape[0] or input.shape[2] != mat2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{input.shape[0]}, {input.shape[2]}] but got: [{mat2.shape[0]}, "
                           f"{mat2.shape[1]}].")
    return _bmm(input, mat2, dtype=result_type(input, mat2).np)
