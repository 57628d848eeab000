"""wgrad.distributions' transforms, constraint registry and TransformedDistribution
against torch's: every transform's forward, inverse and log-Jacobian (values and the
gradients with respect to the input and the transform's parameters), its shapes,
constraints, sign, repr, equality and caching; ``biject_to``/``transform_to`` for each
registered constraint; TransformedDistribution through the harness."""
import copy

import numpy as np
import pytest
import torch

import wgrad
from _dist_harness import _agree, _call, _grads_agree, _np, _tensors, check

R = np.random.default_rng(0)
X23 = R.standard_normal((2, 3))
POS23 = R.uniform(0.5, 2.0, (2, 3))
SQ = R.standard_normal((2, 3, 3))
SPD = SQ @ np.swapaxes(SQ, -1, -2) + 3 * np.eye(3)


def _tr(T):
    return T.distributions.transforms


def _normal_cdf(T, loc, scale):
    return _tr(T).CumulativeDistributionTransform(T.distributions.Normal(loc, scale))


# name: (make(T, *params) -> transform, params, x in the domain)
TRANSFORMS = {
    "exp": (lambda T: _tr(T).ExpTransform(), (), X23),
    "power-tensor": (lambda T, e: _tr(T).PowerTransform(e), (np.array([0.5, -1.5, 2.0]),),
                     POS23),
    "power-number": (lambda T: _tr(T).PowerTransform(2.5), (), POS23),
    "sigmoid": (lambda T: _tr(T).SigmoidTransform(), (),
                np.array([-800.0, -30.0, -1.0, 0.0, 2.0, 40.0])),
    "softplus": (lambda T: _tr(T).SoftplusTransform(), (), np.array([-3.0, 0.5, 19.0, 25.0])),
    "tanh": (lambda T: _tr(T).TanhTransform(), (), X23),
    "abs": (lambda T: _tr(T).AbsTransform(), (), X23),
    "affine-tensors": (lambda T, m, s: _tr(T).AffineTransform(m, s), (X23[0], -POS23[0]),
                       X23),
    "affine-numbers": (lambda T: _tr(T).AffineTransform(1.5, -2.0), (), X23),
    "affine-event1": (lambda T, m, s: _tr(T).AffineTransform(m, s, event_dim=1),
                      (X23[0], POS23[1]), X23),
    "affine-event2-number": (lambda T: _tr(T).AffineTransform(0.5, 3.0, event_dim=2), (),
                             X23),
    "softmax": (lambda T: _tr(T).SoftmaxTransform(), (), X23),
    "stick-breaking": (lambda T: _tr(T).StickBreakingTransform(), (), X23),
    "lower-cholesky": (lambda T: _tr(T).LowerCholeskyTransform(), (), SQ),
    "positive-definite": (lambda T: _tr(T).PositiveDefiniteTransform(), (), SQ),
    "corr-cholesky": (lambda T: _tr(T).CorrCholeskyTransform(), (),
                      R.standard_normal((2, 6))),
    "reshape": (lambda T: _tr(T).ReshapeTransform((2, 3), (6,)), (), SQ[:, :2]),
    "independent": (lambda T: _tr(T).IndependentTransform(_tr(T).ExpTransform(), 1), (),
                    X23),
    "compose": (lambda T, s: _tr(T).ComposeTransform(
        [_tr(T).ExpTransform(), _tr(T).AffineTransform(1.0, s)]), (POS23[0],), X23),
    "compose-stick-affine": (lambda T: _tr(T).ComposeTransform(
        [_tr(T).AffineTransform(0.5, 2.0), _tr(T).StickBreakingTransform(),
         _tr(T).AffineTransform(0.0, 3.0)]), (), X23),
    "compose-reshape": (lambda T: _tr(T).ComposeTransform(
        [_tr(T).ReshapeTransform((2, 3), (6,)), _tr(T).ExpTransform(),
         _tr(T).StickBreakingTransform()]), (), SQ[:, :2]),
    "identity": (lambda T: _tr(T).identity_transform, (), X23),
    "inverse-sigmoid": (lambda T: _tr(T).SigmoidTransform().inv, (), POS23 / 2.5),
    "inverse-compose": (lambda T: _tr(T).ComposeTransform(
        [_tr(T).ExpTransform(), _tr(T).AffineTransform(1.0, 2.0)]).inv, (), POS23 + 1.5),
    "cat": (lambda T, s: _tr(T).CatTransform(
        [_tr(T).ExpTransform(), _tr(T).identity_transform,
         _tr(T).AffineTransform(0.0, s)], dim=1, lengths=[1, 1, 1]), (np.array(3.0),),
        X23),
    "cat-event": (lambda T: _tr(T).CatTransform(
        [_tr(T).IndependentTransform(_tr(T).ExpTransform(), 1), _tr(T).SigmoidTransform()],
        dim=0, lengths=[1, 1]), (), X23),
    "cat-neg-dim": (lambda T: _tr(T).CatTransform(
        [_tr(T).SigmoidTransform(), _tr(T).TanhTransform()], dim=-1, lengths=[2, 1]), (),
        X23),
    "stack": (lambda T: _tr(T).StackTransform(
        [_tr(T).ExpTransform(), _tr(T).SigmoidTransform(), _tr(T).identity_transform],
        dim=1), (), X23),
    "cdf": (_normal_cdf, (np.array([0.5, -1.0, 0.0]), POS23[0]), X23),
    "f32-exp": (lambda T: _tr(T).ExpTransform(), (), X23.astype(np.float32)),
    "f32-stick-breaking": (lambda T: _tr(T).StickBreakingTransform(), (),
                           X23.astype(np.float32)),
    "f32-corr-cholesky": (lambda T: _tr(T).CorrCholeskyTransform(), (),
                          R.standard_normal(3).astype(np.float32)),
}


