"""wgrad.autograd.functional: jacobian/hessian against finite differences, jax.jacrev /
jax.hessian (conjugate convention) and torch; vjp/jvp/hvp/vhp; options and errors;
grad(..., is_grads_batched=True) equal to a loop of grad calls."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import wgrad
from wgrad.autograd import Function
from wgrad.autograd.functional import hessian, hvp, jacobian, jvp, vhp, vjp
from wgrad.testing import values


def A(t):
    return np.asarray(t.detach() if isinstance(t, wgrad.Tensor) else t)


def T(a, requires_grad=False):
    return wgrad.tensor(np.asarray(a), requires_grad=requires_grad)


# a vector function with two inputs and two outputs, and a real scalar objective
def wf(x, y):
    return x.sin() * y, (x * y).exp().sum()


def jf(x, y):
    return jnp.sin(x) * y, jnp.exp(x * y).sum()


def wobj(z):
    return (z.abs() ** 2 * z.real + (z * z).real).sum()


def jobj(z):
    return (jnp.abs(z) ** 2 * z.real + (z * z).real).sum()


def _fd_jacobian(f, x, eps=1e-6):
    x = np.asarray(x, np.float64)
    cols = []
    for j in range(x.size):
        e = np.zeros(x.size)
        e[j] = eps
        cols.append((f(x + e.reshape(x.shape)) - f(x - e.reshape(x.shape))) / (2 * eps))
    return np.stack(cols, -1).reshape(np.shape(f(x)) + x.shape)


@given(data=st.data())
def test_jacobian_real_vs_jax_and_finite_differences(data):
    # few fixed shapes, drawn values: every new shape costs jit compiles
    shape = data.draw(st.sampled_from([(), (2, 3)]))
    x = data.draw(values(np.float64, shape, -1, 1))
    y = data.draw(values(np.float64, shape, -1, 1))
    for vec in (False, True):
        (jxx, jxy), (jsx, jsy) = jacobian(wf, (T(x), T(y)), vectorize=vec)
        ref = jax.jit(jax.jacrev(jf, argnums=(0, 1)))(jnp.asarray(x), jnp.asarray(y))
        np.testing.assert_allclose(A(jxx), ref[0][0], atol=1e-10)
        np.testing.assert_allclose(A(jxy), ref[0][1], atol=1e-10)
        np.testing.assert_allclose(A(jsx), ref[1][0], atol=1e-10)
        np.testing.assert_allclose(A(jsy), ref[1][1], atol=1e-10)
    fd = _fd_jacobian(lambda a: np.sin(a) * y, x)
    np.testing.assert_allclose(A(jxx), fd, atol=1e-6)
    jfwd = jacobian(wf, (T(x), T(y)), vectorize=True, strategy="forward-mode")
    np.testing.assert_allclose(A(jfwd[0][0]), A(jxx), atol=1e-10)
    np.testing.assert_allclose(A(jfwd[1][1]), A(jsy), atol=1e-10)


@given(data=st.data())
def test_hessian_real_vs_jax_and_finite_differences(data):
    shape = (3,)
    x = data.draw(values(np.float64, shape, -1, 1))

    def w(x):
        return (x.sin() * x.sum()).sum()

    def j(x):
        return (jnp.sin(x) * x.sum()).sum()

    ref = jax.jit(jax.hessian(j))(jnp.asarray(x))
    for vec in (False, True):
        np.testing.assert_allclose(A(hessian(w, T(x), vectorize=vec)), ref, atol=1e-10)
    np.testing.assert_allclose(
        A(hessian(w, T(x), vectorize=True, outer_jacobian_strategy="forward-mode")), ref,
        atol=1e-10)
    jg = jax.jit(jax.grad(j))
    fd = _fd_jacobian(lambda a: np.asarray(jg(jnp.asarray(a))), x)
    np.testing.assert_allclose(A(hessian(w, T(x))), fd, atol=1e-5)


@given(data=st.data())
def test_complex_jacobian_hessian_conjugate_convention(data):
    shape = (3,)
    z = data.draw(values(np.complex128, shape, -1, 1, avoid=[0.0]))  # |z| kink at 0
    zj = jnp.asarray(z)
    # gradient of a real objective: the conjugate of jax.grad
    np.testing.assert_allclose(A(jacobian(wobj, T(z))), np.conj(jax.jit(jax.grad(jobj))(zj)),
                               atol=1e-10)
    # row i of a reverse-mode jacobian of a complex map g is the gradient of Re(g_i)
    jg = A(jacobian(lambda z: z * z.exp(), T(z), vectorize=True))
    ref = jax.jit(jax.jacrev(lambda z: jnp.real(z * jnp.exp(z))))(zj)
    np.testing.assert_allclose(jg, np.conj(ref), atol=1e-10)
    # forward mode gives the holomorphic derivative columns: jax.jacfwd(holomorphic)
    jfw = A(jacobian(lambda z: z * z.exp(), T(z), vectorize=True, strategy="forward-mode"))
    ref_f = jax.jit(jax.jacfwd(lambda z: z * jnp.exp(z), holomorphic=True))(zj)
    np.testing.assert_allclose(jfw, ref_f,
                               atol=1e-10)
    # hessian = reverse jacobian of wgrad's gradient conj(jax.grad)
    h = A(hessian(wobj, T(z), vectorize=True))
    ref_h = jax.jit(jax.jacrev(lambda z: jnp.real(jnp.conj(jax.grad(jobj)(z)))))(zj)
    np.testing.assert_allclose(h, np.conj(ref_h), atol=1e-10)


def test_complex_results_match_torch():
    torch = pytest.importorskip("torch")
    from torch.autograd import functional as TF
    z = np.array([1 + 2j, 0.5 - 1j, -0.3 + 0.1j])
    v = np.array([0.2 - 1j, 1.0 + 0.5j, -0.7j])
    tz, tv = torch.tensor(z), torch.tensor(v)
    wz, wv = T(z), T(v)

    def t_obj(z):
        return (z.abs() ** 2 * z.real + (z * z).real).sum()

    def close(a, b):
        np.testing.assert_allclose(A(a), b.detach().numpy(), atol=1e-10)

    close(jacobian(wobj, wz), TF.jacobian(t_obj, tz))
    close(jacobian(lambda z: z * z, wz, vectorize=True),
          TF.jacobian(lambda z: z * z, tz, vectorize=True))
    close(jacobian(lambda z: z * z, wz, vectorize=True, strategy="forward-mode"),
          TF.jacobian(lambda z: z * z, tz, vectorize=True, strategy="forward-mode"))
    close(hessian(wobj, wz, vectorize=True), TF.hessian(t_obj, tz, vectorize=True))
    close(vjp(lambda z: z * z.exp(), wz, wv)[1], TF.vjp(lambda z: z * z.exp(), tz, tv)[1])
    close(jvp(lambda z: z * z.exp(), wz, wv)[1], TF.jvp(lambda z: z * z.exp(), tz, tv)[1])
    close(hvp(wobj, wz, wv)[1], TF.hvp(t_obj, tz, tv)[1])
    close(vhp(wobj, wz, wv)[1], TF.vhp(t_obj, tz, tv)[1])
    # torch refuses a complex output in the non-vectorized reverse-mode jacobian
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for real "
                                           "scalar outputs"):
        jacobian(lambda z: z * z, wz)


def test_vjp_jvp_hvp_vhp_real_and_structure():
    x, y = np.array([0.3, -0.8]), np.array([1.1, 0.4])
    u = (np.array([1.0, -2.0]), np.array([0.5, 0.25]))
    out, g = vjp(wf, (T(x), T(y)), (T(u[0]), T(np.array(1.5))))
    assert isinstance(out, tuple) and isinstance(g, tuple) and len(g) == 2
    _, pull = jax.vjp(jax.jit(jf), jnp.asarray(x), jnp.asarray(y))
    ref = pull((jnp.asarray(u[0]), jnp.asarray(1.5)))
    np.testing.assert_allclose(A(g[0]), ref[0], atol=1e-10)
    np.testing.assert_allclose(A(g[1]), ref[1], atol=1e-10)
    out, jv = jvp(wf, (T(x), T(y)), (T(u[0]), T(u[1])))
    _, ref = jax.jvp(jax.jit(jf), (jnp.asarray(x), jnp.asarray(y)), (jnp.asarray(u[0]),
                                                           jnp.asarray(u[1])))
    np.testing.assert_allclose(A(jv[0]), ref[0], atol=1e-10)
    np.testing.assert_allclose(A(jv[1]), ref[1], atol=1e-10)

    def w(x):
        return (x.sin() * x.sum()).sum()

    def j(x):
        return (jnp.sin(x) * x.sum()).sum()

    H = np.asarray(jax.jit(jax.hessian(j))(jnp.asarray(x)))
    val, hv = hvp(w, T(x), T(u[0]))
    np.testing.assert_allclose(A(hv), H @ u[0], atol=1e-10)
    np.testing.assert_allclose(A(val), j(jnp.asarray(x)), atol=1e-12)
    _, vh = vhp(w, T(x), T(u[0]))
    np.testing.assert_allclose(A(vh), u[0] @ H, atol=1e-10)
    # v may be omitted for a single-element input / output
    _, g = vjp(lambda t: (t * t).sum(), T(np.array([3.0])))
    np.testing.assert_allclose(A(g), [6.0])


def test_create_graph_results_are_differentiable():
    x = T(np.array([0.5, 1.5]), requires_grad=True)
    J = jacobian(lambda t: t ** 3, x, create_graph=True)
    assert J.requires_grad
    (g,) = wgrad.autograd.grad(J.sum(), x)
    np.testing.assert_allclose(A(g), 6 * A(x))
    J = jacobian(lambda t: t ** 3, x)
    assert not J.requires_grad
    H = hessian(lambda t: (t ** 4).sum(), x, create_graph=True, vectorize=True)
    (g,) = wgrad.autograd.grad(H.sum(), x)
    np.testing.assert_allclose(A(g), 24 * A(x))
    _, hv = hvp(lambda t: (t ** 4).sum(), x, wgrad.ones(2, dtype=wgrad.float64),
                create_graph=True)
    assert hv.requires_grad


def test_unused_inputs_strict_and_errors():
    x, y = T(np.array([1.0, 2.0])), T(np.array([3.0]))
    jx, jy = jacobian(lambda a, b: a * 2, (x, y))
    np.testing.assert_array_equal(A(jy), np.zeros((2, 1)))
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function is "
                                           "independent of input 1. This is not allowed in "
                                           "strict mode."):
        jacobian(lambda a, b: a * 2, (x, y), strict=True)
    with pytest.raises(RuntimeError, match="Output 0 of the user-provided function does not "
                                           "require gradients"):
        jacobian(lambda a: wgrad.ones(2), x, strict=True)
    with pytest.raises(RuntimeError, match="`strict=True` and `vectorized=True` are not "
                                           "supported together"):
        jacobian(lambda a: a * 2, x, strict=True, vectorize=True)
    with pytest.raises(ValueError, match='Expected strategy to be either "forward-mode" or '
                                         '"reverse-mode"'):
        jacobian(lambda a: a, x, strategy="sideways")
    with pytest.raises(NotImplementedError, match="only implemented for `vectorize=True`"):
        jacobian(lambda a: a * 2, x, strategy="forward-mode")
    with pytest.raises(NotImplementedError, match='`create_graph=True` and '
                                                  '`strategy="forward-mode"`'):
        jacobian(lambda a: a * 2, x, create_graph=True, strategy="forward-mode",
                 vectorize=True)
    with pytest.raises(TypeError, match="The inputs given to jacobian must be either a Tensor "
                                        "or a tuple of Tensors but the value at index 1"):
        jacobian(lambda a, b: a, (x, 2.0))
    with pytest.raises(RuntimeError, match="v has invalid size: should be wgrad.Size\\(\\[2\\]\\)"
                                           " but got wgrad.Size\\(\\[3\\]\\)"):
        vjp(lambda a: a * 2, x, T(np.ones(3)))
    with pytest.raises(RuntimeError, match="v is a tuple of invalid length: should be 2 but "
                                           "got 1."):
        jvp(lambda a, b: a * 2, (x, y), (x,))
    with pytest.raises(RuntimeError, match="The vector v can only be None if the user-provided "
                                           "function returns a single Tensor with a single "
                                           "element."):
        vjp(lambda a: a * 2, x)
    with pytest.raises(RuntimeError, match="The function given to hessian should return a "
                                           "single Tensor"):
        hessian(lambda a: (a.sum(), a.sum()), x)
    with pytest.raises(RuntimeError, match="The Tensor returned by the function given to hvp "
                                           "should contain a single element"):
        hvp(lambda a: a * 2, x, x)
    with pytest.raises(RuntimeError, match="While computing the hessian, found that the "
                                           "jacobian of the user-provided function with "
                                           "respect to input 0 is independent of the input"):
        vhp(lambda a: a.sum(), x, x, strict=True)


# -- grad(..., is_grads_batched=True) -----------------------------------------------------

class CSquare(Function):
    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z

    @staticmethod
    def backward(ctx, grad):
        z, = ctx.saved_tensors
        return grad * (2 * z).conj()


@pytest.mark.parametrize("dtype", [np.float64, np.complex128], ids=["f64", "c128"])
def test_is_grads_batched_equals_loop(dtype):
    rng = np.random.default_rng(0)

    def rnd(*s):
        a = rng.standard_normal(s)
        return a + 1j * rng.standard_normal(s) if dtype == np.complex128 else a

    x = T(rnd(3), requires_grad=True)
    y = T(rnd(2, 3), requires_grad=True)
    unused = T(rnd(2), requires_grad=True)
    o1 = CSquare.apply(x) * y.exp()        # (2, 3), through a custom Function
    o2 = (x * x.sin()).sum()               # scalar
    G1, G2 = T(rnd(4, 2, 3)), T(rnd(4))
    batched = wgrad.autograd.grad((o1, o2), (x, y, unused), (G1, G2), retain_graph=True,
                                  is_grads_batched=True, allow_unused=True)
    assert batched[2] is None
    for b in range(4):
        loop = wgrad.autograd.grad((o1, o2), (x, y), (G1[b], G2[b]), retain_graph=True)
        np.testing.assert_allclose(A(batched[0][b]), A(loop[0]), atol=1e-12)
        np.testing.assert_allclose(A(batched[1][b]), A(loop[1]), atol=1e-12)
    mat = wgrad.autograd.grad((o1, o2), (x, unused), (G1, G2), retain_graph=True,
                              is_grads_batched=True, materialize_grads=True)
    np.testing.assert_array_equal(A(mat[1]), np.zeros(2))
    with pytest.raises(RuntimeError, match="appears to not have been used in the graph"):
        wgrad.autograd.grad((o1,), (unused,), (G1,), retain_graph=True, is_grads_batched=True)
    with pytest.raises(RuntimeError, match=r"If `is_grads_batched=True`, we interpret the first"):
        wgrad.autograd.grad((o1,), (x,), (T(rnd(4, 3, 3)),), is_grads_batched=True)
    # create_graph: the batch is itself differentiable
    gb = wgrad.autograd.grad((o2,), (x,), (G2,), create_graph=True, is_grads_batched=True)[0]
    assert gb.requires_grad and tuple(gb.shape) == (4, 3)
    loop = [wgrad.autograd.grad(o2, x, G2[b], create_graph=True)[0] for b in range(4)]
    np.testing.assert_allclose(A(gb), np.stack([A(g) for g in loop]), atol=1e-12)
    (gg,) = wgrad.autograd.grad(gb.real.sum() if dtype == np.complex128 else gb.sum(), x,
                                retain_graph=True)
    (gl,) = wgrad.autograd.grad(sum((g.real if dtype == np.complex128 else g).sum()
                                    for g in loop), x, retain_graph=True)
    np.testing.assert_allclose(A(gg), A(gl), atol=1e-12)
    # without retain_graph the graph is freed afterwards
    wgrad.autograd.grad((o1, o2), (x,), (G1, G2), is_grads_batched=True)
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        wgrad.autograd.grad((o1, o2), (x,), (G1[0], G2[0]))
