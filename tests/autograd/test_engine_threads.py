"""Engine under threads: concurrent backward, shared graphs, device workers, faults.

Every join has a timeout; a thread still alive afterwards fails the test (a hang).
"""
import os
import subprocess
import sys
import textwrap
import threading

import pytest

import wgrad

TIMEOUT = 60


def run_threads(fn, n):
    """Run ``fn(i)`` on ``n`` threads released together; return (results, errors)."""
    barrier = threading.Barrier(n)
    results, errors = [None] * n, [None] * n

    def body(i):
        barrier.wait(TIMEOUT)
        try:
            results[i] = fn(i)
        except BaseException as e:  # collected and checked by the test
            errors[i] = e
    threads = [threading.Thread(target=body, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads), "a backward thread hung"
    return results, errors


def test_32_threads_x_20_backward_into_one_leaf():
    x = wgrad.tensor([1.0, -2.0, 3.0], dtype=wgrad.float64, requires_grad=True)
    coef = wgrad.tensor([0.5, 1.0, 2.0], dtype=wgrad.float64)

    def work(i):
        for _ in range(20):
            (x * coef).sin().sum().backward()
    _, errors = run_threads(work, 32)
    assert errors == [None] * 32
    single = wgrad.autograd.grad((x * coef).sin().sum(), x)[0]
    assert x.grad.tolist() == pytest.approx((single * 640).tolist(), rel=1e-12)


def test_8_threads_of_grad_get_their_own_result():
    x = wgrad.tensor([0.5, 1.5], dtype=wgrad.float64, requires_grad=True)

    def work(i):
        out = []
        for _ in range(10):
            (g,) = wgrad.autograd.grad((x * x * float(i)).sum(), x)
            out.append(g.tolist())
        return out
    results, errors = run_threads(work, 8)
    assert errors == [None] * 8
    for i, r in enumerate(results):
        assert r == [[2 * 0.5 * i, 2 * 1.5 * i]] * 10
    assert x.grad is None


@pytest.mark.parametrize("round_", range(5))
def test_shared_graph_without_retain_graph_fails_in_all_but_one_thread(round_):
    x = wgrad.ones(5, 5, dtype=wgrad.float64, requires_grad=True)
    y = x + x ** 2  # PowBackward0 saves x: shared by every thread below

    def work(i):
        y.sum().backward()
    _, errors = run_threads(work, 8)
    failed = [e for e in errors if e is not None]
    assert len(failed) == 7
    for e in failed:
        assert isinstance(e, RuntimeError) and "Specify retain_graph=True" in str(e)


def test_shared_graph_with_retain_graph_succeeds_everywhere():
    x = wgrad.ones(3, dtype=wgrad.float64, requires_grad=True)
    y = x + x ** 2

    def work(i):
        y.sum().backward(retain_graph=True)
    _, errors = run_threads(work, 8)
    assert errors == [None] * 8
    assert x.grad.tolist() == [8 * 3.0] * 3


def test_any_multi_grad_hook_fires_once_per_concurrent_call():
    # each of several backward calls running at once fires an "any" hook exactly once,
    # however their hooks interleave (a call's id must stay remembered while others run)
    ts = [wgrad.rand(2, requires_grad=True) for _ in range(4)]
    count, lock = [0], threading.Lock()

    def hook(grad):
        with lock:
            count[0] += 1
    wgrad.autograd.graph.register_multi_grad_hook(ts, hook, mode="any")
    out = (ts[1] * ts[2]).sum()
    start = threading.Barrier(8)

    def work():
        start.wait()
        for _ in range(5):
            out.backward(inputs=(ts[1], ts[2]), retain_graph=True)
    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert count[0] == 40


def test_failure_in_one_thread_leaves_others_alone():
    x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)

    def work(i):
        y = x * 2
        if i == 3:
            def hook(g):
                raise KeyError("thread 3 hook")
            y.register_hook(hook)
        y.sum().backward()
    _, errors = run_threads(work, 6)
    assert [i for i, e in enumerate(errors) if e is not None] == [3]
    assert isinstance(errors[3], KeyError) and "thread 3 hook" in str(errors[3])
    assert x.grad.tolist() == [10.0, 10.0]


