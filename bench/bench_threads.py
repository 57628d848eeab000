"""Engine threading benchmark: prints a markdown table.

1. N threads each calling backward on their own graph over large arrays, against one
   thread doing the same calls serially (XLA releases the GIL while a kernel runs).
2. A wide graph: independent branches on different devices (forced host devices,
   ``--xla_force_host_platform_device_count``), backward with and without device
   workers (``wgrad.autograd.set_device_workers_for_host_devices``). Runs in a
   subprocess because XLA_FLAGS must be set before JAX starts.

Usage: python bench/bench_threads.py [--threads 4] [--size 1024] [--devices 4]
"""
import argparse
import os
import subprocess
import sys
import threading
import time

__all__ = ["main"]


def _best(fn, repeat):
    fn()  # warm-up: compiles kernels
    ts = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return min(ts)


def bench_threads(n_threads, size, calls, repeat):
    import wgrad
    x = wgrad.randn(size, size, requires_grad=True)
    ws = [wgrad.randn(size, size) / size ** 0.5 for _ in range(n_threads)]

    def one(w):
        y = (x @ w).tanh()
        (y @ w).sum().backward()

    def serial():
        for w in ws:
            for _ in range(calls):
                one(w)

    def threaded():
        ts = [threading.Thread(target=lambda w=w: [one(w) for _ in range(calls)])
              for w in ws]
        for t in ts:
            t.start()
        for t in ts:
            t.join(600)
    ts, tt = _best(serial, repeat), _best(threaded, repeat)
    work = f"{n_threads}x{calls} backward, {size}x{size} matmul+tanh"
    return [(work, "1 thread, serial", ts, 1.0),
            (work, f"{n_threads} threads", tt, ts / tt)]


def bench_devices(size, repeat):
    """Child process: XLA_FLAGS already set."""
    import jax
    import wgrad
    devs = [f"cpu:{i}" for i in range(len(jax.devices("cpu")))]
    xs = [wgrad.randn(size, size, device=d, requires_grad=True) for d in devs]
    ws = [wgrad.randn(size, size, device=d) / size ** 0.5 for d in devs]

    def step():
        losses = []
        for x, w in zip(xs, ws):
            y = x
            for _ in range(4):
                y = (y @ w).tanh()
            losses.append(y.sum())
        wgrad.autograd.backward(losses, [wgrad.ones((), device=d) for d in devs])
    rows = []
    for on in (False, True):
        wgrad.autograd.set_device_workers_for_host_devices(on)
        t = _best(step, repeat)
        rows.append((f"{len(devs)} branches on {len(devs)} host devices, {size}x{size}",
                     "device workers" if on else "caller thread only", t))
    base = rows[0][2]
    for work, mode, t in rows:
        print(f"ROW\t{work}\t{mode}\t{t}\t{base / t}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=4)
    ap.add_argument("--size", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--devices", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--_devices_child", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a._devices_child:
        bench_devices(a.size, a.repeat)
        return
    rows = bench_threads(a.threads, a.size, a.calls, a.repeat)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        f" --xla_force_host_platform_device_count={a.devices}").strip()
    out = subprocess.run([sys.executable, __file__, "--_devices_child", "--size", str(a.size),
                          "--repeat", str(a.repeat)], env=env, capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(out.stderr)
    for line in out.stdout.splitlines():
        if line.startswith("ROW\t"):
            _, work, mode, t, speedup = line.split("\t")
            rows.append((work, mode, float(t), float(speedup)))
    print(f"cores: {os.cpu_count()}\n")
    print("| workload | mode | best time (ms) | speed-up |")
    print("|---|---|---:|---:|")
    for work, mode, t, s in rows:
        print(f"| {work} | {mode} | {t * 1e3:.1f} | {s:.2f}x |")


if __name__ == "__main__":
    main()
