"""Linear algebra: products (matmul, dot, vdot, outer, inner, einsum, trace, tensordot) and
wgrad.linalg (solvers, decompositions, norms). gradcheck + gradgradcheck on float64 and
complex128 with hypothesis-drawn small shapes incl. batches, the JAX identity where jnp has
the function, gauge-invariant losses for eigh/eig/svd, torch's gauge errors."""
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgrad
from wgrad.testing import check_op, to_np, values

F64, C128 = np.float64, np.complex128
BOTH = (F64, C128)
L = wgrad.linalg


def _t(data, dtype, shape, low=-1.0, high=1.0):
    return wgrad.tensor(data.draw(values(dtype, shape, low, high)), requires_grad=True)


def _well(data, dtype, batch, n):
    """A well-conditioned square matrix: identity-dominated plus a small drawn part."""
    a = data.draw(values(dtype, batch + (n, n), -0.3, 0.3))
    return wgrad.tensor(a + 2 * np.eye(n), requires_grad=True)


BATCH = st.sampled_from([(), (2,)])
DT = st.sampled_from(BOTH)

# -- products -------------------------------------------------------------------------

PRODUCTS = [
    ("matmul", lambda s: [s[0] + (2, 3), (3, 2)], lambda a, b: a @ b, jnp.matmul),
    ("dot", lambda s: [(3,), (3,)], wgrad.dot, jnp.dot),
    ("vdot", lambda s: [(3,), (3,)], wgrad.vdot, jnp.vdot),
    ("outer", lambda s: [(2,), (3,)], wgrad.outer, jnp.outer),
    ("inner", lambda s: [s[0] + (3,), (2, 3)], wgrad.inner, jnp.inner),
    ("inner_0d", lambda s: [(), (2,)], wgrad.inner, lambda a, b: a * b),
    ("trace", lambda s: [(3, 2)], wgrad.trace, jnp.trace),
    ("tensordot", lambda s: [(2, 3), (3, 2, 1)],
     lambda a, b: wgrad.tensordot(a, b, dims=([0, 1], [1, 0])),
     lambda a, b: jnp.tensordot(a, b, ([0, 1], [1, 0]))),
    ("einsum_mm", lambda s: [s[0] + (2, 3), (3, 2)],
     lambda a, b: wgrad.einsum("...ij,jk->...ik", a, b),
     lambda a, b: jnp.einsum("...ij,jk->...ik", a, b)),
    ("einsum_implicit", lambda s: [(2, 3), (3,)], lambda a, b: wgrad.einsum("ij,j", a, b),
     lambda a, b: jnp.einsum("ij,j", a, b)),
    ("einsum_summed_index", lambda s: [(2, 3), (3, 2)],
     lambda a, b: wgrad.einsum("ij,jk->i", a, b), lambda a, b: jnp.einsum("ij,jk->i", a, b)),
    ("einsum_broadcast", lambda s: [(1, 2, 3), (2, 3, 2)],
     lambda a, b: wgrad.einsum("bij,bjk->bik", a, b),
     lambda a, b: jnp.einsum("bij,bjk->bik", jnp.broadcast_to(a, (2, 2, 3)), b)),
    ("einsum_three", lambda s: [(2,), (2, 3), (3,)],
     lambda a, b, c: wgrad.einsum("i,ij,j->", a, b, c),
     lambda a, b, c: jnp.einsum("i,ij,j->", a, b, c)),
    ("multi_dot", lambda s: [(3,), (3, 2), (2, 2)], lambda *t: L.multi_dot(t),
     lambda *t: jnp.linalg.multi_dot(t)),
    ("cross", lambda s: [s[0] + (3,), (1, 3) if s[0] else (3,)], lambda a, b: L.cross(a, b),
     lambda a, b: jnp.cross(a, b)),
]


@pytest.mark.parametrize("name,shapes_fn,wfn,jfn", PRODUCTS, ids=[p[0] for p in PRODUCTS])
@settings(max_examples=1)
@given(data=st.data())
def test_products(name, shapes_fn, wfn, jfn, data):
    dtype = data.draw(DT)
    batch = data.draw(BATCH)
    shp = shapes_fn([batch])
    ins = [_t(data, dtype, s) for s in shp]
    check_op(wfn, ins, jfn, fast_mode=True)