def _attr(obj, name):
    """``obj.name`` as something comparable (a tuple for shapes, an array for tensors,
    the error as ``(type, message)``)."""
    v = _call(lambda: getattr(obj, name))
    if isinstance(v, (torch.Tensor, wgrad.Tensor)):
        return _np(v).tolist()
    return repr(v).replace("torch.", "wgrad.")


def _shape(v):
    """A shape as a tuple; an error as ``_call`` gives it."""
    return v if type(v) is tuple and v and isinstance(v[0], str) else tuple(v)


def _leaf(T, a):
    return T.tensor(a).requires_grad_()


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_transform_against_torch(name):
    make, params, x = TRANSFORMS[name]
    rtol, atol = (3e-5, 1e-6) if "f32" in name else (1e-7, 1e-10)
    tp, wp = _tensors(torch, params), _tensors(wgrad, params)
    tt, tw = make(torch, *tp), make(wgrad, *wp)
    assert repr(tw) == repr(tt)
    for attr in ("domain", "codomain", "event_dim", "bijective", "sign"):
        assert _attr(tw, attr) == _attr(tt, attr), attr
    # equality: by value for the parametrized/stateless ones, else identity (as torch)
    assert (tw == make(wgrad, *wp)) == (tt == make(torch, *tp))
    assert (tw != make(wgrad, *wp)) == (tt != make(torch, *tp))

    def both(what, fw, ft, wins, tins):
        w, t = _call(fw), _call(ft)
        if _agree(f"{name} {what}", w, t, rtol, atol):
            _grads_agree(f"{name} {what}", w, t, wins + wp, tins + tp, rtol, atol)
        return w, t

    xt, xw = _leaf(torch, x), _leaf(wgrad, x)
    yw, yt = both("forward", lambda: tw(xw), lambda: tt(xt), [xw], [xt])
    inside_w = _call(lambda: bool(tw.codomain.check(yw.detach()).all()))
    inside_t = _call(lambda: bool(tt.codomain.check(yt.detach()).all()))
    assert inside_w == inside_t and inside_w is not False  # (torch's cat check can fail)
    y = _np(yt)
    yt2, yw2 = _leaf(torch, y), _leaf(wgrad, y)
    both("inverse", lambda: tw.inv(yw2), lambda: tt.inv(yt2), [yw2], [yt2])
    both("log_abs_det_jacobian", lambda: tw.log_abs_det_jacobian(xw, tw(xw)),
         lambda: tt.log_abs_det_jacobian(xt, tt(xt)), [xw], [xt])
    both("inverse log_abs_det_jacobian",
         lambda: tw.inv.log_abs_det_jacobian(yw2, tw.inv(yw2)),
         lambda: tt.inv.log_abs_det_jacobian(yt2, tt.inv(yt2)), [yw2], [yt2])
    for shape in (x.shape, y.shape, (4,) + y.shape, ()):
        for how in ("forward_shape", "inverse_shape"):
            sw = _call(lambda: getattr(tw, how)(wgrad.Size(shape)))
            st = _call(lambda: getattr(tt, how)(torch.Size(shape)))
            assert _shape(sw) == _shape(st), how
    # a cached copy gives the same values, and its inverse hands back the input itself
    cw, ct = tw.with_cache(1), tt.with_cache(1)
    assert repr(cw) == repr(ct) and cw is not tw
    yc = cw(xw)
    np.testing.assert_allclose(_np(yc), y, rtol=rtol, atol=atol)
    assert (cw.inv(yc) is xw) == (ct.inv(ct(xt)) is xt)
    assert cw.with_cache(1) is cw and tw.with_cache(0) is tw


