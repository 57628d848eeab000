"""torch.distributions' sampling primitives against torch itself: ``_standard_gamma_grad``
and ``_dirichlet_grad`` value by value over grids that cross every branch of torch's
algorithms (and against finite differences of the gamma and beta CDFs), the draws of
``_standard_gamma`` and ``_sample_dirichlet`` by shape, dtype, reproducibility and
moments, their special values, autograd nodes, gradients and errors."""
import warnings

import numpy as np
import pytest
import scipy.special as ss

import wgrad
from _outcome import outcome

torch = pytest.importorskip("torch")

_DT = {"float64": (np.float64, 1e-11), "float32": (np.float32, 8 * 2.0 ** -23)}


def _gamma_grid():
    """(alpha, x): the Taylor series (x < 0.8), Rice's expansion (alpha > 8, x near alpha
    and away from it), the rational approximation, and their boundaries."""
    alphas = [1e-3, 0.1, 0.5, 1., 2., 7.9, 8., 8.1, 20., 100., 1e4]
    ratios = [1e-3, 0.3, 0.89, 0.9, 0.95, 1., 1.05, 1.1, 1.11, 2., 4.]
    xs = [1e-20, 0.01, 0.5, 0.799, 0.8, 0.81, 1.5, 5.]
    pts = [(a, a * r) for a in alphas for r in ratios] + [(a, x) for a in alphas for x in xs]
    return np.array(pts).T


def _dirichlet_grid():
    """(x, alpha, total): small x, x near 1, both parameters large (at the mean too), and
    the rational correction."""
    xs = [1e-6, 0.01, 0.2, 0.45, 0.5, 0.55, 0.9, 0.99, 0.999999]
    ps = [0.05, 0.5, 1., 3., 7., 20., 100.]
    pts = [(x, a, a + b) for x in xs for a in ps for b in ps]
    pts += [(a / (a + b), a, a + b) for a in ps for b in ps]
    return np.array(pts).T


def _branches(x, alpha, total):
    beta = total - alpha
    boundary = total * x * (1 - x)
    small_a = (x <= 0.5) & (boundary < 2.5)
    small_b = ~small_a & (x >= 0.5) & (boundary < 0.75)
    mid = ~small_a & ~small_b & (alpha > 6) & (beta > 6)
    return small_a, small_b, mid, ~(small_a | small_b | mid)


@pytest.mark.parametrize("dtype", list(_DT))
def test_standard_gamma_grad_matches_torch(dtype):
    dt, rtol = _DT[dtype]
    alpha, x = (v.astype(dt) for v in _gamma_grid())
    taylor = x < np.float32(0.8)
    assert taylor.any() and (~taylor & (alpha > 8)).any() and (~taylor & (alpha <= 8)).any()
    ours = wgrad._standard_gamma_grad(wgrad.from_numpy(alpha), wgrad.from_numpy(x))
    ref = torch._standard_gamma_grad(torch.from_numpy(alpha), torch.from_numpy(x))
    assert ours.dtype is getattr(wgrad, dtype)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=rtol, atol=0)


@pytest.mark.parametrize("dtype", list(_DT))
def test_dirichlet_grad_matches_torch(dtype):
    dt, rtol = _DT[dtype]
    x, alpha, total = (v.astype(dt) for v in _dirichlet_grid())
    assert all(b.any() for b in _branches(x, alpha, total))
    ours = wgrad._dirichlet_grad(*map(wgrad.from_numpy, (x, alpha, total)))
    ref = torch._dirichlet_grad(*map(torch.from_numpy, (x, alpha, total)))
    assert ours.dtype is getattr(wgrad, dtype)
    np.testing.assert_allclose(ours.numpy(), ref.numpy(), rtol=rtol, atol=0)


