"""nn.utils.parametrize and parametrizations.weight_norm against torch: state dict keys,
class names, values and gradients through the parametrization, right_inverse on
assignment, chaining, cached(), removal and errors."""
import copy
import pickle

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _modules(lib):
    class Symmetric(lib.nn.Module):
        def forward(self, X):
            return X.triu() + X.triu(1).mT

        def right_inverse(self, A):
            return A.triu()

    class Scale(lib.nn.Module):
        def forward(self, X):
            return X * 2

        def right_inverse(self, A):
            return A / 2
    return Symmetric, Scale


def _linear(lib, seed=0):
    rng = np.random.default_rng(seed)
    m = lib.nn.Linear(3, 3, dtype=lib.float64)
    with lib.no_grad():
        m.weight.copy_(lib.tensor(rng.standard_normal((3, 3))))
        m.bias.copy_(lib.tensor(rng.standard_normal(3)))
    return m


def _run(lib):
    P = lib.nn.utils.parametrize
    Symmetric, Scale = _modules(lib)
    m = _linear(lib)
    P.register_parametrization(m, "weight", Symmetric())
    P.register_parametrization(m, "weight", Scale())
    rec = {"class": type(m).__name__, "before": P.type_before_parametrizations(m).__name__,
           "keys": list(m.state_dict()), "weight": m.weight.detach().numpy().copy()}
    x = lib.tensor(np.arange(6.0).reshape(2, 3))
    out = m(x)
    (out * out).sum().backward()
    rec["out"] = out.detach().numpy()
    rec["grad"] = m.parametrizations.weight.original.grad.numpy().copy()
    m.weight = lib.tensor(np.eye(3) * 4.0)  # through both right_inverses
    rec["assigned"] = m.weight.detach().numpy().copy()
    with P.cached():
        rec["cached_same"] = m.weight is m.weight
    P.remove_parametrizations(m, "weight")
    rec["after"] = (type(m).__name__, [n for n, _ in m.named_parameters()],
                    m.weight.detach().numpy().copy())

    w = lib.nn.utils.parametrizations.weight_norm(_linear(lib, 1))
    rec["wn_keys"] = list(w.state_dict())
    out = w(x)
    out.sum().backward()
    rec["wn_out"] = out.detach().numpy()
    rec["wn_grads"] = [getattr(w.parametrizations.weight, f"original{i}").grad.numpy()
                       for i in (0, 1)]
    old = {"weight_g": np.full((3, 1), 2.0), "weight_v": np.ones((3, 3)),
           "bias": np.zeros(3)}
    w.load_state_dict({k: lib.tensor(v) for k, v in old.items()})  # the old layout loads
    rec["wn_loaded"] = w.weight.detach().numpy().copy()
    return rec


def test_parametrize_matches_torch():
    a, b = _run(torch), _run(wgrad)
    assert a.keys() == b.keys()
    for k in a:
        if isinstance(a[k], np.ndarray):
            np.testing.assert_allclose(b[k], a[k], rtol=1e-12, atol=1e-12, err_msg=k)
        elif k in ("after", "wn_grads"):
            for x, y in zip(a[k], b[k]):
                if isinstance(x, np.ndarray):
                    np.testing.assert_allclose(y, x, rtol=1e-12, atol=1e-12, err_msg=k)
                else:
                    assert x == y, k
        else:
            assert a[k] == b[k], k


def test_parametrize_errors_match_torch():
    for lib in (torch, wgrad):
        P = lib.nn.utils.parametrize

        class Grow(lib.nn.Module):
            def forward(self, X):
                return lib.cat([X, X])

        class NoInverse(lib.nn.Module):
            def forward(self, X):
                return X * 3

        m = lib.nn.Linear(2, 2)
        with pytest.raises(ValueError, match="does not have a parameter, a buffer, or a "
                                             "parametrized element with name 'nope'"):
            P.register_parametrization(m, "nope", NoInverse())
        with pytest.raises(ValueError, match="may not change the shape of the tensor"):
            P.register_parametrization(m, "weight", Grow())
        with pytest.raises(ValueError, match="does not have a parametrization on weight"):
            P.remove_parametrizations(m, "weight")
        P.register_parametrization(m, "weight", NoInverse())
        assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
        assert not P.is_parametrized(m, "bias")
        with pytest.raises(RuntimeError, match="does not implement right_inverse"):
            m.weight = lib.ones(2, 2)


@pytest.mark.parametrize("kind", ["weight_norm", "orthogonal", "spectral_norm"])
def test_a_parametrized_module_deep_copies_as_torch(kind):
    """torch's injected class copies itself (pickling stays refused): the copy computes the
    same weight, holds its own parameters, and is still parametrized."""
    def run(T):
        T.manual_seed(0)
        m = getattr(T.nn.utils.parametrizations, kind)(T.nn.Linear(3, 3))
        c = copy.deepcopy(m)
        same = bool((c.weight - m.weight).abs().max() < 1e-6)
        shared = any(a is b for a, b in zip(c.parameters(), m.parameters()))
        try:
            pickle.dumps(m)
            refused = None
        except RuntimeError as e:
            refused = str(e)[:60]
        return same, shared, type(c).__name__, refused
    assert run(wgrad) == run(torch)
