"""wgrad.distributions' discrete distributions, Independent and MixtureSameFamily against
torch's (tests/distributions/_dist_harness.py compares each method), and their samples'
frequencies against the analytic moments."""
import numpy as np
import pytest
import torch

import wgrad
from _dist_harness import check

R = np.random.default_rng(0)
P3 = np.array([0.2, 0.5, 0.9])
L3 = R.standard_normal(3)
P23 = R.uniform(0.1, 1.0, (2, 3))
L23 = R.standard_normal((2, 3))
F32 = np.float32


def _nov(kw):
    """``validate_args=False`` where the case name says ``novalid``."""
    return {"validate_args": False} if kw else {}


# the options of check() for a case that repeats another but for its values or one detail
# (each new shape and dtype costs JAX compilations: the file stays lean)
LIGHT = dict(expand=False, sample=False)
VALUES_ONLY = dict(grad=False, expand=False, sample=False)
LIGHT_TAGS = ("edges", "zero", "neg-inf", "sure", "inhomogeneous", "int-count", "broadcast",
              "large", "shared", "tensor-count", "number-logits", "bernoulli-1", "onehot-1")


def _t(T, a):
    """A tensor of ``T`` that does not require grad."""
    return T.tensor(np.asarray(a))


def _cases():
    """The table: name -> (make, params, values, options of check())."""
    c = {}

    def add(name, make, params, values, **opts):
        if "novalid" in name:
            opts = {**VALUES_ONLY, **opts}
        elif any(tag in name for tag in LIGHT_TAGS):
            opts = {**LIGHT, **opts}
        c[name] = (make, params, values, opts)

    # Bernoulli: probs or logits, tensors or numbers
    bern_values = [np.array([0.0, 1.0, 1.0]), np.array([[1.0], [0.0]])]
    bern_bad_values = [np.array([0.5, 2.0, -1.0])]
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("bernoulli-probs" + tag, lambda T, p, nov=nov: T.distributions.Bernoulli(
            p, **_nov(nov)), (P3,), bern_values + bern_bad_values)
    add("bernoulli-logits", lambda T, x: T.distributions.Bernoulli(logits=x), (L3,),
        bern_values + bern_bad_values)
    add("bernoulli-probs-edges", lambda T, p: T.distributions.Bernoulli(p),
        (np.array([0.0, 0.5, 1.0]),), bern_values)
    add("bernoulli-number-f32", lambda T: T.distributions.Bernoulli(0.3), (),
        [np.array(1.0, F32), bern_values[0].astype(F32)])
    add("bernoulli-number-logits-f32", lambda T: T.distributions.Bernoulli(logits=-0.7), (),
        [np.array(1.0, F32)])
    add("bernoulli-bad-probs", lambda T, p: T.distributions.Bernoulli(p * 2), (P3,), [])
    add("bernoulli-neither", lambda T: T.distributions.Bernoulli(), (), [])
    add("bernoulli-both", lambda T, p: T.distributions.Bernoulli(p, p), (P3,), [])

    # Categorical: the last dim holds the events
    cat_values = [np.array([0, 2]), np.array([[1], [2], [0]]), np.array([1.0, 2.0])]
    cat_bad = [np.array([3, 0]), np.array([-1, 1])]
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("categorical-probs" + tag, lambda T, p, nov=nov: T.distributions.Categorical(
            p, **_nov(nov)), (P23,), cat_values + (cat_bad if nov else cat_bad[:1]))
    add("categorical-logits", lambda T, x: T.distributions.Categorical(logits=x), (L23,),
        cat_values + cat_bad[:1])
    add("categorical-1d", lambda T, p: T.distributions.Categorical(p), (P3,),
        [np.array(2), np.array([0, 1, 1, 2])])
    add("categorical-f32", lambda T, x: T.distributions.Categorical(logits=x),
        (L23.astype(F32),), cat_values[:2])
    add("categorical-zero-prob", lambda T, p: T.distributions.Categorical(p),
        (np.array([0.0, 0.3, 0.7]),), [np.array([0, 1])])
    add("categorical-neg-inf-logit", lambda T, x: T.distributions.Categorical(logits=x),
        (np.array([-np.inf, 0.3, 0.7]),), [np.array([0, 1])])
    add("categorical-bad-probs", lambda T: T.distributions.Categorical(_t(T, P23 - 0.5)),
        (), [])
    add("categorical-0d-probs", lambda T, p: T.distributions.Categorical(p.sum()),
        (P3,), [])
    add("categorical-0d-logits", lambda T, p: T.distributions.Categorical(logits=p.sum()),
        (P3,), [])
    add("categorical-neither", lambda T: T.distributions.Categorical(), (), [])
    add("categorical-bad-shape-value", lambda T, p: T.distributions.Categorical(p),
        (P23,), [np.array([0, 1, 2])])

    # OneHotCategorical (and its straight-through variant)
    oh_values = [np.array([[0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]),
                 np.array([0.0, 1.0, 0.0])]
    oh_bad = [np.array([1.0, 1.0, 0.0])]
    for cls in ("OneHotCategorical", "OneHotCategoricalStraightThrough"):
        add(f"{cls}-probs", lambda T, p, cls=cls: getattr(T.distributions, cls)(p), (P23,),
            oh_values + oh_bad)
        add(f"{cls}-f32", lambda T, p, cls=cls: getattr(T.distributions, cls)(p),
            (P3.astype(F32),), [oh_values[1].astype(F32)])
        add(f"{cls}-bad", lambda T, cls=cls: getattr(T.distributions, cls)(
            _t(T, P3 - 0.5)), (), [])
    add("OneHotCategorical-logits-novalid", lambda T, x: T.distributions.OneHotCategorical(
        logits=x, validate_args=False), (L23,), oh_values[:1] + oh_bad)

    # Binomial
    bin_values = [np.array([0.0, 3.0, 5.0]), np.array([[1.0], [2.0]])]
    bin_bad = [np.array([6.0, 1.0, 0.0]), np.array([-1.0, 0.5, 2.0])]
    n5 = np.array([5.0, 5.0, 5.0])
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("binomial-probs" + tag, lambda T, n, p, nov=nov: T.distributions.Binomial(
            n, p, **_nov(nov)), (n5, P3), bin_values + bin_bad)
    add("binomial-logits", lambda T, x: T.distributions.Binomial(5, logits=x), (L3,),
        bin_values[:1] + bin_bad[:1])
    add("binomial-int-count", lambda T, p: T.distributions.Binomial(
        T.tensor([5, 5, 5]), p), (P3,), bin_values)
    add("binomial-large-logits-f32", lambda T: T.distributions.Binomial(
        5, logits=T.tensor([-40.0, 0.0, 40.0])), (), bin_values)
    add("binomial-probs-edges", lambda T, p: T.distributions.Binomial(5, p),
        (np.array([0.0, 0.5, 1.0]),), [np.array([0.0, 2.0, 5.0])])
    add("binomial-inhomogeneous", lambda T, p: T.distributions.Binomial(
        T.tensor([2.0, 3.0, 4.0]), p), (P3,), [np.array([1.0, 3.0, 4.0])])
    add("binomial-broadcast", lambda T, p: T.distributions.Binomial(_t(T, 5.0), p), (P3,),
        bin_values[:1])
    add("binomial-f32", lambda T, p: T.distributions.Binomial(5, p), (P3.astype(F32),),
        [bin_values[0].astype(F32)])
    add("binomial-bad-count", lambda T: T.distributions.Binomial(2.5, _t(T, P3)), (), [])
    add("binomial-bad-probs", lambda T: T.distributions.Binomial(3, _t(T, P3 + 1)), (), [])
    add("binomial-both", lambda T, p: T.distributions.Binomial(3, p, p), (P3,), [])

    # Multinomial
    mn_values = [np.array([[1.0, 2.0, 1.0], [0.0, 0.0, 4.0]]), np.array([4.0, 0.0, 0.0])]
    mn_bad = [np.array([3.0, 2.0, 0.0]), np.array([-1.0, 2.0, 3.0])]
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("multinomial-probs" + tag, lambda T, p, nov=nov: T.distributions.Multinomial(
            4, p, **_nov(nov)), (P23,), mn_values + mn_bad)
    add("multinomial-logits", lambda T, x: T.distributions.Multinomial(4, logits=x),
        (L23,), mn_values[:1] + mn_bad[:1])
    add("multinomial-neg-inf-logit", lambda T, x: T.distributions.Multinomial(
        4, logits=x), (np.array([-np.inf, 0.3, 0.7]),),
        [np.array([0.0, 1.0, 3.0]), np.array([1.0, 1.0, 2.0])])
    add("multinomial-f32", lambda T, p: T.distributions.Multinomial(4, p),
        (P3.astype(F32),), [mn_values[1].astype(F32)])
    add("multinomial-tensor-count", lambda T, p: T.distributions.Multinomial(
        T.tensor(3), p), (P3,), [])
    add("multinomial-bad", lambda T: T.distributions.Multinomial(3, _t(T, P3 - 0.5)), (),
        [])

    # Poisson
    rate = np.array([0.5, 2.0, 7.0])
    pois_values = [np.array([0.0, 1.0, 5.0]), np.array([[3.0], [0.0]])]
    pois_bad = [np.array([-1.0, 0.5, 2.0])]
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("poisson" + tag, lambda T, r, nov=nov: T.distributions.Poisson(
            r, **_nov(nov)), (rate,), pois_values + pois_bad)
    add("poisson-zero-rate", lambda T, r: T.distributions.Poisson(r),
        (np.array([0.0, 1.0]),), [np.array([0.0, 0.0]), np.array([1.0, 2.0])])
    add("poisson-number-f32", lambda T: T.distributions.Poisson(3.0), (),
        [np.array(2.0, F32), pois_values[0].astype(F32)])
    add("poisson-bad", lambda T, r: T.distributions.Poisson(-r), (rate,), [])

    # Geometric
    geo_values = [np.array([0.0, 1.0, 4.0]), np.array([[2.0], [0.0]])]
    geo_bad = [np.array([-1.0, 0.5, 2.0])]
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("geometric-probs" + tag, lambda T, p, nov=nov: T.distributions.Geometric(
            p, **_nov(nov)), (P3,), geo_values + geo_bad)
    add("geometric-logits", lambda T, x: T.distributions.Geometric(logits=x), (L3,),
        geo_values[:1] + geo_bad)
    add("geometric-sure", lambda T, p: T.distributions.Geometric(p),
        (np.array([0.5, 1.0, 1.0]),), [np.array([0.0, 0.0, 1.0])])
    add("geometric-number-f32", lambda T: T.distributions.Geometric(0.25), (),
        [np.array(3.0, F32), geo_values[0].astype(F32)])
    add("geometric-zero-probs", lambda T: T.distributions.Geometric(_t(T, P3 * 0)), (), [])
    add("geometric-bad-probs", lambda T: T.distributions.Geometric(_t(T, P3 + 1)), (), [])

    # NegativeBinomial
    nb_values = [np.array([0.0, 2.0, 9.0]), np.array([[1.0], [0.0]])]
    nb_bad = [np.array([-1.0, 0.5, 2.0])]
    tc = np.array([1.0, 2.5, 4.0])
    for nov in (False, True):
        tag = "-novalid" if nov else ""
        add("negbin-probs" + tag, lambda T, n, p, nov=nov: T.distributions.NegativeBinomial(
            n, p * 0.9, **_nov(nov)), (tc, P3), nb_values + nb_bad)
    add("negbin-logits", lambda T, n, x: T.distributions.NegativeBinomial(n, logits=x),
        (tc, L3), nb_values[:1] + nb_bad)
    add("negbin-zero-count", lambda T, p: T.distributions.NegativeBinomial(
        T.tensor([0.0, 0.0, 2.0]), p), (P3 * 0.5,), [np.array([0.0, 1.0, 0.0])])
    add("negbin-f32", lambda T, n, p: T.distributions.NegativeBinomial(n, p),
        (tc.astype(F32), (P3 * 0.9).astype(F32)), [np.array([0.0, 2.0, 9.0], F32)])
    add("negbin-number", lambda T, p: T.distributions.NegativeBinomial(3, p), (P3 * 0.5,),
        [np.array([1.0, 0.0, 2.0])])
    add("negbin-bad-probs", lambda T: T.distributions.NegativeBinomial(
        _t(T, tc), _t(T, [0.2, 1.0, 0.3])), (), [])
    add("negbin-bad-count", lambda T, n, p: T.distributions.NegativeBinomial(-n, p),
        (tc, P3), [])

    # Independent
    loc, scale = R.standard_normal((2, 3)), R.uniform(0.5, 2.0, (2, 3))
    add("independent-normal-1", lambda T, m, s: T.distributions.Independent(
        T.distributions.Normal(m, s), 1), (loc, scale),
        [R.standard_normal(3), R.standard_normal((4, 2, 3))])
    add("independent-normal-2", lambda T, m, s: T.distributions.Independent(
        T.distributions.Normal(m, s), 2), (loc, scale), [R.standard_normal((2, 3))])
    add("independent-bernoulli-0", lambda T, p: T.distributions.Independent(
        T.distributions.Bernoulli(p), 0), (P23,), [np.array([1.0, 0.0, 1.0])])
    add("independent-bernoulli-1", lambda T, p: T.distributions.Independent(
        T.distributions.Bernoulli(p), 1), (P23,),
        [np.array([1.0, 0.0, 1.0]), np.array([1.0, 2.0, 1.0])])
    add("independent-onehot-1", lambda T, p: T.distributions.Independent(
        T.distributions.OneHotCategoricalStraightThrough(p), 1), (P23,), [oh_values[0]])
    add("independent-too-many", lambda T, m, s: T.distributions.Independent(
        T.distributions.Normal(m, s), 3), (loc, scale), [])

    # MixtureSameFamily
    w, cl, cs = R.uniform(0.1, 1, 3), R.standard_normal(3), R.uniform(0.5, 2, 3)
    mix_values = [np.array(0.3), R.standard_normal((4, 1))]
    add("mixture-normal", lambda T, w, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Normal(m, s)), (w, cl, cs),
        mix_values)
    add("mixture-normal-f32", lambda T, w, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Normal(m, s)),
        (w.astype(F32), cl.astype(F32), cs.astype(F32)), [mix_values[0].astype(F32)])
    bw, bl, bs = R.uniform(0.1, 1, (2, 3)), R.standard_normal((2, 3, 4)), R.uniform(
        0.5, 2, (2, 3, 4))
    add("mixture-batch-independent", lambda T, w, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(logits=w),
        T.distributions.Independent(T.distributions.Normal(m, s), 1)), (bw, bl, bs),
        [R.standard_normal((3, 2, 4))])
    add("mixture-shared-weights", lambda T, w, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Normal(m, s)),
        (w, bl[..., 0], bs[..., 0]), [R.standard_normal(2)])
    add("mixture-poisson-novalid", lambda T, w, r: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Poisson(r), validate_args=False),
        (w, rate), [np.array([0.0, 2.0, 5.0, -1.0])])
    add("mixture-poisson", lambda T, w, r: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Poisson(r)),
        (w, rate), [np.array([0.0, 2.0]), np.array([1.5])])
    add("mixture-not-categorical", lambda T, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Normal(m, s), T.distributions.Normal(m, s)), (cl, cs), [])
    add("mixture-not-distribution", lambda T, w: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), w), (w,), [])
    add("mixture-batch-mismatch", lambda T, w, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Normal(m, s)),
        (R.uniform(0.1, 1, (4, 3)), bl[..., 0], bs[..., 0]), [])
    add("mixture-k-mismatch", lambda T, w, m, s: T.distributions.MixtureSameFamily(
        T.distributions.Categorical(w), T.distributions.Normal(m, s)),
        (R.uniform(0.1, 1, 4), cl, cs), [])
    return c


