"""Linear algebra: products (matmul/@, mm, bmm, dot, vdot, outer, inner, einsum, trace,
tensordot, addmm/addmv/addbmm/baddbmm), distances (cdist, dist) and the ``wgrad.linalg``
decompositions and solvers.

Every formula follows NOTE [Conjugate Wirtinger convention] in _primitive.py; the
decompositions port the math of PyTorch's FunctionsManual.cpp (svd_backward,
linalg_eig_backward, linalg_qr_backward, cholesky_backward, pinv_backward, ...), each
written with wgrad ops so that double backward records through them.

Only the names torch also has at top level (with the same meaning) are in ``__all__``;
the ``linalg_*``-style functions (solve, eigh, svd, ...) are exposed by ``wgrad.linalg``.
torch's older top-level cholesky, qr, svd and lu_solve differ from linalg's (signatures, V
for Vh), and its top-level solve, lstsq, eig and matrix_rank were removed (they only raise,
saying what replaces them): here those keep torch's top-level names and linalg's are
``linalg_cholesky``, ``linalg_qr``, ``linalg_svd``, ``linalg_lu_solve``, ``linalg_solve``,
``linalg_lstsq``, ``linalg_eig`` and ``linalg_matrix_rank`` (``wgrad.linalg`` binds them
under torch.linalg's names).
"""
import builtins
import collections
import functools
import math
import string
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._creation import zeros
from .._tensor import Tensor, _make, _wrap_dim
from ._out import _CPP, no_derivative_formula
from ._primitive import Primitive, check_broadcast
from ._promote import result_type
from . import _host_gemm  # NOTE [Host GEMM]
from ._lazy_disk import kept
from . import reduction  # reduction imports this module too: used at call time
from .elementwise import (_coef, _conj_scalar, _ctype, _no_forward_ad, log, nan_to_num,
                          where)
from .shape import _cross, cat, expanded_shape

__all__ = ["matmul", "mm", "bmm", "dot", "vdot", "outer", "ger", "inner", "einsum", "trace",
           "tensordot", "det", "logdet", "slogdet", "inverse", "matrix_exp", "matrix_power",
           "pinverse", "chain_matmul", "addmm", "addmv", "addbmm", "baddbmm", "cdist",
           "dist", "mv", "addr", "vander", "cholesky", "cholesky_solve", "cholesky_inverse",
           "triangular_solve", "lu", "lu_solve", "lu_unpack", "qr", "svd", "geqrf", "orgqr",
           "ormqr", "nuclear_norm", "frobenius_norm", "solve", "lstsq", "eig", "symeig",
           "matrix_rank"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ("matmul", "mm", "bmm", "dot", "vdot", "outer", "ger", "inner", "trace", "det",
           "logdet", "slogdet", "inverse", "matrix_exp", "matrix_power", "pinverse", "addmm",
           "addmv", "addbmm", "baddbmm", "dist", "mv", "addr", "cholesky", "cholesky_solve",
           "cholesky_inverse", "triangular_solve", "lu", "lu_solve", "qr", "svd", "geqrf",
           "orgqr", "ormqr", "solve", "lstsq", "eig", "symeig")


class LinAlgError(RuntimeError):
    """Raised when a factorization fails (singular or non positive-definite input)."""


# ======================================================================================
# Products
# ======================================================================================

# NOTE [Which side to conjugate]
# A product's gradients need one conjugated operand: grad @ other^H and self^H @ grad.
# XLA has no conjugating GEMM, so the conjugate is a pass over that operand. The same
# product is also conj(conj(grad) @ other^T) (and conj(self^T @ conj(grad))), exactly:
# conjugation only flips signs, so every rounding is mirrored. The formulas take the form
# with fewer elements to conjugate; in the MLP benchmark's 64x256 @ 256x256 the gradient
# for self then conjugates two 64x256 arrays instead of the 256x256 weight, and inside a
# compiled step XLA fuses those two conjugates into the neighbouring elementwise kernels.
def _mm_self(grad, other):
    m, n, k = grad.shape[-2], grad.shape[-1], other.shape[-2]
    if other.is_complex() and grad.is_complex() and m * (n + k) < k * n:
        return (grad.conj() @ other.mT).conj_physical()
    return grad @ other.mH


def _mm_other(grad, self):
    m, k, n = self.shape[-2], self.shape[-1], grad.shape[-1]
    if self.is_complex() and grad.is_complex() and n * (m + k) < m * k:
        return (self.mT @ grad.conj()).conj_physical()
    return self.mH @ grad


# NOTE [Complex matmul on CPU]
# XLA's CPU backend runs large complex GEMMs far slower than real ones (figures in
# docs/performance.md, "Measurements behind choices in the code"). On CPU a complex
# product whose every dimension (m, k, n) is at least _MM_REAL_MIN is therefore computed
# from real GEMMs: the 4M form (four real products; as accurate as the complex GEMM) and,
# when every dimension is at least _MM_3M_MIN, the 3M form (three products; about 2x the
# rounding error of the imaginary part, still a few ulps of the result's scale). Below
# _MM_REAL_MIN the complex GEMM stays: it is faster on small products (2x at 16^3), ties
# at 48^3, and from 32 on every side with a larger product the 4M form is faster (1.2-2x;
# the MLP benchmark's 64x256x256 included, figures in docs/performance.md).
# tests/ops/test_matmul_fast.py checks both forms against the plain path and the choice.
_MM_REAL_MIN = 32
_MM_3M_MIN = 512


def _complex_matmul_cpu(a, b):
    ar, ai, br, bi = jnp.real(a), jnp.imag(a), jnp.real(b), jnp.imag(b)
    if builtins.min(a.shape[-2], a.shape[-1], b.shape[-1]) >= _MM_3M_MIN:
        t1, t2 = ar @ br, ai @ bi
        t3 = (ar + ai) @ (br + bi)
        return jax.lax.complex(t1 - t2, t3 - t1 - t2)
    return jax.lax.complex(ar @ br - ai @ bi, ar @ bi + ai @ br)


def _matmul_fwd(self, other, *, dtype):
    a, b = self.astype(dtype), other.astype(dtype)
    if (jnp.iscomplexobj(a) and jax.default_backend() == "cpu" and
            builtins.min(a.shape[-2], a.shape[-1], b.shape[-1]) >= _MM_REAL_MIN):
        return _complex_matmul_cpu(a, b)
    return jnp.matmul(a, b)


# both operands have >= 2 dims; batch dims broadcast (post-processing sums them back)
_matmul = Primitive("matmul", _matmul_fwd, node_name="MmBackward0",
                    host=_host_gemm.MATMUL, self=_mm_self, other=_mm_other)
_bmm = Primitive("bmm", _matmul_fwd, host=_host_gemm.MATMUL, self=_mm_self, other=_mm_other)


def matmul(input, other):
    """Matrix product with numpy's rules for 1-D operands and batch broadcasting."""
    if input.ndim == 0 or other.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{input.ndim}D and {other.ndim}D")
    if input.ndim == 1 and other.ndim == 1:
        _matmul_dtypes(input, other)  # before the sizes, as torch's dot
    a = input.unsqueeze(0) if input.ndim == 1 else input
    b = other.unsqueeze(-1) if other.ndim == 1 else other
    if a.shape[-1] != b.shape[-2] or (a.ndim > 2 and b.ndim > 2 and
                                      a.shape[:-2] != b.shape[:-2]):
        _matmul_shape_error(tuple(input.shape), tuple(other.shape))
    _matmul_dtypes(input, other)
    if other.ndim == 1 and input.ndim <= 2:  # torch's dot and mv (DotBackward0, MvBackward0)
        return _dot(input, other) if input.ndim == 1 else _mv(input, other)
    out = _matmul(a, b, dtype=a.dtype.np)
    if input.ndim == 1:
        out = out.squeeze(-2)
    if other.ndim == 1:
        out = out.squeeze(-1)
    return out


def _matmul_shape_error(x, y):
    """torch's error for matmul operands whose shapes do not fit, worded after the kernel
    torch dispatches to (dot, mv, mm over folded rows, or bmm over broadcast batches)."""
    if len(x) == 1 and len(y) == 1:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{x[0]}] and src "
                           f"[{y[0]}] to have the same number of elements, but got {x[0]} "
                           f"and {y[0]} elements respectively")
    rows = 1
    for n in x[:-1]:
        rows *= n
    if len(y) == 1:
        if x[-1] != y[0]:
            raise RuntimeError(f"size mismatch, got input ({rows}), mat ({rows}x{x[-1]}), "
                               f"vec ({y[0]})")
        return
    if len(y) == 2:
        if x[-1] != y[0]:
            raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({rows}x{x[-1]} "
                               f"and {y[0]}x{y[1]})")
        return
    check_broadcast(x[:-2], y[:-2])  # NOTE [Shape errors]
    batch = 1
    for n in np.broadcast_shapes(x[:-2], y[:-2]):
        batch *= n
    if x[-1] != y[-2]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch}, {x[-1]}] but got: [{batch}, {y[-2]}].")


def _matmul_dtypes(x, y):
    """torch's error for matmul operands of two dtypes or of bool, worded after the kernel
    it dispatches to: dot for two vectors, addmv for a vector on the right, addmm for a
    matrix on the right, bmm for batches on the right."""
    kernel = ("dot" if x.ndim == 1 else "addmv_impl_cpu") if y.ndim == 1 else \
        "addmm_impl_cpu_" if y.ndim == 2 else "bmm"
    if x.dtype is not y.dtype:
        if kernel == "dot":
            raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                               f"{x.dtype.scalar_name} and {y.dtype.scalar_name}")
        if kernel == "addmv_impl_cpu":
            raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                               f"{y.dtype.scalar_name}, {x.dtype.scalar_name}, and "
                               f"{y.dtype.scalar_name}")
        if kernel == "bmm":
            raise RuntimeError(f"expected scalar type {x.dtype.scalar_name} but found "
                               f"{y.dtype.scalar_name}")
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_CPP[x.dtype.name]} != {_CPP[y.dtype.name]}")
    if x.dtype is D.bool:
        raise NotImplementedError(f"\"{kernel}\" not implemented for 'Bool'")


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
    _matmul_dtypes(input, mat2)
    return _bmm(input, mat2, dtype=input.dtype.np)


def _check_vectors(a, b):  # torch's vdot words its errors as dot's
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.dtype is not b.dtype:  # before the sizes, as torch's
        raise RuntimeError(f"dot : expected both vectors to have same dtype, but found "
                           f"{a.dtype.scalar_name} and {b.dtype.scalar_name}")
    if a.shape[0] != b.shape[0]:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    if a.dtype is D.bool:
        raise NotImplementedError("\"dot\" not implemented for 'Bool'")



# DotBackward0 / VdotBackward0: one node each, as torch's
_dot = Primitive("dot", lambda self, tensor: jnp.dot(self, tensor),
                 self=lambda grad, tensor: grad * tensor.conj(),
                 tensor=lambda grad, self: grad * self.conj())
_vdot = Primitive("vdot", lambda self, other: jnp.vdot(self, other),
                  self=lambda grad, other: grad.conj() * other,
                  other=lambda grad, self: grad * self)


def _mv_fwd(self, vec):
    return _matmul_fwd(self, vec[:, None], dtype=self.dtype)[:, 0]


_mv = Primitive("mv", _mv_fwd,
                self=lambda grad, vec: grad.unsqueeze(1) * vec.conj(),
                vec=lambda grad, self: self.mH @ grad)


def mv(input, vec):
    """Matrix-vector product (MvBackward0).

    Example
    -------
    >>> wgrad.mv(wgrad.eye(2), wgrad.tensor([1., 2.]))
    tensor([1., 2.])
    """
    if input.ndim != 2 or vec.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got 1, {input.ndim}, "
                           f"{vec.ndim}")
    if input.shape[1] != vec.shape[0]:
        raise RuntimeError(f"size mismatch, got input ({input.shape[0]}), mat ({input.shape[0]}"
                           f"x{input.shape[1]}), vec ({vec.shape[0]})")
    if input.dtype is not vec.dtype:
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{vec.dtype.scalar_name}, {input.dtype.scalar_name}, and "
                           f"{vec.dtype.scalar_name}")
    return _mv(input, vec)


def dot(input, tensor):
    """Inner product of two 1-D tensors of the same dtype (no conjugation).

    Examples
    --------
    >>> wgrad.dot(wgrad.tensor([2., 3.]), wgrad.tensor([2., 1.]))
    tensor(7.)
    """
    _check_vectors(input, tensor)
    return _dot(input, tensor)


def vdot(input, other):
    """``sum(conj(input) * other)`` of two 1-D tensors.

    Examples
    --------
    >>> wgrad.vdot(wgrad.tensor([1j]), wgrad.tensor([1j]))
    tensor(1.+0.j)
    """
    _check_vectors(input, other)
    return _vdot(input, other)


def outer(input, vec2):
    """Outer product of two 1-D tensors.

    Examples
    --------
    >>> wgrad.outer(wgrad.ones(2), wgrad.ones(3)).shape
    wgrad.Size([2, 3])
    """
    if input.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument self, but got {input.ndim}-D")
    if vec2.ndim != 1:
        raise RuntimeError(f"outer: Expected 1-D argument vec2, but got {vec2.ndim}-D")
    return input.reshape(-1, 1) * vec2  # torch's composition (ViewBackward0, MulBackward0)


ger = outer


def inner(input, other):
    """Sum product over the last dims; a 0-d operand multiplies elementwise.

    Examples
    --------
    >>> wgrad.inner(wgrad.ones(2, 3), wgrad.ones(4, 3)).shape
    wgrad.Size([2, 4])
    """
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise RuntimeError(f"inner() the last dimension must match on both input tensors but "
                           f"got shapes {list(input.shape)} and {list(other.shape)}")
    if input.dtype is not other.dtype:
        raise RuntimeError("both inputs should have same dtype")
    letters = iter(string.ascii_letters)
    a = "".join(next(letters) for _ in range(input.ndim - 1))
    b = "".join(next(letters) for _ in range(other.ndim - 1))
    k = next(letters)
    return einsum(f"{a}{k},{b}{k}->{a}{b}", input, other)


def tensordot(a, b, dims=2, out=None):
    """Contract ``dims`` (an int: the last of ``a`` with the first of ``b``, or two lists).

    Examples
    --------
    >>> wgrad.tensordot(wgrad.ones(2, 3), wgrad.ones(3, 4), dims=1).shape
    wgrad.Size([2, 4])
    """
    if a.dtype is not b.dtype:
        raise RuntimeError("both inputs should have same dtype")
    if isinstance(dims, int):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        da = list(range(a.ndim - dims, a.ndim))
        db = list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
    da = [_wrap_dim(d, a.ndim) for d in da]
    db = [_wrap_dim(d, b.ndim) for d in db]
    if len(da) != len(db):
        raise RuntimeError("both dimension lists should have same length")
    letters = iter(string.ascii_letters)
    sa = [next(letters) for _ in range(a.ndim)]
    sb = [next(letters) for _ in range(b.ndim)]
    for i, j in zip(da, db):  # a size 1 broadcasts against the other, as torch's
        if a.shape[i] != b.shape[j] and 1 not in (a.shape[i], b.shape[j]):
            raise RuntimeError(f"contracted dimensions need to match, but first has size "
                               f"{a.shape[i]} in dim {i} and second has size {b.shape[j]} in "
                               f"dim {j}")
        sb[j] = sa[i]
    out_s = [s for i, s in enumerate(sa) if i not in da] + \
            [s for j, s in enumerate(sb) if j not in db]
    return einsum(f"{''.join(sa)},{''.join(sb)}->{''.join(out_s)}", a, b)


def trace(input):
    """Sum of the main diagonal of a 2-D tensor.

    Examples
    --------
    >>> wgrad.trace(wgrad.eye(3))
    tensor(3.)
    """
    if input.dtype is D.bool:  # before the shape, as torch
        raise NotImplementedError("\"trace\" not implemented for 'Bool'")
    if input.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {input.ndim}")
    d = input.dtype
    d = d if d.is_floating_point or d.is_complex else D.default_int()
    return _trace(input, dtype=d.np)


def _trace_backward(grad, self_shape):
    n, m = self_shape
    return grad * _make(jnp.eye(n, m, dtype=grad._data.dtype))


_trace = Primitive("trace", lambda self, *, dtype: jnp.trace(self, dtype=dtype),
                   self=_trace_backward)


# -- einsum -----------------------------------------------------------------------------

def _einsum_fwd(*operands, equation, dtype):
    return jnp.einsum(equation, *[o.astype(dtype) for o in operands])


def _einsum_backward(grad, operands, equation):
    """d/d(operand i): einsum of grad with every other operand conjugated; a subscript that
    only operand i has is summed in the forward, so its gradient broadcasts along it."""
    ins, out = equation.split("->")
    subs = ins.split(",")
    grads = []
    for i, s in enumerate(subs):
        if len(set(s)) != len(s):
            raise NotImplementedError(
                f"einsum backward: the subscript '{s}' repeats an index within one operand "
                f"(a diagonal); its derivative is not implemented.")
        others = [t for j, t in enumerate(subs) if j != i]
        elsewhere = set(out).union(*others) if others else set(out)
        kept = "".join(c for c in s if c in elsewhere)
        eq = ",".join([out] + others) + "->" + kept
        g = einsum(eq, grad, *[operands[j].conj() for j in range(len(subs)) if j != i])
        if kept != s:
            shape = [operands[i].shape[k] if c in kept else 1 for k, c in enumerate(s)]
            g = g.reshape(tuple(shape)).expand(tuple(operands[i].shape))
        grads.append(g)
    return grads


_einsum = Primitive("einsum", _einsum_fwd, operands=_einsum_backward)


