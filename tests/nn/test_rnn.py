"""RNN / LSTM / GRU and their cells against torch with the same weights (outputs, final
states and the gradients of input, initial state and every parameter; float64 and
complex128), packed sequences, parameter names/shapes/initialisation, one fused node per
layer and direction, gradcheck, torch's messages."""
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.nn import _rnn
from wgrad.testing import check_op, to_np

torch = pytest.importorskip("torch")

rng = np.random.default_rng(0)


def _pair(name, dtype, *args, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's complex-module warning
        tm = getattr(torch.nn, name)(*args, **kw).to(getattr(torch, dtype))
    wm = getattr(wgrad.nn, name)(*args, **kw, dtype=getattr(wgrad, dtype))
    wm.load_state_dict({k: wgrad.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    return tm, wm


def _arr(shape, dtype):
    a = rng.standard_normal(shape)
    return a + 1j * rng.standard_normal(shape) if dtype == "complex128" else a


def _leaves(lib, arrays):
    return [lib.tensor(a, requires_grad=True) for a in arrays]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [y for o in out for y in _flat(o)]
    return [out]


def _check(tm, wm, arrays, call):
    got = []
    for lib, m in ((torch, tm), (wgrad, wm)):
        xs = _leaves(lib, arrays)
        outs = _flat(call(m, *xs))
        loss = sum((o * o.conj()).real.sum() * (i + 1) for i, o in enumerate(outs))
        loss.backward()
        vals = [o.detach().numpy() if lib is torch else to_np(o) for o in outs]
        grads = [x.grad for x in xs] + [p.grad for _, p in m.named_parameters()]
        grads = [g.numpy() if lib is torch else to_np(g) for g in grads]
        got.append((vals, grads))
    (vt, gt), (vw, gw) = got
    for a, b in zip(vw + gw, vt + gt):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-10)


# (class, options, dtype, also unbatched); XLA compiles per layer, direction and shape, so the
# table is lean: each option and each dtype is covered once or twice, not crossed
LAYERS = [
    ("LSTM", dict(num_layers=2, bidirectional=True), "float64", False),
    ("LSTM", dict(proj_size=2, batch_first=True), "complex128", True),
    ("GRU", dict(bidirectional=True, bias=False), "complex128", False),
    ("GRU", dict(), "float64", True),
    ("RNN", dict(nonlinearity="relu", batch_first=True), "float64", False),
    ("RNN", dict(), "complex128", False),
]


@pytest.mark.parametrize("row", LAYERS, ids=[f"{r[0]}-{r[2]}-{'-'.join(r[1])}" for r in LAYERS])
def test_layers_against_torch(row):
    name, kw, dtype, unbatched = row
    tm, wm = _pair(name, dtype, 3, 4, **kw)
    dirs = 2 if kw.get("bidirectional") else 1
    layers = kw.get("num_layers", 1)
    out_h = kw.get("proj_size") or 4
    x = _arr((2, 5, 3) if kw.get("batch_first") else (5, 2, 3), dtype)
    h0 = _arr((layers * dirs, 2, out_h), dtype)
    if name == "LSTM":
        c0 = _arr((layers * dirs, 2, 4), dtype)
        _check(tm, wm, [x, h0, c0], lambda m, x, h, c: m(x, (h, c)))
    else:
        _check(tm, wm, [x, h0], lambda m, x, h: m(x, h))
    if unbatched:
        _check(tm, wm, [x[0]], lambda m, x: m(x))         # zero initial state


@pytest.mark.parametrize("name,dtype", [("RNNCell", "float64"), ("LSTMCell", "float64"),
                                        ("LSTMCell", "complex128"), ("GRUCell", "complex128")])
def test_cells_against_torch(name, dtype):
    tm, wm = _pair(name, dtype, 3, 4)
    x, h = _arr((2, 3), dtype), _arr((2, 4), dtype)
    if name == "LSTMCell":
        _check(tm, wm, [x, h, _arr((2, 4), dtype)], lambda m, x, h, c: m(x, (h, c)))
        if dtype == "float64":
            _check(tm, wm, [x[0]], lambda m, x: m(x))
    else:
        _check(tm, wm, [x, h], lambda m, x, h: m(x, h))


@pytest.mark.parametrize("name", ["LSTM"])
def test_packed_sequences_against_torch(name):
    tm, wm = _pair(name, "float64", 3, 4, bidirectional=True)
    x, lengths = _arr((5, 3, 3), "float64"), [3, 5, 2]
    h0 = _arr((2, 3, 4), "float64")

    def call(m, x, h):
        lib = torch if isinstance(m, torch.nn.Module) else wgrad
        rnn = lib.nn.utils.rnn
        packed = rnn.pack_padded_sequence(x, lengths, enforce_sorted=False)
        hx = (h, h * 0.5) if name == "LSTM" else h
        out, hn = m(packed, hx)
        padded, lens = rnn.pad_packed_sequence(out, batch_first=True, total_length=6)
        return padded, hn, lens.to(x.dtype)
    _check(tm, wm, [x, h0], call)


def test_pack_pad_utilities_against_torch():
    seqs = [_arr((n, 2), "float64") for n in (2, 4, 1)]
    for lib in (torch, wgrad):
        ts = [lib.tensor(s) for s in seqs]
        rnn = lib.nn.utils.rnn
        p = rnn.pack_sequence(ts, enforce_sorted=False)
        padded = rnn.pad_sequence(ts, batch_first=True, padding_value=-1.0, padding_side="left")
        res = [p.data, p.batch_sizes, p.sorted_indices, p.unsorted_indices, padded,
               rnn.pad_packed_sequence(p)[0]] + rnn.unpack_sequence(p)
        res = [r.numpy() if lib is torch else to_np(r) for r in res]
        if lib is torch:
            expected = res
    for a, b in zip(res, expected):
        np.testing.assert_array_equal(a, b)


def test_parameters_init_and_repr_match_torch():
    kw = dict(num_layers=2, proj_size=2, bidirectional=True, batch_first=True, dropout=0.25)
    tm, wm = torch.nn.LSTM(3, 8, **kw), wgrad.nn.LSTM(3, 8, **kw)
    assert repr(wm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in wm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert list(wm.state_dict()) == list(tm.state_dict())
    bound = 1 / np.sqrt(8)
    vals = np.concatenate([to_np(p).ravel() for p in wm.parameters()])
    assert np.abs(vals).max() <= bound and np.abs(vals).max() > 0.8 * bound
    for name, args, kw in [("RNN", (3, 4), dict(nonlinearity="relu", bias=False)),
                           ("GRUCell", (3, 4), dict(bias=False)),
                           ("RNNCell", (3, 4), dict(nonlinearity="relu"))]:
        t, w = getattr(torch.nn, name)(*args, **kw), getattr(wgrad.nn, name)(*args, **kw)
        assert repr(w) == repr(t)
        assert list(w.state_dict()) == list(t.state_dict())


def _nodes(t):
    seen, stack = set(), [t.grad_fn]
    while stack:
        n = stack.pop()
        if n is None or n in seen:
            continue
        seen.add(n)
        stack.extend(f for f, _ in n.next_functions)
    return len(seen)


def test_time_loop_is_one_node_per_layer_and_direction():
    m = wgrad.nn.GRU(2, 3, bidirectional=True, dtype=wgrad.float64)
    counts = []
    for steps in (2, 5):
        out, _ = m(wgrad.randn(steps, 1, 2, dtype=wgrad.float64, requires_grad=True))
        counts.append(_nodes(out))
    assert counts[0] == counts[1]
    assert counts[0] == 12      # cat, one fused node per direction, 9 AccumulateGrads


@pytest.mark.parametrize("mode,dtype", [("LSTM", "complex128"), ("GRU", "float64")])
def test_gradcheck_fused_layer(mode, dtype):
    gates = 4 if mode == "LSTM" else 3
    x, h, c = _arr((3, 1, 2), dtype), _arr((1, 2), dtype), _arr((1, 2), dtype)
    w_ih, w_hh = _arr((gates * 2, 2), dtype) * 0.5, _arr((gates * 2, 2), dtype) * 0.5
    b = _arr((gates * 2,), dtype) * 0.5
    cx = wgrad.tensor(c) if mode == "LSTM" else None

    def fn(x, w_hh, b):
        return _rnn.rnn_layer(mode, x, h_t, cx, (w_ih_t, w_hh, b, None, None), reverse=True)[0]
    h_t, w_ih_t = wgrad.tensor(h), wgrad.tensor(w_ih)
    check_op(fn, [wgrad.tensor(a, requires_grad=True) for a in (x, w_hh, b)], gradgrad=False)


def test_dropout_between_layers_only_in_training():
    m = wgrad.nn.LSTM(2, 3, num_layers=2, dropout=0.5, dtype=wgrad.float64)
    x = wgrad.randn(4, 2, 2, dtype=wgrad.float64)
    a, b = m.eval()(x)[0], m(x)[0]
    np.testing.assert_array_equal(to_np(a), to_np(b))
    m.train()
    wgrad.manual_seed(1)
    assert not np.allclose(to_np(m(x)[0]), to_np(a))


ERRORS = [
    lambda t: t.nn.LSTM(3, 4)(t.randn(2, 1, 1, 3)),
    lambda t: t.nn.LSTM(3, 4)(t.randn(2, 1, 5)),
    lambda t: t.nn.LSTM(3, 4)(t.randn(2, 1, 3), (t.randn(1, 1, 3), t.randn(1, 1, 4))),
    lambda t: t.nn.GRU(3, 4)(t.randn(2, 1, 3), t.randn(1, 2, 4)),
    lambda t: t.nn.LSTM(3, 4)(t.randn(2, 3), (t.randn(1, 1, 4), t.randn(1, 1, 4))),
    lambda t: t.nn.GRUCell(3, 4)(t.randn(2, 2, 3)),
    lambda t: t.nn.GRUCell(3, 4)(t.randn(2, 5)),
    lambda t: t.nn.GRUCell(3, 4)(t.randn(2, 3), t.randn(3, 4)),
    lambda t: t.nn.GRUCell(3, 4)(t.randn(2, 3, dtype=t.float64)),
    lambda t: t.nn.RNN(3, 4, nonlinearity="foo"),
    lambda t: t.nn.GRU(3, 4, proj_size=2),
    lambda t: t.nn.LSTM(3, 4, proj_size=4),
    lambda t: t.nn.LSTM(3, 4, dropout=1.5),
    lambda t: t.nn.utils.rnn.pack_padded_sequence(t.ones(3, 2), [2, 3]),
    lambda t: t.nn.utils.rnn.pad_packed_sequence(
        t.nn.utils.rnn.pack_padded_sequence(t.ones(3, 2), [3, 2]), total_length=2),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_messages(i):
    with pytest.raises(Exception) as et:
        ERRORS[i](torch)
    with pytest.raises(type(et.value)) as ew:
        ERRORS[i](wgrad)
    assert str(ew.value) == str(et.value)
