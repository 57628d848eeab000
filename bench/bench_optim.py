"""Optimizer step time: wgrad.optim vs torch.optim (foreach=True), in one run.

Adam and SGD with momentum over N complex64 parameters of 4096 elements each (N = 100 and
1000): the time of ``optimizer.step()`` alone, gradients fixed, each step synced (wgrad:
block_until_ready on the parameters). Prints the best of the repetitions per step (the
machine may be shared: the minimum is the least disturbed) and wgrad/torch.

Then one LBFGS step (20 iterations, strong-Wolfe line search, eager) on a
phase-retrieval problem, from the same start each repetition.

Then a whole compiled training step (zero_grad, forward, backward, Adam step) of a
phase-retrieval problem (a complex 64x64 image, 4 coded diffraction patterns):
``wgrad.compile`` against the same step in ``jax.jit`` with optax's Adam on the real view
(optax only when installed), same math: torch's Adam moments per real component.

    python bench/bench_optim.py [--quick]
"""
import argparse
import functools
import os
import sys
import time

# bench/profile.py would shadow the standard library's profile (torch imports cProfile)
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]

import jax  # noqa: E402
import numpy as np  # noqa: E402

import wgrad  # noqa: E402

try:
    import torch
except ImportError:  # torch is optional: wgrad's timings alone
    torch = None
try:
    import optax
except ImportError:  # optax is optional: the compiled step's row is skipped
    optax = None
import jax.numpy as jnp  # noqa: E402

SIZE = 4096


def _make(lib, n, seed=0):
    rng = np.random.default_rng(seed)
    ps = []
    for _ in range(n):
        a = (rng.standard_normal(SIZE) + 1j * rng.standard_normal(SIZE)).astype(np.complex64)
        p = lib.tensor(a, requires_grad=True)
        p.grad = lib.tensor((a * 0.1).astype(np.complex64))
        ps.append(p)
    return ps


def _optimizer(lib, name, ps):
    extra = {"foreach": True} if lib is torch else {}
    if name == "Adam":
        return lib.optim.Adam(ps, lr=1e-3, **extra)
    return lib.optim.SGD(ps, lr=1e-3, momentum=0.9, **extra)


def _sync(lib, ps):
    if lib is wgrad:
        jax.block_until_ready([p._data for p in ps])


def _time(lib, name, n, reps, warmup):
    ps = _make(lib, n)
    opt = _optimizer(lib, name, ps)
    for _ in range(warmup):
        opt.step()
    _sync(lib, ps)
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        opt.step()
        _sync(lib, ps)
        ts.append(time.perf_counter() - t0)
    return min(ts)


def _phase_problem(n=64, k=4):
    rng = np.random.default_rng(0)
    x0 = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(np.complex64)
    masks = np.exp(2j * np.pi * rng.random((k, n, n))).astype(np.complex64)
    b = np.abs(np.fft.fft2(masks * x0)).astype(np.float32)
    init = (0.1 * (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))).astype(
        np.complex64)
    return masks, b, init


def _time_calls(fn, sync, reps, warmup):
    for _ in range(warmup):
        fn()
    sync()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        sync()
        ts.append(time.perf_counter() - t0)
    return min(ts)


def _compiled_wgrad(reps, warmup):
    masks, b, init = _phase_problem()
    masks, b = wgrad.tensor(masks), wgrad.tensor(b)
    x = wgrad.tensor(init, requires_grad=True)
    opt = wgrad.optim.Adam([x], lr=wgrad.tensor(0.01))

    @wgrad.compile
    def step():
        opt.zero_grad()
        loss = ((wgrad.fft.fft2(masks * x).abs() - b) ** 2).mean()
        loss.backward()
        opt.step()
        return loss
    return _time_calls(step, lambda: jax.block_until_ready(x._data), reps, warmup)


def _compiled_optax(reps, warmup):
    masks, b, init = _phase_problem()
    masks, b = jnp.asarray(masks), jnp.asarray(b)
    params = (jnp.asarray(init.real), jnp.asarray(init.imag))
    tx = optax.adam(0.01)

    def loss_fn(p):
        x = jax.lax.complex(*p)
        return jnp.mean((jnp.abs(jnp.fft.fft2(masks * x)) - b) ** 2)

    @functools.partial(jax.jit, donate_argnums=(0, 1))
    def step(p, s):
        loss, g = jax.value_and_grad(loss_fn)(p)
        u, s = tx.update(g, s, p)
        return optax.apply_updates(p, u), s, loss
    state = [params, tx.init(params)]

    def call():
        state[0], state[1], _ = step(state[0], state[1])
    return _time_calls(call, lambda: jax.block_until_ready(state[0]), reps, warmup)


def _lbfgs(lib, reps, warmup):
    """One ``LBFGS.step`` (20 iterations, strong-Wolfe line search, eager) on the coded
    phase-retrieval problem from the same start each time: a fresh optimizer and the
    same initial parameters, so every repetition does the same work."""
    masks, b, init = _phase_problem()
    masks, b = lib.tensor(masks), lib.tensor(b)
    x = lib.tensor(init, requires_grad=True)
    evals = []

    def call():
        with lib.no_grad():
            x.copy_(lib.tensor(init))
        opt = lib.optim.LBFGS([x], max_iter=20, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((lib.fft.fft2(masks * x).abs() - b) ** 2).mean()
            loss.backward()
            return loss
        opt.step(closure)
        evals.append(opt.state[x]["func_evals"])
    sync = (lambda: jax.block_until_ready(x._data)) if lib is wgrad else (lambda: None)
    return _time_calls(call, sync, reps, warmup), evals[-1]


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repetitions (CI)")
    args = ap.parse_args()
    reps, warmup = (5, 2) if args.quick else (30, 5)
    if torch is not None:
        torch.set_num_threads(max(1, torch.get_num_threads()))
    print(f"device: {jax.devices()[0].platform}, torch threads: "
          f"{torch.get_num_threads() if torch else '-'}")
    print(f"{'optimizer':<14}{'params':>7}{'wgrad ms':>11}{'torch ms':>11}{'ratio':>8}")
    for name in ("Adam", "SGD-momentum"):
        for n in (100, 1000):
            w = _time(wgrad, name, n, reps, warmup)
            t = _time(torch, name, n, reps, warmup) if torch is not None else float("nan")
            print(f"{name:<14}{n:>7}{w * 1e3:>11.3f}{t * 1e3:>11.3f}{w / t:>8.2f}")
    w, we = _lbfgs(wgrad, reps, warmup)
    if torch is not None:
        t, te = _lbfgs(torch, reps, warmup)
        print(f"{'LBFGS step':<14}{'1':>7}{w * 1e3:>11.3f}{t * 1e3:>11.3f}{w / t:>8.2f}"
              f"   (closure evaluations: wgrad {we}, torch {te})")
    if optax is None:
        print("compiled step: optax not installed, skipped")
        return
    w = _compiled_wgrad(reps * 4, warmup)
    o = _compiled_optax(reps * 4, warmup)
    print(f"\ncompiled phase-retrieval step (Adam): wgrad.compile {w * 1e3:.3f} ms, "
          f"jax.jit+optax {o * 1e3:.3f} ms, ratio {w / o:.2f}")


if __name__ == "__main__":
    main()