def _parse_einsum(equation, operands):
    eq = equation.replace(" ", "")
    if "->" in eq:
        ins, out = eq.split("->")
    else:
        ins, out = eq, None
    subs = ins.split(",")
    if len(subs) != len(operands):
        raise RuntimeError(f"einsum(): more operands were provided than specified in the "
                           f"equation" if len(operands) > len(subs) else
                           "einsum(): fewer operands were provided than specified in the "
                           "equation")
    used = set(c for c in eq if c.isalpha())
    free = [c for c in string.ascii_letters if c not in used]
    ell_nd = 0
    for s, o in zip(subs, operands):
        if "..." in s:
            ell_nd = builtins.max(ell_nd, o.ndim - (len(s) - 3))
    ell = "".join(free[:ell_nd])
    new_subs = []
    for k, (s, o) in enumerate(zip(subs, operands)):
        if "..." in s:
            n = o.ndim - (len(s) - 3)
            s = s.replace("...", ell[ell_nd - n:] if n else "")
        if len(s) != o.ndim:
            raise RuntimeError(f"einsum(): the number of subscripts in the equation "
                               f"({len(s)}) does not match the number of dimensions "
                               f"({o.ndim}) for operand {k} and no ellipsis was given")
        new_subs.append(s)
    if out is None:
        counts = collections.Counter("".join(new_subs))
        out = ell + "".join(sorted(c for c in counts if counts[c] == 1 and c not in ell))
    else:
        out = out.replace("...", ell)
    return new_subs, out


def einsum(equation, *operands):
    """Einstein summation (torch.einsum): implicit output, ellipsis and broadcasting.

    Examples
    --------
    >>> a = wgrad.ones(2, 3)
    >>> wgrad.einsum("ij,kj->ik", a, a).shape
    wgrad.Size([2, 2])
    """
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    subs, out = _parse_einsum(equation, operands)
    sizes = {}
    for k, (s, o) in enumerate(zip(subs, operands)):
        for c, n in zip(s, o.shape):
            if c in sizes and sizes[c] != n and n != 1 and sizes[c] != 1:
                raise RuntimeError(f"einsum(): subscript {c} has size {n} for operand {k} "
                                   f"which does not broadcast with previously seen size "
                                   f"{sizes[c]}")
            if sizes.get(c, 1) == 1:  # broadcasting: 1 takes the other size (0 too)
                sizes[c] = n
    ops = []
    for s, o in zip(subs, operands):
        target = tuple(sizes[c] for c in s)
        if len(set(s)) == len(s) and tuple(o.shape) != target:
            o = o.expand(target)
        ops.append(o)
    _einsum_dtypes(subs, out, ops)
    dtype = result_type(*ops)
    return _einsum(*ops, equation=",".join(subs) + "->" + out, dtype=dtype.np)


def _einsum_dtypes(subs, out, ops):
    """torch's error where einsum contracts operands of two dtypes (or of bool). torch
    takes the operands left to right; a step that sums an index the two sides share (and
    nothing later needs) is a bmm, which needs one dtype, while a step that sums none is a
    product, which promotes."""
    acc, dtype = set(subs[0]), ops[0].dtype
    for k in range(1, len(ops)):
        later = set(out).union(*subs[k + 1:])
        if (acc & set(subs[k])) - later:
            if ops[k].dtype is not dtype:
                raise RuntimeError(f"expected scalar type {dtype.scalar_name} but found "
                                   f"{ops[k].dtype.scalar_name}")
            if dtype is D.bool:
                raise NotImplementedError("\"bmm\" not implemented for 'Bool'")
        dtype = D.promote_types(dtype, ops[k].dtype)
        acc = (acc | set(subs[k])) & later


def chain_matmul(*matrices):
    return multi_dot(matrices)


def multi_dot(tensors):
    """Product of a chain of matrices; the first and last may be 1-D.

    Examples
    --------
    >>> wgrad.linalg.multi_dot([wgrad.ones(3), wgrad.ones(3, 2), wgrad.ones(2)])
    tensor(6.)
    """
    tensors = list(tensors)
    if len(tensors) < 2:
        raise RuntimeError(f"multi_dot(): expected at least 2 tensors but got {len(tensors)}")
    n = len(tensors)
    for i, t in enumerate(tensors):
        if i in (0, n - 1) and t.ndim not in (1, 2):
            raise RuntimeError(f"multi_dot(): the {'first' if i == 0 else 'last'} tensor must "
                               f"be 1D or 2D but got {t.ndim}D")
        if 0 < i < n - 1 and t.ndim != 2:
            raise RuntimeError(f"multi_dot(): tensor {i} must be 2D but got {t.ndim}D")
        if t.dtype is not tensors[0].dtype:
            raise RuntimeError(f"multi_dot(): all tensors must have be the same dtype but "
                               f"tensor 0 is {_CPP[tensors[0].dtype.name]} and tensor {i} "
                               f"{_CPP[t.dtype.name]}")
    for i in range(n - 1):
        x, y = tensors[i], tensors[i + 1]
        if x.shape[-1] != y.shape[0]:
            raise RuntimeError(f"multi_dot(): tensors {i} and {i + 1} with shapes "
                               f"{list(x.shape)} and {list(y.shape)} cannot be multiplied")
    out = tensors[0]
    for t in tensors[1:]:
        out = matmul(out, t)
    return out


# ======================================================================================
# Helpers shared by the decomposition formulas
# ======================================================================================

def _eye(n, dtype):
    return _make(jnp.eye(n, dtype=getattr(dtype, "np", dtype)))


def _diagonal(x):
    """The main diagonal over the last two dims (a differentiable composite)."""
    n = builtins.min(x.shape[-2], x.shape[-1])
    if x.shape[-2] != x.shape[-1]:
        x = x.narrow(-2, 0, n).narrow(-1, 0, n)
    return (x * _eye(n, _np(x))).sum(-1)


def _diag_embed(v):
    n = v.shape[-1]
    return v.unsqueeze(-1) * _eye(n, _np(v))


def _np(t):
    return t._data.dtype


def _mask(x, fn):
    return x * _make(fn(jnp.ones(x.shape[-2:], dtype=_real_np(x))))


def _tril(x, k=0):
    return _mask(x, lambda o: jnp.tril(o, k))


def _triu(x, k=0):
    return _mask(x, lambda o: jnp.triu(o, k))


def _offdiag_one(x):
    """``x`` with its diagonal replaced by ones (the E matrices of FunctionsManual)."""
    n = x.shape[-1]
    return x * _make(1 - jnp.eye(n, dtype=_np(x))) + _eye(n, _np(x))


def _check_square(name, A):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _check_float(name, A):
    d = A.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. "
                           f"Got {d.scalar_name}")


def _concrete(*arrays):
    return not any(isinstance(a, jax.core.Tracer) for a in arrays)


class _CheckedPrimitive(Primitive):
    """A Primitive whose backward first runs ``check(grads, results)`` on the host.

    torch validates some incoming gradients with data-dependent TORCH_CHECKs (the gauge
    checks of eig/eigh/svd); that cannot raise inside the jitted formula kernel, so the
    kernel is wrapped. With create_graph the formulas run eagerly and check themselves;
    under lazy mode the node runs eagerly (``lazy_backward``), so the check sees values.
    """

    lazy_backward = False

    def __init__(prim, name, fwd, *, check, **kw):
        super().__init__(name, fwd, **kw)
        prim.check = check

    def _build_kernel(self, attrs, needs, in_meta, out_meta):
        k = super()._build_kernel(attrs, needs, in_meta, out_meta)

        def run(grads, saved_vals):
            sv = dict(zip(k.names, saved_vals))
            if "results" in sv:
                self.check(grads, sv["results"])
            return k(grads, saved_vals)
        run.names = k.names
        run.xla = getattr(k, "xla", k)  # the jitted kernel: kept on disk as any other's
        run.identity = None  # NOTE [Pass-through kernels]: never (the check must run)
        return run


# ======================================================================================
# Solvers and inverses
# ======================================================================================

def _solve_A(grad, A, result):
    return -_solve(A.mH, grad) @ result.mH


_solve_p = Primitive("linalg_solve", lambda A, B: jnp.linalg.solve(A, B),
                     node_name="LinalgSolveExBackward0",
                     A=_solve_A, B=lambda grad, A: _solve(A.mH, grad))


def _solve(A, B):
    return _solve_p(A, B)


def _is_vector_rhs(A, B):
    return B.ndim == 1 or (B.ndim == A.ndim - 1 and tuple(B.shape) == tuple(A.shape[:-1]))


def linalg_solve(A, B, *, left=True, out=None):
    """Solve ``A X = B`` (``X A = B`` with ``left=False``); batches broadcast.

    Examples
    --------
    >>> A = wgrad.tensor([[2., 0.], [0., 4.]])
    >>> wgrad.linalg.solve(A, wgrad.tensor([2., 4.]))
    tensor([1., 1.])
    """
    _solve_dtypes(A, B)
    _check_square("linalg.solve", A)
    X = _solve_system(A, B, left)
    if _concrete(X._data) and not bool(_ALL_FINITE(X._data)):
        _check_solvable(A)  # only a non-finite solution can come from a singular A
    return X


def _solve_dtypes(A, B):
    _check_float("linalg.solve", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found A "
                           f"of type {A.dtype.scalar_name} and B of type {B.dtype.scalar_name} "
                           f"instead")


def _solve_system(A, B, left, kernel=None):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``), ``A`` and ``B`` of one dtype:
    batches broadcast, and ``B`` is a vector (a batch of them) where torch takes it so;
    ``kernel`` names torch's kernel in its error for a dtype LAPACK lacks."""
    if B.ndim == 0:
        raise RuntimeError("linalg.solve: The input tensor B must have at least 2 dimensions.")
    vec = _is_vector_rhs(A, B)
    if vec:
        B = B.unsqueeze(-1)
    if A.shape[-1] != B.shape[-2 if left else -1]:
        raise RuntimeError(f"linalg.solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} "
                           f"and {B.shape[-2]}x{B.shape[-1]})")
    if kernel is not None:
        _check_lapack(kernel, A)
    batch = jnp.broadcast_shapes(tuple(A.shape[:-2]), tuple(B.shape[:-2]))
    A = A.expand(batch + tuple(A.shape[-2:]))
    B = B.expand(batch + tuple(B.shape[-2:]))
    X = _solve(A, B) if left else _solve(A.mT, B.mT).mT
    return X.squeeze(-1) if vec else X


# the host's checks of a result, kept on disk as the ops' programs are (NOTE [Eager disk
# cache]): a warm process loads them, where jnp's own functions trace and lower
_ALL_FINITE = kept("all finite", lambda x: jnp.isfinite(x).all())
ANY_NAN = kept("any nan", lambda x: jnp.isnan(x).any())


def _check_solvable(A):
    """torch's LinAlgError when some matrix of ``A`` has a zero pivot in its LU."""
    a = np.asarray(A._data)
    mats = a.reshape((-1,) + a.shape[-2:])
    for i, m in enumerate(mats):
        if (np.diag(_lu_u(m)) == 0).any():
            where = f"(Batch element {i}): " if a.ndim > 2 else ""
            raise LinAlgError(f"torch.linalg.solve: {where}The solver failed because the "
                              f"input matrix is singular.")


_inv = Primitive("linalg_inv", lambda A: jnp.linalg.inv(A), node_name="LinalgInvExBackward0",
                 A=lambda grad, result: -(result.mH @ grad @ result.mH))


def _getrf_info(A, X):
    """LAPACK getrf's ``info`` for each matrix of ``A`` (int32, ``A``'s batch shape): where
    its LU has a zero pivot, the first one's place counted from 1, else 0. ``X``, computed
    through that LU, is finite unless a pivot is zero: only then is the LU looked at."""
    if A.shape[-1] == 0 or _concrete(X._data) and bool(_ALL_FINITE(X._data)):
        return zeros(tuple(A.shape[:-2]), dtype=D.int32)  # NOTE [Fillers on the host]
    return _make(_lu_info(_make(jax.lax.linalg.lu(A._data)[0])))


def _raise_failed(info, batched, message):
    """torch's LinAlgError for the first matrix whose ``info`` is not 0; ``message`` has the
    fields ``{where}`` (the batch element) and ``{k}`` (its info)."""
    if not _concrete(info._data):
        return
    flat = np.asarray(info._data).reshape(-1)
    bad = np.nonzero(flat)[0]
    if bad.size:
        i = int(bad[0])
        raise LinAlgError(message.format(where=f"(Batch element {i}): " if batched else "",
                                         k=int(flat[i])))


_ERR_INV = ("{name}: {{where}}The diagonal element {{k}} is zero, the inversion could not be "
            "completed because the input matrix is singular.")


def _inv_checked(A, name):
    """``(A^-1, info)`` after torch's checks of linalg.inv."""
    _check_square(name, A)
    _check_float(name, A)
    if A.dtype in (D.float16, D.bfloat16):
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got "
                           f"{A.dtype.scalar_name}")
    X = _inv(A)
    return X, _getrf_info(A, X)


def _lu_u(m):
    """U of a partially pivoted LU (to find the zero pivot torch reports)."""
    u = np.array(m, dtype=np.complex128)
    n = u.shape[0]
    for k in range(n):
        p = k + int(np.argmax(np.abs(u[k:, k])))
        u[[k, p]] = u[[p, k]]
        if u[k, k] == 0:
            continue
        u[k + 1:] -= np.outer(u[k + 1:, k] / u[k, k], u[k])
    return u


