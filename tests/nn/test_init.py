"""nn.init against torch: gains, fans and messages exactly; distributions by bounds and
loose moments (values need not equal torch's random stream)."""
import math

import numpy as np
import pytest

import wgrad
from wgrad.nn import init

torch = pytest.importorskip("torch")
tinit = torch.nn.init


def _a(t):
    return np.asarray(t.detach())


@pytest.mark.parametrize("args", [("linear",), ("conv2d",), ("sigmoid",), ("tanh",),
                                  ("relu",), ("leaky_relu",), ("leaky_relu", 0.2),
                                  ("leaky_relu", 3), ("selu",)])
def test_calculate_gain(args):
    assert init.calculate_gain(*args) == tinit.calculate_gain(*args)


@pytest.mark.parametrize("shape", [(3, 4), (3, 4, 5), (6, 2, 3, 3), (2, 1)])
def test_fans(shape):
    assert init._calculate_fan_in_and_fan_out(wgrad.empty(*shape)) == \
        tinit._calculate_fan_in_and_fan_out(torch.empty(*shape))


@pytest.mark.parametrize("call", [
    lambda L, I: I.calculate_gain("foo"),
    lambda L, I: I.calculate_gain("leaky_relu", "a"),
    lambda L, I: I.xavier_uniform_(L.empty(3)),
    lambda L, I: I.kaiming_uniform_(L.empty(3, 4), mode="x"),
    lambda L, I: I.eye_(L.empty(3)),
    lambda L, I: I.orthogonal_(L.empty(3)),
    lambda L, I: I.dirac_(L.empty(3, 3)),
    lambda L, I: I.dirac_(L.empty(3, 3, 3), groups=2),
])
def test_errors_match_torch(call):
    with pytest.raises(ValueError) as et:
        call(torch, tinit)
    with pytest.raises(ValueError) as ew:
        call(wgrad, init)
    assert str(ew.value) == str(et.value)


DT = pytest.mark.parametrize("dtype", ["float64", "complex128"])


@DT
def test_uniform_and_bounds(dtype):
    dt = getattr(wgrad, dtype)
    w = init.uniform_(wgrad.empty(200, 100, dtype=dt), -0.5, 2.0)
    a = _a(w)
    for part in ([a] if dtype == "float64" else [a.real, a.imag]):
        assert part.min() >= -0.5 and part.max() <= 2.0
        assert abs(part.mean() - 0.75) < 0.05
    fan_in, fan_out = 100, 200
    bound = math.sqrt(6 / (fan_in + fan_out))
    a = _a(init.xavier_uniform_(wgrad.empty(200, 100, dtype=dt)))
    assert np.abs(a.real).max() <= bound and np.abs(a.real).max() > 0.95 * bound
    b = math.sqrt(3) * init.calculate_gain("relu") / math.sqrt(fan_out)
    a = _a(init.kaiming_uniform_(wgrad.empty(200, 100, dtype=dt), mode="fan_out",
                                 nonlinearity="relu"))
    assert np.abs(a.real).max() <= b and np.abs(a.imag).max() <= b


@DT
def test_normal_family_moments(dtype):
    """E|w - mean|^2 = std^2; complex: the mean on both parts, std split between them
    (torch's complex normal_)."""
    dt = getattr(wgrad, dtype)
    a = _a(init.normal_(wgrad.empty(300, 200, dtype=dt), 1.0, 2.0))
    mean = 1.0 if dtype == "float64" else 1 + 1j
    assert abs(a.mean() - mean) < 0.05
    assert abs(np.mean(np.abs(a - mean) ** 2) - 4.0) < 0.1
    t = torch.empty(300, 200, dtype=getattr(torch, dtype)).normal_(1.0, 2.0).numpy()
    assert abs(t.mean() - mean) < 0.05 and abs(np.mean(np.abs(t - mean) ** 2) - 4.0) < 0.1
    std = math.sqrt(2 / 500)
    a = _a(init.xavier_normal_(wgrad.empty(300, 200, dtype=dt)))
    assert abs(np.sqrt(np.mean(np.abs(a) ** 2)) - std) < 0.05 * std
    std = init.calculate_gain("leaky_relu", 0) / math.sqrt(200)
    a = _a(init.kaiming_normal_(wgrad.empty(300, 200, dtype=dt)))
    assert abs(np.sqrt(np.mean(np.abs(a) ** 2)) - std) < 0.05 * std


def test_trunc_normal():
    a = _a(init.trunc_normal_(wgrad.empty(20000, dtype=wgrad.float64), mean=0.5, std=1.0,
                              a=-1.0, b=1.5))
    assert a.min() >= -1.0 and a.max() <= 1.5
    t = tinit.trunc_normal_(torch.empty(20000, dtype=torch.float64), mean=0.5, std=1.0,
                            a=-1.0, b=1.5).numpy()
    assert abs(a.mean() - t.mean()) < 0.03 and abs(a.std() - t.std()) < 0.03


@DT
def test_constant_eye_dirac_match_torch(dtype):
    dt, tdt = getattr(wgrad, dtype), getattr(torch, dtype)
    for fw, ft in [(lambda t: init.constant_(t, 0.5), lambda t: tinit.constant_(t, 0.5)),
                   (init.ones_, tinit.ones_), (init.zeros_, tinit.zeros_)]:
        np.testing.assert_array_equal(_a(fw(wgrad.empty(2, 3, dtype=dt))),
                                      ft(torch.empty(2, 3, dtype=tdt)).numpy())
    np.testing.assert_array_equal(_a(init.eye_(wgrad.empty(3, 5, dtype=dt))),
                                  tinit.eye_(torch.empty(3, 5, dtype=tdt)).numpy())
    for shape, groups in [((4, 2, 3), 2), ((3, 5, 3, 2), 1), ((2, 2, 3, 3, 3), 1)]:
        np.testing.assert_array_equal(
            _a(init.dirac_(wgrad.empty(*shape, dtype=dt), groups)),
            tinit.dirac_(torch.empty(*shape, dtype=tdt), groups).numpy())


@pytest.mark.parametrize("shape", [(4, 6), (6, 4), (3, 2, 2)])
@DT
def test_orthogonal(shape, dtype):
    q = _a(init.orthogonal_(wgrad.empty(*shape, dtype=getattr(wgrad, dtype)), gain=2.0))
    m = q.reshape(shape[0], -1) / 2.0
    small = min(m.shape)
    gram = m @ m.conj().T if m.shape[0] == small else m.conj().T @ m
    np.testing.assert_allclose(gram, np.eye(small), atol=1e-12)
    if dtype == "complex128":
        assert np.abs(m.imag).max() > 0.1  # unitary, not a real orthogonal matrix


def test_parameters_stay_leaves():
    p = wgrad.nn.Parameter(wgrad.ones(3, 4))
    for fn in (init.uniform_, init.normal_, init.xavier_uniform_, init.kaiming_normal_,
               init.orthogonal_, init.zeros_, init.eye_):
        assert fn(p) is p
        assert p.is_leaf and p.requires_grad and p.grad_fn is None
    with pytest.warns(UserWarning, match="Initializing zero-element tensors is a no-op"):
        init.kaiming_uniform_(wgrad.empty(0, 3))


def test_manual_seed_reproducible():
    wgrad.manual_seed(7)
    a = _a(wgrad.nn.Linear(5, 4).weight)
    wgrad.manual_seed(7)
    np.testing.assert_array_equal(_a(wgrad.nn.Linear(5, 4).weight), a)
