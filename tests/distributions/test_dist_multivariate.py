"""Group D's distributions (MultivariateNormal, LowRankMultivariateNormal, Wishart,
LKJCholesky) against torch's, through tests/distributions/_dist_harness.py, plus their
matrix attributes, errors and warnings, moments of samples and rsample gradients."""
import warnings

import numpy as np
import pytest
import torch

import wgrad
from _dist_harness import _agree, _call, _grads_agree, _tensors, check

R = np.random.default_rng(3)


def _spd(shape, n):
    a = R.standard_normal(shape + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


# batch shape (2,) throughout (the fewer distinct shapes, the fewer XLA programs to
# compile); the "-broadcast" cases broadcast parameters of different batch shapes
LOC = R.standard_normal((2, 3))
LOC_B = R.standard_normal((4, 1, 3))
COV = _spd((2,), 3)
TRIL = np.linalg.cholesky(COV)
VALUES = [R.standard_normal(3), R.standard_normal((4, 1, 3)), R.standard_normal(2)]
W = R.standard_normal((2, 3, 2))
DIAG = R.uniform(0.5, 2, 3)
DF = np.array([4.5, 2.5])  # 2.5 < 3: torch's "Low df" warning
DF_B = np.array([[4.5], [3.5], [6.0]])
SPD_VALUES = [_spd((4, 1), 3) / 3, _spd((), 3), np.eye(3) - 2 * np.ones((3, 3)),
              np.ones((3, 3)) + np.triu(np.ones((3, 3)), 1), np.eye(2)]
NOVAL = dict(validate_args=False)


def _corr_cholesky(shape, n, conc=1.5):
    torch.manual_seed(0)
    return torch.distributions.LKJCholesky(n, conc).sample(shape).double().numpy()


LKJ_VALUES = [_corr_cholesky((2,), 3), _corr_cholesky((), 3)[None],
              2 * np.eye(3), np.tril(np.ones((3, 3)))]


def _f32(arrays):
    return tuple(a.astype(np.float32) for a in arrays)


def _mvn(key, **kw):
    return lambda T, m, a: T.distributions.MultivariateNormal(m, **{key: a}, **kw)


def _lowrank(**kw):
    return lambda T, m, w, d: T.distributions.LowRankMultivariateNormal(m, w, d, **kw)


def _wishart(key, **kw):
    return lambda T, df, a: T.distributions.Wishart(df, **{key: a}, **kw)


def _lkj(dim, **kw):
    return lambda T, c: T.distributions.LKJCholesky(dim, c, **kw)


# name: (make, params, values)
CASES = {
    # MultivariateNormal: each parameterization, broadcast batch shapes
    "mvn-cov": (_mvn("covariance_matrix"), (LOC, COV), VALUES),
    "mvn-prec": (_mvn("precision_matrix"), (LOC, COV), VALUES),
    "mvn-tril": (_mvn("scale_tril"), (LOC, TRIL), VALUES),
    "mvn-broadcast": (_mvn("scale_tril"), (LOC_B, TRIL), VALUES[:1]),
    "mvn-one": (_mvn("scale_tril"), (LOC[0], TRIL[1]), VALUES[:1]),
    "mvn-f32": (_mvn("covariance_matrix"), _f32((LOC, COV)), _f32(VALUES[:2])),
    "mvn-f32-f64-value": (_mvn("covariance_matrix"), _f32((LOC, COV)), VALUES[:1]),
    "mvn-noval": (_mvn("scale_tril", **NOVAL), (LOC, TRIL), VALUES[2:]),
    "mvn-bad-cov": (_mvn("covariance_matrix"), (LOC, COV - 10 * np.eye(3)), VALUES),
    "mvn-asym-cov": (_mvn("covariance_matrix"), (LOC, COV + np.triu(np.ones(3), 1)), ()),
    "mvn-bad-prec": (_mvn("precision_matrix"), (LOC, -COV), ()),
    "mvn-bad-tril": (_mvn("scale_tril"), (LOC, -TRIL), ()),
    "mvn-upper-tril": (_mvn("scale_tril"), (LOC, np.swapaxes(TRIL, -1, -2)), ()),
    "mvn-scalar-loc": (_mvn("scale_tril"), (np.array(0.0), TRIL), ()),
    "mvn-1d-matrix": (_mvn("covariance_matrix"), (LOC, np.ones(3)), ()),
    "mvn-1d-tril": (_mvn("scale_tril"), (LOC, np.ones(3)), ()),
    "mvn-1d-prec": (_mvn("precision_matrix"), (LOC, np.ones(3)), ()),
    "mvn-none": (lambda T, m: T.distributions.MultivariateNormal(m), (LOC,), ()),
    "mvn-two": (lambda T, m, c: T.distributions.MultivariateNormal(m, c, scale_tril=c),
                (LOC, TRIL), ()),
    # LowRankMultivariateNormal
    "lowrank": (_lowrank(), (LOC_B, W, DIAG), VALUES),
    "lowrank-one": (_lowrank(), (LOC[0], W[0], DIAG), ()),
    "lowrank-f32": (_lowrank(), _f32((LOC, W, DIAG)), _f32(VALUES[1:2])),
    "lowrank-bad-diag": (_lowrank(), (LOC, 0.1 * W, DIAG * np.array([1, -1, 1])), ()),
    "lowrank-scalar-loc": (_lowrank(), (np.array(0.0), W, DIAG), ()),
    "lowrank-1d-factor": (_lowrank(), (LOC, DIAG, DIAG), ()),
    "lowrank-factor-rows": (_lowrank(), (LOC, W[..., :2, :], DIAG), ()),
    "lowrank-diag-size": (_lowrank(), (LOC, W, DIAG[:2]), ()),
    "lowrank-batch-mismatch": (_lowrank(), (R.standard_normal((3, 3)), W, DIAG), ()),
    "lowrank-batch-mismatch-2": (_lowrank(), (LOC_B, W[:, None], DIAG), ()),
    # Wishart
    "wishart-cov": (_wishart("covariance_matrix"), (DF_B, COV), SPD_VALUES[1:]),
    "wishart-prec": (_wishart("precision_matrix"), (DF, COV), SPD_VALUES),
    "wishart-tril": (_wishart("scale_tril"), (DF, TRIL), SPD_VALUES),
    "wishart-df-number": (lambda T, a: T.distributions.Wishart(5.0, scale_tril=a), (TRIL[0],),
                          SPD_VALUES[1:3]),
    "wishart-f32": (_wishart("covariance_matrix"), _f32((DF, COV)), _f32(SPD_VALUES[:1])),
    "wishart-noval": (_wishart("scale_tril", **NOVAL), (DF, TRIL), SPD_VALUES[2:4]),
    "wishart-bad-df": (_wishart("scale_tril"), (DF - 2, TRIL), ()),
    "wishart-bad-df-number": (lambda T, a: T.distributions.Wishart(1.5, scale_tril=a),
                              (TRIL,), ()),
    "wishart-bad-cov": (_wishart("covariance_matrix"), (DF, -COV), ()),
    "wishart-bad-tril": (_wishart("scale_tril"), (DF, -TRIL), ()),
    "wishart-1d": (_wishart("scale_tril"), (DF, np.ones(3)), ()),
    "wishart-none": (lambda T, df: T.distributions.Wishart(df), (DF,), ()),
    "wishart-two": (lambda T, df, a: T.distributions.Wishart(df, a, scale_tril=a),
                    (DF, TRIL), ()),
    # LKJCholesky
    "lkj": (_lkj(3), (np.array([0.5, 2.5]),), LKJ_VALUES),
    "lkj-dim2": (_lkj(2), (np.array(1.7),), [LKJ_VALUES[0][:, :2, :2] / np.linalg.norm(
        LKJ_VALUES[0][:, :2, :2], axis=-1, keepdims=True)]),
    "lkj-number": (lambda T: T.distributions.LKJCholesky(3), (), LKJ_VALUES[1:3]),
    "lkj-f32": (_lkj(3), (np.array([0.5, 2.5], dtype=np.float32),),
                [v.astype(np.float32) for v in LKJ_VALUES[:1]]),
    "lkj-noval": (_lkj(3, **NOVAL), (np.array([1.0, 2.0]),), LKJ_VALUES[2:]),
    "lkj-bad-conc": (_lkj(3), (np.array([1.0, -1.0]),), ()),
    "lkj-bad-dim": (_lkj(1), (np.array(1.0),), ()),
}

# cases whose samples add nothing to another case's but the time to compile their shapes
NO_SAMPLES = {"mvn-prec", "mvn-tril", "mvn-one", "mvn-noval", "mvn-f32-f64-value",
              "lowrank-one", "wishart-prec", "wishart-tril", "wishart-df-number",
              "wishart-noval", "lkj-dim2", "lkj-number", "lkj-noval"}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    make, params, values = CASES[name]
    f32 = "f32" in name
    check(make, params, values, rtol=3e-5 if f32 else 1e-7, atol=1e-5 if f32 else 1e-9,
          sample=name not in NO_SAMPLES, grad="noval" not in name, name=name)


MATRICES = ("scale_tril", "covariance_matrix", "precision_matrix")


@pytest.mark.filterwarnings("ignore:Low df values")
@pytest.mark.parametrize("name", ["mvn-cov", "mvn-prec", "mvn-tril", "lowrank",
                                  "wishart-cov", "wishart-prec", "wishart-tril"])
def test_matrix_attributes(name):
    """The lazily made matrices (and LowRank's variance), their gradients, and which of
    them a repr and an expand carry."""
    make, params, _ = CASES[name]
    tp, wp = _tensors(torch, params), _tensors(wgrad, params)
    dt, dw = make(torch, *tp), make(wgrad, *wp)
    for attr in MATRICES + (("variance",) if name == "lowrank" else ()):
        t, w = _call(lambda: getattr(dt, attr)), _call(lambda: getattr(dw, attr))
        _agree(attr, w, t, 1e-7, 1e-9)
        _grads_agree(attr, w, t, wp, tp, 1e-7, 1e-9)
    # every matrix now made: expand keeps them all
    et, ew = dt.expand((2,) + tuple(dt.batch_shape)), dw.expand((2,) + tuple(dw.batch_shape))
    assert sorted(k for k in vars(ew) if k in MATRICES) == sorted(
        k for k in vars(et) if k in MATRICES)
    for attr in MATRICES:
        _agree(attr, getattr(ew, attr), getattr(et, attr), 1e-7, 1e-9)
    assert repr(dw) == repr(dt).replace("torch.", "wgrad.")


def test_mvn_repr_and_expand_before_matrices_are_made():
    for key in MATRICES:
        dt = torch.distributions.MultivariateNormal(torch.zeros(3), **{key: torch.eye(3)})
        dw = wgrad.distributions.MultivariateNormal(wgrad.zeros(3), **{key: wgrad.eye(3)})
        et, ew = dt.expand((2,)), dw.expand((2,))
        assert repr(ew) == repr(et).replace("torch.", "wgrad.")
        assert sorted(vars(ew)) == sorted(vars(et))


def test_wishart_warnings_and_mvdigamma():
    def low(T):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            T.distributions.Wishart(T.tensor([2.5, 4.0]), covariance_matrix=T.eye(3))
        return [(c.category.__name__, str(c.message)) for c in caught]

    assert low(wgrad) == low(torch) and len(low(torch)) == 1
    from_w = _call(lambda: wgrad.distributions.wishart._mvdigamma(wgrad.tensor([0.9]), 3))
    from_t = _call(lambda: torch.distributions.wishart._mvdigamma(torch.tensor([0.9]), 3))
    assert from_w == from_t


def test_batch_mahalanobis_against_torch():
    """Factors broadcast along some batch dims of the vectors (the columns of one solve)."""
    for l_shape, x_shape in [((), (5,)), ((2, 1), (3, 2, 4)), ((1, 4), (2, 3, 4))]:
        lt = _tensors(torch, [np.linalg.cholesky(_spd(l_shape, 3)),
                              R.standard_normal(x_shape + (3,))])
        lw = _tensors(wgrad, [t.detach().numpy() for t in lt])
        t = torch.distributions.multivariate_normal._batch_mahalanobis(*lt)
        w = wgrad.distributions.multivariate_normal._batch_mahalanobis(*lw)
        _agree(f"{l_shape} {x_shape}", w, t, 1e-10, 1e-12)
        _grads_agree(f"{l_shape} {x_shape}", w, t, lw, lt, 1e-10, 1e-12)


def test_mvn_batch_mismatch():
    """torch's broadcast_shapes error, but for the shape's repr: torch prints the
    argument as given (a torch.Size), wgrad.broadcast_shapes a tuple."""
    def make(T):
        return T.distributions.MultivariateNormal(T.zeros(3, 3), scale_tril=T.eye(3).expand(
            2, 3, 3))

    w, t = _call(lambda: make(wgrad)), _call(lambda: make(torch))
    assert w[0] == t[0] == "RuntimeError"
    assert w[1] == t[1].replace("wgrad.Size([3])", "(3,)")


def _sample_moments(d, n):
    wgrad.manual_seed(0)
    x = d.sample((n,)).double().numpy()
    return x.mean(0), np.einsum("ni,nj->ij", x - x.mean(0), x - x.mean(0)) / n


def test_mvn_samples_and_rsample_gradient():
    loc, cov = np.array([1.0, -2.0, 0.5]), COV[0]
    for d in (wgrad.distributions.MultivariateNormal(wgrad.tensor(loc), wgrad.tensor(cov)),
              wgrad.distributions.LowRankMultivariateNormal(
                  wgrad.tensor(loc), wgrad.tensor(W[0]), wgrad.tensor(DIAG))):
        mean, c = _sample_moments(d, 4000)
        true_cov = d.covariance_matrix.detach().numpy()
        np.testing.assert_allclose(mean, loc, atol=0.15 * np.sqrt(np.diag(true_cov)).max())
        np.testing.assert_allclose(c, true_cov, atol=0.12 * np.abs(true_cov).max())
    # x = loc + L eps: d sum(x) / d loc = n, d sum(x) / d L = sum over draws of 1 eps^T
    # (all of it: L is a plain tensor, nothing projects the gradient on the triangle)
    m, tril = wgrad.tensor(loc, requires_grad=True), wgrad.tensor(TRIL[0], requires_grad=True)
    x = wgrad.distributions.MultivariateNormal(m, scale_tril=tril).rsample((7,))
    x.sum().backward()
    np.testing.assert_allclose(m.grad.numpy(), np.full(3, 7.0))
    eps = np.linalg.solve(TRIL[0], (x.detach().numpy() - loc).T)
    np.testing.assert_allclose(tril.grad.numpy(), np.ones((3, 1)) * eps.sum(1),
                               rtol=1e-10, atol=1e-12)


def test_wishart_samples_and_singular_retry():
    df = 6.0
    d = wgrad.distributions.Wishart(wgrad.tensor(df), covariance_matrix=wgrad.tensor(COV[0]))
    wgrad.manual_seed(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        x = d.rsample((3000,)).numpy()
    # torch flags the samples that pass its support check, so it always warns and redraws
    assert [str(c.message) for c in caught] == ["Singular sample detected."]
    np.testing.assert_allclose(x.mean(0), df * COV[0], rtol=0.08, atol=0.08 * COV[0].max())
    var = df * (COV[0] ** 2 + np.outer(np.diag(COV[0]), np.diag(COV[0])))
    np.testing.assert_allclose(x.var(0), var, rtol=0.25)
    # redraws keep the batch and event shapes; max_try_correction=0 draws once
    db = wgrad.distributions.Wishart(wgrad.tensor([4.0, 5.0]), scale_tril=wgrad.tensor(TRIL))
    for tries in (None, 0, 3):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            s = db.rsample((4,), max_try_correction=tries)
        assert tuple(s.shape) == (4, 2, 3, 3) and bool(db.support.check(s).all())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        one = d.rsample()
    assert tuple(one.shape) == (3, 3)
    # reparameterized in df and in the scale
    df_t = wgrad.tensor(5.0, requires_grad=True)
    tril = wgrad.tensor(TRIL[0], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wgrad.distributions.Wishart(df_t, scale_tril=tril).rsample((5,)).sum().backward()
    assert df_t.grad is not None and tril.grad is not None


def test_lkj_samples():
    """Dim 2: L[1, 0] is a correlation r with (r + 1) / 2 ~ Beta(eta, eta)."""
    eta = 2.0
    d = wgrad.distributions.LKJCholesky(2, wgrad.tensor(eta))
    wgrad.manual_seed(0)
    r = d.sample((4000,)).numpy()[:, 1, 0]
    assert abs(r.mean()) < 0.05
    np.testing.assert_allclose(r.var(), 1 / (2 * eta + 1), rtol=0.1)
    s = wgrad.distributions.LKJCholesky(4, wgrad.tensor([0.5, 3.0])).sample((100,))
    assert tuple(s.shape) == (100, 2, 4, 4) and not s.requires_grad
    assert bool(wgrad.distributions.constraints.corr_cholesky.check(s).all())
