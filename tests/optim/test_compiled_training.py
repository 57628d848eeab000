"""A whole training step under wgrad.compile: zero_grad, forward, backward, optimizer step;
the optimizer's state is state of the compiled computation."""
import numpy as np
import pytest

import wgrad


def _problem():
    rng = np.random.default_rng(0)
    A = (rng.standard_normal((12, 6)) + 1j * rng.standard_normal((12, 6))).astype(np.complex64)
    y = (rng.standard_normal(12) + 1j * rng.standard_normal(12)).astype(np.complex64)
    return wgrad.tensor(A), wgrad.tensor(y)


def _setup(name, opts, lr_tensor=False, sched=False):
    x = wgrad.zeros(6, dtype=wgrad.complex64, requires_grad=True)
    lr = opts.pop("lr")
    opt = getattr(wgrad.optim, name)([x], lr=wgrad.tensor(lr) if lr_tensor else lr, **opts)
    s = wgrad.optim.lr_scheduler.ExponentialLR(opt, gamma=0.9) if sched else None
    return x, opt, s


@pytest.mark.parametrize("name,opts,lr_tensor", [
    ("Adam", dict(lr=0.05, amsgrad=True), True),
    ("Adam", dict(lr=0.05), False),
    ("SGD", dict(lr=0.01, momentum=0.9), False),
    ("RMSprop", dict(lr=0.01, centered=True), True),
    ("Rprop", dict(lr=0.01), False),
    ("ASGD", dict(lr=0.01), False)])
def test_compiled_step_equals_eager(name, opts, lr_tensor):
    """With a scheduler stepping between calls: a float lr is an input of the compiled
    computation (NOTE [Learning rates]), a tensor lr a captured tensor; no retrace."""
    A, y = _problem()
    runs = []
    for compiled in (False, True):
        x, opt, sched = _setup(name, dict(opts), lr_tensor=lr_tensor, sched=True)

        def step():
            opt.zero_grad()
            loss = ((A @ x - y).abs() ** 2).sum()
            loss.backward()
            opt.step()
            return loss
        if compiled:
            step = wgrad.compile(step)
        losses = []
        for _ in range(12):
            losses.append(float(step()))
            sched.step()
        runs.append((losses, x.detach().numpy(), opt.state[x]["step"].item()
                     if "step" in opt.state[x] else None))
    (l0, x0, s0), (l1, x1, s1) = runs
    np.testing.assert_allclose(l1, l0, rtol=1e-5)
    np.testing.assert_allclose(x1, x0, rtol=1e-5, atol=1e-6)
    assert s0 == s1
    assert len(step._cache) <= 2  # the first step's trace, and one once state exists


def test_changing_momentum_retraces():
    """A Python-number option other than lr is part of the trace's key."""
    A, y = _problem()
    x, opt, _ = _setup("SGD", dict(lr=0.01, momentum=0.9))

    @wgrad.compile
    def step():
        opt.zero_grad()
        loss = ((A @ x - y).abs() ** 2).sum()
        loss.backward()
        opt.step()
        return loss
    step()
    step()
    n = len(step._cache)
    opt.param_groups[0]["momentum"] = 0.5
    before = x.detach().numpy()
    buf = opt.state[x]["momentum_buffer"].detach().numpy()
    step()
    a, yv = A.numpy(), y.numpy()
    g = 2 * (a.conj().T @ (a @ before - yv))
    np.testing.assert_allclose(x.detach().numpy(), before - 0.01 * (0.5 * buf + g),
                               rtol=1e-4, atol=1e-5)
    assert len(step._cache) == n + 1
