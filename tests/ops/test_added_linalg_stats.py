"""torch's older linear-algebra functions (cholesky, cholesky_solve, cholesky_inverse,
triangular_solve, lu, lu_solve, lu_unpack, qr, svd, addr(_), vander) and the statistics
(cov, corrcoef, quantile, nanquantile, mode, msort, histc, renorm(_), combinations),
each against torch itself: values and dtypes, errors, gradients (gradcheck and
gradgradcheck on float64 and complex128, and the gradient torch gives)."""
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from _outcome import arrays as _run, assert_arrays_agree, assert_grads_agree, grads
from wgrad.testing import assert_jax_identity, check_op

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(11)
_NAN = float("nan")


def _randn(*shape, cplx=False):
    a = _RNG.standard_normal(shape)
    return a + 1j * _RNG.standard_normal(shape) if cplx else a


def _spd(n, batch=(), cplx=False):
    a = _randn(*batch, n, n, cplx=cplx)
    return a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)


_S3, _S3B, _S2C = _spd(3), _spd(3, (2,)), _spd(2, cplx=True)
_L3, _L2C = np.linalg.cholesky(_S3), np.linalg.cholesky(_S2C)
_L3B = np.linalg.cholesky(_S3B)
_U3 = np.triu(_randn(3, 3), 1) + np.diag([3., -2.5, 4.])  # well conditioned
_A3, _A34, _A43, _A3C = _randn(3, 3), _randn(3, 4), _randn(4, 3), _randn(3, 3, cplx=True)
_A233 = _randn(2, 3, 3)
_B31, _B32, _B232, _B3C = _randn(3, 1), _randn(3, 2), _randn(2, 3, 2), _randn(3, 2, cplx=True)
_X24 = _randn(2, 4)
_X35 = _randn(3, 5)
_X232, _H50 = _randn(2, 3, 2), _randn(50) * 10
_Q = np.array([[0., 1., 2., 7., 2.5], [2., _NAN, 0.5, 3., 1.], [4., 4., 1., 0., 9.]])
_MODE = np.array([[3, 1, 3, 1, 2], [2, 2, 0, 5, 5], [7, 7, 7, 1, 1]])
_SING = np.array([[1., 2., 3.], [2., 4., 6.], [1., 0., 1.]])


def _t(T, a, dtype=None, rg=False):
    a = np.asarray(a)
    if dtype is None:
        dtype = T.complex128 if a.dtype.kind == "c" else T.float64 if a.dtype.kind == "f" \
            else T.int64 if a.dtype.kind in "iu" else T.bool
    return T.tensor(a, dtype=dtype, requires_grad=rg)


def _svd_parts(T, r):
    # singular vectors up to a phase: S, the reconstruction and the projector U U^H
    U, S, V = r
    k = S.shape[-1]
    U, V = U[..., :k], V[..., :k]
    return S, (U * S.unsqueeze(-2).to(U.dtype)) @ V.mH, U @ U.mH


def _lu_solve(T, A, b):
    LU, piv = T.lu(_t(T, A))
    return T.lu_solve(_t(T, b), LU, piv)


