"""wgrad benchmarks, side by side with JAX (and PyTorch when importable), in one run.

    python bench/run.py            # all workloads, writes docs/performance.md
    python bench/run.py --quick    # fewer repetitions
    python bench/run.py --only chain,phase
    python bench/run.py --rounds 5      # more rounds (default 3)
    python bench/run.py --device cuda   # the same workloads on a GPU: wgrad, jax.jit and
                                        # torch cuda in one run (docs/performance.md, GPU)

Each (workload, implementation) cell runs in its own subprocess so that its peak
memory (max RSS above the interpreter's baseline after imports) is its own. Within a
cell: one first call (timed separately: it includes JIT compilation), then repeated
steps, reporting the median. The implementations of a workload take turns for
``--rounds`` rounds, and each keeps its lowest median: on a shared machine, load from
other processes only ever slows a round down. A first call is the median of the
rounds' (each round a fresh process). Ratios are taken against PyTorch eager and
jax.jit(jax.grad) from the same run.
"""
import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import time

IMPLS = ["wgrad", "wgrad.lazy", "wgrad.compile", "jax.grad", "jax.jit(jax.grad)", "torch"]
WORKLOADS = ["chain", "mlp", "phase", "matmul", "engine"]
TITLES = {
    "chain": "300 x (sin, mul, mul, add), complex64[16]",
    "mlp": "two-layer complex MLP 64x256x256",
    "phase": "phase-retrieval step, fft2 128x128",
    "matmul": "complex64 1024^2 matmul + |.|^2 backward",
    "engine": "engine: 1,000-node chain of trivial ops (per node)",
}
REPS = {"chain": 15, "mlp": 30, "phase": 30, "matmul": 5, "engine": 30, "linalg": 30}
# Untimed steps before timing: each cell runs for at least WARMUP_S after its first call,
# and a pair runs each side for at least SWITCH_S after switching. A step's time settles
# only after tens of steps (measured: phase, wgrad 0.64 ms over steps 2-25 against 0.38
# ms from step 150 on), and after a switch between libraries in one process it takes
# ~0.1-0.3 s to settle again (phase, wgrad after PyTorch: 0.59 ms with one untimed step,
# 0.52 ms with 25 ms of them, 0.41 ms with 0.1 s, 0.39 ms with 0.3 s; 0.38 ms alone).
WARMUP_S, SWITCH_S = 0.5, 0.3
# --device: the subprocesses of a run learn it from this variable
DEVICE = os.environ.get("WGRAD_BENCH_DEVICE", "cpu")
CHUNK_S = 0.05  # a pair's timed turn: at least this long (and at least 5 steps)


# -- workloads: each returns a zero-argument step for one implementation -------------------

def _np_data(seed=0):
    import numpy as np
    return np.random.default_rng(seed)


def make(workload, impl):
    return _bind(impl, *problem(workload), workload)


