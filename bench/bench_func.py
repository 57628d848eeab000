"""Per-example gradients of a small complex model: ``wgrad.func.vmap(wgrad.func.grad)``
against ``torch.func.vmap(torch.func.grad)``, a Python loop of ``wgrad.func.grad`` and
``jax.jit(jax.vmap(jax.grad))``, in one run.

The model is a two-layer complex MLP (complex64, ``in x hidden x 1``, tanh), the loss of
one example ``|f(x) - y|^2``; the gradients are taken with respect to the parameters
(a dict), per example of a batch. Each implementation runs once untimed (compilation),
then the implementations take turns for ``--rounds`` rounds of ``--reps`` calls; each
keeps its lowest median. Ratios are against torch.func in the same run.

Usage: ``python bench/bench_func.py [--batch 64] [--inp 16] [--hidden 32] [--rounds 3]``
"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

# bench/profile.py would shadow the standard library's profile module, which torch imports
_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != _HERE]


def _data(batch, inp, hidden):
    rng = np.random.default_rng(0)

    def c(*s):
        return ((rng.standard_normal(s) + 1j * rng.standard_normal(s)) /
                np.sqrt(2 * s[0])).astype(np.complex64)
    return {"w1": c(inp, hidden), "w2": c(hidden, 1)}, c(batch, inp), c(batch, 1)[:, 0]


def _wgrad(params, X, Y, loop=False):
    import wgrad
    from wgrad.func import grad, vmap

    p = {k: wgrad.tensor(v) for k, v in params.items()}
    x, y = wgrad.tensor(X), wgrad.tensor(Y)

    def loss(p, x, y):
        out = ((x @ p["w1"]).tanh() @ p["w2"])[0]
        return (out - y).abs() ** 2

    if loop:
        g = grad(loss)

        def step():
            res = [g(p, x[i], y[i]) for i in range(x.shape[0])]
            res[-1]["w1"]._data.block_until_ready()
        return step

    def step():
        out = vmap(grad(loss), in_dims=(None, 0, 0))(p, x, y)
        out["w1"]._data.block_until_ready()
    return step


def _torch(params, X, Y):
    import torch
    from torch.func import grad, vmap

    p = {k: torch.tensor(v) for k, v in params.items()}
    x, y = torch.tensor(X), torch.tensor(Y)

    def loss(p, x, y):
        out = ((x @ p["w1"]).tanh() @ p["w2"])[0]
        return (out - y).abs() ** 2

    def step():
        vmap(grad(loss), in_dims=(None, 0, 0))(p, x, y)
    return step


def _jax(params, X, Y):
    import jax
    import jax.numpy as jnp

    def loss(p, x, y):
        out = (jnp.tanh(x @ p["w1"]) @ p["w2"])[0]
        return jnp.abs(out - y) ** 2
    f = jax.jit(jax.vmap(jax.grad(loss), in_axes=(None, 0, 0)))
    p = {k: jnp.asarray(v) for k, v in params.items()}
    x, y = jnp.asarray(X), jnp.asarray(Y)

    def step():
        f(p, x, y)["w1"].block_until_ready()
    return step


def _check(params, X, Y):
    """wgrad's per-example gradients equal torch.func's (conjugate-Wirtinger, as torch)."""
    import torch
    import wgrad
    from wgrad.func import grad, vmap

    def loss_w(p, x, y):
        return (((x @ p["w1"]).tanh() @ p["w2"])[0] - y).abs() ** 2

    a = vmap(grad(loss_w), in_dims=(None, 0, 0))(
        {k: wgrad.tensor(v) for k, v in params.items()}, wgrad.tensor(X), wgrad.tensor(Y))
    b = torch.func.vmap(torch.func.grad(loss_w), in_dims=(None, 0, 0))(
        {k: torch.tensor(v) for k, v in params.items()}, torch.tensor(X), torch.tensor(Y))
    for k in a:
        np.testing.assert_allclose(a[k].numpy(), b[k].numpy(), rtol=2e-4, atol=2e-5)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--inp", type=int, default=16)
    ap.add_argument("--hidden", type=int, default=32)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    params, X, Y = _data(a.batch, a.inp, a.hidden)
    _check(params, X, Y)
    impls = {
        "wgrad.func.vmap(grad)": _wgrad(params, X, Y),
        "torch.func.vmap(grad)": _torch(params, X, Y),
        "wgrad loop of func.grad": _wgrad(params, X, Y, loop=True),
        "jax.jit(jax.vmap(jax.grad))": _jax(params, X, Y),
    }
    first, best = {}, {}
    for name, step in impls.items():
        t0 = time.perf_counter()
        step()
        first[name] = time.perf_counter() - t0
    for _ in range(a.rounds):
        for name, step in impls.items():
            reps = a.reps if "loop" not in name else max(2, a.reps // 10)
            step()
            ts = []
            for _ in range(reps):
                t0 = time.perf_counter()
                step()
                ts.append(time.perf_counter() - t0)
            m = statistics.median(ts)
            best[name] = min(best.get(name, m), m)
    ref = best["torch.func.vmap(grad)"]
    print(f"per-example gradients, complex64 MLP {a.inp}x{a.hidden}x1, batch {a.batch}")
    print("| implementation | first call (ms) | per call (ms) | vs torch.func |")
    print("|---|---|---|---|")
    for name in impls:
        print(f"| {name} | {first[name] * 1e3:.1f} | {best[name] * 1e3:.3f} | "
              f"{best[name] / ref:.3g}x |")


if __name__ == "__main__":
    main()