# name -> fn(T): compared value by value (shape, dtype, values) between wgrad and torch
VALUES = {
    "cholesky": lambda T: (T.cholesky(_t(T, _S3)), T.cholesky(_t(T, _S3), upper=True),
                           T.cholesky(_t(T, _S3B)), T.cholesky(_t(T, _S2C), True),
                           T.cholesky(_t(T, _S3, T.float32))),
    # the lower triangle only (upper: the upper one), as LAPACK's potrf
    "cholesky_one_triangle": lambda T: (T.cholesky(_t(T, np.tril(_S3) + 5 * np.triu(_A3, 1))),
                                        T.cholesky(_t(T, np.triu(_S3)), upper=True)),
    "cholesky_solve": lambda T: (T.cholesky_solve(_t(T, _B32), _t(T, _L3)),
                                 T.cholesky_solve(_t(T, _B32), _t(T, _L3.T), upper=True),
                                 T.cholesky_solve(_t(T, _B232), _t(T, _L3)),
                                 T.cholesky_solve(_t(T, _B32), _t(T, _L3B)),
                                 T.cholesky_solve(_t(T, _B3C[:2]), _t(T, _L2C)),
                                 T.cholesky_solve(_t(T, _B32, T.float32),
                                                  _t(T, _L3, T.float32))),
    "cholesky_inverse": lambda T: (T.cholesky_inverse(_t(T, _L3)),
                                   T.cholesky_inverse(_t(T, _L3.T), upper=True),
                                   T.cholesky_inverse(_t(T, _L3B)),
                                   T.cholesky_inverse(_t(T, _L2C)),
                                   T.cholesky_inverse(_t(T, _L2C.conj().T), True)),
    "triangular_solve": lambda T: (
        *T.triangular_solve(_t(T, _B32), _t(T, _U3)),
        T.triangular_solve(_t(T, _B32), _t(T, _U3.T), upper=False)[0],
        T.triangular_solve(_t(T, _B32), _t(T, _U3), transpose=True)[0],
        T.triangular_solve(_t(T, _B32), _t(T, _A3), unitriangular=True)[0],
        T.triangular_solve(_t(T, _B32), _t(T, _A3), False, True, True)[0],
        *T.triangular_solve(_t(T, _B232), _t(T, _U3)),  # broadcast: the copy too
        T.triangular_solve(_t(T, _B3C), _t(T, np.triu(_A3C) + 3 * np.eye(3)))[0]),
    "triangular_solve_type": lambda T: np.array(
        type(T.triangular_solve(_t(T, _B32), _t(T, _U3))).__name__),
    "lu": lambda T: (*T.lu(_t(T, _A3)), *T.lu(_t(T, _A34)), *T.lu(_t(T, _A43)),
                     *T.lu(_t(T, _A233)), *T.lu(_t(T, _A3C)), *T.lu(_t(T, _A3, T.float32))),
    "lu_infos": lambda T: (*T.lu(_t(T, _SING), get_infos=True),
                           T.lu(_t(T, np.zeros((2, 2, 2))), get_infos=True)[2],
                           T.lu(_t(T, np.stack([_A3, _SING])), get_infos=True)[2]),
    "lu_unpack": lambda T: (*T.lu_unpack(*T.lu(_t(T, _A3))), *T.lu_unpack(*T.lu(_t(T, _A34))),
                            *T.lu_unpack(*T.lu(_t(T, _A43))),
                            *T.lu_unpack(*T.lu(_t(T, _A233))),
                            *T.lu_unpack(*T.lu(_t(T, _A3C))),
                            *T.lu_unpack(*T.lu(_t(T, _A3)), unpack_data=False),
                            *T.lu_unpack(*T.lu(_t(T, _A3)), unpack_pivots=False)),
    "lu_solve": lambda T: (_lu_solve(T, _A3, _B32), _lu_solve(T, _A233, _B232),
                           _lu_solve(T, _A3, _B232), _lu_solve(T, _A3C, _B3C),
                           T.lu_solve(_t(T, _B232[:, :, :1]), *T.lu(_t(T, _A233)))),
    "qr": lambda T: (*T.qr(_t(T, _A43)), *T.qr(_t(T, _A43), some=False), *T.qr(_t(T, _A34)),
                     *T.qr(_t(T, _A3C)), *T.qr(_t(T, _A233))),
    "svd": lambda T: (*_svd_parts(T, T.svd(_t(T, _A43))),
                      *_svd_parts(T, T.svd(_t(T, _A34), some=False)),
                      *_svd_parts(T, T.svd(_t(T, _A3C))), *_svd_parts(T, T.svd(_t(T, _A233))),
                      *[x.shape for x in T.svd(_t(T, _A43), some=False)],
                      *T.svd(_t(T, _A43), compute_uv=False),
                      *T.svd(_t(T, _A233), compute_uv=False)),
    "addr": lambda T: (T.addr(_t(T, _X24[:, :3]), _t(T, _X24[0, :2]), _t(T, _X35[0, :3])),
                       T.addr(_t(T, _X24[0, :3]), _t(T, _X24[1, :2]), _t(T, _X35[1, :3]),
                              beta=0.5, alpha=2),
                       T.addr(_t(T, np.full((2, 1), _NAN)), _t(T, [1., 2.]), _t(T, [1., 3.]),
                              beta=0),
                       T.addr(_t(T, [[1, 2]]), _t(T, [1, 2]), _t(T, [3, 4]), beta=2, alpha=3),
                       T.addr(_t(T, [[1, 2]]), _t(T, [1., 2.], T.float32), _t(T, [3, 4])),
                       T.addr(_t(T, [[True, False]]), _t(T, [True, False]),
                              _t(T, [False, True])),
                       T.addr(_t(T, [[True, False]]), _t(T, [True, False]),
                              _t(T, [False, True]), beta=0),
                       T.addr(_t(T, [[1j, 2.]]), _t(T, [1., 2.]), _t(T, [3., 4.]), alpha=1j),
                       _t(T, np.ones((2, 3))).addr(_t(T, [1., 2.]), _t(T, [1., 2., 3.])),
                       _t(T, np.ones((2, 3))).addr_(_t(T, [1., 2.]), _t(T, [1., 2., 3.]),
                                                    alpha=2)),
    "vander": lambda T: (T.vander(_t(T, [1., 2., 3.])), T.vander(_t(T, [1., 2., -3.]), 4, True),
                         T.vander(_t(T, [1, 2, 3]), 2), T.vander(_t(T, [True, False])),
                         T.vander(_t(T, [1., 2.], T.float16)), T.vander(_t(T, [1., 2.]), 0),
                         T.vander(_t(T, [1., 2.]), 1), T.vander(_t(T, np.zeros(0))),
                         T.vander(_t(T, [1j, 2.]))),
    "cov": lambda T: (T.cov(_t(T, _X35)), T.cov(_t(T, _X35[0])), T.cov(_t(T, _X35), correction=0),
                      T.cov(_t(T, _X35), correction=2), T.cov(_t(T, _X35, T.float32)),
                      T.cov(_t(T, [[1, 2, 4], [0, 3, 3]])),
                      T.cov(_t(T, _X35), fweights=_t(T, [1, 2, 1, 3, 1])),
                      T.cov(_t(T, _X35), aweights=_t(T, [0.5, 1., 2., 1., 0.2])),
                      T.cov(_t(T, _X35), fweights=_t(T, [1, 2, 1, 3, 1], T.int32),
                            aweights=_t(T, [0.5, 1., 2., 1., 0.2]), correction=0),
                      T.cov(_t(T, _X35, T.float32), aweights=_t(T, [0.5, 1., 2., 1., 0.2])),
                      T.cov(_t(T, _X35 + 1j * _X35[::-1]))),
    "cov_no_degrees_of_freedom": lambda T: (T.cov(_t(T, _X35), correction=5),
                                            T.cov(_t(T, 3.)), T.cov(_t(T, np.ones((2, 0))))),
    "corrcoef": lambda T: (T.corrcoef(_t(T, _X35)), T.corrcoef(_t(T, _X35[0])),
                           T.corrcoef(_t(T, [[1, 2, 4], [0, 3, 3]])),
                           T.corrcoef(_t(T, _X35 + 1j * _X35[::-1])),
                           T.corrcoef(_t(T, np.ones((2, 3))))),
    **{f"quantile_{mode}": (lambda mode: lambda T: (
        T.quantile(_t(T, _Q), _t(T, [0., 0.25, 0.5, 0.6, 1.]), dim=1, interpolation=mode),
        T.nanquantile(_t(T, _Q), _t(T, [0., 0.25, 0.5, 0.6, 1.]), dim=1,
                      interpolation=mode)))(mode)
        for mode in ("linear", "lower", "higher", "midpoint", "nearest")},
    "quantile_shapes": lambda T: (
        T.nanquantile(_t(T, _Q), 0.4, 0, True), T.quantile(_t(T, _Q[::2]), 0.75),
        T.nanquantile(_t(T, _Q), _t(T, [0.3, 0.7]), keepdim=True),
        T.quantile(_t(T, _Q[::2], T.float32), _t(T, [0.3, 0.7], T.float32), -1,
                   interpolation="midpoint"),
        T.nanquantile(_t(T, [_NAN, _NAN]), _t(T, [0.5])), T.quantile(_t(T, 3.), 0.5, 0),
        T.quantile(_t(T, 3.), _t(T, [0.2, 0.5]), 0, True),
        T.quantile(_t(T, _Q), _t(T, np.zeros(0)), 1)),
    "quantile_method": lambda T: _t(T, _Q).nanquantile(0.5, 1),
    "mode": lambda T: (*T.mode(_t(T, _MODE)), *T.mode(_t(T, _MODE), 0),
                       *T.mode(_t(T, _MODE.astype(float)), 1, True), *T.mode(_t(T, 3.)),
                       *T.mode(_t(T, [True, False, True])), *T.mode(_t(T, [0., -0., 1.])),
                       *T.mode(_t(T, np.ones((2, 0))), 0),
                       *_t(T, [5., 1., 2., 3.]).mode(),
                       np.array(type(T.mode(_t(T, _MODE))).__name__)),
    "mode_random": lambda T: T.mode(_t(T, np.random.default_rng(3).integers(0, 4, (40, 9))), 1),
    "msort": lambda T: (T.msort(_t(T, _MODE)), T.msort(_t(T, 3.)), _t(T, _Q).msort()),
    "histc": lambda T: (T.histc(_t(T, [1., 2., 1., 4., 2.5, 6., -1.], T.float32), bins=4),
                        T.histc(_t(T, [1., 2., 1., 4., 2.5, 6., -1.]), bins=4, min=0, max=3),
                        T.histc(_t(T, np.ones(3)), bins=4),
                        T.histc(_t(T, [1., _NAN, 3.]), bins=4, min=0, max=3),
                        T.histc(_t(T, np.ones(0)), bins=3),
                        T.histc(_t(T, _H50, T.float32), bins=7, min=-3.3, max=8.1),
                        T.histc(_t(T, np.arange(0, 1.01, 0.1)), bins=10, min=0, max=1),
                        _t(T, np.arange(0, 1.01, 0.1), T.float32).histc(3),
                        T.histc(_t(T, [1., 2.], T.float16), bins=3)),
    "renorm": lambda T: (T.renorm(_t(T, _X35), 2, 0, 2.), T.renorm(_t(T, _X35), 1, 1, 1.5),
                         T.renorm(_t(T, _X35), math.inf, 0, 1.),
                         T.renorm(_t(T, _X232), 3, -1, 1.),
                         T.renorm(_t(T, _X35 + 1j * _X35[::-1]), 2, 0, 1.),
                         T.renorm(_t(T, _X35, T.float32), 0.5, 0, 1),
                         T.renorm(_t(T, _X35), 2, 0, 0.), _t(T, _X35).renorm(2, 1, 1.),
                         _t(T, _X35).renorm_(2, 1, 1.)),
    "combinations": lambda T: (T.combinations(_t(T, [1., 2., 3., 4.])),
                               T.combinations(_t(T, [1, 2, 3]), 3),
                               T.combinations(_t(T, [1, 2, 3]), 4),
                               T.combinations(_t(T, [1, 2, 3]), 0),
                               T.combinations(_t(T, [1j, 2., 3.]), 1),
                               T.combinations(_t(T, [1., 2., 3.]), 2, with_replacement=True),
                               T.combinations(_t(T, [True, False]), 3, True),
                               T.combinations(_t(T, np.zeros(0)))),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_agree_with_torch(name):
    assert_arrays_agree(_run(wgrad, VALUES[name]), _run(torch, VALUES[name]))


def test_deprecation_warnings_are_torchs():
    A = _spd(2)
    LU = torch.linalg.lu_factor(torch.tensor(A))
    calls = (lambda T: T.cholesky(_t(T, A)), lambda T: T.qr(_t(T, A)),
             lambda T: T.lu(_t(T, A)), lambda T: T.triangular_solve(_t(T, A), _t(T, A)),
             lambda T: T.lu_solve(_t(T, A), _t(T, LU[0].numpy()),
                                  T.tensor(LU[1].numpy(), dtype=T.int32)))
    for name, call in zip(("cholesky", "qr", "lu", "triangular_solve", "lu_solve"), calls):
        got = []
        for T in (wgrad, torch):
            with warnings.catch_warnings(record=True) as ws:
                warnings.simplefilter("always")
                call(T)
            got.append([str(w.message).split(" (Triggered internally")[0] for w in ws])
        assert len(got[0]) == 1 and got[0][0].startswith(f"torch.{name} is deprecated")
        assert got[1] in ([], got[0])  # torch warns once a process: maybe before this test


ERRORS = {
    "cholesky_1d": lambda T: T.cholesky(_t(T, [1., 2.])),
    "cholesky_rect": lambda T: T.cholesky(_t(T, _A34)),
    "cholesky_long": lambda T: T.cholesky(_t(T, [[1, 0], [0, 1]])),
    "cholesky_not_pd": lambda T: T.cholesky(_t(T, -_S3)),
    "cholesky_not_pd_batch": lambda T: T.cholesky(_t(T, np.stack([_S3, _S3 - 9 * np.eye(3)]))),
    "cholesky_solve_dtype": lambda T: T.cholesky_solve(_t(T, _B32, T.float32), _t(T, _L3)),
    "cholesky_solve_1d_b": lambda T: T.cholesky_solve(_t(T, [1., 2.]), _t(T, [1., 2.])),
    "cholesky_solve_1d_L": lambda T: T.cholesky_solve(_t(T, _B32), _t(T, [1., 2.])),
    "cholesky_solve_sizes": lambda T: T.cholesky_solve(_t(T, _B32[:2]), _t(T, _L3)),
    "cholesky_solve_rect": lambda T: T.cholesky_solve(_t(T, _B32), _t(T, _A34)),
    "cholesky_solve_long": lambda T: T.cholesky_solve(_t(T, [[1], [1]]), _t(T, [[1, 0], [0, 1]])),
    "cholesky_solve_batch": lambda T: T.cholesky_solve(_t(T, np.ones((3, 3, 1))), _t(T, _L3B)),
    "cholesky_inverse_1d": lambda T: T.cholesky_inverse(_t(T, [1., 2.])),
    "cholesky_inverse_rect": lambda T: T.cholesky_inverse(_t(T, _A34)),
    "cholesky_inverse_long": lambda T: T.cholesky_inverse(_t(T, [[1, 0], [0, 1]])),
    "triangular_solve_1d": lambda T: T.triangular_solve(_t(T, [1., 2., 3.]), _t(T, _U3)),
    "triangular_solve_1d_A": lambda T: T.triangular_solve(_t(T, _B32), _t(T, [1., 2.])),
    "triangular_solve_dtype": lambda T: T.triangular_solve(_t(T, _B32, T.float32), _t(T, _U3)),
    "triangular_solve_rect": lambda T: T.triangular_solve(_t(T, _B32), _t(T, _A34)),
    "triangular_solve_sizes": lambda T: T.triangular_solve(_t(T, _B32[:2]), _t(T, _U3)),
    "triangular_solve_long": lambda T: T.triangular_solve(_t(T, [[1], [1]]),
                                                          _t(T, [[1, 0], [0, 1]])),
    "triangular_solve_batch": lambda T: T.triangular_solve(_t(T, np.ones((2, 3, 1))),
                                                           _t(T, np.ones((3, 3, 3)))),
    "lu_1d": lambda T: T.lu(_t(T, [1., 2.])),
    "lu_no_pivot": lambda T: T.lu(_t(T, _A3), pivot=False),
    "lu_long": lambda T: T.lu(_t(T, [[1, 0], [0, 1]])),
    "lu_unpack_1d": lambda T: T.lu_unpack(_t(T, [1., 2.]), _t(T, [1, 2], T.int32)),
    "lu_unpack_pivots_dtype": lambda T: T.lu_unpack(_t(T, _A3), _t(T, [1, 2, 3])),
    "lu_unpack_pivots_range": lambda T: T.lu_unpack(_t(T, _A3), _t(T, [1, 4, 3], T.int32)),
    "lu_unpack_pivots_zero": lambda T: T.lu_unpack(_t(T, _A3), _t(T, [0, 2, 3], T.int32)),
    "lu_solve_long": lambda T: T.lu_solve(_t(T, [[1], [1]]), _t(T, [[1, 0], [0, 1]]),
                                          _t(T, [1, 2], T.int32)),
    "lu_solve_1d_LU": lambda T: T.lu_solve(_t(T, _B31), _t(T, [1., 2.]), _t(T, [1], T.int32)),
    "lu_solve_rect": lambda T: T.lu_solve(_t(T, _B31), _t(T, _A34), _t(T, [1, 2, 3], T.int32)),
    "lu_solve_1d_b": lambda T: T.lu_solve(_t(T, [1., 2., 3.]), *T.lu(_t(T, _A3))),
    "lu_solve_dtype": lambda T: T.lu_solve(_t(T, _B31, T.float32), *T.lu(_t(T, _A3))),
    "lu_solve_pivots_dtype": lambda T: T.lu_solve(_t(T, _B31), _t(T, _A3), _t(T, [1, 2, 3])),
    "lu_solve_pivots_count": lambda T: T.lu_solve(_t(T, _B31), _t(T, _A3),
                                                  _t(T, [1, 2], T.int32)),
    "lu_solve_pivots_batch": lambda T: T.lu_solve(_t(T, _B31), _t(T, _A233),
                                                  _t(T, [1, 2, 3], T.int32)),
    "lu_solve_sizes": lambda T: T.lu_solve(_t(T, _B32[:2]), *T.lu(_t(T, _A3))),
    "lu_solve_pivots_high": lambda T: T.lu_solve(_t(T, _B31), _t(T, _A3),
                                                 _t(T, [1, 5, 3], T.int32)),
    "lu_solve_pivots_low": lambda T: T.lu_solve(_t(T, _B31), _t(T, _A3),
                                                _t(T, [1, -1, 3], T.int32)),
    "lu_solve_batch": lambda T: T.lu_solve(_t(T, np.ones((4, 3, 1))), *T.lu(_t(T, _A233))),
    "qr_1d": lambda T: T.qr(_t(T, [1., 2.])),
    "qr_long": lambda T: T.qr(_t(T, [[1, 0], [0, 1]])),
    "svd_1d": lambda T: T.svd(_t(T, [1., 2.])),
    "svd_long": lambda T: T.svd(_t(T, [[1, 0], [0, 1]])),
    "addr_vec1_2d": lambda T: T.addr(_t(T, _X24), _t(T, _X24), _t(T, [1., 2.])),
    "addr_vec2_2d": lambda T: T.addr(_t(T, _X24), _t(T, [1., 2.]), _t(T, _X24)),
    "addr_expand": lambda T: T.addr(_t(T, np.ones((3, 2))), _t(T, [1., 2.]), _t(T, [1., 2.])),
    "addr_int_beta": lambda T: T.addr(_t(T, [[1]]), _t(T, [1]), _t(T, [1]), beta=1.5),
    "addr_int_alpha": lambda T: T.addr(_t(T, [[1]]), _t(T, [1]), _t(T, [1]), alpha=0.5),
    "addr_complex_alpha": lambda T: T.addr(_t(T, [[1.]]), _t(T, [1.]), _t(T, [1.]), alpha=1j),
    "addr_bool_beta": lambda T: T.addr(_t(T, [[1]]), _t(T, [1]), _t(T, [1]), beta=True),
    "addr_bool_alpha": lambda T: T.addr(_t(T, [[1.]]), _t(T, [1.]), _t(T, [1.]), alpha=False),
    "addr_bool_float_beta": lambda T: T.addr(_t(T, [[True]]), _t(T, [True]), _t(T, [True]),
                                             beta=1.5),
    "addr_inplace_cast": lambda T: _t(T, [[1, 2]]).addr_(_t(T, [1.]), _t(T, [1., 2.])),
    "vander_2d": lambda T: T.vander(_t(T, _X24)),
    "vander_0d": lambda T: T.vander(_t(T, 1.)),
    "vander_negative_N": lambda T: T.vander(_t(T, [1., 2.]), -1),
    "cov_3d": lambda T: T.cov(_t(T, np.ones((2, 2, 2)))),
    "cov_bool": lambda T: T.cov(_t(T, [True, False])),
    "cov_correction_float": lambda T: T.cov(_t(T, _X35), correction=0.5),
    "cov_fweights_2d": lambda T: T.cov(_t(T, _X35), fweights=_t(T, np.ones((1, 5)))),
    "cov_fweights_float": lambda T: T.cov(_t(T, _X35), fweights=_t(T, np.ones(5))),
    "cov_fweights_bool": lambda T: T.cov(_t(T, _X35), fweights=_t(T, np.ones(5, bool))),
    "cov_fweights_numel": lambda T: T.cov(_t(T, _X35), fweights=_t(T, [1, 2])),
    "cov_fweights_negative": lambda T: T.cov(_t(T, _X35), fweights=_t(T, [1, 2, -1, 1, 1])),
    "cov_aweights_long": lambda T: T.cov(_t(T, _X35), aweights=_t(T, [1, 2, 1, 1, 1])),
    "cov_aweights_complex": lambda T: T.cov(_t(T, _X35), aweights=_t(T, np.ones(5) * 1j)),
    "cov_aweights_numel": lambda T: T.cov(_t(T, _X35), aweights=_t(T, [1., 2.])),
    "cov_aweights_negative": lambda T: T.cov(_t(T, _X35), aweights=_t(T, [1., 2., -1, 1, 1])),
    "cov_weights_zero": lambda T: T.cov(_t(T, _X35), fweights=_t(T, np.zeros(5, np.int64))),
    "corrcoef_3d": lambda T: T.corrcoef(_t(T, np.ones((2, 2, 2)))),
    "quantile_empty": lambda T: T.quantile(_t(T, np.ones((2, 0))), 0.5, 1),
    "quantile_q_2d": lambda T: T.quantile(_t(T, _Q), _t(T, [[0.5]])),
    "quantile_long": lambda T: T.quantile(_t(T, [1, 2]), 0.5),
    "quantile_complex": lambda T: T.quantile(_t(T, [1j, 2.]), 0.5),
    "quantile_q_dtype": lambda T: T.quantile(_t(T, _Q), _t(T, [0.5], T.float32)),
    "quantile_q_high": lambda T: T.quantile(_t(T, _Q), 1.5),
    "quantile_q_low": lambda T: T.nanquantile(_t(T, _Q), -0.1),
    "quantile_q_nan": lambda T: T.quantile(_t(T, _Q), _NAN),
    "quantile_q_tensor_range": lambda T: T.quantile(_t(T, _Q), _t(T, [0.5, 1.5])),
    "quantile_q_tensor_nan": lambda T: T.nanquantile(_t(T, _Q), _t(T, [0.5, _NAN])),
    "quantile_mode": lambda T: T.quantile(_t(T, _Q), 0.5, interpolation="mean"),
    "quantile_mode_order": lambda T: T.quantile(_t(T, _Q), _t(T, [2.]), interpolation="x"),
    "quantile_dim": lambda T: T.quantile(_t(T, _Q), 0.5, dim=2),
    "mode_complex": lambda T: T.mode(_t(T, [1j, 2.])),
    "mode_empty_dim": lambda T: T.mode(_t(T, np.ones((2, 0))), 1),
    "mode_dim": lambda T: T.mode(_t(T, _MODE), 2),
    "msort_complex": lambda T: T.msort(_t(T, [1j, 2.])),
    "histc_bins_zero": lambda T: T.histc(_t(T, [1., 2.]), bins=0),
    "histc_bins_float": lambda T: T.histc(_t(T, [1., 2.]), bins=2.5),
    "histc_min_max": lambda T: T.histc(_t(T, [1., 2.]), min=3, max=1),
    "histc_long": lambda T: T.histc(_t(T, [1, 2]), bins=3),
    "histc_bool": lambda T: T.histc(_t(T, [True, False]), bins=3),
    "histc_complex": lambda T: T.histc(_t(T, [1j, 2.]), min=0, max=1),
    "histc_complex_data_range": lambda T: T.histc(_t(T, [1j, 2.])),
    "histc_infinite": lambda T: T.histc(_t(T, [1., math.inf]), bins=4),
    "histc_infinite_arg": lambda T: T.histc(_t(T, [1., 2.]), min=1.23456789, max=math.inf),
    "histc_nan_arg": lambda T: T.histc(_t(T, [1., 2.]), min=_NAN, max=1),
    "renorm_1d": lambda T: T.renorm(_t(T, [1., 2.]), 2, 0, 1.),
    "renorm_p_zero": lambda T: T.renorm(_t(T, _X35), 0, 0, 1.),
    "renorm_maxnorm": lambda T: T.renorm(_t(T, _X35), 2, 0, -1.5),
    "renorm_dim": lambda T: T.renorm(_t(T, _X35), 2, 2, 1.),
    "renorm_long": lambda T: T.renorm(_t(T, [[1, 2]]), 2, 0, 1.),
    "combinations_2d": lambda T: T.combinations(_t(T, _X24)),
    "combinations_0d": lambda T: T.combinations(_t(T, 1.)),
    "combinations_negative_r": lambda T: T.combinations(_t(T, [1., 2.]), -1),
    "combinations_float_r": lambda T: T.combinations(_t(T, [1., 2.]), 1.5),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_agree_with_torch(name):
    a, b = _run(wgrad, ERRORS[name]), _run(torch, ERRORS[name])
    assert isinstance(b, tuple), "torch raised nothing"
    assert a == b


# -- where wgrad raises and torch does not (documented: wgrad never differs silently) ----

def test_mode_with_nan_raises():
    # torch's CPU mode sorts with a comparison NaN breaks ([2, 2, nan, 1, 1, 1] gives 2)
    with pytest.raises(NotImplementedError, match="NaN"):
        wgrad.mode(wgrad.tensor([2., 2., _NAN, 1., 1., 1.]))


def test_lu_unpack_pivots_of_another_shape_raise():
    # torch reads past short pivots (or crashes on batched ones)
    with pytest.raises(RuntimeError, match="expected LU_pivots of shape"):
        wgrad.lu_unpack(wgrad.ones(3, 3), wgrad.tensor([1, 2], dtype=wgrad.int32))


def test_histc_is_not_differentiable():
    x = wgrad.tensor([1., 2., 3.], requires_grad=True)
    assert not wgrad.histc(x, 3).requires_grad


# -- gradients ------------------------------------------------------------------------------

def _sym(T, x):
    return x @ x.mH + 3 * T.eye(x.shape[-1], dtype=x.dtype)


def _lower(T, x, upper=False):
    # a Cholesky factor: a triangle with a real, positive diagonal
    d = T.diag_embed(x.diagonal(0, -2, -1).real.abs() + 2).to(x.dtype)
    return (x.triu(1) if upper else x.tril(-1)) + d


def _svd_loss(T, out):
    # a loss independent of the singular vectors' phases
    U, S, V = out
    return S, (U * S.unsqueeze(-2).to(U.dtype)) @ V.mH, (U @ U.mH).abs()


def _c(*shape):
    return _randn(*shape, cplx=True)


_NANS = _randn(5, 2)
_NANS[1, 0] = _NANS[3, 1] = _NAN

# name -> (fn(T, *inputs), input arrays (complex where torch takes complex), checks: "2"
# gradcheck on the arrays and on their real parts, "1" on the arrays only (a variant of an
# op checked on both), "gg": also gradgradcheck (the new formulas)
GRADS = {
    "cholesky": (lambda T, x: T.cholesky(_sym(T, x)), [_c(3, 3)], "2"),
    "cholesky_upper": (lambda T, x: T.cholesky(_sym(T, x), upper=True), [_c(2, 3, 3)], "1"),
    "cholesky_solve": (lambda T, b, x: T.cholesky_solve(b, _lower(T, x)), [_c(3, 2), _c(3, 3)],
                       "2gg"),
    "cholesky_solve_upper": (lambda T, b, x: T.cholesky_solve(b, _lower(T, x, True), True),
                             [_c(2, 3, 2), _c(3, 3)], "1"),
    "cholesky_inverse": (lambda T, x: T.cholesky_inverse(_lower(T, x)), [_c(3, 3)], "2gg"),
    "cholesky_inverse_upper": (lambda T, x: T.cholesky_inverse(_lower(T, x, True), True),
                               [_c(2, 3, 3)], "1"),
    "triangular_solve": (lambda T, b, a: T.triangular_solve(b, a.triu() + 3 * T.eye(
        3, dtype=a.dtype)), [_c(3, 2), _c(3, 3)], "2gg"),
    "triangular_solve_lower_t": (lambda T, b, a: T.triangular_solve(
        b, a.tril() + 3 * T.eye(3, dtype=a.dtype), upper=False, transpose=True),
        [_c(2, 3, 2), _c(3, 3)], "1"),
    "triangular_solve_unit": (lambda T, b, a: T.triangular_solve(b, a, unitriangular=True)[0],
                              [_c(3, 2), _c(3, 3)], "1"),
    "lu": (lambda T, a: T.lu(a)[0], [_c(3, 3)], "2gg"),
    "lu_wide": (lambda T, a: T.lu(a)[0], [_c(2, 4)], "1"),
    "lu_tall": (lambda T, a: T.lu(a)[0], [_c(2, 4, 3)], "1"),
    "lu_unpack": (lambda T, a: T.lu_unpack(*T.lu(a))[1:], [_c(4, 3)], "2"),
    "lu_solve": (lambda T, b, a: T.lu_solve(b, *T.lu(a)), [_c(3, 2), _c(2, 3, 3)], "2"),
    "qr": (lambda T, a: tuple(T.qr(a)), [_c(4, 3)], "2"),
    "svd": (lambda T, a: _svd_loss(T, T.svd(a)), [_c(3, 2)], "2"),
    "svd_values": (lambda T, a: T.svd(a, compute_uv=False)[1], [_c(2, 3)], "1"),
    "addr": (lambda T, i, a, b: T.addr(i, a, b, beta=0.5, alpha=2), [_c(2, 1), _c(2), _c(3)],
             "2"),
    "addr_inplace": (lambda T, i, a, b: (i * 1).addr_(a, b, beta=0, alpha=3),
                     [_c(2, 3), _c(2), _c(3)], "1"),
    "cov": (lambda T, x: T.cov(x, correction=0), [_c(2, 4)], "2"),
    "cov_weights": (lambda T, x, w: T.cov(x, fweights=T.tensor([1, 2, 1, 3]),
                                          aweights=w.abs() + 0.1), [_randn(2, 4), _randn(4)],
                    "1"),
    "corrcoef": (lambda T, x: T.corrcoef(x), [_c(3, 4)], "2"),
    "quantile": (lambda T, x, q: T.quantile(x, q.sigmoid(), 1), [_randn(2, 5), _randn(3)],
                 "1"),
    "quantile_midpoint": (lambda T, x: T.quantile(x, 0.3, interpolation="midpoint"),
                          [_randn(2, 5)], "1"),
    "nanquantile": (lambda T, x: T.nanquantile(x, 0.6, 0, True), [_NANS], "1"),
    # distinct values (the smallest is the mode) keep finite differences off the ties
    "mode": (lambda T, x: T.mode(x, 1).values, [_randn(2, 5)], "1"),
    "msort": (lambda T, x: T.msort(x), [_randn(4, 2)], "1"),
    "renorm": (lambda T, x: T.renorm(x, 2, 0, 1.), [_c(3, 2)], "2"),
    "renorm_inplace": (lambda T, x: (x * 1).renorm_(math.inf, 1, 0.5), [_randn(2, 3)], "1"),
    "combinations": (lambda T, x: T.combinations(x, 2, True), [_c(3)], "2"),
}


def _tensors(T, arrays, real=False):
    return [_t(T, a.real if real else a, rg=True) for a in arrays]


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays, checks = GRADS[name]
    for real in ((False, True) if "2" in checks else (False,)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_op(lambda *xs: fn(wgrad, *xs), _tensors(wgrad, arrays, real),
                     gradgrad="gg" in checks, fast_mode=True, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_agree_with_torch(name):
    fn, arrays = GRADS[name][:2]
    assert_grads_agree(*(grads(T, fn, _tensors(T, arrays)) for T in (wgrad, torch)))


_LOWER = np.tril(_randn(3, 3, cplx=True)) + 3 * np.eye(3)


@pytest.mark.parametrize("name, fn, arrays", [
    # torch differentiates (L L^H)^-1 in the whole of L: a gradient above the diagonal too
    ("cholesky_solve", lambda T, b, L: T.cholesky_solve(b, L), (_B3C, _LOWER)),
    ("cholesky_inverse", lambda T, L: T.cholesky_inverse(L, True), (_L3B.swapaxes(1, 2),)),
    # the gradient of the copy of A adds to A's
    ("triangular_solve_copy", lambda T, b, a: T.triangular_solve(b, a, unitriangular=True),
     (_B232, _A3)),
    ("mode_ties", lambda T, x: T.mode(x, 0, True).values, (_MODE.T * 1.,)),
    # the gradient in A itself, not symmetrized (torch's formula with L = U^H)
    ("cholesky_upper", lambda T, a: T.cholesky(a, True), (_S2C,)),
    ("quantile_ties", lambda T, x: T.quantile(x, T.tensor([0., .3, .5, 1.], dtype=T.float64),
                                              interpolation="midpoint"), (_MODE[0] * 1.,)),
])
def test_more_gradients_agree_with_torch(name, fn, arrays):
    def losses(T, *xs):  # |output| summed, for each output that requires grad
        r = fn(T, *xs)
        return [t.abs().sum() for t in (r if isinstance(r, (tuple, list)) else (r,))
                if t.requires_grad]
    assert_grads_agree(*(grads(T, losses, _tensors(T, arrays)) for T in (wgrad, torch)))


def _tangents(T, fn, arrays):
    fw = T.autograd.forward_ad
    rng = np.random.default_rng(2)
    with fw.dual_level():
        d = [fw.make_dual(_t(T, a), _t(T, rng.standard_normal(a.shape) * (
            1 + 1j if a.dtype.kind == "c" else 1))) for a in arrays]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fw.unpack_dual(fn(T, *d)).tangent.numpy()


_UPPER_C = _LOWER.conj().T
# forward-mode AD: torch's tangents (torch's take the whole of dA, where its gradients
# take the triangle read)
JVPS = {
    "triangular_solve": (lambda T, b, a: T.triangular_solve(b, a)[0], (_B3C, _UPPER_C)),
    "triangular_solve_unit": (lambda T, b, a: T.triangular_solve(b, a, False, False, True)[0],
                              (_B32, _A3)),
    "cholesky_solve": (lambda T, b, L: T.cholesky_solve(b, L), (_B3C, _LOWER)),
    "cholesky_solve_upper": (lambda T, b, L: T.cholesky_solve(b, L, True), (_B32, _L3.T)),
    "lu": (lambda T, a: T.lu(a)[0], (_A34,)),
    "lu_solve": (lambda T, b, a: T.lu_solve(b, *T.lu(a)), (_B3C, _A3C)),
    "quantile": (lambda T, x: T.nanquantile(x, 0.3, 1), (_Q,)),
    "cov": (lambda T, x: T.cov(x, aweights=T.tensor([0.5, 1., 2., 1., 0.2],
                                                    dtype=T.float64)), (_X35,)),
}


@pytest.mark.parametrize("name", sorted(JVPS))
def test_tangents_agree_with_torch(name):
    fn, arrays = JVPS[name]
    np.testing.assert_allclose(_tangents(wgrad, fn, arrays), _tangents(torch, fn, arrays),
                               rtol=1e-6, atol=1e-8)


def test_tangents_torch_gets_wrong_raise():
    # torch.cholesky has no forward AD (the same error); torch's tangents of
    # cholesky_inverse and of triangular_solve(transpose=True) in A are not derivatives
    chol = (lambda T, a: T.cholesky(a), (_S3,))
    a, b = (_run(T, lambda T: _tangents(T, *chol)) for T in (wgrad, torch))
    assert a == b and a[0] == "NotImplementedError"
    for fn, arrays in ((lambda T, L: T.cholesky_inverse(L), (_L3,)),
                       (lambda T, b, a: T.triangular_solve(b, a, transpose=True)[0],
                        (_B32, _U3))):
        with pytest.raises(NotImplementedError, match="forward-mode AD"):
            _tangents(wgrad, fn, arrays)
    # ... with respect to b it is the derivative
    fn = lambda T, b: T.triangular_solve(b, T.tensor(_U3), transpose=True)[0]  # noqa: E731
    np.testing.assert_allclose(_tangents(wgrad, fn, (_B32,)), _tangents(torch, fn, (_B32,)))


def test_cholesky_inverse_of_a_complex_diagonal_raises():
    # torch's kernel (LAPACK's zpotri) takes the diagonal as real: its result is then not
    # the inverse of L L^H (nor Hermitian)
    with pytest.raises(NotImplementedError, match="non-real diagonal"):
        wgrad.cholesky_inverse(wgrad.tensor(_LOWER))


def test_vander_gradient():
    # torch's vander backward fails (its cumprod's saved result is changed in place); the
    # gradient is that of x ** k (torch's, through pow), exact at 0
    x = np.array([0., 2., -1.5])
    g = _randn(3, 4)
    w = wgrad.tensor(x, requires_grad=True)
    wgrad.vander(w, 4).backward(wgrad.tensor(g))
    t = torch.tensor(x, requires_grad=True)
    (t.unsqueeze(1) ** torch.arange(3, -1, -1)).backward(torch.tensor(g))
    np.testing.assert_allclose(w.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert wgrad.autograd.gradcheck(lambda v: wgrad.vander(v, 3, True),
                                    (wgrad.tensor(x + 1j, requires_grad=True),))
    assert not wgrad.vander(w, 1).requires_grad  # as torch's: no power of x


# torch.linalg's forms: lu_factor(_ex), lu, solve_triangular (left and right), vander,
# diagonal; values, pivots, info and gradients against torch
_LA = np.random.default_rng(21)
_TA = _LA.standard_normal((2, 3, 3)) + 3 * np.eye(3)
_TB = _LA.standard_normal((3, 2))
_TAC = _TA + 1j * _LA.standard_normal((2, 3, 3))
_TBC = _LA.standard_normal((2, 3)) + 1j * _LA.standard_normal((2, 3))


def _linalg_forms(T):
    a, b = T.tensor(_TA, requires_grad=True), T.tensor(_TB, requires_grad=True)
    ac, bc = T.tensor(_TAC, requires_grad=True), T.tensor(_TBC, requires_grad=True)
    L = T.linalg
    outs = [L.solve_triangular(a, b, upper=True),
            L.solve_triangular(a, b, upper=False, unitriangular=True),
            L.solve_triangular(ac, bc, upper=True, left=False),
            L.solve_triangular(ac, bc, upper=False, left=False, unitriangular=True),
            L.lu_factor(a).LU, *L.lu(ac), L.lu_factor_ex(a).LU, L.vander(T.tensor(_TB)),
            L.vander(ac[0, 0], N=4), L.diagonal(a), L.diagonal(ac, offset=1)]
    grads = T.autograd.grad(sum((o.abs() ** 2).sum() for o in outs), (a, b, ac, bc))
    return [*outs, *grads, L.lu_factor(a).pivots, L.lu_factor_ex(a).info]


def test_linalg_forms_agree_with_torch():
    got, want = _run(wgrad, _linalg_forms), _run(torch, _linalg_forms)
    assert len(got) == len(want)
    for x, y in zip(got, want):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(x, y, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("call", [
    lambda T: T.linalg.lu_factor(T.ones(3)),
    lambda T: T.linalg.lu(T.ones(3)),
    lambda T: T.linalg.solve_triangular(T.ones(3), T.ones(3, 2), upper=True),
    lambda T: T.linalg.solve_triangular(T.ones(3, 3), T.ones(2, 2), upper=True),
    lambda T: T.linalg.solve_triangular(T.ones(3, 3), T.ones(2, 2), upper=True, left=False),
    lambda T: T.linalg.vander(T.ones(3), N=1),
    lambda T: T.linalg.vander(T.ones(())),
    lambda T: T.linalg.lu_factor_ex(T.tensor([[1., 2.], [2., 4.]]), check_errors=True),
    lambda T: T.linalg.lu_factor_ex(T.stack([T.eye(2), T.zeros(2, 2)]), check_errors=True),
])
def test_linalg_forms_errors_agree_with_torch(call):
    assert _run(wgrad, call) == _run(torch, call)


# The new primitives (triangular solve, LU, cholesky_solve/inverse, torch.cholesky) against
# the JAX identity backward(g) == conj(jax.vjp(conj g)), complex128, with references written
# as plain formulas (the same inputs reach both through the same triangle selection)
def _jl(x, upper=False):
    d = jnp.abs(jnp.real(jnp.diagonal(x, 0, -2, -1))) + 2
    return (jnp.triu(x, 1) if upper else jnp.tril(x, -1)) + d[..., None] * jnp.eye(x.shape[-1])


def _mh_(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


_EYE3 = np.eye(3)
JAX_IDENTITY = {
    "triangular_solve": (lambda b, a: wgrad.triangular_solve(b, a.triu() + 3 * wgrad.eye(
        3, dtype=a.dtype))[0], lambda b, a: jnp.linalg.solve(jnp.triu(a) + 3 * _EYE3, b),
        [_c(3, 2), _c(3, 3)]),
    "solve_triangular_right": (lambda b, a: wgrad.linalg.solve_triangular(
        a.tril() + 3 * wgrad.eye(3, dtype=a.dtype), b, upper=False, left=False),
        lambda b, a: b @ jnp.linalg.inv(jnp.tril(a) + 3 * _EYE3), [_c(2, 3), _c(3, 3)]),
    "cholesky_solve": (lambda b, x: wgrad.cholesky_solve(b, _lower(wgrad, x)),
                       lambda b, x: jnp.linalg.solve(_jl(x) @ _mh_(_jl(x)), b),
                       [_c(3, 2), _c(3, 3)]),
    "cholesky_inverse_upper": (lambda x: wgrad.cholesky_inverse(_lower(wgrad, x, True), True),
                               lambda x: jnp.linalg.inv(_mh_(_jl(x, True)) @ _jl(x, True)),
                               [_c(3, 3)]),
    "cholesky_upper": (lambda x: wgrad.cholesky(_sym(wgrad, x), upper=True),
                       lambda x: _mh_(jnp.linalg.cholesky(x @ _mh_(x) + 3 * _EYE3)),
                       [_c(3, 3)]),
    "lu": (lambda a: wgrad.lu(a)[0], lambda a: jax.lax.linalg.lu(a)[0], [_c(3, 3)]),
}


@pytest.mark.parametrize("name", sorted(JAX_IDENTITY))
def test_new_primitives_jax_identity(name):
    wfn, jfn, arrays = JAX_IDENTITY[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert_jax_identity(wfn, jfn, _tensors(wgrad, arrays))
