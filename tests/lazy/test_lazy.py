"""Lazy segments (NOTE [Lazy segments]): the same programs give eager's values and
gradients, segments flush where they must, a repeated loop body hits the cache, errors
raise at the op."""
import numpy as np
import pytest

import wgrad
from wgrad._autograd.saved import SavedTensor
from wgrad.ops import _lazy


def _leaf(seed, shape=(3, 4), dtype=wgrad.float64):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype.is_complex:
        a = a + 1j * rng.standard_normal(shape)
    return wgrad.tensor(a, dtype=dtype, requires_grad=True)


@pytest.fixture(autouse=True)
def _eager_outside():
    """Each test starts eager, as a program without WGRAD_LAZY does (the suite also runs
    under WGRAD_LAZY=1)."""
    with wgrad.lazy(False):
        yield


# -- programs: each returns the tensors to compare (outputs, then gradients) ---------------

def p_real_chain():
    x, c = _leaf(0), _leaf(1)
    y = x
    for _ in range(5):
        y = (y.sin() * c) * 0.5 + c
    loss = (y.exp() - 1.5).pow(2).sum()
    loss.backward()
    return [loss, x.grad, c.grad]


def p_complex():
    z, w = _leaf(2, dtype=wgrad.complex128), _leaf(3, dtype=wgrad.complex128)
    y = (z * w.conj()).sin() / (1 + z.abs())
    loss = (y.abs() ** 2).sum() + y.angle().sum()
    loss.backward()
    return [y, loss, z.grad, w.grad]


def p_views():
    x = _leaf(4)
    y = x.t()[1:].reshape(-1) * 2
    z = y.view(3, 3).transpose(0, 1).sum(1)
    (z * z).sum().backward()
    return [z, x.grad]


def p_inplace():
    x = _leaf(5)
    y = x * 2
    y.add_(1)
    y[0] = 3.0
    y.mul_(x.sin())
    z = y.sin() * y
    z.sum().backward()
    return [y, z, x.grad]


def p_hooks():
    x = _leaf(6)
    y = x.cos() * 3
    y.retain_grad()
    y.register_hook(lambda g: g * 2)
    z = (y * y).mean()
    z.backward()
    return [z, y.grad, x.grad]


def p_create_graph():
    x = _leaf(7)
    y = (x.sin() * x).sum()
    (g,) = wgrad.autograd.grad(y, x, create_graph=True)
    (gg,) = wgrad.autograd.grad(g.sum(), x)
    return [g, gg]


def p_mlp():
    x, a, b = _leaf(8, (5, 4)), _leaf(9, (4, 6)), _leaf(10, (6, 2))
    loss = ((x @ a).tanh() @ b).relu().pow(2).mean()
    loss.backward()
    return [loss, a.grad, b.grad, x.grad]


def p_fft():
    x = _leaf(11, (4, 4), wgrad.complex128)
    m = wgrad.rand(4, 4, dtype=wgrad.float64)
    loss = ((wgrad.fft.fft2(x).abs() - m) ** 2).sum()
    loss.backward()
    return [loss, x.grad]


def p_reductions_multi_output():
    x = _leaf(12)
    v, i = x.max(1)
    s = x.softmax(-1).cumsum(0)
    loss = v.sum() + s.logsumexp(0).sum() + x.norm()
    loss.backward()
    return [v, i, s, loss, x.grad]


def p_no_grad_and_accumulation():
    x = _leaf(13)
    with wgrad.no_grad():
        y = x * 3 + 1
    for _ in range(2):  # .grad accumulates across backward calls
        (x * y).sum().backward()
    return [y, x.grad]


def p_saved_tensor_hooks():
    x = _leaf(14)
    with wgrad.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
        y = (x.sin() * x).sum()
    y.backward()
    return [y, x.grad]


PROGRAMS = [p_real_chain, p_complex, p_views, p_inplace, p_hooks, p_create_graph, p_mlp,
            p_fft, p_reductions_multi_output, p_no_grad_and_accumulation,
            p_saved_tensor_hooks]