def inv(A, *, out=None):
    """Inverse of a square matrix (batched).

    Examples
    --------
    >>> wgrad.linalg.inv(wgrad.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    X, info = _inv_checked(A, "linalg.inv")
    _raise_failed(info, A.ndim > 2, _ERR_INV.format(name="linalg.inv"))
    return X


inverse = inv


def _det_backward(grad, A, result):
    # d det(A) / dA = adj(A)^T: det(A) A^-1 where A is invertible, and from the SVD where
    # det(A) == 0, so it stays right there (torch gives 0, docs/differences.md). Each
    # branch sees a harmless matrix (the identity) where it is not used, so neither puts
    # inf or nan into a second derivative.
    sing = (result == 0).unsqueeze(-1).unsqueeze(-1)
    eye = _make(jnp.eye(A.shape[-1], dtype=A._data.dtype))
    adj = where(sing, _adjugate(where(sing, A, eye)),
                result.unsqueeze(-1).unsqueeze(-1) * inv(where(sing, eye, A)))
    return grad.unsqueeze(-1).unsqueeze(-1) * adj.mH


def _adjugate(A):
    """adj(A) (= det(A) A^-1 where A is invertible) from A = U diag(S) Vh:
    adj(A) = det(U Vh) V diag(p) U^H with p_i the product of the S_j, j != i."""
    U, S, Vh = linalg_svd(A)
    n = S.shape[-1]
    others = where(_make(jnp.eye(n, dtype=bool)), 1., S.unsqueeze(-2).expand(
        tuple(S.shape[:-1]) + (n, n)))
    p = others.prod(-1).to(A.dtype)
    phase = det(U @ Vh)
    return phase.unsqueeze(-1).unsqueeze(-1) * ((Vh.mH * p.unsqueeze(-2)) @ U.mH)


_det = Primitive("linalg_det", lambda A: jnp.linalg.det(A), A=_det_backward)


def det(A, *, out=None):
    """Determinant (batched).

    Examples
    --------
    >>> wgrad.linalg.det(wgrad.tensor([[2., 1.], [1., 2.]]))
    tensor(3.)
    """
    _check_square("linalg.det", A)
    _check_float("linalg.det", A)
    return _det(A)


def _slogdet_fwd(A):
    s, l = jnp.linalg.slogdet(A)
    return s.astype(A.dtype), l


def _slogdet_backward(grads, A, results):
    g_sign, g_abs = grads
    sign = results[0]
    g = g_abs
    if A.is_complex():
        g = g - 1j * (g_sign.conj() * sign).imag
    return g.unsqueeze(-1).unsqueeze(-1) * inv(A).mH


_slogdet = Primitive("linalg_slogdet", _slogdet_fwd, nout=2, A=_slogdet_backward)

SlogdetResult = collections.namedtuple("slogdet", ["sign", "logabsdet"])


def slogdet(A, *, out=None):
    """``(sign, log|det|)``; the sign is complex for complex ``A``.

    Examples
    --------
    >>> wgrad.linalg.slogdet(wgrad.tensor([[-2., 0.], [0., 1.]])).logabsdet
    tensor(0.6931)
    """
    _check_square("linalg.slogdet", A)
    _check_float("linalg.slogdet", A)
    return SlogdetResult(*_slogdet(A))


def logdet(input):
    sign, labs = slogdet(input)
    if input.is_complex():
        return labs + sign.log()
    return log(sign) + labs


def _matrix_exp_backward(grad, A):
    n = A.shape[-1]
    Ah = A.mH
    top = cat([Ah, grad], -1)
    bottom = cat([Ah * 0, Ah], -1)
    return matrix_exp(cat([top, bottom], -2)).narrow(-2, 0, n).narrow(-1, n, n)


_matrix_exp = Primitive("linalg_matrix_exp", lambda A: jax.scipy.linalg.expm(A),
                        A=_matrix_exp_backward)


def matrix_exp(A):
    """Matrix exponential (batched).

    Examples
    --------
    >>> wgrad.linalg.matrix_exp(wgrad.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    _check_square("linalg.matrix_exp", A)
    return _matrix_exp(A)


def matrix_power(A, n, *, out=None):
    """``A`` to an integer power (negative powers invert first)."""
    _check_square("linalg.matrix_power", A)
    if n == 0:
        return (A * 0) + _eye(A.shape[-1], _np(A))
    if n < 0:
        A, n = inv(A), -n
    result, base = None, A
    while n:
        if n & 1:
            result = base if result is None else result @ base
        n >>= 1
        if n:
            base = base @ base
    return result


def _pinv_backward(grad, A, result):
    pinvA = result
    m, n = A.shape[-2], A.shape[-1]
    pinvAh = pinvA.mH
    gradh = grad.mH
    if m <= n:
        K = gradh @ pinvA
        KpinvAh = K @ pinvAh
        gA = -(pinvA @ K).mH + KpinvAh - (A @ pinvA) @ KpinvAh + \
            (pinvAh @ pinvA) @ (gradh - K @ A)
    else:
        K = pinvA @ gradh
        pinvAhK = pinvAh @ K
        gA = -(K @ pinvA).mH + (gradh - A @ K) @ pinvA @ pinvAh + pinvAhK - \
            pinvAhK @ pinvA @ A
    return gA


def _pinv_fwd(A, atol, rtol, *, hermitian):
    """torch's pinv: singular values (|eigenvalues| when hermitian) at most max(atol, rtol *
    the largest) count as zero; rtol defaults to eps * max(m, n), 0 where atol > 0."""
    real = jnp.zeros((), A.dtype).real.dtype
    atol = jnp.asarray(0. if atol is None else atol, real)
    if rtol is None:
        rtol = jnp.where(atol > 0, 0., jnp.finfo(real).eps * builtins.max(A.shape[-2:]))
    if hermitian:
        w, V = jnp.linalg.eigh(A, UPLO="L", symmetrize_input=False)  # as torch: lower
        s = jnp.abs(w)
    else:
        U, s, Vh = jnp.linalg.svd(A, full_matrices=False)
    if s.shape[-1] == 0:
        return jnp.zeros(A.shape[:-2] + A.shape[-1:] + A.shape[-2:-1], A.dtype)
    tol = jnp.maximum(jnp.asarray(atol, real)[..., None],
                      jnp.asarray(rtol, real)[..., None] * jnp.max(s, -1, keepdims=True))
    keep = s > tol
    inv = jnp.where(keep, 1 / jnp.where(keep, w if hermitian else s, 1), 0).astype(A.dtype)
    hi = jax.lax.Precision.HIGHEST  # as JAX's pinv (docs/differences.md)
    if hermitian:
        return jnp.matmul(V * inv[..., None, :], jnp.conj(jnp.swapaxes(V, -1, -2)),
                          precision=hi)
    return jnp.matmul(jnp.conj(jnp.swapaxes(Vh, -1, -2)) * inv[..., None, :],
                      jnp.conj(jnp.swapaxes(U, -1, -2)), precision=hi)


_pinv = Primitive("linalg_pinv", _pinv_fwd, A=_pinv_backward)


def pinv(A, *, atol=None, rtol=None, hermitian=False, out=None):
    """Moore-Penrose pseudo-inverse (full-rank inputs are differentiable).

    Examples
    --------
    >>> wgrad.linalg.pinv(wgrad.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.5000, 0.0000],
            [0.0000, 0.2500]])
    """
    return _pinv(A, atol, rtol, hermitian=bool(hermitian))


def pinverse(input, rcond=1e-15):
    """``linalg.pinv(input, rtol=rcond)``."""
    return pinv(input, rtol=rcond)


LstsqResult = collections.namedtuple("lstsq", ["solution", "residuals", "rank",
                                               "singular_values"])


def linalg_lstsq(A, B, rcond=None, *, driver=None):
    """Least-squares solution of ``A X = B`` (full-rank ``A``); the solution is
    differentiable (through the pseudo-inverse, as torch's linalg_lstsq_backward).

    Examples
    --------
    >>> A = wgrad.tensor([[1., 0.], [0., 1.], [0., 0.]])
    >>> wgrad.linalg.lstsq(A, wgrad.tensor([[1.], [2.], [3.]])).solution
    tensor([[1.],
            [2.]])
    """
    if A.dtype is not B.dtype:
        raise RuntimeError(f"torch.linalg.lstsq: Expected input and other to have the same "
                           f"dtype, but got input's dtype {A.dtype.scalar_name} and other's "
                           f"dtype {B.dtype.scalar_name}")
    if A.ndim < 2 or B.ndim < 1:
        raise RuntimeError("torch.linalg.lstsq: input must have at least 2 dimensions.")
    driver = "gelsy" if driver is None else driver
    if driver not in ("gels", "gelsy", "gelsd", "gelss"):
        raise RuntimeError("torch.linalg.lstsq: parameter `driver` should be one of (gels, "
                           "gelsy, gelsd, gelss)")
    vec = B.ndim == A.ndim - 1
    Bm = B.unsqueeze(-1) if vec else B
    if A.shape[-2] != Bm.shape[-2]:
        raise RuntimeError(f"torch.linalg.lstsq: input.size(-2) should match other.size(-2)"
                           f"{'' if vec else ''}")
    X = pinv(A) @ Bm
    m, n = A.shape[-2], A.shape[-1]
    rank = _RANK(A._data)
    if driver != "gelsy" and m > n and bool(np.all(np.asarray(rank) == n)):
        r = A @ X - Bm
        residuals = (r.abs() ** 2).sum(-2)
    else:
        residuals = _empty(_real_np(A))
    # torch: rank from every driver but gels, singular values from gelsd and gelss
    sv = _make(_SVDVALS(A._data)) if driver in ("gelsd", "gelss") else _empty(_real_np(A))
    rank = _make(rank) if driver != "gels" else _empty(np.int64)
    return LstsqResult(X.squeeze(-1) if vec else X, residuals, rank, sv)


def _real_np(A):
    return np.zeros((), _np(A)).real.dtype


def _empty(dt):
    """An empty 1-D tensor of NumPy dtype ``dt``, put from the host (jnp.zeros traces)."""
    return _make(jax.device_put(np.zeros((0,), dt)))


# lstsq's rank and singular values, kept on disk (NOTE [Eager disk cache])
_RANK = kept("lstsq rank", lambda a: jnp.linalg.matrix_rank(a).astype(jnp.int64))
_SVDVALS = kept("lstsq svdvals", lambda a: jnp.linalg.svd(a, compute_uv=False))


# ======================================================================================
# Decompositions
# ======================================================================================

_EIG_GAUGE = ("{}: The eigenvectors in the complex case are specified up to multiplication "
              "by e^{{i phi}}. The specified loss function depends on this quantity, so it is "
              "ill-defined.")
_SVD_GAUGE = ("svd_backward: The singular vectors in the complex case are specified up to "
              "multiplication by e^{i phi}. The specified loss function depends on this phase "
              "term, making it ill-defined.")


def _eig_gauge_ok(gV, V):
    d = np.imag(np.einsum("...ji,...ji->...i", np.conj(V), gV))
    return np.allclose(d, 0, rtol=1e-2, atol=1e-2)


def _check_eig(name):
    def check(grads, results):
        gV, V = grads[1], results[1]
        if gV is None or not np.iscomplexobj(V) or not _concrete(gV, V):
            return
        if not _eig_gauge_ok(np.asarray(gV), np.asarray(V)):
            raise RuntimeError(_EIG_GAUGE.format(name))
    return check


def _eig_backward(gL, gV, L, V, is_hermitian, name):
    """linalg_eig_backward of FunctionsManual.cpp (arXiv:1701.00392, eq. 4.77)."""
    _check_eig(name)((gL._data, gV._data), (L._data, V._data))
    VhgV = V.mH @ gV
    if is_hermitian:
        VhgV = 0.5 * (VhgV - VhgV.mH)
    else:
        VhgV = VhgV - V.mH @ (V * _diagonal(VhgV).real.unsqueeze(-2))
    Lc = L.conj()
    Econj = _offdiag_one(Lc.unsqueeze(-2) - Lc.unsqueeze(-1))
    gA = _offdiag(_div0(VhgV, Econj)) + _diag_embed(gL)
    if is_hermitian:
        return V @ (gA @ V.mH)
    return _solve(V.mH, gA @ V.mH)


# NOTE [Repeated eigenvalues]
# The eigenvector part of eig/eigh/svd gradients divides by differences of eigenvalues
# (singular values), which vanish at repeated ones (eye(3)). A loss on the values alone
# has zero vector gradients there, and torch then skips that part (its formula for
# undefined vector gradients): a zero numerator contributes 0 here, not 0/0 = nan, so
# such a loss has torch's finite gradient. A nonzero vector gradient at a repeated value
# still gives inf/nan, as in torch: the vectors are not unique there. Only the
# denominator is replaced (0/0 -> 0/1), so the quotient keeps its derivative in ``num``
# for second derivatives.
def _div0(num, den):
    return num / where((num == 0) & (den == 0), 1., den)


def _offdiag(x):
    n = x.shape[-1]
    return x * _make(1 - jnp.eye(n, dtype=_real_np(x)))


def _eigh_fwd(A, *, upper):
    A = jnp.triu(A) if upper else jnp.tril(A)
    A = A + jnp.conj(jnp.swapaxes(A, -1, -2)) - jnp.real(
        jnp.eye(A.shape[-1], dtype=A.dtype) * A) * jnp.eye(A.shape[-1], dtype=A.dtype)
    L, V = jnp.linalg.eigh(A, symmetrize_input=False)
    return L, V


_eigh = _CheckedPrimitive(
    "linalg_eigh", _eigh_fwd, nout=2, check=_check_eig("linalg_eigh_backward"),
    A=lambda grads, results: _eig_backward(grads[0], grads[1], results[0], results[1], True,
                                           "linalg_eigh_backward"))

EighResult = collections.namedtuple("eigh", ["eigenvalues", "eigenvectors"])
EigResult = collections.namedtuple("eig", ["eigenvalues", "eigenvectors"])


def eigh(A, UPLO="L", *, out=None):
    """Eigen-decomposition of a Hermitian matrix, reading the ``UPLO`` triangle.

    Losses must not depend on the phase of the eigenvectors (torch's error otherwise).

    Examples
    --------
    >>> wgrad.linalg.eigh(wgrad.tensor([[2., 0.], [0., 1.]])).eigenvalues
    tensor([1., 2.])
    """
    _check_square("linalg.eigh", A)
    _check_float("linalg.eigh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return EighResult(*_eigh(A, upper=UPLO == "U"))


def _eigvalsh_backward(grad, A, upper):
    L, V = eigh(A, "U" if upper else "L")
    return (V * grad.unsqueeze(-2)) @ V.mH


_eigvalsh = Primitive("linalg_eigvalsh", lambda A, *, upper: _eigh_fwd(A, upper=upper)[0],
                      A=_eigvalsh_backward)


def eigvalsh(A, UPLO="L", *, out=None):
    """Eigenvalues of a Hermitian matrix, ascending.

    Examples
    --------
    >>> wgrad.linalg.eigvalsh(wgrad.tensor([[2., 0.], [0., 1.]]))
    tensor([1., 2.])
    """
    _check_square("linalg.eigvalsh", A)
    if UPLO not in ("L", "U"):
        raise RuntimeError(f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    return _eigvalsh(A, upper=UPLO == "U")


def _cdtype(x):
    return jnp.result_type(x.dtype, jnp.complex64)


def _eig_fwd(A):
    L, V = jnp.linalg.eig(A)
    return L.astype(_cdtype(A)), V.astype(_cdtype(A))


# jnp.linalg.eig runs on the CPU only
_eig = _CheckedPrimitive(
    "linalg_eig", _eig_fwd, nout=2, jit=False, check=_check_eig("linalg_eig_backward"),
    A=lambda grads, results: _eig_backward(grads[0], grads[1], results[0], results[1], False,
                                           "linalg_eig_backward"))


def linalg_eig(A, *, out=None):
    """Eigen-decomposition of a general square matrix (complex results).

    Examples
    --------
    >>> wgrad.linalg.eig(wgrad.tensor([[2., 0.], [0., 1.]])).eigenvalues
    tensor([2.+0.j, 1.+0.j])
    """
    _check_square("linalg.eig", A)
    _check_float("linalg.eig", A)
    return EigResult(*_eig(A))


def _eigvals_backward(grad, A):
    L, V = linalg_eig(A)
    return _solve(V.mH, grad.unsqueeze(-1) * V.mH)


_eigvals = Primitive("linalg_eigvals", lambda A: _eig_fwd(A)[0], jit=False,
                     A=_eigvals_backward)


def eigvals(A, *, out=None):
    """Eigenvalues of a general square matrix (complex)."""
    _check_square("linalg.eigvals", A)
    return _eigvals(A)


def _svd_backward(gU, gS, gVh, U, S, Vh):
    """svd_backward of FunctionsManual.cpp (reduced U, Vh)."""
    m, n = U.shape[-2], Vh.shape[-1]
    is_complex = U.is_complex()
    UhgU = U.mH @ gU
    UhgU = UhgU - UhgU.mH
    VhgV = Vh @ gVh.mH
    VhgV = VhgV - VhgV.mH
    S2 = S * S
    E = _offdiag_one(S2.unsqueeze(-2) - S2.unsqueeze(-1))
    ret = _offdiag(_div0(UhgU * S.unsqueeze(-2) + S.unsqueeze(-1) * VhgV, E)) + \
        _diag_embed(gS)
    if is_complex:
        ret = ret + _diag_embed(_div0(_diagonal(UhgU), 2 * S))
    if m > n:
        gA = U @ ret
        gUSinv = _div0(gU, S.unsqueeze(-2))
        gA = gA + gUSinv - U @ (U.mH @ gUSinv)
        return gA @ Vh
    if m < n:
        gA = ret @ Vh
        SinvgVh = _div0(gVh, S.unsqueeze(-1))
        gA = gA + SinvgVh - (SinvgVh @ Vh.mH) @ Vh
        return U @ gA
    return U @ (ret @ Vh)


def _check_svd(grads, results):
    gU, gVh = grads[0], grads[2]
    U, Vh = results[0], results[2]
    if not np.iscomplexobj(U) or (gU is None and gVh is None) or not _concrete(U, Vh):
        return
    k = min(U.shape[-2], Vh.shape[-1])
    U, Vh = np.asarray(U)[..., :k], np.asarray(Vh)[..., :k, :]
    im_u = 0 if gU is None else np.imag(np.einsum(
        "...ji,...ji->...i", U.conj(), np.asarray(gU)[..., :k]))
    im_v = 0 if gVh is None else np.imag(np.einsum(
        "...ij,...ij->...i", Vh, np.asarray(gVh)[..., :k, :].conj()))
    # Im diag(U^H gU - gU^H U) + Im diag(V^H gV - gV^H V) = 2 (im_u + im_v)
    if not np.allclose(2 * im_u, -2 * im_v, rtol=1e-2, atol=1e-2):
        raise RuntimeError(_SVD_GAUGE)


def _svd_A(grads, results, full_matrices):
    gU, gS, gVh = grads
    U, S, Vh = results
    k = S.shape[-1]
    if full_matrices:
        U, gU = U.narrow(-1, 0, k), gU.narrow(-1, 0, k)
        Vh, gVh = Vh.narrow(-2, 0, k), gVh.narrow(-2, 0, k)
    _check_svd((gU._data, gS._data, gVh._data), (U._data, S._data, Vh._data))
    return _svd_backward(gU, gS, gVh, U, S, Vh)


_svd = _CheckedPrimitive(
    "linalg_svd", lambda A, *, full_matrices: jnp.linalg.svd(A, full_matrices=full_matrices),
    nout=3, check=_check_svd, A=_svd_A)

SVDResult = collections.namedtuple("svd", ["U", "S", "Vh"])


def linalg_svd(A, full_matrices=True, *, driver=None, out=None):
    """``A = U diag(S) Vh``; losses must not depend on the singular vectors' phases.

    Examples
    --------
    >>> wgrad.linalg.svd(wgrad.tensor([[3., 0.], [0., 2.]])).S
    tensor([3., 2.])
    """
    if A.ndim < 2:
        raise RuntimeError("linalg.svd: The input tensor A must have at least 2 dimensions.")
    _check_float("linalg.svd", A)
    return SVDResult(*_svd(A, full_matrices=bool(full_matrices)))


def _svdvals_backward(grad, A):
    U, S, Vh = linalg_svd(A, full_matrices=False)
    return U @ (grad.unsqueeze(-1) * Vh)


_svdvals = Primitive("linalg_svdvals", lambda A: jnp.linalg.svd(A, compute_uv=False),
                     A=_svdvals_backward)


def svdvals(A, *, driver=None, out=None):
    """Singular values, descending.

    Examples
    --------
    >>> wgrad.linalg.svdvals(wgrad.tensor([[3., 0.], [0., -2.]]))
    tensor([3., 2.])
    """
    if A.ndim < 2:
        raise RuntimeError("linalg.svdvals: The input tensor A must have at least 2 "
                           "dimensions.")
    return _svdvals(A)


_QR_R_ERR = ("The derivative of linalg.qr depends on Q, which is not computed when mode='r'. "
             "Please use linalg.qr(A, mode='reduced') if you are going to differentiate "
             "through linalg.qr.")
_QR_COMPLETE_ERR = ("The QR decomposition is not differentiable when mode='complete' and "
                    "nrows > ncols.")


def _qr_backward(grads, results, mode):
    """linalg_qr_backward of FunctionsManual.cpp."""
    gQ, gR = grads
    Q, R = results
    if mode == "r":
        raise RuntimeError(_QR_R_ERR)
    m, n = Q.shape[-2], R.shape[-1]
    if mode == "complete" and m > n:
        raise RuntimeError(_QR_COMPLETE_ERR)
    gA = gR @ R.mH - Q.mH @ gQ
    if m >= n:
        X = _triu(gA)
        X = X + X.mH
        X = X - 0.5 * _diag_embed(_diagonal(X).real)
        gA = Q @ X + gQ
        return _solve(R.conj(), gA.mT).mT  # gA R^{-H}
    X = -gA
    X = _tril(X - X.mH)
    if X.is_complex():
        X = X - 0.5j * _diag_embed(_diagonal(X).imag)
    gA = Q @ X
    R1 = R.narrow(-1, 0, m)
    gA = _solve(R1.conj(), gA.mT).mT
    gA = cat([gA, _make(jnp.zeros(tuple(gA.shape[:-1]) + (n - m,), _np(gA)))], -1)
    return gA + Q @ gR


def _qr_fwd(A, *, mode):
    if mode == "r":
        r = jnp.linalg.qr(A, mode="r")
        return jnp.zeros((0,), A.dtype), r
    return jnp.linalg.qr(A, mode=mode)


_qr = Primitive("linalg_qr", _qr_fwd, nout=2, A=_qr_backward)

QRResult = collections.namedtuple("qr", ["Q", "R"])


def linalg_qr(A, mode="reduced", *, out=None):
    """QR decomposition, ``mode`` one of 'reduced', 'complete', 'r'.

    Examples
    --------
    >>> wgrad.linalg.qr(wgrad.eye(2)).R
    tensor([[1., 0.],
            [0., 1.]])
    """
    if mode not in ("reduced", "complete", "r"):
        raise RuntimeError(f"qr received unrecognized mode '{mode}' but expected one of "
                           f"'reduced' (default), 'r', or 'complete'")
    if A.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    return QRResult(*_qr(A, mode=mode))


def _cholesky_backward(grad, result):
    L, gL = result, grad
    gA = _tril(L.mH @ gL)
    gA = 0.5 * (gA + _tril(gA, -1).mH)
    gA = _solve(L.mH, gA)           # L^{-H} gA
    return _solve(L.mH, gA.mH).mH   # ... L^{-1}


def _potf2(A):
    """LAPACK's unblocked Cholesky factorization (potf2) of the lower triangles of ``A``:
    ``(L, info)``. Where a leading minor is not positive-definite (``info`` is its order,
    else 0), ``L`` is what potf2 leaves: the columns before it factored, the failed pivot,
    and the rest of ``A``'s lower triangle as it was."""
    n = A.shape[-1]
    idx = jnp.arange(n)
    if n == 0:
        return A, jnp.zeros(A.shape[:-2], jnp.int32)

    def step(j, carry):
        a, info = carry
        row = jnp.where(idx < j, a[..., j, :], 0)
        ajj = jnp.real(a[..., j, j]) - jnp.sum(jnp.real(row * jnp.conj(row)), -1)
        fresh = info == 0
        ok, fail = fresh & (ajj > 0), fresh & ~(ajj > 0)  # a NaN pivot fails too
        r = jnp.sqrt(jnp.where(ok, ajj, 1))
        done = jnp.where(idx < j, a, 0)  # the factored columns (a NaN after them stays)
        col = (a[..., :, j] - _mm(done, jnp.conj(row)[..., None])[..., 0]) * (1 / r)[..., None]
        col = jnp.where((idx > j) & ok[..., None], col, a[..., :, j])
        pivot = jnp.where(ok, r, jnp.where(fail, ajj, a[..., j, j])).astype(a.dtype)
        a = a.at[..., :, j].set(jnp.where(idx == j, pivot[..., None], col))
        return a, jnp.where(fail, j + 1, info).astype(jnp.int32)
    return jax.lax.fori_loop(0, n, step, (jnp.tril(A), jnp.zeros(A.shape[:-2], jnp.int32)))


def _cholesky_ex_fwd(A, *, upper):
    # LAPACK's potrf, of one triangle only (JAX's default symmetrizes A): the upper one is
    # the lower one of A^H. Only where it failed is potf2 run, for LAPACK's info and
    # partial factor.
    A = _mh(A) if upper else A
    L = jax.lax.linalg.cholesky(A, symmetrize_input=False)
    bad = jnp.isnan(L).any((-2, -1))

    def failed():
        P, info = _potf2(A)
        return jnp.where(bad[..., None, None], P, L), info
    L, info = jax.lax.cond(bad.any(), failed, lambda: (L, jnp.zeros(bad.shape, jnp.int32)))
    return (_mh(L) if upper else L), info


def _cholesky_ex_backward(grads, results, upper):
    # torch's formula, with L = U^H and its gradient for upper (even where the
    # factorization failed)
    if upper:
        return _cholesky_backward(grads[0].mH, results[0].mH)
    return _cholesky_backward(grads[0], results[0])


# (L, info): LinalgCholeskyExBackward0
_cholesky_ex_p = Primitive("linalg_cholesky_ex", _cholesky_ex_fwd, nout=2,
                           nondiff_outputs=(1,), node_name="LinalgCholeskyExBackward0",
                           A=_cholesky_ex_backward)

LinalgCholeskyExResult = collections.namedtuple("linalg_cholesky_ex", ["L", "info"])

# NOTE [LAPACK's partial Cholesky factor]
# Where A is not positive-definite, cholesky_ex returns info and what LAPACK leaves in L.
# torch 2.13's CPU LAPACK (MKL) runs the unblocked potf2 up to n = 128, whose partial
# factor _potf2 reproduces; from 129 on it runs a blocked algorithm whose partial factor
# is another (measured in tests/ops/test_added_linalg2.py). There wgrad raises rather
# than return a different L.
_POTF2_MAX = 128
_ERR_CHOLESKY = ("{name}: {{where}}The factorization could not be completed because the "
                 "input is not positive-definite (the leading minor of order {{k}} is not "
                 "positive-definite).")


def _cholesky_checked(A, upper, name, check_errors):
    """``(L, info)`` of linalg.cholesky_ex after torch's checks; ``check_errors`` raises
    torch's LinAlgError (naming ``name``) where ``A`` is not positive-definite."""
    _check_square("linalg.cholesky", A)
    _check_float("linalg.cholesky", A)
    _check_lapack("cholesky_cpu", A)
    L, info = _cholesky_ex_p(A, upper=bool(upper))
    if check_errors:
        _raise_failed(info, A.ndim > 2, _ERR_CHOLESKY.format(name=name))
    elif A.shape[-1] > _POTF2_MAX and _concrete(info._data) and bool(
            jnp.any(info._data > 0)):
        raise NotImplementedError(
            f"{name}: for a matrix larger than {_POTF2_MAX} x {_POTF2_MAX} that is not "
            f"positive-definite, the partial factor torch's LAPACK leaves in L is not "
            f"reproduced (NOTE [LAPACK's partial Cholesky factor]); use check_errors=True, "
            f"or test the matrix with a smaller one")
    return L, info


def linalg_cholesky(A, *, upper=False, out=None):
    """Cholesky factor of a Hermitian positive-definite matrix (lower by default; the
    factor of the upper triangle with ``upper``).

    Examples
    --------
    >>> wgrad.linalg.cholesky(wgrad.tensor([[4., 0.], [0., 9.]]))
    tensor([[2., 0.],
            [0., 3.]])
    """
    return _cholesky_checked(A, upper, "linalg.cholesky", True)[0]


def cholesky_ex(A, *, upper=False, check_errors=False):
    """:func:`linalg_cholesky` without its check: ``(L, info)``, ``info`` the order of the
    first leading minor that is not positive-definite (0 where there is none) and ``L``
    there what LAPACK leaves; ``check_errors`` raises as linalg.cholesky.

    Examples
    --------
    >>> wgrad.linalg.cholesky_ex(wgrad.tensor([[4., 2.], [2., -3.]])).info
    tensor(2, dtype=wgrad.int32)
    """
    return LinalgCholeskyExResult(*_cholesky_checked(A, upper, "linalg.cholesky_ex",
                                                      check_errors))


# ======================================================================================
# torch's older factorizations and solvers: torch.cholesky, triangular_solve, lu, qr, svd
# ======================================================================================
# Each reads only the triangle(s) torch's LAPACK call reads and differentiates as torch:
# cholesky_solve and cholesky_inverse in the whole of L (torch's formulas for
# (L L^H)^-1), the triangular solves in the triangle they read (their tangents, as
# torch's, in the whole of dA). Where torch's tangent is not the derivative
# (cholesky_inverse; triangular_solve(transpose=True) in A) forward-mode AD raises.

def _deprecated(message):
    """torch's deprecation warning for its older linear-algebra functions."""
    warnings.warn(message, UserWarning, stacklevel=3)


def _mh(a):
    return jnp.conj(jnp.swapaxes(a, -1, -2))


def _mm(a, b):
    """A product inside these ops' kernels, at full precision as LAPACK's."""
    return jnp.matmul(a, b, precision=jax.lax.Precision.HIGHEST)


_LAPACK_DTYPES = (D.float32, D.float64, D.complex64, D.complex128)


def _check_lapack(kernel, A):
    if A.dtype not in _LAPACK_DTYPES:
        raise NotImplementedError(f"\"{kernel}\" not implemented for '{A.dtype.scalar_name}'")


def _batch_of(*ts):
    """The broadcast batch shape of matrices ``ts`` (torch's error when there is none)."""
    check_broadcast(*[tuple(t.shape[:-2]) for t in ts])  # NOTE [Shape errors]
    return tuple(np.broadcast_shapes(*[tuple(t.shape[:-2]) for t in ts]))


def _solve_operands(op, B, A):
    """``B`` and the square ``A`` of a solve ``A X = B``, broadcast to one batch, after
    torch's size and dtype-kernel checks."""
    _check_square_plain(A)
    if A.shape[-1] != B.shape[-2]:
        raise RuntimeError(f"Incompatible matrix sizes for {op}: each A matrix is "
                           f"{A.shape[-2]} by {A.shape[-1]} but each b matrix is "
                           f"{B.shape[-2]} by {B.shape[-1]}")
    _check_lapack(f"{op}_cpu", A)
    batch = _batch_of(B, A)
    return B.expand(batch + tuple(B.shape[-2:])), A.expand(batch + tuple(A.shape[-2:]))


def _cholesky_failure(A):
    """``(batch element, order)`` of the first leading minor of a matrix of ``A`` (its
    lower triangle) that is not positive-definite; None if there is none."""
    info = np.asarray(_potf2(A._data)[1]).reshape(-1)
    bad = np.nonzero(info)[0]
    return (int(bad[0]), int(info[bad[0]])) if bad.size else None


def _cholesky_legacy_fwd(A, *, upper):
    # one triangle only, as LAPACK's potrf (JAX's default symmetrizes the input): the
    # upper one is the lower one of A^H
    L = jax.lax.linalg.cholesky(_mh(A) if upper else A, symmetrize_input=False)
    return _mh(L) if upper else L


def _cholesky_legacy_jvp(p, t, *, upper):
    _no_forward_ad("cholesky")(p, t)


# torch.cholesky: linalg.cholesky's formula, applied to L = U^H and its gradient for upper
# (no tangents: torch has none)
_cholesky_legacy = Primitive(
    "cholesky", _cholesky_legacy_fwd, jvp=_cholesky_legacy_jvp,
    A=lambda grad, result, upper: _cholesky_backward(grad.mH, result.mH) if upper else
    _cholesky_backward(grad, result))


def cholesky(input, upper=False):
    """torch.cholesky: the Cholesky factor of Hermitian positive-definite matrices, lower
    (``A = L L^H``, from the lower triangle) or upper (``A = U^H U``, from the upper one).

    Examples
    --------
    >>> wgrad.cholesky(wgrad.tensor([[4., 2.], [2., 5.]]))
    tensor([[2., 0.],
            [1., 2.]])
    """
    _deprecated(
        "torch.cholesky is deprecated in favor of torch.linalg.cholesky and will be removed "
        "in a future PyTorch release.\nL = torch.cholesky(A)\nshould be replaced with\n"
        "L = torch.linalg.cholesky(A)\nand\nU = torch.cholesky(A, upper=True)\nshould be "
        "replaced with\nU = torch.linalg.cholesky(A).mH\nThis transform will produce "
        "equivalent results for all valid (symmetric positive definite) inputs.")
    _check_square("cholesky", input)
    _check_lapack("cholesky_cpu", input)
    L = _cholesky_legacy(input, upper=bool(upper))
    if _concrete(L._data) and bool(ANY_NAN(L._data)):
        failed = _cholesky_failure(input.mH if upper else input)
        if failed is not None:
            batch = f"(Batch element {failed[0]}): " if input.ndim > 2 else ""
            raise LinAlgError(f"cholesky: {batch}The factorization could not be completed "
                              f"because the input is not positive-definite (the leading "
                              f"minor of order {failed[1]} is not positive-definite).")
    return L


def _trsolve_fwd(A, B, *, upper, unit):
    return jax.lax.linalg.triangular_solve(A, B, left_side=True, lower=not upper,
                                           unit_diagonal=unit)


def _trsolve_B(grad, A, upper, unit):
    return _trsolve(A.mH, grad, upper=not upper, unit=unit)


def _trsolve_A(grad, A, result, upper, unit):
    # the triangle that was read (without its diagonal for a unit triangle)
    gA = -(_trsolve_B(grad, A, upper, unit) @ result.mH)
    return gA.triu(int(unit)) if upper else gA.tril(-int(unit))


def _trsolve_jvp(p, t, *, upper, unit):
    # torch's tangent takes the whole of dA (its gradient only the triangle read)
    (A, B), (dA, dB) = p, t
    rhs = jnp.zeros_like(B) if dB is None else dB
    if dA is not None:
        rhs = rhs - _mm(dA, _trsolve_fwd(A, B, upper=upper, unit=unit))
    return _trsolve_fwd(A, rhs, upper=upper, unit=unit)


def _trsolve_jvp_transposed(p, t, *, upper, unit):
    if t[0] is not None:
        raise NotImplementedError(
            "triangular_solve: forward-mode AD with respect to A is not supported with "
            "transpose=True (torch 2.13's tangent there takes dA untransposed, which is not "
            "the derivative)")
    return _trsolve_jvp(p, t, upper=upper, unit=unit)


# X = A^-1 B for a triangular A (batch dims equal); torch.triangular_solve's tangents
_trsolve = Primitive("triangular_solve", _trsolve_fwd, A=_trsolve_A, B=_trsolve_B)
_trsolve_torch = Primitive("triangular_solve", _trsolve_fwd, A=_trsolve_A, B=_trsolve_B,
                           jvp=_trsolve_jvp)
_trsolve_torch_t = Primitive("triangular_solve", _trsolve_fwd, A=_trsolve_A, B=_trsolve_B,
                             jvp=_trsolve_jvp_transposed)

TriangularSolveResult = collections.namedtuple("triangular_solve",
                                               ["solution", "cloned_coefficient"])


def triangular_solve(input, A, upper=True, transpose=False, unitriangular=False):
    """Solve ``A X = input`` (``A^T X = input`` with ``transpose``) for a triangular ``A``;
    returns ``(solution, cloned_coefficient)``, batch dims broadcast.

    Examples
    --------
    >>> A = wgrad.tensor([[2., 1.], [0., 4.]])
    >>> wgrad.triangular_solve(wgrad.tensor([[3.], [4.]]), A).solution
    tensor([[1.],
            [1.]])
    """
    _deprecated(
        "torch.triangular_solve is deprecated in favor of torch.linalg.solve_triangularand "
        "will be removed in a future PyTorch release.\ntorch.linalg.solve_triangular has its "
        "arguments reversed and does not return a copy of one of the inputs.\nX = "
        "torch.triangular_solve(B, A).solution\nshould be replaced with\nX = "
        "torch.linalg.solve_triangular(A, B).")
    b = input
    for name, t in (("b", b), ("A", A)):
        if t.ndim < 2:
            raise RuntimeError(f"torch.triangular_solve: Expected {name} to have at least 2 "
                               f"dimensions, but it has {t.ndim} dimensions instead")
    if b.dtype is not A.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{b.dtype.scalar_name} and A of type {A.dtype.scalar_name} "
                           f"instead.")
    b, A = _solve_operands("triangular_solve", b, A)
    prim = _trsolve_torch_t if transpose else _trsolve_torch
    X = prim(A.mT if transpose else A, b, upper=bool(upper) != bool(transpose),
             unit=bool(unitriangular))
    return TriangularSolveResult(X, A.clone())


def _check_square_plain(A):
    if A.shape[-1] != A.shape[-2]:
        raise RuntimeError(f"A must be batches of square matrices, but they are "
                           f"{A.shape[-2]} by {A.shape[-1]} matrices")


def _chol_solve_fwd(B, L, *, upper):
    solve = functools.partial(jax.lax.linalg.triangular_solve, left_side=True,
                              lower=not upper)
    Y = solve(L, B, transpose_a=upper, conjugate_a=upper)  # L^-1 B, or U^-H B
    return solve(L, Y, transpose_a=not upper, conjugate_a=not upper)


def _chol_solve_L(grad, L, result, upper):
    S = _chol_solve(grad, L, upper=upper) @ result.mH
    S = S + S.mH
    return -(L @ S) if upper else -(S @ L)


def _chol_dA(L, dL, upper):
    """The tangent of A = L L^H (U^H U) in the whole of L, as torch's."""
    d = _mm(dL, _mh(L)) if not upper else _mm(_mh(dL), L)
    return d + _mh(d)


def _chol_solve_jvp(p, t, *, upper):
    (B, L), (dB, dL) = p, t
    rhs = jnp.zeros_like(B) if dB is None else dB
    if dL is not None:
        rhs = rhs - _mm(_chol_dA(L, dL, upper), _chol_solve_fwd(B, L, upper=upper))
    return _chol_solve_fwd(rhs, L, upper=upper)


# X = (L L^H)^-1 B (or (U^H U)^-1 B): CholeskySolveBackward0
_chol_solve = Primitive("cholesky_solve", _chol_solve_fwd,
                        B=lambda grad, L, upper: _chol_solve(grad, L, upper=upper),
                        L=_chol_solve_L, jvp=_chol_solve_jvp)


def cholesky_solve(input, input2, upper=False):
    """Solve ``A X = input`` given the Cholesky factor ``input2`` of ``A`` (lower:
    ``A = L L^H``; ``upper``: ``A = U^H U``); batch dims broadcast.

    Examples
    --------
    >>> L = wgrad.tensor([[2., 0.], [1., 2.]])
    >>> wgrad.cholesky_solve(wgrad.tensor([[6.], [7.]]), L)
    tensor([[1.],
            [1.]])
    """
    B, L = input, input2
    if B.dtype is not L.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_name} and A of type {L.dtype.scalar_name} "
                           f"instead.")
    if B.ndim < 2:
        raise RuntimeError(f"b should have at least 2 dimensions, but has {B.ndim} dimensions "
                           f"instead")
    if L.ndim < 2:
        raise RuntimeError(f"u should have at least 2 dimensions, but has {L.ndim} dimensions "
                           f"instead")
    B, L = _solve_operands("cholesky_solve", B, L)
    return _chol_solve(B, L, upper=bool(upper))


