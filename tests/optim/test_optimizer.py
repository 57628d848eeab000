"""The Optimizer contract against torch.optim.Optimizer: param groups, errors, state_dict,
zero_grad, hooks, closures, and the in-place write-back."""
import warnings

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

LIBS = pytest.mark.parametrize("lib", [wgrad, torch], ids=["wgrad", "torch"])


def _params(lib, dtype="float32"):
    rng = np.random.default_rng(0)
    return [lib.tensor(rng.standard_normal(s).astype(dtype), requires_grad=True)
            for s in ((3, 2), (2,))]


def _loss(ps):
    return (ps[0].sum(1) ** 2).sum() + (ps[1] ** 3).sum()


def _errors(lib):
    out = []
    p = lib.zeros(2, requires_grad=True)
    cases = [lambda: lib.optim.SGD([], lr=0.1),
             lambda: lib.optim.SGD(p, lr=0.1),
             lambda: lib.optim.SGD([p * 2], lr=0.1),
             lambda: lib.optim.SGD([p, 1.0], lr=0.1),
             lambda: lib.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1),
             lambda: lib.optim.SGD([{"params": {p}}], lr=0.1),
             lambda: lib.optim.SGD([p], lr=-1.0),
             lambda: lib.optim.SGD([p], lr=0.1, nesterov=True),
             lambda: lib.optim.Adam([p], betas=(1.0, 0.9)),
             lambda: lib.optim.Adam([p], eps=-1.0),
             lambda: lib.optim.Rprop([p], etas=(1.5, 1.2)),
             lambda: lib.optim.SGD([p], lr=0.1, fused=True, foreach=True),
             lambda: lib.optim.SGD([("a", p), lib.zeros(1, requires_grad=True)], lr=0.1)]
    for c in cases:
        with pytest.raises(Exception) as e:
            c()
        out.append((type(e.value), str(e.value)))
    return out


def test_errors_match_torch():
    ours, ref = _errors(wgrad), _errors(torch)
    for (ta, ma), (tb, mb) in zip(ours, ref):
        assert ta is tb, (ma, mb)
        assert ma == mb.replace("torch.", "torch.")


def test_non_tensor_param_message():
    p = wgrad.zeros(2, requires_grad=True)
    with pytest.raises(TypeError, match="optimizer can only optimize Tensors, but one of the "
                                        "params is float"):
        wgrad.optim.SGD([p, 1.0], lr=0.1)
    with pytest.raises(TypeError, match="but got torch.FloatTensor"):
        wgrad.optim.SGD(p, lr=0.1)


@LIBS
def test_duplicate_parameter_warns(lib):
    p = lib.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="optimizer contains a parameter group with duplicate"):
        lib.optim.SGD([p, p], lr=0.1)


def _layout(lib):
    a, b = _params(lib)
    c = lib.zeros(4, requires_grad=True)
    opt = lib.optim.Adam([{"params": [a, b]}, {"params": [c], "lr": 0.5, "amsgrad": True}],
                         lr=0.01)
    opt.add_param_group({"params": lib.zeros(1, requires_grad=True), "weight_decay": 0.1})
    for p in (a, b, c):
        p.grad = lib.ones_like(p)
    opt.step()
    sd = opt.state_dict()
    return ([{k: v for k, v in g.items()} for g in sd["param_groups"]],
            {i: {k: (str(v.dtype).split(".")[-1], tuple(v.shape)) for k, v in s.items()}
             for i, s in sd["state"].items()})


def test_state_dict_layout_matches_torch():
    assert _layout(wgrad) == _layout(torch)


@pytest.mark.parametrize("name,opts", [("SGD", dict(lr=0.05, momentum=0.9)),
                                       ("Adam", dict(lr=0.05, amsgrad=True)),
                                       ("NAdam", dict(lr=0.05)), ("ASGD", dict(lr=0.05, t0=2)),
                                       ("Rprop", dict(lr=0.01)), ("Adagrad", dict(lr=0.1))])
