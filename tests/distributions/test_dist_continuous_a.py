"""Group A2's continuous distributions (Uniform, Exponential, Cauchy, Laplace and the
families torch builds on TransformedDistribution: LogNormal, HalfNormal, HalfCauchy,
Gumbel, Weibull, Pareto, Kumaraswamy, LogisticNormal, (Logit)RelaxedBernoulli,
(ExpRelaxed|RelaxedOneHot)Categorical, InverseGamma) against torch's through
tests/distributions/_dist_harness.py, plus moments of samples and rsample gradients
against their analytic reparameterization on the same draws."""
import math

import numpy as np
import pytest
import torch

import wgrad
from _dist_harness import check

R = np.random.default_rng(1)
LOC = R.standard_normal(3)
SCALE = R.uniform(0.5, 2, 3)
POS = R.uniform(0.5, 3, 3)
COL = R.standard_normal((2, 1))  # with a parameter of shape (3,): a (2, 3) batch
REAL_VALUES = [np.array([0.1, 0.5, 0.9]), R.standard_normal(3) * 2]
POS_VALUES = [np.array([0.1, 0.5, 2.5]), np.array([-1.0, 0.7, 1.5])]
EDGE_VALUES = [np.array([0.0, 1.0, 0.5])]  # icdf at 0 and 1, log_prob at 0


def _f32(arrays):
    return tuple(a.astype(np.float32) for a in arrays)


def _d(name, **kw):
    """``make`` for ``T.distributions.<name>(*params, **kw)``."""
    return lambda T, *p: getattr(T.distributions, name)(*p, **kw)


def _numbers(name, *args, **kw):
    return lambda T: getattr(T.distributions, name)(*args, **kw)


NOVAL = dict(validate_args=False)
LOW = LOC
HIGH = LOC + SCALE
# inside, [0, 1] (for icdf), and below / at / above the support's ends
UNI_VALUES = [LOW + 0.3 * SCALE, np.array([0.1, 0.5, 0.9]),
              np.array([LOW[0] - 0.1, HIGH[1], 5.0])]
F32_LOOSE = dict(rtol=2e-4)  # float32 lgamma/digamma differences, amplified by cancellation

