"""wgrad.special against torch.special: values over grids that cross every branch of
torch's algorithms (float64 and float32), gradients (numerically and against torch's
formulas) and grad_fn names, results that do not require grad where torch's do not,
torch's errors, and out=."""
import jax
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op

torch = pytest.importorskip("torch")

X = np.array([[0.3, 1.7, 2.5], [0.9, 0.05, 3.2]])  # in every function's domain
# name, function of (library's special module, input tensor)
CASES = [(n, (lambda n: lambda s, x: getattr(s, n)(x))(n)) for n in (
    "digamma", "psi", "erf", "erfc", "exp2", "expit", "expm1", "gammaln", "i0", "log1p",
    "sinc")] + [
    ("erfinv", lambda s, x: s.erfinv(x / 4)),
    ("logit", lambda s, x: s.logit(x / 4)),
    ("logit eps", lambda s, x: s.logit(x, eps=0.1)),
    ("gammainc", lambda s, x: s.gammainc(x.detach() + 1, x)),
    ("gammaincc", lambda s, x: s.gammaincc(x.detach() + 1, x)),
    ("log_softmax", lambda s, x: s.log_softmax(x, 1)),
    ("softmax", lambda s, x: s.softmax(x, 0)),
    ("logsumexp", lambda s, x: s.logsumexp(x, 1, keepdim=True)),
    ("multigammaln", lambda s, x: s.multigammaln(x + 1, 2)),
    ("polygamma", lambda s, x: s.polygamma(2, x)),
    ("round", lambda s, x: s.round(x, decimals=1)),
    ("xlogy", lambda s, x: s.xlogy(x, x + 1)),
    ("xlogy number first", lambda s, x: s.xlogy(2., x)),
    ("xlogy number second", lambda s, x: s.xlogy(x, 3.)),
    ("entr", lambda s, x: s.entr(x)),
    ("erfcx", lambda s, x: s.erfcx(x * 3 - 4)),
    ("log_ndtr", lambda s, x: s.log_ndtr(x * 3 - 5)),
    ("ndtr", lambda s, x: s.ndtr(x - 1)),
    ("ndtri", lambda s, x: s.ndtri(x / 4)),
    ("i0e", lambda s, x: s.i0e(x * 4 - 3)),
    ("i1", lambda s, x: s.i1(x - 1)),
    ("i1e", lambda s, x: s.i1e(x * 4 - 3)),
    ("i1 at 0", lambda s, x: s.i1(x * 0)),
    ("i1e at 0", lambda s, x: s.i1e(x * 0)),
    ("xlog1py", lambda s, x: s.xlog1py(x, x * 2 - 1)),
    ("xlog1py number first", lambda s, x: s.xlog1py(2., x)),
    ("xlog1py number second", lambda s, x: s.xlog1py(x, 3.)),
    ("zeta in q", lambda s, x: s.zeta(x.detach() + 1.5, x)),
    ("zeta number first", lambda s, x: s.zeta(3., x)),
]


@pytest.mark.parametrize("name,f", CASES, ids=[c[0] for c in CASES])
def test_special_matches_torch(name, f):
    out = []
    for lib in (wgrad, torch):
        x = lib.tensor(X, requires_grad=True)
        y = f(lib.special, x)
        y.backward(lib.ones_like(y))
        out.append((y.detach().numpy(), x.grad.numpy(), type(y.grad_fn).__name__))
    (a, ga, na), (b, gb, nb) = out
    # torch.testing's float64 tolerances (digamma's gradient, trigamma, differs by ~5e-10)
    np.testing.assert_allclose(a, b, rtol=1e-7, atol=1e-7)
    np.testing.assert_allclose(ga, gb, rtol=1e-7, atol=1e-7)
    assert na == nb


DIFFERENTIABLE = ["entr", "erfcx", "log_ndtr", "ndtr", "ndtri", "i0e", "i1", "i1e"]
JSP = jax.scipy.special


@pytest.mark.parametrize("name", DIFFERENTIABLE)
def test_gradients_numerically_and_against_jax(name):
    """gradcheck, gradgradcheck and conj(jax.vjp(conj g)) of JAX's own function (torch.special
    takes real inputs only: complex ones raise, test_errors_as_torch)."""
    x = wgrad.tensor([0.07, 0.4, 0.93] if name in ("ndtri", "entr") else
                     [-2.3, -0.6, 0.35, 1.7, 6.2], dtype=wgrad.float64, requires_grad=True)
    check_op(getattr(wgrad.special, name), (x,), getattr(JSP, name))


def test_binary_gradients_numerically_and_against_jax():
    x = wgrad.tensor([0.5, 1.5, 3.0], dtype=wgrad.float64, requires_grad=True)
    y = wgrad.tensor([0.2, 2.0, 0.7], dtype=wgrad.float64, requires_grad=True)
    check_op(wgrad.special.xlog1py, (x, y), JSP.xlog1py)
    s = x.detach() + 1  # zeta has no derivative in its first argument, as torch's
    check_op(lambda q: wgrad.special.zeta(s, q), (y,),
             lambda q: JSP.zeta(jax.numpy.asarray(s.numpy()), q))