@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.__name__[2:])
def test_lazy_equals_eager(program):
    wgrad.manual_seed(0)
    eager = program()
    wgrad.manual_seed(0)
    before = wgrad.lazy.stats()["ops"]
    with wgrad.lazy():
        lazy = program()
    assert wgrad.lazy.stats()["ops"] > before  # something ran lazily
    assert len(lazy) == len(eager)
    for e, lz in zip(eager, lazy):
        assert type(lz) is wgrad.Tensor  # every value is concrete after the block
        assert lz.dtype == e.dtype and lz.shape == e.shape
        np.testing.assert_allclose(lz.detach().numpy(), e.detach().numpy(), rtol=1e-12,
                                   atol=1e-12)


# -- flush points ------------------------------------------------------------------------

def _pending(t):
    return type(_lazy.raw(t)) is _lazy.Pending and _lazy.raw(t).value is None


@pytest.mark.parametrize("read", [
    lambda t: t.sum().item(), lambda t: t.numpy(), lambda t: t.tolist(), repr,
    lambda t: bool(t[0, 0] > 0), lambda t: float(t[0, 0]), lambda t: t.jax(),
], ids=["item", "numpy", "tolist", "repr", "bool", "float", "jax"])
def test_reading_a_value_flushes(read):
    x = wgrad.ones(2, 2, dtype=wgrad.float64)
    with wgrad.lazy():
        y = x * 3 + 1
        assert _pending(y) and type(y) is wgrad.Tensor  # the type eager mode gives
        assert y.shape == (2, 2) and y.dtype is wgrad.float64 and y.dim() == 2  # no flush
        assert y.size(-1) == 2 and y.numel() == 4 and len(y) == 2 and y.ndim == 2
        assert y.device == wgrad.get_default_device() and not y.is_complex()
        assert _pending(y)
        read(y)
        assert not _pending(y) and type(y) is wgrad.Tensor
        np.testing.assert_array_equal(y.numpy(), np.full((2, 2), 4.0))


def test_leaving_the_block_and_backward_flush():
    x = wgrad.ones(3, dtype=wgrad.float64, requires_grad=True)
    with wgrad.lazy():
        y = (x * 2).sin()
        loss = y.sum()
        loss.backward()
        assert not _pending(x.grad)  # backward() returns concrete gradients
        z = y * 2
        assert _pending(z)
    assert not _pending(z) and type(z) is wgrad.Tensor
    np.testing.assert_allclose(z.detach().numpy(), 2 * np.sin(2.0) * np.ones(3))


def test_like_constructors_do_not_flush():
    x = wgrad.ones(3, dtype=wgrad.float64)
    with wgrad.lazy():
        y = x * 2
        for like in (wgrad.ones_like, wgrad.zeros_like, wgrad.empty_like):
            z = like(y)
            assert z.shape == (3,) and z.dtype is wgrad.float64
        assert _pending(y)  # backward()'s ones_like(loss) used to run the forward early
    np.testing.assert_array_equal(y.numpy(), np.full(3, 2.0))


def test_size_cap_flushes_and_a_loop_hits_the_cache():
    x = wgrad.ones(4, dtype=wgrad.float64)
    with wgrad.lazy():
        y = x
        for _ in range(3):  # warm up: one compile per distinct segment structure
            for _ in range(_lazy.CAP):
                y = y * 0.5 + 0.5
        before = wgrad.lazy.stats()
        for _ in range(4):
            for _ in range(_lazy.CAP):
                y = y * 0.5 + 0.5
        after = wgrad.lazy.stats()
    assert after["segments"] - before["segments"] >= 8  # 2 * CAP ops per outer round
    assert after["compiles"] == before["compiles"]  # the loop body hit the cache
    assert after["cache_hits"] > before["cache_hits"]
    np.testing.assert_allclose(y.numpy(), np.ones(4))


