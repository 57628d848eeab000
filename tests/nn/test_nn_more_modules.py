"""The torch.nn modules of wgrad/nn/modules/remaining.py and the fractional max pools
(wgrad/nn/_fractional.py) against torch: values, gradients, indices, reprs, state_dicts,
warnings and errors, built from the same numbers (parameters copied across)."""
import warnings

import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op, to_np

torch = pytest.importorskip("torch")


def _np(t):
    return to_np(t) if isinstance(t, wgrad.Tensor) else t.detach().float().numpy() \
        if t.dtype in (torch.float16, torch.bfloat16) else t.detach().numpy()


def _error(fn, L):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            fn(L)
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e).__name__, str(e).replace("wgrad.Size", "torch.Size")
    return None


def _same_error(fn):
    got, want = _error(fn, wgrad), _error(fn, torch)
    assert want is not None
    assert got == want


def _state(m):
    return {k: np.array(v.detach().numpy()) for k, v in m.state_dict().items()}


def _load(m, state, L):
    m.load_state_dict({k: L.tensor(v) for k, v in state.items()})
    return m


# -- fractional max pooling ------------------------------------------------------------------

FRAC = {  # name: (nd, input shape, kernel_size, output_size, output_ratio)
    "2d": (2, (2, 3, 7, 8), 3, 5, None),
    "2d-rect": (2, (2, 3, 7, 8), (2, 3), (4, 3), None),
    "2d-unbatched": (2, (3, 9, 10), 2, (5, 6), None),
    "2d-ratio": (2, (2, 2, 20, 17), 3, None, (0.5, 0.4)),
    "2d-kernel-1": (2, (1, 2, 6, 6), 1, 6, None),
    "2d-one-output": (2, (1, 2, 6, 5), (6, 5), 1, None),
    "2d-empty-batch": (2, (0, 3, 5, 5), 2, 2, None),
    "2d-empty-output": (2, (2, 3, 5, 5), 2, 0, None),
    "2d-kernel-0": (2, (2, 3, 7, 8), (0, 2), 3, None),
    "3d": (3, (2, 3, 7, 8, 9), 3, 4, None),
    "3d-unbatched": (3, (3, 6, 9, 10), 2, (4, 5, 6), None),
    "3d-rect": (3, (1, 2, 11, 10, 9), (2, 3, 1), (7, 6, 8), None),
    "3d-ratio": (3, (1, 2, 8, 9, 10), 2, None, 0.5),
}


def _frac(L, case, dtype, x, u, g, nan=False):
    nd, shape, k, out, ratio = FRAC[case]
    xt = L.tensor(x).to(getattr(L, dtype))
    if nan:
        xt[..., 0, 0] = float("nan")
    xt.requires_grad_()
    ut = L.tensor(u).to(getattr(L, dtype))
    pool = getattr(L.nn.functional, f"fractional_max_pool{nd}d")
    v, i = pool(xt, k, out, ratio, True, _random_samples=ut)
    v2 = pool(xt, k, output_size=out, output_ratio=ratio, _random_samples=ut)
    assert not isinstance(v2, tuple)
    if v.numel() and not (isinstance(k, tuple) and 0 in k):
        gx, = L.autograd.grad(v, xt, L.tensor(g).to(v.dtype))
    else:
        gx = xt.detach()
    return _np(v), _np(v2), _np(i), _np(gx), v.grad_fn.name(), str(i.dtype).split(".")[-1]


# every case in float64 (also with NaN), a few in the other floating dtypes: the windows
# come from aten's interval arithmetic in the input's dtype
FRAC_DTYPES = [(c, "float64") for c in FRAC] + [
    ("2d-ratio", d) for d in ("float32", "float16", "bfloat16")] + [("3d-rect", "float16")]


@pytest.mark.parametrize("case,dtype", FRAC_DTYPES)
def test_fractional_max_pool_equals_torch(case, dtype):
    nd, shape, k, out, ratio = FRAC[case]
    rng = np.random.default_rng(len(case))
    x = rng.standard_normal(shape).astype(np.float32)
    n = shape[0] if len(shape) == nd + 2 else 1
    u = rng.uniform(0, 1, (n, shape[-nd - 1], nd)).astype(np.float32)
    v_t = torch.nn.functional.__dict__[f"fractional_max_pool{nd}d"](
        torch.tensor(x), k, out, ratio, _random_samples=torch.tensor(u))
    g = rng.standard_normal(tuple(v_t.shape)).astype(np.float32)
    for nan in (False, True) if dtype == "float64" else (False,):
        got = _frac(wgrad, case, dtype, x, u, g, nan)
        want = _frac(torch, case, dtype, x, u, g, nan)
        for a, b in zip(got[:4], want[:4]):
            assert a.shape == b.shape
            np.testing.assert_array_equal(a, b)  # the winners are the same elements
        assert got[4:] == want[4:]


