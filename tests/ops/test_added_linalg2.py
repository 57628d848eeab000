"""torch.linalg's cond, matrix_rank, cholesky_ex, inv_ex, solve_ex, lu_solve, ldl_factor(_ex),
ldl_solve, householder_product, tensorinv and tensorsolve; torch's geqrf, orgqr, ormqr,
nuclear_norm and frobenius_norm; and the functions torch 1.9 removed (solve, lstsq, eig,
symeig, matrix_rank), each against torch itself: values and dtypes, errors, out=,
gradients (gradcheck on float64 and complex128, and the gradient torch gives)."""
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from _outcome import arrays as _run, assert_arrays_agree, assert_grads_agree, grads
from wgrad.ops.linear_algebra import _potf2
from wgrad.testing import assert_jax_identity, check_op

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(7)
_INF, _NAN = float("inf"), float("nan")


def _randn(*shape, cplx=False):
    a = _RNG.standard_normal(shape)
    return a + 1j * _RNG.standard_normal(shape) if cplx else a


def _c(*shape):
    return _randn(*shape, cplx=True)


_A3, _A43, _A3C, _A233 = _randn(3, 3), _randn(4, 3), _c(3, 3), _randn(2, 3, 3)
_B32, _B3C, _B232 = _randn(3, 2), _c(3, 2), _randn(2, 3, 2)
_S2 = np.array([[1., 2.], [2., 4.]])  # singular, an exact zero pivot
_SPD3 = _A3 @ _A3.T + 3 * np.eye(3)
_NOT_PD = np.array([[4., 2., 1., 0.], [2., 5., 3., 1.], [1., 3., -5., 2.], [0., 1., 2., 3.]])
_NOT_PD_C = np.array([[4. + 1j, 7, 1], [1, -2 + 3j, 0], [1, 2, 5 + 1j]])
_SYM3, _HERM3 = _A3 + _A3.T, _A3C + _A3C.conj().T
_SYM_C3 = _A3C + _A3C.T  # complex symmetric
_INDEF = np.array([[0., 1., 2.], [1., 0., 3.], [2., 3., 0.]])  # 2x2 pivots
_DIAG = np.diag([5., 1e-17, 2.])
_SING3 = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])
_SYM70 = _randn(70, 70) + _randn(70, 70).T  # torch's sytrf is blocked at this size
_HERM40 = _c(40, 40) + _c(40, 40).conj().T
_C42, _C24, _C42C, _C24C, _C41 = _randn(4, 2), _randn(2, 4), _c(4, 2), _c(2, 4), _randn(4, 1)
_A43C, _B22, _SPD4 = _c(4, 3), _randn(2, 2), _A43 @ _A43.T + np.eye(4)


def _t(T, a, dtype=None, rg=False):
    a = np.asarray(a)
    if dtype is None:
        dtype = T.complex128 if a.dtype.kind == "c" else T.float64 if a.dtype.kind == "f" \
            else T.int64
    return T.tensor(a, dtype=dtype, requires_grad=rg)


def _ldl(T, a, herm=False, b=None):
    LD, piv, info = T.linalg.ldl_factor_ex(_t(T, a), hermitian=herm)
    b = np.ones(a.shape[:-1] + (2,)) if b is None else b
    return LD, piv, info, T.linalg.ldl_solve(LD, piv, _t(T, b.astype(a.dtype)), hermitian=herm)


def _lu_solve(T, a, b, **kw):
    return T.linalg.lu_solve(*T.linalg.lu_factor(_t(T, a)), _t(T, b), **kw)