def test_einsum_parsing_and_errors():
    a = wgrad.ones(2, 3)
    assert wgrad.einsum("ij,kj", [a, a]).shape == (2, 2)
    assert wgrad.einsum("ii->i", wgrad.eye(3)).shape == (3,)
    with pytest.raises(RuntimeError, match="einsum\\(\\): subscript j has size 2 for operand "
                                           "1 which does not broadcast with previously seen "
                                           "size 3"):
        wgrad.einsum("ij,jk", a, a)
    x = wgrad.eye(2, requires_grad=True)
    with pytest.raises(NotImplementedError, match="repeats an index within one operand"):
        wgrad.einsum("ii->", x).backward()


def test_product_errors():
    with pytest.raises(RuntimeError, match="dot : expected both vectors to have same dtype, but "
                                           "found Float and Double"):
        wgrad.dot(wgrad.ones(3), wgrad.ones(3, dtype=wgrad.float64))
    with pytest.raises(RuntimeError, match="1D tensors expected, but got 2D and 1D tensors"):
        wgrad.dot(wgrad.ones(3, 3), wgrad.ones(3))
    with pytest.raises(RuntimeError, match="trace: expected a matrix, but got tensor with dim 1"):
        wgrad.trace(wgrad.ones(3))
    with pytest.raises(RuntimeError, match="outer: Expected 1-D argument self, but got 2-D"):
        wgrad.outer(wgrad.ones(2, 2), wgrad.ones(2))
    with pytest.raises(RuntimeError, match="multi_dot\\(\\): expected at least 2 tensors but "
                                           "got 1"):
        L.multi_dot([wgrad.ones(2, 2)])
    with pytest.raises(RuntimeError, match="linalg.cross: inputs dimension -1 must have length "
                                           "3. Got 2 and 2"):
        L.cross(wgrad.ones(2), wgrad.ones(2))


# -- solvers, inverses, matrix functions ------------------------------------------------

def _jsolve(a, b):
    return jnp.linalg.solve(a, b)


SQUARE = [
    ("inv", L.inv, jnp.linalg.inv),
    ("det", L.det, jnp.linalg.det),
    ("slogdet", lambda a: tuple(L.slogdet(a)), lambda a: tuple(jnp.linalg.slogdet(a))),
    ("matrix_exp", L.matrix_exp, None),
    ("matrix_power_3", lambda a: L.matrix_power(a, 3), lambda a: jnp.linalg.matrix_power(a, 3)),
    ("matrix_power_m2", lambda a: L.matrix_power(a, -2),
     lambda a: jnp.linalg.matrix_power(a, -2)),
    ("pinv", L.pinv, jnp.linalg.pinv),
    ("eigvals", L.eigvals, None),
    ("svdvals", L.svdvals, lambda a: jnp.linalg.svd(a, compute_uv=False)),
]


@pytest.mark.parametrize("name,wfn,jfn", SQUARE, ids=[s[0] for s in SQUARE])
@settings(max_examples=1)
@given(data=st.data())
def test_square(name, wfn, jfn, data):
    dtype = data.draw(DT)
    a = _well(data, dtype, data.draw(BATCH), data.draw(st.sampled_from([2, 3])))
    if name in ("eigvals", "svdvals"):  # well separated eigen/singular values
        n = a.shape[-1]
        a = wgrad.tensor(to_np(a) + np.diag(1.5 * np.arange(n)), requires_grad=True)
    if name == "matrix_exp":
        a = wgrad.tensor(to_np(a) - 2 * np.eye(a.shape[-1]), requires_grad=True)
    # eigvals: second order through eig fails torch's own gradgradcheck too
    check_op(wfn, (a,), jfn, gradgrad=name != "eigvals", fast_mode=True)