# -- device workers on forced host devices (a subprocess: XLA_FLAGS must precede jax) ----
DEVICE_SCRIPT = textwrap.dedent('''
    import threading, traceback
    import jax, jax.numpy as jnp
    import wgrad
    from wgrad._autograd import engine as E
    assert len(jax.devices()) == 3, jax.devices()
    main = threading.current_thread().name
    ran = {}

    def spy(name, t):
        t.grad_fn.register_prehook(
            lambda g: ran.setdefault(name, set()).add(threading.current_thread().name))

    def wide():
        # independent branches, one per device, joined only by the GraphRoot
        ran.clear()
        x0 = wgrad.tensor([0.25, 0.5], dtype=wgrad.float64, requires_grad=True)
        x1 = wgrad.tensor([0.5, 1.0], dtype=wgrad.float64, device="cpu:1", requires_grad=True)
        x2 = wgrad.tensor([2.0, 3.0], dtype=wgrad.float64, device="cpu:2", requires_grad=True)
        a = (x1 * 2).sin(); spy("sin1", a)
        la = a.sum(); spy("sum1", la)
        b = x2 * 3; spy("mul2", b)
        c = x0.exp(); spy("exp0", c)
        return (x0, x1, x2), [la, b.sum(), c.sum()]

    def run(losses):
        # explicit root gradients on each loss's device
        wgrad.autograd.backward(losses, [wgrad.ones((), dtype=wgrad.float64, device=str(l.device))
                                         for l in losses])

    # 1. off by default: host devices are plain CPU, everything on the caller thread
    xs, losses = wide(); run(losses)
    assert all(v == {main} for v in ran.values()), ran
    # 2. switched on: cpu:1 / cpu:2 nodes run on their device worker
    E.set_device_workers_for_host_devices(True)
    (x0, x1, x2), losses = wide(); run(losses)
    assert ran["sin1"] == ran["sum1"] == {"wgrad-autograd-cpu:1"}, ran
    assert ran["mul2"] == {"wgrad-autograd-cpu:2"}, ran
    assert ran["exp0"] == {main}, ran
    import numpy as np
    v0, v1 = np.array([0.25, 0.5]), np.array([0.5, 1.0])
    np.testing.assert_allclose(x0.grad.numpy(), np.exp(v0))
    np.testing.assert_allclose(x1.grad.numpy(), 2 * np.cos(2 * v1))
    np.testing.assert_allclose(x2.grad.numpy(), [3.0, 3.0])
    assert str(x1.grad.device) == "cpu:1" and str(x2.grad.device) == "cpu:2"
    workers = {t.name: t for t in threading.enumerate() if t.name.startswith("wgrad-autograd-cpu")}
    assert sorted(workers) == ["wgrad-autograd-cpu:1", "wgrad-autograd-cpu:2"], workers
    print("OK devices")

    # 3. grad() with device workers returns the captured gradients
    (x0, x1, x2), losses = wide()
    g1, g2 = wgrad.autograd.grad(losses, (x1, x2), [wgrad.ones((), dtype=wgrad.float64,
                                                               device=str(l.device))
                                                    for l in losses])
    np.testing.assert_allclose(g1.numpy(), 2 * np.cos(2 * v1))
    np.testing.assert_allclose(g2.numpy(), [3.0, 3.0])
    assert x1.grad is None
    print("OK grad")

    # 4. an exception on a device worker reaches the caller; the worker survives
    (x0, x1, x2), losses = wide()
    def worker_hook(g):
        raise ZeroDivisionError("on " + threading.current_thread().name)
    x1.register_hook(worker_hook)
    try:
        run(losses)
    except ZeroDivisionError as e:
        assert "on wgrad-autograd-cpu:1" in str(e), e
        assert "worker_hook" in [f.name for f in traceback.extract_tb(e.__traceback__)]
    else:
        raise AssertionError("no exception")
    (x0, x1, x2), losses = wide(); run(losses)
    assert ran["sin1"] == {"wgrad-autograd-cpu:1"}
    assert workers["wgrad-autograd-cpu:1"].is_alive()
    print("OK worker error")

    # 5. set_multithreading_enabled(False): every node on the caller thread
    with wgrad.autograd.set_multithreading_enabled(False):
        xs, losses = wide(); run(losses)
    assert all(v == {main} for v in ran.values()), ran
    print("OK multithreading off")

    # 6. several threads driving the same device workers at once
    errs = []
    def many():
        try:
            for _ in range(5):
                (x0, x1, x2), losses = wide(); run(losses)
                np.testing.assert_allclose(x1.grad.numpy(), 2 * np.cos(2 * v1))
        except BaseException as e:
            errs.append(e)
    ts = [threading.Thread(target=many) for _ in range(4)]
    [t.start() for t in ts]; [t.join(60) for t in ts]
    assert not any(t.is_alive() for t in ts) and not errs, errs
    print("OK concurrent")

    # 7. inside jax.jit the engine runs synchronously on the caller thread
    def f(a):
        x = wgrad.Tensor._make(a).requires_grad_()
        y = (x * x).sum(); spy("traced", y)
        return wgrad.autograd.grad(y, x)[0]._data
    ran.clear()
    out = jax.jit(f)(jnp.array([1.0, 2.0]))
    assert out.tolist() == [2.0, 4.0] and ran["traced"] == {main}, ran
    print("OK tracer")

    # 8. once backward returns, no device worker keeps the graph (and what it saved) alive
    import gc, weakref
    E.set_device_workers_for_host_devices(True)
    for how in ("backward", "grad"):
        x = wgrad.tensor(1.0 + 1.0j, dtype=wgrad.complex128, device="cpu:1",
                         requires_grad=True)
        y = (x * x).abs()
        ref = weakref.ref(y.grad_fn)
        one = wgrad.ones((), dtype=wgrad.float64, device="cpu:1")
        if how == "backward":
            y.backward(one)
        else:
            wgrad.autograd.grad(y, x, one)
        del y
        gc.collect()
        assert ref() is None, how + ": the graph outlived backward on a device worker"
    # ... nor the saved-tensor hooks its task installed there
    def scope():
        def unpack(t):
            return t
        with wgrad.autograd.graph.saved_tensors_hooks(lambda t: t, unpack):
            x = wgrad.tensor([2.0], device="cpu:1", requires_grad=True)
            (x * x).sum().backward(wgrad.ones((), device="cpu:1"))
        return weakref.ref(unpack)
    ref = scope()
    gc.collect()
    assert ref() is None, "a device worker kept the task's saved-tensor hooks"
    print("OK freed")
''')


