"""svd_lowrank and pca_lowrank against torch's: on matrices of rank <= q both are exact,
so singular values, reconstructions and shapes compare whatever the random stream;
gradients numerically; torch's errors."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(3)


def _low_rank(m, n, r, batch=(), cplx=False):
    def g(*s):
        x = _rng.standard_normal(s)
        return x + 1j * _rng.standard_normal(s) if cplx else x
    return g(*batch, m, r) @ g(*batch, r, n)


CASES = [  # (matrix, call)
    (_low_rank(8, 6, 3), lambda L, a: L.svd_lowrank(a, q=4)),
    (_low_rank(5, 9, 2), lambda L, a: L.svd_lowrank(a, q=3, niter=1)),  # wide
    (_low_rank(7, 5, 2, cplx=True), lambda L, a: L.svd_lowrank(a, q=3)),
    (_low_rank(6, 4, 2, batch=(2,)), lambda L, a: L.svd_lowrank(a, q=2)),
    (_low_rank(8, 6, 3), lambda L, a: L.svd_lowrank(a, q=4, M=a[:1] * 0.5)),
    (_low_rank(9, 5, 2), lambda L, a: L.pca_lowrank(a, q=3)),
    (_low_rank(9, 5, 2), lambda L, a: L.pca_lowrank(a, center=False)),
]


@pytest.mark.parametrize("i", range(len(CASES)))
def test_exact_on_low_rank_matrices_as_torch(i):
    a, call = CASES[i]
    got = []
    for L in (wgrad, torch):
        L.manual_seed(0)
        U, S, V = call(L, L.tensor(a))
        recon = (U * S.unsqueeze(-2).to(U.dtype)) @ V.mH
        eye = np.eye(U.shape[-1])
        np.testing.assert_allclose((U.mH @ U).numpy(), np.broadcast_to(eye, U.mH.shape[:-2]
                                                                        + eye.shape), atol=1e-10)
        got.append((tuple(U.shape), tuple(S.shape), tuple(V.shape), S.numpy(), recon.numpy()))
    (*sw, Sw, rw), (*st, St, rt) = got
    assert sw == st
    np.testing.assert_allclose(Sw, St, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(rw, rt, atol=1e-9)


def test_singular_values_are_differentiable():
    a = wgrad.tensor(_low_rank(6, 5, 2) + 0.01 * _rng.standard_normal((6, 5)),
                     requires_grad=True)

    def top(x):
        wgrad.manual_seed(1)  # the same random test matrix at every evaluation
        return wgrad.svd_lowrank(x, q=5)[1]
    assert wgrad.autograd.gradcheck(top, (a,))


@pytest.mark.parametrize("kw", [{"q": 7}, {"q": -1}, {"niter": -1}])
def test_pca_lowrank_errors_as_torch(kw):
    msgs = []
    for L in (wgrad, torch):
        with pytest.raises(ValueError) as e:
            L.pca_lowrank(L.ones(6, 5), **kw)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]