def test_a_changed_matmul_precision_is_not_served_a_program_made_under_the_old_one():
    # a segment's executable is kept per settings too: on a GPU "highest" after "high"
    # would otherwise keep running TF32 products
    a = wgrad.ones(4, 4)
    prev = wgrad.get_float32_matmul_precision()

    def step():
        with wgrad.lazy():
            return float((a @ a).sum())
    try:
        step()
        before = wgrad.lazy.stats()["compiles"]
        step()
        assert wgrad.lazy.stats()["compiles"] == before  # the same settings: cached
        wgrad.set_float32_matmul_precision("high" if prev == "highest" else "highest")
        assert step() == 64.0
        assert wgrad.lazy.stats()["compiles"] == before + 1
    finally:
        wgrad.set_float32_matmul_precision(prev)


def _small_caps(monkeypatch, base, most, after):
    """NOTE [Segment cap growth] at a small scale (short segments compile fast)."""
    monkeypatch.setattr(_lazy, "BASE_CAP", base)
    monkeypatch.setattr(_lazy, "CAP_MAX", most)
    monkeypatch.setattr(_lazy, "GROW_AFTER", after)
    _lazy.reset_cap()


@pytest.mark.parametrize("most, caps_seen", [(16, [4, 8, 16]), (4, [4])])
def test_the_cap_grows_where_segments_repeat(monkeypatch, most, caps_seen):
    from wgrad.ops import _lazy_graph
    _small_caps(monkeypatch, 4, most, 3)
    x = wgrad.tensor([0.3, -0.2], dtype=wgrad.float64, requires_grad=True)
    caps = []
    n = 120
    with wgrad.lazy():
        y = x
        for _ in range(n):
            y = y * 0.5 + 0.25
            caps.append(wgrad.lazy.stats()["cap"])
            assert _lazy_graph.CAP == caps[-1]  # backward groups end at the same cap
        y.sum().backward()
    assert sorted(set(caps)) == caps_seen and caps == sorted(caps)
    want = np.array([0.3, -0.2])
    for _ in range(n):
        want = want * 0.5 + 0.25
    np.testing.assert_allclose(y.detach().numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), np.full(2, 0.5 ** n), rtol=1e-12)


def test_the_cap_falls_back_where_segments_stop_repeating(monkeypatch):
    _small_caps(monkeypatch, 4, 8, 3)
    y = wgrad.ones(2, dtype=wgrad.float64)
    with wgrad.lazy():
        for _ in range(40):
            y = y * 0.5 + 0.25
        assert wgrad.lazy.stats()["cap"] == 8
        for k in range(1, 40):  # a new shape, so a new computation, at every flush
            z = wgrad.ones(k, dtype=wgrad.float64)
            for _ in range(4):
                z = z * 0.5 + 0.25
            if wgrad.lazy.stats()["cap"] == 4:
                break
        assert wgrad.lazy.stats()["cap"] == 4
        assert _lazy._growth["after"] == 12  # and waits four times as long to grow again
    np.testing.assert_allclose(z.numpy(), np.full(k, 0.5 + 0.5 ** 5), rtol=1e-12)


def _chain(lib, x, c, n, keep):
    y, kept = x, []
    for i in range(n):
        if i in keep:
            kept.append(y)
        y = (y.sin() * c) * 0.5 + c
    return y, kept


