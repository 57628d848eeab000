"""local_response_norm, channel_shuffle, the margin losses (multi_margin, multilabel_margin,
triplet_margin_with_distance) and their modules, and the lazy BatchNorm3d/InstanceNorm
modules, against torch: values, input gradients, reprs, errors."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

RNG = np.random.default_rng(0)
X3 = RNG.standard_normal((2, 5, 3))
X4 = RNG.standard_normal((2, 4, 3, 2))
SC = RNG.standard_normal((3, 4))
# scores with exact ties to the margin: torch's kernels give no gradient where z == 0
TIE = np.array([[0.5, -0.5, 0.25, 1.5]])

CASES = [
    # (name, args as arrays or ("long", array), kwargs)
    ("local_response_norm", [X3], dict(size=3)),
    ("local_response_norm", [X4], dict(size=2, alpha=0.5, beta=0.5, k=2.0)),
    ("channel_shuffle", [X4], dict(groups=2)),
    ("multi_margin_loss", [SC, ("long", [0, 3, 1])], dict()),
    ("multi_margin_loss", [SC, ("long", [2, 2, 0])],
     dict(p=2, margin=0.5, weight=np.array([1.0, 2.0, 0.5, 3.0]), reduction="none")),
    ("multi_margin_loss", [SC[0], ("long", 1)], dict(reduction="sum")),
    ("multi_margin_loss", [TIE, ("long", [0])], dict()),
    ("multilabel_margin_loss", [SC, ("long", [[3, 0, -1, 1], [1, 2, 3, 0], [-1, 0, 0, 0]])],
     dict(reduction="none")),
    ("multilabel_margin_loss", [SC[1], ("long", [2, 2, -1, 3])], dict()),
    ("multilabel_margin_loss", [TIE, ("long", [[0, -1, 0, 0]])], dict()),
    ("triplet_margin_with_distance_loss", [SC, SC[::-1].copy(), SC ** 2],
     dict(swap=True, margin=0.5)),
]


def _args(lib, spec):
    out = []
    for a in spec:
        if isinstance(a, tuple):
            out.append(lib.tensor(np.array(a[1]), dtype=lib.int64))
        else:
            out.append(lib.tensor(a, requires_grad=True))
    return out


@pytest.mark.parametrize("name,spec,kw", CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_functional_matches_torch(name, spec, kw):
    results, grads = [], []
    for lib in (torch, wgrad):
        args = _args(lib, spec)
        k = {n: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for n, v in kw.items()}
        out = getattr(lib.nn.functional, name)(*args, **k)
        g = np.random.default_rng(1).standard_normal(tuple(out.shape))
        (out * lib.tensor(g)).sum().backward()
        results.append(out.detach().numpy())
        grads.append([a.grad.numpy() for a in args if a.requires_grad])
    np.testing.assert_allclose(results[1], results[0], rtol=1e-10, atol=1e-12)
    assert results[1].shape == results[0].shape
    for a, b in zip(*grads):
        np.testing.assert_allclose(b, a, rtol=1e-10, atol=1e-12)


def test_gradcheck_local_response_norm_and_margin_losses():
    x = wgrad.tensor(X3[:1, :3, :2], requires_grad=True)
    assert wgrad.autograd.gradcheck(
        lambda t: wgrad.nn.functional.local_response_norm(t, 2, alpha=0.3), (x,))
    s = wgrad.tensor(SC, requires_grad=True)
    y = wgrad.tensor([0, 3, 1])
    assert wgrad.autograd.gradcheck(
        lambda t: wgrad.nn.functional.multi_margin_loss(t, y, p=2), (s,))


def test_modules_match_torch():
    x = RNG.standard_normal((2, 4, 3))
    for name, args, kw, inputs in (
            ("LocalResponseNorm", (2,), {}, [x]),
            ("ChannelShuffle", (2,), {}, [x]),
            ("MultiMarginLoss", (), dict(p=2, weight=np.ones(4)), [SC, ("long", [0, 1, 2])]),
            ("MultiLabelMarginLoss", (), {}, [SC, ("long", [[1, -1, 0, 0]] * 3)]),
            ("TripletMarginWithDistanceLoss", (), dict(margin=2.0), [SC, SC + 1, SC - 1])):
        outs, reprs = [], []
        for lib in (torch, wgrad):
            k = {n: (lib.tensor(v) if isinstance(v, np.ndarray) else v) for n, v in kw.items()}
            m = getattr(lib.nn, name)(*args, **k)
            reprs.append(repr(m))
            outs.append(m(*_args(lib, inputs)).detach().numpy())
        assert reprs[0] == reprs[1]
        np.testing.assert_allclose(outs[1], outs[0], rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name,shape", [("LazyBatchNorm3d", (2, 3, 2, 2, 2)),
                                        ("LazyInstanceNorm1d", (2, 3, 4)),
                                        ("LazyInstanceNorm2d", (2, 3, 2, 2)),
                                        ("LazyInstanceNorm3d", (2, 3, 2, 2, 2))])
def test_lazy_norms_become_their_layer(name, shape):
    x = RNG.standard_normal(shape)
    res = []
    for lib in (torch, wgrad):
        m = getattr(lib.nn, name)(dtype=lib.float64)
        out = m(lib.tensor(x))
        res.append((type(m).__name__, repr(m), out.detach().numpy(), list(m.state_dict()),
                    m.running_var.numpy()))
    (tn, tr, to, tk, tv), (wn, wr, wo, wk, wv) = res
    assert (tn, tr, tk) == (wn, wr, wk)
    np.testing.assert_allclose(wo, to, rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(wv, tv, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("call,exc,match", [
    (lambda F, lib: F.local_response_norm(lib.ones(2, 3), 2), ValueError,
     "Expected 3D or higher dimensionality"),
    (lambda F, lib: F.channel_shuffle(lib.ones(1, 4, 2), 3), RuntimeError,
     "Number of channels must be divisible by groups. Got 4 channels and 3 groups."),
    (lambda F, lib: F.channel_shuffle(lib.ones(1, 4, 2), 0), RuntimeError,
     "Number of groups to divide channels in must be positive"),
    (lambda F, lib: F.channel_shuffle(lib.ones(4), 2), RuntimeError,
     r"channel_shuffle expects input with > 2 dims, but got input with sizes \[4\]"),
    (lambda F, lib: F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1]), p=3), ValueError,
     "only p == 1 and p == 2 supported"),
    (lambda F, lib: F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 3])), RuntimeError,
     "target out of range"),
    (lambda F, lib: F.multi_margin_loss(lib.ones(2, 3), lib.tensor([0, 1, 2])), RuntimeError,
     r"Expected target size \[2\], but got \[3\]"),
    (lambda F, lib: F.multi_margin_loss(lib.ones(2, 3, 1), lib.tensor([0, 1])), RuntimeError,
     "Expected non-empty vector or matrix with optional 0-dim batch size"),
    (lambda F, lib: F.multilabel_margin_loss(lib.ones(2, 3), lib.tensor([0, 1])),
     RuntimeError, r"inconsistent target size: \[2\] for input of size: \[2, 3\]"),
    (lambda F, lib: F.multilabel_margin_loss(lib.ones(1, 3), lib.tensor([[0, 3, -1]])),
     RuntimeError, "out of range"),
    (lambda F, lib: F.triplet_margin_with_distance_loss(lib.ones(2, 3), lib.ones(3),
                                                        lib.ones(2, 3)),
     RuntimeError, "anchor 2D, positive 1D, and negative 2D inputs"),
    (lambda F, lib: lib.nn.TripletMarginWithDistanceLoss(margin=0), ValueError,
     "expected margin to be greater than 0, got 0 instead"),
    (lambda F, lib: F.local_response_norm(lib.ones(1, 2, 2, dtype=lib.complex64), 2),
     NotImplementedError, "not implemented for 'ComplexFloat'"),
    (lambda F, lib: F.multi_margin_loss(lib.ones(2, dtype=lib.complex64), lib.tensor(0)),
     NotImplementedError, "not implemented for 'ComplexFloat'"),
    (lambda F, lib: F.multilabel_margin_loss(lib.ones(2, dtype=lib.complex64),
                                             lib.tensor([0, -1])),
     NotImplementedError, "not implemented for 'ComplexFloat'"),
    (lambda F, lib: lib.nn.MultiMarginLoss(weight=lib.ones(2, 2)), ValueError,
     "expected weight to be None or 1D tensor, got 2D instead"),
])
def test_errors_match_torch(call, exc, match):
    for lib in (torch, wgrad):
        with pytest.raises(exc, match=match):
            call(lib.nn.functional, lib)