@settings(max_examples=2)
@given(data=st.data())
def test_solve(data):
    dtype = data.draw(DT)
    batch = data.draw(BATCH)
    a = _well(data, dtype, batch, 2)
    kind = data.draw(st.sampled_from(["matrix", "vector", "right", "broadcast"]))
    if kind == "matrix":
        b = _t(data, dtype, batch + (2, 3))
        check_op(L.solve, (a, b), _jsolve)
    elif kind == "vector":
        b = _t(data, dtype, (2,))
        check_op(L.solve, (a, b), lambda x, y: jnp.linalg.solve(x, y[..., None])[..., 0])
    elif kind == "right":
        b = _t(data, dtype, (3, 2))
        check_op(lambda x, y: L.solve(x, y, left=False), (a, b),
                 lambda x, y: jnp.swapaxes(jnp.linalg.solve(
                     jnp.swapaxes(x, -1, -2), jnp.swapaxes(jnp.broadcast_to(
                         y, x.shape[:-2] + y.shape), -1, -2)), -1, -2))
    else:
        b = _t(data, dtype, (2, 2, 1))
        check_op(L.solve, (a, b), lambda x, y: jnp.linalg.solve(x, y))


@settings(max_examples=2)
@given(data=st.data())
def test_cholesky(data):
    dtype = data.draw(DT)
    a = _t(data, dtype, data.draw(BATCH) + (2, 2), -0.5, 0.5)
    upper = data.draw(st.booleans())

    def f(x):
        return L.cholesky(x @ x.mH + wgrad.eye(2, dtype=x.dtype), upper=upper)

    def j(x):
        r = jnp.linalg.cholesky(x @ jnp.conj(jnp.swapaxes(x, -1, -2)) + jnp.eye(2))
        return jnp.conj(jnp.swapaxes(r, -1, -2)) if upper else r
    check_op(f, (a,), j)


@pytest.mark.parametrize("shape", [(3, 2), (2, 3), (2, 2)])
@pytest.mark.parametrize("dtype", BOTH, ids=["f64", "c128"])
def test_qr(shape, dtype):
    rng = np.random.default_rng(0)
    a = rng.standard_normal(shape) + (1j * rng.standard_normal(shape) if dtype == C128 else 0)
    a = wgrad.tensor(a + np.eye(*shape), requires_grad=True)
    check_op(lambda x: tuple(L.qr(x)), (a,), lambda x: tuple(jnp.linalg.qr(x)))


def test_qr_errors():
    a = wgrad.tensor(np.eye(3, 2), requires_grad=True)
    with pytest.raises(RuntimeError, match="The QR decomposition is not differentiable when "
                                           "mode='complete' and nrows > ncols."):
        L.qr(a, mode="complete").Q.sum().backward()
    with pytest.raises(RuntimeError, match="The derivative of linalg.qr depends on Q"):
        L.qr(a, mode="r").R.sum().backward()


@settings(max_examples=2)
@given(data=st.data())
def test_lstsq(data):
    dtype = data.draw(DT)
    a = wgrad.tensor(data.draw(values(dtype, (3, 2), -0.3, 0.3)) + np.eye(3, 2),
                     requires_grad=True)
    b = _t(data, dtype, (3, 2))
    # jnp.linalg.lstsq's own vjp is nan here: gradcheck only (torch compared below)
    check_op(lambda x, y: L.lstsq(x, y).solution, (a, b))


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2, 1, -1, float("inf"), -float("inf")])
def test_matrix_norm(ord):
    rng = np.random.default_rng(3)
    a = wgrad.tensor(rng.standard_normal((2, 3)) + 1j * rng.standard_normal((2, 3)),
                     requires_grad=True)
    check_op(lambda x: L.matrix_norm(x, ord), (a,),
             lambda x: jnp.linalg.norm(x, ord), gradgrad=ord in ("fro", "nuc"))