def _chol_inv_fwd(L, *, upper):
    eye = jnp.broadcast_to(jnp.eye(L.shape[-1], dtype=L.dtype), L.shape)
    Li = jax.lax.linalg.triangular_solve(L, eye, left_side=True, lower=not upper)
    return _mm(Li, _mh(Li)) if upper else _mm(_mh(Li), Li)


def _chol_inv_L(grad, L, result, upper):
    S = result @ (grad + grad.mH) @ result
    return -(L @ S) if upper else -(S @ L)


def _chol_inv_jvp(p, t, *, upper):
    raise NotImplementedError(
        "cholesky_inverse: forward-mode AD is not supported (torch 2.13's tangent, "
        "-X dL X L^H plus its adjoint, is not the derivative of X = (L L^H)^-1)")


# (L L^H)^-1 (or (U^H U)^-1): CholeskyInverseBackward0
_chol_inv = Primitive("cholesky_inverse", _chol_inv_fwd, L=_chol_inv_L, jvp=_chol_inv_jvp)


def cholesky_inverse(input, upper=False):
    """The inverse of ``A`` from its Cholesky factor ``input`` (lower: ``A = L L^H``;
    ``upper``: ``A = U^H U``).

    Examples
    --------
    >>> wgrad.cholesky_inverse(wgrad.tensor([[2., 0.], [0., 4.]]))
    tensor([[0.2500, 0.0000],
            [0.0000, 0.0625]])
    """
    _check_square("cholesky_inverse", input)
    _check_lapack("cholesky_inverse_out_cpu", input)
    if input.is_complex() and _concrete(input._data) and bool(
            jnp.any(jnp.imag(jnp.diagonal(input._data, axis1=-2, axis2=-1)) != 0)):
        # LAPACK's zpotri, torch's kernel, takes the diagonal as real; its result is then
        # not the inverse of L L^H (nor Hermitian)
        raise NotImplementedError("cholesky_inverse: a complex Cholesky factor with a "
                                  "non-real diagonal is not supported (torch's result for it "
                                  "is not the inverse of L L^H)")
    return _chol_inv(input, upper=bool(upper))


