"""optim.swa_utils against torch.optim.swa_utils: the averages AveragedModel keeps (SWA,
EMA by avg_fn and by multi_avg_fn, with buffers), SWALR's learning rates, update_bn's
statistics, and torch's errors."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(11)
DRAWS = [[_rng.standard_normal(s) for s in ((3, 4), (3,), (3,), (3,))] for _ in range(4)]


def _model(L):
    return L.nn.Sequential(L.nn.Linear(4, 3), L.nn.BatchNorm1d(3))


def _set(L, model, draw):
    with L.no_grad():
        w, b, g, rm = draw
        model[0].weight.copy_(L.tensor(w, dtype=L.float32))
        model[0].bias.copy_(L.tensor(b, dtype=L.float32))
        model[1].weight.copy_(L.tensor(g, dtype=L.float32))
        model[1].running_mean.copy_(L.tensor(rm, dtype=L.float32))


KINDS = [
    lambda S: {},
    lambda S: {"multi_avg_fn": S.get_ema_multi_avg_fn(0.9)},
    lambda S: {"avg_fn": S.get_ema_avg_fn(0.8)},
    lambda S: {"avg_fn": S.get_swa_avg_fn(), "use_buffers": True},
    lambda S: {"multi_avg_fn": S.get_swa_multi_avg_fn(), "use_buffers": True},
]


@pytest.mark.parametrize("k", range(len(KINDS)))
def test_averaged_model_as_torch(k):
    out = []
    for L in (wgrad, torch):
        S = L.optim.swa_utils
        model = _model(L)
        avg = S.AveragedModel(model, **KINDS[k](S))
        try:
            for draw in DRAWS:
                _set(L, model, draw)
                avg.update_parameters(model)
        except RuntimeError as e:  # the SWA list update of an integer buffer: torch's error
            out.append(str(e))
            continue
        out.append([t.detach().numpy().copy() for t in avg.state_dict().values()])
        assert int(avg.n_averaged) == len(DRAWS)
        y = avg(L.ones(2, 4))
        assert tuple(y.shape) == (2, 3)
    if isinstance(out[1], str):
        assert out[0] == out[1]
        return
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("kw", [{}, {"anneal_strategy": "linear", "anneal_epochs": 3},
                                {"anneal_epochs": 0}, {"swa_lr": [0.05, 0.2]}])
def test_swalr_as_torch(kw):
    kw = {"swa_lr": 0.05, **kw}
    lrs = []
    for L in (wgrad, torch):
        params = [L.zeros(1, requires_grad=True), L.zeros(1, requires_grad=True)]
        opt = L.optim.SGD([{"params": params[:1]}, {"params": params[1:], "lr": 0.3}],
                          lr=1.0)
        sched = L.optim.swa_utils.SWALR(opt, **kw)
        seen = []
        for _ in range(14):
            opt.step()
            sched.step()
            seen.append(sched.get_last_lr())
        lrs.append(seen)
        sched.load_state_dict(sched.state_dict())
    np.testing.assert_allclose(lrs[0], lrs[1], rtol=1e-12)


def test_update_bn_as_torch():
    out = []
    data = [_rng.standard_normal((5, 4)).astype(np.float32) for _ in range(3)]
    for L in (wgrad, torch):
        model = _model(L)
        _set(L, model, DRAWS[0])
        model.eval()
        L.optim.swa_utils.update_bn([(L.tensor(x), 0) for x in data], model)
        assert not model.training  # its mode is restored
        out.append([model[1].running_mean.numpy().copy(), model[1].running_var.numpy().copy(),
                    int(model[1].num_batches_tracked), model[1].momentum])
    for a, b in zip(*out):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("call", [
    lambda S, L: S.get_ema_avg_fn(1.5),
    lambda S, L: S.get_ema_multi_avg_fn(-0.1),
    lambda S, L: S.SWALR(L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.), 0.1,
                         anneal_strategy="step"),
    lambda S, L: S.SWALR(L.optim.SGD([L.zeros(1, requires_grad=True)], lr=1.), 0.1,
                         anneal_epochs=-1),
    lambda S, L: S.AveragedModel(L.nn.Linear(1, 1), avg_fn=S.get_swa_avg_fn(),
                                 multi_avg_fn=S.get_swa_multi_avg_fn()),
])
def test_errors_as_torch(call):
    errors = []
    for L in (wgrad, torch):
        with pytest.raises(Exception) as e:
            call(L.optim.swa_utils, L)
        errors.append((type(e.value), str(e.value)))
    assert errors[0] == errors[1]
