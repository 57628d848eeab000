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


def _spd(*shape):
    """A symmetric positive definite matrix with well separated eigenvalues 1, 2, ..., n:
    torch's LOBPCG stops at residuals ~1.5e-8, so its eigenvectors are as close as that
    over the gaps."""
    q = np.linalg.qr(_rng.standard_normal(shape))[0]
    return (q * np.arange(1, shape[-1] + 1)[..., None, :]) @ np.swapaxes(q, -1, -2)


def _signed(U):
    """Each eigenvector with the sign of its largest entry positive (torch's test does so)."""
    idx = U.abs().max(-2, keepdim=True)[1]
    return U * U.gather(-2, idx).sign()


LOBPCG = [  # (A, B or None, keyword arguments)
    (_spd(9, 9), None, {"k": 3}),
    (_spd(9, 9), None, {"k": 2, "largest": False}),
    (_spd(2, 6, 6), None, {"k": 1}),
    (_spd(9, 9), _spd(9, 9), {"k": 2}),
    (_spd(12, 12), None, {"X": np.eye(12, 3)}),
]


@pytest.mark.parametrize("i", range(len(LOBPCG)))
def test_lobpcg_as_torch(i):
    a, b, kw = LOBPCG[i]
    got = []
    for L in (wgrad, torch):
        A = L.tensor(a, requires_grad=b is None)
        kws = {k: L.tensor(v) if k == "X" else v for k, v in kw.items()}
        E, U = L.lobpcg(A, B=None if b is None else L.tensor(b), **kws)
        U = _signed(U)
        if b is None:
            (E.sum() + (U * L.arange(U.numel()).reshape(U.shape)).sum()).backward()
        got.append((E.detach().numpy(), U.detach().numpy(), type(E.grad_fn).__name__,
                    A.grad.numpy() if b is None else None))
    (Ew, Uw, nw, gw), (Et, Ut, nt, gt) = got
    np.testing.assert_allclose(Ew, Et, rtol=1e-10)
    # torch's run stops at residuals ~1.5e-8 (its tol): its eigenvectors are that close
    np.testing.assert_allclose(Uw, Ut, atol=2e-5)
    assert nw == nt
    if gw is not None:
        np.testing.assert_allclose(gw, gt, rtol=1e-5, atol=1e-4)


def test_lobpcg_gradgradcheck():
    a = wgrad.tensor(_spd(6, 6), requires_grad=True)

    def f(A):
        E, U = wgrad.lobpcg(A, k=2)
        return E, _signed(U)
    assert wgrad.autograd.gradcheck(f, (a,))
    assert wgrad.autograd.gradgradcheck(f, (a,))


@pytest.mark.parametrize("call", [
    lambda L: L.lobpcg(L.eye(5), k=2),  # fewer than 3 k rows
    lambda L: L.lobpcg(L.eye(9), X=L.ones(8, 2)),
    lambda L: L.lobpcg(L.eye(9, requires_grad=True), k=2, B=L.eye(9))[0].sum().backward(),
])
def test_lobpcg_errors_as_torch(call):
    errors = []
    for L in (wgrad, torch):
        with pytest.raises(Exception) as e:
            call(L)
        errors.append((type(e.value), str(e.value).replace("wgrad.Size", "torch.Size")))
    assert errors[0] == errors[1]