# name -> fn(T): compared value by value (shape, dtype, values) between wgrad and torch
VALUES = {
    "cond": lambda T: [T.linalg.cond(_t(T, _A3), p) for p in
                       (None, 2, -2, "fro", "nuc", _INF, -_INF, 1, -1, 2.0)] +
                      [T.linalg.cond(_t(T, _A3C), "fro"), T.linalg.cond(_t(T, _A3), T.tensor(1.))],
    # the 2-norm's and the nuclear norm's divide by a rounding-error sigma_min (LAPACK's:
    # 4.8e16 in JAX, 2.5e16 in PyTorch, 2026-11-28): their size, not their value
    "cond_singular": lambda T: [T.linalg.cond(_t(T, _S2), p) > 1e15 for p in (None, "nuc")] +
                               [T.linalg.cond(_t(T, _S2), p) for p in ("fro", 1)] +
                               [T.linalg.cond(_t(T, 0 * _S2), p) for p in (2, 1)],
    "cond_empty": lambda T: (T.linalg.cond(T.zeros(0, 0)), T.linalg.cond(T.zeros(2, 0, 0), 1),
                             T.linalg.cond(T.zeros(0, 2, 3)),
                             T.linalg.cond(T.zeros(0, 0, dtype=T.int64))),
    "matrix_rank": lambda T: (
        T.linalg.matrix_rank(_t(T, _DIAG)), T.linalg.matrix_rank(_t(T, _DIAG), 0.),
        T.linalg.matrix_rank(_t(T, _DIAG), tol=2.5, hermitian=True),
        T.linalg.matrix_rank(_t(T, -_DIAG), hermitian=True),
        T.linalg.matrix_rank(_t(T, _DIAG), atol=1., rtol=.5),
        T.linalg.matrix_rank(_t(T, np.stack([_DIAG, 0 * _DIAG])), atol=_t(T, [1., 3.])),
        T.linalg.matrix_rank(_t(T, _A3C)), T.linalg.matrix_rank(T.zeros(2, 0, 3))),
    "cholesky_ex": lambda T: (*T.linalg.cholesky_ex(_t(T, _SPD3)),
                              *T.linalg.cholesky_ex(_t(T, _HERM3 + 6 * np.eye(3)), upper=True),
                              *T.linalg.cholesky_ex(T.zeros(2, 0, 0)),
                              # torch reads the upper triangle for upper=True
                              T.linalg.cholesky(_t(T, [[4., 1j], [3., 2.]]), upper=True)),
    # not positive-definite: info and what LAPACK's potf2 leaves in L
    "cholesky_ex_failed": lambda T: (
        *T.linalg.cholesky_ex(_t(T, _NOT_PD)), *T.linalg.cholesky_ex(_t(T, _NOT_PD_C)),
        *T.linalg.cholesky_ex(_t(T, _NOT_PD), upper=True),
        *T.linalg.cholesky_ex(_t(T, np.stack([_SPD3, -np.eye(3), _NOT_PD[:3, :3]]))),
        *T.linalg.cholesky_ex(_t(T, [[1., 0., 0.], [_NAN, 2., 0.], [1., 1., 4.]]))),
    "inv_ex": lambda T: (*T.linalg.inv_ex(_t(T, _A3)), *T.linalg.inv_ex(_t(T, _S2)),
                         *T.linalg.inv_ex(_t(T, np.stack([_A3, _SING3]))),
                         *T.linalg.inv_ex(_t(T, _A3C)), *T.linalg.inv_ex(T.zeros(3, 0, 0))),
    "solve_ex": lambda T: (*T.linalg.solve_ex(_t(T, _A3), _t(T, _B32[:, 0])),
                           *T.linalg.solve_ex(_t(T, _A3C), _t(T, _B3C.T), left=False),
                           *T.linalg.solve_ex(_t(T, _A233), _t(T, _B32)),
                           *T.linalg.solve_ex(_t(T, np.stack([_A3[:2, :2], _S2])),
                                              T.ones(2, 2, dtype=T.float64))),
    "lu_solve": lambda T: (_lu_solve(T, _A3, _B32),
                           _lu_solve(T, _A3C, _B3C.T, left=False, adjoint=True),
                           _lu_solve(T, _A233, np.ones((4, 1, 3, 2)), adjoint=True)),
    "ldl": lambda T: (*_ldl(T, _SYM3), *_ldl(T, _INDEF), *_ldl(T, _HERM3, True),
                      *_ldl(T, _SYM_C3), *_ldl(T, np.stack([_SYM3, _INDEF])),
                      *_ldl(T, np.zeros((2, 2))), *_ldl(T, np.tril(_A3)),
                      *T.linalg.ldl_factor(_t(T, _INDEF, T.float32))),
    # torch's sytrf is blocked at these sizes: the same pivots
    "ldl_larger": lambda T: (*_ldl(T, _SYM70), *_ldl(T, _HERM40, True)),
    "ldl_solve_broadcast": lambda T: (
        T.linalg.ldl_solve(*T.linalg.ldl_factor(_t(T, _SYM3)), T.ones(4, 3, 2, dtype=T.float64)),
        T.linalg.ldl_solve(*T.linalg.ldl_factor(_t(T, np.stack([_SYM3, _INDEF]))),
                           T.ones(3, 2, dtype=T.float64)),
        T.linalg.ldl_solve(*T.linalg.ldl_factor(_t(T, _SYM3))[:1],
                           T.linalg.ldl_factor(_t(T, _SYM3))[1].long(),
                           T.ones(3, 2, dtype=T.float64))),
    "geqrf": lambda T: (*T.geqrf(_t(T, _A43)), *T.geqrf(_t(T, _A43.T)), *_t(T, _A3C).geqrf(),
                        *T.geqrf(T.zeros(2, 0, 3)), np.array(type(T.geqrf(_t(T, _A3))).__name__)),
    "householder_product": lambda T: (
        T.linalg.householder_product(*T.geqrf(_t(T, _A43C))), _t(T, _A233).orgqr(
            _t(T, _A233[:, 0]))),
    "ormqr": lambda T: (T.ormqr(*T.geqrf(_t(T, _A43)), _t(T, _C42)),
                        T.ormqr(*T.geqrf(_t(T, _A43C)), _t(T, _C42C), True, True),
                        T.ormqr(*T.geqrf(_t(T, _A43)), _t(T, _C24), False),
                        _t(T, _A43C).ormqr(*T.geqrf(_t(T, _A43C))[1:], _t(T, _C24C), False, True),
                        T.ormqr(*T.geqrf(_t(T, _A233)), _t(T, _B232))),
    "tensorinv": lambda T: (T.linalg.tensorinv(_t(T, _SPD4).reshape(4, 2, 2), 1),
                            T.linalg.tensorinv(_t(T, _A3C).reshape(3, 1, 3)),
                            T.linalg.tensorinv(T.zeros(0, 0), 1)),
    "tensorsolve": lambda T: (
        T.linalg.tensorsolve(_t(T, _SPD4).reshape(4, 2, 2), _t(T, _C41[:, 0])),
        T.linalg.tensorsolve(_t(T, _SPD4).reshape(2, 4, 2), _t(T, _B22), dims=(1,)),
        T.linalg.tensorsolve(_t(T, _A3C), _t(T, _B3C[:, 0]))),
    "nuclear_frobenius": lambda T: (T.nuclear_norm(_t(T, _A43)), T.nuclear_norm(_t(T, _A43), True),
                                    T.nuclear_norm(_t(T, _A233), (0, 2)),
                                    T.nuclear_norm(_t(T, _A3C)),
                                    T.frobenius_norm(_t(T, _A43), (0, 1)),
                                    T.frobenius_norm(_t(T, _A233), 1, True),
                                    T.frobenius_norm(_t(T, _A233), ())),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_agree_with_torch(name):
    assert_arrays_agree(_run(wgrad, VALUES[name]), _run(torch, VALUES[name]))


_F = lambda T, *s: T.ones(s, dtype=T.float64)  # noqa: E731
_LU = lambda T: T.linalg.lu_factor(_t(T, _A3))  # noqa: E731
_LD = lambda T: T.linalg.ldl_factor(_t(T, _SYM3))  # noqa: E731

ERRORS = {
    "cond_1d": lambda T: T.linalg.cond(_F(T, 3), 3),
    "cond_p": lambda T: T.linalg.cond(_t(T, _A3), 3),
    "cond_p_str": lambda T: T.linalg.cond(_t(T, _A3), "foo"),
    "cond_p_float": lambda T: T.linalg.cond(_t(T, _A3), 1.5),
    "cond_rect": lambda T: [T.linalg.cond(_t(T, _A43), p) for p in ("fro", -_INF)],
    "cond_rect_nuc": lambda T: T.linalg.cond(_t(T, _A43), "nuc"),
    "cond_rect_1": lambda T: T.linalg.cond(_t(T, _A43), 1),
    "cond_long": lambda T: T.linalg.cond(T.ones(2, 2, dtype=T.int64)),
    "cond_long_1": lambda T: T.linalg.cond(T.ones(2, 2, dtype=T.int64), 1),
    "cond_half": lambda T: T.linalg.cond(T.ones(2, 2, dtype=T.half)),
    "cond_half_1": lambda T: T.linalg.cond(T.ones(2, 2, dtype=T.half), 1),
    "rank_1d": lambda T: T.linalg.matrix_rank(_F(T, 3)),
    "rank_long": lambda T: T.linalg.matrix_rank(T.ones(2, 2, dtype=T.int64)),
    "rank_long_rtol": lambda T: T.linalg.matrix_rank(T.ones(2, 2, dtype=T.int64), rtol=0.),
    "rank_long_hermitian": lambda T: T.linalg.matrix_rank(T.ones(2, 2, dtype=T.int64),
                                                          hermitian=True, rtol=0.),
    "rank_rect_hermitian": lambda T: T.linalg.matrix_rank(_F(T, 2, 3), hermitian=True),
    "cholesky_ex_rect": lambda T: T.linalg.cholesky_ex(_F(T, 2, 3)),
    "cholesky_ex_1d": lambda T: T.linalg.cholesky_ex(_F(T, 3)),
    "cholesky_ex_long": lambda T: T.linalg.cholesky_ex(T.ones(2, 2, dtype=T.int64)),
    "cholesky_ex_half": lambda T: T.linalg.cholesky_ex(T.ones(2, 2, dtype=T.half)),
    "cholesky_ex_check": lambda T: T.linalg.cholesky_ex(_t(T, _NOT_PD), check_errors=True),
    "cholesky_ex_check_batch": lambda T: T.linalg.cholesky_ex(
        _t(T, np.stack([_SPD3, -np.eye(3)])), check_errors=True),
    "cholesky_batch": lambda T: T.linalg.cholesky(_t(T, np.stack([_SPD3, -np.eye(3)]))),
    "inv_ex_rect": lambda T: T.linalg.inv_ex(_F(T, 2, 3)),
    "inv_ex_long": lambda T: T.linalg.inv_ex(T.ones(2, 2, dtype=T.int64)),
    "inv_ex_half": lambda T: T.linalg.inv_ex(T.ones(2, 2, dtype=T.half)),
    "inv_ex_check": lambda T: T.linalg.inv_ex(_t(T, _S2), check_errors=True),
    "inv_ex_check_batch": lambda T: T.linalg.inv_ex(_t(T, np.stack([_A3, _SING3])),
                                                    check_errors=True),
    "inv_batch": lambda T: T.linalg.inv(_t(T, np.stack([_A3, _SING3]))),
    "solve_ex_check": lambda T: T.linalg.solve_ex(_t(T, np.stack([_A3[:2, :2], _S2])),
                                                  _F(T, 2), check_errors=True),
    "solve_ex_dtype": lambda T: T.linalg.solve_ex(_t(T, _A3), _F(T, 3).float()),
    "solve_ex_dtype_rect": lambda T: T.linalg.solve_ex(_F(T, 2, 3), _F(T, 2).float()),
    "solve_ex_long": lambda T: T.linalg.solve_ex(T.ones(2, 3, dtype=T.int64), _F(T, 2)),
    "solve_ex_shapes": lambda T: T.linalg.solve_ex(_t(T, _A3), _F(T, 2, 3)),
    "solve_ex_right": lambda T: T.linalg.solve_ex(_t(T, _A3), _F(T, 3, 2), left=False),
    "solve_ex_0d": lambda T: T.linalg.solve_ex(_t(T, _A3), _F(T)),
    "solve_ex_half": lambda T: T.linalg.solve_ex(T.ones(2, 2).half(), T.ones(2, 2).half()),
    "lu_solve_right": lambda T: T.linalg.lu_solve(*_LU(T), _F(T, 3, 2), left=False),
    "lu_solve_1d": lambda T: T.linalg.lu_solve(*_LU(T), _F(T, 3)),
    "lu_solve_dtype": lambda T: T.linalg.lu_solve(*_LU(T), _F(T, 3, 2).float()),
    "lu_solve_pivots": lambda T: T.linalg.lu_solve(_LU(T)[0], _LU(T)[1].long(), _F(T, 3, 2)),
    "lu_solve_range": lambda T: T.linalg.lu_solve(_LU(T)[0], _t(T, [1, 4, 3], T.int32),
                                                  _F(T, 3, 2)),
    "lu_solve_batch": lambda T: T.linalg.lu_solve(_LU(T)[0].expand(2, 3, 3), _LU(T)[1],
                                                  _F(T, 3, 2)),
    "ldl_rect": lambda T: T.linalg.ldl_factor(_F(T, 2, 3)),
    "ldl_1d": lambda T: T.linalg.ldl_factor_ex(_F(T, 3)),
    "ldl_long": lambda T: T.linalg.ldl_factor(T.ones(2, 2, dtype=T.int64)),
    "ldl_half": lambda T: T.linalg.ldl_factor(T.ones(2, 2, dtype=T.half)),
    "ldl_solve_1d_b": lambda T: T.linalg.ldl_solve(*_LD(T), _F(T, 3)),
    "ldl_solve_dtype": lambda T: T.linalg.ldl_solve(*_LD(T), _F(T, 3, 2).float()),
    "ldl_solve_sizes": lambda T: T.linalg.ldl_solve(*_LD(T), _F(T, 2, 2)),
    "ldl_solve_pivots_shape": lambda T: T.linalg.ldl_solve(_LD(T)[0], _LD(T)[1][:2], _F(T, 3, 2)),
    "ldl_solve_pivots_float": lambda T: T.linalg.ldl_solve(_LD(T)[0], _LD(T)[1].double(),
                                                           _F(T, 3, 2)),
    "ldl_solve_pivots_high": lambda T: T.linalg.ldl_solve(_LD(T)[0], _t(T, [1, 2, 7], T.int32),
                                                          _F(T, 3, 2)),
    "ldl_solve_pivots_zero": lambda T: T.linalg.ldl_solve(_LD(T)[0], _t(T, [0, 2, 3], T.int32),
                                                          _F(T, 3, 2)),
    "ldl_solve_rect": lambda T: T.linalg.ldl_solve(_F(T, 2, 3), _LD(T)[1], _F(T, 3, 2)),
    "ldl_solve_long": lambda T: T.linalg.ldl_solve(T.ones(3, 3, dtype=T.int64), _LD(T)[1],
                                                   T.ones(3, 2, dtype=T.int64)),
    "ldl_solve_half": lambda T: T.linalg.ldl_solve(_LD(T)[0].half(), _LD(T)[1],
                                                   T.ones(3, 2, dtype=T.half)),
    "geqrf_1d": lambda T: T.geqrf(_F(T, 3)),
    "geqrf_long": lambda T: T.geqrf(T.ones(2, 2, dtype=T.int64)),
    "householder_wide": lambda T: T.linalg.householder_product(_t(T, _A43.T), _F(T, 2)),
    "householder_tau_long": lambda T: T.linalg.householder_product(_t(T, _A43), _F(T, 4)),
    "householder_tau_ndim": lambda T: T.linalg.householder_product(_t(T, _A43), _F(T, 1, 2)),
    "householder_tau_0d": lambda T: T.linalg.householder_product(_t(T, _A43), _F(T)),
    "householder_batch": lambda T: T.linalg.householder_product(_t(T, _A43).expand(2, 4, 3),
                                                                _F(T, 3, 2)),
    "householder_dtype": lambda T: T.orgqr(_t(T, _A43), T.ones(2)),
    "householder_long": lambda T: T.orgqr(T.ones(4, 3, dtype=T.int64), T.ones(2,
                                                                            dtype=T.int64)),
    "ormqr_1d": lambda T: T.ormqr(_F(T, 4), _F(T, 3), _F(T, 4, 2)),
    "ormqr_other_1d": lambda T: T.ormqr(_t(T, _A43), _F(T, 3), _F(T, 4)),
    "ormqr_sizes": lambda T: T.ormqr(_t(T, _A43), _F(T, 2), _F(T, 3, 2)),
    "ormqr_sizes_right": lambda T: T.ormqr(_t(T, _A43), _F(T, 3), _F(T, 4, 2), left=False),
    "ormqr_tau": lambda T: T.ormqr(_t(T, _A43), _F(T, 2), _F(T, 4, 2)),
    "ormqr_tau_0d": lambda T: T.ormqr(_t(T, _A43), _F(T), _F(T, 4, 2)),
    "ormqr_tau_ndim": lambda T: T.ormqr(_t(T, _A43).expand(2, 4, 3), _F(T, 3), _F(T, 4, 2)),
    "ormqr_other_ndim": lambda T: T.ormqr(_t(T, _A43), _F(T, 3), _F(T, 2, 4, 2)),
    "ormqr_batch": lambda T: T.ormqr(_t(T, _A43).expand(2, 4, 3), _F(T, 3, 3), _F(T, 2, 4, 2)),
    "ormqr_dtype": lambda T: T.ormqr(_t(T, _A43), _F(T, 3), _F(T, 4, 2).float()),
    "ormqr_long": lambda T: T.ormqr(T.ones(4, 3, dtype=T.int64), T.ones(3, dtype=T.int64),
                                    T.ones(4, 2, dtype=T.int64)),
    "tensorinv_ind": lambda T: T.linalg.tensorinv(_F(T, 2, 3, 6), 0),
    "tensorinv_ind_big": lambda T: T.linalg.tensorinv(_F(T, 2, 3, 6), 4),
    "tensorinv_shape": lambda T: T.linalg.tensorinv(_F(T, 4, 3), 1),
    "tensorinv_singular": lambda T: T.linalg.tensorinv(_F(T, 2, 3, 6)),
    "tensorinv_float_ind": lambda T: T.linalg.tensorinv(_F(T, 6, 6), 1.5),
    "tensorsolve_shape": lambda T: T.linalg.tensorsolve(_F(T, 2, 3, 6), _F(T, 6)),
    "tensorsolve_singular": lambda T: T.linalg.tensorsolve(_F(T, 6, 2, 3), _F(T, 6)),
    "tensorsolve_dtype": lambda T: T.linalg.tensorsolve(_F(T, 6, 2, 3), T.ones(6)),
    "tensorsolve_dims": lambda T: T.linalg.tensorsolve(_F(T, 6, 2, 3), _F(T, 6), dims=0),
    "nuclear_norm_dim": lambda T: T.nuclear_norm(_t(T, _A43), 1),
    "nuclear_norm_dims": lambda T: T.nuclear_norm(_t(T, _A43), (0,)),
    "nuclear_norm_long": lambda T: T.nuclear_norm(T.ones(2, 2, dtype=T.int64)),
    "frobenius_norm_dims": lambda T: T.frobenius_norm(_t(T, _A233), (0, 1, 2)),
    "frobenius_norm_repeated": lambda T: T.frobenius_norm(_t(T, _A43), (0, -2)),
    "frobenius_norm_long": lambda T: T.frobenius_norm(T.ones(2, 2, dtype=T.int64), ()),
    "matrix_norm_dim": lambda T: T.linalg.matrix_norm(_t(T, _A43), dim=(0, 1, 2)),
    "matrix_norm_long": lambda T: T.linalg.matrix_norm(T.ones(2, 2, dtype=T.int64), "nuc"),
    # removed in 1.9: only torch's message saying what replaces them
    "removed_solve": lambda T: T.solve(_F(T, 2, 2), _F(T, 2, 2)),
    "removed_solve_method": lambda T: _F(T, 2, 2).solve(_F(T, 2, 2)),
    "removed_lstsq": lambda T: T.lstsq(_F(T, 2, 2), _F(T, 2, 2)),
    "removed_lstsq_method": lambda T: _F(T, 2, 2).lstsq(_F(T, 2, 2)),
    "removed_eig": lambda T: T.eig(_F(T, 2, 2), True),
    "removed_eig_method": lambda T: _F(T, 2, 2).eig(),
    "removed_symeig": lambda T: T.symeig(_F(T, 2, 2), eigenvectors=True, upper=False),
    "removed_symeig_method": lambda T: _F(T, 2, 2).symeig(),
    "removed_matrix_rank": lambda T: T.matrix_rank(_F(T, 2, 2)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_agree_with_torch(name):
    a, b = _run(wgrad, ERRORS[name]), _run(torch, ERRORS[name])
    assert isinstance(b, tuple), "torch raised nothing"
    assert a == b


def test_deprecation_warnings_are_torchs():
    for call in (lambda T: T.nuclear_norm(_t(T, _A3)),
                 lambda T: T.frobenius_norm(_t(T, _A3), (0, 1))):
        got = []
        for T in (wgrad, torch):
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                call(T)
            got.append([str(w.message).split(" (Triggered internally")[0] for w in ws])
        assert len(got[0]) == 1 and got[0][0].startswith("at::")
        assert got[1] in ([], got[0])  # torch warns once a process: maybe before this test


# -- out= (torch's dtype rule, autograd error or history) ------------------------------

def _outs(T, a, b):
    LU = T.linalg.lu_factor(a.detach())
    e, i32 = (lambda: T.empty(0, dtype=T.float64)), (lambda: T.empty(0, dtype=T.int32))
    return [T.linalg.cond(a, out=e()), T.linalg.matrix_rank(a, out=e()),
            *T.linalg.cholesky_ex(a, out=(e(), i32())), *T.linalg.inv_ex(a, out=(e(), i32())),
            *T.linalg.solve_ex(a, b, out=(e(), i32())), T.linalg.lu_solve(*LU, b, out=e()),
            T.orgqr(a, b[:, 0], out=e()), T.ormqr(a, b[:, 0], b, out=e()),
            *T.geqrf(a, out=(e(), e())), T.linalg.tensorinv(a, 1, out=e()),
            T.linalg.tensorsolve(a, b[:, 0], out=e()),
            T.linalg.ldl_solve(*T.linalg.ldl_factor(a, out=(e(), i32())), b, out=e()),
            T.nuclear_norm(a, out=e()), T.frobenius_norm(a, (0, 1), out=e())]


_SPD2 = _SPD3[:2, :2]
OUT_ERRORS = [  # torch's autograd error, and its rule for an out of another dtype
    lambda T: T.linalg.cholesky_ex(_t(T, _SPD2, rg=True), out=(T.empty(0, dtype=T.float64),
                                                                T.empty(0, dtype=T.int32))),
    lambda T: T.ormqr(_t(T, _SPD2, rg=True), _F(T, 2), _F(T, 2, 1), out=T.empty(0)),
    lambda T: T.frobenius_norm(_t(T, _SPD2, rg=True), (0, 1), out=T.empty(0)),
    lambda T: T.linalg.cond(_t(T, _SPD2), out=T.empty(0, dtype=T.int64)),
    lambda T: T.linalg.inv_ex(_t(T, _SPD2), out=(T.empty(0), T.empty(0))),
    lambda T: T.geqrf(_t(T, _SPD2), out=(T.empty(0, dtype=T.int64),) * 2),
]


def test_out_agrees_with_torch():
    a, b = (_run(T, lambda T: _outs(T, _t(T, _SPD2), _t(T, [[1.], [2.]])))
            for T in (wgrad, torch))
    assert not isinstance(a, tuple) and len(a) == len(b)
    for x, y in zip(a, b):
        assert x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-8)
    for call in OUT_ERRORS:
        r = _run(torch, call)
        assert isinstance(r, tuple) and _run(wgrad, call) == r


# -- gradients ------------------------------------------------------------------------------

def _sym(T, x):
    return x @ x.mH + 3 * T.eye(x.shape[-1], dtype=x.dtype)


def _well(T, x):
    return x + 3 * T.eye(x.shape[-1], dtype=x.dtype)


def _cond(T, a, p):
    # torch 2.13's backward of cond through the inverse raises (it fills the saved inverse
    # in place): torch's gradient here is that of its formula, norm(A) * norm(A^-1)
    if T is torch and p not in (None, 2, -2, "nuc"):
        return T.linalg.matrix_norm(a, p) * T.linalg.matrix_norm(T.linalg.inv(a), p)
    return T.linalg.cond(a, p)


def test_torchs_cond_backward_fails_where_wgrad_has_its_gradient():
    for T in (torch, wgrad):
        a = _t(T, _A3, rg=True)
        r = _run(T, lambda T: T.autograd.grad(T.linalg.cond(a, "fro"), a))
        assert (r[0] == "RuntimeError" and "inplace" in r[1]) if T is torch else \
            r[0].shape == (3, 3)


def _piv(T):  # pivots of a partially pivoted LU (rows 2 and 3 swapped, then 3 kept)
    return T.tensor([1, 3, 3], dtype=T.int32)


# name -> (fn(T, *inputs), input arrays (complex where torch takes complex), "2": gradcheck
# on the arrays and on their real parts, "1": on the arrays only, "0": none (a variant of a
# function checked in another row): each row's gradient is also compared with torch's)
GRADS = {
    **{f"cond_{p}": ((lambda p: lambda T, a: _cond(T, _well(T, a), p))(p), [_c(3, 3)], c)
       for p, c in ((None, "2"), (-2, "0"), ("fro", "1"), ("nuc", "0"), (1, "0"),
                    (-_INF, "0"))},
    "cholesky_ex": (lambda T, a: T.linalg.cholesky_ex(_sym(T, a)).L, [_c(3, 3)], "2"),
    "cholesky_ex_upper": (lambda T, a: T.linalg.cholesky_ex(_sym(T, a), upper=True).L,
                          [_c(2, 3, 3)], "0"),
    # in A itself: torch's formula with L = U^H, not the gradient in the upper triangle read
    "cholesky_ex_upper_in_A": (lambda T, a: T.linalg.cholesky_ex(a, upper=True).L,
                               [_HERM3 + 6 * np.eye(3)], "0"),
    "inv_ex": (lambda T, a: T.linalg.inv_ex(_well(T, a)).inverse, [_c(3, 3)], "1"),
    "solve_ex": (lambda T, a, b: T.linalg.solve_ex(_well(T, a), b).result,
                 [_c(2, 3, 3), _c(3, 2)], "1"),
    "solve_ex_right": (lambda T, a, b: T.linalg.solve_ex(_well(T, a), b, left=False).result,
                       [_c(3, 3), _c(2, 3)], "0"),
    # in LU itself (torch's formula for the packed factors) and in B
    "lu_solve": (lambda T, lu, b: T.linalg.lu_solve(_well(T, lu), _piv(T), b),
                 [_c(3, 3), _c(3, 2)], "2"),
    "lu_solve_right_adjoint": (lambda T, lu, b: T.linalg.lu_solve(
        _well(T, lu), _piv(T), b, left=False, adjoint=True), [_c(3, 3), _c(2, 3)], "1"),
    "householder_product": (lambda T, a, tau: T.linalg.householder_product(a, tau),
                            [_c(4, 3), _c(2)], "1"),
    "orgqr_batch": (lambda T, a, tau: T.orgqr(a, tau), [_c(2, 3, 3), _c(2, 3)], "0"),
    "ormqr": (lambda T, a, tau, c: T.ormqr(a, tau, c), [_c(4, 3), _c(3), _c(4, 2)], "2"),
    "ormqr_right_transpose": (lambda T, a, tau, c: T.ormqr(a, tau, c, False, True),
                              [_c(4, 3), _c(3), _c(2, 4)], "1"),
    "tensorinv": (lambda T, a: T.linalg.tensorinv(_well(T, a).reshape(4, 2, 2), 1), [_c(4, 4)],
                  "1"),
    "tensorsolve": (lambda T, a, b: T.linalg.tensorsolve(_well(T, a).reshape(2, 2, 4), b),
                    [_c(4, 4), _c(2, 2)], "1"),
    "nuclear_norm": (lambda T, a: T.nuclear_norm(a, (0, 2)), [_c(3, 2, 2)], "1"),
    "frobenius_norm": (lambda T, a: T.frobenius_norm(a, 1), [_c(3, 2)], "1"),
}


def _tensors(T, arrays, real=False):
    return [_t(T, a.real if real else a, rg=True) for a in arrays]


@pytest.mark.parametrize("name", sorted(n for n in GRADS if GRADS[n][2] != "0"))
def test_gradcheck(name):
    fn, arrays, checks = GRADS[name]
    for real in ((False, True) if "2" in checks else (False,)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_op(lambda *xs: fn(wgrad, *xs), _tensors(wgrad, arrays, real),
                     gradgrad=not real, fast_mode=True, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_agree_with_torch(name):
    fn, arrays = GRADS[name][:2]
    assert_grads_agree(*(grads(T, fn, _tensors(T, arrays)) for T in (wgrad, torch)))


def test_failed_cholesky_gradient_is_torchs():
    # torch applies its formula to the partial factor LAPACK left: so does wgrad
    got = []
    for T in (wgrad, torch):
        a = _t(T, _NOT_PD, rg=True)
        L = T.linalg.cholesky_ex(a).L
        got.append(T.autograd.grad((L * _t(T, _C42 @ _C24)).sum(), a)[0].numpy())
    np.testing.assert_allclose(*got, rtol=1e-6, atol=1e-8)


def _potf2_reference(a):
    """LAPACK's unblocked potf2 (lower) in numpy: what it leaves in L, and info."""
    a = np.tril(a)
    for j in range(a.shape[0]):
        ajj = a[j, j] - a[j, :j] @ a[j, :j]
        if not ajj > 0:
            a[j, j] = ajj
            return a, j + 1
        a[j, j] = np.sqrt(ajj)
        a[j + 1:, j] = (a[j + 1:, j] - a[j + 1:, :j] @ a[j, :j]) / a[j, j]
    return a, 0


def test_torchs_partial_cholesky_factor_is_potf2s_up_to_128():
    # NOTE [LAPACK's partial Cholesky factor]: what torch leaves in L where A is not
    # positive-definite is potf2's up to n = 128, a blocked algorithm's from 129 on
    for n in (128, 129):
        x = np.random.default_rng(n).standard_normal((n, n))
        a = x @ x.T + n * np.eye(n)
        a[3, 3] = -100.
        L, info = torch.linalg.cholesky_ex(torch.tensor(a))
        part, k = _potf2_reference(a)
        assert int(info) == k == 4
        assert np.allclose(L.numpy(), part, rtol=1e-9, atol=1e-9) == (n == 128)


def test_cholesky_ex_beyond_potf2_raises(monkeypatch):
    a = _NOT_PD[:3, :3]
    np.testing.assert_allclose(np.asarray(_potf2(jnp.asarray(a))[0]), _potf2_reference(a)[0])
    monkeypatch.setattr(wgrad.ops.linear_algebra, "_POTF2_MAX", 2)  # as if 3 were 129
    with pytest.raises(NotImplementedError, match="partial factor"):
        wgrad.linalg.cholesky_ex(wgrad.tensor(a))
    with pytest.raises(wgrad.linalg.LinAlgError, match="order 3 is not positive-definite"):
        wgrad.linalg.cholesky_ex(wgrad.tensor(a), check_errors=True)
    assert int(wgrad.linalg.cholesky_ex(wgrad.tensor(a[:2, :2])).info) == 0


# ops without a derivative in torch: backward (and forward AD) raise torch's error
@pytest.mark.parametrize("call", [
    lambda T, a: T.linalg.ldl_factor(a)[0],
    lambda T, a: T.linalg.ldl_factor_ex(a, hermitian=True)[0],
    lambda T, a: T.linalg.ldl_solve(*T.linalg.ldl_factor(a.detach()), a),
    lambda T, a: T.geqrf(a)[0],
    lambda T, a: T.geqrf(a)[1],
])
def test_no_derivative_raises_as_torch(call):
    def backward(T):
        a = _t(T, _SYM3, rg=True)
        r = call(T, a)
        assert r.requires_grad and type(r.grad_fn).__name__ == type(
            call(torch, _t(torch, _SYM3, rg=True)).grad_fn).__name__
        r.sum().backward()
    r = _run(wgrad, backward)
    assert r[0] in ("RuntimeError", "NotImplementedError") and r == _run(torch, backward)


@pytest.mark.parametrize("call", [
    lambda T, a: T.linalg.ldl_factor(a)[0],
    lambda T, a: T.linalg.ldl_solve(*T.linalg.ldl_factor(_t(T, _SYM3)), a),
    lambda T, a: T.geqrf(a)[0],
    lambda T, a: T.ormqr(*T.geqrf(_t(T, _SYM3)), a),
])
def test_forward_ad_raises_as_torch(call):
    def tangent(T):
        fw = T.autograd.forward_ad
        with fw.dual_level():
            d = fw.make_dual(_t(T, _SYM3), _t(T, np.ones((3, 3))))
            return fw.unpack_dual(call(T, d)).tangent
    r = _run(wgrad, tangent)
    assert r[0] == "NotImplementedError" and r == _run(torch, tangent)


def test_ldl_factor_of_a_singular_matrix_raises():
    # torch 2.13 fails an internal assert here ("Unknown error code: 1."): the same type and
    # code, with what it means
    for T in (wgrad, torch):
        with pytest.raises(RuntimeError, match="Unknown error code: 1"):
            T.linalg.ldl_factor(T.zeros(2, 2, dtype=T.float64))
        with pytest.raises(RuntimeError, match="Unknown error code: 1"):
            T.linalg.ldl_factor_ex(T.zeros(2, 2, dtype=T.float64), check_errors=True)


def test_ldl_is_not_traced():
    # its pivoting is decided on the host (values), so it cannot run under jit/vmap
    with pytest.raises(NotImplementedError, match="cannot be traced"):
        wgrad.func.vmap(lambda a: wgrad.linalg.ldl_factor(a)[0])(wgrad.tensor(
            np.stack([_SYM3, _INDEF])))


# the new primitive (cholesky_ex's, with LAPACK's info and partial factor) against the JAX
# identity backward(g) == conj(jax.vjp(conj g)) on complex128, where it factors
def _jsym(x):
    return x @ jnp.conj(jnp.swapaxes(x, -1, -2)) + 3 * jnp.eye(x.shape[-1])


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_jax_identity(upper):
    def jfn(x):
        L = jnp.linalg.cholesky(_jsym(x))
        return jnp.conj(jnp.swapaxes(L, -1, -2)) if upper else L
    assert_jax_identity(lambda x: wgrad.linalg.cholesky_ex(_sym(wgrad, x), upper=upper).L, jfn,
                        _tensors(wgrad, [_c(2, 3, 3)]))
