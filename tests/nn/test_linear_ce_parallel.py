"""F.linear_cross_entropy, nn.LinearCrossEntropyLoss/Options, nn.parallel's functions
(CPU-only behaviour), F.conv_tbc and F.native_channel_shuffle against torch itself: the
same numbers in both, values, gradients, errors, warnings, reprs and state_dict keys."""
import collections
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.autograd import gradcheck

torch = pytest.importorskip("torch")

LIBS = (torch, wgrad)


def _np(t):
    return None if t is None else np.asarray(t.detach().numpy())


def _outcome(fn, lib):
    """``("ok", value)`` or ``("raise", type name, message)`` (torch's names as wgrad's)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            value = fn(lib)
    except Exception as e:  # noqa: BLE001 - the outcome is compared
        return ("raise", type(e).__name__, str(e).replace("torch.", "wgrad."))
    return ("ok", value)


def _same(fn):
    got, want = _outcome(fn, wgrad), _outcome(fn, torch)
    if got[0] == "ok" and want[0] == "ok":
        return got[1], want[1]
    assert got == want
    return None, None


# ======================================================================================
# linear_cross_entropy: values and gradients
# ======================================================================================

_RNG = np.random.default_rng(0)
X, X1 = _RNG.standard_normal((6, 3)), _RNG.standard_normal(3)
W, W3 = _RNG.standard_normal((5, 3)), _RNG.standard_normal((5, 2, 3))
B, B3 = _RNG.standard_normal(5), _RNG.standard_normal((5, 2))
T = np.array([0, 4, 1, -100, 2, 2])
T3 = np.array([[0, 4], [1, 1], [3, -100], [2, 0], [4, 4], [1, 3]])
P = _RNG.dirichlet(np.ones(5), 6)
P3 = np.moveaxis(_RNG.dirichlet(np.ones(5), (6, 2)), -1, 1)
CW = _RNG.uniform(0.5, 2.0, 5)

# name: (input, weight, bias, target, keyword arguments, options or None)
LCE = {
    "mean": (X, W, None, T, {}, None),
    "sum-bias-weight": (X, W, B, T, dict(reduction="sum", weight=CW), None),
    "none-ignore1": (X, W, B, np.array([0, 1, 1, 2, 3, 4]),
                     dict(reduction="none", ignore_index=1), None),
    "unbatched": (X1, W, B, np.array(3), {}, None),
    "kdim": (X, W3, B3, T3, dict(weight=CW), None),
    "kdim-none": (X, W3, None, T3, dict(reduction="none"), None),
    "probs-smooth": (X, W, B, P, dict(label_smoothing=0.2, weight=CW), None),
    "probs-kdim": (X, W3, B3, P3, {}, None),
    "probs-unbatched": (X1, W, None, P[0], dict(reduction="sum"), None),
    "smooth-index": (X, W, None, T, dict(label_smoothing=0.1, weight=CW), None),
    "all-ignored": (X, W, None, np.full(6, -100), {}, None),
    "chunk-mean": (X, W, B, T, dict(weight=CW), dict(batch_chunk_size=4)),
    "chunk-sum": (X, W, None, T, dict(reduction="sum"), dict(batch_chunk_size=1)),
    "chunk-none": (X, W, B, T, dict(reduction="none", weight=CW), dict(batch_chunk_size=4)),
    "chunk-auto": (X, W, B, T, {}, {}),
    "chunk-aspect": (X, W, None, np.array([0, 4, 1, 2, 2, 3]), dict(ignore_index=2),
                     dict(chunking_method="aspect_ratio", acc_policy="balanced")),
    "chunk-unbatched": (X1, W, B, np.array(1), dict(reduction="none"), {}),
    "chunk-fallback-kdim": (X, W3, B3, T3, {}, {}),
    "chunk-fallback-probs": (X, W, None, P, {}, dict(batch_chunk_size=2)),
}


def _lce(lib, name, dtype="float64"):
    x, w, b, t, kw, opts = LCE[name]
    dt = getattr(lib, dtype)
    xs = [None if a is None else lib.tensor(a, dtype=dt, requires_grad=True) for a in (x, w, b)]
    tt = lib.tensor(t, dtype=dt) if t.dtype.kind == "f" else lib.tensor(t)
    kw = {k: lib.tensor(v, dtype=dt) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    o = None if opts is None else lib.nn.LinearCrossEntropyOptions(**opts)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        y = lib.nn.functional.linear_cross_entropy(xs[0], xs[1], tt, linear_bias=xs[2],
                                                   options=o, **kw)
    proj = lib.tensor(np.random.default_rng(1).standard_normal(tuple(y.shape)), dtype=dt)
    leaves = [a for a in xs if a is not None]
    grads = lib.autograd.grad((y * proj).sum(), leaves)
    return y, grads, [str(c.message).replace("torch.", "wgrad.") for c in caught]


@pytest.mark.parametrize("name", list(LCE))
def test_linear_cross_entropy_equals_torch(name):
    (y, gs, warns), (yt, gts, warnst) = _lce(wgrad, name), _lce(torch, name)
    assert tuple(y.shape) == tuple(yt.shape) and str(y.dtype)[6:] == str(yt.dtype)[6:]
    np.testing.assert_allclose(_np(y), _np(yt), rtol=1e-10, atol=1e-12)
    for g, gt in zip(gs, gts):
        np.testing.assert_allclose(_np(g), _np(gt), rtol=1e-9, atol=1e-12)
    assert warns == warnst


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_chunked_low_precision_equals_torch(dtype):
    # torch computes float16/bfloat16 chunks in float32 (acc_dtype) and rounds once
    (y, gs, _), (yt, gts, _) = _lce(wgrad, "chunk-mean", dtype), _lce(torch, "chunk-mean", dtype)
    assert str(y.dtype)[6:] == str(yt.dtype)[6:]
    tol = 1e-5 if dtype == "float32" else 2e-2
    for a, b in zip([y, *gs], [yt, *gts]):
        np.testing.assert_allclose(_np(a.float()), _np(b.float()), rtol=tol, atol=tol)


def test_chunked_gradcheck():
    x = wgrad.tensor(X, requires_grad=True)
    w = wgrad.tensor(W, requires_grad=True)
    b = wgrad.tensor(B, requires_grad=True)
    F, O = wgrad.nn.functional, wgrad.nn.LinearCrossEntropyOptions
    for red, opts in (("mean", O(batch_chunk_size=4, allow_retain_graph=True)),
                      ("none", O(batch_chunk_size=5))):
        assert gradcheck(lambda x, w, b: F.linear_cross_entropy(
            x, w, wgrad.tensor(T), linear_bias=b, weight=wgrad.tensor(CW), reduction=red,
            options=opts), (x, w, b))


def _backward_twice(lib, reduction, allow, retain):
    x = lib.tensor(X, requires_grad=True)
    o = lib.nn.LinearCrossEntropyOptions(allow_retain_graph=allow)
    y = lib.nn.functional.linear_cross_entropy(x, lib.tensor(W), lib.tensor(T),
                                               reduction=reduction, options=o).sum()
    y.backward(retain_graph=retain)
    first = _np(x.grad).copy()
    y.backward()
    return _np(x.grad) - first


@pytest.mark.parametrize("reduction, allow, retain", [
    ("mean", False, False), ("mean", False, True), ("sum", True, True), ("mean", True, False),
    ("none", False, False), ("none", False, True)])
def test_chunked_second_backward_as_torch(reduction, allow, retain):
    got, want = _same(lambda L: _backward_twice(L, reduction, allow, retain))
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("reduction", ["mean", "none"])
def test_chunked_gradients_are_not_differentiable_again(reduction):
    # torch: higher-order AD is unsupported on the chunked path: the gradient has no graph
    for L in LIBS:
        x = L.tensor(X, requires_grad=True)
        y = L.nn.functional.linear_cross_entropy(
            x, L.tensor(W), L.tensor(T), reduction=reduction,
            options=L.nn.LinearCrossEntropyOptions()).sum()
        (g,) = L.autograd.grad(y, x, create_graph=True)
        assert not g.requires_grad


def test_chunked_node_names_as_torch():
    names = []
    for L in LIBS:
        x = L.tensor(X, requires_grad=True)
        o = L.nn.LinearCrossEntropyOptions()
        F = L.nn.functional
        names.append([type(F.linear_cross_entropy(x, L.tensor(W), L.tensor(T), reduction=r,
                                                  options=o).grad_fn).__name__
                      for r in ("mean", "none")])
    assert names[0] == names[1]


# ======================================================================================
# linear_cross_entropy: errors
# ======================================================================================

def _call(L, x=X, w=W, t=T, **kw):
    opts = kw.pop("opts", None)
    o = None if opts is None else L.nn.LinearCrossEntropyOptions(**opts)
    conv = {k: L.tensor(v) if isinstance(v, np.ndarray) else v for k, v in kw.items()}
    return L.nn.functional.linear_cross_entropy(L.tensor(x), L.tensor(w), L.tensor(t),
                                                options=o, **conv).detach().numpy()


LCE_ERRORS = {
    "input-3d": lambda L: _call(L, x=X[None]),
    "input-0d": lambda L: _call(L, x=X[0, 0]),
    "weight-1d": lambda L: _call(L, w=W[0]),
    "in-features": lambda L: _call(L, w=W[:, :2]),
    "bias-shape": lambda L: _call(L, linear_bias=B[:4]),
    "kdim-unbatched": lambda L: _call(L, x=X1, w=W3, t=np.array([1, 2])),
    "probs-ignore-index": lambda L: _call(L, t=P, ignore_index=-100),
    "bad-reduction": lambda L: _call(L, reduction="bad"),
    "bad-reduction-opts": lambda L: _call(L, reduction="bad", opts={}),
    "int32-target": lambda L: _call(L, t=T.astype(np.int32)),
    "target-oob": lambda L: _call(L, t=np.array([0, 1, 2, 7, 0, 0])),
    "target-oob-opts": lambda L: _call(L, t=np.array([0, 1, 2, 7, 0, 0]), opts={}),
    "ignore-other-opts": lambda L: _call(L, ignore_index=1, opts={}),
    "class-weight-short-opts": lambda L: _call(L, weight=CW[:3], opts={}),
    "target-negative-opts": lambda L: _call(L, t=np.array([0, -5, 1, 7, 0, 0]), opts={}),
    "target-negative-weight-opts": lambda L: _call(L, t=np.array([0, -5, 1, 7, 0, 0]),
                                                   weight=CW, opts={}),
    "class-weight-long-opts": lambda L: _call(L, weight=np.ones(7), opts={}),
    "mixed-dtype-opts": lambda L: _call(L, x=X.astype(np.float32), opts={}),
    "acc-dtype-opts": lambda L: _call(L, opts=dict(acc_dtype=L.float32)),
    "chunk-conflict": lambda L: _call(L, opts=dict(batch_chunk_size=3,
                                                   chunking_method="aspect_ratio")),
    "positional-ignore": lambda L: L.nn.functional.linear_cross_entropy(
        L.tensor(X), L.tensor(W), L.tensor(T), None),
    "smoothing-over-1": lambda L: _call(L, label_smoothing=1.5),
    "batch-mismatch": lambda L: _call(L, t=T[:4]),
}


@pytest.mark.parametrize("name", list(LCE_ERRORS))
def test_linear_cross_entropy_errors_as_torch(name):
    got, want = _same(LCE_ERRORS[name])
    if want is not None:
        np.testing.assert_allclose(got, want, rtol=1e-10)


# ======================================================================================
# LinearCrossEntropyOptions
# ======================================================================================

OPTION_CASES = {
    "default": {},
    "positional": (True, 4, None, "compact", "float64"),
    "aspect2": dict(chunking_method="aspect_ratio:2"),
    "bad-policy": dict(acc_policy="x"),
    "bad-method": dict(chunking_method="foo"),
    "bad-factor": dict(chunking_method="aspect_ratio:0"),
    "zero-size": dict(batch_chunk_size=0),
    "float-size": dict(batch_chunk_size=2.0),
    "int-dtype": dict(acc_dtype="int32"),
    "accurate": dict(acc_dtype=None, acc_policy="accurate"),
}


def _options(L, case):
    args = OPTION_CASES[case]
    conv = lambda v: getattr(L, v) if v in ("float64", "int32") else v  # noqa: E731
    if isinstance(args, tuple):
        return L.nn.LinearCrossEntropyOptions(*map(conv, args))
    return L.nn.LinearCrossEntropyOptions(**{k: conv(v) for k, v in args.items()})


@pytest.mark.parametrize("case", list(OPTION_CASES))
def test_options_construction_as_torch(case):
    got, want = _same(lambda L: repr(_options(L, case)).replace("torch.", "wgrad."))
    assert got == want


@pytest.mark.parametrize("opts, shape, dtype, device", [
    ({}, (64, 16, 1000), "float32", "cpu"),
    ({}, (64, 16, 1000), "bfloat16", "cpu"),
    ({}, (64, 16, 1000), "float16", None),
    (dict(batch_chunk_size=8), (64, 16, 1000), "float32", "cpu"),
    (dict(batch_chunk_size=500), (64, 16, 20), "float64", "cpu"),
    (dict(chunking_method="aspect_ratio:4", acc_policy="accurate"), (100, 3, 7), "float16",
     "cpu"),
    (dict(chunking_method=None), (5, 3, 7), "float32", "cpu"),
])
def test_options_resolution_as_torch(opts, shape, dtype, device):
    def resolved(L):
        o = L.nn.LinearCrossEntropyOptions(**opts)
        dev = None if device is None else L.device(device)
        return repr(o._adjust(*shape, getattr(L, dtype), dev)).replace("torch.", "wgrad.")
    got, want = _same(resolved)
    assert got == want


def test_options_frozen_and_slotted():
    o = wgrad.nn.LinearCrossEntropyOptions()
    assert o == wgrad.nn.LinearCrossEntropyOptions() and hash(o) == hash(
        wgrad.nn.LinearCrossEntropyOptions())
    assert wgrad.nn.LinearCrossEntropyOptions.__slots__ == \
        torch.nn.LinearCrossEntropyOptions.__slots__
    with pytest.raises(AttributeError, match="cannot assign to field 'batch_chunk_size'"):
        o.batch_chunk_size = 3


# ======================================================================================
# LinearCrossEntropyLoss
# ======================================================================================

MODULES = {  # name: (constructor kwargs, input, target)
    "plain": (dict(), X, T),
    "bias-weight-sum": (dict(bias=True, weight=CW, reduction="sum"), X, T),
    "kdim": (dict(out_features=(2,), bias=True, ignore_index=3), X, np.where(T3 < 0, 3, T3)),
    "probs-smooth": (dict(label_smoothing=0.3, bias=True), X, P),
    "chunked": (dict(bias=True, options=dict(batch_chunk_size=2)), X, T),
    "unbatched": (dict(bias=True, reduction="none"), X1, np.array(2)),
}


def _module(L, name):
    kw, x, t = MODULES[name]
    kw = dict(kw)
    if "weight" in kw:
        kw["weight"] = L.tensor(kw["weight"])
    if "options" in kw:
        kw["options"] = L.nn.LinearCrossEntropyOptions(**kw["options"])
    return L.nn.LinearCrossEntropyLoss(3, 5, dtype=L.float64, **kw), x, t


@pytest.mark.parametrize("name", list(MODULES))
def test_module_equals_torch(name):
    m, x, t = _module(wgrad, name)
    mt, _, _ = _module(torch, name)
    assert repr(m) == repr(mt)
    assert list(m.state_dict()) == list(mt.state_dict())
    assert [n for n, _ in m.named_parameters()] == [n for n, _ in mt.named_parameters()]
    assert [n for n, _ in m.named_buffers()] == [n for n, _ in mt.named_buffers()]
    mt.load_state_dict({k: torch.tensor(_np(v)) for k, v in m.state_dict().items()})
    outs = []
    for L, mod in ((wgrad, m), (torch, mt)):
        xi = L.tensor(x, requires_grad=True)
        ti = L.tensor(t) if t.dtype.kind != "f" else L.tensor(t, dtype=L.float64)
        y = mod(xi, ti)
        proj = L.tensor(np.random.default_rng(2).standard_normal(tuple(y.shape)))
        grads = L.autograd.grad((y * proj).sum(), [xi, *mod.parameters()])
        outs.append([_np(y), *map(_np, grads)])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_module_init_as_torch():
    wgrad.manual_seed(0)
    m = wgrad.nn.LinearCrossEntropyLoss(40, 30, out_features=(3,), bias=True)
    mt = torch.nn.LinearCrossEntropyLoss(40, 30, out_features=(3,), bias=True)
    bound = 1 / np.sqrt(40)  # kaiming_uniform(a=sqrt(5)) and the bias: U(+-1/sqrt(fan_in))
    for p, pt in zip(m.parameters(), mt.parameters()):
        assert tuple(p.shape) == tuple(pt.shape) and p.dtype is wgrad.float32
        a = _np(p)
        assert np.abs(a).max() <= bound and np.abs(a).max() > 0.9 * bound
        assert abs(a.mean()) < 0.2 * bound and abs(a.std() - bound / np.sqrt(3)) < 0.2 * bound
    assert m.num_classes == 30 and m.out_features == (3,) and m.ignore_index is None
    assert m.__constants__ == mt.__constants__


MODULE_ERRORS = {
    "weight-shape": lambda L: L.nn.LinearCrossEntropyLoss(3, 5, weight=L.ones(4)),
    "smoothing": lambda L: L.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=1.5),
    "negative-smoothing": lambda L: L.nn.LinearCrossEntropyLoss(3, 5, label_smoothing=-0.1),
    "size-average": lambda L: L.nn.LinearCrossEntropyLoss(3, 5, size_average=True),
    "positional": lambda L: L.nn.LinearCrossEntropyLoss(3, 5, (2,)),
    "bad-reduction": lambda L: L.nn.LinearCrossEntropyLoss(3, 5, reduction="bad")(
        L.ones(2, 3), L.tensor([0, 1])),
}


@pytest.mark.parametrize("name", list(MODULE_ERRORS))
def test_module_errors_as_torch(name):
    _same(lambda L: repr(MODULE_ERRORS[name](L)))


# ======================================================================================
# nn.parallel without a GPU (a CPU-only torch)
# ======================================================================================

requires_no_gpu = pytest.mark.skipif(wgrad.cuda.is_available(),
                                     reason="torch here is CPU-only: compared without a GPU")
_PT = collections.namedtuple("_PT", "a b")


def _lin(L):
    return L.nn.Linear(3, 2)


def _with_buffer(L):
    m = L.nn.Module()
    m.register_buffer("b", L.ones(2))
    return m


PARALLEL = {
    "data_parallel": lambda L, P: P.data_parallel(_lin(L), L.ones(4, 3)),
    "data_parallel-ids": lambda L, P: P.data_parallel(_lin(L), L.ones(4, 3), [0]),
    "data_parallel-none": lambda L, P: P.data_parallel(L.nn.ReLU(), None, []),
    "replicate": lambda L, P: P.replicate(_lin(L), [0]),
    "replicate-empty": lambda L, P: P.replicate(_lin(L), []),
    "replicate-cpu": lambda L, P: P.replicate(_lin(L), ["cpu"]),
    "replicate-detach": lambda L, P: P.replicate(_lin(L), [0], detach=True),
    "replicate-buffer": lambda L, P: P.replicate(_with_buffer(L), [0]),
    "replicate-relu": lambda L, P: [repr(r) for r in P.replicate(L.nn.Sequential(
        L.nn.ReLU(), L.nn.Tanh()), [0, L.device("cuda", 1), "cuda"])],
    "scatter-tensor": lambda L, P: P.scatter(L.ones(4), [0, 1]),
    "scatter-cpu": lambda L, P: P.scatter(L.ones(4), ["cpu"]),
    "scatter-objects": lambda L, P: P.scatter([3, "a", (), {"k": [1]}], [0, 1]),
    "scatter-dict": lambda L, P: P.scatter({"a": 3, "b": (1, 2)}, [0, 1, 2]),
    "scatter-namedtuple": lambda L, P: P.scatter(_PT(1, "x"), [0, 1]),
    "scatter-nested-tensor": lambda L, P: P.scatter((1, [L.ones(2)]), [0]),
    "scatter_kwargs": lambda L, P: P.scatter_gather.scatter_kwargs((1, 2), {"a": 1}, [0, 1]),
    "scatter_kwargs-pad": lambda L, P: P.scatter_gather.scatter_kwargs((1,), {"a": 1}, [0, 1]),
    "scatter_kwargs-empty": lambda L, P: P.scatter_gather.scatter_kwargs((), None, [0]),
    "scatter_kwargs-kw": lambda L, P: P.scatter_gather.scatter_kwargs((), {"a": 1}, [0, 1]),
    "scatter_kwargs-tensor": lambda L, P: P.scatter_gather.scatter_kwargs((L.ones(2),), {},
                                                                          [0]),
    "gather-tensors": lambda L, P: P.gather([L.ones(2), L.ones(2)], 0),
    "gather-cpu": lambda L, P: P.gather([L.ones(2), L.ones(2)], "cpu"),
    "gather-none": lambda L, P: P.gather([None, None], 0),
    "gather-list-none": lambda L, P: P.gather([[None, None], [None, None]], 0),
    "gather-dict": lambda L, P: P.gather([{"a": None}, {"a": None}], 0),
    "gather-namedtuple": lambda L, P: P.gather([_PT(None, None), _PT(None, None)], 0),
    "gather-dict-keys": lambda L, P: P.gather([{"a": 1}, {"a": 2, "b": 3}], 0),
    "gather-ints": lambda L, P: P.gather([1, 2], 0),
    "gather-dict-ints": lambda L, P: P.gather([{"a": 1}, {"a": 2}], 0),
    "parallel_apply": lambda L, P: P.parallel_apply([L.nn.ReLU()], [L.ones(2)]),
    "parallel_apply-inputs": lambda L, P: P.parallel_apply([L.nn.ReLU()] * 2, [L.ones(2)]),
    "parallel_apply-kwargs": lambda L, P: P.parallel_apply([L.nn.ReLU()], [L.ones(2)],
                                                           [{}, {}]),
    "parallel_apply-devices": lambda L, P: P.parallel_apply([L.nn.ReLU()], [L.ones(2)], None,
                                                            [0, 1]),
    "parallel_apply-cpu": lambda L, P: P.parallel_apply([L.nn.ReLU()], [L.ones(2)], None,
                                                        ["cpu"]),
    "parallel_apply-empty": lambda L, P: P.parallel_apply([], []),
    "get_a_var": lambda L, P: repr(P.parallel_apply.__globals__["get_a_var"](
        [1, (2, {"k": L.ones(1)})])),
    "comm.broadcast": lambda L, P: P.comm.broadcast(L.ones(2), [0]),
    "comm.broadcast-cpu": lambda L, P: P.comm.broadcast(L.ones(2), ["cpu"]),
    "comm.broadcast-cuda": lambda L, P: P.comm.broadcast(L.ones(2), ["cuda"]),
    "comm.broadcast-neither": lambda L, P: P.comm.broadcast(L.ones(2)),
    "comm.broadcast-out": lambda L, P: P.comm.broadcast(L.ones(2), out=[L.ones(2)]),
    "comm.broadcast_coalesced": lambda L, P: P.comm.broadcast_coalesced([L.ones(2)], [0]),
    "comm.reduce_add": lambda L, P: P.comm.reduce_add([L.ones(2), L.ones(2)]),
    "comm.reduce_add_coalesced": lambda L, P: P.comm.reduce_add_coalesced(
        [[L.ones(2)], [L.ones(2)]]),
    "comm.reduce_add_coalesced-empty": lambda L, P: P.comm.reduce_add_coalesced([[], []]),
    "comm.scatter": lambda L, P: P.comm.scatter(L.ones(4), [0, 1]),
    "comm.scatter-out-devices": lambda L, P: P.comm.scatter(L.ones(4), [0], out=[L.ones(4)]),
    "comm.scatter-out-sizes": lambda L, P: P.comm.scatter(L.ones(4), chunk_sizes=[4],
                                                          out=[L.ones(4)]),
    "comm.scatter-out": lambda L, P: P.comm.scatter(L.ones(4), out=[L.ones(4)]),
    "comm.gather": lambda L, P: P.comm.gather([L.ones(2), L.ones(2)]),
    "comm.gather-cpu": lambda L, P: P.comm.gather([L.ones(2)], destination="cpu"),
    "comm.gather-out-dest": lambda L, P: P.comm.gather([L.ones(2)], 0, 0, out=L.ones(2)),
    "comm.gather-out": lambda L, P: P.comm.gather([L.ones(2)], out=L.ones(2)),
    "ddp-cpu": lambda L, P: P.DistributedDataParallelCPU(_lin(L)),
    "all": lambda L, P: P.__all__,
}


@requires_no_gpu
@pytest.mark.parametrize("name", list(PARALLEL))
def test_parallel_as_cpu_only_torch(name):
    got, want = _same(lambda L: PARALLEL[name](L, L.nn.parallel))
    assert repr(got).replace("wgrad.", "torch.") == repr(want)


@requires_no_gpu
def test_parallel_warnings_as_torch():
    def caught(L):
        P = L.nn.parallel
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            for fn in (lambda: P.comm.gather([L.ones(2)], destination=-1),
                       lambda: P.DistributedDataParallelCPU(_lin(L)),
                       lambda: P.scatter_gather.is_namedtuple(_PT(1, 2))):
                try:
                    fn()
                except (AttributeError, ValueError):
                    pass
        return [(c.category.__name__, str(c.message)) for c in w]
    assert caught(wgrad) == caught(torch)


def test_replicas_of_a_module_without_parameters():
    net = wgrad.nn.Sequential(wgrad.nn.ReLU(), wgrad.nn.Tanh())
    replicas = wgrad.nn.parallel.replicate(net, [0, 1])
    x = wgrad.tensor([-1.0, 2.0])
    assert all(r is not net and r[0] is not net[0] and r._is_replica for r in replicas)
    assert replicas[0][0] is not replicas[1][0]
    np.testing.assert_allclose(_np(replicas[1](x)), _np(net(x)))


def test_data_parallel_module_runs_the_module_without_a_gpu():
    for L in LIBS:  # DataParallel (not data_parallel) falls back to the module on the CPU
        m = L.nn.DataParallel(L.nn.ReLU())
        assert m.device_ids == [] and repr(m) == "DataParallel(\n  (module): ReLU()\n)"


# ======================================================================================
# conv_tbc, native_channel_shuffle
# ======================================================================================

_XT, _WT, _BT = (_RNG.standard_normal(s) for s in ((5, 2, 3), (3, 3, 4), (4,)))


@pytest.mark.parametrize("pad", [0, 1, 2, -1])
def test_conv_tbc_equals_torch(pad):
    outs = []
    for L in LIBS:
        args = [L.tensor(a, requires_grad=True) for a in (_XT, _WT, _BT)]
        assert L.nn.functional.conv_tbc is L.conv_tbc
        y = L.nn.functional.conv_tbc(*args, pad)
        proj = L.tensor(np.random.default_rng(3).standard_normal(tuple(y.shape)))
        outs.append([_np(y), *map(_np, L.autograd.grad((y * proj).sum(), args))])
    for a, b in zip(*outs):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_conv_tbc_gradcheck():
    args = [wgrad.tensor(a, requires_grad=True) for a in (_XT, _WT, _BT)]
    assert gradcheck(lambda x, w, b: wgrad.nn.functional.conv_tbc(x, w, b, 1), args)


SHUFFLE_ERRORS = {
    "tbc-bias-none": lambda L: L.nn.functional.conv_tbc(L.ones(3, 1, 2), L.ones(2, 2, 1), None),
    "tbc-input-none": lambda L: L.nn.functional.conv_tbc(None, L.ones(2, 2, 1), L.ones(1)),
    "tbc-pad-float": lambda L: L.nn.functional.conv_tbc(L.ones(3, 1, 2), L.ones(2, 2, 1),
                                                        L.ones(1), 1.0),
    "tbc-short": lambda L: L.nn.functional.conv_tbc(L.ones(1, 1, 2), L.ones(3, 2, 1),
                                                    L.ones(1)),
    "tbc-channels": lambda L: L.nn.functional.conv_tbc(L.ones(3, 1, 3), L.ones(2, 2, 1),
                                                       L.ones(1)),
    "shuffle": lambda L: L.nn.functional.native_channel_shuffle(
        L.arange(12.).reshape(1, 6, 2), 3).numpy(),
    "shuffle-int": lambda L: L.nn.functional.native_channel_shuffle(
        L.arange(8).reshape(1, 4, 2), 2).numpy(),
    "shuffle-groups": lambda L: L.nn.functional.native_channel_shuffle(L.ones(1, 4, 2), 3),
    "shuffle-zero": lambda L: L.nn.functional.native_channel_shuffle(L.ones(1, 4, 2), 0),
    "shuffle-2d": lambda L: L.nn.functional.native_channel_shuffle(L.ones(2, 4), 2),
    "shuffle-float-groups": lambda L: L.nn.functional.native_channel_shuffle(L.ones(1, 4, 2),
                                                                             2.0),
    "shuffle-backward": lambda L: L.nn.functional.native_channel_shuffle(
        L.ones(1, 4, 2, requires_grad=True), 2).sum().backward(),
    "same-object": lambda L: L.nn.functional.native_channel_shuffle is L.native_channel_shuffle,
}


@pytest.mark.parametrize("name", list(SHUFFLE_ERRORS))
def test_conv_tbc_and_native_channel_shuffle_as_torch(name):
    got, want = _same(SHUFFLE_ERRORS[name])
    if want is not None:
        np.testing.assert_array_equal(got, want)


def test_native_channel_shuffle_values_are_channel_shuffle():
    x = wgrad.tensor(_RNG.standard_normal((2, 6, 3)))
    F = wgrad.nn.functional
    np.testing.assert_array_equal(_np(F.native_channel_shuffle(x, 2)),
                                  _np(F.channel_shuffle(x, 2)))


def test_functional_names():
    F = wgrad.nn.functional
    for name in ("linear_cross_entropy", "conv_tbc", "native_channel_shuffle"):
        assert name in F.__all__ and hasattr(torch.nn.functional, name)
    for name in ("LinearCrossEntropyLoss", "LinearCrossEntropyOptions"):
        assert getattr(wgrad.nn, name) is getattr(wgrad.nn.modules, name)
        assert name in wgrad.nn.__all__


@pytest.fixture
def simulated_gpus(monkeypatch):
    """Two "GPUs" that are the CPU: the GPU branches of nn.parallel, checked on the host
    (torch's values are those of the module run on the whole batch)."""
    comm = wgrad.nn.parallel.comm
    monkeypatch.setattr(wgrad.cuda, "is_available", lambda: True)
    monkeypatch.setattr(wgrad.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(wgrad.cuda, "current_device", lambda: 0)
    monkeypatch.setattr(comm, "_dev", lambda index: wgrad.device("cpu"))
    monkeypatch.setattr(comm, "_on_cpu", lambda t: False)


def test_parallel_gpu_branches_simulated(simulated_gpus):
    P = wgrad.nn.parallel
    wgrad.manual_seed(0)
    net = wgrad.nn.Sequential(wgrad.nn.Linear(3, 4), wgrad.nn.BatchNorm1d(4).eval())
    x = wgrad.tensor(_RNG.standard_normal((5, 3)), dtype=wgrad.float32, requires_grad=True)
    ref = net(x)
    gref = wgrad.autograd.grad(ref.square().sum(), [x, *net.parameters()])
    out = P.data_parallel(net, x)
    np.testing.assert_allclose(_np(out), _np(ref), rtol=1e-6)
    got = wgrad.autograd.grad(out.square().sum(), [x, *net.parameters()])
    for a, b in zip(got, gref):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-5, atol=1e-6)
    assert [tuple(t.shape) for t in P.scatter(x, [0, 1])] == [(3, 3), (2, 3)]
    assert [tuple(t[0].shape) for t in P.scatter((x,), [0, 1, 2, 3, 4, 5])] == [(1, 3)] * 5
    np.testing.assert_array_equal(_np(P.gather(P.scatter(x, [0, 1]), 0)), _np(x))
    with pytest.warns(UserWarning, match="all input tensors were scalars"):
        assert tuple(P.gather([x.sum(), x.sum()], "cpu").shape) == (2,)
    replicas = P.replicate(net, [0, 1])
    assert not any(isinstance(p, wgrad.nn.Parameter) for p in vars(replicas[1][0]).values())
    assert list(replicas[1].parameters()) == [] and replicas[1][1].running_mean is not None
    detached = P.replicate(net, [0], detach=True)[0][0].weight
    assert not detached.requires_grad
    with pytest.raises(ValueError, match="Caught ValueError in replica 1 on device 1"):
        P.parallel_apply([wgrad.nn.ReLU(), lambda v: int("x")], [x, (x,)], None, [0, 1])
    np.testing.assert_array_equal(_np(P.comm.reduce_add([x, x], 0)), 2 * _np(x))
    assert len(P.comm.broadcast(x, [0, 1])) == 2
