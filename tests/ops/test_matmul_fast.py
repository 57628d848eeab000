"""The real-GEMM complex matmul fast path (NOTE [Complex matmul on CPU]) against the
plain complex GEMM, in value and gradient."""
from unittest import mock

import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from wgrad.ops import elementwise as E
from wgrad.ops import linear_algebra as L


@pytest.mark.parametrize("shape", [(3, 4, 5), (2, 7, 6, 3), (600, 520, 530)],
                         ids=["4M", "4M-batched", "3M"])
@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_fast_complex_matmul_matches_plain(shape, dtype):
    rng = np.random.default_rng(0)
    *batch, m, k, n = (1,) + shape if len(shape) == 3 else shape
    a = (rng.standard_normal((*batch, m, k)) + 1j * rng.standard_normal((*batch, m, k)))
    b = (rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n)))
    a, b = a.astype(dtype), b.astype(dtype)
    exact = a.astype(np.complex128) @ b.astype(np.complex128)
    plain = np.asarray(jnp.matmul(jnp.asarray(a), jnp.asarray(b)))
    fast = np.asarray(L._complex_matmul_cpu(jnp.asarray(a), jnp.asarray(b)))
    scale = np.abs(exact).max()
    plain_err = np.abs(plain - exact).max() / scale
    fast_err = np.abs(fast - exact).max() / scale
    eps = np.finfo(np.float32 if dtype == np.complex64 else np.float64).eps
    # both are within a few ulps of the scale (3M's imaginary part rounds about 2x worse)
    assert fast_err <= max(4 * plain_err, 8 * eps * np.sqrt(k))


def test_wgrad_complex_matmul_gradients_match_closed_form():
    rng = np.random.default_rng(1)
    a0 = rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))
    b0 = rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5))
    a = wgrad.tensor(a0, requires_grad=True)
    b = wgrad.tensor(b0, requires_grad=True)
    ((a @ b).abs() ** 2).sum().backward()
    c = a0 @ b0  # d/dA* of |AB|^2 is C B^H (and A^H C for B), times 2 in torch's convention
    np.testing.assert_allclose(a.grad.numpy(), 2 * c @ b0.conj().T, rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), 2 * a0.conj().T @ c, rtol=1e-12)


@pytest.mark.parametrize("m,k,n,real_gemms", [
    (16, 16, 16, False), (64, 256, 256, True), (L._MM_REAL_MIN, 200, 300, True),
    (300, L._MM_REAL_MIN - 1, 300, False)])
def test_cpu_complex_matmul_chooses_form_by_size(m, k, n, real_gemms):
    # below _MM_REAL_MIN in any of m, k, n the complex GEMM stays; above, real GEMMs
    import jax
    if jax.default_backend() != "cpu":
        pytest.skip("the real-GEMM form is a CPU choice")
    a = jnp.zeros((m, k), jnp.complex64)
    b = jnp.zeros((k, n), jnp.complex64)
    jaxpr = jax.make_jaxpr(lambda a, b: L._matmul_fwd(a, b, dtype=jnp.complex64))(a, b)
    dots = [e for e in jaxpr.eqns if e.primitive.name == "dot_general"]
    assert dots
    kinds = {jnp.issubdtype(e.outvars[0].aval.dtype, jnp.complexfloating) for e in dots}
    assert kinds == ({False} if real_gemms else {True})
    if real_gemms:  # and the product is still right
        rng = np.random.default_rng(2)
        a0 = (rng.standard_normal((m, k)) + 1j * rng.standard_normal((m, k)))
        b0 = (rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n)))
        out = wgrad.tensor(a0) @ wgrad.tensor(b0)
        np.testing.assert_allclose(out.numpy(), a0 @ b0, rtol=1e-10, atol=1e-10)


# shapes of the tensors each formula conjugates: grad (m, n) and the result, or the
# transposed operand ((n, k) for other, (k, m) for self)
@pytest.mark.parametrize("m, k, n, self_conj, other_conj", [
    (2, 16, 16, [(2, 16), (2, 16)], [(16, 2)]),  # grad @ other^H as conj(conj(grad) @ other^T)
    (16, 16, 2, [(2, 16)], [(16, 2), (16, 2)]),  # self^H @ grad as conj(self^T @ conj(grad))
    (16, 2, 16, [(16, 2)], [(2, 16)]),           # both conjugate the (smaller) operand
])
@pytest.mark.parametrize("create_graph", [False, True])
def test_matmul_gradient_conjugates_the_smaller_side(m, k, n, self_conj, other_conj,
                                                     create_graph):
    # NOTE [Which side to conjugate]: each form against the closed form, and the form
    # chosen is the one that conjugates fewer elements
    rng = np.random.default_rng(2)
    a0 = rng.standard_normal((m, k)) + 1j * rng.standard_normal((m, k))
    b0 = rng.standard_normal((k, n)) + 1j * rng.standard_normal((k, n))
    g0 = rng.standard_normal((m, n)) + 1j * rng.standard_normal((m, n))
    a = wgrad.tensor(a0, requires_grad=True)
    b = wgrad.tensor(b0, requires_grad=True)
    ga, gb = wgrad.autograd.grad(a @ b, (a, b), wgrad.tensor(g0), create_graph=create_graph)
    np.testing.assert_allclose(ga.detach().numpy(), g0 @ b0.conj().T, rtol=1e-12)
    np.testing.assert_allclose(gb.detach().numpy(), a0.conj().T @ g0, rtol=1e-12)
    conjugated = []

    def spy(prim):
        def call(t, *args, **kw):
            conjugated.append(tuple(t.shape))
            return prim(t, *args, **kw)
        return call
    gt = wgrad.tensor(g0)
    with mock.patch.object(E, "_conj", spy(E._conj)), \
            mock.patch.object(E, "_conj_physical", spy(E._conj_physical)):
        L._mm_self(gt, wgrad.tensor(b0))
        self_seen, conjugated[:] = list(conjugated), []
        L._mm_other(gt, wgrad.tensor(a0))
    assert self_seen == self_conj
    assert conjugated == other_conj