def problem(workload):
    """``(wgrad loss, JAX loss, PyTorch loss, argument arrays, how many of them are
    differentiated)`` of a workload; the losses take the arguments as tensors/arrays."""
    import numpy as np
    rng = _np_data()

    def c(*shape, dtype=np.complex64):
        return ((rng.standard_normal(shape) + 1j * rng.standard_normal(shape)) /
                np.sqrt(2)).astype(dtype)

    if workload == "chain":
        x0, c0 = c(16), c(16)

        def wg_f(x, cc):
            y = x
            for _ in range(300):
                y = (y.sin() * cc) * 0.5 + cc
            return (y.abs() ** 2).sum()

        def jx_f(x, cc):
            import jax.numpy as jnp
            y = x
            for _ in range(300):
                y = (jnp.sin(y) * cc) * 0.5 + cc
            return jnp.sum(jnp.abs(y) ** 2)
        args = (x0, c0)
    elif workload == "mlp":
        x0, t0 = c(64, 256), c(64, 256)
        w1, w2 = c(256, 256) / 16, c(256, 256) / 16

        def wg_f(a, b, x, t):
            return ((((x @ a).tanh() @ b) - t).abs() ** 2).mean()

        def jx_f(a, b, x, t):
            import jax.numpy as jnp
            return jnp.mean(jnp.abs(jnp.tanh(x @ a) @ b - t) ** 2)
        args = (w1, w2, x0, t0)
    elif workload == "phase":
        obj = c(128, 128)
        m = np.abs(np.fft.fft2(obj)).astype(np.float32)
        x0 = c(128, 128)

        def wg_f(x, mm):
            import wgrad
            return ((wgrad.fft.fft2(x).abs() - mm) ** 2).sum()

        def jx_f(x, mm):
            import jax.numpy as jnp
            return jnp.sum((jnp.abs(jnp.fft.fft2(x)) - mm) ** 2)
        args = (x0, m)
    elif workload == "matmul":
        a0, b0 = c(1024, 1024), c(1024, 1024)

        def wg_f(a, b):
            return ((a @ b).abs() ** 2).sum()

        def jx_f(a, b):
            import jax.numpy as jnp
            return jnp.sum(jnp.abs(a @ b) ** 2)
        args = (a0, b0)
    elif workload == "linalg":  # LAPACK calls (NOTE [Lazy disk cache]); not in WORKLOADS
        a0, b0 = c(16, 16) / 4, c(16, 16) + 4 * np.eye(16, dtype=np.complex64)

        def wg_f(a, b):
            import wgrad
            u = wgrad.linalg.matrix_exp(a - a.mH)  # a unitary
            return ((wgrad.linalg.solve(b, u) - b).abs() ** 2).sum()

        def jx_f(a, b):
            import jax
            import jax.numpy as jnp
            u = jax.scipy.linalg.expm(a - a.conj().T)
            return jnp.sum(jnp.abs(jnp.linalg.solve(b, u) - b) ** 2)

        def torch_f(a, b):
            import torch
            u = torch.linalg.matrix_exp(a - a.mH)
            return ((torch.linalg.solve(b, u) - b).abs() ** 2).sum()
        args = (a0, b0)
    elif workload == "engine":
        x0 = np.ones(1, np.float32)

        def wg_f(x):
            y = x
            for _ in range(1000):
                y = y * 1.0
            return y.sum()

        def jx_f(x):
            y = x
            for _ in range(1000):
                y = y * 1.0
            return y.sum()
        args = (x0,)
    else:
        raise SystemExit(f"unknown workload {workload}")
    n_diff = {"mlp": 2}.get(workload, 1 if workload != "matmul" else 2)
    if workload != "linalg":
        torch_f = wg_f
    if workload == "phase":
        def torch_f(x, mm):  # the PyTorch spelling of the same loss
            import torch
            return ((torch.fft.fft2(x).abs() - mm) ** 2).sum()
    return wg_f, jx_f, torch_f, args, n_diff


def _bind(impl, wg_f, jx_f, torch_f, args, n_diff, workload):
    if impl in ("wgrad", "wgrad.lazy", "wgrad.compile"):
        import wgrad
        ts = [wgrad.tensor(a, requires_grad=i < n_diff, device=DEVICE)
              for i, a in enumerate(args)]
        params = ts[:n_diff]

        def step():
            for p in params:
                p.grad = None
            loss = wg_f(*ts)
            loss.backward()
            return loss
        if impl == "wgrad.compile":
            if not hasattr(wgrad, "compile"):
                return None
            if workload == "chain":
                return "skip"  # one XLA computation of the unrolled chain: minutes to compile
            step = wgrad.compile(step)
        if impl == "wgrad.lazy":  # NOTE [Lazy segments]: backward() flushes the segment
            eager_step = step

            def step():
                with wgrad.lazy():
                    return eager_step()

        def run():
            step()
            for p in params:
                if p.grad is not None:
                    p.grad._data.block_until_ready()
        return run
    if impl.startswith("jax"):
        import jax
        import jax.numpy as jnp
        dev = jax.devices("gpu" if DEVICE == "cuda" else "cpu")[0]
        arrs = [jax.device_put(jnp.asarray(a), dev) for a in args]
        g = jax.value_and_grad(jx_f, argnums=tuple(range(n_diff)))
        if impl == "jax.jit(jax.grad)":
            if workload == "chain":
                return "skip"  # XLA needs minutes to compile this unrolled chain on CPU
            g = jax.jit(g)

        def run():
            jax.block_until_ready(g(*arrs))
        return run
    if impl == "torch":
        try:
            import torch
        except ImportError:
            return None
        torch.set_num_threads(os.cpu_count() or 1)
        if DEVICE == "cuda" and not torch.cuda.is_available():
            return None
        ts = [torch.tensor(a, device=DEVICE).requires_grad_(i < n_diff)
              for i, a in enumerate(args)]
        params = ts[:n_diff]
        sync = torch.cuda.synchronize if DEVICE == "cuda" else (lambda: None)

        def run():
            for p in params:
                p.grad = None
            torch_f(*ts).backward()
            sync()
        return run
    raise SystemExit(f"unknown impl {impl}")


