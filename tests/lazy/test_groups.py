"""Lazy backward groups (NOTE [Lazy backward groups] in wgrad/ops/_lazy_graph.py): one
backward node for a segment's ops, which explodes into torch's nodes when looked at."""
import gc
import weakref

import numpy as np
import pytest
import torch

import wgrad
from wgrad._autograd.saved import SavedTensor
from wgrad.ops import _lazy, _lazy_graph

pytestmark = pytest.mark.skipif(not _lazy_graph.ENABLED, reason="WGRAD_LAZY_GROUPS=0")


def _x(lib, n=4, dtype="float64", seed=0):
    a = np.random.default_rng(seed).standard_normal(n)
    if dtype == "complex128":
        a = a + 1j * np.random.default_rng(seed + 1).standard_normal(n)
    return lib.tensor(a, requires_grad=True)


def _walk(fn, depth=0):
    """The graph below ``fn`` as nested (name, children), through next_functions."""
    if fn is None:
        return None
    name = fn.name().replace("torch::autograd::", "")
    return (name, tuple(_walk(c, depth + 1) for c, _ in fn.next_functions))


def _program(lib):
    x = _x(lib, dtype="complex128")
    y = x.sin() * 2
    z = y * y.conj() + y.exp()
    w = (z.abs() ** 2).sum()
    return x, y, z, w


def test_graph_seen_through_a_group_is_torchs():
    with wgrad.lazy():
        _, _, _, w = _program(wgrad)
        assert type(w._grad_fn) is _lazy_graph.GroupNode  # recorded as one node
        got = _walk(w.grad_fn)
    _, _, _, tw = _program(torch)
    assert got == _walk(tw.grad_fn)


