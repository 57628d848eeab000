"""Where an eager step's time goes, op by op and node by node, in wgrad and in PyTorch.

    python bench/profile.py                 # the chain, phase and MLP workloads of run.py
    python bench/profile.py --only phase

For a workload of bench/run.py it records one forward pass (wgrad's primitive calls; the
torch functions PyTorch's loss calls) and one backward pass (the gradients each node
receives), then times every op and every node alone, waiting for its result, after
warm-up. Beside each wgrad op and node it times the bare XLA call under it (the op's
jitted forward, the node's cached backward kernel) on the same arrays, so the rest is
wgrad's Python. Ops and nodes of one name are grouped: "n" is how many a step runs,
"us" the median per call. Last, the whole step, with Python's garbage collector on and
off. Figures move by 10-30% between runs on a shared machine; compare columns of one run.
"""
import argparse
import gc
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import problem  # the workloads of bench/run.py

SAMPLE = 6  # calls of one name timed (the chain repeats each op 300 times)


def _median_us(call, reps=200, batches=5):
    call()
    samples = []
    for _ in range(batches):
        t0 = time.perf_counter()
        for _ in range(reps):
            call()
        samples.append((time.perf_counter() - t0) / reps * 1e6)
    return statistics.median(samples)


def _grouped(items):
    """``[(name, n, [timed calls])]`` in order of first appearance."""
    groups = {}
    for name, call in items:
        groups.setdefault(name, []).append(call)
    return [(name, len(calls), calls[:SAMPLE]) for name, calls in groups.items()]


def _group_us(calls):
    timed = [_median_us(c) for c in calls if c is not None]
    return statistics.median(timed) if timed else None


def _graph_nodes(root):
    seen, stack, out = set(), [root], []
    while stack:
        n = stack.pop()
        if n is None or id(n) in seen:
            continue
        seen.add(id(n))
        out.append(n)
        stack.extend(nxt for nxt, _ in n.next_functions)
    return out


def _captured_backward(loss, nodes, is_leaf_node):
    """Run backward once (graph kept); per node in execution order, the gradients it got."""
    order = []
    handles = [n.register_prehook(lambda g, n=n: order.append((n, g)))
               for n in nodes if not is_leaf_node(n)]
    loss.backward(retain_graph=True)
    for h in handles:
        h.remove()
    return order


# -- wgrad ------------------------------------------------------------------------------

def _wgrad_profile(wg_f, args, n_diff):
    import jax

    import wgrad
    from wgrad._autograd.graph import AccumulateGrad
    from wgrad.ops import _primitive as P

    ts = [wgrad.tensor(a, requires_grad=i < n_diff) for i, a in enumerate(args)]

    def block(out):
        jax.block_until_ready([o._data for o in (out if isinstance(out, (tuple, list))
                                                 else (out,)) if o is not None])

    calls = []
    orig = P.Primitive.__call__

    def recording(prim, *a, **attrs):
        calls.append((prim, a, attrs))
        return orig(prim, *a, **attrs)
    P.Primitive.__call__ = recording
    try:
        loss = wg_f(*ts)
    finally:
        P.Primitive.__call__ = orig

    def op_call(prim, a, attrs):
        return lambda: block(prim(*a, **attrs))

    def xla_call(prim, a, attrs):
        f = prim._forward_fn(tuple(attrs.items()))
        if prim.variadic:
            a = a[0] if len(a) == 1 and isinstance(a[0], (list, tuple)) else a
            raw = [t._data for t in a]
        else:
            raw = [t._data if isinstance(t, wgrad.Tensor) else t for t in a]
        return lambda: jax.block_until_ready(f(*raw))

    fwd = [(p.name, (op_call(p, a, k), xla_call(p, a, k))) for p, a, k in calls]
    order = _captured_backward(loss, _graph_nodes(loss.grad_fn),
                               lambda n: isinstance(n, AccumulateGrad))

    def kernel_call(node, grads):
        if not isinstance(node, P.OpNode):
            return None
        k = node.prim.kernel(node.akey, node.attrs, node.needs, node.in_meta, node.out_meta)
        if k.identity is not None and k.identity is not P._UNKNOWN:
            return None  # a pass-through node calls no kernel (NOTE [Pass-through kernels])
        gs = [g._data if g is not None else None for g in grads]
        vals = [P._unpack(node.saved[n], node, graph=False) for n in k.names]
        return lambda: jax.block_until_ready(k(gs, vals))

    def node_call(n, g):
        def call():
            with wgrad.no_grad():  # as the engine runs it without create_graph
                block(n(*g))
        return call

    bwd = [(n.name(), (node_call(n, g), kernel_call(n, g))) for n, g in order]

    def step():
        for p in ts[:n_diff]:
            p.grad = None
        wg_f(*ts).backward()
        block(ts[0].grad)
    return fwd, bwd, step, lambda: block(wg_f(*ts))


# -- PyTorch ----------------------------------------------------------------------------

