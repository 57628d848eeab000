"""Group B's distributions (Gamma, Chi2, Beta, Dirichlet, StudentT, FisherSnedecor,
VonMises, ContinuousBernoulli, GeneralizedPareto) against torch's, through
tests/distributions/_dist_harness.py, plus moments of samples and rsample gradients
compared with torch's formulas evaluated on the same draws.

Parameters and values are of shape (3,) or (2, 3) wherever possible: every new shape
compiles every op again, and that compile time is most of this file's run time.
"""
import math

import numpy as np
import pytest
import torch
from torch.distributions import von_mises as torch_von_mises

import wgrad
from _dist_harness import check
from wgrad.distributions import von_mises as wgrad_von_mises

R = np.random.default_rng(2)
POS = R.uniform(0.5, 3, 3)
POS2 = R.uniform(0.5, 3, 3)
LOC = R.standard_normal(3)
POS_VALUES = [R.uniform(0.1, 3, 3), np.array([0.0, 0.5, 2.0]), np.array([-1.0, 0.5, 2.0])]
UNIT_VALUES = [np.array([0.1, 0.5, 0.9]), np.array([0.0, 0.3, 1.0]),
               np.array([-0.1, 0.5, 1.5])]
REAL_VALUES = [R.standard_normal(3), np.array([-4.0, 0.0, 7.5]), R.standard_normal((2, 3))]
CONC = R.uniform(0.3, 3, (2, 3))
SIMPLEX = R.dirichlet(np.ones(3), 2)
DIR_VALUES = [SIMPLEX, SIMPLEX[0], np.array([0.5, 0.6, -0.1]), np.array([0.2, 0.2, 0.2])]
NOVAL = dict(validate_args=False)
# probs around, in and at the edges of the Taylor region (0.499, 0.501]
CB_PROBS = np.array([[0.2, 0.4995, 0.5], [0.501, 0.5012, 0.9]])
CB_VALUES = [np.array([0.05, 0.3, 0.95]), np.array([[0.0, 1.0, 0.5], [0.25, 1.0, 0.0]]),
             np.array([[-0.5, 0.5, 0.5], [0.5, 1.5, 0.5]])]
CB_TOL = dict(atol=1e-7)  # the closed forms cancel catastrophically next to lims
# loc of shape (1,): expanded in torch too, so the reprs of the supports agree (see
# BROADCAST_GAP); concentrations below 0, 0, and over 0.5 (no variance)
GP = (LOC[:1], POS, np.array([-0.4, 0.0, 0.7]))
GP_VALUES = [LOC[0] + POS / 2, LOC[0] + POS * 3.0, LOC[0] - POS / 2]
VM_CONC = np.array([0.5, 3.0, 8.0])  # both sides of the Bessel approximations' 3.75


def _f32(arrays):
    return tuple(a.astype(np.float32) for a in arrays)


def _d(name, **kw):
    """``make`` for ``T.distributions.<name>(*params, **kw)``."""
    return lambda T, *p: getattr(T.distributions, name)(*p, **kw)


def _numbers(name, *args, **kw):
    return lambda T: getattr(T.distributions, name)(*args, **kw)


def _cb(key, **kw):
    """A ContinuousBernoulli of ``probs`` or ``logits``."""
    return lambda T, p: T.distributions.ContinuousBernoulli(**{key: p}, **kw)