@pytest.mark.parametrize("dtype", ["float32", "complex64"])
def test_state_dict_round_trip_mid_training(name, opts, dtype):
    """Stop after 5 steps, load the state into a fresh optimizer (over fresh copies of the
    parameters), go on: the same trajectory as torch's uninterrupted run."""
    def run(lib, split):
        ps = _params(lib, dtype)
        opt = getattr(lib.optim, name)(ps, **opts)
        for i in range(12):
            if i == 5 and split:
                sd = opt.state_dict()
                ps = [lib.tensor(p.detach().numpy(), requires_grad=True) for p in ps]
                opt = getattr(lib.optim, name)(ps, **opts)
                opt.load_state_dict(sd)
            opt.zero_grad()
            (_loss(ps).abs() if dtype == "complex64" else _loss(ps)).backward()
            opt.step()
        return [p.detach().numpy() for p in ps]
    for a, b in zip(run(wgrad, True), run(torch, False)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@LIBS
def test_load_state_dict_casts_state_but_not_step(lib):
    p = lib.zeros(3, dtype=lib.float64, requires_grad=True)
    opt = lib.optim.Adam([p])
    q = lib.zeros(3, requires_grad=True)
    src = lib.optim.Adam([q])
    q.grad = lib.ones(3)
    src.step()
    opt.load_state_dict(src.state_dict())
    s = opt.state[p]
    assert s["exp_avg"].dtype == lib.float64
    assert s["step"].dtype == lib.float32
    with pytest.raises(ValueError, match="loaded state dict has a different number of "
                                         "parameter groups"):
        opt.load_state_dict({"state": {}, "param_groups": []})
    with pytest.raises(ValueError, match="loaded state dict contains a parameter group that "
                                         "doesn't match the size of optimizer's group"):
        opt.load_state_dict({"state": {}, "param_groups": [{"params": [0, 1]}]})


@LIBS
def test_zero_grad(lib):
    p = lib.zeros(2, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.1)
    (p * 2).sum().backward()
    g = p.grad
    opt.zero_grad(set_to_none=False)
    assert p.grad is g and p.grad.tolist() == [0.0, 0.0]
    opt.zero_grad()
    assert p.grad is None


@LIBS
def test_step_hooks_and_closure(lib):
    p = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([p], lr=0.1)
    calls = []
    h1 = opt.register_step_pre_hook(lambda o, a, k: calls.append(("pre", o is opt)))
    opt.register_step_post_hook(lambda o, a, k: calls.append(("post", len(a))))

    def closure():
        opt.zero_grad()
        loss = (p * p).sum()
        loss.backward()
        return loss
    loss = opt.step(closure)
    assert float(loss.detach()) == 2.0
    assert calls == [("pre", True), ("post", 2)]
    h1.remove()
    opt.step(closure)
    assert calls[-1] == ("post", 2) and len(calls) == 3


def test_update_is_in_place_under_no_grad():
    p = wgrad.ones(3, requires_grad=True)
    view = p.detach()[1:]
    opt = wgrad.optim.Adam([p], lr=0.5)
    (p * p).sum().backward()
    v0, obj = p._version, p
    opt.step()
    assert p is obj and p._version == v0 + 1 and p.is_leaf and p.requires_grad
    assert p.grad_fn is None
    np.testing.assert_allclose(view.numpy(), p.detach().numpy()[1:])


@LIBS
def test_params_without_grad_are_skipped(lib):
    a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    opt = lib.optim.Adam([a, b], lr=0.5)
    (a * a).sum().backward()
    opt.step()
    assert b.tolist() == [1.0, 1.0] and len(opt.state[b]) == 0
    assert len(opt.state[a]) == 3


def test_differentiable_raises_clearly():
    p = wgrad.ones(2, requires_grad=True)
    opt = wgrad.optim.Adam([p], differentiable=True)
    p.grad = wgrad.ones(2)
    with pytest.raises(RuntimeError, match="differentiable=True is not supported"):
        opt.step()


def test_options_are_accepted():
    p = wgrad.ones(2, requires_grad=True)
    for cls, kw in [("SGD", dict(foreach=True)), ("Adam", dict(fused=True, capturable=True)),
                    ("AdamW", dict(foreach=False)), ("RMSprop", dict(capturable=True)),
                    ("Adagrad", dict(fused=True))]:
        opt = getattr(wgrad.optim, cls)([p], **kw)
        p.grad = wgrad.ones(2)
        opt.step()


def test_one_compile_for_changing_lr():
    """A new learning rate per step (a scheduler) does not retrace the update."""
    from wgrad.optim import _functional as F
    p = wgrad.ones(5, requires_grad=True)
    opt = wgrad.optim.Adam([p], lr=0.1)
    sched = wgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9)
    traces = []
    real = F.RULES["adam"]
    F.RULES["adam"] = lambda *a: (traces.append(1), real(*a))[1]
    F._compiled.cache_clear()
    try:
        for _ in range(5):
            p.grad = wgrad.ones(5)
            opt.step()
            sched.step()
    finally:
        F.RULES["adam"] = real
        F._compiled.cache_clear()
    assert len(traces) <= 2  # one trace (and one more if the donation choice changed)


def test_named_parameters():
    for lib in (wgrad, torch):
        a = lib.zeros(2, requires_grad=True)
        opt = lib.optim.SGD([("a", a)], lr=0.1)
        assert opt.state_dict()["param_groups"][0]["param_names"] == ["a"]


def test_global_hooks():
    p = wgrad.ones(2, requires_grad=True)
    opt = wgrad.optim.SGD([p], lr=0.1)
    seen = []
    h = wgrad.optim.register_optimizer_step_pre_hook(lambda o, a, k: seen.append(o))
    try:
        p.grad = wgrad.ones(2)
        opt.step()
    finally:
        h.remove()
    opt.step()
    assert seen == [opt]


def test_no_warnings_in_a_plain_loop():
    p = wgrad.ones(2, requires_grad=True)
    opt = wgrad.optim.Adam([p], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for _ in range(3):
            opt.zero_grad()
            (p * p).sum().backward()
            opt.step()