CASES = _cases()


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    make, params, values, opts = CASES[name]
    f32 = "f32" in name  # float32 (numbers become default-dtype tensors); the atol also
    # covers wgrad's float32 lgamma, a few ulps from torch's (lgamma(1) = 4.8e-7, not 0)
    check(make, params, values, rtol=2e-5 if f32 else 1e-7, atol=1e-5 if f32 else 1e-10,
          name=name, **opts)


# ---- samples: frequencies and moments against the analytic ones (seeded, loose) ----

N = 4000


def _moments(d, n=N):
    s = d.sample((n,))
    return s, s.double().mean(0).numpy(), s.double().var(0).numpy()


SAMPLED = {
    "bernoulli": lambda D: D.Bernoulli(wgrad.tensor([0.1, 0.5, 0.8])),
    "binomial": lambda D: D.Binomial(wgrad.tensor([3.0, 10.0]), wgrad.tensor([0.3, 0.7])),
    "poisson": lambda D: D.Poisson(wgrad.tensor([0.5, 4.0])),
    "geometric": lambda D: D.Geometric(wgrad.tensor([0.2, 0.7])),
    "negbin": lambda D: D.NegativeBinomial(wgrad.tensor([2.0, 5.5]),
                                           wgrad.tensor([0.3, 0.6])),
    "mixture": lambda D: D.MixtureSameFamily(
        D.Categorical(wgrad.tensor([0.3, 0.7])),
        D.Normal(wgrad.tensor([-2.0, 1.0]), wgrad.tensor([0.5, 1.0]))),
}


