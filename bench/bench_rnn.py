"""wgrad's LSTM vs torch's CPU LSTM: forward + backward of one training step, in one run.

    python bench/bench_rnn.py [--seq 50] [--batch 32] [--input 64] [--hidden 128]
                              [--layers 2] [--bidirectional] [--dtype float32] [--rounds 7]

Both sides hold the same weights and input; a step is ``out, _ = lstm(x);
out.square().sum().backward()`` (complex dtypes: ``(out * out.conj()).real``), timed to
completion (wgrad waits on the gradients' arrays). The sides run interleaved, a few steps
each per round, so load on a shared machine hits them alike. Prints the median
milliseconds per step of each side and wgrad / torch. wgrad runs each layer and direction
as one fused ``lax.scan`` (NOTE [One scan per layer and direction] in wgrad/nn/_rnn.py):
two XLA dispatches per layer and direction per step, whatever the sequence length.
"""
import argparse
import statistics
import time
import warnings

import jax
import numpy as np
import torch

import wgrad

__all__ = ["main"]


def _models(args):
    kw = dict(num_layers=args.layers, bidirectional=args.bidirectional)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = torch.nn.LSTM(args.input, args.hidden, **kw).to(getattr(torch, args.dtype))
    wm = wgrad.nn.LSTM(args.input, args.hidden, **kw, dtype=getattr(wgrad, args.dtype))
    wm.load_state_dict({k: wgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.seq, args.batch, args.input))
    if args.dtype.startswith("complex"):
        x = x + 1j * rng.standard_normal(x.shape)
    x = x.astype(args.dtype)
    return tm, wm, torch.tensor(x, requires_grad=True), wgrad.tensor(x, requires_grad=True)


def _loss(out):
    return (out * out.conj()).real.sum() if out.dtype.is_complex else out.square().sum()


def _torch_step(tm, x):
    def step():
        tm.zero_grad()
        x.grad = None
        out, _ = tm(x)
        _loss(out).backward()
    return step


def _wgrad_step(wm, x):
    params = list(wm.parameters())

    def step():
        wm.zero_grad()
        x.grad = None
        out, _ = wm(x)
        _loss(out).backward()
        jax.block_until_ready([p.grad._data for p in params])
    return step


def _time(step, n):
    t = time.perf_counter()
    for _ in range(n):
        step()
    return (time.perf_counter() - t) / n * 1e3


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seq", type=int, default=50)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--input", type=int, default=64)
    ap.add_argument("--hidden", type=int, default=128)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--bidirectional", action="store_true")
    ap.add_argument("--dtype", default="float32")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--steps", type=int, default=3, help="steps per side per round")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch.set_num_threads (on a loaded machine OpenMP's spinning "
                         "threads can slow torch down by orders of magnitude: try 1)")
    args = ap.parse_args(argv)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    tm, wm, xt, xw = _models(args)
    sides = {"torch": _torch_step(tm, xt), "wgrad": _wgrad_step(wm, xw)}
    for step in sides.values():       # compile / warm up
        step()
        step()
    times = {k: [] for k in sides}
    for _ in range(args.rounds):
        for k, step in sides.items():
            times[k].append(_time(step, args.steps))
    med = {k: statistics.median(v) for k, v in times.items()}
    print(f"LSTM({args.input}, {args.hidden}, num_layers={args.layers}, "
          f"bidirectional={args.bidirectional}), seq={args.seq}, batch={args.batch}, "
          f"{args.dtype}: forward + backward per step (torch threads: "
          f"{torch.get_num_threads()})")
    print("| side | ms / step |")
    print("|---|---|")
    for k, v in med.items():
        print(f"| {k} | {v:.2f} |")
    print(f"wgrad / torch = {med['wgrad'] / med['torch']:.2f}")
    return med


if __name__ == "__main__":
    main()