def _lu_fwd(A):
    lu_, pivots, perm = jax.lax.linalg.lu(A)
    return lu_, pivots + 1, perm  # torch's pivots count from 1


def _permute_rows(Z, perm):
    """``P Z`` for the ``P`` of ``P^T A = A[perm]`` (row ``perm[i]`` of the result is row
    ``i`` of ``Z``)."""
    inv = _make(jnp.argsort(perm._data, axis=-1)).unsqueeze(-1).expand(tuple(Z.shape))
    return Z.gather(-2, inv)


def _left_LH(L, X):
    """``L^-H X`` for a unit lower-triangular ``L``."""
    return _trsolve(L.mH, X, upper=True, unit=True)


def _right_UH(X, U):
    """``X U^-H`` for an upper-triangular ``U``."""
    return _trsolve(U, X.mH, upper=True, unit=False).mH


def _lu_backward(grads, results):
    # A = P L U, L unit lower (m x k), U upper (k x n), k = min(m, n). With M =
    # L^-1 P^T dA U^-1 (square case), dL = L tril(M, -1) and dU = triu(M) U, whose adjoint
    # is gA = P L^-H (tril(L^H gL, -1) + triu(gU U^H)) U^-H; a wide A adds the columns of
    # U past k (gU2), a tall one the rows of L past k (gL2), each through the same M.
    gLU, LU, perm = grads[0], results[0], results[2]
    m, n = LU.shape[-2], LU.shape[-1]
    k = builtins.min(m, n)
    L = LU.tril(-1).narrow(-1, 0, k) + _make(jnp.eye(m, k, dtype=_np(LU)))
    U = LU.triu().narrow(-2, 0, k)
    gL, gU = gLU.tril(-1).narrow(-1, 0, k), gLU.triu().narrow(-2, 0, k)
    if m == n:
        G = (L.mH @ gL).tril(-1) + (gU @ U.mH).triu()
        return _permute_rows(_right_UH(_left_LH(L, G), U), perm)
    if m < n:
        U1, U2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
        gU1, gU2 = gU.narrow(-1, 0, m), gU.narrow(-1, m, n - m)
        G = (L.mH @ gL - gU2 @ U2.mH).tril(-1) + (gU1 @ U1.mH).triu()
        return _permute_rows(_left_LH(L, cat([_right_UH(G, U1), gU2], -1)), perm)
    L1, L2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
    gL1, gL2 = gL.narrow(-2, 0, n), gL.narrow(-2, n, m - n)
    G = (L1.mH @ gL1).tril(-1) + (gU @ U.mH - L2.mH @ gL2).triu()
    return _permute_rows(_right_UH(cat([_left_LH(L1, G), gL2], -2), U), perm)


# (LU, pivots, the permutation A[perm] = L U): LinalgLuFactorExBackward0
_lu = Primitive("linalg_lu_factor", _lu_fwd, nout=3, nondiff_outputs=(1, 2),
                node_name="LinalgLuFactorExBackward0",
                A=_lu_backward)

LUWithInfoResult = collections.namedtuple("_lu_with_info", ["LU", "pivots", "info"])


def lu(A, pivot=True, get_infos=False):
    """torch.lu: the partially pivoted LU factorization ``A = P L U`` packed in one matrix
    (``L`` below the diagonal, ``U`` on and above it) and its pivots (int32, from 1);
    with ``get_infos`` also ``info`` (``i`` where ``U[i, i]`` is the first zero on the
    diagonal, counted from 1, else 0). Rectangular and batched ``A`` work.

    Examples
    --------
    >>> LU, pivots = wgrad.lu(wgrad.tensor([[1., 2.], [3., 4.]]))
    >>> pivots
    tensor([2, 2], dtype=wgrad.int32)
    """
    _deprecated(
        "torch.lu is deprecated in favor of torch.linalg.lu_factor / "
        "torch.linalg.lu_factor_ex and will be removed in a future PyTorch release.\nLU, "
        "pivots = torch.lu(A, compute_pivots)\nshould be replaced with\nLU, pivots = "
        "torch.linalg.lu_factor(A, compute_pivots)\nand\nLU, pivots, info = torch.lu(A, "
        "compute_pivots, get_infos=True)\nshould be replaced with\nLU, pivots, info = "
        "torch.linalg.lu_factor_ex(A, compute_pivots)")
    LU, pivots, _ = _lu_factor_checked(A, pivot, "torch.lu_factor")
    if not get_infos:
        return LU, pivots
    return LUWithInfoResult(LU, pivots, _make(_lu_info(LU)))


_ERR_PIVOTS_DTYPE = ("torch.lu_unpack: LU_pivots is expected to be a contiguous tensor of "
                     "torch.int32 dtype.\nNote: this function is intended to be used with the "
                     "output produced by torch.linalg.lu_factor")


def _permutation(pivots, m):
    """The row order ``perm`` (``P^T A = A[perm]``) that 1-based ``pivots`` (row swaps in
    order, as LAPACK's) give an ``m``-row matrix."""
    return jax.lax.linalg.lu_pivots_to_permutation(pivots._data - 1, m)


def _pivots_in_range(pivots, m):
    """Whether every pivot is between 1 and m (True where the values are not known)."""
    p = pivots._data
    if not _concrete(p) or p.size == 0:
        return True, True
    return bool((p >= 1).all()), bool((p <= m).all())


LUUnpackResult = collections.namedtuple("lu_unpack", ["P", "L", "U"])


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """``(P, L, U)`` of ``A = P L U`` from :func:`lu`'s packed result; a part not unpacked
    is an empty tensor. ``L`` and ``U`` are differentiable.

    Examples
    --------
    >>> P, L, U = wgrad.lu_unpack(*wgrad.lu(wgrad.tensor([[1., 2.], [3., 4.]])))
    >>> P
    tensor([[0., 1.],
            [1., 0.]])
    """
    if LU_data.ndim < 2:
        raise RuntimeError(f"torch.lu_unpack: Expected tensor with 2 or more dimensions. Got "
                           f"size: {list(LU_data.shape)} instead")
    m, n = LU_data.shape[-2], LU_data.shape[-1]
    k = builtins.min(m, n)
    dt = _np(LU_data)
    empty = _make(jnp.zeros((0,), dt))
    P = empty
    if unpack_pivots:
        if LU_pivots.dtype is not D.int32:
            raise RuntimeError(_ERR_PIVOTS_DTYPE)
        want = tuple(LU_data.shape[:-2]) + (k,)
        if tuple(LU_pivots.shape) != want:  # torch reads past short pivots
            raise RuntimeError(f"lu_unpack: expected LU_pivots of shape {list(want)} (the "
                               f"batch dimensions of LU_data and min(m, n)), but got "
                               f"{list(LU_pivots.shape)}")
        if not all(_pivots_in_range(LU_pivots, m)):
            raise RuntimeError("pivots passed to lu_unpack must be between 1 and LU.size(-2) "
                               "inclusive.Did you properly pass the result of lu_factor?")
        perm = _permutation(LU_pivots, m)
        P = _make((jnp.arange(m)[:, None] == perm[..., None, :]).astype(dt))
    if not unpack_data:
        return LUUnpackResult(P, empty, empty)
    L = LU_data.tril(-1).narrow(-1, 0, k) + _make(jnp.eye(m, k, dtype=dt))
    return LUUnpackResult(P, L, LU_data.triu().narrow(-2, 0, k))


def lu_solve(input, LU_data, LU_pivots):
    """Solve ``A X = input`` from :func:`lu`'s factorization of ``A``; batch dims of
    ``input`` and ``LU_data`` broadcast.

    Examples
    --------
    >>> LU, pivots = wgrad.lu(wgrad.tensor([[1., 2.], [3., 4.]]))
    >>> wgrad.lu_solve(wgrad.tensor([[3.], [7.]]), LU, pivots)
    tensor([[1.],
            [1.]])
    """
    _deprecated(
        "torch.lu_solve is deprecated in favor of torch.linalg.lu_solveand will be removed in "
        "a future PyTorch release.\nNote that torch.linalg.lu_solve has its arguments "
        "reversed.\nX = torch.lu_solve(B, LU, pivots)\nshould be replaced with\nX = "
        "torch.linalg.lu_solve(LU, pivots, B)")
    return linalg_lu_solve(LU_data, LU_pivots, input)


