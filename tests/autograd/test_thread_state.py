"""Thread-local state around backward (NOTE [Thread-local state in backward]): each node
runs with the caller's state captured when backward started; nothing set inside a
backward pass outlives it. Expected values are PyTorch 2.13's for the same programs."""
import gc
import threading
import weakref

import pytest

import wgrad
from wgrad._autograd.graph import _hooks_state
from wgrad.autograd.graph import disable_saved_tensors_hooks, saved_tensors_hooks


def _leaf():
    return wgrad.tensor([1.0, 2.0], requires_grad=True)


def test_context_entered_by_an_unpack_hook_does_not_leak():
    def scope():
        def unpack(t):
            weak_ctx().__enter__()   # entered during backward, never exited
            return t
        ctx = saved_tensors_hooks(lambda t: t, unpack)
        weak_ctx = weakref.ref(ctx)
        x = _leaf()
        with ctx:
            x.sin().sum().backward()
        return weakref.ref(unpack)

    gc.disable()
    try:
        ref = scope()
        assert ref() is None            # nothing holds the hook: the stack was restored
    finally:
        gc.enable()
    assert _hooks_state().stack == []
    x = _leaf()                         # a later backward runs no stale hook
    (x * x).sum().backward()
    assert x.grad.tolist() == [2.0, 4.0]


def test_grad_mode_set_by_a_hook_lasts_only_for_its_node():
    x = _leaf()
    modes = []

    def hook(g):
        modes.append(wgrad.is_grad_enabled())
        wgrad.set_grad_enabled(False)   # the function form: no context to undo it

    a = x * 2
    a.register_hook(hook)
    b = a * 3
    b.register_hook(hook)
    g, = wgrad.autograd.grad(b.sum(), x, create_graph=True)
    assert modes == [True, True]        # the second node saw create_graph's mode again
    assert not g.requires_grad          # the last node ran after its hook turned it off
    assert wgrad.is_grad_enabled()


def test_inference_mode_entered_in_a_hook_does_not_outlive_backward():
    x = _leaf()
    y = x * 2
    mode = wgrad.inference_mode()
    y.register_hook(lambda g: mode.__enter__())
    y.sum().backward()
    assert not wgrad.is_inference_mode_enabled()
    assert x.grad.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("caller_grad", [True, False])
def test_nodes_run_in_create_graph_mode_and_the_caller_mode_is_restored(caller_grad):
    x = _leaf()
    y = x * 2
    seen = []
    y.register_hook(lambda g: seen.append(wgrad.is_grad_enabled()))
    z = y.sum()
    with wgrad.set_grad_enabled(caller_grad):
        wgrad.autograd.grad(z, x, create_graph=True, retain_graph=True)
        assert wgrad.is_grad_enabled() is caller_grad
        wgrad.autograd.grad(z, x)
        assert wgrad.is_grad_enabled() is caller_grad
    assert seen == [True, False]


def test_callers_saved_tensor_hooks_pack_what_a_create_graph_backward_saves():
    x = _leaf()
    y = (x * x * x).sum()
    packed = []
    with saved_tensors_hooks(lambda t: (packed.append(1), t)[1], lambda t: t):
        g, = wgrad.autograd.grad(y, x, create_graph=True)
    assert len(packed) == 6             # torch 2.13 packs six tensors here
    g.sum().backward()
    assert x.grad.tolist() == [6.0, 12.0]


def test_disabled_saved_tensor_hooks_are_captured():
    x = _leaf()
    y = x * 2
    errors = []

    def hook(g):
        try:
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
        except RuntimeError as e:
            errors.append(str(e))

    y.register_hook(hook)
    s = y.sum()
    with disable_saved_tensors_hooks("nope here"):
        s.backward()
    assert errors == ["nope here"]
    assert _hooks_state().disabled_msg is None


def test_state_of_one_thread_never_reaches_another():
    """A thread's backward runs with its own captured hooks, not another thread's."""
    barrier = threading.Barrier(2, timeout=30)
    counts = {}

    def run(name, use_hooks):
        x = _leaf()
        y = (x * x).sum()
        packed = []
        barrier.wait()
        if use_hooks:
            with saved_tensors_hooks(lambda t: (packed.append(1), t)[1], lambda t: t):
                wgrad.autograd.grad(y, x, create_graph=True)
        else:
            wgrad.autograd.grad(y, x, create_graph=True)
        counts[name] = len(packed)

    ts = [threading.Thread(target=run, args=("hooks", True)),
          threading.Thread(target=run, args=("plain", False))]
    [t.start() for t in ts]
    [t.join(60) for t in ts]
    assert not any(t.is_alive() for t in ts)
    assert counts["plain"] == 0 and counts["hooks"] > 0
