"""Learning-rate schedulers against torch.optim.lr_scheduler: lr sequences, state_dict,
warnings."""
import math
import warnings

import pytest

import wgrad

torch = pytest.importorskip("torch")

STEPS = 30


def _close(a, b, rel=1e-12, abs_=1e-15):
    """Nested lists of numbers (or None) equal to a relative tolerance."""
    if isinstance(a, (list, tuple)):
        assert isinstance(b, (list, tuple)) and len(a) == len(b), (a, b)
        for x, y in zip(a, b):
            _close(x, y, rel, abs_)
    elif a is None or b is None:
        assert a is b
    else:
        assert math.isclose(float(a), float(b), rel_tol=rel, abs_tol=abs_), (a, b)

# (scheduler, kwargs as a function of the library's lr_scheduler module, optimizer)
TABLE = [
    ("LambdaLR", lambda m: dict(lr_lambda=lambda e: 0.95 ** e)),
    ("LambdaLR", lambda m: dict(lr_lambda=[lambda e: 1 / (e + 1), lambda e: 0.9 ** e])),
    ("MultiplicativeLR", lambda m: dict(lr_lambda=lambda e: 0.9)),
    ("StepLR", lambda m: dict(step_size=7, gamma=0.5)),
    ("MultiStepLR", lambda m: dict(milestones=[3, 10, 10, 20], gamma=0.3)),
    ("ConstantLR", lambda m: dict(factor=0.25, total_iters=6)),
    ("LinearLR", lambda m: dict(start_factor=0.1, end_factor=0.9, total_iters=12)),
    ("ExponentialLR", lambda m: dict(gamma=0.9)),
    ("PolynomialLR", lambda m: dict(total_iters=20, power=2.0)),
    ("CosineAnnealingLR", lambda m: dict(T_max=8, eta_min=0.001)),
    ("CosineAnnealingWarmRestarts", lambda m: dict(T_0=5, T_mult=2, eta_min=0.01)),
    ("CyclicLR", lambda m: dict(base_lr=0.01, max_lr=0.1, step_size_up=4)),
    ("CyclicLR", lambda m: dict(base_lr=[0.01, 0.02], max_lr=0.1, step_size_up=3,
                                step_size_down=5, mode="triangular2")),
    ("CyclicLR", lambda m: dict(base_lr=0.01, max_lr=0.1, step_size_up=3, mode="exp_range",
                                gamma=0.9)),
    ("OneCycleLR", lambda m: dict(max_lr=0.5, total_steps=STEPS)),
    ("OneCycleLR", lambda m: dict(max_lr=[0.5, 0.2], epochs=3, steps_per_epoch=10,
                                  anneal_strategy="linear", three_phase=True)),
]


def _optimizer(lib, kind="sgd"):
    a = lib.zeros(2, requires_grad=True)
    b = lib.zeros(3, requires_grad=True)
    groups = [{"params": [a]}, {"params": [b], "lr": 0.05}]
    if kind == "adam":
        return lib.optim.Adam(groups, lr=0.1)
    return lib.optim.SGD(groups, lr=0.1, momentum=0.9)


def _sequence(lib, name, kwargs, kind="sgd", steps=STEPS):
    opt = _optimizer(lib, kind)
    m = lib.optim.lr_scheduler
    sched = getattr(m, name)(opt, **kwargs(m))
    out = [list(sched.get_last_lr())]
    moms = []
    for _ in range(steps):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
        moms.append([g.get("momentum", g.get("betas", (None,))[0]) for g in opt.param_groups])
    return out, moms, [g["lr"] for g in opt.param_groups]


@pytest.mark.parametrize("name,kwargs", TABLE, ids=[f"{n}-{i}" for i, (n, _) in
                                                    enumerate(TABLE)])
def test_lr_sequence_matches_torch(name, kwargs):
    ours, om, olr = _sequence(wgrad, name, kwargs)
    ref, rm, rlr = _sequence(torch, name, kwargs)
    _close(ours, ref)
    _close(om, rm)
    _close(olr, rlr)


@pytest.mark.parametrize("name,kwargs", [TABLE[11], TABLE[14]], ids=["CyclicLR", "OneCycleLR"])
def test_beta1_cycling_matches_torch(name, kwargs):
    ours, om, _ = _sequence(wgrad, name, kwargs, "adam")
    ref, rm, _ = _sequence(torch, name, kwargs, "adam")
    _close(ours, ref)
    _close(om, rm)


