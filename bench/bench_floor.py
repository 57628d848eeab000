"""How low can per-op recording in Python go? The chain workload's forward (300 x (sin,
mul, mul, add) on complex64[16], with autograd) per op: torch eager, wgrad.lazy, and a
stripped Python tape that does only the least any recorder of this design must do per
op (one lock, one signature lookup, a pending value, a result object, a segment entry, a
backward record holding its saved input and that input's version). The stripped tape
does no type promotion, no version counters of its own, no sequence numbers, runs no
XLA and computes nothing: it is a floor, not a design.

    python bench/bench_floor.py            # us per op, minima of interleaved rounds
"""
import statistics
import threading
import time

import numpy as np


class _Pending:
    __slots__ = ("seg", "idx", "aval", "value")

    def __init__(self, seg, idx, aval):
        self.seg = seg
        self.idx = idx
        self.aval = aval
        self.value = None


class _T:
    __slots__ = ("data", "grad_fn", "output_nr", "version", "requires_grad")

    def sin(self):
        return _record("sin", self, None)

    def __mul__(self, other):
        return _record("mul", self, other)

    def __add__(self, other):
        return _record("add", self, other)


_lock = threading.RLock()
_seg = []
_group = []
_plans = {}
_GROUP = object()


def _record(name, a, b):
    with _lock:
        da = a.data
        if b.__class__ is _T:
            kb = b.data.aval
            rb = b.data.idx if b.data.seg is _seg else -1
        else:
            kb = type(b)
            rb = None
        key = (name, da.aval, kb, a.requires_grad or a.grad_fn is not None)
        aval = _plans.get(key)
        if aval is None:
            aval = _plans[key] = da.aval
        _seg.append((name, da.idx, rb))
        p = _Pending(_seg, len(_seg), aval)
        t = _T.__new__(_T)
        t.data = p
        t.grad_fn = _GROUP
        t.output_nr = len(_group)
        t.version = 0
        t.requires_grad = False
        _group.append((key, (a, a.version), b))
        return t


def _floor_forward(x, cc):
    y = x
    for _ in range(300):
        y = (y.sin() * cc) * 0.5 + cc
    del _seg[:], _group[:]
    return y


def main():
    import torch
    import wgrad
    torch.set_num_threads(1)
    rng = np.random.default_rng(0)
    x0 = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)
    c0 = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)

    def chain(x, cc):
        y = x
        for _ in range(300):
            y = (y.sin() * cc) * 0.5 + cc
        return y

    tx, tc = torch.tensor(x0, requires_grad=True), torch.tensor(c0)
    wx, wc = wgrad.tensor(x0, requires_grad=True), wgrad.tensor(c0)
    fx, fc = _T(), _T()
    for t, rg in ((fx, True), (fc, False)):
        t.data = _Pending(None, -1, ((16,), "complex64", False))
        t.grad_fn, t.output_nr, t.version, t.requires_grad = None, 0, 0, rg

    def w_lazy():
        with wgrad.lazy():
            y = chain(wx, wc)
        y._data.block_until_ready()

    cells = {"torch eager": lambda: chain(tx, tc), "wgrad.lazy": w_lazy,
             "stripped Python tape": lambda: _floor_forward(fx, fc)}
    for fn in cells.values():
        for _ in range(5):
            fn()
    res = {k: [] for k in cells}
    for _ in range(15):
        for k, fn in cells.items():
            t0 = time.perf_counter()
            for _ in range(5):
                fn()
            res[k].append((time.perf_counter() - t0) / 5 / 1200 * 1e6)
    print("| forward of the chain, per op | min us | median us |\n|---|---|---|")
    for k, v in res.items():
        print(f"| {k} | {min(v):.2f} | {statistics.median(v):.2f} |")


if __name__ == "__main__":
    main()