def test_fractional_interval_edge_samples_equal_torch():
    # samples at and past [0, 1), negative, huge and NaN: aten's int arithmetic
    x = np.arange(2 * 20 * 20.).reshape(1, 2, 20, 20)
    for v in (0.0, 0.999999, 1.0, 1.5, 3.0, -0.5, -5.0, 1e10, float("inf"), float("nan")):
        idx = []
        for L in (wgrad, torch):
            u = L.full((1, 2, 2), v, dtype=L.float64)
            _, i = L.nn.functional.fractional_max_pool2d(L.tensor(x), 2, 4, None, True,
                                                         _random_samples=u)
            idx.append(_np(i))
        np.testing.assert_array_equal(*idx)


def test_fractional_double_backward_equals_torch():
    rng = np.random.default_rng(0)
    x, u = rng.standard_normal((1, 2, 6, 7)), rng.uniform(0, 1, (1, 2, 2))
    out = []
    for L in (wgrad, torch):
        xt = L.tensor(x, requires_grad=True)
        v = L.nn.functional.fractional_max_pool2d(xt, 2, 3, _random_samples=L.tensor(u))
        go = L.ones(v.shape, dtype=L.float64, requires_grad=True)
        gx, = L.autograd.grad(v, xt, go, create_graph=True)
        ggo, = L.autograd.grad((gx * L.tensor(x)).sum(), go)
        out.append(_np(ggo))
    np.testing.assert_allclose(*out)


def test_fractional_draws_samples_from_wgrads_generator():
    x = wgrad.randn(2, 3, 9, 9, requires_grad=True)
    wgrad.manual_seed(3)
    v, i = wgrad.nn.functional.fractional_max_pool2d(x, 2, output_ratio=(0.5, 0.5),
                                                     return_indices=True)
    wgrad.manual_seed(3)
    v2 = wgrad.nn.FractionalMaxPool2d(2, output_ratio=0.5)(x)
    assert v.shape == (2, 3, 4, 4) and bool((v == v2).all())
    plane = x.detach().flatten(2)
    assert bool((plane.gather(2, i.flatten(2)).view(v.shape) == v).all())
    g, = wgrad.autograd.grad(v.sum(), x)
    assert float(g.sum()) == v.numel()
    v3 = wgrad.nn.functional.fractional_max_pool3d(wgrad.randn(3, 6, 6, 6), 2, output_size=3)
    assert v3.shape == (3, 3, 3, 3)


def test_fractional_under_compile_equals_eager():
    pool = wgrad.nn.FractionalMaxPool2d(2, output_size=3, _random_samples=wgrad.rand(2, 3, 2))
    x = wgrad.randn(2, 3, 7, 7, requires_grad=True)

    def step(x):
        return (pool(x) * wgrad.arange(9.).view(3, 3)).sum()
    got = wgrad.compile(step)(x)
    assert float(got) == float(step(x))


def _frac_args(L, shape=(2, 3, 7, 8), dtype=None):
    return L.ones(*shape, dtype=dtype or L.float32), L.rand(2, 3, 2)


