"""wgrad.distributed's process group and DistributedDataParallel.

In-process: the one-process group (no JAX runtime needed) and torch's errors. Across
processes: ONE test starts 2 local processes (gloo CPU collectives through jax.distributed,
a free port) that check the collectives and train a complex MLP with DDP (SGD with
momentum); rank 0 trains the same model on the whole batch in one process and reports the
largest difference."""
import json
import os
import socket
import subprocess
import sys
import textwrap

import pytest

import wgrad
import wgrad.distributed as dist
from wgrad import nn

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def one_process():
    dist.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0, world_size=1)
    try:
        yield
    finally:
        if dist.is_initialized():
            dist.destroy_process_group()


def _error(fn):
    try:
        fn()
    except Exception as e:
        return type(e), str(e)
    return None


def test_errors_match_torch(monkeypatch):
    torch = pytest.importorskip("torch")
    tdist = torch.distributed
    for name in ("MASTER_ADDR", "MASTER_PORT", "RANK", "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    for f, args in (("get_rank", ()), ("get_world_size", ()), ("barrier", ())):
        assert _error(lambda: getattr(dist, f)(*args)) == \
            _error(lambda: getattr(tdist, f)(*args))
    assert _error(lambda: dist.init_process_group("gloo", world_size=2, rank=0)) == \
        _error(lambda: tdist.init_process_group("gloo", world_size=2, rank=0))
    assert not dist.is_initialized() and dist.is_available()
    assert _error(lambda: nn.parallel.DistributedDataParallel(nn.Linear(2, 2))) == \
        _error(lambda: torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2)))
    assert str(dist.ReduceOp.SUM) == str(tdist.ReduceOp.SUM)


def test_one_process_group(one_process):
    assert (dist.get_rank(), dist.get_world_size(), dist.get_backend()) == (0, 1, "gloo")
    assert dist.group.WORLD is not None
    assert _error(lambda: dist.init_process_group("gloo")) == \
        (ValueError, "trying to initialize the default process group twice!")
    t = wgrad.tensor([1.0, -2.0])
    for op in (dist.ReduceOp.SUM, dist.ReduceOp.AVG, dist.ReduceOp.MAX):
        dist.all_reduce(t, op=op)
    dist.broadcast(t, src=0)
    out = [wgrad.zeros(2)]
    work = dist.all_gather(out, t, async_op=True)
    assert work.wait() and out[0].tolist() == t.tolist() == [1.0, -2.0]
    assert _error(lambda: dist.all_gather([t, t], t))[0] is RuntimeError
    dist.barrier()


def test_ddp_one_process_is_the_module(one_process):
    wgrad.manual_seed(0)
    lin = nn.Linear(3, 2, dtype=wgrad.complex128)
    ref = nn.Linear(3, 2, dtype=wgrad.complex128)
    ref.load_state_dict(lin.state_dict())
    ddp = nn.parallel.DistributedDataParallel(lin)
    assert list(ddp.state_dict()) == ["module.weight", "module.bias"]
    x = wgrad.randn(4, 3, dtype=wgrad.complex128)
    for m in (ddp, ref):
        (m(x).abs() ** 2).sum().backward()
    assert wgrad.equal(lin.weight.grad, ref.weight.grad)
    assert [len(b) for b in ddp._buckets] == [2]      # default caps: one bucket
    # a parameter without a gradient: torch's error at the next forward, unless
    # find_unused_parameters=True (then it keeps .grad None, the others are averaged)
    for find in (False, True):
        two = nn.ModuleList([nn.Linear(3, 2), nn.Linear(3, 2)])
        ddp = nn.parallel.DistributedDataParallel(two, find_unused_parameters=find)
        ddp.module[0](wgrad.ones(1, 3)).sum().backward()
        if find:
            assert two[1].weight.grad is None
            assert two[0].weight.grad.tolist() == [[1.0] * 3] * 2
        else:
            err = _error(lambda: ddp(wgrad.ones(1, 3)))
            assert err[0] is RuntimeError and err[1].startswith(
                "Expected to have finished reduction in the prior iteration")
    # reverse registration order; the bias (1200 B) fills a 0.001 MiB bucket on its own
    ddp2 = nn.parallel.DistributedDataParallel(nn.Linear(20, 300), bucket_cap_mb=0.001)
    assert ddp2._buckets == [[1], [0]]