def _grid(name, dtype):
    """Arguments crossing the branch points of torch's algorithms, and special values."""
    if name == "ndtri":
        x = np.concatenate([np.linspace(-0.1, 1.1, 241), [1e-30, 1e-10, 0.5, 1 - 1e-7]])
    else:
        x = np.concatenate([np.linspace(-30, 30, 601), [-26.8, -6.2, -2.1, -1, 0, -0.0,
                                                        1e-8, 1e-3, 2, 4.99, 5, 8, 25.8,
                                                        26.6, 27, 100, 1e3, 1e5]])
    x = np.concatenate([x, [np.inf, -np.inf, np.nan]])
    if name in POLYNOMIALS:
        x = np.concatenate([np.linspace(-1.5, 1.5, 31), [-1, 1, 0, 3, -7]])
        n = np.array([-1, 0, 1, 2, 3, 5, 6, 7, 10, 25], dtype=float)
        x, n = np.meshgrid(x, n)
        return x.astype(dtype), n.astype(dtype)
    if name in ("xlog1py", "zeta"):
        x, y = np.meshgrid(x[::7], np.concatenate([np.linspace(-9.5, 30, 41), [-20.5, -3,
                                                                              0, 1, np.nan]]))
        if name == "zeta":
            x = np.abs(x) + 1
        return x.astype(dtype), y.astype(dtype)
    return (x.astype(dtype),)


POLYNOMIALS = [n for n in wgrad.special.__all__ if "polynomial" in n]
ALL_OWN = sorted(n for n in wgrad.special.__all__ if n not in (
    "digamma", "erf", "erfc", "erfinv", "exp2", "expit", "expm1", "gammainc", "gammaincc",
    "gammaln", "i0", "log1p", "log_softmax", "logit", "logsumexp", "multigammaln",
    "polygamma", "psi", "round", "sinc", "softmax", "xlogy"))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", ALL_OWN)
def test_values_match_torch(name, dtype):
    args = _grid(name, getattr(np, dtype))
    got = getattr(wgrad.special, name)(*(wgrad.tensor(a) for a in args)).numpy()
    want = getattr(torch.special, name)(*(torch.tensor(a) for a in args)).numpy()
    assert got.dtype == want.dtype
    # XLA flushes subnormal results to zero, torch's CPU kernels keep them
    tiny = np.finfo(want.dtype).tiny
    want = np.where(np.abs(want) < tiny, 0, want)
    got = np.where(np.abs(got) < tiny, 0, got)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_array_equal(np.isinf(got) * np.sign(got), np.isinf(want) * np.sign(want))
    ok = np.isfinite(want)
    rtol = 1e-12 if dtype == "float64" else 5e-6
    # an absolute floor where a value is a difference of larger ones (ndtr's tail, a zero
    # of a Bessel function); a polynomial's trigonometric form loses ~n ulp near its zeros
    atol = 4 * np.finfo(want.dtype).eps * (2 + np.abs(args[1]) if name in POLYNOMIALS
                                            else np.ones_like(want))
    assert np.all(np.abs(got[ok] - want[ok]) <= rtol * np.abs(want[ok]) + atol[ok])


NONDIFF = [n for n in ALL_OWN if n not in DIFFERENTIABLE + ["xlog1py", "zeta"]]


@pytest.mark.parametrize("name", NONDIFF)
def test_no_derivative_as_torch(name):
    for lib in (wgrad, torch):
        x = lib.tensor([0.5, 1.5], requires_grad=True)
        args = (x, lib.tensor([2.0, 3.0])) if name in POLYNOMIALS else (x,)
        y = getattr(lib.special, name)(*args)
        assert not y.requires_grad and y.grad_fn is None
        out = lib.empty(2)  # out= takes inputs that require grad, as torch's
        getattr(lib.special, name)(*args, out=out)
        np.testing.assert_allclose(out.numpy(), y.numpy())


@pytest.mark.parametrize("call", [
    lambda s, lib: s.entr(lib.tensor([1 + 1j])),
    lambda s, lib: s.ndtr(lib.tensor([1 + 1j])),
    lambda s, lib: s.bessel_j0(lib.tensor([1 + 1j])),
    lambda s, lib: s.chebyshev_polynomial_t(lib.tensor([1 + 1j]), 2),
    lambda s, lib: s.zeta(lib.tensor([2.0], requires_grad=True), lib.tensor([1.0])).backward(),
    lambda s, lib: s.i1(lib.tensor([1.0], requires_grad=True), out=lib.empty(1)),
    lambda s, lib: s.zeta(2., 3.),
    lambda s, lib: s.xlog1py(1, 2.),
    lambda s, lib: s.chebyshev_polynomial_t(0.5, 2),
])
def test_errors_as_torch(call):
    errors = []
    for lib in (wgrad, torch):
        with pytest.raises(Exception) as e:
            call(lib.special, lib)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]


def test_integer_inputs_compute_in_the_default_float():
    for lib in (wgrad, torch):
        assert str(lib.special.entr(lib.tensor([1, 2])).dtype).endswith("float32")
        assert str(lib.special.zeta(lib.tensor([2, 3]), lib.tensor([1, 2])).dtype
                   ).endswith("float32")
    np.testing.assert_allclose(wgrad.special.xlog1py(2, wgrad.tensor([1, 2])).numpy(),
                               torch.special.xlog1py(2, torch.tensor([1, 2])).numpy())


def test_every_torch_special_function_is_here():
    public = {n for n in dir(torch.special) if not n.startswith("_") and
              callable(getattr(torch.special, n)) and n not in ("Tensor",)}
    assert sorted(n for n in public if not hasattr(wgrad.special, n)) == []