# name: (make, params, values[, tolerances])
CASES = {
    # Gamma
    "gamma": (_d("Gamma"), (POS, POS2), POS_VALUES),
    "gamma-f32": (_d("Gamma"), _f32((POS, POS2)), POS_VALUES[:2]),
    "gamma-numbers": (_numbers("Gamma", 2.0, 0.5), (), [np.array(1.5), np.array(-1.0)]),
    "gamma-broadcast": (_d("Gamma"), (np.array([[0.5], [2.0]]), POS2), POS_VALUES[:2]),
    "gamma-bad-concentration": (_d("Gamma"), (np.array([-1.0]), POS2), []),
    "gamma-bad-rate": (_d("Gamma"), (POS, np.array([0.0])), []),
    "gamma-novalidate": (_d("Gamma", **NOVAL), (POS, POS2), POS_VALUES),
    # Chi2
    "chi2": (_d("Chi2"), (POS * 2,), POS_VALUES),
    "chi2-f32": (_d("Chi2"), _f32((POS * 2,)), POS_VALUES[:1]),
    "chi2-numbers": (_numbers("Chi2", 3.0), (), [np.array(1.5), np.array(-1.0)]),
    "chi2-bad": (_d("Chi2"), (np.array([1.0, -1.0, 2.0]),), []),
    "chi2-novalidate": (_d("Chi2", **NOVAL), (POS,), POS_VALUES),
    # Beta (concentrations below 1 too: the mode's one-hot branch)
    "beta": (_d("Beta"), (np.array([0.5, 0.3, 2.0]), POS2), UNIT_VALUES),
    "beta-f32": (_d("Beta"), _f32((POS, POS2)), UNIT_VALUES[:1]),
    "beta-numbers": (_numbers("Beta", 2.0, 0.5), (), [np.array(0.3), np.array(1.5)]),
    "beta-bad": (_d("Beta"), (POS, np.array([1.0, -1.0, 2.0])), []),
    "beta-novalidate": (_d("Beta", **NOVAL), (POS, POS2), UNIT_VALUES),
    # Dirichlet
    "dirichlet": (_d("Dirichlet"), (CONC,), DIR_VALUES),
    "dirichlet-f32": (_d("Dirichlet"), _f32((CONC,)), _f32(DIR_VALUES[:2])),
    "dirichlet-mode": (_d("Dirichlet"), (np.array([[0.5, 0.3, 0.9], [0.5, 2.0, 3.0]]),),
                       DIR_VALUES[:1]),
    "dirichlet-0d": (_d("Dirichlet"), (np.array(2.0),), []),
    "dirichlet-bad": (_d("Dirichlet"), (np.array([1.0, -1.0, 2.0]),), []),
    "dirichlet-novalidate": (_d("Dirichlet", **NOVAL), (CONC,), DIR_VALUES),
    # StudentT (df at most 1: no mean; in (1, 2]: infinite variance)
    "studentt": (_d("StudentT"), (np.array([0.5, 1.5, 4.0]), LOC, POS), REAL_VALUES),
    "studentt-f32": (_d("StudentT"), _f32((np.array([0.5, 1.5, 4.0]), LOC, POS)),
                     REAL_VALUES[:1]),
    "studentt-df-only": (_d("StudentT"), (POS * 2,), REAL_VALUES[:1]),
    "studentt-numbers": (_numbers("StudentT", 3.0, 1.0, 2.0), (), [np.array(0.5)]),
    "studentt-bad-df": (_d("StudentT"), (np.array([1.0, -1.0, 2.0]),), []),
    "studentt-bad-df-novalidate": (_d("StudentT", **NOVAL), (np.array([1.0, -1.0, 2.0]),),
                                   []),
    "studentt-bad-scale": (_d("StudentT"), (POS, LOC, -POS[:1]), []),
    # FisherSnedecor (df1 at most 2: no mode; df2 at most 2, 4: no mean, variance)
    "fisher": (_d("FisherSnedecor"), (np.array([1.0, 3.0, 6.0]), np.array([1.5, 3.0, 9.0])),
               POS_VALUES),
    "fisher-f32": (_d("FisherSnedecor"), _f32((POS * 3, POS2 * 3)), POS_VALUES[:1]),
    "fisher-numbers": (_numbers("FisherSnedecor", 5.0, 10.0), (), [np.array(0.7)]),
    "fisher-broadcast": (_d("FisherSnedecor"), (np.array([[3.0], [6.0]]), POS2 * 4),
                         POS_VALUES[:1]),
    "fisher-bad": (_d("FisherSnedecor"), (POS, np.array([1.0, 0.0, 2.0])), []),
    "fisher-novalidate": (_d("FisherSnedecor", **NOVAL), (POS, POS2), POS_VALUES),
    # VonMises
    "vonmises": (_d("VonMises"), (LOC, VM_CONC), REAL_VALUES),
    "vonmises-f32": (_d("VonMises"), _f32((LOC, VM_CONC)), REAL_VALUES[:1]),
    "vonmises-broadcast": (_d("VonMises"), (np.array([[0.0], [1.0]]), VM_CONC),
                           REAL_VALUES[:1]),
    "vonmises-numbers": (_numbers("VonMises", 1.0, 2.0), (), [np.array(0.5)]),
    "vonmises-bad": (_d("VonMises"), (LOC, -VM_CONC[:1]), []),
    # ContinuousBernoulli
    "cb-probs": (_cb("probs"), (CB_PROBS,), CB_VALUES, CB_TOL),
    "cb-logits": (_cb("logits"), (np.array([[-3.0, -1e-3, 0.0], [1e-3, 3e-3, 2.0]]),),
                  CB_VALUES),
    "cb-probs-f32": (_cb("probs"), _f32((CB_PROBS,)), _f32(CB_VALUES[:2])),
    "cb-lims": (_cb("probs", lims=(0.3, 0.7)), (CB_PROBS,), CB_VALUES[:1]),
    "cb-numbers": (_numbers("ContinuousBernoulli", 0.3), (), [np.array(0.25)]),
    "cb-logits-numbers": (_numbers("ContinuousBernoulli", logits=-1.0), (),
                          [np.array(0.25)]),
    "cb-bad-validate": (_cb("probs", validate_args=True), (np.array([0.2, 1.2, 0.5]),), []),
    "cb-bad-default": (_cb("probs"), (np.array([0.2, 1.2, -0.5]),), UNIT_VALUES[:1]),
    "cb-novalidate": (_cb("probs", **NOVAL), (CB_PROBS,), CB_VALUES, CB_TOL),
    "cb-both": (lambda T, p: T.distributions.ContinuousBernoulli(p, p), (CB_PROBS,), []),
    "cb-neither": (_numbers("ContinuousBernoulli"), (), []),
    # GeneralizedPareto (in float64 log_prob and cdf raise torch's isclose dtype error)
    "gpd": (_d("GeneralizedPareto"), GP, GP_VALUES),
    "gpd-f32": (_d("GeneralizedPareto"), _f32(GP), _f32(GP_VALUES)),
    "gpd-f32-novalidate": (_d("GeneralizedPareto", **NOVAL), _f32(GP), _f32(GP_VALUES)),
    "gpd-numbers": (_numbers("GeneralizedPareto", 0.5, 2.0, -0.25), (),
                    [np.array(1.0), np.array(9.0)]),
    "gpd-numbers-heavy": (_numbers("GeneralizedPareto", 0.5, 2.0, 1.5), (), [np.array(1.0)]),
    "gpd-bad": (_d("GeneralizedPareto"), (LOC, -POS[:1], GP[2]), []),
}

