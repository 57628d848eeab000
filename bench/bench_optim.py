"""Optimizer step time: wgrad.optim vs torch.optim (foreach=True), in one run.

Adam and SGD with momentum over N complex64 parameters of 4096 elements each (N = 100 and
1000): the time of ``optimizer.step()`` alone, gradients fixed, each step synced (wgrad:
block_until_ready on the parameters). Prints the best of the repetitions per step (the
machine may be shared: the minimum is the least disturbed) and wgrad/torch.

    python bench/bench_optim.py [--quick]
"""
import argparse
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


if __name__ == "__main__":
    main()
