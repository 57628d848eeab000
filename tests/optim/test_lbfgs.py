"""LBFGS against torch.optim.LBFGS, with and without the strong-Wolfe line search."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _problem(dtype):
    rng = np.random.default_rng(1)
    cplx = np.dtype(dtype).kind == "c"

    def draw(*shape):
        a = rng.standard_normal(shape)
        return (a + 1j * rng.standard_normal(shape) if cplx else a).astype(dtype)
    return draw(10, 4), draw(10, 3), [draw(4, 3), draw(3)]


def _run(lib, X, Y, init, steps, **opts):
    params = [lib.tensor(a, requires_grad=True) for a in init]
    X, Y = lib.tensor(X), lib.tensor(Y)
    opt = lib.optim.LBFGS(params, **opts)

    def closure():
        opt.zero_grad()
        r = X @ params[0] + params[1] - Y
        loss = (r.abs() ** 2).sum() + 0.1 * (params[0].abs() ** 4).sum()
        loss.backward()
        return loss
    out = []
    for _ in range(steps):
        loss = opt.step(closure)
        out.append((float(loss.detach()), [p.detach().numpy().copy() for p in params]))
    return out, opt


ROWS = [dict(line_search_fn="strong_wolfe"), dict(lr=0.5, max_iter=5, history_size=3),
        dict(line_search_fn="strong_wolfe", max_iter=4, history_size=2,
             tolerance_change=1e-12)]
# float32: rounding noise (summation order of the inner products) decides when a run that
# has converged stops, so single precision is compared over a few iterations
CASES = ([(o, dt, 1e-9) for o in ROWS for dt in ("float64", "complex128")] +
         [(dict(o, max_iter=3), dt, 1e-4) for o in ROWS for dt in ("float32", "complex64")])


@pytest.mark.parametrize("opts,dtype,tol", CASES)
def test_lbfgs_matches_torch(opts, dtype, tol):
    X, Y, init = _problem(dtype)
    ours, opt = _run(wgrad, X, Y, init, 3, **opts)
    ref, topt = _run(torch, X, Y, init, 3, **opts)
    for (la, pa), (lb, pb) in zip(ours, ref):
        assert la == pytest.approx(lb, rel=tol, abs=tol)
        for a, b in zip(pa, pb):
            np.testing.assert_allclose(a, b, rtol=tol, atol=tol)
    s, ts = opt.state[opt._params[0]], topt.state[topt.param_groups[0]["params"][0]]
    assert sorted(s) == sorted(ts)
    assert s["func_evals"] == ts["func_evals"] and s["n_iter"] == ts["n_iter"]
    assert len(s["old_dirs"]) == len(ts["old_dirs"])


def test_lbfgs_one_group_only():
    a, b = wgrad.zeros(2, requires_grad=True), wgrad.zeros(2, requires_grad=True)
    with pytest.raises(ValueError, match="doesn't support per-parameter options"):
        wgrad.optim.LBFGS([{"params": [a]}, {"params": [b]}])