def test_saved_values_come_back_packed_and_read_right(monkeypatch):
    # NOTE [Packed outputs]: segments at the cap return the values their groups saved in one
    # array a dtype; the backward takes the pack, a read of one value splits it
    import torch
    _small_caps(monkeypatch, 32, 32, 10**6)  # 7 values saved a segment: packed
    rng = np.random.default_rng(5)
    x0, c0 = rng.standard_normal(3), rng.standard_normal(3)
    x = wgrad.tensor(x0, requires_grad=True)
    c = wgrad.tensor(c0)
    with wgrad.lazy():
        y, kept = _chain(wgrad, x, c, 24, keep=(2, 9))
        packs = {v._data.pack for g in {y._grad_fn} | {k._grad_fn for k in kept}
                 for v in g.vals if isinstance(v, SavedTensor) and v._data is not None
                 and isinstance(v._data, _lazy.Pending)}
        packs.discard(None)
        packs.discard(True)
        assert packs and all(isinstance(p, _lazy._Pack) for p in packs)
        y.sum().backward()
        unsplit = [p for p in packs if p.values is None]
        assert unsplit  # the direct group backwards sliced the packs themselves
        got_kept = [k.detach().numpy() for k in kept]  # these split their packs
    xt = torch.tensor(x0, requires_grad=True)
    yt, kept_t = _chain(torch, xt, torch.tensor(c0), 24, keep=(2, 9))
    yt.sum().backward()
    np.testing.assert_allclose(y.detach().numpy(), yt.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    for a, b in zip(got_kept, kept_t):
        np.testing.assert_allclose(a, b.detach().numpy(), rtol=1e-12)


def test_a_backward_recorded_after_a_read_slices_the_pack_in_its_segment(monkeypatch):
    # the forward runs at .item() (its saved values packed), the backward group is short:
    # recorded into the next segment, it takes the pack as an outside array
    import torch
    _small_caps(monkeypatch, 32, 32, 10**6)
    rng = np.random.default_rng(6)
    x0, c0 = rng.standard_normal(3), rng.standard_normal(3)
    x = wgrad.tensor(x0, requires_grad=True)
    with wgrad.lazy():
        y, _ = _chain(wgrad, x, wgrad.tensor(c0), 7, keep=())
        loss = y.sum()
        got = loss.item()
        saved = [v._data for v in y._grad_fn.vals if isinstance(v, SavedTensor)
                 and isinstance(v._data, _lazy.Pending)]
        packs = {p.pack for p in saved}
        assert len(packs) == 1 and isinstance(next(iter(packs)), _lazy._Pack)
        before = wgrad.lazy.stats()["ops"]
        loss.backward()
        assert next(iter(packs)).values is None  # sliced inside the backward's segment
        assert wgrad.lazy.stats()["ops"] - before >= len(saved) + 1
    xt = torch.tensor(x0, requires_grad=True)
    yt, _ = _chain(torch, xt, torch.tensor(c0), 7, keep=())
    yt.sum().backward()
    np.testing.assert_allclose(got, yt.sum().item(), rtol=1e-12)
    np.testing.assert_allclose(x.grad.numpy(), xt.grad.numpy(), rtol=1e-12)


def test_reading_a_saved_value_runs_its_segment_and_reads_it():
    # exp saves its result: five saved values, packed at the flush that a read of one of
    # them starts (regression: that read found no value); the others split on their reads
    x = wgrad.tensor([-3.0, -2.5], dtype=wgrad.float64, requires_grad=True)
    with wgrad.lazy():
        ys = [x]
        for _ in range(5):
            ys.append(ys[-1].exp())
        ps = [_lazy.raw(y) for y in ys[1:]]
        assert all(p.pack is True for p in ps)  # saved, still pending
        got = [ys[3].detach().numpy()]
        assert isinstance(ps[0].pack, _lazy._Pack) and ps[2].pack is True  # read alone
        got += [y.detach().numpy() for y in ys[1:]]
        ys[-1].sum().backward()
    want = [np.array([-3.0, -2.5])]
    for _ in range(5):
        want.append(np.exp(want[-1]))
    np.testing.assert_allclose(got[0], want[3], rtol=1e-13)
    for a, b in zip(got[1:], want[1:]):
        np.testing.assert_allclose(a, b, rtol=1e-13)
    # d exp(u)/du = exp(u): the gradient is the product of the five values
    np.testing.assert_allclose(x.grad.numpy(), np.prod(want[1:], axis=0), rtol=1e-12)


def test_stats_reset_zeroes_the_counters_after_reading_them():
    x = wgrad.ones(4, dtype=wgrad.float64)
    with wgrad.lazy():
        (x * 2.0).numpy()
    seen = wgrad.lazy.stats(reset=True)
    assert seen["segments"] >= 1 and seen["ops"] >= 1
    assert wgrad.lazy.stats() == {"segments": 0, "ops": 0, "compiles": 0, "cache_hits": 0,
                                  "loaded": 0, "cap": _lazy.BASE_CAP}  # the cap is no count
    with wgrad.lazy():
        (x * 3.0).numpy()
    assert wgrad.lazy.stats()["segments"] == 1


def test_decorator_and_disable():
    @wgrad.lazy()
    def f(x):
        y = x * 2
        assert wgrad.lazy.is_enabled() and _pending(y)
        with wgrad.lazy(False):
            z = x * 3
            assert not _pending(z)
        return y
    y = f(wgrad.ones(2))
    assert not wgrad.lazy.is_enabled()
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0])


