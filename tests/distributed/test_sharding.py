"""Sharded tensors on 4 virtual CPU devices: zero-copy interchange, SPMD eager ops,
gradients laid out as their parameters, a compiled data-parallel step equal to one device.
XLA_FLAGS must be set before JAX starts, so every check runs in ONE subprocess that prints
JSON; the tests assert on it."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent('''
    import json, os
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=4"
    import jax, jax.numpy as jnp, numpy as np
    from jax.sharding import NamedSharding, PartitionSpec as P
    import wgrad
    from wgrad import nn
    from wgrad.distributed import DeviceMesh, init_device_mesh
    from wgrad.distributed.tensor import (Replicate, Shard, distribute_module,
                                          distribute_tensor)
    out = {"devices": len(jax.devices())}
    mesh = init_device_mesh("cpu", (4,), mesh_dim_names=("dp",))
    m22 = init_device_mesh("cpu", (2, 2), mesh_dim_names=("a", "b"))
    out["mesh"] = [repr(m22), m22.shape, m22.size(), m22.size("b"), m22.ndim]
    out["mesh_eq"] = DeviceMesh("cpu", [[0, 1], [2, 3]], mesh_dim_names=("a", "b")) == m22
    def err(f):
        try:
            f()
        except Exception as e:
            return [type(e).__name__, str(e)]
    out["err_mesh"] = err(lambda: init_device_mesh("cpu", (8,)))
    out["err_placements"] = err(lambda: distribute_tensor(wgrad.ones(4), mesh,
                                                          [Shard(0), Shard(0)]))
    def spec(t):  # the PartitionSpec, one entry per dimension
        s = list(t.jax().sharding.spec)
        return str(s + [None] * (t.ndim - len(s)))
    x = wgrad.arange(32.0).reshape(8, 4)
    out["specs"] = [spec(distribute_tensor(x, mesh, [Shard(0)])),
                    spec(distribute_tensor(x, mesh, [Shard(-1)])),
                    spec(distribute_tensor(x, mesh, [Replicate()])),
                    spec(distribute_tensor(x, m22, [Shard(0), Shard(1)])),
                    spec(distribute_tensor(x, m22, [Shard(0), Shard(0)]))]
    # from_jax keeps a sharded array as is
    a = jax.device_put(jnp.arange(8.0), NamedSharding(mesh.jax_mesh, P("dp")))
    t = wgrad.from_jax(a, requires_grad=True)
    out["zero_copy"] = t.jax() is a and t.jax().sharding == a.sharding
    out["device"] = str(t.device)
    out["like"] = spec(wgrad.ones_like(t))

    # eager SPMD: values as on one device, results sharded over the mesh, gradients laid
    # out as their leaves (sharded, replicated, single-device)
    wgrad.manual_seed(0)
    X = wgrad.randn(8, 3, dtype=wgrad.complex128)
    W = wgrad.randn(3, 2, dtype=wgrad.complex128)
    V = wgrad.randn(8, 2, dtype=wgrad.complex128)
    def eager(x, w, v, w1):
        y = (x @ w).tanh() * v
        loss = (y.abs() ** 2).sum() + (v.sum(0) * 2).abs().sum() + (x @ w1).abs().sum()
        loss.backward()
        return y, loss
    leaves = [t.detach().clone().requires_grad_() for t in (W, V, W)]  # no aliases
    y0, l0 = eager(X, *leaves)
    xs = distribute_tensor(X, mesh, [Shard(0)])
    ws = distribute_tensor(W, mesh, [Replicate()]).requires_grad_()
    vs = distribute_tensor(V, mesh, [Shard(0)]).requires_grad_()
    w1 = W.detach().clone().requires_grad_()            # on one device, uncommitted
    y1, l1 = eager(xs, ws, vs, w1)
    for ps in (leaves, [ws, vs, w1]):   # an eager optimizer step on each
        wgrad.optim.SGD(ps, lr=0.1, momentum=0.9).step()
    out["eager_err"] = max(float((y0 - y1).abs().max()), abs(l0.item() - l1.item()),
                           *[float((a.grad - b.grad).abs().max())
                             for a, b in zip(leaves, (ws, vs, w1))],
                           *[float((a - b).abs().max()) for a, b in zip(leaves, (ws, vs, w1))])
    out["eager_step_specs"] = [spec(ws), spec(vs)]
    out["eager_specs"] = [spec(y1), spec(ws.grad), spec(vs.grad),
                          type(w1.grad.jax().sharding).__name__]

    # a compiled training step (complex MLP, SGD), batch sharded, params replicated or split
    def make():
        wgrad.manual_seed(0)
        return nn.Sequential(nn.Linear(3, 8, dtype=wgrad.complex128), nn.Tanh(),
                             nn.Linear(8, 2, dtype=wgrad.complex128))
    def train(model, x, y):
        opt = wgrad.optim.SGD(model.parameters(), lr=0.1)
        for p in model.parameters():    # a .grad on entry to every call: one trace
            p.grad = wgrad.zeros_like(p)
        @wgrad.compile
        def step(x, y):
            opt.zero_grad(set_to_none=False)
            loss = ((model(x) - y).abs() ** 2).mean()
            loss.backward()
            opt.step()
            return loss
        return [step(x, y).item() for _ in range(2)], model, step
    ys = distribute_tensor(V, mesh, [Shard(0)])
    def shard_first(name, m, mesh):   # the first layer's weight split by rows
        for k, p in list(m._parameters.items()):
            pl = [Shard(0)] if name == "0" and k == "weight" else [Replicate()]
            p.data = distribute_tensor(p.detach(), mesh, pl)
    l0, m0, step0 = train(make(), X, V)
    for how, fn in (("replicated", None), ("sharded", shard_first)):
        l1, m1, step = train(distribute_module(make(), mesh, fn), xs, ys)
        out[how] = [max(abs(a - b) for a, b in zip(l0, l1)),
                    max(float((p - q).abs().max())
                        for p, q in zip(m0.parameters(), m1.parameters())),
                    [spec(p) for p in m1.parameters()], [spec(p.grad) for p in m1.parameters()],
                    [len(step._cache), len(step0._cache)], spec(l1 and step(xs, ys))]
    print("JSON" + json.dumps(out))
''')


@pytest.fixture(scope="module")
def result():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [root] + [p for p in (os.environ.get("PYTHONPATH"),) if p]))
    env.pop("XLA_FLAGS", None)
    r = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                       text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    return json.loads(r.stdout.split("JSON", 1)[1])


def test_mesh(result):
    assert result["devices"] == 4
    assert result["mesh"] == ["DeviceMesh('cpu', [[0, 1], [2, 3]], mesh_dim_names=('a', 'b'))",
                              [2, 2], 4, 2, 2]
    assert result["mesh_eq"]
    assert result["err_mesh"][0] == "RuntimeError" and "needs 8 devices" in result["err_mesh"][1]
    assert result["err_placements"] == [
        "ValueError", "`placements` must have the same length as `device_mesh.ndim`! Found "
                      "placements length: 2, and device_mesh.ndim: 1."]


def test_distribute_tensor_placements(result):
    assert result["specs"] == ["['dp', None]", "[None, 'dp']", "[None, None]",
                               "['a', 'b']", "[('a', 'b'), None]"]


def test_from_jax_keeps_a_sharded_array(result):
    assert result["zero_copy"]
    assert result["device"] == "cpu"
    assert result["like"] == "['dp']"


def test_eager_ops_are_spmd_and_gradients_keep_layouts(result):
    assert result["eager_err"] < 1e-12
    assert result["eager_step_specs"] == ["[None, None]", "['dp', None]"]
    # the uncommitted single-device leaf: its gradient as XLA laid it out (replicated)
    assert result["eager_specs"] == ["['dp', None]", "[None, None]", "['dp', None]",
                                     "NamedSharding"]


@pytest.mark.parametrize("how", ["replicated", "sharded"])
def test_compiled_data_parallel_step_equals_one_device(result, how):
    loss_err, param_err, specs, grad_specs, traces, loss_spec = result[how]
    assert loss_err < 1e-6 and param_err < 1e-6
    assert specs[0] == grad_specs[0] == ("['dp', None]" if how == "sharded" else "[None, None]")
    assert specs[1:] == grad_specs[1:] == ["[None]", "[None, None]", "[None]"]
    assert traces[0] == traces[1]   # traced as often as on one device: one SPMD program
    assert loss_spec == "[]"    # the loss: a scalar replicated over the mesh
