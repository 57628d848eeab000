"""First-call latency in a fresh process: wgrad with a cold and a warm persistent
compilation cache (NOTE [Persistent compilation cache]) against PyTorch's first call.

    python bench/bench_cold.py                 # chain, mlp, phase; prints a markdown table
    python bench/bench_cold.py --only phase --runs 3 --impls wgrad,wgrad.lazy
    python bench/bench_cold.py --only linalg   # matrix_exp and solve: LAPACK calls

Each number is the first step (forward + backward) of a bench/run.py workload, timed in
its own subprocess after the imports; "cold" starts from an empty cache directory, "warm"
is the next process over the same directory. The lowest of ``--runs`` runs is kept (load
from other processes only ever slows a run down); the cold runs each get a new directory.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

RUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "run.py")


def first_ms(workload, impl, cache):
    env = dict(os.environ, WGRAD_COMPILE_CACHE=cache)
    out = subprocess.run([sys.executable, RUN, "--one", workload, impl, "--reps", "1"],
                         env=env, capture_output=True, text=True, timeout=1800, check=False)
    try:
        r = json.loads(out.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):
        raise SystemExit(f"{workload} {impl}: {out.stderr[-500:]}") from None
    return r["first_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="chain,mlp,phase")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--impls", default="wgrad,wgrad.lazy")
    args = ap.parse_args()
    rows = ["| workload | implementation | no cache | cold cache | warm cache | torch | "
            "warm / torch |", "|---|---|---|---|---|---|---|"]
    for w in args.only.split(","):
        torch = min(first_ms(w, "torch", "0") for _ in range(args.runs))
        for impl in args.impls.split(","):
            off, cold, warm = [], [], []
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory() as d:
                    cold.append(first_ms(w, impl, d))
                    warm.append(first_ms(w, impl, d))
                off.append(first_ms(w, impl, "0"))
            o, c, h = min(off), min(cold), min(warm)
            print(w, impl, off, cold, warm, torch, file=sys.stderr, flush=True)
            rows.append(f"| {w} | {impl} | {o:.0f} | {c:.0f} | {h:.0f} | {torch:.0f} | "
                        f"{h / torch:.1f}x |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