FRAC_ERRORS = {
    "no-size": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2),
    "ratio-3": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2,
                                                               output_ratio=(.5, .5, .5)),
    "ratio-float": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2,
                                                                   output_ratio=0.5),
    "ratio-list-1": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(1, 1, 4, 4), 2,
                                                                    output_ratio=[0.5]),
    "ratio-3d-pair": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 4, 4, 4), 2, output_ratio=(.5, .5)),
    "2d-input-no-samples": lambda L: L.nn.functional.fractional_max_pool2d(L.ones(4, 4), 2, 2),
    "long-no-samples": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4, dtype=L.int64), 2, 2),
    "complex": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4, dtype=L.complex64), 2, 2),
    "int-with-samples": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4, dtype=L.int32), 2, 2,
        _random_samples=L.ones(1, 1, 2, dtype=L.int32)),
    "samples-grad": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4), 9, 2, _random_samples=L.rand(1, 1, 2, requires_grad=True)),
    "kernel-float": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4), 2.5, 2, _random_samples=L.rand(1, 1, 2)),
    "output-float": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 4, 4), 2, 2.5, _random_samples=L.rand(1, 1, 2)),
    "kernel-3": lambda L: L.nn.functional.fractional_max_pool2d(*_frac_args(L)[:1], (3, 3, 3),
                                                                (1, 2, 3)),
    "kernel-list-1": lambda L: L.nn.functional.fractional_max_pool2d(
        *_frac_args(L)[:1], [3], 2, _random_samples=_frac_args(L)[1]),
    "output-3": lambda L: L.nn.functional.fractional_max_pool2d(*_frac_args(L)[:1], 3,
                                                                (5, 5, 5)),
    "3d-kernel-2": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 5, 5, 5), (1, 1), 1, _random_samples=L.rand(1, 1, 3)),
    "3d-output-2": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 5, 5, 5), 1, (1, 1), _random_samples=L.rand(1, 1, 3)),
    "dims-2": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(7, 8), 2, 2, _random_samples=L.rand(1, 1, 2)),
    "dims-5": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 2, 3, 7, 8), 2, 2, _random_samples=L.rand(1, 1, 2)),
    "3d-dims-3": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(5, 6, 7), 1, 1, _random_samples=L.rand(1, 1, 3)),
    "empty-channel": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(2, 0, 7, 8), 3, 2, _random_samples=L.rand(2, 0, 2)),
    "3d-empty-dim": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(2, 3, 0, 6, 7), 1, 1, _random_samples=L.rand(2, 3, 3)),
    "pool-height": lambda L: L.nn.functional.fractional_max_pool2d(*_frac_args(L), 3, 6),
    "pool-width": lambda L: L.nn.functional.fractional_max_pool2d(*_frac_args(L), (7, 9), 1),
    "3d-pool-time": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 5, 6, 7), 2, 4, _random_samples=L.rand(1, 1, 3)),
    "3d-pool-width-first": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 5, 6, 7), (1, 7, 8), 1, _random_samples=L.rand(1, 1, 3)),
    "3d-pool-height": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(1, 1, 5, 6, 7), (1, 7, 1), 1, _random_samples=L.rand(1, 1, 3)),
    "negative-output": lambda L: L.nn.functional.fractional_max_pool2d(*_frac_args(L), 3, -1),
    "3d-negative-output": lambda L: L.nn.functional.fractional_max_pool3d(
        L.ones(4, 5, 6, 7), 1, -2, _random_samples=L.rand(1, 4, 3)),
    "samples-dtype": lambda L: L.nn.functional.fractional_max_pool2d(
        _frac_args(L)[0], 3, 2, _random_samples=_frac_args(L)[1].double()),
    "samples-dims": lambda L: L.nn.functional.fractional_max_pool2d(
        _frac_args(L)[0], 3, 2, _random_samples=L.rand(3, 2)),
    "samples-batch": lambda L: L.nn.functional.fractional_max_pool2d(
        _frac_args(L)[0], 3, 2, _random_samples=L.rand(1, 3, 2)),
    "samples-channels": lambda L: L.nn.functional.fractional_max_pool2d(
        _frac_args(L)[0], 3, 2, _random_samples=L.rand(2, 2, 2)),
    "samples-last": lambda L: L.nn.functional.fractional_max_pool2d(
        _frac_args(L)[0], 3, 2, _random_samples=L.rand(2, 3, 3)),
    "bfloat16-window-outside": lambda L: L.nn.functional.fractional_max_pool2d(
        L.ones(1, 1, 3, 147, dtype=L.bfloat16), (1, 2), (3, 135),
        _random_samples=L.full((1, 1, 2), 0.5, dtype=L.bfloat16)),
    "module-no-size": lambda L: L.nn.FractionalMaxPool2d(3),
    "module-both": lambda L: L.nn.FractionalMaxPool2d(3, 2, 0.5),
    "module-ratio": lambda L: L.nn.FractionalMaxPool2d(3, output_ratio=1.5),
    "module-3d-kernel-0": lambda L: L.nn.FractionalMaxPool3d(0, output_ratio=0.5),
    "module-3d-kernel-tuple": lambda L: L.nn.FractionalMaxPool3d((1, 0, 1), output_ratio=0.5),
    "module-3d-no-size": lambda L: L.nn.FractionalMaxPool3d(2),
    "module-3d-ratio": lambda L: L.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5)),
}