@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    make, params, values, *tol = CASES[name]
    # number parameters make tensors of the default dtype, float32
    f32 = not params or any(p.dtype == np.float32 for p in params)
    tols = (dict(rtol=2e-5, atol=1e-6) if f32 else dict(rtol=1e-7, atol=1e-10)), *tol
    check(make, params, [v.astype(np.float32) if f32 else v for v in values], name=name,
          **{k: v for d in tols for k, v in d.items()})


# ----------------------------------------------------------------------------------------
# samples: moments


def _t(a, grad=False):
    return wgrad.tensor(np.asarray(a, dtype=np.float64), requires_grad=grad)


def _np(x):
    return np.asarray(x.detach()._data)


N = 4000


def _moments(d):
    wgrad.manual_seed(0)
    x = _np(d.sample((N,)))
    assert bool(d.support.check(_t(x)).all())
    return x.mean(0), x.var(0)


@pytest.mark.parametrize("name, make", [
    ("gamma", lambda: wgrad.distributions.Gamma(_t([0.5, 2.0, 5.0]), _t([1.0, 2.0, 0.5]))),
    ("chi2", lambda: wgrad.distributions.Chi2(_t([1.0, 3.0, 8.0]))),
    ("beta", lambda: wgrad.distributions.Beta(_t([0.5, 2.0, 5.0]), _t([0.5, 3.0, 1.0]))),
    ("studentt", lambda: wgrad.distributions.StudentT(_t([6.0, 10.0, 30.0]),
                                                      _t([0.0, 1.0, -2.0]),
                                                      _t([1.0, 0.5, 2.0]))),
    ("fisher", lambda: wgrad.distributions.FisherSnedecor(_t([4.0, 10.0, 20.0]),
                                                          _t([10.0, 20.0, 30.0]))),
    ("cb", lambda: wgrad.distributions.ContinuousBernoulli(_t([0.2, 0.5, 0.8]))),
    ("gpd", lambda: wgrad.distributions.GeneralizedPareto(0.0, 1.0, _t([-0.3, 0.0, 0.2]))),
])
def test_sample_moments(name, make):
    d = make()
    mean, var = _moments(d)
    m, v = _np(d.mean), _np(d.variance)
    assert (abs(mean - m) < 5 * np.sqrt(v / N)).all(), (mean, m)
    np.testing.assert_allclose(var, v, rtol=0.15)