# -- errors raise at the op, with torch's messages ----------------------------------------

@pytest.mark.parametrize("op, match", [
    (lambda: wgrad.ones(2) + wgrad.ones(3), r"The size of tensor a \(2\) must match the size "
                                            r"of tensor b \(3\) at non-singleton dimension 0"),
    (lambda: wgrad.ones(2, 3) @ wgrad.ones(2, 3), "cannot be multiplied"),
])
def test_errors_raise_at_the_op(op, match):
    with wgrad.lazy():
        y = wgrad.ones(2) * 2  # a pending value before the error
        with pytest.raises(RuntimeError, match=match):
            op()
        assert _pending(y)
    np.testing.assert_array_equal(y.numpy(), [2.0, 2.0])


def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    with pytest.raises(RuntimeError) as t:
        torch.ones(2) + torch.ones(3)
    with wgrad.lazy(), pytest.raises(RuntimeError) as w:
        wgrad.ones(2) + wgrad.ones(3)
    assert str(w.value) == str(t.value)


def test_env_var_turns_it_on(monkeypatch):
    from wgrad._autograd import lazy_mode
    monkeypatch.setenv("WGRAD_LAZY", "1")
    assert lazy_mode._State().on
    monkeypatch.setenv("WGRAD_LAZY", "0")
    assert not lazy_mode._State().on


def test_a_value_recorded_on_one_thread_is_read_on_another():
    import threading
    x = wgrad.arange(4, dtype=wgrad.float64)
    out = {}
    with wgrad.lazy():
        y = (x * 2).exp()
        assert _pending(y)
        t = threading.Thread(target=lambda: out.setdefault("v", y.numpy()))
        t.start()
        t.join(timeout=60)
    np.testing.assert_allclose(out["v"], np.exp(2 * np.arange(4.0)), rtol=1e-15)


def test_dropped_values_are_not_kept():
    x = wgrad.ones(3, dtype=wgrad.float64)
    with wgrad.lazy():
        y = x * 2
        z = (y + 1) * 3
        del y  # no Tensor holds it any more: not an output of the segment
        wgrad.lazy.flush()
    key = list(_lazy._CACHE)[-1]
    assert len(key[2]) == 1  # only z came back
    np.testing.assert_array_equal(z.numpy(), [9.0, 9.0, 9.0])


# -- regressions found by running the suite with WGRAD_LAZY=1 ------------------------------

def test_gradgradcheck_reentrancy_holds_over_fused_segments():
    # a segment fuses a * b + c into one rounding (NOTE [Lazy segments]): gradcheck's
    # bit-for-bit comparison of two backward passes needs both cut at the same ops
    rng = np.random.default_rng(2)
    x = wgrad.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    w = wgrad.tensor(rng.standard_normal(2), requires_grad=True)
    b = wgrad.tensor(rng.standard_normal(2), requires_grad=True)
    with wgrad.lazy():
        assert wgrad.autograd.gradgradcheck(
            lambda x, w, b: wgrad.nn.functional.layer_norm(x, (2,), w, b), (x, w, b),
            fast_mode=True)


def test_eigenvector_gauge_check_runs_lazily():
    a = wgrad.tensor(np.random.default_rng(0).standard_normal((3, 3)) * (1 + 1j),
                     requires_grad=True)
    with wgrad.lazy():
        v = wgrad.linalg.eigh(a + a.mH).eigenvectors
        with pytest.raises(RuntimeError, match="specified up to multiplication by"):
            wgrad.autograd.grad(v[1, 0].real, a)