@pytest.mark.parametrize("case", list(FRAC_ERRORS))
def test_fractional_errors_as_torch(case):
    if case == "bfloat16-window-outside":  # torch's internal assert: the type only
        assert _error(FRAC_ERRORS[case], wgrad)[0] == _error(FRAC_ERRORS[case], torch)[0] \
            == "RuntimeError"
        return
    _same_error(FRAC_ERRORS[case])


def test_fractional_modules_as_torch():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 9, 8))
    u = rng.uniform(0, 1, (2, 3, 2))
    got = []
    for L in (wgrad, torch):
        m = L.nn.FractionalMaxPool2d(3, output_size=(4, 5), return_indices=True,
                                     _random_samples=L.tensor(u))
        v, i = m(L.tensor(x))
        m3 = L.nn.FractionalMaxPool3d([2, 2, 2], output_ratio=[0.5, 0.5, 0.5])
        got.append((repr(m), repr(m3), list(m.state_dict()), m.kernel_size, m.output_size,
                    m.output_ratio, m3.kernel_size, m3.output_ratio, m3.output_size,
                    list(m3.state_dict()), _np(v).tolist(), _np(i).tolist()))
    assert got[0] == got[1]


# -- CTCLoss and NLLLoss2d -------------------------------------------------------------------

CTC = {  # constructor kwargs, targets, input lengths, target lengths
    "sum-blank": (dict(blank=3, reduction="sum"), [[0, 1], [2, 2]], (7, 4), (2, 2)),
    "mean-zero-infinity": (dict(zero_infinity=True), [[1, 1, 1], [1, 2, 3]], [7, 2], [3, 3]),
}


@pytest.mark.parametrize("case", list(CTC))
def test_ctc_loss_module_equals_torch(case):
    kw, tg, il, tl = CTC[case]
    x = np.random.default_rng(1).standard_normal((7, 2, 4))
    got = []
    for L in (wgrad, torch):
        lp = L.tensor(x).log_softmax(2).detach().requires_grad_()
        m = L.nn.CTCLoss(**kw)
        loss = m(lp, L.tensor(tg), il, tl)
        g, = L.autograd.grad(loss.sum(), lp)
        got.append((repr(m), m.blank, m.reduction, m.zero_infinity, _np(loss), _np(g)))
    assert got[0][:4] == got[1][:4]
    np.testing.assert_allclose(got[0][4], got[1][4], rtol=1e-11)
    np.testing.assert_allclose(got[0][5], got[1][5], rtol=1e-11, atol=1e-12)


def _warned(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = fn()
    return out, [(x.category.__name__, str(x.message), x.filename) for x in w]


def test_nll_loss_2d_is_torchs_deprecated_alias():
    x = np.random.default_rng(2).standard_normal((2, 3, 4, 5))
    t = np.random.default_rng(3).integers(0, 3, (2, 4, 5))
    w = np.array([0.2, 1.0, 3.0])
    got = []
    for L in (wgrad, torch):
        m, warned = _warned(lambda: L.nn.NLLLoss2d(L.tensor(w), ignore_index=1))
        xt = L.tensor(x, requires_grad=True)
        loss = m(xt.log_softmax(1), L.tensor(t))
        g, = L.autograd.grad(loss, xt)
        got.append((repr(m), list(m.state_dict()), isinstance(m, L.nn.NLLLoss), warned,
                    m.ignore_index, m.reduction, _np(loss), _np(g)))
    assert got[0][:6] == got[1][:6]
    assert got[0][3][0][2] == __file__  # the warning points at the caller
    np.testing.assert_allclose(got[0][6], got[1][6], rtol=1e-12)
    np.testing.assert_allclose(got[0][7], got[1][7], rtol=1e-12, atol=1e-14)


def test_container_is_torchs_deprecated_module():
    got = []
    for L in (wgrad, torch):
        m, warned = _warned(lambda: L.nn.Container(fc=L.nn.Linear(2, 3), act=L.nn.ReLU()))
        sub, warned_sub = _warned(lambda: type("Sub", (L.nn.Container,), {}))
        _, warned_inst = _warned(lambda: sub())
        got.append((repr(m), list(m.state_dict()), warned, warned_sub, warned_inst))
    assert got[0] == got[1]
    assert len(got[0][2]) == 1 and got[0][4] == []


# -- AdaptiveLogSoftmaxWithLoss --------------------------------------------------------------

def _asm_pair(in_features=8, n_classes=12, cutoffs=(3, 7), div_value=2.0, head_bias=True):
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                             div_value, head_bias).double()
    wm = wgrad.nn.AdaptiveLogSoftmaxWithLoss(in_features, n_classes, list(cutoffs),
                                             div_value, head_bias).double()
    _load(wm, _state(tm), wgrad)
    return wm, tm