def test_dirichlet_sample_moments():
    d = wgrad.distributions.Dirichlet(_t([[0.5, 1.0, 3.0], [2.0, 2.0, 2.0]]))
    mean, var = _moments(d)
    np.testing.assert_allclose(mean.sum(-1), 1.0)
    assert (abs(mean - _np(d.mean)) < 5 * np.sqrt(_np(d.variance) / N)).all()
    np.testing.assert_allclose(var, _np(d.variance), rtol=0.1)


def test_vonmises_samples():
    """Circular moments: E cos(x - loc) = I1/I0 = 1 - variance, E sin(x - loc) = 0; draws
    in [-pi, pi), float32 for float32 parameters (drawn in float64)."""
    loc = np.array([0.0, 3.0, -2.0])
    d = wgrad.distributions.VonMises(wgrad.tensor(loc, dtype=wgrad.float32),
                                     wgrad.tensor([0.01, 2.0, 10.0]))
    wgrad.manual_seed(0)
    x = d.sample((N,))
    assert x.dtype == wgrad.float32 and not x.requires_grad
    x = _np(x).astype(np.float64)
    assert (x >= -np.pi).all() and (x < np.pi).all()
    for f, want in ((np.cos, 1 - _np(d.variance)), (np.sin, 0.0)):
        y = f(x - loc)
        assert (abs(y.mean(0) - want) < 5 * np.sqrt(y.var(0) / N)).all(), f


def test_gamma_tiny_samples_clamped():
    """Draws of tiny concentrations underflow; like torch they are clamped to ``tiny``
    (in place, outside the graph)."""
    c = wgrad.tensor([1e-3, 1e-2], requires_grad=True)
    wgrad.manual_seed(0)
    x = wgrad.distributions.Gamma(c, 1.0).rsample((500,))
    assert float(x.min()) >= wgrad.finfo(wgrad.float32).tiny
    assert type(x.grad_fn).__name__ == "DivBackward0"


# ----------------------------------------------------------------------------------------
# rsample gradients against torch's formulas on the same draws

W = np.linspace(0.5, 1.5, 600).reshape(200, 3)


def test_gamma_rsample_grad():
    c, r = _t([0.5, 2.0, 5.0], True), _t([1.0, 2.0, 0.5], True)
    wgrad.manual_seed(0)
    x = wgrad.distributions.Gamma(c, r).rsample((200,))
    assert type(x.grad_fn.next_functions[0][0]).__name__ == "StandardGammaBackward0"
    (x * _t(W)).sum().backward()
    xt, ct, rt, wt = (torch.tensor(a) for a in (_np(x), _np(c), _np(r), W))
    dc = (wt * torch._standard_gamma_grad(ct.expand(200, 3), xt * rt) / rt).sum(0)
    np.testing.assert_allclose(_np(c.grad), dc.numpy(), rtol=1e-8)
    np.testing.assert_allclose(_np(r.grad), (-wt * xt / rt).sum(0).numpy(), rtol=1e-10)


def _dirichlet_backward(x, conc, grad):
    return torch.distributions.dirichlet._Dirichlet_backward(
        torch.tensor(x), torch.tensor(conc).expand(x.shape), torch.tensor(grad)).numpy()


def test_dirichlet_rsample_grad():
    c = _t([[0.5, 1.0, 3.0]], True)
    wgrad.manual_seed(0)
    x = wgrad.distributions.Dirichlet(c).rsample((200,))
    assert tuple(x.shape) == (200, 1, 3)
    assert type(x.grad_fn).__name__ == "_DirichletBackward"
    g = W[:, None, :]
    x.backward(_t(g))
    np.testing.assert_allclose(_np(c.grad), _dirichlet_backward(_np(x), _np(c), g).sum(0),
                               rtol=1e-8)


def test_beta_rsample_grad():
    a, b = _t([0.5, 2.0, 5.0], True), _t([0.5, 3.0, 1.0], True)
    wgrad.manual_seed(0)
    x = wgrad.distributions.Beta(a, b).rsample((200,))
    assert type(x.grad_fn).__name__ == "SelectBackward0"
    assert type(x.grad_fn.next_functions[0][0]).__name__ == "_DirichletBackward"
    x.backward(_t(W))
    xn = _np(x)
    expect = _dirichlet_backward(np.stack([xn, 1 - xn], -1), np.stack([_np(a), _np(b)], -1),
                                 np.stack([W, np.zeros_like(W)], -1)).sum(0)
    np.testing.assert_allclose(_np(a.grad), expect[:, 0], rtol=1e-8)
    np.testing.assert_allclose(_np(b.grad), expect[:, 1], rtol=1e-8)


