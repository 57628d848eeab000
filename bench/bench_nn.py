"""A small complex model's training step, wgrad vs PyTorch (when importable), in one run.

    python bench/bench_nn.py [--batch 64] [--width 256] [--steps 50] [--rounds 3]
                             [--torch-threads N]

The model: Linear(64, width) -> Tanh -> Linear(width, 16), complex64 weights (``dtype=
cfloat``), loss = mean(|model(x) - y|^2); a step is zero_grad, forward, backward (no
optimizer: issue 17 has none yet). Both libraries start from the same weights and data.
The sides take turns for ``--rounds`` rounds of ``--steps`` steps each, each keeping its
lowest median step time; the wgrad/PyTorch ratio is printed. No assertion on speed.
PyTorch uses ``--torch-threads`` intra-op threads (default: every core, as bench/run.py);
on a loaded machine one thread gives it steadier figures.
"""
import argparse
import os
import statistics
import time

import numpy as np

import wgrad

try:
    import torch
except ImportError:  # the comparison is optional
    torch = None

__all__ = ["main"]


def _model(L, width):
    return L.nn.Sequential(L.nn.Linear(64, width, dtype=L.cfloat), L.nn.Tanh(),
                           L.nn.Linear(width, 16, dtype=L.cfloat))


def _data(batch, seed=0):
    rng = np.random.default_rng(seed)

    def c(*shape):
        return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(
            np.complex64)
    return c(batch, 64), c(batch, 16)


def _step_fn(L, model, x, y):
    def step():
        model.zero_grad()
        loss = ((model(x) - y).abs() ** 2).mean()
        loss.backward()
        return loss
    return step


def _sync(L, model):
    if L is wgrad:  # JAX dispatches asynchronously: wait for every gradient
        for p in model.parameters():
            p.grad._data.block_until_ready()


def _time(L, model, step, steps):
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        step()
        _sync(L, model)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--width", type=int, default=256)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--torch-threads", type=int, default=os.cpu_count() or 1)
    args = ap.parse_args(argv)
    if torch is not None:
        torch.set_num_threads(args.torch_threads)

    xa, ya = _data(args.batch)
    wm = _model(wgrad, args.width)
    sides = {"wgrad": (wgrad, wm, _step_fn(wgrad, wm, wgrad.tensor(xa), wgrad.tensor(ya)))}
    if torch is not None:
        tm = _model(torch, args.width)
        tm.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in
                            wm.state_dict().items()})
        sides["torch"] = (torch, tm, _step_fn(torch, tm, torch.tensor(xa), torch.tensor(ya)))
        lw, lt = sides["wgrad"][2]().item(), sides["torch"][2]().item()
        assert abs(lw - lt) <= 1e-4 * abs(lt), (lw, lt)  # the same model on both sides
    best = {}
    for name, (L, model, step) in sides.items():
        for _ in range(5):  # warm-up: compiles wgrad's kernels
            step()
    for _ in range(args.rounds):
        for name, (L, model, step) in sides.items():
            t = _time(L, model, step, args.steps)
            best[name] = min(best.get(name, t), t)
    print(f"complex MLP 64x{args.width}x16, batch {args.batch}: zero_grad + forward + "
          f"backward, median ms per step (best of {args.rounds} rounds)")
    for name, t in best.items():
        print(f"  {name:6s} {t * 1e3:8.3f} ms")
    if "torch" in best:
        print(f"  wgrad / torch = {best['wgrad'] / best['torch']:.2f}x")
    return best


if __name__ == "__main__":
    main()