def test_gradients_match_torch_with_hooks_retain_grad_and_inputs():
    seen = {}
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        with ctx():
            x, y, z, w = _program(lib)
            y.retain_grad()
            z.register_hook(lambda g, lib=lib: g * 3)
            gy, = lib.autograd.grad(w, y, retain_graph=True)
            w.backward()
        seen[lib] = [t.detach().numpy() for t in (x.grad, y.grad, gy)]
    for a, b in zip(seen[wgrad], seen[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_double_backward_runs_node_by_node():
    out = {}
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        with ctx():
            x = _x(lib)
            y = (x.sin() * x).exp().sum()
            g, = lib.autograd.grad(y, x, create_graph=True)
            h, = lib.autograd.grad((g * g).sum(), x)
        out[lib] = (g.detach().numpy(), h.numpy())
    for a, b in zip(out[wgrad], out[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_a_backward_frees_only_the_ops_it_ran():
    msgs = []
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        with ctx():
            x = _x(lib)
            a = (x * x).sum()
            b = (x.sin() * x).sum()   # same group as a, not on a's path
            a.backward()
            b.backward()              # its saved values are still there
            g = x.grad.numpy().copy()
            with pytest.raises(RuntimeError) as e:
                a.backward()
            msgs.append(str(e.value))
        np.testing.assert_allclose(g, (2 * x + x.detach().sin() + x.detach() *
                                       x.detach().cos()).detach().numpy(), rtol=1e-12)
    assert msgs[0].replace("wgrad", "torch") == msgs[1]


def test_inplace_change_of_a_saved_value_raises_eager_modes_error():
    msgs = []
    for enabled in (True, False):
        with wgrad.lazy(enabled):
            x = _x(wgrad)
            y = x * 2
            z = (y * y).sum()
            y.add_(1)
            with pytest.raises(RuntimeError) as e:
                z.backward()
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1] and "is at version 1; expected version 0" in msgs[0]


def test_a_group_no_tensor_needs_is_freed_without_the_cycle_collector():
    gc.disable()
    try:
        with wgrad.lazy():
            x = _x(wgrad)
            y = x.sin()
            z = (y * y).exp()       # saves y, a result of the same group
            r = weakref.ref(z._grad_fn)
            del y, z
            assert r() is None
    finally:
        gc.enable()


def test_a_step_is_one_computation_per_pass_and_repeats_hit_the_cache():
    x = _x(wgrad, n=8, dtype="complex128")
    m = wgrad.tensor(np.abs(np.arange(8.0)))
    wgrad.lazy.flush()  # nothing recorded before (WGRAD_LAZY=1) joins the first step
    with wgrad.lazy():
        for _ in range(3):  # the later steps hit the cache
            x.grad = None
            before = wgrad.lazy.stats()
            loss = ((wgrad.fft.fft(x).abs() - m) ** 2).sum()
            loss.backward()   # forward and backward: one call each, or one for both
            after = wgrad.lazy.stats()
            g, = wgrad.autograd.grad(((wgrad.fft.fft(x).abs() - m) ** 2).sum(), x)
            g.numpy()         # grad() does not flush first: forward and backward at once
            last = wgrad.lazy.stats()
    # the forward runs first only where dispatch is asynchronous (NOTE [Lazy segments])
    assert after["segments"] - before["segments"] == 1 + _lazy.dispatch_overlaps()
    assert last["segments"] - after["segments"] == 1
    assert last["compiles"] == before["compiles"]
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    ((torch.fft.fft(xt).abs() - torch.tensor(m.numpy())) ** 2).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(g.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-10)


def test_a_backward_group_past_the_cap_flushes_the_forward_first():
    # NOTE [Lazy segments]: a segment holds at most CAP calls' weight, a group's backward
    # weighing its ops, so a backward that would take the pending forward past CAP waits
    x = wgrad.ones(3, dtype=wgrad.float64, requires_grad=True)
    wgrad.lazy.flush()
    with wgrad.lazy():
        before = wgrad.lazy.stats()
        y = x
        for _ in range(_lazy.CAP - 2):
            y = y * 1.5
        loss = y.sum()  # CAP - 1 calls pending, in one group
        assert wgrad.lazy.stats()["segments"] == before["segments"]
        loss.backward()  # its backward weighs CAP - 1: the forward runs first
        after = wgrad.lazy.stats()
    assert after["segments"] - before["segments"] == 2
    np.testing.assert_allclose(x.grad.numpy(), np.full(3, 1.5 ** (_lazy.CAP - 2)))


def test_a_full_group_backward_is_called_with_each_distinct_array_once():
    # a group of CAP ops runs its backward alone, called directly (NOTE [Lazy backward
    # groups]); the saved constant and weight every op saves repeat among its leaves
    x = wgrad.tensor([0.3, -0.2, 0.1], dtype=wgrad.float64, requires_grad=True)
    c = wgrad.tensor([0.9, 1.1, 0.7], dtype=wgrad.float64)
    _lazy_graph._ONCE.clear()
    with wgrad.lazy():
        y = x
        for _ in range(_lazy.CAP):
            y = (y * c).sin()
        y.sum().backward()
    pats = [k[2] for k in _lazy_graph._ONCE]
    assert pats and any(len(set(p)) < len(p) for p in pats)  # repeats passed once
    xt = torch.tensor(x.detach().numpy(), requires_grad=True)
    ct = torch.tensor(c.numpy())
    yt = xt
    for _ in range(_lazy.CAP):
        yt = (yt * ct).sin()
    yt.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("case,flat", [
    ("gather", True),       # saved values all arrays: gathered flat (GroupNode._leaves)
    ("layer_norm", False),  # an absent weight saved as None: tree_flatten's path
])
def test_group_backward_saved_values_flat_or_as_a_tree(monkeypatch, case, flat):
    got = []
    leaves = _lazy_graph.GroupNode._leaves
    monkeypatch.setattr(_lazy_graph.GroupNode, "_leaves",
                        lambda self, *a: got.append(leaves(self, *a)) or got[-1])
    a = np.linspace(-1.0, 1.0, 20).reshape(5, 4)
    f = {"gather": lambda L, x: L.gather(x * 2, 0, L.tensor(np.array([[0, 3, 2, 4]]))),
         "layer_norm": lambda L, x: L.nn.functional.layer_norm(x * 2, (4,))}[case]
    grads = []
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        x = lib.tensor(a, requires_grad=True)
        with ctx():
            (f(lib, x).sin() ** 2).sum().backward()
        grads.append(x.grad.numpy())
    assert got and all((g is not None) is flat for g in got)
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-10, atol=1e-12)


def test_a_view_of_a_result_starts_a_new_group():
    # x -> y (group) -> view (eager node) -> op: one group waiting on itself would hang
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        with ctx():
            x = _x(lib, n=6)
            y = x * 2
            z = (y.view(2, 3).t() * y.view(3, 2)).sum()
            z.backward()
        if lib is wgrad:
            got = x.grad.numpy()
    np.testing.assert_allclose(got, x.grad.numpy(), rtol=1e-12)


def test_a_new_group_takes_no_outside_edge_into_the_one_it_leaves():
    """An op whose first input is a new outside edge (a leaf) and whose second is a view
    of a group result starts a new group; the group it leaves keeps only the outside
    edges its own ops use."""
    seen = {}
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        with ctx():
            x, p = _x(lib, n=6), _x(lib, n=6, seed=2).detach().view(3, 2).requires_grad_()
            y = x * 2
            z = p * y.view(2, 3).t()
            if lib is wgrad:
                g = y._grad_fn
                used = {~s for r in _lazy_graph.records(g.recs) for s in r[0]
                        if s is not None and s < 0}
                assert z._grad_fn is not g and len(g._edges) == len(used) == 1
            (z.reshape(6) * y).sum().backward()
        seen[lib] = x.grad.numpy(), p.grad.numpy()
    for a, b in zip(seen[wgrad], seen[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-12)


def test_printing_does_not_explode():
    with wgrad.lazy():
        x = _x(wgrad)
        y = (x * 2).sin()
        assert "SinBackward0" in repr(y)
        assert type(y._grad_fn) is _lazy_graph.GroupNode
        assert y.grad_fn.name() == "SinBackward0"  # looking at it explodes it
        assert type(y._grad_fn) is not _lazy_graph.GroupNode


def test_saved_arrays_are_freed_by_backward():
    with wgrad.lazy():
        x = _x(wgrad, n=50)
        h = x * 2
        e = h.sin().exp()                  # sin saves h, exp its result: both in the group
        ref_h, ref_e = weakref.ref(h._data), weakref.ref(e._data)
        out = (e * 3).sum()
        del h, e
        gc.collect()
        assert ref_h() is not None and ref_e() is not None  # kept for backward
        out.backward()
    gc.collect()
    assert ref_h() is None and ref_e() is None


def test_a_custom_functions_outputs_start_a_new_group():
    # its node is numbered before the ops of its forward, and its backward runs them
    # (reentrantly): an op of its output joining their group would run that group twice
    def run(lib):
        y0 = lib.tensor([[0.5, -1.0], [2.0, 0.25]])

        class Reenter(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                with lib.enable_grad():
                    ctx.x = x.detach().requires_grad_(True)
                    ctx.out = ctx.x * y0.requires_grad_(True)
                return ctx.out.detach()

            @staticmethod
            def backward(ctx, g):
                with lib.enable_grad():
                    ctx.out.sin().sum().backward()
                return ctx.x.grad * g

        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
        (Reenter.apply(x) * 3).sum().backward()
        return x.grad.numpy()
    with wgrad.lazy():
        got = run(wgrad)
    np.testing.assert_allclose(got, run(torch), rtol=1e-6)


# NOTE [Lazy fast lane]: repeated signatures skip the general path's steps; the records
# must be the same. Each program runs its loop body several times (the first calls plan,
# the later ones hit), with the fast lane on and off, and against torch.
def _fast_programs(lib):
    x = _x(lib, dtype="complex128")
    c = lib.tensor(np.linspace(0.5, 1.5, 4) + 0.25j)  # outside autograd: an outside array
    p = _x(lib, seed=3)  # a second leaf, float64
    out = []
    y = x
    for i in range(5):
        y = (y.sin() * c) * 0.5 + c                          # tensors and numbers
        y = y - p * (i + 1)                                  # a new number each time
        y = 2.0 / (1 + y.abs()) + y if i % 2 else y * True    # bool, int, reversed
    out.append((y.abs() ** 2).sum())
    z = p
    for _ in range(4):
        z = (z * p).tanh() + z.exp().log1p()                # a leaf used over and over
    out.append(z.sum())
    return (x, p), out


@pytest.mark.parametrize("fast", [True, False])
def test_fast_lane_records_what_the_general_path_records(fast, monkeypatch):
    if not fast:
        monkeypatch.setattr(_lazy_graph, "fast", lambda *a: None)
    _lazy_graph._FAST.clear()
    seen = {}
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        with ctx():
            leaves, outs = _fast_programs(lib)
            names = [_walk(o.grad_fn) for o in outs]
            sum(outs).backward()
        seen[lib] = ([l.grad.detach().numpy() for l in leaves], names,
                     [o.detach().numpy() for o in outs])
    assert bool(_lazy_graph._FAST) == fast  # the lane was taken, or not
    assert seen[wgrad][1] == seen[torch][1]
    for a, b in zip(seen[wgrad][0] + seen[wgrad][2], seen[torch][0] + seen[torch][2]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def _group_records(outs):
    """What the groups behind ``outs`` recorded, op by op, without exploding them: the
    signature, sources, outputs, topological number, relative sequence number, and per
    saved value its name and how it is held."""
    def held(v):
        if type(v) is not SavedTensor:
            return ("value", v)
        return ("saved", v._is_output, v._is_none, v._ref is not None, v._version,
                v._output_nr, v._had_fn)
    groups, out = [], []
    for o in outs:
        g = o._grad_fn
        if g not in groups:
            groups.append(g)
    first = min(r[2] for g in groups for r in _lazy_graph.records(g.recs))
    for g in groups:
        out.append([(sig, srcs, outs, topo, seq - first,
                     [(k, held(v)) for (k, _), v in zip(sig[0].save_plan(sig[2]), g.vals[v0:v1])])
                    for (sig, _, _, _), (srcs, outs, seq, topo, v0, v1)
                    in zip(g.sigs, _lazy_graph.records(g.recs))])
    return out


def test_fast_lane_group_records_equal_the_general_paths(monkeypatch):
    seen = []
    for fast in (True, False):
        if not fast:
            monkeypatch.setattr(_lazy_graph, "fast", lambda *a: None)
        _lazy_graph._FAST.clear()
        with wgrad.lazy():
            _, outs = _fast_programs(wgrad)
            seen.append(_group_records(outs))
        del outs  # the open group goes with its results: the next run starts a new one
        gc.collect()
    assert _lazy_graph._FAST == {}  # the second run took the general path only
    assert seen[0] == seen[1]


def test_fast_lane_leaves_traces_and_shape_errors_to_the_general_path():
    x = _x(wgrad)
    with wgrad.lazy():
        for _ in range(3):
            (x * 2).sum()  # planned
        f = wgrad.compile(lambda t: (x * 2 + t).sum())  # x concrete, t a tracer: eager
        np.testing.assert_allclose(f(wgrad.ones(4)).item(), (x * 2 + 1).sum().item())
        with pytest.raises(RuntimeError, match="must match the size"):
            x * wgrad.ones(3)


def test_absent_optional_inputs_stay_lazy_and_match_torch():
    """layer_norm without affine, bce_with_logits without weights: None inputs are part of
    the recorded call (no flush, no eager fallback), gradients as torch's."""
    seen = {}
    for lib in (wgrad, torch):
        x = lib.tensor(np.linspace(-2, 2, 12).reshape(3, 4), requires_grad=True)
        t = lib.tensor(np.linspace(0, 1, 12).reshape(3, 4))
        with (wgrad.lazy() if lib is wgrad else torch.enable_grad()):
            if lib is wgrad:
                before = wgrad.lazy.stats()["segments"]
            for _ in range(3):  # the later calls take the fast lane
                y = lib.nn.functional.layer_norm(x * 2, (4,))  # over a pending value
                loss = lib.nn.functional.binary_cross_entropy_with_logits(y, t)
            if lib is wgrad:
                assert wgrad.lazy.stats()["segments"] == before  # nothing ran yet
            loss.backward()
        seen[lib] = (loss.item(), x.grad.numpy())
    assert seen[wgrad][0] == pytest.approx(seen[torch][0], rel=1e-12)
    np.testing.assert_allclose(seen[wgrad][1], seen[torch][1], rtol=1e-10, atol=1e-12)


_OTHERS = [  # operands torch promotes each its own way against a float32/64 or complex64 leaf
    lambda lib: lib.tensor(2.0, dtype=lib.float64),         # 0-dim: the leaf's dtype
    lambda lib: lib.tensor([2.0] * 4, dtype=lib.float64),   # float64 or complex128
    lambda lib: 1j,                                         # complex of the leaf's width
    lambda lib: True,
    lambda lib: 3,
    lambda lib: lib.tensor(1j, dtype=lib.complex64),        # 0-dim complex
]


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_fast_lane_binary_ops_promote_as_torch(dtype):
    """Binary ops enter the lane keyed without their result type (NOTE [Lazy fast lane]):
    calls repeated with operands of other types (the first of each through the general
    path, the rest planned) keep torch's result types, the default dtype switched too."""
    seen = {}
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        a = np.random.default_rng(0).standard_normal(4)
        x = lib.tensor(a + 0.5j * a if dtype == "complex64" else a,
                       dtype=getattr(lib, dtype), requires_grad=True)
        outs = []
        with ctx():
            try:
                for i in range(3):
                    lib.set_default_dtype(lib.float64 if i == 1 else lib.float32)
                    for other in _OTHERS:
                        outs.append(x * other(lib) + other(lib) - x)
            finally:  # a failure leaves the next tests the usual default
                lib.set_default_dtype(lib.float32)
            sum((o.abs() ** 2).sum() for o in outs).backward()
        seen[lib] = [o.dtype for o in outs], [o.detach().numpy() for o in outs + [x.grad]]
    assert [str(d).split(".")[1] for d in seen[wgrad][0]] == \
        [str(d).split(".")[1] for d in seen[torch][0]]
    for a, b in zip(seen[wgrad][1], seen[torch][1]):
        assert a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_a_graph_recorded_lazily_backpropagates_after_the_block():
    """A loss recorded under ``lazy()`` and backpropagated after the block: the groups'
    saved values are still Pendings (computed ones), which the backward must unwrap (it
    passed them to XLA as they were: a TypeError)."""
    seen = {}
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        x = lib.tensor(np.linspace(0.1, 1, 6), requires_grad=True)
        w = lib.tensor(np.linspace(-1, 1, 6).reshape(2, 3), requires_grad=True)
        with ctx():
            y = x.reshape(2, 3) * w
            z = (y.sin() @ w.T).tanh().sum() + y[0].exp().sum()
            q = (x * 2).cos().sum()
        z.backward(retain_graph=True)
        q.backward()
        seen[lib] = [x.grad.numpy(), w.grad.numpy()]
    for a, b in zip(seen[wgrad], seen[torch]):
        np.testing.assert_allclose(a, b, rtol=1e-10)


def test_groups_of_one_structure_with_other_signatures_get_their_own_backward():
    """A group's backward is cached by its ops' signature numbers (``_sig_id``) and
    wiring: the same wiring over other dtypes, shapes or inputs needing grad is another
    signature, with its own backward."""
    cases = [("float64", 4, False), ("float64", 4, True), ("float32", 4, True),
             ("float64", 3, True)]
    for dtype, n, c_grad in cases:
        seen = {}
        for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
            x = lib.tensor(np.linspace(0.5, 1.5, n), dtype=getattr(lib, dtype),
                           requires_grad=True)
            c = lib.tensor(np.linspace(-1, 1, n), dtype=getattr(lib, dtype),
                           requires_grad=c_grad)
            with ctx():
                ((x * c).sin() * x).sum().backward()
            seen[lib] = [x.grad.numpy()] + ([c.grad.numpy()] if c_grad else [])
        assert len(seen[wgrad]) == len(seen[torch])
        for a, b in zip(seen[wgrad], seen[torch]):
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(a, b, rtol=1e-6)


def _alone_case(lib, case, seen):
    """A step whose backward is one lazy group feeding two leaves, with what ``case``
    adds; returns the gradients (and what hooks saw, in ``seen``)."""
    x = _x(lib, dtype="complex128")
    c = _x(lib, seed=3)
    if case == "leaf hook":
        x.register_hook(lambda g: seen.append(g.detach().clone()) or g * 2)
    if case == "post-accumulate hook":
        c.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.detach().clone()))
    y = (x.sin() * c).exp()
    if case == "retain_grad":
        y.retain_grad()
    loss = (y.abs() ** 2).sum()
    loss.backward(retain_graph=case == "retain_graph")
    if case == "retain_graph":
        loss.backward()
    out = [x.grad, c.grad] + ([y.grad] if case == "retain_grad" else [])
    return [t.detach().numpy() for t in out]


@pytest.mark.parametrize("case,alone", [
    ("plain", True),
    ("retain_graph", True),
    ("leaf hook", False),             # a tensor hook on a leaf: the engine runs it
    ("post-accumulate hook", False),
    ("retain_grad", False),           # a result's retain_grad explodes the group
])
def test_a_lazy_group_alone_runs_without_the_engine(monkeypatch, case, alone):
    """NOTE [A lazy group alone]: a backward that is one group feeding leaves runs
    without a GraphTask, with torch's gradients; any hook sends it through the engine."""
    from wgrad._autograd import engine
    tasks = []
    init = engine.GraphTask.__init__
    monkeypatch.setattr(engine.GraphTask, "__init__",
                        lambda self, *a, **k: tasks.append(1) or init(self, *a, **k))
    seen_w, seen_t = [], []
    with wgrad.lazy():
        got = _alone_case(wgrad, case, seen_w)
    want = _alone_case(torch, case, seen_t)
    assert (not tasks) is alone
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)
    assert len(seen_w) == len(seen_t)
    for g, w in zip(seen_w, seen_t):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)


def test_a_lazy_group_alone_backward_twice_raises_torchs_error():
    for lib, ctx in ((wgrad, wgrad.lazy), (torch, torch.enable_grad)):
        x = _x(lib)
        with ctx():
            loss = (x.sin() * x).sum()
            loss.backward()
            with pytest.raises(RuntimeError, match="backward through the graph a second"):
                loss.backward()