def _rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _warm(run, seconds, steps):
    """Untimed steps: at least ``steps`` of them, for at least ``seconds``; returns the
    mean seconds per step."""
    t0 = time.perf_counter()
    for _ in range(steps):
        run()
    n = steps
    while time.perf_counter() - t0 < seconds:
        run()
        n += 1
    return (time.perf_counter() - t0) / n


def one(workload, impl, reps=None):
    """Run one cell; print a JSON line."""
    if impl.startswith("wgrad"):
        import wgrad  # noqa: F401 - import cost stays out of the baseline
    elif impl.startswith("jax"):
        import jax
        # the settings importing wgrad makes (x64; NOTE [CPU dispatch]), so that the JAX
        # cells differ from wgrad's in the program only
        jax.config.update("jax_enable_x64", True)
        if os.environ.get("WGRAD_CPU_ASYNC_DISPATCH", "0") in ("0", ""):
            jax.config.update("jax_cpu_enable_async_dispatch", False)
    else:
        try:
            import torch  # noqa: F401
        except ImportError:
            pass
    run = make(workload, impl)
    if run is None or run == "skip":
        print(json.dumps({"status": "n/a" if run is None else "skip"}))
        return
    base = _rss_mb()
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    _warm(run, WARMUP_S, 5)
    times = []
    for _ in range(reps or REPS[workload]):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    print(json.dumps({"status": "ok", "median_ms": statistics.median(times) * 1e3,
                      "first_ms": first * 1e3, "peak_mb": _rss_mb() - base}))


PAIRS = [("mlp", "wgrad.compile", "jax.jit(jax.grad)"),
         ("phase", "wgrad.compile", "jax.jit(jax.grad)"),
         ("chain", "wgrad", "torch"), ("phase", "wgrad", "torch"), ("mlp", "wgrad", "torch"),
         ("chain", "wgrad.lazy", "torch"), ("phase", "wgrad.lazy", "torch"),
         ("mlp", "wgrad.lazy", "torch")]


def pair(workload, a, b, rounds=20, chunk_s=None):
    """Two implementations in one process, taking turns chunk by chunk, so that load on
    a shared machine hits both alike; prints their medians (ms) as a JSON line. A chunk
    is at least 5 steps and at least ``chunk_s`` seconds of them (a 0.2 ms step would
    otherwise be timed over 1 ms, at the mercy of one interruption)."""
    import jax
    jax.config.update("jax_enable_x64", True)
    chunk_s = CHUNK_S if chunk_s is None else chunk_s
    runs = {impl: make(workload, impl) for impl in (a, b)}
    if any(r is None or r == "skip" for r in runs.values()):
        print(json.dumps({"status": "n/a"}))
        return
    times = {impl: [] for impl in runs}
    for run in runs.values():
        run()
        run()
    for _ in range(rounds):
        for impl, run in runs.items():
            per_step = _warm(run, SWITCH_S, 1)  # steps right after switching: untimed
            chunk = max(5, int(chunk_s / per_step))
            t0 = time.perf_counter()
            for _ in range(chunk):
                run()
            times[impl].append((time.perf_counter() - t0) / chunk * 1e3)
    print(json.dumps({"status": "ok", **{impl: statistics.median(t)
                                         for impl, t in times.items()}}))