WORKER = textwrap.dedent('''
    import json, os
    import numpy as np
    import wgrad, wgrad.distributed as dist
    from wgrad import nn
    dist.init_process_group("gloo")
    r, n = dist.get_rank(), dist.get_world_size()
    out = {"rank": r, "world": n}
    def red(op, vals):
        t = wgrad.tensor(vals)
        dist.all_reduce(t, op=op)
        return t.tolist()
    out["sum"] = red(dist.ReduceOp.SUM, [1.0 + r, 2.0])
    out["avg"] = red(dist.ReduceOp.AVG, [1.0 + r, 2.0])
    out["max"] = red(dist.ReduceOp.MAX, [1.0 + 3 * r, 2.0 - r])
    out["prod"] = red(dist.ReduceOp.PRODUCT, [2.0 + r])
    z = wgrad.tensor([1 + 1j * (r + 1)])
    dist.all_reduce(z)
    out["csum"] = [z.real.item(), z.imag.item()]
    t = wgrad.full((3,), float(r))
    dist.broadcast(t, src=1)
    out["bcast"] = t.tolist()
    ts = [wgrad.zeros(2, dtype=wgrad.int64) for _ in range(n)]
    dist.all_gather(ts, wgrad.tensor([r, -r]))
    out["gather"] = [x.tolist() for x in ts]
    g = wgrad.zeros(2 * n)
    dist.all_gather_into_tensor(g, wgrad.tensor([r, 10.0 * r]))
    out["gather_into"] = g.tolist()
    dist.barrier()

    def make():
        return nn.Sequential(nn.Linear(4, 8, dtype=wgrad.complex128), nn.Tanh(),
                             nn.Linear(8, 2, dtype=wgrad.complex128))
    wgrad.manual_seed(0)   # four micro-batches of 2 rows: one set of kernels for all
    data = [(wgrad.randn(2, 4, dtype=wgrad.complex128),
             wgrad.randn(2, 2, dtype=wgrad.complex128)) for _ in range(4)]
    def loss(model, k, scale=1.0):
        x, y = data[k]
        return ((model(x) - y).abs() ** 2).mean() * scale
    wgrad.manual_seed(1 + r)   # another init on each rank: DDP copies rank 0's
    local = make()
    if r == 0:
        wgrad.manual_seed(1)
        ref = make()
    ddp = nn.parallel.DistributedDataParallel(local, bucket_cap_mb=0.0002)  # 209 bytes
    out["buckets"] = ddp._buckets
    # step 1: micro-batch r on rank r; step 2 accumulates micro-batches 2r and 2r+1, the
    # first under no_sync, then averages the sum
    opt = wgrad.optim.SGD(ddp.parameters(), lr=0.1, momentum=0.9)
    loss(ddp, r).backward()
    opt.step()
    opt.zero_grad()
    with ddp.no_sync():
        loss(ddp, 2 * r).backward()
    loss(ddp, 2 * r + 1).backward()
    opt.step()
    if r == 0:   # one process, the whole batch: the mean of the ranks' losses
        ropt = wgrad.optim.SGD(ref.parameters(), lr=0.1, momentum=0.9)
        for k in (0, 1):
            loss(ref, k, 0.5).backward()
        ropt.step()
        ropt.zero_grad()
        for k in (0, 1, 2, 3):
            loss(ref, k, 0.5).backward()
        ropt.step()
        out["ddp_vs_one_process"] = max(float((p - q).abs().max())
                                        for p, q in zip(local.parameters(), ref.parameters()))
    # find_unused_parameters: layer 1 is used on rank 0 only, layer 2 nowhere
    lay = nn.ModuleList([nn.Linear(2, 1, bias=False) for _ in range(3)])
    fu = nn.parallel.DistributedDataParallel(lay, find_unused_parameters=True)
    ones = wgrad.ones(1, 2)
    (lay[0](ones) * (1 + r) + (lay[1](ones) if r == 0 else 0)).sum().backward()
    out["unused"] = [None if m.weight.grad is None else m.weight.grad.tolist() for m in lay]
    flat = wgrad.cat([p.detach().reshape(-1) for p in local.parameters()])
    out["params"] = [flat.real.tolist(), flat.imag.tolist()]
    print("JSON" + json.dumps(out))
    dist.destroy_process_group()
''')


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_two_processes_equal_one():
    port = str(_free_port())
    env = dict(os.environ, MASTER_ADDR="127.0.0.1", MASTER_PORT=port, WORLD_SIZE="2",
               PYTHONPATH=os.pathsep.join([ROOT] + [p for p in (os.environ.get("PYTHONPATH"),)
                                                    if p]))
    env.pop("XLA_FLAGS", None)
    procs = [subprocess.Popen([sys.executable, "-c", WORKER], env=dict(env, RANK=str(r)),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for r in range(2)]
    outs = []
    try:
        for p in procs:
            so, se = p.communicate(timeout=240)
            assert p.returncode == 0, so + se
            outs.append(json.loads(so.split("JSON", 1)[1]))
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    a, b = outs
    assert (a["rank"], b["rank"], a["world"]) == (0, 1, 2)
    for o in outs:
        assert o["sum"] == [3.0, 4.0] and o["avg"] == [1.5, 2.0]
        assert o["max"] == [4.0, 2.0] and o["prod"] == [6.0]
        assert o["csum"] == [2.0, 3.0]
        assert o["bcast"] == [1.0, 1.0, 1.0]
        assert o["gather"] == [[0, 0], [1, -1]]
        assert o["gather_into"] == [0.0, 0.0, 1.0, 10.0]
    # reverse registration order, buckets of 209 bytes: the last layer's bias (32 B) and
    # weight (256 B) close the first bucket, the first layer's bias and weight the second
    assert a["buckets"] == b["buckets"] == [[3, 2], [1, 0]]
    # averaged over both ranks (rank 1 adds zeros for the layer it did not use); the layer
    # no rank used keeps .grad None
    assert a["unused"] == b["unused"] == [[[1.5, 1.5]], [[0.5, 0.5]], None]
    assert a["params"] == b["params"]                 # the replicas stay identical
    assert a["ddp_vs_one_process"] < 1e-12