def _torch_profile(torch_f, args, n_diff):
    import torch
    from torch.overrides import TorchFunctionMode

    torch.set_num_threads(os.cpu_count() or 1)
    ts = [torch.tensor(a, requires_grad=i < n_diff) for i, a in enumerate(args)]
    calls = []

    class Recording(TorchFunctionMode):
        def __torch_function__(self, func, types, a=(), kwargs=None):
            kwargs = kwargs or {}
            calls.append((func, a, kwargs))
            return func(*a, **kwargs)
    with Recording():
        loss = torch_f(*ts)
    fwd = [(getattr(f, "__name__", str(f)), (lambda f=f, a=a, k=k: f(*a, **k), None))
           for f, a, k in calls]
    order = _captured_backward(loss, _graph_nodes(loss.grad_fn),
                               lambda n: n.name() == "torch::autograd::AccumulateGrad")
    def node_call(n, g):
        def call():
            with torch.no_grad():
                n(*g)
        return call

    bwd = [(n.name(), (node_call(n, g), None)) for n, g in order]

    def step():
        for p in ts[:n_diff]:
            p.grad = None
        torch_f(*ts).backward()
    return fwd, bwd, step, lambda: torch_f(*ts)


# -- report -----------------------------------------------------------------------------

def _table(title, wg, th):
    """Side by side when the two list the same number of groups with the same counts."""
    wg, th = _grouped(wg), (_grouped(th) if th is not None else None)
    paired = th is not None and len(wg) == len(th) and all(
        a[1] == b[1] for a, b in zip(wg, th))
    lines = [f"**{title}**", ""]
    if paired:
        lines += ["| wgrad | n | us | of which XLA call | PyTorch | us |", "|---|---|---|---|---|---|"]
    else:
        lines += ["| wgrad | n | us | of which XLA call |", "|---|---|---|---|"]
    tot_w = tot_x = tot_t = 0.0
    for i, (name, n, cs) in enumerate(wg):
        us = _group_us([c[0] for c in cs])
        xs = _group_us([c[1] for c in cs])
        tot_w += n * us
        tot_x += n * (xs or 0.0)
        row = f"| {name} | {n} | {us:.1f} | {'-' if xs is None else f'{xs:.1f}'} |"
        if paired:
            tname, tn, tcs = th[i]
            tus = _group_us([c[0] for c in tcs])
            tot_t += tn * tus
            row += f" {tname} | {tus:.1f} |"
        lines.append(row)
    total = f"| total per step (ms) | | {tot_w / 1e3:.3g} | {tot_x / 1e3:.3g} |"
    lines.append(total + (f" | {tot_t / 1e3:.3g} |" if paired else ""))
    if th is not None and not paired:
        lines += ["", "| PyTorch | n | us |", "|---|---|---|"]
        for name, n, cs in th:
            lines.append(f"| {name} | {n} | {_group_us([c[0] for c in cs]):.1f} |")
    return "\n".join(lines) + "\n"


def _whole_ms(step, forward, reps=30):
    """(forward ms, forward + backward ms) per step, gc enabled, then disabled."""
    out = []
    for disable in (False, True):
        (gc.disable if disable else gc.enable)()
        try:
            for _ in range(5):
                step()
            f = _median_us(forward, reps=reps) / 1e3
            s = _median_us(step, reps=reps) / 1e3
        finally:
            gc.enable()
        out.append((f, s))
    return out


def profile(workload):
    wg_f, _, torch_f, args, n_diff = problem(workload)
    wfwd, wbwd, wstep, wforward = _wgrad_profile(wg_f, args, n_diff)
    try:
        tfwd, tbwd, tstep, tforward = _torch_profile(torch_f, args, n_diff)
    except ImportError:
        tfwd = tbwd = tstep = tforward = None
    print(f"### {workload}\n")
    print(_table("forward ops, each alone (us per call)", wfwd, tfwd))
    print(_table("backward nodes, each alone (us per call; AccumulateGrad not listed)",
                 wbwd, tbwd))
    print("**whole step (ms): forward / forward + backward**\n")
    print("| | gc on | gc off |\n|---|---|---|")
    for name, step, fw in (("wgrad", wstep, wforward), ("PyTorch", tstep, tforward)):
        if step is None:
            continue
        (f1, s1), (f2, s2) = _whole_ms(step, fw)
        print(f"| {name} | {f1:.3g} / {s1:.3g} | {f2:.3g} / {s2:.3g} |")
    print()


def dispatch_floor_us():
    """One call of a jitted kernel on a complex64[16] array: waited for, and queued
    (not waited for, as consecutive eager ops run)."""
    import jax
    import jax.numpy as jnp

    import wgrad  # noqa: F401 - same JAX configuration as the profiles
    f = jax.jit(jnp.sin)
    a = jnp.ones(16, jnp.complex64)
    return (_median_us(lambda: f(a).block_until_ready(), reps=2000),
            _median_us(lambda: f(a), reps=2000))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--only", default="chain,phase,mlp")
    args = ap.parse_args()
    waited, queued = dispatch_floor_us()
    print(f"One XLA dispatch (jax.jit(jnp.sin) on complex64[16]): {waited:.1f} us waited "
          f"for, {queued:.1f} us queued\n")
    for w in args.only.split(","):
        profile(w)


if __name__ == "__main__":
    main()
