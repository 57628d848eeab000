"""wgrad.utils.checkpoint against torch.utils.checkpoint: gradients, reruns (early stop,
nesting, grad() and unpacks outside backward), RNG replay, warnings and errors."""
import contextlib
import warnings

import numpy as np
import pytest

import wgrad
import wgrad.utils.checkpoint as wck

torch = pytest.importorskip("torch")
import torch.utils.checkpoint as tck  # noqa: E402


def _run(lib, ck, use_reentrant, fn_of):
    """Gradient and the number of runs of a checkpointed function, for one library."""
    x = lib.tensor([0.5, 1.5, 2.0], dtype=lib.float64, requires_grad=True)
    runs = [0]
    fn = fn_of(lib, runs)
    y = ck.checkpoint(fn, x, use_reentrant=use_reentrant)
    y.sum().backward()
    return np.asarray(x.grad.detach().numpy()), runs[0]


def _chain(lib, runs):
    def fn(t):
        runs[0] += 1
        return (t.sin().exp() * t).cos()
    return fn


def _clone_last(lib, runs):
    # clone saves nothing: with early stop the rerun ends before it
    def fn(t):
        u = t.sin().cos()
        runs[0] += 1
        return u.clone()
    return fn


@pytest.mark.parametrize("use_reentrant", [True, False])
@pytest.mark.parametrize("fn_of", [_chain, _clone_last])
def test_gradients_and_reruns_match_torch(use_reentrant, fn_of):
    g, n = _run(wgrad, wck, use_reentrant, fn_of)
    tg, tn = _run(torch, tck, use_reentrant, fn_of)
    np.testing.assert_allclose(g, tg, rtol=1e-12)
    assert n == tn


@pytest.mark.parametrize("early_stop", [True, False])
def test_early_stop_switch(early_stop):
    counts = []
    for lib, ck in ((wgrad, wck), (torch, tck)):
        runs = [0]
        x = lib.tensor([1.0], requires_grad=True)
        with ck.set_checkpoint_early_stop(early_stop):
            y = ck.checkpoint(_clone_last(lib, runs), x, use_reentrant=False)
        y.sum().backward()
        counts.append(runs[0])
    assert counts[0] == counts[1] == (1 if early_stop else 2)


@pytest.mark.parametrize("lib,ck", [(wgrad, wck), (torch, tck)])
def test_grad_nested_and_kwargs(lib, ck):
    a = lib.tensor([0.3, 0.7], dtype=lib.float64, requires_grad=True)
    b = lib.tensor(3.0, dtype=lib.float64, requires_grad=True)

    def inner(t, scale=None):
        return t.sin().exp().sin() * scale

    def outer(t):
        return ck.checkpoint(inner, t, scale=b, use_reentrant=False) * 2

    out = ck.checkpoint(outer, a, use_reentrant=False)
    got = lib.autograd.grad(out.sum(), (a, b))
    want = lib.autograd.grad((inner(a, b) * 2).sum(), (a, b))
    for g, w in zip(got, want):
        assert lib.allclose(g, w)


def test_unpack_outside_backward_reruns_and_frees():
    for lib, ck in ((wgrad, wck), (torch, tck)):
        runs = [0]

        def fn(t):
            runs[0] += 1
            return (t * t).exp()
        a = lib.ones(3, requires_grad=True)
        d = ck.checkpoint(fn, a, use_reentrant=False)
        d.grad_fn._saved_result
        d.grad_fn._saved_result
        d.sum().backward()
        assert runs[0] == 4
        with pytest.raises(RuntimeError, match="after they have already been freed"):
            d.grad_fn._saved_result