ASM_TARGETS = {
    "mixed": [0, 4, 11, 2, 7, 8],
    "head-only": [0, 1, 2],
    "one-cluster": [5, 5, 6],
    "single-row": [9],
}


@pytest.mark.parametrize("case", list(ASM_TARGETS))
def test_adaptive_log_softmax_forward_equals_torch(case):
    wm, tm = _asm_pair()
    target = ASM_TARGETS[case]
    x = np.random.default_rng(4).standard_normal((len(target), 8))
    got = []
    for L, m in ((wgrad, wm), (torch, tm)):
        xt = L.tensor(x, requires_grad=True)
        res = m(xt, L.tensor(target))
        params = [p for _, p in m.named_parameters()]
        grads = L.autograd.grad(res.loss + res.output.sum() * 0.5, [xt] + params,
                                allow_unused=True)
        got.append((type(res).__name__, res._fields, _np(res.output), _np(res.loss),
                    [None if g is None else _np(g) for g in grads]))
    assert got[0][:2] == got[1][:2] == ("_ASMoutput", ("output", "loss"))
    for a, b in zip(got[0][2:4] + tuple(got[0][4]), got[1][2:4] + tuple(got[1][4])):
        assert (a is None) == (b is None)
        if a is not None:
            np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)


def test_adaptive_log_softmax_unbatched_log_prob_predict_as_torch():
    wm, tm = _asm_pair()
    rng = np.random.default_rng(6)
    x = rng.standard_normal((40, 8))
    got = []
    for L, m in ((wgrad, wm), (torch, tm)):
        one = m(L.tensor(x[0]), L.tensor(10))
        lp = m.log_prob(L.tensor(x))
        got.append((_np(one.output), _np(one.loss), _np(lp), _np(m.predict(L.tensor(x))),
                    repr(m), list(m.state_dict()), m.head_size, m.shortlist_size,
                    m.n_clusters, m.cutoffs))
    for a, b in zip(got[0][:3], got[1][:3]):
        np.testing.assert_allclose(a, b, rtol=1e-11, atol=1e-13)
    np.testing.assert_array_equal(got[0][3], got[1][3])
    assert got[0][4:] == got[1][4:]


@pytest.mark.parametrize("where", ["shortlist", "clusters", "mixed"])
def test_adaptive_log_softmax_predict_paths_as_torch(where):
    wm, tm = _asm_pair()
    state = _state(tm)
    bias = state["head.bias"]  # (3 shortlist + 2 clusters)
    if where == "shortlist":
        bias[:3] += 50
    elif where == "clusters":
        bias[3:] += 50
    else:
        state["head.weight"][:] = 0
        state["head.weight"][0, 0], state["head.weight"][4, 0] = 40, -40
    _load(wm, state, wgrad)
    _load(tm, state, torch)
    x = np.random.default_rng(7).standard_normal((16, 8))
    np.testing.assert_array_equal(_np(wm.predict(wgrad.tensor(x))),
                                  _np(tm.predict(torch.tensor(x))))


ASM_ERRORS = {
    "empty-cutoffs": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, []),
    "unsorted": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [5, 3]),
    "zero": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [0, 3]),
    "too-large": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 10]),
    "repeated": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3, 3]),
    "fraction": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [2.5]),
    "batch-size": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(
        L.ones(2, 4), L.tensor([1, 2, 3])),
    "input-3d": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(
        L.ones(2, 4, 1), L.tensor([1, 2])),
    "input-2d-target-0d": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(
        L.ones(2, 4), L.tensor(1)),
    "target-2d": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(
        L.ones(2, 4), L.tensor([[1, 2]])),
    "target-range": lambda L: L.nn.AdaptiveLogSoftmaxWithLoss(4, 10, [3])(
        L.ones(3, 4), L.tensor([1, 10, -2])),
}