def _composite(lib, kind):
    opt = _optimizer(lib)
    m = lib.optim.lr_scheduler
    if kind == "sequential":
        s1 = m.LinearLR(opt, start_factor=0.1, total_iters=5)
        s2 = m.ExponentialLR(opt, gamma=0.9)
        s3 = m.CosineAnnealingLR(opt, T_max=6)
        sched = m.SequentialLR(opt, [s1, s2, s3], milestones=[5, 15])
    else:
        sched = m.ChainedScheduler([m.ConstantLR(opt, factor=0.5, total_iters=4),
                                    m.ExponentialLR(opt, gamma=0.9),
                                    m.StepLR(opt, step_size=6, gamma=0.5)])
    out = [list(sched.get_last_lr())]
    for _ in range(STEPS):
        opt.step()
        sched.step()
        out.append(list(sched.get_last_lr()))
    return out, sched


@pytest.mark.parametrize("kind", ["sequential", "chained"])
def test_composite_schedulers_match_torch(kind):
    ours, s = _composite(wgrad, kind)
    ref, ts = _composite(torch, kind)
    _close(ours, ref)
    assert sorted(s.state_dict()) == sorted(ts.state_dict())


def _plateau(lib, **kw):
    opt = _optimizer(lib)
    sched = lib.optim.lr_scheduler.ReduceLROnPlateau(opt, **kw)
    metrics = [10, 9, 9, 9, 9, 8.9999, 9, 9, 7, 7, 7, 7, 7, 7, 6, 6, 6, 6, 6, 6, 6, 6, 6]
    out = []
    for v in metrics:
        opt.step()
        sched.step(v)
        out.append(list(sched.get_last_lr()))
    return out


@pytest.mark.parametrize("kw", [dict(patience=2), dict(mode="max", factor=0.5, patience=1),
                                dict(patience=1, threshold=0.5, threshold_mode="abs",
                                     cooldown=2, min_lr=[0.01, 0.02])])
def test_reduce_on_plateau_matches_torch(kw):
    _close(_plateau(wgrad, **kw), _plateau(torch, **kw))


def test_closed_form_with_epoch_and_its_warning():
    for lib in (wgrad, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        opt.step()
        with pytest.warns(UserWarning, match="The epoch parameter in `scheduler.step"):
            sched.step(7)
        assert sched.get_last_lr() == pytest.approx([0.1 * 0.25, 0.05 * 0.25])


def test_order_warning_text_matches_torch():
    texts = []
    for lib in (wgrad, torch):
        opt = _optimizer(lib)
        sched = lib.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            sched.step()
        texts.append([str(x.message) for x in w if x.category is UserWarning])
    assert texts[0] == texts[1] and texts[0]
    opt = _optimizer(wgrad)
    sched = wgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sched.step()


def test_state_dict_round_trip_mid_schedule():
    opt = _optimizer(wgrad)
    m = wgrad.optim.lr_scheduler
    sched = m.CosineAnnealingWarmRestarts(opt, T_0=4, T_mult=2)
    for _ in range(7):
        opt.step()
        sched.step()
    sd = sched.state_dict()
    opt2 = _optimizer(wgrad)
    opt2.load_state_dict(opt.state_dict())
    sched2 = m.CosineAnnealingWarmRestarts(opt2, T_0=4, T_mult=2)
    sched2.load_state_dict(sd)
    for _ in range(5):
        for o, s in ((opt, sched), (opt2, sched2)):
            o.step()
            s.step()
        assert sched.get_last_lr() == sched2.get_last_lr()
    topt = _optimizer(torch)
    tsched = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(topt, T_0=4, T_mult=2)
    assert sorted(tsched.state_dict()) == sorted(sd)


def test_errors_match_torch():
    for lib in (wgrad, torch):
        opt = _optimizer(lib)
        m = lib.optim.lr_scheduler
        with pytest.raises(KeyError, match="param 'initial_lr' is not specified"):
            m.StepLR(opt, step_size=2, last_epoch=3)
        with pytest.raises(TypeError, match="is not an Optimizer"):
            m.StepLR(object(), step_size=2)
        with pytest.raises(ValueError, match="Factor should be < 1.0."):
            m.ReduceLROnPlateau(opt, factor=2.0)
        with pytest.raises(ValueError, match="Tried to step 3 times"):
            s = m.OneCycleLR(opt, max_lr=0.1, total_steps=2)
            for _ in range(3):
                opt.step()
                s.step()


def test_verbose_is_deprecated():
    opt = _optimizer(wgrad)
    with pytest.warns(UserWarning, match="The verbose parameter is deprecated"):
        wgrad.optim.lr_scheduler.StepLR(opt, 2, 0.5, -1, True)


def test_tensor_lr_is_filled_in_place():
    lr = wgrad.tensor(0.1)
    w = wgrad.zeros(2, requires_grad=True)
    opt = wgrad.optim.Adam([w], lr=lr)
    sched = wgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.5)
    opt.step()
    sched.step()
    assert opt.param_groups[0]["lr"] is lr
    assert math.isclose(float(lr), 0.05, rel_tol=1e-6)