def test_gradients_are_the_derivatives_of_the_inverse_cdfs():
    """-(dF/dalpha) / pdf by central differences of the regularized incomplete gamma and
    beta functions (beta held fixed), at quantiles of each distribution; torch's
    approximations are good to ~1e-3."""
    q = np.array([0.05, 0.3, 0.5, 0.7, 0.95])
    a = np.repeat([0.1, 0.5, 1., 2., 5., 7.9, 8.5, 20., 100.], len(q))
    x = ss.gammaincinv(a, np.tile(q, len(a) // len(q)))
    h = 1e-5 * a
    dF = (ss.gammainc(a + h, x) - ss.gammainc(a - h, x)) / (2 * h)
    pdf = np.exp((a - 1) * np.log(x) - x - ss.gammaln(a))
    ours = wgrad._standard_gamma_grad(wgrad.tensor(a), wgrad.tensor(x)).numpy()
    np.testing.assert_allclose(ours, -dF / pdf, rtol=2e-3)

    p = [0.3, 1., 2.5, 8., 30.]
    al, be, qq = (v.ravel() for v in np.meshgrid(p, p, q, indexing="ij"))
    x = ss.betaincinv(al, be, qq)
    h = 1e-5 * al
    dF = (ss.betainc(al + h, be, x) - ss.betainc(al - h, be, x)) / (2 * h)
    pdf = np.exp((al - 1) * np.log(x) + (be - 1) * np.log1p(-x) - ss.betaln(al, be))
    ours = wgrad._dirichlet_grad(*map(wgrad.tensor, (x, al, al + be))).numpy()
    np.testing.assert_allclose(ours, -dF / pdf / (1 - x), rtol=2e-3)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_standard_gamma_draws(dtype):
    d = getattr(wgrad, dtype)
    assert wgrad._standard_gamma(wgrad.ones(2, 0, 3, dtype=d)).shape == (2, 0, 3)
    s = wgrad._standard_gamma(wgrad.tensor(2., dtype=d))
    assert s.shape == () and s.dtype is d
    alpha = wgrad.tensor([0.3, 2., 30.], dtype=d).expand(4000, 3)
    wgrad.manual_seed(3)
    x = wgrad._standard_gamma(alpha)
    wgrad.manual_seed(3)
    assert x.dtype is d and x.shape == (4000, 3)
    assert np.array_equal(x.numpy(), wgrad._standard_gamma(alpha).numpy())
    g = wgrad.Generator().manual_seed(5)
    y = wgrad._standard_gamma(alpha, generator=g)
    assert np.array_equal(y.numpy(), wgrad._standard_gamma(
        alpha, wgrad.Generator().manual_seed(5)).numpy())
    a, n = np.array([0.3, 2., 30.]), 4000
    v = x.numpy().astype(np.float64)
    assert (v > 0).all()
    # mean and variance of Gamma(a, 1) are a; six standard errors
    assert (np.abs(v.mean(0) - a) < 6 * np.sqrt(a / n)).all()
    assert (np.abs(v.var(0) - a) < 6 * a * np.sqrt((2 + 6 / a) / n)).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_sample_dirichlet_draws(dtype):
    d = getattr(wgrad, dtype)
    alpha = wgrad.tensor([0.5, 1., 4.], dtype=d).expand(4000, 3)
    wgrad.manual_seed(4)
    p = wgrad._sample_dirichlet(alpha)
    wgrad.manual_seed(4)
    assert p.dtype is d and p.shape == (4000, 3)
    assert np.array_equal(p.numpy(), wgrad._sample_dirichlet(alpha).numpy())
    v = p.numpy().astype(np.float64)
    assert (v > 0).all() and (v < 1).all()
    np.testing.assert_allclose(v.sum(-1), 1, rtol=0, atol=4 * np.finfo(d.np).eps)
    a = np.array([0.5, 1., 4.])
    m, a0 = a / a.sum(), a.sum()
    assert (np.abs(v.mean(0) - m) < 6 * np.sqrt(m * (1 - m) / (a0 + 1) / 4000)).all()
    assert wgrad._sample_dirichlet(wgrad.ones(2, 0, dtype=d)).shape == (2, 0)


# deterministic cases and errors, each compared with torch's outcome
_OUTCOMES = {
    # torch keeps draws at or above the smallest normal number: alpha 0 and NaN give it
    "gamma_special": lambda T: [T._standard_gamma(T.tensor([0., float("nan"), float("inf")],
                                                           dtype=d)) for d in _floats(T)],
    "dirichlet_special": lambda T: [T._sample_dirichlet(T.tensor(
        [[0., 0.], [float("inf"), 1.]], dtype=d)) for d in _floats(T)]
    + [T._sample_dirichlet(T.tensor(3.))],
    "gamma_int": lambda T: T._standard_gamma(T.tensor([1, 2])),
    "gamma_half": lambda T: T._standard_gamma(T.ones(2, dtype=T.float16)),
    "gamma_number": lambda T: T._standard_gamma(2.),
    "dirichlet_bfloat16": lambda T: T._sample_dirichlet(T.ones(2, dtype=T.bfloat16)),
    "dirichlet_complex": lambda T: T._sample_dirichlet(T.ones(2, dtype=T.complex64)),
    "gamma_grad_broadcast": lambda T: T._standard_gamma_grad(T.ones(2, 1), T.ones(3)),
    "gamma_grad_shapes": lambda T: T._standard_gamma_grad(T.ones(3), T.ones(2)),
    "gamma_grad_dtypes": lambda T: T._standard_gamma_grad(T.ones(3), T.ones(3).double()),
    "gamma_grad_long": lambda T: T._standard_gamma_grad(T.ones(3).long(), T.ones(3).long()),
    "gamma_grad_number": lambda T: T._standard_gamma_grad(T.ones(3), 1.),
    "dirichlet_grad_dtypes": lambda T: T._dirichlet_grad(T.ones(3), T.ones(3), T.ones(3).double()),
    "dirichlet_grad_shapes": lambda T: T._dirichlet_grad(T.ones(3), T.ones(2, 1),
                                                         T.ones(4, 1, 2)),
    "dirichlet_grad_long": lambda T: T._dirichlet_grad(*[T.ones(3).long()] * 3),
    "dirichlet_grad_number": lambda T: T._dirichlet_grad(T.ones(3), T.ones(3), 2.),
}


def _floats(T):
    return (T.float32, T.float64)


def _same(a, b):
    if isinstance(a, tuple) or isinstance(b, tuple):
        assert a == b
        return
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert str(u.dtype).split(".")[-1] == str(v.dtype).split(".")[-1]
        assert np.array_equal(u.detach().numpy(), v.detach().numpy(), equal_nan=True)


@pytest.mark.parametrize("name", list(_OUTCOMES))
def test_outcome_matches_torch(name):
    _same(outcome(wgrad, _OUTCOMES[name]), outcome(torch, _OUTCOMES[name]))


def test_resize_warning_as_torch():
    """torch's output has the first argument's shape, resized (with a warning) to the
    broadcast one."""
    for T in (wgrad, torch):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            assert T._dirichlet_grad(T.ones(3), T.ones(2, 3), T.ones(3)).shape == (2, 3)
            assert T._standard_gamma_grad(T.ones(0), T.ones(2, 0)).shape == (2, 0)
        assert [str(m.message)[:77] for m in w] == [
            "An output with one or more elements was resized since it had shape [3], which"]


def test_negative_concentration_raises():
    """torch's draw for a negative concentration is no gamma draw: wgrad raises."""
    for fn in (wgrad._standard_gamma, wgrad._sample_dirichlet):
        with pytest.raises(NotImplementedError, match="concentrations >= 0"):
            fn(wgrad.tensor([1., -0.5]))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001  (the error is the value compared)
        return type(e).__name__, str(e)
    raise AssertionError("no error")


def test_standard_gamma_backward_is_torchs_formula():
    alpha = np.array([0.05, 0.7, 3., 40.])
    g = np.array([1., -2., 0.5, 3.])
    a = wgrad.tensor(alpha, requires_grad=True)
    x = wgrad._standard_gamma(a)
    assert type(x.grad_fn).__name__ == "StandardGammaBackward0"
    assert len(x.grad_fn.next_functions) == 1
    x.backward(wgrad.tensor(g))
    ref = torch.tensor(g) * torch._standard_gamma_grad(torch.tensor(alpha),
                                                       torch.tensor(x.detach().numpy()))
    np.testing.assert_allclose(a.grad.numpy(), ref.numpy(), rtol=1e-11)
    # the gradient's own derivative raises, as torch's
    errs = []
    for T in (wgrad, torch):
        t = T.tensor(alpha, requires_grad=True)
        gg, = T.autograd.grad(T._standard_gamma(t).sum(), t, create_graph=True)
        errs.append(_error(lambda: gg.sum().backward()))
        assert not T._standard_gamma_grad(t.detach(), t).requires_grad
    assert errs[0] == errs[1]
    with wgrad.no_grad():
        assert not wgrad._standard_gamma(a).requires_grad


@pytest.mark.parametrize("op", ["_sample_dirichlet", "_dirichlet_grad", "_standard_gamma",
                                "_standard_gamma_grad"])
def test_autograd_and_forward_ad_as_torch(op):
    """Node names, edges and the errors of backward and of forward-mode AD."""
    def call(T, t):
        if op == "_dirichlet_grad":
            return T._dirichlet_grad(T.full((2,), 0.3), t, T.full((2,), 3.))
        if op == "_standard_gamma_grad":
            return T._standard_gamma_grad(t, T.ones(2))
        return getattr(T, op)(t)

    seen = []
    for T in (wgrad, torch):
        t = T.tensor([0.5, 2.], requires_grad=True)
        y = call(T, t)
        node = (type(y.grad_fn).__name__, len(y.grad_fn.next_functions))
        bwd = None if op == "_standard_gamma" else _error(lambda: y.sum().backward())
        fw = T.autograd.forward_ad
        with fw.dual_level():
            fwd = _error(lambda: call(T, fw.make_dual(T.tensor([0.5, 2.]), T.ones(2))))
        seen.append((node, bwd, fwd))
    assert seen[0] == seen[1]