def test_norm_dispatch():
    a = wgrad.tensor(np.array([[3., 0.], [0., 4.]]), requires_grad=True)
    np.testing.assert_allclose(to_np(L.norm(a)), 5.0)
    np.testing.assert_allclose(to_np(L.norm(a, "nuc")), 7.0)
    np.testing.assert_allclose(to_np(L.norm(a[0], 1)), 3.0)
    np.testing.assert_allclose(to_np(L.vector_norm(a, 1)), 7.0)
    np.testing.assert_allclose(to_np(L.norm(a, dim=1)), [3.0, 4.0])
    with pytest.raises(RuntimeError, match="linalg.norm: If dim is not specified but ord is, "
                                           "the input must be 1D or 2D. Got 3D."):
        L.norm(wgrad.ones(2, 2, 2), 2)


def test_square_errors():
    a = wgrad.ones(2, 3, dtype=wgrad.float64)
    for name, f in [("inv", L.inv), ("det", L.det), ("eigh", L.eigh),
                    ("matrix_power", lambda x: L.matrix_power(x, 2))]:
        with pytest.raises(RuntimeError, match=f"linalg.{name}: A must be batches of square "
                                               f"matrices, but they are 2 by 3 matrices"):
            f(a)
    with pytest.raises(L.LinAlgError, match="linalg.inv: The diagonal element 1 is zero, the "
                                            "inversion could not be completed because the "
                                            "input matrix is singular."):
        L.inv(wgrad.zeros(2, 2))
    with pytest.raises(RuntimeError, match="linalg.cholesky: The factorization could not be "
                                           "completed because the input is not "
                                           "positive-definite \\(the leading minor of order 1 "
                                           "is not positive-definite\\)."):
        L.cholesky(-wgrad.eye(2, dtype=wgrad.float64))


# -- eigen and singular value decompositions: gauge-invariant losses --------------------

def _herm(x):
    return x + x.mH


def _jherm(x):
    return x + jnp.conj(jnp.swapaxes(x, -1, -2))


def _abs2(v):
    # smooth |v|^2 (abs()**2 has a kink in its second derivative at v = 0)
    return (v * v.conj()).real if v.is_complex() else v * v


def _eigh_loss(x):
    lam, v = L.eigh(_herm(x))
    return lam, _abs2(v)                # |V|^2 does not see the phases


def _jeigh_loss(x):
    lam, v = jnp.linalg.eigh(_jherm(x))
    return lam, jnp.real(v * jnp.conj(v))


def _svd_loss(x):
    u, s, vh = L.svd(x, full_matrices=False)
    return s, (u @ vh), _abs2(u)        # U Vh and |U|^2 are phase-invariant


def _jsvd_loss(x):
    u, s, vh = jnp.linalg.svd(x, full_matrices=False)
    return s, u @ vh, jnp.real(u * jnp.conj(u))


def _eig_loss(x):
    lam, v = L.eig(x)
    return lam, _abs2(v)


DECOMP = [
    ("eigh", _eigh_loss, _jeigh_loss, [(2, 2), (3, 3), (2, 2, 2)]),
    ("eigvalsh", lambda x: L.eigvalsh(_herm(x)), lambda x: jnp.linalg.eigvalsh(_jherm(x)),
     [(2, 2), (2, 3, 3)]),
    ("svd", _svd_loss, _jsvd_loss, [(2, 2), (3, 2), (2, 3), (2, 2, 3)]),
    ("eig", _eig_loss, None, [(2, 2), (3, 3)]),
]


@pytest.mark.parametrize("name,wfn,jfn,shapes_", DECOMP, ids=[d[0] for d in DECOMP])
@settings(max_examples=2)
@given(data=st.data())
def test_decompositions(name, wfn, jfn, shapes_, data):
    dtype = data.draw(DT)
    shape = data.draw(st.sampled_from(shapes_))
    # distinct, well separated eigen/singular values: a diagonal spread plus a small part
    n, m = shape[-2], shape[-1]
    spread = np.zeros((n, m))
    for i in range(min(n, m)):
        spread[i, i] = 1.0 + 1.5 * i
    if name == "eig":
        # no off-diagonal entry exactly zero: LAPACK orders the eigenvalues of a triangular
        # matrix otherwise than those of its neighbours (1, 2.5 against 2.5, 1 for
        # [[1, 0], [0.125, 2.5]] and [[1, 1e-6], [0.125, 2.5]]), and gradcheck's finite
        # differences would compare different eigenvalues; torch's eig does the same
        spread += 0.25 * (1 - np.eye(n, m))
    a = wgrad.tensor(data.draw(values(dtype, shape, -0.2, 0.2)) + spread, requires_grad=True)
    # eig: torch's own gradgradcheck of this loss fails as well (checked with torch 2.13)
    check_op(wfn, (a,), jfn, gradgrad=name != "eig")