@pytest.mark.parametrize("name", sorted(SAMPLED))
def test_sample_moments(name):
    wgrad.manual_seed(0)
    d = SAMPLED[name](wgrad.distributions)
    s, mean, var = _moments(d)
    assert tuple(s.shape) == (N,) + tuple(d.batch_shape)
    assert bool(d.support.check(s).all())
    want_mean, want_var = d.mean.detach().numpy(), d.variance.detach().numpy()
    np.testing.assert_allclose(mean, want_mean, rtol=0.1, atol=0.05)
    np.testing.assert_allclose(var, want_var, rtol=0.15, atol=0.05)


def _frequencies(indices, k):
    return np.bincount(np.asarray(indices).reshape(-1), minlength=k) / indices.size


def test_categorical_frequencies():
    wgrad.manual_seed(0)
    p = np.array([[0.1, 0.6, 0.3], [0.5, 0.0, 0.5]])
    d = wgrad.distributions.Categorical(wgrad.tensor(p * 7))  # normalized by Categorical
    s = d.sample((N,))
    assert tuple(s.shape) == (N, 2) and s.dtype == wgrad.int64
    for row in range(2):
        np.testing.assert_allclose(_frequencies(s[:, row].numpy(), 3), p[row], atol=0.03)


@pytest.mark.parametrize("cls", ["OneHotCategorical", "OneHotCategoricalStraightThrough"])
def test_one_hot_frequencies(cls):
    wgrad.manual_seed(0)
    p = np.array([0.2, 0.3, 0.5])
    d = getattr(wgrad.distributions, cls)(logits=wgrad.tensor(np.log(p)))
    s = d.sample((N,))
    assert s.dtype == wgrad.float64 and tuple(s.shape) == (N, 3)
    assert bool(d.support.check(s).all())
    np.testing.assert_allclose(s.numpy().mean(0), p, atol=0.03)