def test_transform_inverse_round_trip_and_gradcheck():
    x = wgrad.tensor(X23, requires_grad=True)
    tr = wgrad.distributions.transforms
    for t in (tr.ExpTransform(), tr.SigmoidTransform(), tr.TanhTransform(),
              tr.SoftplusTransform(), tr.StickBreakingTransform(),
              tr.AffineTransform(1.0, -3.0), tr.IndependentTransform(tr.ExpTransform(), 1)):
        np.testing.assert_allclose(_np(t.inv(t(x))), X23, rtol=1e-9, atol=1e-9)
        assert wgrad.autograd.gradcheck(lambda a, t=t: t.log_abs_det_jacobian(a, t(a)), (x,))
        assert wgrad.autograd.gradcheck(lambda a, t=t: t(a), (x,))
    v = wgrad.tensor(R.standard_normal(6), requires_grad=True)
    t = tr.CorrCholeskyTransform()
    assert wgrad.autograd.gradcheck(lambda a: t.log_abs_det_jacobian(a, t(a)), (v,))
    np.testing.assert_allclose(_np(t.inv(t(v))), _np(v), rtol=1e-9, atol=1e-9)


# constructors and calls that raise: (the error is compared with torch's)
ERRORS = {
    "cache-size": lambda T: _tr(T).ExpTransform(cache_size=2),
    "reshape-numel": lambda T: _tr(T).ReshapeTransform((2, 3), (5,)),
    "reshape-forward-shape": lambda T: _tr(T).ReshapeTransform((2, 3), (6,)).forward_shape(
        T.Size((4, 3, 2))),
    "reshape-inverse-short": lambda T: _tr(T).ReshapeTransform((2, 3), (6,)).inverse_shape(
        T.Size(())),
    "independent-few-dims": lambda T: _tr(T).IndependentTransform(
        _tr(T).ExpTransform(), 2)(T.zeros(3)),
    "independent-inverse-few-dims": lambda T: _tr(T).IndependentTransform(
        _tr(T).ExpTransform(), 2).inv(T.ones(3)),
    "corr-forward-shape": lambda T: _tr(T).CorrCholeskyTransform().forward_shape((2, 4)),
    "corr-inverse-shape": lambda T: _tr(T).CorrCholeskyTransform().inverse_shape((3, 4)),
    "corr-event-dim": lambda T: _tr(T).CorrCholeskyTransform().event_dim,
    "abs-ladj": lambda T: _tr(T).AbsTransform().log_abs_det_jacobian(T.ones(2), T.ones(2)),
    "abs-sign": lambda T: _tr(T).AbsTransform().sign,
    "base-call": lambda T: _tr(T).Transform()(T.ones(2)),
    "base-inverse": lambda T: _tr(T).Transform().inv(T.ones(2)),
    "cat-tseq": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform(), 3]),
    "cat-lengths": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform()], lengths=[1, 2]),
    "cat-dim": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform()], dim=2)(T.ones(3)),
    "cat-length": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform()])(T.ones(3)),
    "cat-inverse-length": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform()]).inv(
        T.ones(3)),
    "cat-ladj-x": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform()]
                                                ).log_abs_det_jacobian(T.ones(3), T.ones(1)),
    "cat-ladj-y": lambda T: _tr(T).CatTransform([_tr(T).ExpTransform()], dim=1
                                                ).log_abs_det_jacobian(T.ones(2, 1), T.ones(1)),
    "stack-tseq": lambda T: _tr(T).StackTransform([None]),
    "stack-dim": lambda T: _tr(T).StackTransform([_tr(T).ExpTransform()], dim=1)(T.ones(1)),
    "stack-length": lambda T: _tr(T).StackTransform([_tr(T).ExpTransform()])(T.ones(3)),
    "stack-inverse-length": lambda T: _tr(T).StackTransform([_tr(T).ExpTransform()]).inv(
        T.ones(3)),
    "stack-ladj-y": lambda T: _tr(T).StackTransform([_tr(T).ExpTransform()]
                                                    ).log_abs_det_jacobian(T.ones(1),
                                                                           T.ones(2)),
    "stick-forward-shape": lambda T: _tr(T).StickBreakingTransform().forward_shape(()),
    "softmax-inverse-shape": lambda T: _tr(T).SoftmaxTransform().inverse_shape(()),
    "positive-definite-inverse": lambda T: _tr(T).PositiveDefiniteTransform().inv(
        -T.eye(2, dtype=T.float64)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_transform_errors(name):
    w, t = _call(lambda: ERRORS[name](wgrad)), _call(lambda: ERRORS[name](torch))
    assert isinstance(t, tuple), f"torch did not raise: {t!r}"
    # torch's class is torch._C._LinAlgError, shown as torch.linalg.LinAlgError
    assert w == (t[0].replace("_LinAlgError", "LinAlgError"), t[1])


def _with_cache_subclass(T):
    class Scaled(T.distributions.transforms.Transform):
        def __init__(self, factor, cache_size=0):
            super().__init__(cache_size=cache_size)
            self.factor = factor
    return Scaled(2.0)


def test_caching_semantics():
    tr = wgrad.distributions.transforms
    x = wgrad.tensor([0.5, 1.5], requires_grad=True)
    t0, t1 = tr.ExpTransform(), tr.ExpTransform(cache_size=1)
    assert t0(x) is not t0(x) and t1(x) is t1(x)
    y = t1(x)
    assert t1.inv(y) is x and t1._cached_x_y == (x, y)
    assert t0.inv(t0(x)) is not x
    # the cache holds one pair: a new input replaces it
    x2 = wgrad.tensor([2.0])
    y2 = t1(x2)
    assert t1.inv(y) is not x and t1._cached_x_y[1] is not y2
    # inverting first fills the cache too, as (x, y)
    t2 = tr.SigmoidTransform(cache_size=1)
    u = wgrad.tensor([0.25])
    v = t2.inv(u)
    assert t2(v) is u
    # with_cache: the same object when unchanged, else a copy (parts cached too)
    assert t1.with_cache(1) is t1 and t0.with_cache(0) is t0
    assert t0.with_cache()._cache_size == 1 and t0.inv.with_cache().inv._cache_size == 1
    c = tr.ComposeTransform([tr.ExpTransform(), tr.AffineTransform(1.0, 2.0)]).with_cache()
    assert [p._cache_size for p in c.parts] == [1, 1] and c._cache_size == 1
    assert c.inv.inv is c and c.inv._cache_size == 0
    ind = tr.IndependentTransform(tr.ExpTransform(), 1, cache_size=1)
    assert ind.base_transform._cache_size == 1
    cat = tr.CatTransform([tr.ExpTransform()], cache_size=1)
    assert cat.transforms[0]._cache_size == 1
    assert tr.StackTransform([tr.ExpTransform()]).with_cache().transforms[0]._cache_size == 1
    assert tr.PowerTransform(2.0).with_cache().exponent.item() == 2.0
    assert tr.ReshapeTransform((2,), (2,)).with_cache()._cache_size == 1
    d = wgrad.distributions.Normal(0.0, 1.0)
    assert tr.CumulativeDistributionTransform(d).with_cache().distribution is d
    aff = tr.AffineTransform(1.0, 2.0, event_dim=1).with_cache()
    assert (aff.loc, aff.scale, aff.event_dim, aff._cache_size) == (1.0, 2.0, 1, 1)
    # a subclass with its own __init__ and no with_cache: torch's NotImplementedError
    w = _call(lambda: _with_cache_subclass(wgrad).with_cache())
    t = _call(lambda: _with_cache_subclass(torch).with_cache())
    assert w == t and w[0] == "NotImplementedError"
    # pickling drops the inverse
    assert t0.inv.inv is t0 and t0.__getstate__()["_inv"] is None


def test_equality_and_hash():
    for T in (wgrad, torch):
        tr = T.distributions.transforms
        assert tr.ExpTransform() == tr.ExpTransform() and tr.ExpTransform() != tr.TanhTransform()
        assert tr.ExpTransform().inv == tr.ExpTransform().inv
        assert tr.ExpTransform().inv != tr.ExpTransform()
        assert tr.AffineTransform(1.0, 2.0) == tr.AffineTransform(1.0, 2.0)
        assert tr.AffineTransform(1.0, 2.0) != tr.AffineTransform(1.0, 3.0)
        assert tr.AffineTransform(T.tensor([1.0, 2.0]), 2.0) == tr.AffineTransform(
            T.tensor([1.0, 2.0]), 2.0)
        assert tr.AffineTransform(T.tensor([1.0, 2.0]), 2.0) != tr.AffineTransform(
            T.tensor([1.0, 3.0]), 2.0)
        assert tr.AffineTransform(0.0, T.tensor(2.0)) == tr.AffineTransform(0.0, 2.0)
        assert tr.PowerTransform(2.0) == tr.PowerTransform(T.tensor([2.0, 2.0]))
        assert tr.PowerTransform(2.0) != tr.PowerTransform(3.0)
        assert tr.ComposeTransform([tr.ExpTransform()]) == tr.ComposeTransform(
            [tr.ExpTransform()])
        assert tr.ComposeTransform([]) != tr.ComposeTransform([tr.ExpTransform()])
        assert tr.identity_transform == tr.ComposeTransform([])
        base = tr.Transform()
        assert base == base and base != tr.Transform()
        assert tr.CorrCholeskyTransform() != tr.CorrCholeskyTransform()
        with pytest.raises(TypeError):
            hash(tr.ExpTransform())
        assert tr.ExpTransform().inv.inv == tr.ExpTransform()
    assert sorted(wgrad.distributions.transforms.__all__) == sorted(
        torch.distributions.transforms.__all__)
    for name in torch.distributions.transforms.__all__:
        assert hasattr(wgrad.distributions, name), name


def test_inverse_and_compose_properties():
    for T in (wgrad, torch):
        tr = T.distributions.transforms
        e = tr.ExpTransform()
        assert e.inv.inv is e and e.inv is e.inv and e.inv.sign == 1 and e.inv.bijective
        c = tr.ComposeTransform([tr.ExpTransform(), tr.AffineTransform(0.0, -1.0)])
        assert c.sign == -1 and c.bijective and c.inv.inv is c
        assert not tr.ComposeTransform([tr.AbsTransform()]).bijective
        assert tr.identity_transform.sign == 1
        assert repr(tr.identity_transform.domain) == "Real()"
        p = tr.PowerTransform(T.tensor([-2.0, 3.0]))
        assert p.sign.tolist() == [-1.0, 1.0]
        assert tr.AffineTransform(0.0, 0.0).sign == 0
        assert tr.AffineTransform(0.0, T.tensor([-2.0, 0.5])).sign.tolist() == [-1.0, 1.0]
    reprs = [repr(T.distributions.transforms.ComposeTransform(
        [T.distributions.transforms.ExpTransform(),
         T.distributions.transforms.IndependentTransform(
             T.distributions.transforms.SigmoidTransform().inv, 2)])) for T in (wgrad, torch)]
    assert reprs[0] == reprs[1]


# constraint factories: (make(T) -> constraint, x shape for the unconstrained input)
def _c(T):
    return T.distributions.constraints


CONSTRAINTS = {
    "real": (lambda T: _c(T).real, (3,)),
    "real-vector": (lambda T: _c(T).real_vector, (2, 3)),
    "independent-positive": (lambda T: _c(T).independent(_c(T).positive, 2), (2, 3)),
    "positive": (lambda T: _c(T).positive, (3,)),
    "nonnegative": (lambda T: _c(T).nonnegative, (3,)),
    "greater-than": (lambda T: _c(T).greater_than(2.5), (3,)),
    "greater-than-eq": (lambda T: _c(T).greater_than_eq(-1.0), (3,)),
    "greater-than-tensor": (lambda T: _c(T).greater_than(T.tensor([1.0, 2.0, 3.0],
                                                                    dtype=T.float64)), (3,)),
    "less-than": (lambda T: _c(T).less_than(3.0), (3,)),
    "unit-interval": (lambda T: _c(T).unit_interval, (3,)),
    "interval-int": (lambda T: _c(T).interval(0, 1), (3,)),
    "interval": (lambda T: _c(T).interval(-2.0, 5.0), (3,)),
    "interval-tensor": (lambda T: _c(T).interval(T.zeros(3, dtype=T.float64),
                                                 T.ones(3, dtype=T.float64)), (3,)),
    "half-open-interval": (lambda T: _c(T).half_open_interval(1.0, 4.0), (3,)),
    "simplex": (lambda T: _c(T).simplex, (2, 3)),
    "lower-cholesky": (lambda T: _c(T).lower_cholesky, (2, 3, 3)),
    "positive-definite": (lambda T: _c(T).positive_definite, (3, 3)),
    "positive-semidefinite": (lambda T: _c(T).positive_semidefinite, (3, 3)),
    "corr-cholesky": (lambda T: _c(T).corr_cholesky, (2, 3)),
    "cat": (lambda T: _c(T).cat([_c(T).positive, _c(T).interval(0.0, 1.0)], 0, [2, 3]),
            (5,)),
    "stack": (lambda T: _c(T).stack([_c(T).real, _c(T).positive, _c(T).unit_interval], 1),
              (4, 3)),
    "boolean": (lambda T: _c(T).boolean, (3,)),
    "integer-interval": (lambda T: _c(T).integer_interval(0, 3), (3,)),
    "dependent": (lambda T: _c(T).dependent, (3,)),
    "lower-triangular": (lambda T: _c(T).lower_triangular, (3, 3)),
}


def _structure(t):
    """A transform's types, recursively (reprs hide the parts and parameters)."""
    out = type(t).__name__
    for attr in ("parts", "transforms"):
        if hasattr(t, attr):
            out += "[" + ", ".join(_structure(p) for p in getattr(t, attr)) + "]"
    if hasattr(t, "base_transform"):
        out += f"({_structure(t.base_transform)}, {t.reinterpreted_batch_ndims})"
    if type(t).__name__ == "_InverseTransform":
        out += f"({_structure(t.inv)})"
    if type(t).__name__ == "AffineTransform":
        out += f"({_np_or(t.loc)}, {_np_or(t.scale)})"
    return out


def _np_or(v):
    return _np(v).tolist() if isinstance(v, (torch.Tensor, wgrad.Tensor)) else v


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("name", sorted(CONSTRAINTS))
def test_registry_against_torch(name, registry):
    make, shape = CONSTRAINTS[name]
    cw, ct = make(wgrad), make(torch)
    tw = _call(lambda: getattr(wgrad.distributions, registry)(cw))
    tt = _call(lambda: getattr(torch.distributions, registry)(ct))
    if isinstance(tt, tuple):
        assert tw == tt
        return
    assert _structure(tw) == _structure(tt)
    assert repr(tw) == repr(tt)
    x = R.standard_normal(shape)
    yw, yt = tw(wgrad.tensor(x)), tt(torch.tensor(x))
    np.testing.assert_allclose(_np(yw), _np(yt), rtol=1e-9, atol=1e-12)
    assert bool(cw.check(yw).all()), "the image is outside the constraint"
    if tt.bijective:
        np.testing.assert_allclose(_np(tw.inv(yw)), x, rtol=1e-6, atol=1e-6)


def test_registry_register():
    for T in (wgrad, torch):
        D = T.distributions
        reg = D.constraint_registry.ConstraintRegistry()
        made = reg.register(D.constraints.positive, lambda c: D.transforms.ExpTransform())
        assert isinstance(reg(D.constraints.greater_than(3.0)), D.transforms.ExpTransform)

        @reg.register(type(D.constraints.real))
        def _identity(c):
            return D.transforms.identity_transform
        assert reg(D.constraints.real) is D.transforms.identity_transform
        assert callable(made)
    errors = [_call(lambda T=T: T.distributions.constraint_registry.ConstraintRegistry(
        ).register(3, lambda c: None)) for T in (wgrad, torch)]
    assert errors[0] == errors[1] and errors[0][0] == "TypeError"
    errors = [_call(lambda T=T: T.distributions.constraint_registry.ConstraintRegistry()(
        T.distributions.constraints.real)) for T in (wgrad, torch)]
    assert errors[0] == errors[1] == ("NotImplementedError", "Cannot transform _Real "
                                                             "constraints")
    assert wgrad.distributions.biject_to is wgrad.distributions.constraint_registry.biject_to


# TransformedDistribution through the harness: make(T, *params)
def _td(T, base, transforms, **kw):
    return T.distributions.TransformedDistribution(base, transforms, **kw)


def _log_normal_affine(T, m, s, a, b):
    tr = T.distributions.transforms
    return _td(T, T.distributions.Normal(m, s), [tr.ExpTransform(), tr.AffineTransform(a, b)])


LOC, SCALE = R.standard_normal(3), R.uniform(0.5, 1.5, 3)
TD_CASES = {
    "exp-affine": (_log_normal_affine, (LOC, SCALE, np.array(1.0), np.array([2.0, 0.5, 1.0])),
                   [np.array([1.5, 2.0, 4.0]), np.array([3.0, 0.5, 1.2])]),
    "exp-affine-f32": (_log_normal_affine, (LOC.astype(np.float32), SCALE.astype(np.float32),
                                            np.float32(1.0), np.float32(2.0)),
                       [np.array([1.5, 2.0, 4.0], dtype=np.float32)]),
    "negative-scale": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), [
        T.distributions.transforms.AffineTransform(0.5, -2.0)]), (LOC, SCALE),
        [np.array([0.1, -1.0, 2.0])]),
    "mixed-sign-scale": (lambda T, m, s, b: _td(T, T.distributions.Normal(m, s), [
        T.distributions.transforms.AffineTransform(0.5, b)]),
        (LOC, SCALE, np.array([-2.0, 1.0, -0.5])), [np.array([0.1, -1.0, 2.0])]),
    "single-transform-numbers": (lambda T: _td(T, T.distributions.Normal(0.5, 2.0),
                                               T.distributions.transforms.ExpTransform()),
                                 (), [np.array(1.5), np.array([0.5, 3.0])]),
    "sigmoid-inverse": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), [
        T.distributions.transforms.SigmoidTransform(),
        T.distributions.transforms.SigmoidTransform().inv]), (LOC, SCALE),
        [np.array([0.1, -1.0, 2.0])]),
    "no-transforms": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), []),
                      (LOC, SCALE), [np.array([0.1, -1.0, 2.0])]),
    "stick-breaking": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), [
        T.distributions.transforms.StickBreakingTransform()]), (LOC, SCALE),
        [np.array([0.1, 0.2, 0.3, 0.4]), np.array([[0.25] * 4, [0.7, 0.1, 0.1, 0.1]])]),
    "reshape": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), [
        T.distributions.transforms.ReshapeTransform((2, 3), (6,))]),
        (np.stack([LOC, -LOC]), np.stack([SCALE, SCALE])), [R.standard_normal(6)]),
    "broadcast-affine": (lambda T, m, s, a: _td(T, T.distributions.Normal(m, s), [
        T.distributions.transforms.AffineTransform(a, 2.0)]),
        (LOC, SCALE, R.standard_normal((2, 3))), [R.standard_normal((2, 3))]),
    "outside-support": (_log_normal_affine, (LOC, SCALE, np.array(1.0), np.array(2.0)),
                        [np.array([0.5, 2.0, -4.0])]),
    "outside-support-unvalidated": (lambda T, m, s: _td(
        T, T.distributions.Normal(m, s), [T.distributions.transforms.ExpTransform()],
        validate_args=False), (LOC, SCALE), [np.array([0.5, 2.0, -4.0])]),
    "bad-transforms": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), (
        T.distributions.transforms.ExpTransform(),)), (LOC, SCALE), []),
    "bad-transform-list": (lambda T, m, s: _td(T, T.distributions.Normal(m, s), [3]),
                           (LOC, SCALE), []),
    "base-too-small": (lambda T: _td(T, T.distributions.Normal(0.0, 1.0), [
        T.distributions.transforms.StickBreakingTransform()]), (), []),
}


