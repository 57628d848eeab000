"""wgrad.distributions.kl against torch's: every registered pair built in both libraries
from the same numbers (values, infinite where the supports differ, and gradients with
respect to every parameter), the registry itself, and register_kl/kl_divergence's
dispatch and errors."""
import warnings

import numpy as np
import pytest
import torch

import wgrad
from _dist_harness import _agree, _call, _grads_agree, _tensors

R = np.random.default_rng(0)


def _u(lo, hi, shape=(3,)):
    return R.uniform(lo, hi, shape)


def _probs(shape):
    p = R.uniform(0.1, 1.0, shape)
    return p / p.sum(-1, keepdims=True)


def _tril(shape, n):
    a = np.tril(R.standard_normal(shape + (n, n)) * 0.5)
    idx = np.arange(n)
    a[..., idx, idx] = R.uniform(0.5, 1.5, shape + (n,))
    return a


def _spd(shape, n):
    a = R.standard_normal(shape + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


def _td(T, loc, scale):
    return T.distributions.TransformedDistribution(
        T.distributions.Normal(loc, scale), [T.distributions.transforms.ExpTransform()])


# one distribution: (maker(T, *tensors), parameter arrays); batch shape (3,) throughout
D = {
    "bernoulli": (lambda T, p: T.distributions.Bernoulli(p), (_u(0.1, 0.9),)),
    "bernoulli-edges": (lambda T, p: T.distributions.Bernoulli(p), (np.array([0., 1., .3]),)),
    "bernoulli-edges2": (lambda T, p: T.distributions.Bernoulli(p),
                         (np.array([.4, 0., 1.]),)),
    "beta": (lambda T, a, b: T.distributions.Beta(a, b), (_u(0.5, 3), _u(0.5, 3))),
    "binomial": (lambda T, p: T.distributions.Binomial(T.tensor([5, 4, 6]), p),
                 (_u(0.1, 0.9),)),
    "binomial-less": (lambda T, p: T.distributions.Binomial(T.tensor([5, 3, 6]), p),
                      (_u(0.1, 0.9),)),
    "binomial-more": (lambda T, p: T.distributions.Binomial(T.tensor([5, 7, 6]), p),
                      (_u(0.1, 0.9),)),
    "categorical": (lambda T, p: T.distributions.Categorical(p), (_probs((3, 4)),)),
    "categorical-zeros": (lambda T, p: T.distributions.Categorical(p),
                          (np.array([[.5, .5, 0, 0], [.25, .25, .25, .25], [0, 0, 0, 1.]]),)),
    "cauchy": (lambda T, m, s: T.distributions.Cauchy(m, s), (_u(-1, 1), _u(0.5, 2))),
    "cb": (lambda T, p: T.distributions.ContinuousBernoulli(p),
           (np.array([0.2, 0.4995, 0.8]),)),
    "dirichlet": (lambda T, c: T.distributions.Dirichlet(c), (_u(0.5, 3, (3, 4)),)),
    "exponential": (lambda T, r: T.distributions.Exponential(r), (_u(0.5, 2),)),
    "gamma": (lambda T, a, r: T.distributions.Gamma(a, r), (_u(0.5, 3), _u(0.5, 2))),
    "geometric": (lambda T, p: T.distributions.Geometric(p), (_u(0.1, 0.9),)),
    "gumbel": (lambda T, m, s: T.distributions.Gumbel(m, s), (_u(-1, 1), _u(0.5, 2))),
    "halfnormal": (lambda T, s: T.distributions.HalfNormal(s), (_u(0.5, 2),)),
    "laplace": (lambda T, m, s: T.distributions.Laplace(m, s), (_u(-1, 1), _u(0.5, 2))),
    "lowrank": (lambda T, m, w, d: T.distributions.LowRankMultivariateNormal(m, w, d),
                (R.standard_normal((3, 3)), R.standard_normal((3, 3, 2)), _u(0.5, 2, (3, 3)))),
    "mvn": (lambda T, m, s: T.distributions.MultivariateNormal(m, scale_tril=s),
            (R.standard_normal((3, 3)), _tril((3,), 3))),
    "mvn-cov": (lambda T, m, c: T.distributions.MultivariateNormal(m, covariance_matrix=c),
                (R.standard_normal(3), _spd((3,), 3))),
    "mvn-other-event": (lambda T, m: T.distributions.MultivariateNormal(
        m, scale_tril=T.eye(2, dtype=m.dtype)), (np.zeros(2),)),
    "lowrank-other-event": (lambda T, m: T.distributions.LowRankMultivariateNormal(
        m, T.ones(2, 1, dtype=m.dtype), T.ones(2, dtype=m.dtype)), (np.zeros(2),)),
    "normal": (lambda T, m, s: T.distributions.Normal(m, s), (_u(-1, 1), _u(0.5, 2))),
    "normal-f32": (lambda T, m, s: T.distributions.Normal(m, s),
                   (_u(-1, 1).astype(np.float32), _u(0.5, 2).astype(np.float32))),
    "onehot": (lambda T, p: T.distributions.OneHotCategorical(p), (_probs((3, 4)),)),
    "pareto": (lambda T, s, a: T.distributions.Pareto(s, a), (_u(0.5, 1.5), _u(2.5, 4))),
    "pareto-heavy": (lambda T, s, a: T.distributions.Pareto(s, a),
                     (_u(0.5, 1.5), np.array([0.7, 1.5, 3.0]))),
    "pareto-low": (lambda T, s, a: T.distributions.Pareto(s, a),
                   (np.array([0.2, 1.0, 0.5]), _u(2.5, 4))),
    "poisson": (lambda T, r: T.distributions.Poisson(r), (_u(0.5, 3),)),
    "uniform": (lambda T, a, b: T.distributions.Uniform(a, b),
                (np.array([-1.5, 0.2, -0.5]), np.array([2.0, 1.5, 0.8]))),
    "uniform-wide": (lambda T, a, b: T.distributions.Uniform(a, b),
                     (np.array([-2.0, -0.5, 0.1]), np.array([3.0, 2.5, 0.7]))),
    "uniform-unit": (lambda T, a, b: T.distributions.Uniform(a, b),
                     (np.array([0.1, 0.3, -0.2]), np.array([0.6, 1.2, 0.9]))),
    "uniform-positive": (lambda T, a, b: T.distributions.Uniform(a, b),
                         (np.array([0.1, 1.2, -0.2]), np.array([0.6, 2.5, 0.9]))),
    "independent": (lambda T, m, s: T.distributions.Independent(
        T.distributions.Normal(m, s), 1), (R.standard_normal((3, 2)), _u(0.5, 2, (3, 2)))),
    "transformed": (lambda T, m, s: _td(T, m, s), (_u(-1, 1), _u(0.5, 2))),
    "wishart": (lambda T, df, s: T.distributions.Wishart(df, scale_tril=s),
                (_u(3.5, 6), _tril((3,), 3))),
}

# registered pair -> the cases (p, q) that dispatch to it
PAIRS = {
    ("Bernoulli", "Bernoulli"): [("bernoulli", "bernoulli"), ("bernoulli-edges", "bernoulli"),
                                 ("bernoulli", "bernoulli-edges"),
                                 ("bernoulli-edges", "bernoulli-edges2")],
    ("Bernoulli", "Poisson"): [("bernoulli", "poisson")],
    ("Beta", "Beta"): [("beta", "beta")],
    ("Beta", "ContinuousBernoulli"): [("beta", "cb")],
    ("Beta", "Exponential"): [("beta", "exponential")],
    ("Beta", "Gamma"): [("beta", "gamma")],
    ("Beta", "Normal"): [("beta", "normal")],
    ("Beta", "Pareto"): [("beta", "pareto")],
    ("Beta", "Uniform"): [("beta", "uniform")],
    ("Binomial", "Binomial"): [("binomial", "binomial"), ("binomial", "binomial-less"),
                               ("binomial", "binomial-more")],
    ("Categorical", "Categorical"): [("categorical", "categorical"),
                                     ("categorical-zeros", "categorical"),
                                     ("categorical", "categorical-zeros")],
    ("Cauchy", "Cauchy"): [("cauchy", "cauchy")],
    ("ContinuousBernoulli", "ContinuousBernoulli"): [("cb", "cb")],
    ("ContinuousBernoulli", "Exponential"): [("cb", "exponential")],
    ("ContinuousBernoulli", "Normal"): [("cb", "normal")],
    ("ContinuousBernoulli", "Pareto"): [("cb", "pareto")],
    ("ContinuousBernoulli", "Uniform"): [("cb", "uniform"), ("cb", "uniform-wide")],
    ("Dirichlet", "Dirichlet"): [("dirichlet", "dirichlet")],
    ("Exponential", "Beta"): [("exponential", "beta")],
    ("Exponential", "ContinuousBernoulli"): [("exponential", "cb")],
    ("Exponential", "Exponential"): [("exponential", "exponential")],
    ("Exponential", "Gamma"): [("exponential", "gamma")],
    ("Exponential", "Gumbel"): [("exponential", "gumbel")],
    ("Exponential", "Normal"): [("exponential", "normal")],
    ("Exponential", "Pareto"): [("exponential", "pareto")],
    ("Exponential", "Uniform"): [("exponential", "uniform")],
    ("ExponentialFamily", "ExponentialFamily"): [("wishart", "wishart")],
    ("Gamma", "Beta"): [("gamma", "beta")],
    ("Gamma", "ContinuousBernoulli"): [("gamma", "cb")],
    ("Gamma", "Exponential"): [("gamma", "exponential")],
    ("Gamma", "Gamma"): [("gamma", "gamma")],
    ("Gamma", "Gumbel"): [("gamma", "gumbel")],
    ("Gamma", "Normal"): [("gamma", "normal")],
    ("Gamma", "Pareto"): [("gamma", "pareto")],
    ("Gamma", "Uniform"): [("gamma", "uniform")],
    ("Geometric", "Geometric"): [("geometric", "geometric")],
    ("Gumbel", "Beta"): [("gumbel", "beta")],
    ("Gumbel", "ContinuousBernoulli"): [("gumbel", "cb")],
    ("Gumbel", "Exponential"): [("gumbel", "exponential")],
    ("Gumbel", "Gamma"): [("gumbel", "gamma")],
    ("Gumbel", "Gumbel"): [("gumbel", "gumbel")],
    ("Gumbel", "Normal"): [("gumbel", "normal")],
    ("Gumbel", "Pareto"): [("gumbel", "pareto")],
    ("Gumbel", "Uniform"): [("gumbel", "uniform")],
    ("HalfNormal", "HalfNormal"): [("halfnormal", "halfnormal")],
    ("Independent", "Independent"): [("independent", "independent")],
    ("Laplace", "Beta"): [("laplace", "beta")],
    ("Laplace", "ContinuousBernoulli"): [("laplace", "cb")],
    ("Laplace", "Exponential"): [("laplace", "exponential")],
    ("Laplace", "Gamma"): [("laplace", "gamma")],
    ("Laplace", "Laplace"): [("laplace", "laplace")],
    ("Laplace", "Normal"): [("laplace", "normal")],
    ("Laplace", "Pareto"): [("laplace", "pareto")],
    ("Laplace", "Uniform"): [("laplace", "uniform")],
    ("LowRankMultivariateNormal", "LowRankMultivariateNormal"): [
        ("lowrank", "lowrank"), ("lowrank", "lowrank-other-event")],
    ("LowRankMultivariateNormal", "MultivariateNormal"): [
        ("lowrank", "mvn"), ("lowrank", "mvn-cov"), ("lowrank", "mvn-other-event")],
    ("MultivariateNormal", "LowRankMultivariateNormal"): [
        ("mvn", "lowrank"), ("mvn-cov", "lowrank"), ("mvn", "lowrank-other-event")],
    ("MultivariateNormal", "MultivariateNormal"): [
        ("mvn", "mvn"), ("mvn-cov", "mvn"), ("mvn", "mvn-cov"), ("mvn", "mvn-other-event")],
    ("Normal", "Beta"): [("normal", "beta")],
    ("Normal", "ContinuousBernoulli"): [("normal", "cb")],
    ("Normal", "Exponential"): [("normal", "exponential")],
    ("Normal", "Gamma"): [("normal", "gamma")],
    ("Normal", "Gumbel"): [("normal", "gumbel")],
    ("Normal", "Laplace"): [("normal", "laplace")],
    ("Normal", "Normal"): [("normal", "normal"), ("normal-f32", "normal-f32")],
    ("Normal", "Pareto"): [("normal", "pareto")],
    ("Normal", "Uniform"): [("normal", "uniform")],
    ("OneHotCategorical", "OneHotCategorical"): [("onehot", "onehot")],
    ("Pareto", "Beta"): [("pareto", "beta")],
    ("Pareto", "ContinuousBernoulli"): [("pareto", "cb")],
    ("Pareto", "Exponential"): [("pareto", "exponential"), ("pareto-heavy", "exponential")],
    ("Pareto", "Gamma"): [("pareto", "gamma"), ("pareto-heavy", "gamma")],
    ("Pareto", "Normal"): [("pareto", "normal"), ("pareto-heavy", "normal")],
    ("Pareto", "Pareto"): [("pareto", "pareto"), ("pareto-low", "pareto")],
    ("Pareto", "Uniform"): [("pareto", "uniform")],
    ("Poisson", "Bernoulli"): [("poisson", "bernoulli")],
    ("Poisson", "Binomial"): [("poisson", "binomial")],
    ("Poisson", "Poisson"): [("poisson", "poisson")],
    ("TransformedDistribution", "TransformedDistribution"): [("transformed", "transformed")],
    ("Uniform", "Beta"): [("uniform-unit", "beta")],
    ("Uniform", "ContinuousBernoulli"): [("uniform-unit", "cb")],
    ("Uniform", "Exponential"): [("uniform-positive", "exponential")],
    ("Uniform", "Gamma"): [("uniform-positive", "gamma")],
    ("Uniform", "Gumbel"): [("uniform", "gumbel")],
    ("Uniform", "Normal"): [("uniform", "normal")],
    ("Uniform", "Pareto"): [("uniform-positive", "pareto")],
    ("Uniform", "Uniform"): [("uniform", "uniform-wide"), ("uniform-wide", "uniform")],
}

CASES = {f"{p}|{q}": pair for pair, cases in PAIRS.items() for p, q in cases}


def _pair(T, p, q, tensors):
    make_p, params_p = D[p]
    make_q, _ = D[q]
    return make_p(T, *tensors[:len(params_p)]), make_q(T, *tensors[len(params_p):])


def _compare(p, q, rtol=1e-7, atol=1e-10):
    params = D[p][1] + D[q][1]
    tp, wp = _tensors(torch, params), _tensors(wgrad, params)
    t = _call(lambda: torch.distributions.kl_divergence(*_pair(torch, p, q, tp)))
    w = _call(lambda: wgrad.distributions.kl_divergence(*_pair(wgrad, p, q, wp)))
    if _agree("kl", w, t, rtol, atol):
        _grads_agree("kl", w, t, wp, tp, rtol, atol)
    return w, t


def test_every_registered_pair_is_in_the_table():
    names = {(p.__name__, q.__name__) for p, q in torch.distributions.kl._KL_REGISTRY}
    assert names == set(PAIRS)


def test_registry_names_torch_s():
    """Every pair torch registers, and no other pair of wgrad's public classes."""
    public = vars(wgrad.distributions)
    ours = {(p.__name__, q.__name__) for p, q in wgrad.distributions.kl._KL_REGISTRY
            if public.get(p.__name__) is p and public.get(q.__name__) is q}
    assert ours == set(PAIRS)


@pytest.mark.parametrize("case", sorted(CASES))
def test_kl_against_torch(case):
    p, q = case.split("|")
    pair = CASES[case]
    tp = _pair(torch, p, q, _tensors(torch, D[p][1] + D[q][1]))
    wp = _pair(wgrad, p, q, _tensors(wgrad, D[p][1] + D[q][1]))
    reg = torch.distributions.kl._KL_REGISTRY
    fun = torch.distributions.kl._dispatch_kl(type(tp[0]), type(tp[1]))
    assert fun is reg[next(k for k in reg if (k[0].__name__, k[1].__name__) == pair)]
    assert wgrad.distributions.kl._dispatch_kl(type(wp[0]), type(wp[1])).__name__ == \
        fun.__name__
    f32 = "f32" in case
    _compare(p, q, rtol=2e-5 if f32 else 1e-7, atol=1e-6 if f32 else 1e-10)


def test_some_kls_are_infinite():
    """The table reaches torch's infinite values (supports not nested) in each form:
    in-place masks, _infinite_like and torch.where."""
    for p, q in [("uniform", "uniform-wide"), ("pareto-heavy", "normal"), ("normal", "beta"),
                 ("cb", "uniform"), ("binomial", "binomial-less"),
                 ("bernoulli-edges", "bernoulli-edges2"), ("categorical", "categorical-zeros")]:
        w, t = _compare(p, q)
        assert np.isinf(t.detach().numpy()).any(), (p, q)


def test_broadcast_batch_shapes():
    """p and q of different (broadcastable) batch shapes."""
    extra = {
        "normal-col": (lambda T, m, s: T.distributions.Normal(m, s),
                       (_u(-1, 1, (2, 1)), _u(0.5, 2, (2, 1)))),
        "mvn-one": (lambda T, m, s: T.distributions.MultivariateNormal(m, scale_tril=s),
                    (R.standard_normal((2, 1, 3)), _tril((), 3))),
        "lowrank-one": (lambda T, m, w, d: T.distributions.LowRankMultivariateNormal(m, w, d),
                        (R.standard_normal((2, 1, 3)), R.standard_normal((3, 2)),
                         _u(0.5, 2, (3,)))),
    }
    D.update(extra)
    try:
        for p, q in [("normal", "normal-col"), ("mvn", "mvn-one"), ("lowrank-one", "mvn"),
                     ("mvn-one", "lowrank")]:
            w, t = _compare(p, q)
            assert not isinstance(t, tuple), (p, q, t)
    finally:
        for k in extra:
            del D[k]


def test_bregman_divergence_of_any_family():
    """_kl_expfamily_expfamily itself on families with a closed form registered too
    (gradients reach q's parameters only, as in torch)."""
    for name in ("normal", "gamma", "beta", "exponential", "poisson", "dirichlet"):
        make, params = D[name]
        tp, wp = _tensors(torch, params + params), _tensors(wgrad, params + params)
        n = len(params)
        t = torch.distributions.kl._kl_expfamily_expfamily(make(torch, *tp[:n]),
                                                           make(torch, *tp[n:]))
        w = wgrad.distributions.kl._kl_expfamily_expfamily(make(wgrad, *wp[:n]),
                                                           make(wgrad, *wp[n:]))
        _agree(name, w, t, 1e-7, 1e-10)
        _grads_agree(name, w, t, wp, tp, 1e-7, 1e-10)


def _both(fn):
    w, t = _call(lambda: fn(wgrad)), _call(lambda: fn(torch))
    assert w == t, (w, t)
    return w


def test_errors():
    def kl(T, a, b):
        return T.distributions.kl_divergence(a, b)

    # different exponential families (Bregman form) and pairs nobody registered
    _both(lambda T: kl(T, T.distributions.Normal(0., 1.), T.distributions.Poisson(T.ones(1))))
    _both(lambda T: kl(T, T.distributions.Bernoulli(0.3),
                       T.distributions.Beta(T.ones(()), T.ones(()))))
    err = _both(lambda T: kl(T, T.distributions.MultivariateNormal(T.zeros(2), T.eye(2)),
                             T.distributions.Normal(0., 1.)))
    assert err[0] == "NotImplementedError"
    err = _both(lambda T: kl(T, T.distributions.Cauchy(0., 1.),
                             T.distributions.Normal(0., 1.)))
    assert "No KL(p || q)" in err[1]
    # transforms or reinterpreted dims that differ
    _both(lambda T: kl(T, _td(T, T.zeros(2), T.ones(2)),
                       T.distributions.TransformedDistribution(
                           T.distributions.Normal(T.zeros(2), T.ones(2)), [])))
    _both(lambda T: kl(T, T.distributions.Independent(T.distributions.Normal(
        T.zeros(2, 2), T.ones(2, 2)), 1), T.distributions.Independent(
            T.distributions.Normal(T.zeros(2, 2), T.ones(2, 2)), 2)))


def test_register_kl_errors():
    for bad in (1, "Normal", None):
        _both(lambda T: T.distributions.register_kl(bad, T.distributions.Normal))
        _both(lambda T: T.distributions.register_kl(T.distributions.Normal, bad))

    class _Fake:  # not a class, but issubclass accepts it (its __bases__)
        def __repr__(self):
            return "fake"

    def fake(T):
        f = _Fake()
        f.__bases__ = (T.distributions.Normal,)
        return f

    _both(lambda T: T.distributions.register_kl(fake(T), T.distributions.Normal))
    _both(lambda T: T.distributions.register_kl(T.distributions.Normal, fake(T)))


def _hierarchy(T):
    class KLTestP(T.distributions.Normal):
        pass

    class KLTestQ(T.distributions.Normal):
        pass

    return KLTestP, KLTestQ


def test_dispatch_most_specific_and_ambiguous():
    out = {}
    for T in (wgrad, torch):
        kl = T.distributions.kl
        P, Q = _hierarchy(T)
        p, q = P(T.tensor([0.0, 1.0]), 1.0), Q(T.tensor([0.5, 0.5]), 2.0)
        base = T.distributions.kl_divergence(p, q)  # Normal-Normal by inheritance
        kl.register_kl(P, T.distributions.Normal)(lambda a, b: T.full((2,), 1.0))
        kl.register_kl(T.distributions.Normal, Q)(lambda a, b: T.full((2,), 2.0))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ambiguous = T.distributions.kl_divergence(p, q)
        messages = [(c.category.__name__, str(c.message)) for c in caught]
        kl.register_kl(P, Q)(lambda a, b: T.full((2,), 3.0))  # clears the memo
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            exact = T.distributions.kl_divergence(p, q)
        memoized = T.distributions.kl_divergence(p, q)
        out[T.__name__] = (base.tolist(), ambiguous.tolist(), messages, exact.tolist(),
                           memoized.tolist())
        for key in [(P, T.distributions.Normal), (T.distributions.Normal, Q), (P, Q)]:
            del kl._KL_REGISTRY[key]
        kl._KL_MEMOIZE.clear()
    np.testing.assert_allclose(out["wgrad"][0], out["torch"][0], rtol=1e-6)
    assert out["wgrad"][1:] == out["torch"][1:]
    assert out["torch"][2] == [("RuntimeWarning", "Ambiguous kl_divergence(KLTestP, KLTestQ). "
                                "Please register_kl(KLTestP, KLTestQ)")]


def test_docstring_lists_the_pairs():
    doc = wgrad.distributions.kl_divergence.__doc__
    assert "~wgrad.distributions.Uniform` and :class:`~wgrad.distributions.Pareto`" in doc