def test_multinomial_counts():
    wgrad.manual_seed(0)
    p = np.array([0.2, 0.3, 0.5])
    d = wgrad.distributions.Multinomial(6, wgrad.tensor(p))
    s = d.sample((N,))
    assert s.dtype == wgrad.float64 and tuple(s.shape) == (N, 3)
    assert bool((s.sum(-1) == 6).all())
    np.testing.assert_allclose(s.numpy().mean(0), 6 * p, rtol=0.05)
    np.testing.assert_allclose(s.numpy().var(0), 6 * p * (1 - p), rtol=0.1)


def test_straight_through_gradient():
    """rsample's gradient with one fixed one-hot draw, the same in wgrad and torch."""
    logits = R.standard_normal((2, 4))
    draw = np.eye(4)[[3, 1]]
    weights = np.linspace(-1.0, 2.0, 8).reshape(2, 4)
    grads = []
    for T in (wgrad, torch):
        x = T.tensor(logits, requires_grad=True)
        d = T.distributions.OneHotCategoricalStraightThrough(logits=x)
        d.sample = lambda sample_shape=(), T=T: T.tensor(draw)
        r = d.rsample()
        assert r.requires_grad
        np.testing.assert_allclose(r.detach().numpy(), draw, atol=1e-12)
        (g,) = T.autograd.grad((r * T.tensor(weights)).sum(), [x])
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10)