@pytest.mark.parametrize("name", sorted(TD_CASES))
def test_transformed_distribution_against_torch(name):
    make, params, values = TD_CASES[name]
    f32 = "f32" in name
    check(make, params, values, rtol=3e-5 if f32 else 1e-7, atol=1e-6 if f32 else 1e-10,
          name=name)


def test_transformed_distribution_attributes():
    tr, D = wgrad.distributions.transforms, wgrad.distributions
    base = D.Normal(wgrad.zeros(2, 3), wgrad.ones(2, 3))
    d = D.TransformedDistribution(base, [tr.ReshapeTransform((2, 3), (6,))])
    assert type(d.base_dist).__name__ == "Independent" and d.base_dist.base_dist is base
    assert tuple(d.batch_shape) == () and tuple(d.event_shape) == (6,)
    assert repr(d.support) == "IndependentConstraint(Real(), 1)"
    assert repr(D.TransformedDistribution.support) == repr(
        torch.distributions.TransformedDistribution.support)
    e = d.expand((4,))
    assert tuple(e.base_dist.batch_shape) == (4,) and e.transforms is d.transforms
    # a broadcasting transform expands the base distribution
    d2 = D.TransformedDistribution(D.Normal(0.0, 1.0), [tr.AffineTransform(wgrad.zeros(3),
                                                                           1.0)])
    assert tuple(d2.base_dist.batch_shape) == (3,) and tuple(d2.batch_shape) == (3,)
    assert D.TransformedDistribution(D.Normal(0.0, 1.0), []).support is D.constraints.real
    assert not D.TransformedDistribution(D.Normal(0.0, 1.0), [], validate_args=False
                                         )._validate_args