# name: (make, params, values[, options: rtol/atol, pytest marks])
CASES = {
    # Uniform
    "uniform": (_d("Uniform"), (LOW, HIGH), UNI_VALUES),
    "uniform-f32": (_d("Uniform"), _f32((LOW, HIGH)), UNI_VALUES[:1]),
    "uniform-numbers": (_numbers("Uniform", -1.0, 2.0), (), [np.array(0.5), np.array(3.0)]),
    "uniform-broadcast": (_d("Uniform"), (np.array([[-2.0], [-1.0]]), np.array([0.5, 1, 2])),
                          [np.array([0.1, 0.2, 0.3]), np.array([[-1.5], [1.9]])]),
    "uniform-bad": (_d("Uniform"), (HIGH, LOW), []),
    "uniform-equal": (_d("Uniform"), (LOW, LOW), []),
    "uniform-novalidate": (_d("Uniform", **NOVAL), (LOW, HIGH), UNI_VALUES),
    # Exponential
    "exponential": (_d("Exponential"), (POS,), POS_VALUES),
    "exponential-f32": (_d("Exponential"), _f32((POS,)), POS_VALUES[:1]),
    "exponential-numbers": (_numbers("Exponential", 2.0), (),
                            [np.array(0.5), np.array(-0.5)]),
    "exponential-2d": (_d("Exponential"), (R.uniform(0.5, 2, (2, 3)),), POS_VALUES[:1]),
    "exponential-bad": (_d("Exponential"), (np.array([1.0, 0.0]),), []),
    "exponential-novalidate": (_d("Exponential", **NOVAL), (POS,), POS_VALUES),
    # Cauchy
    "cauchy": (_d("Cauchy"), (LOC, SCALE), REAL_VALUES),
    "cauchy-f32": (_d("Cauchy"), _f32((LOC, SCALE)), REAL_VALUES[:1]),
    "cauchy-numbers": (_numbers("Cauchy", 0.5, 2.0), (), [np.array(0.25), np.array(3.0)]),
    "cauchy-broadcast": (_d("Cauchy"), (COL, SCALE), REAL_VALUES[:1]),
    "cauchy-bad": (_d("Cauchy"), (LOC, -SCALE), []),
    "cauchy-nan-value": (_d("Cauchy"), (LOC, SCALE), [np.array([0.0, math.nan, 1.0])]),
    # Laplace
    "laplace": (_d("Laplace"), (LOC, SCALE), REAL_VALUES),
    "laplace-f32": (_d("Laplace"), _f32((LOC, SCALE)), REAL_VALUES[:1]),
    "laplace-numbers": (_numbers("Laplace", 0.5, 2.0), (), [np.array(0.25), np.array(3.0)]),
    "laplace-broadcast": (_d("Laplace"), (COL, 1.5), REAL_VALUES[:1]),
    "laplace-bad": (_d("Laplace"), (LOC, np.zeros(3)), []),
    "laplace-nan-loc": (_d("Laplace"), (np.array([0.0, math.nan]), np.ones(2)), []),
    # LogNormal
    "lognormal": (_d("LogNormal"), (LOC, SCALE), POS_VALUES),
    "lognormal-f32": (_d("LogNormal"), _f32((LOC, SCALE)), POS_VALUES[:1]),
    "lognormal-numbers": (_numbers("LogNormal", 0.5, 2.0), (), [np.array(0.25)]),
    "lognormal-broadcast": (_d("LogNormal"), (COL, SCALE), POS_VALUES[:1]),
    "lognormal-bad": (_d("LogNormal"), (LOC, -1.0), []),
    "lognormal-novalidate": (_d("LogNormal", **NOVAL), (LOC, SCALE), POS_VALUES),
    # HalfNormal, HalfCauchy
    "halfnormal": (_d("HalfNormal"), (SCALE,), POS_VALUES),
    "halfnormal-f32": (_d("HalfNormal"), _f32((SCALE,)), POS_VALUES[:1]),
    "halfnormal-numbers": (_numbers("HalfNormal", 2.0), (), [np.array(0.25)]),
    "halfnormal-bad": (_numbers("HalfNormal", -2.0), (), []),
    "halfnormal-novalidate": (_d("HalfNormal", **NOVAL), (SCALE,), POS_VALUES),
    "halfcauchy": (_d("HalfCauchy"), (SCALE,), POS_VALUES),
    "halfcauchy-f32": (_d("HalfCauchy"), _f32((SCALE,)), POS_VALUES[:1]),
    "halfcauchy-numbers": (_numbers("HalfCauchy", 2.0), (), [np.array(0.25)]),
    "halfcauchy-bad": (_d("HalfCauchy"), (-SCALE,), []),
    "halfcauchy-novalidate": (_d("HalfCauchy", **NOVAL), (SCALE,), POS_VALUES),
    # Gumbel
    "gumbel": (_d("Gumbel"), (LOC, SCALE), REAL_VALUES),
    "gumbel-f32": (_d("Gumbel"), _f32((LOC, SCALE)), REAL_VALUES[:1]),
    "gumbel-numbers": (_numbers("Gumbel", 0.5, 2.0), (), [np.array(0.25)]),
    "gumbel-broadcast": (_d("Gumbel"), (COL, 1.5), REAL_VALUES[:1]),
    "gumbel-bad": (_d("Gumbel"), (LOC, -1.0), []),
    # Weibull (a concentration below 1: no mode)
    "weibull": (_d("Weibull"), (SCALE, np.array([0.5, 1.5, 3.0])), POS_VALUES),
    "weibull-f32": (_d("Weibull"), _f32((SCALE, POS)), POS_VALUES[:1]),
    "weibull-numbers": (_numbers("Weibull", 2.0, 1.5), (), [np.array(0.25)]),
    "weibull-broadcast": (_d("Weibull"), (np.exp(COL), POS), POS_VALUES[:1]),
    "weibull-edges": (_d("Weibull"), (SCALE, POS), EDGE_VALUES),
    "weibull-bad": (_d("Weibull"), (SCALE, -1.0), []),
    "weibull-novalidate": (_d("Weibull", **NOVAL), (SCALE, POS), POS_VALUES),
    # Pareto (alpha below 1 and 2: infinite mean and variance, clamped)
    "pareto": (_d("Pareto"), (SCALE, np.array([0.5, 1.5, 3.0])),
               [SCALE + 0.5, SCALE * 2, SCALE - 0.1, SCALE]),
    "pareto-f32": (_d("Pareto"), _f32((SCALE, POS)), [SCALE.astype(np.float32) + 1]),
    "pareto-numbers": (_numbers("Pareto", 1.0, 2.5), (), [np.array(1.5), np.array(0.5)]),
    "pareto-bad": (_d("Pareto"), (SCALE, 0.0), []),
    "pareto-novalidate": (_d("Pareto", **NOVAL), (SCALE, POS), [SCALE - 0.1]),
    # Kumaraswamy (a concentration below 1: no mode)
    "kumaraswamy": (_d("Kumaraswamy"), (np.array([0.5, 2.0, 3.0]), np.array([2.0, 0.7, 4.0])),
                    [np.array([0.1, 0.5, 0.9]), np.array([-0.5, 0.5, 1.5])]),
    "kumaraswamy-edges": (_d("Kumaraswamy"), (POS, POS[::-1].copy()), EDGE_VALUES),
    "kumaraswamy-f32": (_d("Kumaraswamy"), _f32((POS, POS[::-1])),
                        [np.array([0.1, 0.5, 0.9])], F32_LOOSE),
    "kumaraswamy-numbers": (_numbers("Kumaraswamy", 2.0, 3.0), (), [np.array(0.25)]),
    "kumaraswamy-bad": (_d("Kumaraswamy"), (POS, -1.0), []),
    "kumaraswamy-novalidate": (_d("Kumaraswamy", **NOVAL), (POS, POS),
                               [np.array([-0.5, 0.5, 1.5])]),
    # LogisticNormal (events on the 4-simplex from 3 normal coordinates)
    "logisticnormal": (_d("LogisticNormal"), (LOC, SCALE),
                       [np.array([0.1, 0.2, 0.3, 0.4]), np.array([[0.5, 0.25, 0.125, 0.125]]),
                        np.array([0.5, 0.5, 0.5, -0.5])]),
    "logisticnormal-f32": (_d("LogisticNormal"), _f32((LOC, SCALE)),
                           [np.array([0.1, 0.2, 0.3, 0.4], np.float32)]),
    "logisticnormal-numbers": (_numbers("LogisticNormal", 0.5, 2.0), (),
                               [np.array([0.25, 0.75])]),
    "logisticnormal-batch": (_d("LogisticNormal"), (R.standard_normal((2, 3)), SCALE),
                             [np.array([0.1, 0.2, 0.3, 0.4])]),
    "logisticnormal-bad": (_d("LogisticNormal"), (LOC, -1.0), []),
    "logisticnormal-novalidate": (_d("LogisticNormal", **NOVAL), (LOC, SCALE),
                                  [np.array([0.5, 0.5, 0.5, -0.5])]),
    # RelaxedBernoulli and its logit
    "relaxedbernoulli-probs": (lambda T, t, p: T.distributions.RelaxedBernoulli(t, probs=p),
                               (np.array(0.7), np.array([0.1, 0.5, 0.8])),
                               [np.array([0.2, 0.5, 0.9]), np.array([0.0, 1.0, 1.5])]),
    "relaxedbernoulli-logits": (lambda T, t, g: T.distributions.RelaxedBernoulli(t, logits=g),
                                (np.array([1.5, 0.5, 2.0]), LOC),
                                [np.array([0.2, 0.5, 0.9])]),
    "relaxedbernoulli-f32": (lambda T, t, p: T.distributions.RelaxedBernoulli(t, probs=p),
                             _f32((np.array(0.7), np.array([0.1, 0.5, 0.8]))),
                             [np.array([0.2, 0.5, 0.9])]),
    "relaxedbernoulli-number-probs": (
        lambda T, t: T.distributions.RelaxedBernoulli(t, probs=0.3), (np.array(0.5),),
        [np.array(0.4)]),
    "relaxedbernoulli-bad": (lambda T, t: T.distributions.RelaxedBernoulli(t, probs=1.5),
                             (np.array(0.5),), []),
    "relaxedbernoulli-both": (
        lambda T, t: T.distributions.RelaxedBernoulli(t, probs=0.5, logits=0.0),
        (np.array(0.5),), []),
    "relaxedbernoulli-novalidate": (
        lambda T, t, p: T.distributions.RelaxedBernoulli(t, probs=p, validate_args=False),
        (np.array(0.7), np.array([0.1, 0.5, 0.8])), [np.array([0.0, 1.0, 1.5])]),
    "logitrelaxedbernoulli-probs": (
        lambda T, t, p: T.distributions.relaxed_bernoulli.LogitRelaxedBernoulli(t, probs=p),
        (np.array(0.7), np.array([0.1, 0.5, 0.8])), REAL_VALUES),
    "logitrelaxedbernoulli-logits": (
        lambda T, t, g: T.distributions.relaxed_bernoulli.LogitRelaxedBernoulli(t, logits=g),
        (np.array(1.5), R.standard_normal((2, 3))), REAL_VALUES[:1]),
    # RelaxedOneHotCategorical and its log
    "relaxedonehot-probs": (
        lambda T, t, p: T.distributions.RelaxedOneHotCategorical(t, probs=p),
        (np.array(0.7), np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
        [np.array([0.2, 0.5, 0.3]), np.array([[0.1, 0.1, 0.8]]), np.array([0.5, 0.6, -0.1])]),
    "relaxedonehot-logits": (
        lambda T, t, g: T.distributions.RelaxedOneHotCategorical(t, logits=g),
        (np.array([1.5, 0.5]), R.standard_normal((2, 3))), [np.array([0.2, 0.5, 0.3])]),
    "relaxedonehot-f32": (
        lambda T, t, p: T.distributions.RelaxedOneHotCategorical(t, probs=p),
        _f32((np.array(0.7), np.array([0.2, 0.3, 0.5]))), [np.array([0.2, 0.5, 0.3])]),
    "relaxedonehot-bad": (
        lambda T, t: T.distributions.RelaxedOneHotCategorical(t, probs=T.tensor([0.5, 0.6])),
        (np.array(0.5),), []),
    "relaxedonehot-novalidate": (
        lambda T, t, p: T.distributions.RelaxedOneHotCategorical(t, probs=p,
                                                                 validate_args=False),
        (np.array(0.7), np.array([0.2, 0.3, 0.5])), [np.array([0.5, 0.6, -0.1])]),
    "exprelaxedcategorical": (
        lambda T, t, p: T.distributions.relaxed_categorical.ExpRelaxedCategorical(t, probs=p),
        (np.array(0.7), np.array([[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]])),
        [np.array([-1.0, -0.5, -2.0]), np.array([[0.5, -1.0, -3.0]])]),
    # InverseGamma
    "inversegamma": (_d("InverseGamma"), (np.array([0.5, 1.5, 3.0]), POS), POS_VALUES),
    "inversegamma-f32": (_d("InverseGamma"), _f32((POS, POS)), POS_VALUES[:1]),
    "inversegamma-numbers": (_numbers("InverseGamma", 2.5, 2.0), (), [np.array(0.25)]),
    "inversegamma-bad": (_d("InverseGamma"), (POS, -1.0), []),
    "inversegamma-novalidate": (_d("InverseGamma", **NOVAL), (POS, POS), POS_VALUES),
}
CASES = {k: v if len(v) == 4 else v + ({},) for k, v in CASES.items()}

@pytest.mark.parametrize("name", [pytest.param(n, marks=CASES[n][3].get("marks", ()), id=n)
                                  for n in sorted(CASES)])
def test_against_torch(name):
    make, params, values, opts = CASES[name]
    # number parameters make tensors of the default dtype, float32
    f32 = not params or any(np.asarray(p).dtype == np.float32 for p in params)
    tol = dict(rtol=2e-5, atol=1e-6) if f32 else dict(rtol=1e-7, atol=1e-12)
    tol.update({k: v for k, v in opts.items() if k in ("rtol", "atol")})
    check(make, params, [v.astype(np.float32) if f32 else v for v in values], name=name, **tol)


# --- samples: moments (the analytic ones are the distribution's, checked above) -------

N = 4000
D = wgrad.distributions
MOMENT_CASES = {
    "uniform": lambda: D.Uniform(-1.0, 3.0),
    "exponential": lambda: D.Exponential(2.0),
    "laplace": lambda: D.Laplace(0.5, 2.0),
    "lognormal": lambda: D.LogNormal(0.2, 0.5),
    "halfnormal": lambda: D.HalfNormal(1.5),
    "gumbel": lambda: D.Gumbel(1.0, 2.0),
    "weibull": lambda: D.Weibull(2.0, 1.5),
    "pareto": lambda: D.Pareto(1.0, 9.0),
    "kumaraswamy": lambda: D.Kumaraswamy(2.0, 3.0),
    "inversegamma": lambda: D.InverseGamma(9.0, 2.0),
}


@pytest.mark.parametrize("name", sorted(MOMENT_CASES))
def test_sample_moments(name):
    wgrad.manual_seed(0)
    d = MOMENT_CASES[name]()
    x = d.sample((N,)).double().numpy()
    mean, var = float(d.mean), float(d.variance)
    assert x.shape == (N,)
    assert abs(x.mean() - mean) < 4 * math.sqrt(var / N), (x.mean(), mean)
    assert abs(x.var() / var - 1) < 0.15, (x.var(), var)


def test_sample_quantiles_heavy_tails():
    """Cauchy and HalfCauchy have no moments: their quartiles instead."""
    wgrad.manual_seed(0)
    for d in (D.Cauchy(0.5, 2.0), D.HalfCauchy(2.0)):
        x = d.sample((N,)).numpy()
        for q in (0.25, 0.5, 0.75):
            assert abs((x <= float(d.icdf(wgrad.tensor(q)))).mean() - q) < 0.03


def test_relaxed_samples_keep_the_discrete_law():
    """``P(RelaxedBernoulli > 1/2) = probs`` and the argmax of a RelaxedOneHotCategorical
    sample is categorical(probs), whatever the temperature (the Gumbel-max trick)."""
    wgrad.manual_seed(0)
    x = D.RelaxedBernoulli(wgrad.tensor(0.7), probs=wgrad.tensor([0.2, 0.6])).sample((N,))
    np.testing.assert_allclose((x.numpy() > 0.5).mean(0), [0.2, 0.6], atol=0.03)
    probs = np.array([0.1, 0.3, 0.6])
    y = D.RelaxedOneHotCategorical(wgrad.tensor(2.0), probs=wgrad.tensor(probs)).sample((N,))
    assert bool(D.constraints.simplex.check(y).all())
    freq = np.bincount(y.numpy().argmax(-1), minlength=3) / N
    np.testing.assert_allclose(freq, probs, atol=0.03)


def test_logistic_normal_samples_map_back_to_the_normal():
    wgrad.manual_seed(0)
    loc, scale = np.array([0.5, -1.0, 0.0]), np.array([1.0, 0.5, 2.0])
    d = D.LogisticNormal(wgrad.tensor(loc), wgrad.tensor(scale))
    y = d.sample((N,))
    assert tuple(y.shape) == (N, 4) and bool(D.constraints.simplex.check(y).all())
    z = D.transforms.StickBreakingTransform().inv(y).numpy()
    np.testing.assert_allclose(z.mean(0), loc, atol=4 * scale.max() / math.sqrt(N))
    np.testing.assert_allclose(z.std(0) / scale, 1, atol=0.05)


# --- rsample gradients against the analytic reparameterization -----------------------

def _rsample_grads(make, *params, weights=None):
    """``x = make(*params).rsample((N,))`` (float64 parameters) and the gradients of
    ``sum(x * weights)`` with respect to the parameters."""
    wgrad.manual_seed(0)
    ps = [wgrad.tensor(p, dtype=wgrad.float64, requires_grad=True) for p in params]
    x = make(*ps).rsample((N,))
    w = 1 if weights is None else wgrad.tensor(weights)
    grads = wgrad.autograd.grad((x * w).sum(), ps)
    return x.detach().numpy(), [g.numpy() for g in grads]


def _close(actual, expected):
    np.testing.assert_allclose(actual, expected, rtol=1e-8, atol=1e-10)


def test_rsample_grad_location_scale():
    """``x = loc + scale * eps``: d/dloc = 1, d/dscale = (x - loc) / scale."""
    for cls in (D.Cauchy, D.Laplace, D.Gumbel):
        x, (gl, gs) = _rsample_grads(cls, 0.5, 2.0)
        _close(gl, N)
        _close(gs, ((x - 0.5) / 2.0).sum())


def test_rsample_grad_scale_only():
    """``x = scale * |eps|`` (HalfNormal, HalfCauchy), ``x = E / rate`` (Exponential)."""
    for cls in (D.HalfNormal, D.HalfCauchy):
        x, (g,) = _rsample_grads(cls, 1.5)
        _close(g, (x / 1.5).sum())
    x, (g,) = _rsample_grads(D.Exponential, 2.0)
    _close(g, (-x / 2.0).sum())


def test_rsample_grad_uniform():
    x, (glow, ghigh) = _rsample_grads(D.Uniform, -1.0, 3.0)
    u = (x + 1) / 4
    _close(glow, (1 - u).sum())
    _close(ghigh, u.sum())


def test_rsample_grad_lognormal():
    x, (gl, gs) = _rsample_grads(D.LogNormal, 0.2, 0.5)
    _close(gl, x.sum())
    _close(gs, (x * (np.log(x) - 0.2) / 0.5).sum())


def test_rsample_grad_power_laws():
    """``x = scale * E ** (1 / k)`` (Weibull), ``x = scale * exp(E / alpha)`` (Pareto):
    d/dscale = x / scale, d/dk = -x log(x / scale) / k."""
    for cls, (scale, shape) in ((D.Weibull, (2.0, 1.5)), (D.Pareto, (1.5, 3.0))):
        x, (gscale, gshape) = _rsample_grads(cls, scale, shape)
        _close(gscale, (x / scale).sum())
        _close(gshape, (-x * np.log(x / scale) / shape).sum())


def test_rsample_grad_kumaraswamy():
    """``x = (1 - w) ** (1 / a)``, ``w = U ** (1 / b)``."""
    a, b = 2.0, 3.0
    x, (ga, gb) = _rsample_grads(D.Kumaraswamy, a, b)
    w = 1 - x ** a
    _close(ga, (-x * np.log(x) / a).sum())
    _close(gb, (x ** (1 - a) * w * np.log(w) / (a * b)).sum())


def test_rsample_grad_inverse_gamma():
    """``x = rate / G``, ``G ~ Gamma(c, 1)``: d/drate = x / rate, d/dc = -(x^2 / rate)
    dG/dc, with torch's implicit gamma derivative ``_standard_gamma_grad``."""
    c, rate = 2.5, 2.0
    x, (gc, grate) = _rsample_grads(D.InverseGamma, c, rate)
    g = rate / x
    dg = torch._standard_gamma_grad(torch.full((N,), c, dtype=torch.float64),
                                    torch.tensor(g)).numpy()
    _close(grate, (x / rate).sum())
    np.testing.assert_allclose(gc, (-x ** 2 / rate * dg).sum(), rtol=1e-6)


def test_rsample_grad_relaxed_bernoulli():
    """``x = sigmoid((logit(U) + logits) / t)``: d/dlogits = x (1 - x) / t, d/dt =
    -x (1 - x) logit(x) / t."""
    t, logits = 0.7, np.array([-0.5, 1.0])
    x, (gt, gl) = _rsample_grads(lambda t, g: D.RelaxedBernoulli(t, logits=g), t, logits)
    s = x * (1 - x)
    _close(gl, (s / t).sum(0))
    _close(gt, (-s * np.log(x / (1 - x)) / t).sum())


def test_rsample_grad_relaxed_one_hot():
    """``y = softmax((logits + G) / t)``, weighted by ``w``: d/dlogits_j =
    y_j (w_j - <w, y>) / t, d/dt = -sum_j y_j (w_j - <w, y>) log(y_j) / t."""
    t, logits, w = 0.7, np.array([-0.5, 1.0, 0.2]), np.array([1.0, 2.0, 4.0])
    y, (gt, gl) = _rsample_grads(lambda t, g: D.RelaxedOneHotCategorical(t, logits=g), t,
                                 logits, weights=w)
    c = y * (w - (y * w).sum(-1, keepdims=True))
    _close(gl, (c / t).sum(0))
    _close(gt, (-c * np.log(y)).sum() / t)


def test_rsample_grad_logistic_normal():
    """The stick-breaking map of ``loc + scale * eps``, differentiated by torch on the
    same ``eps``."""
    loc, scale, w = np.array([0.5, -1.0]), np.array([1.0, 0.5]), np.array([1.0, 2.0, 4.0])
    y, (gl, gs) = _rsample_grads(D.LogisticNormal, loc, scale, weights=w)
    eps = (D.transforms.StickBreakingTransform().inv(wgrad.tensor(y)).numpy() - loc) / scale
    lt, st = (torch.tensor(a, requires_grad=True) for a in (loc, scale))
    yt = torch.distributions.transforms.StickBreakingTransform()(lt + st * torch.tensor(eps))
    for g, e in zip((gl, gs), torch.autograd.grad((yt * torch.tensor(w)).sum(), (lt, st))):
        np.testing.assert_allclose(g, e.numpy(), rtol=1e-7)


def test_expand_keeps_class_attributes():
    """expand of the classes with their own state (Weibull's reciprocal, the relaxed
    classes' temperature and lazily made probs/logits)."""
    w = D.Weibull(wgrad.tensor([1.0, 2.0]), wgrad.tensor([2.0, 4.0])).expand((3, 2))
    assert tuple(w.concentration_reciprocal.shape) == (3, 2)
    assert tuple(w.sample().shape) == (3, 2)
    b = D.relaxed_bernoulli.LogitRelaxedBernoulli(wgrad.tensor(0.5),
                                                  logits=wgrad.tensor([0.0, 1.0]))
    e = b.expand((3, 2))
    assert e.temperature is b.temperature and "probs" not in e.__dict__
    assert tuple(e.param_shape) == (3, 2) and e._param is e.logits
    np.testing.assert_allclose(e.probs.numpy(), np.broadcast_to([0.5, 0.7310586], (3, 2)),
                               rtol=1e-6)
    c = D.RelaxedOneHotCategorical(wgrad.tensor(0.5), probs=wgrad.tensor([0.25, 0.75]))
    ec = c.expand((3,))
    assert tuple(ec.batch_shape) == (3,) and tuple(ec.base_dist.param_shape) == (3, 2)