def test_studentt_fisher_rsample_grads():
    df, loc, scale = _t([3.0, 5.0, 8.0], True), _t([0.0, 1.0, -1.0], True), _t([1, 2, 3.], True)
    wgrad.manual_seed(0)
    x = wgrad.distributions.StudentT(df, loc, scale).rsample((200,))
    (x * _t(W)).sum().backward()
    np.testing.assert_allclose(_np(loc.grad), W.sum(0))
    np.testing.assert_allclose(_np(scale.grad),
                               (W * (_np(x) - _np(loc)) / _np(scale)).sum(0), rtol=1e-10)
    assert np.isfinite(_np(df.grad)).all() and (_np(df.grad) != 0).all()
    df1, df2 = _t([3.0, 5.0, 8.0], True), _t([4.0, 6.0, 9.0], True)
    y = wgrad.distributions.FisherSnedecor(df1, df2).rsample((200,))
    assert (_np(y) > 0).all()
    (y * _t(W)).sum().backward()
    assert np.isfinite(_np(df1.grad)).all() and np.isfinite(_np(df2.grad)).all()


def _icdf_grad_at(make, params, u):
    """torch's gradient of ``sum(W * icdf(u))`` with respect to ``params``."""
    ps = [torch.tensor(p, requires_grad=True) for p in params]
    (torch.tensor(W) * make(torch, *ps).icdf(torch.tensor(u))).sum().backward()
    return [p.grad.numpy() for p in ps]


def test_cb_rsample_grad():
    """rsample is icdf(u): wgrad's gradient on a draw x is torch's icdf gradient at the
    u = cdf(x) that made it."""
    probs = np.array([0.2, 0.5, 0.8])
    p = _t(probs, True)
    wgrad.manual_seed(0)
    d = wgrad.distributions.ContinuousBernoulli(p)
    x = d.rsample((200,))
    (x * _t(W)).sum().backward()
    u = _np(d.cdf(x.detach()))
    (expect,) = _icdf_grad_at(_cb("probs"), (probs,), u)
    np.testing.assert_allclose(_np(p.grad), expect, rtol=1e-6)


def test_gpd_rsample_grad():
    params = (LOC, POS, np.array([-0.4, 0.0, 0.3]))
    ps = [_t(a, True) for a in params]
    wgrad.manual_seed(0)
    x = wgrad.distributions.GeneralizedPareto(*ps).rsample((200,))
    (x * _t(W)).sum().backward()
    loc, scale, conc = params
    z = (_np(x) - loc) / scale
    safe = np.where(conc == 0, 1.0, conc)
    u = np.where(conc == 0, -np.expm1(-z), -np.expm1(-np.log1p(safe * z) / safe))
    expect = _icdf_grad_at(_d("GeneralizedPareto"), params, u)
    for got, want in zip(ps, expect):
        np.testing.assert_allclose(_np(got.grad), want, rtol=1e-6, atol=1e-9)


# ----------------------------------------------------------------------------------------
# class-specific methods and helpers


def test_gamma_log_prob_of_a_number():
    want = torch.distributions.Gamma(torch.tensor([2.0, 3.0]), 0.5).log_prob(1.5)
    got = wgrad.distributions.Gamma(wgrad.tensor([2.0, 3.0]), 0.5).log_prob(1.5)
    assert got.dtype == wgrad.float32
    np.testing.assert_allclose(_np(got), want.numpy(), rtol=1e-6)


def test_chi2_and_beta_attributes():
    df = _t([1.0, 4.0], True)
    chi2 = wgrad.distributions.Chi2(df)
    np.testing.assert_allclose(_np(chi2.df), [1.0, 4.0])
    assert chi2.df.requires_grad and type(chi2.expand((2, 2))).__name__ == "Chi2"
    beta = wgrad.distributions.Beta(_t([1.0, 4.0]), _t([2.0, 3.0]))
    np.testing.assert_allclose(_np(beta.concentration1), [1.0, 4.0])
    np.testing.assert_allclose(_np(beta.concentration0), [2.0, 3.0])
    assert tuple(beta.expand((3, 2))._dirichlet.batch_shape) == (3, 2)
    assert tuple(wgrad.distributions.Beta(1.0, 2.0)._dirichlet.concentration.shape) == (2,)