def interleaved(only):
    lines = ["", ("Interleaved in one process (the two take turns, 20 rounds of at least 5 "
                  f"timed steps and {CHUNK_S * 1e3:g} ms after {SWITCH_S:g} s of untimed "
                  "ones; median ms per step):"), "",
             "| workload | implementation | ms | reference | ms | ratio |",
             "|---|---|---|---|---|---|"]
    for w, a, b in PAIRS:
        if w not in only:
            continue
        out = subprocess.run([sys.executable, __file__, "--pair", w, a, b],
                             check=False, capture_output=True, text=True, timeout=1800)
        try:
            r = json.loads(out.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            r = {"status": "error"}
        print(w, a, b, r, file=sys.stderr, flush=True)
        if r.get("status") != "ok":
            continue
        lines.append(f"| {w} | {a} | {r[a]:.3g} | {b} | {r[b]:.3g} | {r[a] / r[b]:.2f}x |")
    return "\n".join(lines) + "\n" if len(lines) > 5 else ""


def engine_bookkeeping_us(n=1000, reps=20):
    """Per-node engine cost with nodes whose apply does no array work."""
    import wgrad
    from wgrad._autograd.engine import get_default_engine
    from wgrad._autograd.graph import Node

    class Pass(Node):
        __slots__ = ()

        def apply(self, grads):
            return grads[:len(self.next_functions)]

    g = wgrad.ones(1)
    best = []
    for _ in range(reps):
        node = Node()
        prev = None
        for _ in range(n):
            node = Pass(((prev, 0),) if prev is not None else ())
            prev = node
        t0 = time.perf_counter()
        get_default_engine().execute([(node, 0)], [g], False, False)
        best.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(best)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--one", nargs=2, metavar=("WORKLOAD", "IMPL"))
    ap.add_argument("--reps", type=int)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--only", default=",".join(WORKLOADS))
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--pair", nargs=3, metavar=("WORKLOAD", "IMPL", "REFERENCE"))
    ap.add_argument("--device", choices=("cpu", "cuda"), default=DEVICE)
    args = ap.parse_args()
    if args.device != DEVICE:
        _use_device(args.device)
    if args.one:
        one(args.one[0], args.one[1], args.reps)
        return
    if args.pair:
        pair(*args.pair)
        return
    rows = {}
    for w in args.only.split(","):
        reps = max(3, REPS[w] // 3) if args.quick else REPS[w]
        rows[w] = {}
        # the implementations take turns, round after round; a cell keeps its lowest
        # median (load from other processes on a shared machine only slows a round
        # down), the median of its rounds' first calls (each a fresh process: one
        # process's first call moves 2-30 ms for PyTorch alone) and the first round's
        # peak memory
        for rnd in range(1 if args.quick else args.rounds):
            for impl in IMPLS:
                if rnd and rows[w][impl].get("status") != "ok":
                    continue
                cell = _cell(w, impl, reps)
                prev = rows[w].get(impl)
                if prev is None:
                    rows[w][impl] = cell
                    if cell.get("status") == "ok":
                        cell["firsts"] = [cell["first_ms"]]
                elif cell.get("status") == "ok":
                    prev["median_ms"] = min(prev["median_ms"], cell["median_ms"])
                    prev["firsts"].append(cell["first_ms"])
                    prev["first_ms"] = statistics.median(prev["firsts"])
                print(w, impl, f"round {rnd + 1}", cell, file=sys.stderr, flush=True)
    table = render(rows) + interleaved(rows)
    book = engine_bookkeeping_us()
    table += (f"\nEngine bookkeeping alone (nodes whose apply does no array work): "
              f"{book:.2f} us per node.\n")
    print(table)
    if not args.no_write:
        write_doc(table, 1 if args.quick else args.rounds)


def _use_device(device):
    """Run everything on ``device``; for cuda, stop with a clear message when JAX sees no
    GPU (its CUDA plugin missing, or no GPU in the machine)."""
    global DEVICE
    if device == "cuda":
        os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")
        import jax
        try:
            gpus = jax.devices("gpu")
        except RuntimeError:
            gpus = []
        if not gpus:
            raise SystemExit(
                "bench/run.py --device cuda: no GPU here. JAX sees only "
                f"{[d.platform for d in jax.devices()]}; on a machine with an NVIDIA GPU "
                "install JAX's CUDA build (pip install \"jax[cuda12]\") and, for the torch "
                "column, a CUDA build of PyTorch.")
    os.environ["WGRAD_BENCH_DEVICE"] = DEVICE = device


def _cell(w, impl, reps):
    out = subprocess.run([sys.executable, __file__, "--one", w, impl, "--reps", str(reps)],
                         check=False, capture_output=True, text=True, timeout=1800)
    try:
        return json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        return {"status": "error", "err": out.stderr.strip()[-300:]}


def _fmt(cell):
    if cell.get("status") == "ok":
        return f"{cell['median_ms']:.3g}"
    return {"n/a": "n/a", "skip": "skipped"}.get(cell.get("status"), "error")


def render(rows):
    head = ("| workload | " + " | ".join(IMPLS) + " | wgrad / torch | lazy / torch | "
            "wgrad / jax.jit | compiled / jax.jit |")
    lines = [head, "|" + "---|" * (len(IMPLS) + 5)]
    first = ("First call, the median of the rounds' (each a fresh process; JIT "
             "compilation, or a lookup in the persistent compilation cache when an earlier "
             "run filled it: bench/bench_cold.py separates the two), ms / peak RSS above "
             "baseline in the first round, MB:")
    extra = ["", first, "",
             "| workload | " + " | ".join(IMPLS) + " |", "|" + "---|" * (len(IMPLS) + 1)]
    for w, cells in rows.items():
        # the engine chain has 1,000 nodes: its ms per step is microseconds per node
        unit = " (us/node)" if w == "engine" else " (ms)"

        def ratio(a, b, cells=cells):
            ca, cb = cells.get(a, {}), cells.get(b, {})
            if ca.get("status") == "ok" and cb.get("status") == "ok":
                return f"{ca['median_ms'] / cb['median_ms']:.2f}x"
            return "-"
        vals = [_fmt(cells[i]) for i in IMPLS]
        lines.append(f"| {TITLES[w]}{unit} | " + " | ".join(vals) + " | " +
                     f"{ratio('wgrad', 'torch')} | {ratio('wgrad.lazy', 'torch')} | "
                     f"{ratio('wgrad', 'jax.jit(jax.grad)')} | "
                     f"{ratio('wgrad.compile', 'jax.jit(jax.grad)')} |")
        extra.append(f"| {w} | " + " | ".join(
            f"{cells[i]['first_ms']:.0f} / {cells[i]['peak_mb']:.0f}"
            if cells[i].get("status") == "ok" else _fmt(cells[i]) for i in IMPLS) + " |")
    return "\n".join(lines + extra) + "\n"


def _cpu_model():
    """The CPU's model name (the BLAS, and so the MLP's ratio, depends on it)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def write_doc(table, rounds):
    import jax
    dev = jax.devices("gpu" if DEVICE == "cuda" else "cpu")[0]
    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "..", "docs", "performance.md")
    try:
        import torch
        tv = torch.__version__
    except ImportError:
        tv = "not installed"
    machine = (f"{platform.machine()} ({_cpu_model()}), {os.cpu_count()} cores, Python "
               f"{platform.python_version()}, JAX {jax.__version__} "
               f"({dev.platform}{', ' + dev.device_kind if DEVICE == 'cuda' else ''}), "
               f"PyTorch {tv}")
    stamp = time.strftime("%Y-%m-%d")
    begin, end_mark = (("<!-- bench-cuda:begin -->", "<!-- bench-cuda:end -->")
                       if DEVICE == "cuda" else ("<!-- bench:begin -->", "<!-- bench:end -->"))
    cmd = "python bench/run.py" + (" --device cuda" if DEVICE == "cuda" else "")
    block = (f"{begin}\nMeasured {stamp} by `{cmd}` on: "
             f"{machine}.\nMedian per step (forward + backward), the lowest of {rounds} "
             f"round(s); lower is better.\n\n"
             f"{table}{end_mark}")
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = "# Performance\n\n<!-- bench:begin -->\n<!-- bench:end -->\n"
    if begin not in doc:
        doc = doc.rstrip("\n") + f"\n\n## On a GPU\n\n{begin}\n{end_mark}\n"
    start, end = doc.index(begin), doc.index(end_mark)
    doc = doc[:start] + block + doc[end + len(end_mark):]
    with open(path, "w") as f:
        f.write(doc)


if __name__ == "__main__":
    main()
