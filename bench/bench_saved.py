"""Peak host memory of a 20-layer complex network's forward+backward, with and without
saved-tensor hooks.

Each configuration runs in its own subprocess and reports the bytes the graph holds in
JAX buffers between forward and backward (``jax.live_arrays()``: device memory, which is
host memory on a CPU machine; the figure hooks are meant to cut), and its peak resident
set size above the resident set size at the start of a step (RSS sampled every 2 ms during the
step, after a warm-up step compiled every kernel), plus the step's wall time:

- ``plain``: saved tensors stay on their device (host memory on a CPU machine);
- ``save_on_cpu``: ``wgrad.autograd.graph.save_on_cpu()`` — on a GPU the saved arrays
  move to host RAM (device memory goes down, host memory up); on CPU it is an extra copy;
- ``compress``: a pack hook that stores complex128 activations as complex64 (half the
  bytes; gradients lose precision accordingly);
- ``disk``: a pack hook that spills each saved array to a .npy file.

Usage: ``python bench/bench_saved.py [--width 512] [--batch 256] [--layers 20]``
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

CONFIGS = ("plain", "save_on_cpu", "compress", "disk")


def _child(cfg, width, batch, layers):
    import resource
    import uuid

    import numpy as np

    import wgrad
    from wgrad.autograd.graph import save_on_cpu, saved_tensors_hooks

    def hooks():
        if cfg == "save_on_cpu":
            return save_on_cpu()
        if cfg == "compress":
            # parameters stay as they are (they are alive anyway); activations shrink
            return saved_tensors_hooks(
                lambda t: t if t.is_leaf else t.detach().to(wgrad.complex64),
                lambda t: t if t.dtype is wgrad.complex128 else t.to(wgrad.complex128))
        if cfg == "disk":
            tmp = tempfile.mkdtemp()

            def pack(t):
                path = os.path.join(tmp, uuid.uuid4().hex + ".npy")
                np.save(path, t.detach().numpy())
                return path

            def unpack(path):
                return wgrad.from_numpy(np.load(path)) if hasattr(wgrad, "from_numpy") \
                    else wgrad.tensor(np.load(path))
            return saved_tensors_hooks(pack, unpack)
        return None

    rng = np.random.default_rng(0)
    ws = [wgrad.tensor((rng.standard_normal((width, width)) +
                        1j * rng.standard_normal((width, width))) / np.sqrt(2 * width),
                       requires_grad=True) for _ in range(layers)]
    x = wgrad.tensor(rng.standard_normal((batch, width)) + 0j)

    import jax

    def live_mib():  # bytes in JAX buffers (device memory; host memory on a CPU machine)
        return sum(a.nbytes for a in jax.live_arrays()) / 2 ** 20

    held = [0.0]

    def step():
        before = live_mib()
        h = hooks()
        if h is not None:
            h.__enter__()
        try:
            y = x
            for w in ws:
                y = (y @ w).tanh()
            loss = (y.abs() ** 2).sum()
        finally:
            if h is not None:
                h.__exit__(None, None, None)
        held[0] = live_mib() - before  # what the graph keeps in JAX buffers for backward
        loss.backward()
        for w in ws:
            w.grad = None

    import gc
    import threading

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2 ** 20

    step()  # warm-up: compile every kernel
    gc.collect()
    base, peak, done = rss(), [0.0], threading.Event()

    def sample():  # ru_maxrss cannot be reset after warm-up: sample RSS instead
        while not done.is_set():
            peak[0] = max(peak[0], rss())
            time.sleep(0.002)
    th = threading.Thread(target=sample)
    th.start()
    t0 = time.perf_counter()
    step()
    dt = time.perf_counter() - t0
    done.set()
    th.join()
    print(json.dumps({"config": cfg, "peak_above_start_mib": peak[0] - base, "step_s": dt,
                      "jax_buffers_held_mib": held[0],
                      "max_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--width", type=int, default=512)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--layers", type=int, default=20)
    ap.add_argument("--child")
    a = ap.parse_args()
    if a.child:
        _child(a.child, a.width, a.batch, a.layers)
        return
    act = a.batch * a.width * 16 / 2 ** 20
    print(f"# {a.layers} layers, activations {a.batch}x{a.width} complex128 "
          f"({act:.1f} MiB each, ~{2 * a.layers * act:.0f} MiB saved)")
    print("| config | JAX buffers held for backward, MiB | peak RSS above start, MiB | step s |")
    print("|---|---|---|---|")
    for cfg in CONFIGS:
        out = subprocess.run([sys.executable, __file__, "--child", cfg, "--width",
                              str(a.width), "--batch", str(a.batch), "--layers",
                              str(a.layers)], capture_output=True, text=True)
        if out.returncode:
            print(f"| {cfg} | failed: {out.stderr.strip().splitlines()[-1:]} | | |")
            continue
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"| {cfg} | {r['jax_buffers_held_mib']:.1f} | {r['peak_above_start_mib']:.1f} | "
              f"{r['step_s']:.3f} |")


if __name__ == "__main__":
    main()
