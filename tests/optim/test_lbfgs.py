"""LBFGS against torch.optim.LBFGS, with and without the strong-Wolfe line search."""
import os
import subprocess
import sys

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


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


# torch's add_(d, alpha=t) is one fused multiply-add per element (its vectorized CPU
# kernel); dyadic values keep the gradient's sums exact in any order, so the step length t
# (~0.3) is the same and only the update's rounding could differ (NOTE [LBFGS kernels]:
# separate multiply and add ops differed in ~30% of the elements). Run at XLA's default
# optimization level, as users' kernels compile (the suite compiles at level 0: conftest.py)
_MOVE = """
import sys
import numpy as np
import torch
import wgrad
for dtype, lr in (("float32", 50), ("complex64", 100)):
    rng = np.random.default_rng(3)
    def draw():
        a = (rng.integers(-512, 512, 256) / 1024).astype(np.float32)
        return (a + 1j * rng.integers(-512, 512, 256) / 1024).astype(dtype) \\
            if dtype == "complex64" else a
    p0, c0 = draw(), draw()
    out = []
    for lib in (wgrad, torch):
        p, c = lib.tensor(p0, requires_grad=True), lib.tensor(c0)
        opt = lib.optim.LBFGS([p], lr=lr, max_iter=1)
        def closure():
            opt.zero_grad()
            r = p - c  # gradient 2r, exact (|r| ** 2's goes through a square root)
            loss = (r.real ** 2).sum() + (r.imag ** 2).sum() if dtype == "complex64" \\
                else (r ** 2).sum()
            loss.backward()
            return loss
        opt.step(closure)
        out.append(p.detach().numpy())
    assert not np.array_equal(out[1], p0)
    print(dtype, int((out[0] != out[1]).sum()))
"""


def test_lbfgs_moves_parameters_as_torch_bit_for_bit():
    env = dict(os.environ, PYTHONPATH=ROOT, XLA_FLAGS="", WGRAD_TEST_XLA_OPT="1")
    out = subprocess.run([sys.executable, "-c", _MOVE], env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.split() == ["float32", "0", "complex64", "0"]
