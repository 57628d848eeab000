"""Engine semantics on one thread: order, pruning, reentrancy, faults, deep graphs, jit."""
import contextlib
import math
import threading
import traceback
import weakref

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from wgrad._autograd import engine as E


def leaf(*vals):
    return wgrad.tensor([float(v) for v in vals] or [1.0, 1.0], dtype=wgrad.float64,
                        requires_grad=True)


# -- single-thread semantics -----------------------------------------------------------
def test_hook_order_matches_torch():
    # order observed with torch 2.13 on the same program
    ev = []
    x = leaf()
    y = x * 2
    y.register_hook(lambda g: ev.append("tensor_hook"))
    y.retain_grad()
    y.grad_fn.register_prehook(lambda g: ev.append(("pre", y.grad is not None)))
    y.grad_fn.register_hook(lambda gi, go: ev.append("post"))
    x.register_hook(lambda g: ev.append("leaf_hook"))
    x.register_post_accumulate_grad_hook(lambda t: ev.append(("post_acc", t.grad is not None)))
    y.sum().backward()
    assert ev == ["tensor_hook", ("pre", True), "post", "leaf_hook", ("post_acc", True)]


def test_ready_queue_runs_newer_sequence_nr_first():
    ev = []
    x = leaf()
    a, b = x * 2, x * 3
    a.grad_fn.register_prehook(lambda g: ev.append("a"))
    b.grad_fn.register_prehook(lambda g: ev.append("b"))
    (a + b).sum().backward()
    assert ev == ["b", "a"]  # torch: ['b', 'a']
    assert x.grad.tolist() == [5.0, 5.0]


def test_ready_queue_order_depth_then_sequence_nr():
    q = E.ReadyQueue(threaded=False)
    shallow, deep = E.GraphTask(False, False, depth=0), E.GraphTask(False, False, depth=3)
    old, new = wgrad.autograd.graph.Node(), wgrad.autograd.graph.Node()
    acc = wgrad._autograd.graph.AccumulateGrad(leaf())
    for t, n in [(shallow, old), (shallow, acc), (deep, old), (shallow, new), (deep, new)]:
        q.push(E.NodeTask(t, n, None))
    wake = E.NodeTask(shallow, None, None)
    q.push(wake, wakeup=True)
    got = [q.pop() for _ in range(6)]
    assert got[0] is wake
    assert [(t.graph_task.depth, t.node) for t in got[1:]] == [
        (3, new), (3, old), (0, acc), (0, new), (0, old)]


def test_grad_inputs_prunes_unneeded_nodes():
    ran = []
    x, w = leaf(1, 2), leaf(3, 4)
    y = x * 2
    z = w.sin()
    z.grad_fn.register_prehook(lambda g: ran.append("sin"))
    y.grad_fn.register_prehook(lambda g: ran.append("mul"))
    (gx,) = wgrad.autograd.grad((y + z).sum(), x)
    assert gx.tolist() == [2.0, 2.0]
    assert ran == ["mul"]
    assert w.grad is None


def test_backward_inputs_only_accumulates_into_inputs():
    x, w = leaf(1, 2), leaf(3, 4)
    (x * w).sum().backward(inputs=[x])
    assert x.grad.tolist() == [3.0, 4.0] and w.grad is None


def test_multithreading_switch_is_a_thread_local_context_manager():
    assert E.is_multithreading_enabled()
    with wgrad.autograd.set_multithreading_enabled(False):
        assert not E.is_multithreading_enabled()
        seen = []
        t = threading.Thread(target=lambda: seen.append(E.is_multithreading_enabled()))
        t.start()
        t.join(10)
        assert seen == [True]
        x = leaf()
        (x * 2).sum().backward()
        assert x.grad.tolist() == [2.0, 2.0]
    assert E.is_multithreading_enabled()
    wgrad.autograd.set_multithreading_enabled(False)
    try:
        assert not E.is_multithreading_enabled()
    finally:
        wgrad.autograd.set_multithreading_enabled(True)


# -- reentrant backward ----------------------------------------------------------------
def _reentrant(depth, leaves, threads, grad_modes):
    """Backward whose hook calls backward, ``depth`` levels deep."""
    x = leaf(1, 1)
    leaves.append(x)
    y = x * 2
    if depth > 0:
        def hook(g):
            with wgrad.enable_grad():
                _reentrant(depth - 1, leaves, threads, grad_modes)
                grad_modes.append(wgrad.is_grad_enabled())
            grad_modes.append(wgrad.is_grad_enabled())
        y.grad_fn.register_prehook(hook)
    y.grad_fn.register_hook(lambda gi, go: threads.add(threading.current_thread().name))
    y.sum().backward()


@pytest.mark.parametrize("depth", [2000, 200])
def test_reentrant_backward_deep(depth):
    leaves, threads, modes = [], set(), []
    _reentrant(depth, leaves, threads, modes)
    assert len(leaves) == depth + 1
    assert all(x.grad.tolist() == [2.0, 2.0] for x in leaves)
    # past MAX_DEPTH nested levels the work continues on pool threads; the first levels
    # nest on the thread that runs the nodes: the caller's, or a GPU's device worker
    dev = wgrad.get_default_device()
    first = threading.current_thread().name if dev.type == "cpu" else f"wgrad-autograd-{dev}"
    assert first in threads
    assert any(n.startswith("wgrad-autograd-reentrant") for n in threads)
    # inside enable_grad the mode stays True; after it, the outer task's mode (False)
    assert modes == [True, False] * depth
    assert wgrad.is_grad_enabled()