@pytest.mark.parametrize("case", list(ASM_ERRORS))
def test_adaptive_log_softmax_errors_as_torch(case):
    _same_error(ASM_ERRORS[case])


# -- CrossMapLRN2d ---------------------------------------------------------------------------

@pytest.mark.parametrize("size", [1, 2, 3, 4, 5, 7])
@pytest.mark.parametrize("channels", [1, 2, 6])
def test_cross_map_lrn2d_equals_torch(size, channels):
    rng = np.random.default_rng(size * 10 + channels)
    x = rng.standard_normal((2, channels, 3, 2))
    g = rng.standard_normal(x.shape)
    got = []
    for L in (wgrad, torch):
        m = L.nn.CrossMapLRN2d(size, alpha=0.3, beta=0.75, k=1.5)
        xt = L.tensor(x, requires_grad=True)
        y = m(xt)
        err = _error(lambda L: L.autograd.grad(y, xt, L.tensor(g)), L)
        gx = None if err else _np(L.autograd.grad(m(xt), xt, L.tensor(g))[0])
        got.append((repr(m), y.grad_fn.name(), _np(y), err, gx))
    assert got[0][:2] == got[1][:2]
    np.testing.assert_allclose(got[0][2], got[1][2], rtol=1e-12)
    assert got[0][3] == got[1][3]
    if got[1][4] is not None:
        np.testing.assert_allclose(got[0][4], got[1][4], rtol=1e-10, atol=1e-12)


def test_cross_map_lrn2d_float32_and_errors_as_torch():
    x = np.random.default_rng(0).standard_normal((2, 5, 4, 4)).astype(np.float32)
    ys = [_np(L.nn.CrossMapLRN2d(3)(L.tensor(x))) for L in (wgrad, torch)]
    np.testing.assert_allclose(*ys, rtol=1e-6)
    _same_error(lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4)))
    _same_error(lambda L: L.nn.CrossMapLRN2d(3)(L.ones(2, 3, 4, 4, dtype=L.int32)))

    def twice(L):
        x = L.ones(1, 3, 2, 2, requires_grad=True)
        L.autograd.grad(L.nn.CrossMapLRN2d(3)(x).sum(), x, create_graph=True)
    _same_error(twice)


# -- SyncBatchNorm and DataParallel ----------------------------------------------------------

def test_sync_batch_norm_is_batch_norm_in_one_process():
    x = np.random.default_rng(8).standard_normal((4, 3, 2, 5))
    got = []
    for L in (wgrad, torch):
        m = L.nn.SyncBatchNorm(3, momentum=None).double()
        xt = L.tensor(x, requires_grad=True)
        y = m(xt)
        g, = L.autograd.grad((y * L.tensor(x)).sum(), xt)
        y1 = m(xt[:, :, 0])  # any input of 2 or more dims
        m.eval()
        y2 = m(xt)
        got.append((repr(m), m.process_group, _state(m), [_np(t) for t in (y, g, y1, y2)],
                    L.nn.SyncBatchNorm(2, affine=False, track_running_stats=False,
                                       bias=False).__repr__()))
    assert got[0][0] == got[1][0] and got[0][1] == got[1][1] and got[0][4] == got[1][4]
    assert list(got[0][2]) == list(got[1][2])
    for a, b in zip(list(got[0][2].values()) + got[0][3],
                    list(got[1][2].values()) + got[1][3]):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    _same_error(lambda L: L.nn.SyncBatchNorm(3)(L.ones(3)))
    _same_error(lambda L: L.nn.SyncBatchNorm(0)(L.ones(3, 0)))


def test_sync_batch_norm_in_an_initialized_world_as_torch(tmp_path):
    # torch checks the input's device before the world size: CPU input raises even alone
    wgrad.distributed.init_process_group("gloo", init_method="tcp://127.0.0.1:1", rank=0,
                                         world_size=1)
    torch.distributed.init_process_group("gloo", init_method=f"file://{tmp_path}/store",
                                         rank=0, world_size=1)
    try:
        _same_error(lambda L: L.nn.SyncBatchNorm(3)(L.ones(2, 3)))
        counts = []
        for L in (wgrad, torch):
            m = L.nn.SyncBatchNorm(3)
            _error(lambda L: m(L.ones(2, 3)), L)
            counts.append(int(m.num_batches_tracked))  # counted before the error, as torch
        assert counts == [1, 1]
        outs = [_np(L.nn.SyncBatchNorm(3).eval()(L.ones(2, 3) * 2)) for L in (wgrad, torch)]
        np.testing.assert_allclose(*outs, rtol=1e-6)
    finally:
        wgrad.distributed.destroy_process_group()
        torch.distributed.destroy_process_group()