def linalg_lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """Solve ``A X = B`` (``X A = B`` when not ``left``; with ``adjoint``, ``A^H`` for ``A``)
    from :func:`linalg_lu_factor`'s ``LU`` and ``pivots`` of ``A``; batch dims of ``B`` and
    ``LU`` broadcast (torch.linalg.lu_solve).

    Examples
    --------
    >>> LU, pivots = wgrad.linalg.lu_factor(wgrad.tensor([[1., 2.], [3., 4.]]))
    >>> wgrad.linalg.lu_solve(LU, pivots, wgrad.tensor([[3.], [7.]]))
    tensor([[1.],
            [1.]])
    """
    _check_float("torch.linalg.lu_solve", LU)
    _check_square("torch.linalg.lu_solve", LU)
    if B.ndim < 2:
        raise RuntimeError("linalg.lu_solve: The input tensor B must have at least 2 "
                           "dimensions.")
    if B.dtype is not LU.dtype:
        raise RuntimeError(f"linalg.lu_solve: Expected LU and B to have the same dtype, but "
                           f"found LU of type {LU.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    if pivots.dtype is not D.int32:
        raise RuntimeError("linalg.lu_solve: pivots should be a Tensor of scalar type "
                           "torch.int32")
    n = LU.shape[-1]
    if pivots.ndim == 0 or pivots.shape[-1] != n:
        raise RuntimeError("linalg.lu_solve: Number of pivots per batch should be same as the "
                           "dimension of the matrix")
    if tuple(pivots.shape) != tuple(LU.shape[:-1]):
        raise RuntimeError(f"linalg.lu_solve: Expected LU.shape[:-1] and pivots.shape to be "
                           f"the same, but got pivots with shape {list(pivots.shape)} instead")
    if B.shape[-2 if left else -1] != n:
        raise RuntimeError(f"linalg.lu_solve: Incompatible shapes of A and B for the equation "
                           f"{'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    low, high = _pivots_in_range(pivots, n)
    for ok, bound in ((low, "greater or equal to 1"), (high, "smaller or equal to LU.size(-2)")):
        if not ok:
            raise RuntimeError(f"Pivots given to lu_solve must all be {bound}. Did you properly "
                               f"pass the result of lu_factor?")
    _check_lapack("linalg.lu_solve_cpu", LU)
    if not left:  # X A = B: A^H X^H = B^H
        return linalg_lu_solve(LU, pivots, B.mH, adjoint=not adjoint).mH
    batch = _batch_of(B, LU)
    B, LU = B.expand(batch + tuple(B.shape[-2:])), LU.expand(batch + (n, n))
    perm = jnp.broadcast_to(_permutation(pivots, n), batch + (n,))
    if adjoint:  # A^H = U^H L^H P^T: X = P L^-H U^-H B
        Y = _trsolve(LU.mH, B, upper=False, unit=False)
        return _permute_rows(_trsolve(LU.mH, Y, upper=True, unit=True), _make(perm))
    rows = _make(jnp.broadcast_to(perm[..., None], tuple(B.shape)))
    Y = _trsolve(LU, B.gather(-2, rows), upper=False, unit=True)  # L^-1 P^T B
    return _trsolve(LU, Y, upper=True, unit=False)


def qr(input, some=True):
    """torch.qr: ``linalg.qr`` with ``mode="reduced"`` (``some=True``) or ``"complete"``.

    Examples
    --------
    >>> wgrad.qr(wgrad.tensor([[2., 0.], [0., 3.]])).R
    tensor([[2., 0.],
            [0., 3.]])
    """
    _deprecated(
        "torch.qr is deprecated in favor of torch.linalg.qr and will be removed in a future "
        "PyTorch release.\nThe boolean parameter 'some' has been replaced with a string "
        "parameter 'mode'.\nQ, R = torch.qr(A, some)\nshould be replaced with\nQ, R = "
        "torch.linalg.qr(A, 'reduced' if some else 'complete')")
    if input.ndim < 2:
        raise RuntimeError("linalg.qr: The input tensor A must have at least 2 dimensions.")
    _check_float("linalg.qr", input)
    return linalg_qr(input, "reduced" if some else "complete")


SVDLegacyResult = collections.namedtuple("svd", ["U", "S", "V"])


def svd(input, some=True, compute_uv=True):
    """torch.svd: ``input = U diag(S) V^H`` (``V``, not ``Vh``); ``some=False`` gives
    square ``U`` and ``V``; with ``compute_uv=False``, ``U`` and ``V`` are zero-filled
    (square) and only ``S`` is computed.

    Examples
    --------
    >>> wgrad.svd(wgrad.tensor([[3., 0.], [0., -2.]])).S
    tensor([3., 2.])
    """
    if input.ndim < 2:
        raise RuntimeError(f"linalg.svd: input should have at least 2 dimensions, but has "
                           f"{input.ndim} dimensions instead")
    _check_float("linalg.svd", input)
    if compute_uv:
        U, S, Vh = linalg_svd(input, full_matrices=not some)
        return SVDLegacyResult(U, S, Vh.mH)
    batch, (m, n) = tuple(input.shape[:-2]), input.shape[-2:]
    dt = _np(input)
    return SVDLegacyResult(_make(jnp.zeros(batch + (m, m), dt)), _svdvals(input),
                           _make(jnp.zeros(batch + (n, n), dt)))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of a 1-D ``x``: columns ``x**(N-1), ..., x, 1`` (or the
    reverse with ``increasing``); integer and bool ``x`` give int64.

    Examples
    --------
    >>> wgrad.vander(wgrad.tensor([1, 2, 3]), N=3)
    tensor([[1, 1, 1],
            [4, 2, 1],
            [9, 3, 1]])
    """
    if x.ndim != 1:
        raise RuntimeError("x must be a one-dimensional tensor.")
    if N is None:
        N = x.shape[0]
    elif N < 0:
        raise RuntimeError("N must be non-negative.")
    dt = D.promote_types(x.dtype, D.int64)
    if N <= 1:  # no power of x: torch's result has no history either
        return _make(jnp.ones((x.shape[0], N), dt.np))
    ones = _make(jnp.ones((x.shape[0], 1), dt.np))
    # powers by repeated products (torch's cumprod: its values and, at 0, exact gradients)
    out = cat([ones, x.to(dt).unsqueeze(1).expand((x.shape[0], N - 1))], 1).cumprod(1)
    return out if increasing else out.flip(1)


# ======================================================================================
# torch.linalg's forms of the factorizations above (wgrad.linalg binds them)
# ======================================================================================

LUFactorResult = collections.namedtuple("linalg_lu_factor", ["LU", "pivots"])
LUFactorExResult = collections.namedtuple("linalg_lu_factor_ex", ["LU", "pivots", "info"])
LUResult = collections.namedtuple("linalg_lu", ["P", "L", "U"])


def _lu_info(LU):
    """LAPACK's info of a packed LU: ``i`` where ``U[i, i]`` is the first zero on the
    diagonal, counted from 1, else 0 (int32, per matrix)."""
    k = builtins.min(LU.shape[-2], LU.shape[-1])
    zero = jnp.diagonal(LU._data, axis1=-2, axis2=-1)[..., :k] == 0
    return jnp.where(zero.any(-1), jnp.argmax(zero, -1) + 1, 0).astype(jnp.int32)


def _lu_factor_checked(A, pivot, name):
    if A.ndim < 2:
        raise RuntimeError(f"{name}: Expected tensor with 2 or more dimensions. Got size: "
                           f"{list(A.shape)} instead")
    if not pivot:
        raise RuntimeError("linalg.lu_factor: LU without pivoting is not implemented on the "
                           "CPU")
    _check_lapack("lu_cpu", A)
    return _lu(A)


def linalg_lu_factor(A, *, pivot=True):
    """``(LU, pivots)`` of the partially pivoted ``A = P L U`` (torch.linalg.lu_factor:
    torch.lu without its deprecation).

    Examples
    --------
    >>> wgrad.linalg.lu_factor(wgrad.tensor([[1., 2.], [3., 4.]])).pivots
    tensor([2, 2], dtype=wgrad.int32)
    """
    LU, pivots, _ = _lu_factor_checked(A, pivot, "torch.lu_factor")
    return LUFactorResult(LU, pivots)


def linalg_lu_factor_ex(A, *, pivot=True, check_errors=False):
    """:func:`linalg_lu_factor` and ``info`` (the first zero pivot, counted from 1, else
    0); ``check_errors`` raises for a singular matrix, as torch.

    Examples
    --------
    >>> wgrad.linalg.lu_factor_ex(wgrad.tensor([[1., 2.], [2., 4.]])).info
    tensor(2, dtype=wgrad.int32)
    """
    LU, pivots, _ = _lu_factor_checked(A, pivot, "torch.lu_factor")
    info = _lu_info(LU)
    if check_errors and bool(jnp.any(info > 0)):
        i = int(jnp.argmax(info.reshape(-1) > 0))
        where = f"(Batch element {i}): " if A.ndim > 2 else ""
        k = int(info.reshape(-1)[i])
        raise RuntimeError(f"torch.linalg.lu_factor_ex: {where}U[{k},{k}] is zero and using "
                           f"it on lu_solve would result in a division by zero. If you still "
                           f"want to perform the factorization, consider calling "
                           f"linalg.lu(A, pivot) or linalg.lu_factor_ex(A, pivot)")
    return LUFactorExResult(LU, pivots, _make(info))


def linalg_lu(A, *, pivot=True):
    """``(P, L, U)`` with ``A = P L U`` (torch.linalg.lu).

    Examples
    --------
    >>> P, L, U = wgrad.linalg.lu(wgrad.tensor([[1., 2.], [3., 4.]]))
    >>> L
    tensor([[1.0000, 0.0000],
            [0.3333, 1.0000]])
    """
    LU, pivots, _ = _lu_factor_checked(A, pivot, "linalg.lu")
    return LUResult(*lu_unpack(LU, pivots))


def linalg_solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """``X`` with ``A X = B`` (``X A = B`` when not ``left``) for a triangular ``A``: only
    its ``upper`` (or lower) triangle is read, its diagonal taken as ones with
    ``unitriangular``; batch dimensions broadcast.

    Examples
    --------
    >>> A = wgrad.tensor([[2., 1.], [0., 4.]])
    >>> wgrad.linalg.solve_triangular(A, wgrad.tensor([[3.], [4.]]), upper=True)
    tensor([[1.],
            [1.]])
    """
    for t, name in ((A, "A"), (B, "B")):
        if t.ndim < 2:
            raise RuntimeError(f"linalg.solve_triangular: The input tensor {name} must have "
                               f"at least 2 dimensions.")
    if A.dtype is not B.dtype:  # torch solves in A's dtype (a complex B loses its imaginary)
        B = B.to(A.dtype)
    _check_square_plain(A)
    n = A.shape[-1]
    if (B.shape[-2] if left else B.shape[-1]) != n:
        raise RuntimeError(f"linalg.solve_triangular: Incompatible shapes of A and B for the "
                           f"equation {'AX = B' if left else 'XA = B'} ({n}x{n} and "
                           f"{B.shape[-2]}x{B.shape[-1]})")
    _check_lapack("triangular_solve_cpu", A)
    batch = _batch_of(B, A)
    B, A = B.expand(batch + tuple(B.shape[-2:])), A.expand(batch + tuple(A.shape[-2:]))
    upper, unit = bool(upper), bool(unitriangular)
    if left:
        return _trsolve(A, B, upper=upper, unit=unit)
    return _trsolve(A.mT, B.mT, upper=not upper, unit=unit).mT  # X A = B: A^T X^T = B^T


def linalg_vander(x, *, N=None):
    """The Vandermonde matrices of ``x`` along its last dimension, increasing powers
    ``1, x, ..., x**(N-1)`` (torch.linalg.vander).

    Examples
    --------
    >>> wgrad.linalg.vander(wgrad.tensor([1., 2., 3.]), N=3)
    tensor([[1., 1., 1.],
            [1., 2., 4.],
            [1., 3., 9.]])
    """
    n = (x.shape[-1] if x.ndim else 0) if N is None else N
    if n <= 1:
        raise RuntimeError("N must be greater than 1.")
    dt = D.promote_types(x.dtype, D.int64)
    shape = tuple(x.shape)
    ones = _make(jnp.ones(shape + (1,), dt.np))
    return cat([ones, x.to(dt).unsqueeze(-1).expand(shape + (n - 1,))], -1).cumprod(-1)


def linalg_diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """``A.diagonal(offset, dim1, dim2)`` over the last two dimensions by default
    (torch.linalg.diagonal).

    Examples
    --------
    >>> wgrad.linalg.diagonal(wgrad.tensor([[1., 2.], [3., 4.]]))
    tensor([1., 4.])
    """
    return A.diagonal(offset, dim1, dim2)


# ======================================================================================
# torch.linalg's condition number, rank, _ex variants, LDL and Householder products,
# tensorinv and tensorsolve
# ======================================================================================

_INF = float("inf")
_COND_ORDS = (None, 2, -2, "fro", "nuc", _INF, -_INF, 1, -1)


def _ord_str(p):
    """An order as torch prints it (``3.0`` as 3)."""
    return str(int(p)) if isinstance(p, float) and p.is_integer() else str(p)


def cond(A, p=None):
    """The condition number of ``A`` in the matrix norm ``p``: from the singular values
    for ``p`` in (None, 2, -2, 'nuc'), else ``norm(A, p) * norm(A^-1, p)`` (inf where ``A``
    is singular); ``p`` None is the 2-norm (torch.linalg.cond).

    Examples
    --------
    >>> wgrad.linalg.cond(wgrad.tensor([[2., 0.], [0., 4.]]))
    tensor(2.)
    """
    if isinstance(p, Tensor):
        p = p.item()
    if A.ndim < 2:
        raise RuntimeError("linalg.cond: The input tensor must have at least 2 dimensions.")
    if isinstance(p, bool) or p not in _COND_ORDS:
        raise RuntimeError(f"linalg.cond got an invalid norm type: {_ord_str(p)}")
    if A.numel() == 0:  # NumPy has no condition number for them; torch gives 0
        return _make(jnp.zeros(tuple(A.shape[:-2]), _real_np(A)))
    if p in (None, 2, -2):
        s = _checked_svdvals(A)
        big, small = s.narrow(-1, 0, 1), s.narrow(-1, s.shape[-1] - 1, 1)
        return (small / big if p == -2 else big / small).squeeze(-1)
    _check_square(f"linalg.cond(ord={_ord_str(p)})", A)
    if p == "nuc":  # from its definition (matrix_norm of an inverse with inf would raise)
        s = _checked_svdvals(A)
        return s.sum(-1) * s.reciprocal().sum(-1)
    X, info = _inv_checked(A, "linalg.inv")
    X = where((info > 0).unsqueeze(-1).unsqueeze(-1), _INF, X)
    return nan_to_num(matrix_norm(A, p) * matrix_norm(X, p), _INF, _INF, -_INF)


def _checked_svdvals(A):
    _check_float("linalg.svd", A)
    _check_lapack("linalg_svd_cpu", A)
    return svdvals(A)


def linalg_matrix_rank(A, tol=None, hermitian=False, *, atol=None, rtol=None):
    """The number of singular values of ``A`` (absolute eigenvalues with ``hermitian``,
    from its lower triangle) above ``max(atol, rtol * the largest)``; ``rtol`` defaults to
    ``eps * max(m, n)`` (0 where ``atol > 0``); ``tol`` is ``atol`` with ``rtol = 0``
    (torch.linalg.matrix_rank).

    Examples
    --------
    >>> wgrad.linalg.matrix_rank(wgrad.tensor([[1., 2.], [2., 4.]]))
    tensor(1)
    """
    if tol is not None:
        if atol is not None or rtol is not None:
            raise TypeError("linalg_matrix_rank(): tol (an alias of atol, with rtol = 0) "
                            "cannot be given with atol or rtol")
        atol, rtol = tol, 0.
    if A.ndim < 2:
        raise RuntimeError("torch.linalg.matrix_rank: The input tensor input must have at "
                           "least 2 dimensions.")
    if rtol is None and A.dtype not in _LAPACK_DTYPES:  # its default needs the dtype's eps
        raise RuntimeError("This function doesn't handle types other than float and double")
    if A.numel() == 0:
        return _make(jnp.zeros(tuple(A.shape[:-2]), jnp.int64))
    if hermitian:
        _check_square("linalg.eigh", A)
        _check_lapack("linalg_eigh_cpu", A)
    else:
        _check_float("linalg.svd", A)
        _check_lapack("linalg_svd_cpu", A)
    return _matrix_rank(A, 0. if atol is None else atol, 0. if rtol is None else rtol,
                        hermitian=bool(hermitian), default_rtol=rtol is None)


def _matrix_rank_fwd(A, atol, rtol, *, hermitian, default_rtol):
    if hermitian:  # |eigenvalues| of the lower triangle
        S = jnp.abs(_eigh_fwd(A, upper=False)[0])
        top = jnp.max(S, -1, keepdims=True)
    else:
        S = jnp.linalg.svd(A, compute_uv=False)
        top = S[..., :1]
    if default_rtol:
        rtol = jnp.where(atol > 0, 0., jnp.finfo(S.dtype).eps * builtins.max(A.shape[-2:]))
    tol = jnp.maximum(atol[..., None], rtol[..., None] * top)
    return jnp.sum(S > tol, -1).astype(jnp.int64)


_matrix_rank = Primitive("linalg_matrix_rank", _matrix_rank_fwd)  # no derivative: an integer


LinalgInvExResult = collections.namedtuple("linalg_inv_ex", ["inverse", "info"])
LinalgSolveExResult = collections.namedtuple("linalg_solve_ex", ["result", "info"])


def inv_ex(A, *, check_errors=False):
    """:func:`inv` without its check: ``(inverse, info)``, ``info`` LAPACK's (the first zero
    pivot of ``A``'s LU, counted from 1, else 0); ``check_errors`` raises as linalg.inv.

    Examples
    --------
    >>> wgrad.linalg.inv_ex(wgrad.tensor([[1., 2.], [2., 4.]])).info
    tensor(2, dtype=wgrad.int32)
    """
    X, info = _inv_checked(A, "linalg.inv")
    if check_errors:
        _raise_failed(info, A.ndim > 2, _ERR_INV.format(name="linalg.inv_ex"))
    return LinalgInvExResult(X, info)


def _solve_ex(A, B, left):
    """``(X, info)`` of linalg.solve_ex after torch's checks (A and B of one dtype)."""
    _check_float("linalg.solve", A)
    if A.dtype is not B.dtype:
        raise RuntimeError(f"linalg.solve: Expected A and B to have the same dtype, but found "
                           f"A of type {A.dtype.scalar_name} and B of type "
                           f"{B.dtype.scalar_name} instead")
    _check_square("linalg.solve", A)
    X = _solve_system(A, B, left, "lu_cpu")
    return X, _getrf_info(A, X)


_ERR_SOLVE = "{name}: {{where}}The solver failed because the input matrix is singular."


def solve_ex(A, B, *, left=True, check_errors=False):
    """:func:`linalg_solve` without its check, A and B of one dtype: ``(result, info)``,
    ``info`` LAPACK's for ``A`` (the first zero pivot of its LU, counted from 1, else 0);
    ``check_errors`` raises where ``A`` is singular.

    Examples
    --------
    >>> A = wgrad.tensor([[2., 0.], [0., 4.]])
    >>> wgrad.linalg.solve_ex(A, wgrad.tensor([2., 4.])).result
    tensor([1., 1.])
    """
    _solve_dtypes(A, B)
    X, info = _solve_ex(A, B, left)
    if check_errors:
        _raise_failed(info, A.ndim > 2, _ERR_SOLVE.format(name="torch.linalg.solve_ex"))
    return LinalgSolveExResult(X, info)


def tensorinv(A, ind=2):
    """The tensor ``X`` with ``tensordot(X, A, ind) = I`` (``A``'s first ``ind`` dims hold
    as many elements as its others): ``A`` as a matrix, inverted, reshaped
    (torch.linalg.tensorinv).

    Examples
    --------
    >>> wgrad.linalg.tensorinv(2 * wgrad.eye(4).reshape(4, 2, 2), ind=1).shape
    wgrad.Size([2, 2, 4])
    """
    if isinstance(ind, bool) or not isinstance(ind, int):
        raise TypeError(f"linalg_tensorinv(): argument 'ind' (position 2) must be int, not "
                        f"{type(ind).__name__}")
    if ind <= 0:
        raise RuntimeError(f"Expected a strictly positive integer for 'ind', but got {ind}")
    if ind > A.ndim:
        raise RuntimeError(f"ArrayRef: invalid slice, N = {ind}; size = {A.ndim}")
    rows, cols = tuple(A.shape[:ind]), tuple(A.shape[ind:])
    if math.prod(rows) != math.prod(cols):
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[ind:]) "
                           f"== prod(self.shape[:ind]), but got {math.prod(cols)} != "
                           f"{math.prod(rows)}")
    X, info = _inv_checked(A.reshape(math.prod(rows), math.prod(cols)), "linalg.inv")
    _raise_failed(info, False, _ERR_INV.format(name="inv"))
    return X.reshape(cols + rows)


def tensorsolve(A, B, dims=None):
    """The tensor ``X`` with ``tensordot(A, X, X.ndim) = B``; ``dims`` of ``A`` are moved to
    its end first (torch.linalg.tensorsolve).

    Examples
    --------
    >>> A = 2 * wgrad.eye(4).reshape(4, 2, 2)
    >>> wgrad.linalg.tensorsolve(A, wgrad.ones(4))
    tensor([[0.5000, 0.5000],
            [0.5000, 0.5000]])
    """
    if dims is not None:
        if not isinstance(dims, (tuple, list)):
            raise TypeError(f"linalg_tensorsolve(): argument 'dims' must be tuple of ints, not "
                            f"{type(dims).__name__}")
        dims = [_wrap_dim(d, A.ndim) for d in dims]
        A = A.movedim(dims, list(range(A.ndim - len(dims), A.ndim)))
    cols = tuple(A.shape[B.ndim:])
    n = math.prod(cols)
    if n != B.numel():
        raise RuntimeError(f"Expected self to satisfy the requirement prod(self.shape[other."
                           f"ndim:]) == prod(self.shape[:other.ndim]), but got {n} != "
                           f"{B.numel()}")
    X, info = _solve_ex(A.reshape(n, n), B.reshape(-1), True)
    _raise_failed(info, False, _ERR_SOLVE.format(name="torch.linalg.solve"))
    return X.reshape(cols)


# -- LDL^T (LDL^H): LAPACK's sytrf / hetrf and sytrs / hetrs ---------------------------
# torch's LD and pivots are LAPACK's: D's 1x1 and 2x2 blocks on the diagonal, L's
# multipliers below them, and the Bunch-Kaufman row swaps in pivots (k: rows k and
# pivots[k] swapped; -p twice: a 2x2 block, its second row swapped with p). _sytf2 is
# LAPACK's unblocked factorization (torch's blocked one makes the same choices), run on
# the host: its pivoting depends on the values. Neither op has a derivative in torch.

_BK_ALPHA = (1 + math.sqrt(17.)) / 8  # Bunch-Kaufman's pivot threshold


def _swap(a, i, j):
    a[[i, j]] = a[[j, i]]


def _sytf2(a, hermitian):
    """LAPACK's ?sytf2 / ?hetf2 (lower) of one matrix: ``(LD, pivots from 1, info)``."""
    a = np.tril(np.array(a))
    n = a.shape[0]
    cplx = np.iscomplexobj(a)
    herm = hermitian and cplx
    cj = np.conj if herm else (lambda x: x)
    cabs = (lambda x: np.abs(x.real) + np.abs(x.imag)) if cplx else np.abs
    dabs = (lambda x: np.abs(x.real)) if herm else cabs  # a Hermitian pivot is real
    piv = np.zeros(n, np.int32)
    info, k = 0, 0
    while k < n:
        kstep, kp = 1, k
        absakk = dabs(a[k, k])
        imax = k + 1 + int(np.argmax(cabs(a[k + 1:, k]))) if k < n - 1 else k
        colmax = cabs(a[imax, k]) if k < n - 1 else 0.
        if builtins.max(absakk, colmax) == 0 or np.isnan(absakk):
            info = info or k + 1
            if herm:
                a[k, k] = a[k, k].real
        else:
            if absakk < _BK_ALPHA * colmax:
                rowmax = cabs(a[imax, k:imax]).max()
                if imax < n - 1:
                    rowmax = builtins.max(rowmax, cabs(a[imax + 1:, imax]).max())
                if absakk >= _BK_ALPHA * colmax * (colmax / rowmax):
                    kp = k
                elif dabs(a[imax, imax]) >= _BK_ALPHA * rowmax:
                    kp = imax
                else:
                    kp, kstep = imax, 2
            _bk_swap(a, k, kstep, kp, herm)
            if kstep == 1:
                _bk_update1(a, k, herm, cj)
            elif k < n - 2:
                _bk_update2(a, k, herm, cj)
        if kstep == 1:
            piv[k] = kp + 1
        else:
            piv[k] = piv[k + 1] = -(kp + 1)
        k += kstep
    return a, piv, info


def _bk_swap(a, k, kstep, kp, herm):
    """The symmetric interchange of rows and columns ``kk`` and ``kp`` in the trailing
    lower triangle (``kk`` the last row of the pivot block)."""
    kk = k + kstep - 1
    if kp != kk:
        a[kp + 1:, [kk, kp]] = a[kp + 1:, [kp, kk]]
        t = a[kk + 1:kp, kk].copy()
        a[kk + 1:kp, kk] = a[kp, kk + 1:kp]
        a[kp, kk + 1:kp] = t
        if herm:
            a[kk + 1:kp, kk] = np.conj(a[kk + 1:kp, kk])
            a[kp, kk + 1:kp] = np.conj(a[kp, kk + 1:kp])
            a[kp, kk] = np.conj(a[kp, kk])
        a[kk, kk], a[kp, kp] = a[kp, kp], a[kk, kk]
        if kstep == 2:
            a[k + 1, k], a[kp, k] = a[kp, k], a[k + 1, k]
    if herm:
        for i in (k, kk, kp):
            a[i, i] = a[i, i].real


def _real_diag(a, start, herm):
    if herm:
        i = np.arange(start, a.shape[0])
        a[i, i] = a[i, i].real


def _bk_update1(a, k, herm, cj):
    """A 1x1 pivot: the rank-1 update of the trailing matrix, then the multipliers."""
    if k < a.shape[0] - 1:
        r1 = 1 / (a[k, k].real if herm else a[k, k])
        x = a[k + 1:, k].copy()
        a[k + 1:, k + 1:] -= np.tril(r1 * np.outer(x, cj(x)))
        _real_diag(a, k + 1, herm)
        a[k + 1:, k] = r1 * x


def _bk_update2(a, k, herm, cj):
    """A 2x2 pivot: the rank-2 update of the trailing matrix, then the multipliers."""
    if herm:
        d = np.abs(a[k + 1, k])
        d11, d22 = a[k + 1, k + 1].real / d, a[k, k].real / d
        d21 = a[k + 1, k] / d
        d = 1 / (d11 * d22 - 1) / d
        wk = d * (d11 * a[k + 2:, k] - d21 * a[k + 2:, k + 1])
        wkp1 = d * (d22 * a[k + 2:, k + 1] - np.conj(d21) * a[k + 2:, k])
    else:
        d21 = a[k + 1, k]
        d11, d22 = a[k + 1, k + 1] / d21, a[k, k] / d21
        d21 = 1 / (d11 * d22 - 1) / d21
        wk = d21 * (d11 * a[k + 2:, k] - a[k + 2:, k + 1])
        wkp1 = d21 * (d22 * a[k + 2:, k + 1] - a[k + 2:, k])
    a[k + 2:, k + 2:] -= np.tril(np.outer(a[k + 2:, k], cj(wk)) +
                                 np.outer(a[k + 2:, k + 1], cj(wkp1)))
    a[k + 2:, k], a[k + 2:, k + 1] = wk, wkp1
    _real_diag(a, k + 2, herm)