def test_reentrant_backward_with_create_graph_restores_grad_mode():
    modes = []
    x = leaf(1, 2)
    y = x * x

    def hook(g):
        w = leaf(1)
        (w * 3).sum().backward()
        modes.append((wgrad.is_grad_enabled(), w.grad.tolist()))
    y.register_hook(hook)
    (gx,) = wgrad.autograd.grad(y.sum(), x, create_graph=True)
    assert modes == [(True, [3.0])]
    assert gx.requires_grad and gx.tolist() == [2.0, 4.0]


# -- faults ----------------------------------------------------------------------------
class Boom(ValueError):
    pass


def _frames(exc):
    return [f.name for f in traceback.extract_tb(exc.__traceback__)]


def test_exception_in_hook_reaches_caller_with_traceback():
    x = leaf()

    def bad_hook(g):
        raise Boom("hook exploded")
    h = x.register_hook(bad_hook)
    with pytest.raises(Boom, match="hook exploded") as info:
        (x * 2).sum().backward()
    assert "bad_hook" in _frames(info.value)
    h.remove()
    (x * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_exception_stops_scheduling():
    ran = []
    x = leaf()
    a = x * 2
    b = a * 3

    def bad(g):
        raise Boom("stop")
    b.grad_fn.register_prehook(bad)
    a.grad_fn.register_prehook(lambda g: ran.append("a"))
    with pytest.raises(Boom, match="stop"):
        b.sum().backward()
    assert ran == [] and x.grad is None


def test_exception_on_reentrant_pool_thread_reaches_caller():
    def nest(depth):
        x = leaf()
        y = x * 2

        def hook(g):
            with wgrad.enable_grad():
                nest(depth - 1)
        if depth == 0:
            def deepest_hook(g):
                raise Boom(f"from {threading.current_thread().name}")
            y.grad_fn.register_prehook(deepest_hook)
        else:
            y.grad_fn.register_prehook(hook)
        y.sum().backward()
    with pytest.raises(Boom, match="from wgrad-autograd-reentrant") as info:
        nest(E.MAX_DEPTH + 5)
    assert "deepest_hook" in _frames(info.value)
    x = leaf()
    (x * 4).sum().backward()
    assert x.grad.tolist() == [4.0, 4.0]


def test_backward_twice_without_retain_graph():
    x = leaf()
    y = x ** 2
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
        y.sum().backward()


# -- deep graphs -----------------------------------------------------------------------
def test_100k_node_chain_backward_and_free():
    x = wgrad.tensor([0.5], dtype=wgrad.float64, requires_grad=True)
    y = x
    for _ in range(100_000):
        y = y * 1.0
    y = y.sin()  # saves its input: the graph holds tensors, not just nodes
    top, bottom = weakref.ref(y.grad_fn), weakref.ref(x._gradient_edge()[0])
    # retain_graph keeps every saved value, so freeing below walks the whole chain
    y.sum().backward(retain_graph=True)
    assert x.grad.tolist() == [math.cos(0.5)]
    del y
    assert top() is None and bottom() is None


# -- tracing ---------------------------------------------------------------------------
def test_tracer_runs_synchronously_inside_jit():
    threads = []

    def f(a):
        x = wgrad.Tensor._make(a).requires_grad_()
        y = (x.sin() * x).sum()
        y.grad_fn.register_prehook(lambda g: threads.append(threading.current_thread()))
        (g,) = wgrad.autograd.grad(y, x)
        return g._data
    a = jnp.array([0.3, 1.2])
    got = jax.jit(f)(a)
    want = jax.grad(lambda v: jnp.sum(jnp.sin(v) * v))(a)
    np.testing.assert_allclose(got, want, rtol=1e-6)
    assert threads == [threading.current_thread()]
    assert E._is_tracer(wgrad.Tensor._make(a)) is False


@pytest.mark.parametrize("lazy", [False, True])
@pytest.mark.parametrize("how", ["grad", "backward-inputs", "create-graph", "grad-a",
                                 "backward-all"])
def test_a_missing_derivative_not_asked_for_is_no_error(how, lazy):
    """torch's task_should_compute_output: igamma has no derivative in its first input;
    grad()/backward(inputs=) of the second alone works (also inside a lazy group), asking
    for the first raises torch's error."""
    torch = pytest.importorskip("torch")

    def run(T):
        a = T.tensor([1.5, 2.5], dtype=T.float64, requires_grad=True)
        x = T.tensor([0.7, 1.2], dtype=T.float64, requires_grad=True)
        try:
            y = (T.igamma(a, x) * 2).sum()
            if how == "backward-inputs":
                y.backward(inputs=[x])
                return x.grad.tolist()
            if how == "backward-all":
                y.backward()
                return "no error"
            wrt = [a] if how == "grad-a" else [x]
            return T.autograd.grad(y, wrt, create_graph=how == "create-graph")[0].tolist()
        except NotImplementedError as e:
            return str(e)
    with (wgrad.lazy() if lazy else contextlib.nullcontext()):
        w = run(wgrad)
    t = run(torch)
    if isinstance(t, str):
        assert w == t
    else:
        np.testing.assert_allclose(w, t, rtol=1e-12)