def _net(L):
    inner = L.nn.Sequential(L.nn.BatchNorm1d(3, momentum=0.3), L.nn.ReLU())
    return L.nn.Sequential(L.nn.Conv2d(2, 2, 1), L.nn.BatchNorm2d(2, affine=False),
                           L.nn.InstanceNorm2d(2), inner,
                           L.nn.BatchNorm3d(4, eps=1e-3, track_running_stats=False))


def test_convert_sync_batchnorm_as_torch():
    tnet = _net(torch)
    tnet[3][0].eval()
    with torch.no_grad():
        tnet[3][0].running_mean.add_(0.5)
    wnet = _load(_net(wgrad), _state(tnet), wgrad)
    wnet[3][0].eval()
    got = []
    for L, net in ((wgrad, wnet), (torch, tnet)):
        bn = net[3][0]
        out = L.nn.SyncBatchNorm.convert_sync_batchnorm(net)
        got.append((repr(out), _state(out), [type(m).__name__ for m in out.modules()],
                    out[3][0].weight is bn.weight, out[3][0].running_mean is bn.running_mean,
                    out[3][0].training, out is net))
        single = L.nn.SyncBatchNorm.convert_sync_batchnorm(L.nn.BatchNorm1d(2))
        got[-1] += (type(single).__name__,)
    assert got[0][0] == got[1][0] and got[0][2:] == got[1][2:]
    assert list(got[0][1]) == list(got[1][1])
    for k in got[0][1]:
        np.testing.assert_array_equal(got[0][1][k], got[1][1][k])


@pytest.mark.skipif(wgrad.cuda.is_available(), reason="torch's behaviour without a GPU")
def test_data_parallel_without_a_gpu_as_torch():
    x = np.random.default_rng(9).standard_normal((3, 4))
    tm = torch.nn.Linear(4, 2).double()
    got = []
    for L in (wgrad, torch):
        inner = _load(L.nn.Linear(4, 2).double(), _state(tm), L)
        dp = L.nn.DataParallel(inner, device_ids=[0, 1], dim=1)
        y = dp(L.tensor(x))
        got.append((repr(dp), list(dp.state_dict()), dp.module is inner, dp.device_ids,
                    hasattr(dp, "dim"), hasattr(dp, "output_device"), _np(y)))
    assert got[0][:6] == got[1][:6]
    np.testing.assert_allclose(got[0][6], got[1][6], rtol=1e-12)
    assert wgrad.nn.parallel.DataParallel is wgrad.nn.DataParallel


def _intervals(sample, n_in, n_out, k):
    """aten's window starts (generate_intervals), written out independently."""
    if n_out == 1:
        return [n_in - k]
    alpha = (n_in - k) / (n_out - 1)
    return [int((i + sample) * alpha) - int(sample * alpha) for i in range(n_out - 1)] + [
        n_in - k]


def test_fractional_max_pool2d_passes_check_op():
    """gradcheck, gradgradcheck and conj(jax.vjp(conj g)) against a jnp max over windows
    built here from aten's formula (real inputs only: torch rejects complex ones)."""
    x = wgrad.tensor(np.random.default_rng(3).permutation(2 * 100).reshape(1, 2, 10, 10) / 10.0,
                     requires_grad=True)
    samples = wgrad.tensor([[[0.2, 0.8], [0.8, 0.2]]], dtype=wgrad.float64)  # (W, H)
    rows, cols = [], []
    for c in range(2):
        w, h = float(samples[0, c, 0]), float(samples[0, c, 1])
        rows.append(_intervals(h, 10, 4, 2))
        cols.append(_intervals(w, 10, 4, 2))

    def jfn(a):
        out = []
        for c in range(2):
            out.append(jnp.stack([jnp.stack([jnp.max(a[0, c, r:r + 2, q:q + 2])
                                             for q in cols[c]]) for r in rows[c]]))
        return jnp.stack(out)[None]
    check_op(lambda a: wgrad.nn.functional.fractional_max_pool2d(
        a, 2, output_size=4, _random_samples=samples), (x,), jfn)
