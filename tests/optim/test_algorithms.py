"""Optimizer trajectories against torch.optim on real and complex least-squares problems."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

STEPS, EVERY = 30, 5

# (name, options); every row runs on real and complex parameters
ROWS = [
    ("SGD", dict(lr=0.01)),
    ("SGD", dict(lr=0.01, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("SGD", dict(lr=0.05, momentum=0.9, nesterov=True, maximize=True)),
    ("Adam", dict(lr=0.05)),
    ("Adam", dict(lr=0.05, amsgrad=True, weight_decay=0.1)),
    ("Adam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True, maximize=True)),
    ("AdamW", dict(lr=0.05, amsgrad=True)),
    ("Adamax", dict(lr=0.05, weight_decay=0.1)),
    ("NAdam", dict(lr=0.05)),
    ("NAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("RAdam", dict(lr=0.05)),
    ("RAdam", dict(lr=0.05, weight_decay=0.1, decoupled_weight_decay=True)),
    ("Adagrad", dict(lr=0.1, lr_decay=0.01, initial_accumulator_value=0.1)),
    ("Adadelta", dict(lr=1.0, weight_decay=0.01)),
    ("RMSprop", dict(lr=0.01)),
    ("RMSprop", dict(lr=0.01, centered=True, momentum=0.5, weight_decay=0.01)),
    ("Rprop", dict(lr=0.01)),
    ("Rprop", dict(lr=0.01, etas=(0.3, 1.5), step_sizes=(1e-4, 0.1), maximize=True)),
    ("ASGD", dict(lr=0.01, t0=5, lambd=1e-3, weight_decay=0.01)),
]
MAXIMIZE_SIGN = {True: -1.0, False: 1.0}


def _problem(dtype, seed=0):
    rng = np.random.default_rng(seed)
    cplx = np.dtype(dtype).kind == "c"

    def draw(*shape):
        a = rng.standard_normal(shape)
        if cplx:
            a = a + 1j * rng.standard_normal(shape)
        return a.astype(dtype)
    return draw(8, 4), draw(8, 3), [draw(4, 3), draw(3)]


def _loss(lib, X, Y, W, b, sign):
    r = X @ W + b - Y
    return sign * (r.abs() ** 2).sum()


def _run(lib, name, opts, X, Y, init):
    params = [lib.tensor(a, requires_grad=True) for a in init]
    X, Y = lib.tensor(X), lib.tensor(Y)
    opt = getattr(lib.optim, name)(params, **opts)
    sign = MAXIMIZE_SIGN[opts.get("maximize", False)]
    out = []
    for i in range(STEPS):
        opt.zero_grad()
        _loss(lib, X, Y, *params, sign).backward()
        opt.step()
        if (i + 1) % EVERY == 0:
            out.append([p.detach().numpy().copy() for p in params])
    return out, opt


# every row in single-precision real and double-precision complex; a few rows in the
# other two (each row and dtype compiles its own update, so the table stays lean)
CASES = ([(n, o, "float32", 1e-6) for n, o in ROWS] +
         [(n, o, "complex128", 1e-9) for n, o in ROWS] +
         [(n, o, dt, tol) for n, o in (ROWS[1], ROWS[4], ROWS[15], ROWS[16])
          for dt, tol in (("float64", 1e-9), ("complex64", 1e-6))])


@pytest.mark.parametrize("name,opts,dtype,tol", CASES,
                         ids=[f"{n}-{dt}-{i}" for i, (n, _, dt, _) in enumerate(CASES)])
def test_trajectory_matches_torch(name, opts, dtype, tol):
    X, Y, init = _problem(dtype)
    ours, opt = _run(wgrad, name, opts, X, Y, init)
    ref, topt = _run(torch, name, opts, X, Y, init)
    for k, (a, b) in enumerate(zip(ours, ref)):
        for pa, pb in zip(a, b):
            np.testing.assert_allclose(pa, pb, rtol=tol, atol=tol,
                                       err_msg=f"after {(k + 1) * EVERY} steps")
    # the state torch keeps, same names, dtypes and values
    for p, tp in zip(opt.param_groups[0]["params"], topt.param_groups[0]["params"]):
        s, ts = opt.state[p], topt.state[tp]
        assert sorted(s) == sorted(ts)
        for k in ts:
            assert str(s[k].dtype).split(".")[-1] == str(ts[k].dtype).split(".")[-1], k
            np.testing.assert_allclose(s[k].numpy(), ts[k].numpy(), rtol=1e-4, atol=tol)


@pytest.mark.parametrize("name", ["Adam", "SGD", "RMSprop"])
def test_param_groups_trajectory_matches_torch(name):
    """Two groups with their own options, a real and a complex parameter in each."""
    rng = np.random.default_rng(3)
    init = [rng.standard_normal(4), rng.standard_normal(3) + 1j * rng.standard_normal(3),
            rng.standard_normal(2), rng.standard_normal(5) + 1j * rng.standard_normal(5)]
    extra = {"Adam": dict(amsgrad=True), "SGD": dict(momentum=0.5),
             "RMSprop": dict(centered=True)}[name]

    def run(lib):
        ps = [lib.tensor(a, requires_grad=True) for a in init]
        opt = getattr(lib.optim, name)([{"params": ps[:2]},
                                        {"params": ps[2:], "lr": 0.02, **extra}], lr=0.05)
        for _ in range(15):
            opt.zero_grad()
            sum(((p - 1) * (p - 1).conj()).real.sum() * (i + 1)
                for i, p in enumerate(ps)).backward()
            opt.step()
        return [p.detach().numpy() for p in ps]
    for a, b in zip(run(wgrad), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name,n,shapes", [("Adam", 36, 1), ("SGD", 140, 2)])
def test_large_group_in_chunks_matches_torch(name, n, shapes):
    """A group larger than one program (NOTE [Chunked groups]): parameters of mixed kinds
    (real and complex, interleaved; SGD two shapes) are chunked by kind and still follow
    torch's trajectories, each parameter its own."""
    rng = np.random.default_rng(5)
    init = [rng.standard_normal(2 + i % shapes) * (1 + 1j if i % 3 == 0 else 1)
            for i in range(n)]
    opts = dict(lr=0.05, momentum=0.9) if name == "SGD" else dict(lr=0.05)

    def run(lib):
        ps = [lib.tensor(a, requires_grad=True) for a in init]
        opt = getattr(lib.optim, name)(ps, **opts)
        for _ in range(3):
            opt.zero_grad()
            sum(((p - k) * (p - k).conj()).real.sum() for k, p in enumerate(ps)).backward()
            opt.step()
        return [p.detach().numpy() for p in ps]
    for a, b in zip(run(wgrad), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