def _sytrs(a, piv, b, hermitian):
    """LAPACK's ?sytrs / ?hetrs (lower): ``X`` with ``A X = B`` from :func:`_sytf2`'s
    ``LD`` (``a``) and pivots."""
    b = np.array(b)
    n = a.shape[0]
    herm = hermitian and np.iscomplexobj(a)
    cj = np.conj if herm else (lambda x: x)
    k = 0
    while k < n:  # L D Y = P^T B
        if piv[k] > 0:
            _swap(b, k, piv[k] - 1)
            b[k + 1:] -= np.outer(a[k + 1:, k], b[k])
            b[k] = b[k] * (1 / (a[k, k].real if herm else a[k, k]))
            k += 1
            continue
        _swap(b, k + 1, -piv[k] - 1)
        b[k + 2:] -= np.outer(a[k + 2:, k], b[k]) + np.outer(a[k + 2:, k + 1], b[k + 1])
        akm1k = a[k + 1, k]
        akm1, ak = a[k, k] / cj(akm1k), a[k + 1, k + 1] / akm1k
        denom = akm1 * ak - 1
        bkm1, bk = b[k] / cj(akm1k), b[k + 1] / akm1k
        b[k], b[k + 1] = (ak * bkm1 - bk) / denom, (akm1 * bk - bkm1) / denom
        k += 2
    k = n - 1
    while k >= 0:  # L^T X = Y (L^H), then the row swaps back
        b[k] -= cj(a[k + 1:, k]) @ b[k + 1:]
        if piv[k] > 0:
            _swap(b, k, piv[k] - 1)
            k -= 1
            continue
        b[k - 1] -= cj(a[k + 1:, k - 1]) @ b[k + 1:]
        _swap(b, k, -piv[k] - 1)
        k -= 2
    return b


def _no_tangent(aten):
    def jvp(p, t, **attrs):
        raise NotImplementedError(f"Trying to use forward AD with aten::{aten} that does not "
                                  f"support it.")
    return jvp


# the host's result (``value``) joined to the graph of the inputs: grad_fn NotImplemented,
# whose backward raises torch's error
_ldl_factor_p = Primitive("linalg_ldl_factor_ex", lambda value, A: value,
                          node_name="NotImplemented", jvp=_no_tangent("linalg_ldl_factor_ex"),
                          A=no_derivative_formula("linalg_ldl_factor_ex"))
_ldl_solve_p = Primitive("linalg_ldl_solve", lambda value, LD, B: value,
                         node_name="NotImplemented", jvp=_no_tangent("linalg_ldl_solve"),
                         LD=no_derivative_formula("linalg_ldl_solve"),
                         B=no_derivative_formula("linalg_ldl_solve"))

LinalgLdlFactorResult = collections.namedtuple("linalg_ldl_factor", ["LD", "pivots"])
LinalgLdlFactorExResult = collections.namedtuple("linalg_ldl_factor_ex",
                                                 ["LD", "pivots", "info"])


def _host(name, *ts):
    """The arrays of ``ts`` on the host, for a computation JAX cannot trace."""
    if not _concrete(*[t._data for t in ts]):
        raise NotImplementedError(f"{name}: the pivoting of LAPACK's sytrf depends on the "
                                  f"values, so it runs on the host and cannot be traced (jit, "
                                  f"vmap, compile)")
    return [np.asarray(t._data) for t in ts]


def _ldl(A, hermitian):
    name = "torch.linalg.ldl_factor_ex"
    _check_square(name, A)
    _check_float(name, A)
    _check_lapack("ldl_factor_kernel_cpu", A)
    a, = _host(name, A)
    LD, piv = a, np.zeros(a.shape[:-1], np.int32)
    info = np.zeros(a.shape[:-2], np.int32)
    if a.size:
        n = a.shape[-1]
        out = [_sytf2(m, bool(hermitian)) for m in a.reshape((-1, n, n))]
        LD = np.stack([o[0] for o in out]).reshape(a.shape)
        piv = np.stack([o[1] for o in out]).reshape(a.shape[:-1])
        info = np.array([o[2] for o in out], np.int32).reshape(a.shape[:-2])
    return (_ldl_factor_p(_make(jnp.asarray(LD)), A), _make(jnp.asarray(piv)),
            _make(jnp.asarray(info)))


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """``(LD, pivots, info)`` of the Bunch-Kaufman factorization ``A = P L D L^T P^T``
    (``L^H`` with ``hermitian``) from ``A``'s lower triangle, in LAPACK's sytrf layout;
    ``info`` is the first zero diagonal block of ``D`` counted from 1, else 0. Not
    differentiable, as torch's.

    Examples
    --------
    >>> wgrad.linalg.ldl_factor_ex(wgrad.tensor([[0., 1.], [1., 0.]])).pivots
    tensor([-2, -2], dtype=wgrad.int32)
    """
    LD, piv, info = _ldl(A, hermitian)
    if check_errors:
        _check_ldl_info(info, "torch.linalg.ldl_factor_ex")
    return LinalgLdlFactorExResult(LD, piv, info)


def _check_ldl_info(info, name):
    flat = np.asarray(info._data).reshape(-1)
    if flat.any():
        # torch 2.13 fails an internal assert here ("Unknown error code")
        k = int(flat[np.nonzero(flat)[0][0]])
        raise RuntimeError(f"{name}: Unknown error code: {k}. The factorization could not be "
                           f"completed: the diagonal block {k} of D is exactly zero (singular)")


def ldl_factor(A, *, hermitian=False):
    """:func:`ldl_factor_ex` that raises where ``D`` is singular: ``(LD, pivots)``.

    Examples
    --------
    >>> wgrad.linalg.ldl_factor(wgrad.tensor([[4., 2.], [2., 3.]])).LD
    tensor([[4.0000, 0.0000],
            [0.5000, 2.0000]])
    """
    LD, piv, info = _ldl(A, hermitian)
    _check_ldl_info(info, "torch.linalg.ldl_factor")
    return LinalgLdlFactorResult(LD, piv)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """Solve ``A X = B`` from :func:`ldl_factor`'s ``LD`` and ``pivots`` of ``A`` (LAPACK's
    sytrs; ``hermitian`` as the factorization was); batch dims of ``B`` and ``LD``
    broadcast. Not differentiable, as torch's.

    Examples
    --------
    >>> LD, pivots = wgrad.linalg.ldl_factor(wgrad.tensor([[4., 2.], [2., 3.]]))
    >>> wgrad.linalg.ldl_solve(LD, pivots, wgrad.tensor([[6.], [5.]]))
    tensor([[1.],
            [1.]])
    """
    name = "torch.linalg.ldl_solve"
    _check_square(name, LD)
    _check_float(name, LD)
    if pivots.dtype.is_floating_point or pivots.dtype.is_complex or pivots.dtype is D.bool:
        raise RuntimeError(f"{name}: Expected pivots to be integers. Got "
                           f"{pivots.dtype.scalar_name}")
    if tuple(pivots.shape) != tuple(LD.shape[:-1]):
        raise RuntimeError(f"{name}: Expected LD.shape[:-1] and pivots.shape to be the same, "
                           f"but got pivots with shape {list(pivots.shape)} instead")
    if B.ndim < 2:
        _wrap_dim(-2, B.ndim)  # torch's IndexError
    if B.dtype is not LD.dtype:
        raise RuntimeError(f"Expected b and A to have the same dtype, but found b of type "
                           f"{B.dtype.scalar_name} and A of type {LD.dtype.scalar_name} "
                           f"instead.")
    n = LD.shape[-1]
    if B.shape[-2] != n:
        raise RuntimeError(f"Incompatible matrix sizes for {name}: each A matrix is {n} by "
                           f"{n} but each b matrix is {B.shape[-2]} by {B.shape[-1]}")
    ld, piv, b = _host(name, LD, pivots, B)
    for bad, bound in ((piv == 0, ">= 1"), (np.abs(piv) > n, "<= LD.size(-2)")):
        if bad.any():
            raise RuntimeError(f"Pivots given to ldl_solve must all satisfy |pivot| {bound}. "
                               f"Did you properly pass the result of ldl_factor?")
    _check_lapack("ldl_solve_kernel_cpu", LD)
    batch = _batch_of(B, LD)
    b = np.broadcast_to(b, batch + tuple(B.shape[-2:]))
    X = b
    if b.size:
        ld = np.broadcast_to(ld, batch + (n, n)).reshape(-1, n, n)
        piv = np.broadcast_to(piv, batch + (n,)).reshape(-1, n)
        X = np.stack([_sytrs(*m, bool(hermitian)) for m in zip(
            ld, piv, b.reshape((-1,) + b.shape[-2:]))]).reshape(b.shape)
    return _ldl_solve_p(_make(jnp.asarray(X, b.dtype)), LD, B)


# -- Householder products: torch.geqrf's reflectors (LAPACK's orgqr and ormqr) --------

def _geqrf_fwd(self):
    h, tau = jnp.linalg.qr(self, mode="raw")  # LAPACK's geqrf; h is its a, transposed
    return jnp.swapaxes(h, -1, -2), tau


def _geqrf_backward(grads):
    raise NotImplementedError("the derivative for 'geqrf' is not implemented.")


_geqrf = Primitive("geqrf", _geqrf_fwd, nout=2, jvp=_no_forward_ad("geqrf"),
                   self=_geqrf_backward)

GeqrfResult = collections.namedtuple("geqrf", ["a", "tau"])


def geqrf(input):
    """LAPACK's geqrf: the QR factorization of ``input`` as ``R`` on and above the diagonal
    of ``a`` and Householder reflectors ``H_i = I - tau_i v_i v_i^H`` (``v_i`` below it,
    with a leading 1) whose product is ``Q``. Not differentiable, as torch's.

    Examples
    --------
    >>> a, tau = wgrad.geqrf(wgrad.tensor([[3., 1.], [4., 2.]]))
    >>> a.diagonal().abs()
    tensor([5.0000, 0.4000])
    """
    if input.ndim < 2:
        raise RuntimeError("torch.geqrf: input must have at least 2 dimensions.")
    _check_lapack("geqrf_cpu", input)
    return GeqrfResult(*_geqrf(input))


def _reflectors(A, tau):
    """``(V, tau)``: the Householder vectors of ``A``'s first ``k`` columns (below the
    diagonal, a 1 on it) as columns of ``V``, ``k`` the length of ``tau``."""
    m, k = A.shape[-2], tau.shape[-1]
    return A.narrow(-1, 0, k).tril(-1) + _make(jnp.eye(m, k, dtype=_np(A)))


def _apply_reflectors(V, tau, C, left, adjoint):
    """``Q C`` (``C Q`` when not ``left``; ``Q^H`` with ``adjoint``), ``Q = H_1 ... H_k``,
    one reflector at a time as LAPACK's orm2r (no ``Q`` is formed)."""
    k = tau.shape[-1]
    t = tau.conj() if adjoint else tau
    order = range(k) if left == adjoint else reversed(range(k))
    for i in order:
        v, ti = V.narrow(-1, i, 1), t.narrow(-1, i, 1).unsqueeze(-1)
        if left:  # H C = C - v (tau v^H C)
            C = C - v @ (ti * (v.mH @ C))
        else:  # C H = C - (C v tau) v^H
            C = C - ((C @ v) * ti) @ v.mH
    return C


def householder_product(A, tau):
    """The first ``n`` columns of the product ``H_1 ... H_k`` of the Householder reflectors
    ``H_i = I - tau_i v_i v_i^H`` stored below the diagonal of ``A`` (m x n, m >= n), as
    :func:`geqrf` gives them (torch.linalg.householder_product, LAPACK's orgqr).

    Examples
    --------
    >>> A = wgrad.tensor([[3., 1.], [4., 2.]])
    >>> a, tau = wgrad.geqrf(A)
    >>> wgrad.allclose(wgrad.linalg.householder_product(a, tau) @ a.triu(), A)  # Q R
    True
    """
    name = "torch.linalg.householder_product"
    if A.ndim < 2:
        raise RuntimeError(f"{name}: input must have at least 2 dimensions.")
    if A.shape[-2] < A.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-2] must be greater than or equal to "
                           f"input.shape[-1]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if A.shape[-1] < tau.shape[-1]:
        raise RuntimeError(f"{name}: input.shape[-1] must be greater than or equal to "
                           f"tau.shape[-1]")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"{name}: Expected tau to have one dimension less than input, but "
                           f"got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{A.ndim}")
    if tuple(tau.shape[:-1]) != tuple(A.shape[:-2]):
        raise RuntimeError(f"{name}: Expected batch dimensions of tau to be equal to "
                           f"input.shape[:-2], but got {list(tau.shape[:-1])}")
    if tau.dtype is not A.dtype:
        raise RuntimeError(f"{name}: tau dtype {tau.dtype.scalar_name} does not match input "
                           f"dtype {A.dtype.scalar_name}")
    _check_lapack("orgqr_cpu", A)
    m, n = A.shape[-2], A.shape[-1]
    eye = _make(jnp.broadcast_to(jnp.eye(m, n, dtype=_np(A)), tuple(A.shape)))
    return _apply_reflectors(_reflectors(A, tau), tau, eye, True, False)


def orgqr(input, input2):
    """``linalg.householder_product(input, input2)`` (torch.orgqr).

    Examples
    --------
    >>> wgrad.orgqr(wgrad.tensor([[1.], [0.]]), wgrad.tensor([2.]))
    tensor([[-1.],
            [ 0.]])
    """
    return householder_product(input, input2)


# ormqr's result is composed of the ops above; this node names it (torch's
# OrmqrBackward0) and, as torch, it has no tangent
_ormqr_node = Primitive("ormqr", lambda self: self, jvp=_no_forward_ad("ormqr"),
                        self=lambda grad: grad)


def ormqr(input, input2, input3, left=True, transpose=False):
    """``Q @ input3`` (``input3 @ Q`` when not ``left``; ``Q^H`` with ``transpose``) for the
    m x m product ``Q`` of the Householder reflectors in ``input`` (m x n) and ``input2``
    (tau), as :func:`geqrf` gives them (torch.ormqr, LAPACK's ormqr).

    Examples
    --------
    >>> A = wgrad.tensor([[3., 1.], [4., 2.]])
    >>> a, tau = wgrad.geqrf(A)
    >>> wgrad.ormqr(a, tau, a.triu()).round(decimals=6)  # Q R
    tensor([[3., 1.],
            [4., 2.]])
    """
    A, tau, C = input, input2, input3
    for t, what in ((A, "input"), (C, "other")):
        if t.ndim < 2:
            raise RuntimeError(f"torch.ormqr: {what} must have at least 2 dimensions.")
    side = -2 if left else -1
    if C.shape[side] != A.shape[-2]:
        raise RuntimeError(f"torch.ormqr: other.shape[{side}] must be equal to "
                           f"input.shape[-2]")
    if tau.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    if tau.shape[-1] != builtins.min(C.shape[side], A.shape[-1]):
        raise RuntimeError(f"torch.ormqr: tau.shape[-1] must be equal to min(other.shape"
                           f"[{side}], input.shape[-1])")
    if A.ndim - tau.ndim != 1:
        raise RuntimeError(f"torch.ormqr: Expected tau to have one dimension less than input, "
                           f"but got tau.ndim equal to {tau.ndim} and input.ndim is equal to "
                           f"{A.ndim}")
    if A.ndim != C.ndim:
        raise RuntimeError(f"torch.ormqr: Expected other to have the same number of dimensions "
                           f"as input, but got other.ndim equal to {C.ndim} and input.ndim is "
                           f"equal to {A.ndim}")
    for t, what in ((tau, "tau"), (C, "other")):
        if tuple(t.shape[:A.ndim - 2]) != tuple(A.shape[:-2]):
            raise RuntimeError(f"torch.ormqr: Expected batch dimensions of {what} to be equal "
                               f"to input.shape[:-2], but got {list(t.shape[:A.ndim - 2])}")
    for t, what in ((tau, "tau"), (C, "other")):
        if t.dtype is not A.dtype:
            raise RuntimeError(f"torch.ormqr: Expected input and {what} to have the same dtype, "
                               f"but input has dtype{A.dtype.scalar_name} and {what} has "
                               f"dtype {t.dtype.scalar_name}")
    _check_lapack("ormqr_cpu", A)
    return _ormqr_node(_apply_reflectors(_reflectors(A, tau), tau, C, bool(left),
                                         bool(transpose)))


# ======================================================================================
# Norms and cross
# ======================================================================================

def _vector_norm_fallback(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    if dtype is not None:
        x = x.to(dtype)
    a = x.abs()
    if ord == 2:
        return ((a * a).sum(dim, keepdim)).sqrt()
    if ord == 1:
        return a.sum(dim, keepdim)
    if ord == float("inf"):
        return a.amax(dim, keepdim)
    if ord == -float("inf"):
        return a.amin(dim, keepdim)
    if ord == 0:
        return (a != 0).to(a.dtype).sum(dim, keepdim)
    return (a ** ord).sum(dim, keepdim) ** (1.0 / ord)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None, out=None):
    """The reduction family's vector_norm when present (it owns the subgradient rules)."""
    f = getattr(reduction, "vector_norm", None) or _vector_norm_fallback
    return f(x, ord, dim, keepdim, dtype=dtype)


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None, out=None):
    """Frobenius, nuclear, 1, -1, 2, -2, inf, -inf matrix norms.

    Examples
    --------
    >>> wgrad.linalg.matrix_norm(wgrad.tensor([[3., 0.], [0., 4.]]))
    tensor(5.)
    """
    if A.ndim < 2:
        raise RuntimeError(f"linalg.matrix_norm: The input tensor A must have at least 2 "
                           f"dimensions.")
    _check_float("linalg.matrix_norm", A)
    dim = (dim, dim) if isinstance(dim, int) else tuple(dim)
    if len(dim) != 2:
        raise RuntimeError(f"linalg.matrix_norm: dim must be a 2-tuple. Got "
                           f"{' '.join(map(str, dim))}")
    d0, d1 = (_wrap_dim(d, A.ndim) for d in dim)
    if d0 == d1:
        raise RuntimeError(f"linalg.matrix_norm: dims must be different. Got ({d0}, {d1})")
    if dtype is not None:
        A = A.to(dtype)
    if ord == "fro":
        return vector_norm(A, 2, (d0, d1), keepdim)
    inf = float("inf")
    if ord in ("nuc", 2, -2):
        B = A.movedim((d0, d1), (-2, -1))
        s = svdvals(B)
        out = s.sum(-1) if ord == "nuc" else (s.amax(-1) if ord == 2 else s.amin(-1))
    elif ord in (1, -1, inf, -inf):
        sum_dim, red_dim = (d0, d1) if ord in (1, -1) else (d1, d0)
        s = A.abs().sum(sum_dim, keepdim=True)
        out = s.amax(red_dim, keepdim=True) if ord > 0 else s.amin(red_dim, keepdim=True)
        out = out.squeeze((d0, d1)) if not keepdim else out
        return out
    else:
        raise RuntimeError(f"linalg.matrix_norm: Order {ord} not supported.")
    if keepdim:
        out = out.unsqueeze(builtins.min(d0, d1)).unsqueeze(builtins.max(d0, d1))
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """``vector_norm`` or ``matrix_norm`` depending on ``ord``/``dim``, as torch.linalg.norm."""
    if dim is not None:
        dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if ord is None:
        if dim is None:
            return vector_norm(A, 2, None, keepdim, dtype=dtype)
        return vector_norm(A, 2, dim, keepdim, dtype=dtype) if len(dim) == 1 else \
            matrix_norm(A, "fro", dim, keepdim, dtype=dtype)
    if isinstance(ord, str) or (dim is not None and len(dim) == 2) or \
            (dim is None and A.ndim == 2):
        if dim is None:
            if A.ndim != 2:
                raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the "
                                   f"input must be 1D or 2D. Got {A.ndim}D.")
            dim = (-2, -1)
        return matrix_norm(A, ord, dim, keepdim, dtype=dtype)
    if dim is None and A.ndim != 1:
        raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input must "
                           f"be 1D or 2D. Got {A.ndim}D.")
    return vector_norm(A, ord, dim, keepdim, dtype=dtype)