def test_log_modified_bessel_fn():
    x = np.array([1e-3, 0.5, 2.0, 3.7, 3.75, 4.0, 20.0, 300.0])
    for order in (0, 1):
        xw, xt = _t(x, True), torch.tensor(x, requires_grad=True)
        yw, yt = (wgrad_von_mises._log_modified_bessel_fn(xw, order),
                  torch_von_mises._log_modified_bessel_fn(xt, order))
        np.testing.assert_allclose(_np(yw), yt.detach().numpy(), rtol=1e-12)
        yw.sum().backward()
        yt.sum().backward()
        np.testing.assert_allclose(_np(xw.grad), xt.grad.numpy(), rtol=1e-12)
    with pytest.raises(AssertionError, match="order must be 0 or 1, got 2"):
        wgrad_von_mises._log_modified_bessel_fn(_t(x), 2)


def test_vonmises_expand_keeps_validation():
    d = wgrad.distributions.VonMises(_t([0.0]), _t([1.0]), validate_args=False)
    e = d.expand((3,))
    assert type(e).__name__ == "VonMises" and e._validate_args is False
    assert tuple(e.batch_shape) == (3,)
    assert "_validate_args" not in wgrad.distributions.VonMises(0.0, 1.0).expand((2,)).__dict__


def test_cb_log_normalizer_and_params():
    x = np.array([-2.0, -1e-3, 0.0, 5e-4, 1e-3, 0.3])  # natural params around the lims
    results = []
    for T in (wgrad, torch):
        d = T.distributions.ContinuousBernoulli(logits=T.tensor([0.0] * 6))
        xs = T.tensor(x, requires_grad=True)
        y = d._log_normalizer(xs)
        (g,) = T.autograd.grad(y.sum(), [xs])
        results.append((y.detach(), g, d.param_shape, d.probs, d._new((2,)).shape))
    (yw, gw, sw, pw, nw), (yt, gt, st, pt, nt) = results
    np.testing.assert_allclose(_np(yw), yt.numpy(), rtol=1e-12)
    np.testing.assert_allclose(_np(gw), gt.numpy(), rtol=1e-12)
    assert tuple(sw) == tuple(st) and tuple(nw) == tuple(nt)
    np.testing.assert_allclose(_np(pw), pt.detach().numpy())


def test_gpd_log_cdf_and_survival():
    params = _f32((LOC, POS, np.array([-0.4, 0.0, 0.3])))
    v = np.float32(LOC + POS / 2)
    dw = wgrad.distributions.GeneralizedPareto(*(wgrad.tensor(p) for p in params))
    dt = torch.distributions.GeneralizedPareto(*(torch.tensor(p) for p in params))
    for name in ("log_cdf", "log_survival_function"):
        np.testing.assert_allclose(_np(getattr(dw, name)(wgrad.tensor(v))),
                                   getattr(dt, name)(torch.tensor(v)).numpy(), rtol=1e-5)
    with pytest.raises(ValueError, match="to be within the support"):
        dw.log_survival_function(wgrad.tensor(np.float32(LOC - 1.0)))


@pytest.mark.parametrize("name", ["gamma", "chi2", "cb-probs", "cb-logits"])
def test_exponential_family_entropy(name):
    """The generic entropy from ``_natural_params`` and ``_log_normalizer`` (what the
    Bregman KL uses) agrees with torch's (Beta and Dirichlet, like torch's, have no
    ``_mean_carrier_measure``: their KL has its own formula)."""
    make, params = CASES[name][:2]
    ws = [_t(p) for p in params]
    ts = [torch.tensor(p) for p in params]
    got = wgrad.distributions.ExponentialFamily.entropy(make(wgrad, *ws))
    want = torch.distributions.ExponentialFamily.entropy(make(torch, *ts))
    np.testing.assert_allclose(_np(got), want.detach().numpy(), rtol=1e-7, atol=1e-10)


def test_numbers_only_batch_shapes():
    D = wgrad.distributions
    for d in (D.Gamma(1.0, 2.0), D.Chi2(2.0), D.Beta(1.0, 2.0), D.FisherSnedecor(1.0, 2.0),
              D.StudentT(2.0), D.VonMises(0.0, 1.0), D.ContinuousBernoulli(0.3),
              D.GeneralizedPareto(0.0, 1.0, 0.1)):
        assert tuple(d.batch_shape) == (), type(d).__name__
    assert math.isclose(float(D.Beta(1.0, 3.0).mean), 0.25)