def test_subclass_expand():
    """A subclass with its own __init__ must define expand (torch's message); one that
    does reaches TransformedDistribution.expand through _instance."""
    def classes(T):
        D = T.distributions

        class LogN(D.TransformedDistribution):
            def __init__(self, loc, scale):
                super().__init__(D.Normal(loc, scale), D.transforms.ExpTransform())

        class LogN2(LogN):
            def expand(self, batch_shape, _instance=None):
                new = self._get_checked_instance(LogN2, _instance)
                return super().expand(batch_shape, _instance=new)
        return LogN, LogN2

    (aw, bw), (at, bt) = classes(wgrad), classes(torch)
    w = _call(lambda: aw(wgrad.zeros(2), 1.0).expand((3, 2)))
    t = _call(lambda: at(torch.zeros(2), 1.0).expand((3, 2)))
    assert w == t and w[0] == "NotImplementedError"
    e = bw(wgrad.zeros(2), 1.0).expand((3, 2))
    assert type(e) is bw and tuple(e.batch_shape) == (3, 2)
    np.testing.assert_allclose(_np(e.log_prob(wgrad.ones(3, 2))),
                               _np(bt(torch.zeros(2), 1.0).expand((3, 2)).log_prob(
                                   torch.ones(3, 2))), rtol=1e-6)