def nuclear_norm(input, dim=None, keepdim=False):
    """The nuclear norm (the sum of the singular values) over ``dim`` (the last two by
    default): ``linalg.matrix_norm(input, 'nuc', dim, keepdim)``; ``nuclear_norm(input,
    keepdim)`` as torch's first overload.

    Examples
    --------
    >>> wgrad.nuclear_norm(wgrad.tensor([[3., 0.], [0., -2.]]))
    tensor(5.)
    """
    _deprecated("at::nuclear_norm is deprecated and it is just left for JIT compatibility. It "
                "will be removed in a future PyTorch release. Please use `linalg.matrix_norm(A, "
                "'nuc', dim, keepdim)` instead")
    if isinstance(dim, bool):
        dim, keepdim = None, dim
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim)


def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm of ``input`` over at most two dims ``dim`` (all of them for ``()``):
    ``torch.norm(input, 2, dim, keepdim)``.

    Examples
    --------
    >>> wgrad.frobenius_norm(wgrad.tensor([[3., 0.], [0., 4.]]), (0, 1))
    tensor(5.)
    """
    _deprecated("at::frobenius_norm is deprecated and it is just left for JIT compatibility. "
                "It will be removed in a future PyTorch release. Please use "
                "`linalg.vector_norm(A, 2., dim, keepdim)` instead")
    dim = (dim,) if isinstance(dim, int) else tuple(dim)
    if len(dim) > 2:
        raise RuntimeError(f"Expected at most 2 dimensions, but got {len(dim)} dimensions "
                           f"instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {input.dtype.scalar_name} instead.")
    return reduction.norm(input, 2, dim, keepdim)


def cross(input, other, *, dim=-1, out=None):
    """Cross product of 3-vectors along ``dim`` (broadcasting).

    Examples
    --------
    >>> wgrad.linalg.cross(wgrad.tensor([1., 0., 0.]), wgrad.tensor([0., 1., 0.]))
    tensor([0., 0., 1.])
    """
    return _cross(input, other, dim)


def vecdot(x, y, *, dim=-1, out=None):
    """``sum(conj(x) * y, dim)`` with broadcasting.

    Examples
    --------
    >>> wgrad.linalg.vecdot(wgrad.tensor([1j, 1.]), wgrad.tensor([1j, 2.]))
    tensor(3.+0.j)
    """
    if x.dtype is not y.dtype:
        raise RuntimeError(f"linalg.vecdot: Expected x and y to have the same dtype, but found "
                           f"x of type {x.dtype.scalar_name} and y of type "
                           f"{y.dtype.scalar_name} instead")
    return (x.conj() * y).sum(dim)


# -- beta * input + alpha * product -----------------------------------------------------



def _same_dtype(a, b, c):
    for x, y in ((a, b), (b, c)):
        if x.dtype is not y.dtype:
            raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                               f"{x.dtype.scalar_name} and {y.dtype.scalar_name}")


def _scaled_add(input, prod, beta, alpha, kernel):
    """``beta * input + alpha * prod``, ``input`` expanded to ``prod``'s shape; with
    ``beta == 0`` the values of ``input`` are ignored (its NaN and inf too) and its
    gradient is zero, as torch's addmm family."""
    if prod.dtype is D.bool:
        raise NotImplementedError(f'"{kernel}" not implemented for \'Bool\'')
    input = input.expand(tuple(prod.shape))
    beta, alpha = _coef(beta, prod.dtype), _coef(alpha, prod.dtype)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:
        return prod + where(_make(jnp.zeros((), bool)), input, 0)
    return prod + (input if beta == 1 else input * beta)


def _addmm_fwd(self, mat1, mat2, *, dtype, beta, alpha):
    prod = _matmul_fwd(mat1, mat2, dtype=dtype)
    if alpha != 1:
        prod = prod * alpha
    if beta == 0:  # self's values ignored, NaN and inf too, as torch
        return prod
    s = jnp.broadcast_to(self.astype(dtype), prod.shape)
    return prod + (s if beta == 1 else s * beta)


def _times_conj(g, c):
    return g if c == 1 else g * _conj_scalar(c)


# torch's AddmmBackward0: one node with edges (self, mat1, mat2) (nn.Linear's 2-D forward)
_addmm = Primitive(
    "addmm", _addmm_fwd, host=_host_gemm.ADDMM,
    self=lambda grad, beta: _times_conj(grad, beta),
    mat1=lambda grad, mat2, alpha: _times_conj(_mm_self(grad, mat2), alpha),
    mat2=lambda grad, mat1, alpha: _times_conj(_mm_other(grad, mat1), alpha))


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat1 @ mat2)``, ``input`` broadcast to the product.

    Example
    -------
    >>> wgrad.addmm(wgrad.ones(2), wgrad.eye(2), wgrad.eye(2), beta=2)
    tensor([[3., 2.],
            [2., 3.]])
    """
    for name, m in (("mat1", mat1), ("mat2", mat2)):
        if m.ndim != 2:
            raise RuntimeError(f"{name} must be a matrix, got {m.ndim}-D tensor")
    if mat1.shape[1] != mat2.shape[0]:
        raise RuntimeError(f"mat1 and mat2 shapes cannot be multiplied ({mat1.shape[0]}x"
                           f"{mat1.shape[1]} and {mat2.shape[0]}x{mat2.shape[1]})")
    _same_dtype(input, mat1, mat2)
    if mat1.dtype is D.bool:
        raise NotImplementedError("\"addmm_impl_cpu_\" not implemented for 'Bool'")
    expanded_shape(input, (mat1.shape[0], mat2.shape[1]))
    return _addmm(input, mat1, mat2, dtype=mat1.dtype.np, beta=_coef(beta, mat1.dtype),
                  alpha=_coef(alpha, mat1.dtype))


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """``beta * input + alpha * (mat @ vec)`` for a matrix ``mat`` and a vector ``vec``."""
    if mat.ndim != 2 or vec.ndim != 1 or input.ndim > 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {input.ndim}, {mat.ndim}, "
                           f"{vec.ndim}")
    n = input.numel()
    if mat.shape[1] != vec.shape[0] or n not in (1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({n}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")
    if not (input.dtype is mat.dtype is vec.dtype):
        raise RuntimeError(f"addmv input tensors must have the same dtype, but got "
                           f"{input.dtype.scalar_name}, {mat.dtype.scalar_name}, and "
                           f"{vec.dtype.scalar_name}")
    return _scaled_add(input, matmul(mat, vec), beta, alpha, "addmv_impl_cpu")


def _check_batches(batch1, batch2):
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0] or batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Expected size for first two dimensions of batch2 tensor to be: "
                           f"[{batch1.shape[0]}, {batch1.shape[2]}] but got: "
                           f"[{batch2.shape[0]}, {batch2.shape[1]}].")


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2)``, ``input`` broadcast to the product."""
    _check_batches(batch1, batch2)
    if input.dtype is not batch1.dtype:
        raise RuntimeError(f"Input dtypes must be the same, got: input {_ctype(input)}, "
                           f"batch1: {_ctype(batch1)}, batch2: {_ctype(batch2)}")
    if batch1.dtype is not batch2.dtype:
        raise RuntimeError(f"expected scalar type {batch1.dtype.scalar_name} but found "
                           f"{batch2.dtype.scalar_name}")
    return _scaled_add(input, bmm(batch1, batch2), beta, alpha, "baddbmm")


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """``beta * input + alpha * bmm(batch1, batch2).sum(0)``, ``input`` broadcast to the
    sum."""
    for name, b in (("batch1", batch1), ("batch2", batch2)):
        if b.ndim != 3:
            raise RuntimeError(f"{name} must be a 3D tensor")
    if batch1.shape[0] != batch2.shape[0]:
        raise RuntimeError(f"batch1 and batch2 must have same number of batches, got "
                           f"{batch1.shape[0]} and {batch2.shape[0]}")
    if batch1.shape[2] != batch2.shape[1]:
        raise RuntimeError(f"Incompatible matrix sizes for bmm ({batch1.shape[1]}x"
                           f"{batch1.shape[2]} and {batch2.shape[1]}x{batch2.shape[2]})")
    _same_dtype(input, batch1, batch2)
    prod = bmm(batch1, batch2).sum(0, dtype=batch1.dtype)
    return _scaled_add(input, prod, beta, alpha, "addmm_impl_cpu_")


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """``beta * input + alpha * outer(vec1, vec2)``, ``input`` broadcast to the product
    (for bool tensors, ``(beta and input) or (alpha and outer)``).

    Example
    -------
    >>> wgrad.addr(wgrad.ones(2, 2), wgrad.tensor([1., 2.]), wgrad.tensor([1., 3.]), beta=2)
    tensor([[3., 5.],
            [4., 8.]])
    """
    for name, v in (("vec1", vec1), ("vec2", vec2)):
        if v.ndim != 1:
            raise RuntimeError(f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    dtype = result_type(input, vec1, vec2)
    integral = not (dtype.is_floating_point or dtype.is_complex)
    for name, v in (("beta", beta), ("alpha", alpha)):
        if isinstance(v, builtins.bool) and dtype is not D.bool:
            raise RuntimeError(f"Boolean {name} only supported for Boolean results.")
        if integral and isinstance(v, (float, builtins.complex)):
            raise RuntimeError(f"For integral input tensors, argument {name} must not be a "
                               f"floating point number.")
    shape = (vec1.shape[0], vec2.shape[0])
    expanded_shape(input, shape)
    prod = outer(vec1.to(dtype), vec2.to(dtype))
    if dtype is D.bool:
        prod = prod if alpha else prod & False
        return prod | input.to(dtype).expand(shape) if beta else prod
    return _scaled_add(input.to(dtype), prod, beta, alpha, "addr")


# -- distances --------------------------------------------------------------------------

_CDIST_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The ``p``-norm distance between each row of ``x1`` (..., P, M) and each row of
    ``x2`` (..., R, M): a (..., P, R) tensor, batch dims broadcast. Real floating inputs
    only. ``compute_mode`` is accepted; the distances are always computed directly
    (torch's matrix-product shortcut for p=2 trades accuracy for speed).

    Example
    -------
    >>> wgrad.cdist(wgrad.tensor([[0., 0.]]), wgrad.tensor([[3., 4.], [1., 0.]]))
    tensor([[5., 1.]])
    """
    if compute_mode not in _CDIST_MODES:
        raise ValueError(f"{compute_mode} is not a valid value for compute_mode")
    if isinstance(p, complex):
        raise TypeError("cdist(): argument 'p' (position 3) must be float, not complex")
    for name, x in (("X1", x1), ("X2", x2)):
        if x.ndim < 2:
            raise RuntimeError(f"cdist only supports at least 2D tensors, {name} got: "
                               f"{x.ndim}D")
    if x1.shape[-1] != x2.shape[-1]:
        raise RuntimeError(f"X1 and X2 must have the same number of columns. X1: "
                           f"{x1.shape[-1]} X2: {x2.shape[-1]}")
    for name, x in (("X1", x1), ("X2", x2)):
        if not x.is_floating_point():
            raise RuntimeError(f"cdist only supports floating-point dtypes, {name} got: "
                               f"{x.dtype.scalar_name}")
    if x1.dtype is not x2.dtype:
        raise RuntimeError(f"expected scalar type {x1.dtype.scalar_name} but found "
                           f"{x2.dtype.scalar_name}")
    if p < 0:
        raise RuntimeError("cdist only supports non-negative p values")
    check_broadcast(x1.shape[:-2], x2.shape[:-2])
    diff = x1.unsqueeze(-2) - x2.unsqueeze(-3)
    if not diff.shape[-1]:
        return vector_norm(diff, 2, -1)  # zeros, whatever p
    if p == float("inf"):
        # torch's gradient goes whole to every coordinate tied for the max (the norm's
        # splits it): max + sum((|d| - max) * tied), zero forward, |d|'s gradient where tied
        a = diff.abs()
        m = a.amax(-1, keepdim=True).detach()
        return m.squeeze(-1) + ((a - m) * (a == m)).sum(-1)
    return vector_norm(diff, p, -1)


def dist(input, other, p=2):
    """The ``p``-norm of ``input - other`` (broadcast), a 0-d tensor.

    Example
    -------
    >>> wgrad.dist(wgrad.tensor([3., 0.]), wgrad.tensor([0., 4.]))
    tensor(5.)
    """
    dt = result_type(input, other)
    if not (dt.is_floating_point or dt.is_complex):
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {dt.scalar_name} instead.")
    if isinstance(p, complex):
        raise RuntimeError("linalg.vector_norm: Expected a non-complex scalar as the order of "
                           "norm.")
    diff = input - other
    if p == float("inf") and not diff.numel():
        raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor "
                           "because the operation does not have an identity")
    return vector_norm(diff, p)


# ======================================================================================
# Removed in torch 1.9: torch 2.13 keeps these names only to say what replaces them
# ======================================================================================

_REMOVED = "This function was deprecated since version 1.9 and is now removed."


def solve(input, A, *, out=None):
    """Removed from torch (1.9): raises torch's error naming ``linalg.solve``.

    Examples
    --------
    >>> wgrad.solve(wgrad.eye(2), wgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed...
    """
    raise RuntimeError(
        f"{_REMOVED} `torch.solve` is deprecated in favor of `torch.linalg.solve`. "
        f"`torch.linalg.solve` has its arguments reversed and does not return the LU "
        f"factorization.\n\nTo get the LU factorization see `torch.lu`, which can be used "
        f"with `torch.lu_solve` or `torch.lu_unpack`.\nX = torch.solve(B, A).solution should "
        f"be replaced with:\nX = torch.linalg.solve(A, B)")


def lstsq(input, A, *, out=None):
    """Removed from torch (1.9): raises torch's error naming ``linalg.lstsq``.

    Examples
    --------
    >>> wgrad.lstsq(wgrad.eye(2), wgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed...
    """
    raise RuntimeError(
        f"{_REMOVED} `torch.lstsq` is deprecated in favor of `torch.linalg.lstsq`.\n"
        f"`torch.linalg.lstsq` has reversed arguments and does not return the QR "
        f"decomposition in the returned tuple (although it returns other information about "
        f"the problem).\n\nTo get the QR decomposition consider using `torch.linalg.qr`.\n\n"
        f"The returned solution in `torch.lstsq` stored the residuals of the solution in the "
        f"last m - n columns of the returned value whenever m > n. In torch.linalg.lstsq, the "
        f"residuals are in the field 'residuals' of the returned named tuple.\n\nThe "
        f"unpacking of the solution, as in\nX, _ = torch.lstsq(B, A).solution[:A.size(1)]\n"
        f"should be replaced with:\nX = torch.linalg.lstsq(A, B).solution")


def eig(self, eigenvectors=False, *, e=None, v=None):
    """Removed from torch (1.9): raises torch's error naming ``linalg.eig``.

    Examples
    --------
    >>> wgrad.eig(wgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed...
    """
    raise RuntimeError(
        f"{_REMOVED} `torch.linalg.eig` returns complex tensors of dtype `cfloat` or "
        f"`cdouble` rather than real tensors mimicking complex tensors.\n\nL, _ = "
        f"torch.eig(A) should be replaced with:\nL_complex = torch.linalg.eigvals(A)\n\nand"
        f"\n\nL, V = torch.eig(A, eigenvectors=True) should be replaced with:\nL_complex, "
        f"V_complex = torch.linalg.eig(A)")


def symeig(input, eigenvectors=False, upper=True, *, out=None):
    """Removed from torch (1.9): raises torch's error naming ``linalg.eigh``.

    Examples
    --------
    >>> wgrad.symeig(wgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed...
    """
    raise RuntimeError(
        f"{_REMOVED} The default behavior has changed from using the upper triangular "
        f"portion of the matrix by default to using the lower triangular portion.\n\nL, _ = "
        f"torch.symeig(A, upper=upper) should be replaced with:\nL = torch.linalg.eigvalsh(A, "
        f"UPLO='U' if upper else 'L')\n\nand\n\nL, V = torch.symeig(A, eigenvectors=True) "
        f"should be replaced with:\nL, V = torch.linalg.eigh(A, UPLO='U' if upper else 'L')")


def matrix_rank(input, tol=None, symmetric=False, *, out=None):
    """Removed from torch (1.9): raises torch's error naming ``linalg.matrix_rank``.

    Examples
    --------
    >>> wgrad.matrix_rank(wgrad.eye(2))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    RuntimeError: This function was deprecated since version 1.9 and is now removed...
    """
    raise RuntimeError(
        f"{_REMOVED}\nPlease use the `torch.linalg.matrix_rank` function instead. The "
        f"parameter 'symmetric' was renamed in `torch.linalg.matrix_rank()` to 'hermitian'.")