def test_saved_tensors_read_twice_in_one_backward():
    msgs = []
    for lib, ck in ((wgrad, wck), (torch, tck)):
        class Twice(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * 2

            @staticmethod
            def backward(ctx, g):
                ctx.saved_tensors
                with pytest.raises(RuntimeError) as e:
                    ctx.saved_tensors
                msgs.append(str(e.value))
                return g * 2
        x = lib.ones(2, requires_grad=True)
        ck.checkpoint(lambda t: Twice.apply(t * 1), x, use_reentrant=False).sum().backward()
    assert msgs[0] == msgs[1]


def test_rng_state_replayed():
    for use_reentrant in (True, False):
        wgrad.manual_seed(0)
        x = wgrad.ones(4, requires_grad=True)
        y = wck.checkpoint(lambda t: t * wgrad.randn(4), x, use_reentrant=use_reentrant)
        after = wgrad.get_rng_state()
        y.sum().backward()
        assert wgrad.allclose(x.grad, y.detach())  # the rerun drew the same numbers
        assert wgrad.get_rng_state() == after      # and the caller's stream is untouched


def test_reentrant_is_invalid_under_grad():
    msgs = []
    for lib, ck in ((wgrad, wck), (torch, tck)):
        a = lib.ones(2, requires_grad=True)
        b = ck.checkpoint(lib.exp, a, use_reentrant=True).sum()
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(b, (a,))
        msgs.append(str(e.value))
        ck.checkpoint(lib.exp, a, use_reentrant=True).sum().backward()  # valid again
    assert msgs[0] == msgs[1]


def _error(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", ["context_fn", "kwargs", "determinism", "no_output_grad"])
def test_errors_match_torch(case):
    def call(lib, ck):
        a = lib.ones(2, requires_grad=True)
        if case == "context_fn":
            return lambda: ck.checkpoint(lib.sin, a, use_reentrant=True,
                                         context_fn=lambda: (None, None))
        if case == "kwargs":
            return lambda: ck.checkpoint(lib.sin, a, use_reentrant=True, foo=1)
        if case == "determinism":
            return lambda: ck.checkpoint(lib.sin, a, use_reentrant=False,
                                         determinism_check="x")

        def f(t):
            with lib.no_grad():
                return t * 2

        def run():
            out = ck.checkpoint(f, a, use_reentrant=True)
            (out + a).sum().backward()
        return run
    got, want = _error(call(wgrad, wck)), _error(call(torch, tck))
    assert got == want and got is not None


def _nondeterministic(lib):
    runs = [0]

    def fn(x):
        runs[0] += 1
        if runs[0] == 1:
            return x.sin().exp()
        return x.sin() * lib.tensor([1.0, 2.0])
    return fn


def test_recomputed_metadata_mismatch():
    msgs = []
    for lib, ck in ((wgrad, wck), (torch, tck)):
        a = lib.ones(1, requires_grad=True)
        with pytest.raises(ck.CheckpointError) as e:
            ck.checkpoint(_nondeterministic(lib), a, use_reentrant=False).sum().backward()
        # up to torch's tips (the last one is about torch.compile)
        msgs.append(str(e.value).replace("torch.", "").replace("wgrad.", "").split("Tip:")[0])
    assert msgs[0] == msgs[1]
    a = wgrad.ones(1, requires_grad=True)
    with pytest.raises(wck.CheckpointError, match="You are seeing this error because you "
                                                   "passed `debug=True` to checkpoint"):
        with wck.set_checkpoint_debug_enabled(True):
            wck.checkpoint(_nondeterministic(wgrad), a, use_reentrant=False).sum().backward()


def test_use_reentrant_warnings():
    for fn in (lambda ck, lib, a: ck.checkpoint(lambda x: x * 2, a),
               lambda ck, lib, a: ck.checkpoint_sequential([lib.sin, lib.cos], 2, a)):
        texts = []
        for lib, ck in ((wgrad, wck), (torch, tck)):
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                fn(ck, lib, lib.ones(2, requires_grad=True))
            texts.append([str(m.message) for m in w])
        assert texts[0] == texts[1] and len(texts[0]) == 1


def test_checkpoint_sequential_gradient():
    grads = []
    for lib, ck in ((wgrad, wck), (torch, tck)):
        a = lib.tensor([0.2, 0.9], dtype=lib.float64, requires_grad=True)
        y = ck.checkpoint_sequential([lib.sin, lib.exp, lib.cos, lib.tanh], 3, a,
                                     use_reentrant=False)
        grads.append(np.asarray(lib.autograd.grad(y.sum(), a)[0].detach().numpy()))
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12)


def test_context_fn_and_grad_mode_off():
    entered = []

    @contextlib.contextmanager
    def mark(name):
        entered.append(name)
        yield

    a = wgrad.ones(2, requires_grad=True)
    y = wck.checkpoint(lambda t: t.exp(), a, use_reentrant=False,
                       context_fn=lambda: (mark("fwd"), mark("rec")))
    y.sum().backward()
    assert entered == ["fwd", "rec"]
    with wgrad.no_grad():
        out = wck.checkpoint(lambda t: t.exp(), a, use_reentrant=False,
                             context_fn=lambda: (mark("fwd"), mark("rec")))
    assert out.grad_fn is None and entered == ["fwd", "rec"]


@pytest.mark.parametrize("early_stop", [True, False])
def test_nested_checkpoint_graph_dies_without_gc(early_stop):
    import gc
    import weakref

    def grad_of(fn):
        def wrapper(x):
            out = fn(x)
            return wgrad.autograd.grad(out, (x,), create_graph=True)[0]
        return wrapper

    def ck(fn):
        return lambda x: wck.checkpoint(fn, x, use_reentrant=False)

    def inner(x):
        wgrad.autograd.grad(x.sin().exp().sin(), x)  # a backward inside the checkpoint
        return x.sin()

    def scope():
        a = wgrad.tensor(0.3, requires_grad=True)
        out = grad_of(ck(grad_of(ck(inner))))(a)
        refs, todo, seen = [], [out.grad_fn], set()
        while todo:
            n = todo.pop()
            if n is None or n in seen:
                continue
            seen.add(n)
            refs.append(weakref.ref(n))
            todo.extend(f for f, _ in n.next_functions)
        return refs
    gc.disable()
    try:
        with wck.set_checkpoint_early_stop(early_stop):
            refs = scope()
        assert refs and [r for r in refs if r() is not None] == []
    finally:
        gc.enable()
