"""One distribution made in wgrad and in torch from the same numbers, compared method by
method (the tables of tests/distributions).

A case is ``make(T, *params)``: it builds the distribution with the module ``T`` (wgrad
or torch) from ``params``, tensors of ``T`` made from the case's numpy arrays (float
ones require grad). The comparison covers the shapes, ``repr``, ``support``, every
statistic and method (values, or the error raised), the gradients of each differentiable
result with respect to the parameters, ``expand``, and the shape, dtype, support and (for
``rsample``) differentiability of samples.
"""
import warnings

import numpy as np
import torch

import wgrad

STATS = ("mean", "mode", "variance", "stddev")
METHODS = ("log_prob", "cdf", "icdf")


def _tensors(T, arrays):
    out = []
    for a in arrays:
        t = T.tensor(a)
        if t.is_floating_point():
            t.requires_grad_()
        out.append(t)
    return out


def _call(fn):
    """``fn()``'s result, or ``(exception type name, message)`` with torch's module paths
    written as wgrad's."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn()
    except Exception as e:  # noqa: BLE001  (the exception is the value compared)
        return (type(e).__name__, str(e).replace("torch.", "wgrad."))


def _np(x):
    return (x.detach().numpy() if isinstance(x, torch.Tensor)
            else np.asarray(x.detach()._data))


def _agree(what, w, t, rtol, atol):
    if isinstance(t, tuple) or isinstance(w, tuple):
        assert isinstance(w, tuple) and isinstance(t, tuple) and w == t, \
            f"{what}: wgrad {w!r} vs torch {t!r}"
        return False
    wn, tn = _np(w), _np(t)
    assert wn.shape == tn.shape, f"{what}: shape {wn.shape} vs {tn.shape}"
    assert str(w.dtype).split(".")[-1] == str(t.dtype).split(".")[-1], what
    np.testing.assert_allclose(wn, tn, rtol=rtol, atol=atol, equal_nan=True, err_msg=what)
    return True


def _grads_agree(what, w, t, wp, tp, rtol, atol):
    """The gradients of ``sum(result * weights)`` with respect to the parameters."""
    if not (t.requires_grad and t.is_floating_point()):
        assert not (w.requires_grad and w.is_floating_point()) or not any(
            p.requires_grad for p in tp), f"{what}: wgrad differentiable, torch not"
        return
    assert w.requires_grad, f"{what}: torch's result is differentiable, wgrad's not"
    weights = np.linspace(0.5, 1.5, t.numel()).reshape(tuple(t.shape))
    ins_t = [p for p in tp if p.requires_grad]
    ins_w = [p for p, q in zip(wp, tp) if q.requires_grad]
    # retain_graph: the parameters' shared graph (a covariance's Cholesky) serves every
    # statistic; where torch has no derivative (igamma's first argument), wgrad raises its
    # error
    gt = _call(lambda: torch.autograd.grad(
        (t * torch.tensor(weights, dtype=t.dtype)).sum(), ins_t, allow_unused=True,
        retain_graph=True))
    gw = _call(lambda: wgrad.autograd.grad(
        (w * wgrad.tensor(weights, dtype=w.dtype)).sum(), ins_w, allow_unused=True,
        retain_graph=True))
    if isinstance(gt[0], str) or isinstance(gw[0], str):  # an error: (type name, message)
        assert gw == gt, f"{what}: gradient: wgrad {gw!r} vs torch {gt!r}"
        return
    for i, (a, b) in enumerate(zip(gw, gt)):
        assert (a is None) == (b is None), f"{what}: gradient {i} present in one only"
        if b is not None:
            np.testing.assert_allclose(_np(a), _np(b), rtol=rtol, atol=atol, equal_nan=True,
                                       err_msg=f"{what}: gradient of parameter {i}")


# cases that repeat another in float32, with Python numbers or without validation: their
# values and errors are compared, their gradients, expand and samples are the main case's
LEAN = ("-f32", "-numbers", "-novalidate", "-noval")


def check(make, params, values=(), rtol=1e-6, atol=1e-8, grad=True, sample=True,
          expand=True, name=""):
    """Compare ``make(T, *params)`` in wgrad and torch; ``values`` are arrays given to
    log_prob/cdf (and icdf); a case ``name`` ending in one of ``LEAN`` compares values
    only."""
    if name.endswith(LEAN):
        grad = sample = expand = False
    tp, wp = _tensors(torch, params), _tensors(wgrad, params)
    dt, dw = _call(lambda: make(torch, *tp)), _call(lambda: make(wgrad, *wp))
    if isinstance(dt, tuple) or isinstance(dw, tuple):
        assert dw == dt, f"construction: wgrad {dw!r} vs torch {dt!r}"
        return
    assert tuple(dw.batch_shape) == tuple(dt.batch_shape)
    assert tuple(dw.event_shape) == tuple(dt.event_shape)
    assert repr(dw) == repr(dt).replace("torch.", "wgrad.")
    assert repr(dw.support) == repr(dt.support).replace("torch.", "wgrad.")
    assert dw.has_rsample == dt.has_rsample
    assert dw.has_enumerate_support == dt.has_enumerate_support

    def both(what, fw, ft):
        w, t = _call(fw), _call(ft)
        if _agree(what, w, t, rtol, atol) and grad:
            _grads_agree(what, w, t, wp, tp, rtol, atol)

    for name in STATS:
        both(name, lambda: getattr(dw, name), lambda: getattr(dt, name))
    both("entropy", dw.entropy, dt.entropy)
    both("perplexity", dw.perplexity, dt.perplexity)
    if dt.has_enumerate_support:
        for ex in (True, False):
            both(f"enumerate_support({ex})", lambda: dw.enumerate_support(ex),
                 lambda: dt.enumerate_support(ex))
    for v in values:
        for name in METHODS:
            both(f"{name}({v!r})", lambda: getattr(dw, name)(wgrad.tensor(v)),
                 lambda: getattr(dt, name)(torch.tensor(v)))
    if expand:
        shape = (2,) + tuple(dt.batch_shape)
        ew, et = dw.expand(shape), dt.expand(shape)
        assert type(ew) is type(dw) and tuple(ew.batch_shape) == shape
        for v in values[:1]:
            both("expand log_prob", lambda: ew.log_prob(wgrad.tensor(v)),
                 lambda: et.log_prob(torch.tensor(v)))
        both("expand mean", lambda: ew.mean, lambda: et.mean)
    if sample:
        _check_samples(dw, dt)


def _check_samples(dw, dt):
    for how in ("sample", "rsample"):
        st = _call(lambda: getattr(dt, how)((3,)))
        sw = _call(lambda: getattr(dw, how)((3,)))
        if isinstance(st, tuple):
            assert isinstance(sw, tuple) and sw[0] == st[0], f"{how}: {sw!r} vs {st!r}"
            continue
        assert not isinstance(sw, tuple), f"{how} raised {sw!r}"
        assert tuple(sw.shape) == tuple(st.shape), how
        assert str(sw.dtype).split(".")[-1] == str(st.dtype).split(".")[-1], how
        assert sw.requires_grad == st.requires_grad, how
        assert bool(dw.support.check(sw.detach()).all()), f"{how}: outside the support"
