"""Elementwise op table: gradcheck, gradgradcheck and the JAX identity on float64 and
complex128, with hypothesis-drawn shapes (0-d and broadcasting pairs) and values."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import wgrad
from wgrad.testing import broadcastable_pair, check_op, dtype_cases, shapes, values

F64, C128 = np.float64, np.complex128


def _alternate(shape):
    """A fixed boolean mask (True at even flat positions)."""
    n = int(np.prod(shape))
    return wgrad.tensor((np.arange(n) % 2 == 0).reshape(shape))
BOTH = (F64, C128)

# (name, wgrad fn, jax fn, dtypes, value range, points to keep away from)
UNARY = [
    ("neg", wgrad.neg, jnp.negative, BOTH, (-2, 2), None),
    ("exp", wgrad.exp, jnp.exp, BOTH, (-2, 2), None),
    ("exp2", wgrad.exp2, jnp.exp2, BOTH, (-2, 2), None),
    ("log", wgrad.log, jnp.log, BOTH, (0.2, 2), None),
    ("log2", wgrad.log2, jnp.log2, BOTH, (0.2, 2), None),
    ("log10", wgrad.log10, jnp.log10, BOTH, (0.2, 2), None),
    ("log1p", wgrad.log1p, jnp.log1p, BOTH, (0.0, 2), None),
    ("expm1", wgrad.expm1, jnp.expm1, BOTH, (-2, 2), None),
    ("sqrt", wgrad.sqrt, jnp.sqrt, BOTH, (0.2, 2), None),
    ("rsqrt", wgrad.rsqrt, jax.lax.rsqrt, BOTH, (0.2, 2), None),
    ("reciprocal", wgrad.reciprocal, jnp.reciprocal, BOTH, (0.3, 2), None),
    ("square", wgrad.square, jnp.square, BOTH, (-2, 2), None),
    ("sin", wgrad.sin, jnp.sin, BOTH, (-2, 2), None),
    ("cos", wgrad.cos, jnp.cos, BOTH, (-2, 2), None),
    ("tan", wgrad.tan, jnp.tan, BOTH, (-1, 1), None),
    ("asin", wgrad.asin, jnp.arcsin, BOTH, (-0.8, 0.8), None),
    ("acos", wgrad.acos, jnp.arccos, BOTH, (-0.8, 0.8), None),
    ("atan", wgrad.atan, jnp.arctan, BOTH, (-0.8, 0.8), None),
    ("sinh", wgrad.sinh, jnp.sinh, BOTH, (-2, 2), None),
    ("cosh", wgrad.cosh, jnp.cosh, BOTH, (-2, 2), None),
    ("tanh", wgrad.tanh, jnp.tanh, BOTH, (-1, 1), None),
    ("sigmoid", wgrad.sigmoid, jax.nn.sigmoid, BOTH, (-2, 2), None),
    ("relu", wgrad.relu, jax.nn.relu, (F64,), (-2, 2), [0.0]),
    ("softplus", wgrad.softplus, jax.nn.softplus, (F64,), (-2, 2), None),
    ("erf", wgrad.erf, jax.scipy.special.erf, (F64,), (-2, 2), None),
    ("abs", wgrad.abs, jnp.abs, BOTH, (-2, 2), [0.0]),
    ("angle", wgrad.angle, jnp.angle, (C128,), (0.2, 2), None),  # off the branch cut
    ("sgn", wgrad.sgn, None, (C128,), (-2, 2), [0.0]),
    ("conj", wgrad.conj, jnp.conj, (C128,), (-2, 2), None),
    ("real", wgrad.real, jnp.real, (C128,), (-2, 2), None),
    ("imag", wgrad.imag, jnp.imag, (C128,), (-2, 2), None),
    ("view_as_real", lambda x: wgrad.view_as_real(x),
     lambda x: jnp.stack([x.real, x.imag], -1), (C128,), (-2, 2), None),
    ("clamp", lambda x: wgrad.clamp(x, -0.5, 0.7), lambda x: jnp.clip(x, -0.5, 0.7), (F64,),
     (-2, 2), [-0.5, 0.7]),
    ("masked_fill", lambda x: wgrad.masked_fill(x, _alternate(x.shape), 2.0), None, BOTH,
     (-2, 2), None),
    ("pow_int", lambda x: x ** 3, lambda x: x ** 3, BOTH, (-2, 2), None),
    ("pow_neg_int", lambda x: x ** -2, lambda x: x ** -2, BOTH, (0.3, 2), None),
    ("pow_scalar", lambda x: x ** 2.5, lambda x: x ** 2.5, BOTH, (0.3, 2), None),
    ("pow_complex_exp", lambda x: x ** (1.5 + 0.5j), lambda x: x ** (1.5 + 0.5j), (C128,),
     (0.3, 2), None),
    ("rpow", lambda x: 2.0 ** x, lambda x: 2.0 ** x, BOTH, (-1, 1), None),
    ("asinh", wgrad.asinh, jnp.arcsinh, BOTH, (-0.8, 0.8), None),
    ("acosh", wgrad.acosh, jnp.arccosh, BOTH, (1.2, 2.5), None),  # off the cut (-inf, 1]
    ("atanh", wgrad.atanh, jnp.arctanh, BOTH, (-0.6, 0.6), None),
    ("igamma_x", lambda x: wgrad.igamma(wgrad.tensor(1.5, dtype=x.dtype), x),
     lambda x: jax.scipy.special.gammainc(1.5, x), (F64,), (0.3, 2), None),
    ("igammac_x", lambda x: wgrad.igammac(wgrad.tensor(1.5, dtype=x.dtype), x),
     lambda x: jax.scipy.special.gammaincc(1.5, x), (F64,), (0.3, 2), None),
    ("floor", wgrad.floor, jnp.floor, (F64,), (-2, 2), [-2, -1, 0, 1, 2]),
    ("sign", wgrad.sign, jnp.sign, (F64,), (-2, 2), [0.0]),
]


@pytest.mark.parametrize("name,wfn,jfn,dtypes,rng,avoid,dtype", **dtype_cases(UNARY, 3))
@given(data=st.data())
def test_unary(name, wfn, jfn, dtypes, rng, avoid, dtype, data):
    shape = data.draw(shapes(max_dims=2))
    x = data.draw(values(dtype, shape, *rng, avoid=avoid))
    t = wgrad.tensor(x, requires_grad=True)
    check_op(wfn, (t,), jfn)


BINARY = [
    ("add", lambda a, b: a + b, jnp.add, (-2, 2), None),
    ("add_alpha", lambda a, b: wgrad.add(a, b, alpha=2), lambda a, b: a + 2 * b, (-2, 2), None),
    ("sub", lambda a, b: a - b, jnp.subtract, (-2, 2), None),
    ("mul", lambda a, b: a * b, jnp.multiply, (-2, 2), None),
    ("div", lambda a, b: a / b, jnp.divide, (0.5, 2), None),
    ("pow", lambda a, b: a ** b, jnp.power, (0.5, 2), None),
]


@pytest.mark.parametrize("name,wfn,jfn,rng,avoid", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("da,db", [(F64, F64), (C128, C128), (F64, C128), (C128, F64)],
                         ids=["rr", "cc", "rc", "cr"])
@given(data=st.data())
def test_binary(name, wfn, jfn, rng, avoid, da, db, data):
    sa, sb = data.draw(broadcastable_pair(max_dims=2))
    a = wgrad.tensor(data.draw(values(da, sa, *rng)), requires_grad=True)
    b = wgrad.tensor(data.draw(values(db, sb, *rng)), requires_grad=True)
    check_op(wfn, (a, b), jfn)


def _gap(x, y):
    return np.all(np.abs(np.asarray(x) - np.asarray(y)) > 0.1)


@pytest.mark.parametrize("op,jop", [(wgrad.maximum, jnp.maximum), (wgrad.minimum, jnp.minimum)])
@given(data=st.data())
def test_maximum_minimum(op, jop, data):
    sa, sb = data.draw(broadcastable_pair(max_dims=2))
    xa = data.draw(values(F64, sa))
    xb = data.draw(values(F64, sb).filter(lambda b: _gap(*np.broadcast_arrays(xa, b))))
    a = wgrad.tensor(xa, requires_grad=True)
    b = wgrad.tensor(xb, requires_grad=True)
    check_op(op, (a, b), jop)


def test_maximum_ties_share_gradient():
    a = wgrad.tensor([1.0, 2.0], requires_grad=True)
    b = wgrad.tensor([1.0, 3.0], requires_grad=True)
    wgrad.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [0.5, 0.0] and b.grad.tolist() == [0.5, 1.0]


@given(data=st.data())
@pytest.mark.parametrize("dtype", BOTH, ids=["f64", "c128"])
def test_where(dtype, data):
    sa, sb = data.draw(broadcastable_pair(max_dims=2))
    a = wgrad.tensor(data.draw(values(dtype, sa)), requires_grad=True)
    b = wgrad.tensor(data.draw(values(dtype, sb)), requires_grad=True)
    shape = np.broadcast_shapes(sa, sb)
    cond = wgrad.tensor((np.arange(int(np.prod(shape))).reshape(shape) % 2).astype(bool))
    check_op(lambda a, b: wgrad.where(cond, a, b), (a, b),
             lambda a, b: jnp.where(cond._data, a, b))


@given(data=st.data())
def test_complex_and_polar(data):
    shape = data.draw(shapes(max_dims=2))
    re = wgrad.tensor(data.draw(values(F64, shape)), requires_grad=True)
    im = wgrad.tensor(data.draw(values(F64, shape)), requires_grad=True)
    check_op(wgrad.complex, (re, im), jax.lax.complex)
    r = wgrad.tensor(data.draw(values(F64, shape, 0.3, 2)), requires_grad=True)
    check_op(wgrad.polar, (r, im), lambda r, t: r * jnp.exp(1j * t))


@given(data=st.data())
def test_view_as_complex(data):
    shape = data.draw(shapes(max_dims=2)).__add__((2,))
    x = wgrad.tensor(data.draw(values(F64, shape)), requires_grad=True)
    check_op(wgrad.view_as_complex, (x,), lambda x: x[..., 0] + 1j * x[..., 1])


# -- PyTorch's rules at non-differentiable points (docs/complex.md) ----------------------

def test_abs_at_zero_is_zero():
    x = wgrad.tensor([0.0, -1.0, 2.0], dtype=wgrad.float64, requires_grad=True)
    x.abs().sum().backward()
    assert x.grad.tolist() == [0.0, -1.0, 1.0]
    z = wgrad.tensor([0j, 3 + 4j], requires_grad=True)
    z.abs().sum().backward()
    np.testing.assert_allclose(z.grad.numpy(), [0, 0.6 + 0.8j], rtol=1e-6)


def test_relu_at_zero_is_zero_and_sqrt_at_zero_is_inf():
    x = wgrad.tensor([0.0, 1.0], requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [0.0, 1.0]
    y = wgrad.tensor([0.0], requires_grad=True)
    y.sqrt().sum().backward()
    assert y.grad.tolist() == [float("inf")]


def test_pow_at_zero_base():
    x = wgrad.tensor([0.0, 2.0], dtype=wgrad.float64, requires_grad=True)
    e = wgrad.tensor([2.0, 3.0], dtype=wgrad.float64, requires_grad=True)
    (x ** e).sum().backward()
    assert x.grad.tolist() == [0.0, 12.0]
    np.testing.assert_allclose(e.grad.numpy(), [0.0, 8 * np.log(2)])
    z = wgrad.tensor([0.0, 1.0], dtype=wgrad.float64, requires_grad=True)
    (z ** 0).sum().backward()
    assert z.grad.tolist() == [0.0, 0.0]


@pytest.mark.parametrize("dtype", BOTH, ids=["f64", "c128"])
@pytest.mark.parametrize("p", [-3, -1, 0, 1, 2, 5, 2.0])
def test_integer_power_fast_path_matches_general_power(dtype, p):
    # NOTE [Integer powers]: x ** <int> is lax.integer_pow; a tensor exponent takes the
    # general power. Values, gradients and second derivatives must agree.
    x0 = (np.linspace(0.4, 1.7, 6) * (1 + 0.5j if dtype is C128 else 1)).astype(dtype)
    x1 = wgrad.tensor(x0, requires_grad=True)
    x2 = wgrad.tensor(x0, requires_grad=True)
    y1 = x1 ** p
    y2 = x2 ** wgrad.tensor(float(p), dtype=wgrad.float64)
    assert y1.grad_fn.name() == "PowBackward0" and y2.grad_fn.name() == "PowBackward1"
    np.testing.assert_allclose(y1.detach().numpy(), y2.detach().numpy(), rtol=1e-12)
    v = wgrad.tensor((np.arange(1, 7) * (1 - 2j if dtype is C128 else 1)).astype(dtype))
    (g1,) = wgrad.autograd.grad(y1, x1, v, create_graph=True)
    (g2,) = wgrad.autograd.grad(y2, x2, v, create_graph=True)
    np.testing.assert_allclose(g1.detach().numpy(), g2.detach().numpy(), rtol=1e-12)
    if p == 0:  # a constant: its gradient does not depend on x (torch: zeros_like(x))
        assert not g1.requires_grad and not g1.abs().sum().item()
        nan = wgrad.full((6,), float("nan"), dtype=v.dtype)
        (g0,) = wgrad.autograd.grad(x1 ** 0, x1, nan)  # zeros even for a NaN gradient
        assert g0.tolist() == [0] * 6
        return
    (h1,) = wgrad.autograd.grad(g1.abs().sum(), x1)
    (h2,) = wgrad.autograd.grad(g2.abs().sum(), x2)
    np.testing.assert_allclose(h1.numpy(), h2.numpy(), rtol=1e-10)


def test_holomorphic_gradient_is_conjugate_of_jax_grad():
    z0 = 0.3 + 0.7j
    z = wgrad.tensor(z0, dtype=wgrad.complex128, requires_grad=True)
    (z.sin() * z).abs().backward()
    expect = np.conj(jax.grad(lambda z: jnp.abs(jnp.sin(z) * z))(z0))
    np.testing.assert_allclose(z.grad.item(), expect, rtol=1e-12)


def test_gradcheck_rejects_dropped_conjugate():
    from wgrad.ops import elementwise as E
    z = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    good = E._mul.formulas["self"]
    E._mul.formulas["self"] = lambda grad, other: grad * other  # conj dropped
    E._mul._bwd_cache.clear()
    try:
        with pytest.raises(wgrad.autograd.GradcheckError, match="Jacobian mismatch"):
            wgrad.autograd.gradcheck(lambda z: z * wgrad.tensor([1j, 2, 3 - 1j]), (z,))
        assert not wgrad.autograd.gradcheck(lambda z: z * wgrad.tensor([1j, 2, 3 - 1j]), (z,),
                                            raise_exception=False)
    finally:
        E._mul.formulas["self"] = good
        E._mul._bwd_cache.clear()


def test_nondifferentiable_ops_do_not_require_grad():
    x = wgrad.randn(4, requires_grad=True)
    for y in (x > 0, x == x, x.isnan(), x.argmax(), wgrad.isfinite(x), x.sign().detach()):
        assert not y.requires_grad and y.grad_fn is None


def test_type_promotion_matches_torch():
    f32 = wgrad.ones(2)
    i64 = wgrad.ones(2, dtype=wgrad.int64)
    assert (f32 * 2).dtype is wgrad.float32
    assert (f32 * 1j).dtype is wgrad.complex64
    assert (i64 * 2.5).dtype is wgrad.float32
    assert (i64 / i64).dtype is wgrad.float32
    assert (f32 + wgrad.tensor(1.0, dtype=wgrad.float64)).dtype is wgrad.float32
    assert (wgrad.ones(2, dtype=wgrad.float64) * 1j).dtype is wgrad.complex128
    assert (f32 + wgrad.ones(2, dtype=wgrad.complex128)).dtype is wgrad.complex128


@pytest.mark.parametrize("call,msg", [
    (lambda z: wgrad.softplus(z), '"softplus_cpu" not implemented for \'ComplexDouble\''),
    (lambda z: wgrad.atan2(z, z), '"atan2_cpu" not implemented for \'ComplexDouble\''),
    (lambda z: wgrad.erf(z), '"erf_vml_cpu" not implemented for \'ComplexDouble\''),
    (lambda z: wgrad.floor(z), "floor is not supported for complex inputs"),
])
def test_real_only_ops_reject_complex_as_torch(call, msg):
    z = wgrad.ones(2, dtype=wgrad.complex128)
    with pytest.raises(NotImplementedError, match=msg):
        call(z)


def test_inverse_hyperbolic_inplace_has_no_derivative_and_igamma_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (wgrad, torch):
        y = lib.acosh_(lib.tensor([2.0, 3.0], requires_grad=True).clone())
        with pytest.raises(NotImplementedError,
                           match="the derivative for 'inplace version of acosh' is not"):
            y.sum().backward()
    a, x = np.array([0.3, 0.5, 2.0]), np.array([0.3, 0.7, 1.2])
    res = []
    for lib in (wgrad, torch):
        xt = lib.tensor(x, requires_grad=True)
        p, q = lib.igamma(lib.tensor(a), xt), lib.igammac(lib.tensor(a), xt)
        g, = lib.autograd.grad((p * 2 + q).sum(), xt)
        res.append((p.detach().numpy(), q.detach().numpy(), g.numpy(),
                    lib.isin(lib.tensor([1, 2, 3]), lib.tensor([2, 5])).numpy(),
                    lib.signbit(lib.tensor([-0.0, 1.0, -2.0])).numpy()))
    for w, t in zip(*res):
        np.testing.assert_allclose(w, t, rtol=1e-10)
    with pytest.raises(NotImplementedError, match="the derivative for 'igamma: input'"):
        wgrad.igamma(wgrad.tensor(a, requires_grad=True), wgrad.tensor(x)).sum().backward()