def test_sampling():
    wgrad.manual_seed(0)
    tr, D = wgrad.distributions.transforms, wgrad.distributions
    mu, sigma = 0.5, 0.3
    loc = wgrad.tensor(mu, dtype=wgrad.float64, requires_grad=True)
    d = D.TransformedDistribution(D.Normal(loc, sigma), [tr.ExpTransform(),
                                                         tr.AffineTransform(1.0, 2.0)])
    s = d.sample((4000,))
    assert not s.requires_grad and s.dtype == wgrad.float64
    mean = 1.0 + 2.0 * np.exp(mu + sigma ** 2 / 2)
    var = 4.0 * (np.exp(sigma ** 2) - 1) * np.exp(2 * mu + sigma ** 2)
    assert abs(s.mean().item() - mean) < 0.05 and abs(s.var().item() - var) / var < 0.1
    assert float(s.min()) > 1.0
    r = d.rsample((500,))
    (g,) = wgrad.autograd.grad(r.sum(), [loc])
    # y = 1 + 2 exp(loc + sigma eps): dy/dloc = y - 1
    np.testing.assert_allclose(g.item(), (r.detach() - 1.0).sum().item(), rtol=1e-10)
    # cdf and icdf invert each other, and the sample CDF matches cdf
    q = wgrad.tensor([0.1, 0.5, 0.9], dtype=wgrad.float64)
    np.testing.assert_allclose(_np(d.cdf(d.icdf(q))), _np(q), rtol=1e-9)
    emp = [(s <= v).double().mean().item() for v in d.icdf(q).detach()]
    np.testing.assert_allclose(emp, [0.1, 0.5, 0.9], atol=0.03)
    # a decreasing transform: the cdf flips
    neg = D.TransformedDistribution(D.Normal(0.0, 1.0), [tr.AffineTransform(0.0, -1.0)])
    x = neg.sample((4000,))
    assert abs((x <= 1.0).float().mean().item() - neg.cdf(wgrad.tensor(1.0)).item()) < 0.03


def test_copy_drops_the_inverse():
    for T in (wgrad, torch):
        tr = T.distributions.transforms
        e = copy.deepcopy(tr.ExpTransform())
        assert e.inv.inv is e
        err = _call(lambda: copy.deepcopy(tr.ExpTransform().inv).domain)
        assert err == ("AssertionError", "_inv must not be None")