def test_device_queues_on_forced_host_devices():
    env = dict(os.environ)
    env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") +
                        " --xla_force_host_platform_device_count=3").strip()
    env["JAX_PLATFORMS"] = "cpu"
    env.pop("WGRAD_HOST_DEVICE_WORKERS", None)
    env["JAX_ENABLE_X64"] = "1"
    p = subprocess.run([sys.executable, "-c", DEVICE_SCRIPT], env=env, capture_output=True,
                       text=True, timeout=240)
    assert p.returncode == 0, p.stdout + p.stderr
    for marker in ["devices", "grad", "worker error", "multithreading off", "concurrent",
                   "tracer"]:
        assert "OK " + marker in p.stdout


def test_deep_reentrant_backward_from_several_threads():
    def nest(depth, leaves):
        x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)
        leaves.append(x)
        y = x * 2
        if depth:
            def hook(g):
                with wgrad.enable_grad():
                    nest(depth - 1, leaves)
            y.grad_fn.register_prehook(hook)
        y.sum().backward()

    def work(i):
        leaves = []
        nest(150, leaves)
        return leaves
    results, errors = run_threads(work, 4)
    assert errors == [None] * 4
    for leaves in results:
        assert len(leaves) == 151 and all(x.grad.tolist() == [2.0, 2.0] for x in leaves)
    assert any(t.name.startswith("wgrad-autograd-reentrant") for t in threading.enumerate())
