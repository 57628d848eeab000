"""The lazy segment cap (NOTE [Lazy segments]) by measurement: first call (compiles) and
steady step of bench/run.py workloads under ``wgrad.lazy()`` for several caps.

    python bench/bench_lazy_cap.py                 # chain, caps 8..128, a markdown table
    python bench/bench_lazy_cap.py --only chain,phase --caps 16,32

Each (workload, cap) runs in its own process (WGRAD_LAZY_CAP is read at import) with the
persistent compilation cache off and the cap fixed (NOTE [Segment cap growth]), so the first
call pays every compile; the step time is the lowest of 20 steps after warm-up.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def cell(workload):
    sys.path.insert(0, HERE)
    import run as bench
    import wgrad
    run = bench.make(workload, "wgrad.lazy")
    t0 = time.perf_counter()
    run()
    first = time.perf_counter() - t0
    bench._warm(run, 0.5, 3)
    best = float("inf")
    for _ in range(20):
        t0 = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - t0)
    st = wgrad.lazy.stats()
    print(json.dumps({"first_ms": first * 1e3, "step_ms": best * 1e3,
                      "compiles": st["compiles"]}))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="chain")
    ap.add_argument("--caps", default="8,16,32,64,128")
    ap.add_argument("--cell")
    args = ap.parse_args()
    if args.cell:
        cell(args.cell)
        return
    rows = ["| workload | cap | first call (ms) | segment compiles | step (ms) |",
            "|---|---|---|---|---|"]
    for w in args.only.split(","):
        for cap in args.caps.split(","):
            env = dict(os.environ, WGRAD_LAZY_CAP=cap, WGRAD_LAZY_CAP_MAX=cap,
                       WGRAD_COMPILE_CACHE="0")  # the cap fixed (no growth)
            out = subprocess.run([sys.executable, __file__, "--cell", w], env=env,
                                 capture_output=True, text=True, timeout=3600, check=False)
            try:
                r = json.loads(out.stdout.strip().splitlines()[-1])
            except (IndexError, json.JSONDecodeError):
                print(w, cap, out.stderr[-400:], file=sys.stderr)
                continue
            print(w, cap, r, file=sys.stderr, flush=True)
            rows.append(f"| {w} | {cap} | {r['first_ms']:.0f} | {r['compiles']} | "
                        f"{r['step_ms']:.2f} |")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