def test_eigh_reads_one_triangle():
    a = np.array([[2.0, 9.0], [1.0, 3.0]])
    lo = to_np(L.eigvalsh(wgrad.tensor(a)))
    up = to_np(L.eigvalsh(wgrad.tensor(a), UPLO="U"))
    np.testing.assert_allclose(lo, np.linalg.eigvalsh(a, "L"))
    np.testing.assert_allclose(up, np.linalg.eigvalsh(a, "U"))


def _complex_matrix(n=3, m=3, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((n, m)) + 1j * rng.standard_normal((n, m))


@pytest.mark.parametrize("create_graph", [False, True])
def test_gauge_dependent_losses_raise(create_graph):
    a = wgrad.tensor(_complex_matrix(), requires_grad=True)
    msg = ("linalg_eigh_backward: The eigenvectors in the complex case are specified up to "
           "multiplication by e\\^{i phi}. The specified loss function depends on this "
           "quantity, so it is ill-defined.")
    with pytest.raises(RuntimeError, match=msg):
        v = L.eigh(_herm(a)).eigenvectors
        wgrad.autograd.grad(v[1, 0].real, a, create_graph=create_graph)
    with pytest.raises(RuntimeError, match=msg.replace("eigh", "eig")):
        v = L.eig(a).eigenvectors
        wgrad.autograd.grad(v[1, 0].imag, a, create_graph=create_graph)
    with pytest.raises(RuntimeError, match="svd_backward: The singular vectors in the complex "
                                           "case are specified up to multiplication by "
                                           "e\\^{i phi}. The specified loss function depends "
                                           "on this phase term, making it ill-defined."):
        u = L.svd(a).U
        wgrad.autograd.grad(u[1, 0].real, a, create_graph=create_graph)


def test_decomposition_gradients_equal_torch():
    torch = pytest.importorskip("torch")
    a = _complex_matrix(3, 3, seed=5)
    cases = [
        (lambda m, x: (lambda r: (r[0] ** 2).sum() + (r[1].abs() ** 3 * m.arange(3.)).sum())(
            m.linalg.eigh(x + x.mH))),
        (lambda m, x: (lambda r: (r[0] * r[0]).real.sum() + (r[1].abs() ** 2).sum(0)[0])(
            m.linalg.eig(x))),
        (lambda m, x: (lambda r: r[1].sum() + (r[0].abs() ** 2)[:, 0].sum()
                       + (r[0] @ r[2]).real.sum())(m.linalg.svd(x))),
        (lambda m, x: (lambda r: (r[0].abs() ** 2).sum() + r[1].real.sum())(m.linalg.qr(x))),
        (lambda m, x: m.linalg.slogdet(x)[1] + m.linalg.slogdet(x)[0].imag),
        (lambda m, x: m.linalg.det(x).abs()),
        (lambda m, x: m.linalg.pinv(x[:2]).abs().sum()),
        (lambda m, x: m.linalg.matrix_exp(x * 0.3).real.sum()),
        (lambda m, x: m.linalg.lstsq(x[:, :2], x[:, 1:]).solution.abs().sum()),
        (lambda m, x: m.linalg.cholesky(x @ x.mH + m.eye(3)).real.sum()),
    ]
    for f in cases:
        w = wgrad.tensor(a, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        f(wgrad, w).backward()
        f(torch, t).backward()
        np.testing.assert_allclose(to_np(w.grad), t.grad.numpy(), rtol=1e-7, atol=1e-9)