def test_straight_through_rsample_grad_is_probs_grad():
    wgrad.manual_seed(0)
    x = wgrad.tensor([0.1, -0.4, 0.9], requires_grad=True)
    d = wgrad.distributions.OneHotCategoricalStraightThrough(logits=x)
    (g_r,) = wgrad.autograd.grad(d.rsample((5,))[:, 2].sum(), [x], retain_graph=True)
    (g_p,) = wgrad.autograd.grad(5 * d.probs[2], [x], retain_graph=True)
    np.testing.assert_allclose(g_r.numpy(), g_p.numpy(), rtol=1e-12)


def test_lazy_parameters():
    d = wgrad.distributions.Bernoulli(logits=wgrad.tensor([0.0, 1.0]))
    assert "probs" not in d.__dict__
    np.testing.assert_allclose(d.probs.numpy(), 1 / (1 + np.exp(-np.array([0.0, 1.0]))))
    assert "probs" in d.__dict__
    c = wgrad.distributions.Categorical(logits=wgrad.tensor([1.0, 2.0, 3.0]))
    assert c._num_events == 3 and tuple(c.param_shape) == (3,)
    np.testing.assert_allclose(c.logits.exp().sum().item(), 1.0)
    e = c.expand((2,))
    assert tuple(e.param_shape) == (2, 3) and "probs" not in e.__dict__


def test_expanded_multinomial_entropy():
    """torch's expanded Multinomial lacks ``_binomial`` (its entropy raises); wgrad's
    gives the entropy of the expanded batch."""
    d = wgrad.distributions.Multinomial(4, wgrad.tensor(P23[0]))
    np.testing.assert_allclose(d.expand((2,)).entropy().numpy(),
                               np.repeat(d.entropy().numpy(), 2))
