"""Products of operands of two dtypes (or of bool): torch refuses them with the error of the
kernel it dispatches to, except where the product is elementwise (which promotes); each
case runs in wgrad and in torch and must end the same way."""
import numpy as np
import pytest
import torch

import wgrad
from _outcome import arrays

F32, F64, I64, C64, BOOL = "float32", "float64", "int64", "complex64", "bool"


def _t(T, shape, dtype):
    return T.ones(shape, dtype=getattr(T, dtype))


def _mm(s1, d1, s2, d2):
    return lambda T: _t(T, s1, d1) @ _t(T, s2, d2)


CASES = {
    # matmul by operand ranks: dot, addmv, addmm, bmm, each with its own message
    **{f"matmul{len(s1)}{len(s2)}_{a}_{b}": _mm(s1, a, s2, b)
       for s1, s2 in [((3,), (3,)), ((3,), (3, 2)), ((3,), (4, 3, 2)), ((2, 3), (3,)),
                      ((2, 3), (3, 2)), ((2, 3), (1, 3, 2)), ((4, 2, 3), (3,)),
                      ((4, 2, 3), (3, 2)), ((4, 2, 3), (4, 3, 2))]
       for a, b in [(F32, F64), (I64, F32), (F32, C64), (BOOL, BOOL)]},
    "matmul_same_int": _mm((2, 3), (3, 2), I64, I64),
    "dot_sizes_and_dtypes": _mm((3,), F32, (4,), F64),
    "mm_shapes_first": _mm((2, 3), F32, (4, 2), F64),
    "mv_sizes_first": _mm((2, 3), F32, (4,), F64),
    "mm": lambda T: T.mm(_t(T, (2, 3), F32), _t(T, (3, 2), F64)),
    "bmm": lambda T: T.bmm(_t(T, (2, 2, 3), F32), _t(T, (2, 3, 2), F64)),
    "vdot": lambda T: T.vdot(_t(T, (3,), F32), _t(T, (3,), F64)),
    "vdot_bool": lambda T: T.vdot(_t(T, (3,), BOOL), _t(T, (3,), BOOL)),
    "inner": lambda T: T.inner(_t(T, (2, 2), F32), _t(T, (2, 2), F64)),
    "inner_sizes_first": lambda T: T.inner(_t(T, (2,), F32), _t(T, (3,), F64)),
    "tensordot_dtype_first": lambda T: T.tensordot(_t(T, (2, 3), F32), _t(T, (4, 2), F64)),
    "multi_dot": lambda T: T.linalg.multi_dot([_t(T, (2, 2), F32), _t(T, (2, 2), I64)]),
    "multi_dot_first_3d": lambda T: T.linalg.multi_dot([_t(T, (2, 2, 2), F32),
                                                        _t(T, (2, 2), F32)]),
    "multi_dot_middle_1d": lambda T: T.linalg.multi_dot([_t(T, (2, 2), F32), _t(T, (2,), F32),
                                                         _t(T, (2, 2), F32)]),
    "multi_dot_shapes": lambda T: T.linalg.multi_dot([_t(T, (2, 2), F32), _t(T, (3, 2), F32)]),
    "vecdot": lambda T: T.linalg.vecdot(_t(T, (3,), F32), _t(T, (3,), F64)),
    "linear": lambda T: T.nn.functional.linear(_t(T, (2, 3), F32), _t(T, (4, 3), F64)),
    "bilinear_bias": lambda T: T.nn.functional.bilinear(
        _t(T, (2, 2), F32), _t(T, (2, 2), F32), _t(T, (3, 2, 2), F32), _t(T, (3,), F64)),
    "bilinear_dtype_first": lambda T: T.nn.functional.bilinear(
        _t(T, (2, 2), F32), _t(T, (2, 3), F64), _t(T, (3, 2, 2), F32)),
    "conv_weight": lambda T: T.nn.functional.conv2d(_t(T, (1, 1, 3, 3), F32),
                                                    _t(T, (1, 1, 2, 2), F64)),
    "conv_bias_first": lambda T: T.nn.functional.conv1d(
        _t(T, (1, 1, 3), F32), _t(T, (1, 1, 2), F64), _t(T, (1,), F64)),
    "conv_channels_first": lambda T: T.nn.functional.conv2d(_t(T, (1, 1, 3, 3), F32),
                                                            _t(T, (1, 2, 2, 2), F64)),
    # einsum: a step that sums a shared index is a bmm (one dtype); a product promotes
    "einsum_contract": lambda T: T.einsum("ij,jk->ik", _t(T, (2, 2), F32), _t(T, (2, 2), F64)),
    "einsum_full": lambda T: T.einsum("ij,kj->", _t(T, (2, 2), F32), _t(T, (2, 2), F64)),
    "einsum_outer": lambda T: T.einsum("i,j->ij", _t(T, (2,), F32), _t(T, (2,), F64)),
    "einsum_elementwise": lambda T: T.einsum("ij,ij->ij", _t(T, (2, 2), F32),
                                             _t(T, (2, 2), F64)),
    "einsum_product_then_contract": lambda T: T.einsum(
        "ij,ij,jk->ik", _t(T, (2, 2), F32), _t(T, (2, 2), F64), _t(T, (2, 2), F64)),
    "einsum_bool": lambda T: T.einsum("ij,jk->ik", _t(T, (2, 2), BOOL), _t(T, (2, 2), BOOL)),
    "einsum_single": lambda T: T.einsum("ii->i", _t(T, (2, 2), F32)),
    # solvers: linalg.solve and lstsq refuse two dtypes; solve_triangular solves in A's
    "solve": lambda T: T.linalg.solve(_t(T, (2, 3), F64), _t(T, (2,), F32)),
    "solve_int": lambda T: T.linalg.solve(_t(T, (2, 2), I64), _t(T, (2,), I64)),
    "solve_ex": lambda T: T.linalg.solve_ex(T.eye(2, dtype=T.float64), _t(T, (2,), F32)),
    "lstsq": lambda T: T.linalg.lstsq(_t(T, (3, 2), F64), _t(T, (4, 1), F32)),
    **{f"solve_triangular_{a}_{b}": (lambda a, b: lambda T: T.linalg.solve_triangular(
        T.tensor([[2., 1.], [0., 4.]], dtype=getattr(T, a)),
        T.tensor([[1. + 2j], [3. - 1j]]).to(getattr(T, b)), upper=True))(a, b)
       for a, b in [(F64, F32), (F32, F64), (F64, C64), (C64, F64), (I64, F64)]},
    # memory formats: checked, then without effect (wgrad keeps no strides)
    "clone_channels_last_2d": lambda T: _t(T, (2, 2), F32).clone(memory_format=T.channels_last),
    "clone_format_dtype": lambda T: _t(T, (2, 2), F32).clone(memory_format=3),
    "contiguous_3d_format": lambda T: _t(T, (2, 2, 2, 2), F32).contiguous(
        memory_format=T.channels_last_3d),
    "contiguous_preserve": lambda T: _t(T, (2, 2), F32).contiguous(
        memory_format=T.preserve_format),
    "to_channels_last": lambda T: _t(T, (2, 2), F32).to(memory_format=T.channels_last),
    "empty_like_channels_last": lambda T: T.empty_like(_t(T, (2, 2), F32),
                                                       memory_format=T.channels_last),
    "zeros_channels_last": lambda T: T.empty(2, 2, memory_format=T.channels_last).shape,
    "full_like_ok": lambda T: T.full_like(_t(T, (1, 2, 2, 2), F32), 3.,
                                          memory_format=T.channels_last),
}


def _solve_triangular_grads(T):
    A = T.tensor([[2., 1.], [0., 4.]], dtype=T.float32, requires_grad=True)
    B = T.tensor([[1. + 2j], [3. - 1j]], dtype=T.complex64, requires_grad=True)
    X = T.linalg.solve_triangular(A, B, upper=True)
    (X * T.tensor([[1.5], [-2.]])).sum().backward()
    return A.grad, B.grad


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    got, want = arrays(wgrad, CASES[name]), arrays(torch, CASES[name])
    if isinstance(want, tuple):
        assert got == want
    else:
        assert not isinstance(got, tuple), got
        assert [(x.dtype, x.shape) for x in got] == [(y.dtype, y.shape) for y in want]
        for x, y in zip(got, want):
            np.testing.assert_allclose(x, y)


def test_solve_triangular_grads_through_the_cast():
    got, want = arrays(wgrad, _solve_triangular_grads), arrays(torch, _solve_triangular_grads)
    for x, y in zip(got, want):
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-6)
