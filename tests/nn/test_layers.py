"""Layers against torch: the same module built in both, weights copied from wgrad to torch,
then repr, parameter names/shapes, state_dict keys, forward values and gradients (of the
input and of every parameter) compared, for real and complex dtypes."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

F64, C128 = "float64", "complex128"


def _dt(lib, name):
    return getattr(lib, name)


def _np(t):
    return np.asarray(t.detach()) if isinstance(t, wgrad.Tensor) else t.detach().numpy()


# (id, constructor(lib, dtype) -> module, inputs, dtypes)
# inputs: ("x", shape) a tensor of the module's dtype that requires grad,
#         ("i", shape, high) integer indices, ("p", shape) probabilities in (0.05, 0.95),
#         ("t", shape) a target of the module's dtype (no grad)
LAYERS = [
    ("identity", lambda L, d: L.nn.Identity(3, k=1), [("x", (2, 3))], [F64]),
    ("linear", lambda L, d: L.nn.Linear(3, 4, dtype=d), [("x", (2, 3))], [F64, C128]),
    ("linear_nobias", lambda L, d: L.nn.Linear(3, 2, bias=False, dtype=d), [("x", (5, 3))],
     [C128]),
    ("bilinear", lambda L, d: L.nn.Bilinear(2, 3, 4, dtype=d), [("x", (5, 2)), ("x", (5, 3))],
     [F64]),  # torch: no complex autograd for bilinear
    ("conv1d", lambda L, d: L.nn.Conv1d(2, 4, 3, padding=1, dtype=d), [("x", (2, 2, 7))],
     [F64, C128]),
    ("conv2d", lambda L, d: L.nn.Conv2d(2, 4, 3, stride=2, padding=1, groups=2, dtype=d),
     [("x", (1, 2, 6, 6))], [F64, C128]),
    ("conv2d_dil", lambda L, d: L.nn.Conv2d(1, 2, (3, 2), dilation=2, bias=False, dtype=d),
     [("x", (2, 1, 7, 6))], [F64]),
    ("conv2d_same_reflect", lambda L, d: L.nn.Conv2d(2, 2, 3, padding="same",
                                                      padding_mode="reflect", dtype=d),
     [("x", (1, 2, 5, 5))], [F64]),
    ("conv2d_circular", lambda L, d: L.nn.Conv2d(1, 2, 3, padding=1, padding_mode="circular",
                                                  dtype=d), [("x", (1, 1, 5, 5))], [F64]),
    ("convT1d", lambda L, d: L.nn.ConvTranspose1d(2, 3, 3, stride=2, dtype=d),
     [("x", (2, 2, 5))], [F64, C128]),
    ("convT2d", lambda L, d: L.nn.ConvTranspose2d(2, 4, 3, stride=2, padding=1,
                                                  output_padding=1, groups=2, dtype=d),
     [("x", (1, 2, 4, 4))], [F64, C128]),
    ("embedding", lambda L, d: L.nn.Embedding(10, 3, padding_idx=1, dtype=d),
     [("i", (2, 4), 10)], [F64]),  # torch: no complex autograd for embedding
    ("embedding_max_norm", lambda L, d: L.nn.Embedding(6, 3, max_norm=1.0, dtype=d),
     [("i", (2, 4), 6)], [F64]),
    ("mlp", lambda L, d: L.nn.Sequential(L.nn.Linear(3, 4, dtype=d), L.nn.Tanh(),
                                         L.nn.Linear(4, 2, dtype=d)), [("x", (2, 3))],
     [F64, C128]),
    ("layernorm", lambda L, d: L.nn.LayerNorm((3, 4), dtype=d), [("x", (2, 3, 4))], [F64]),
    ("layernorm_noaffine", lambda L, d: L.nn.LayerNorm(4, elementwise_affine=False, dtype=d),
     [("x", (3, 4))], [F64]),
    ("dropout_p0", lambda L, d: L.nn.Dropout(0.0), [("x", (2, 3))], [F64]),
    ("flatten", lambda L, d: L.nn.Flatten(), [("x", (2, 3, 4))], [F64]),
    ("unflatten", lambda L, d: L.nn.Unflatten(1, (2, 3)), [("x", (4, 6))], [F64]),
    ("relu", lambda L, d: L.nn.ReLU(), [("x", (2, 5))], [F64]),
    ("leaky_relu", lambda L, d: L.nn.LeakyReLU(0.2), [("x", (2, 5))], [F64]),
    ("elu", lambda L, d: L.nn.ELU(0.5), [("x", (2, 5))], [F64]),
    ("selu", lambda L, d: L.nn.SELU(), [("x", (2, 5))], [F64]),
    ("gelu", lambda L, d: L.nn.GELU(), [("x", (2, 5))], [F64]),
    ("gelu_tanh", lambda L, d: L.nn.GELU("tanh"), [("x", (2, 5))], [F64]),
    ("silu", lambda L, d: L.nn.SiLU(), [("x", (2, 5))], [F64]),
    ("mish", lambda L, d: L.nn.Mish(), [("x", (2, 5))], [F64]),
    ("softplus", lambda L, d: L.nn.Softplus(2.0, 1.0), [("x", (2, 5))], [F64]),
    ("sigmoid", lambda L, d: L.nn.Sigmoid(), [("x", (2, 5))], [F64, C128]),
    ("tanh", lambda L, d: L.nn.Tanh(), [("x", (2, 5))], [F64, C128]),
    ("hardtanh", lambda L, d: L.nn.Hardtanh(-0.5, 0.5), [("x", (2, 5))], [F64]),
    ("softmax", lambda L, d: L.nn.Softmax(dim=1), [("x", (2, 5))], [F64]),
    ("log_softmax", lambda L, d: L.nn.LogSoftmax(dim=-1), [("x", (2, 5))], [F64]),
    ("mse", lambda L, d: L.nn.MSELoss(), [("x", (3, 4)), ("t", (3, 4))], [F64]),
    ("l1_sum", lambda L, d: L.nn.L1Loss(reduction="sum"), [("x", (3, 4)), ("t", (3, 4))],
     [F64, C128]),
    ("smooth_l1", lambda L, d: L.nn.SmoothL1Loss(beta=0.5), [("x", (3, 4)), ("t", (3, 4))],
     [F64]),
    ("huber", lambda L, d: L.nn.HuberLoss(reduction="none", delta=0.5),
     [("x", (3, 4)), ("t", (3, 4))], [F64]),
    ("cross_entropy", lambda L, d: L.nn.CrossEntropyLoss(
        weight=L.tensor([1.0, 2.0, 0.5], dtype=d), label_smoothing=0.1, ignore_index=2),
     [("x", (4, 3)), ("i", (4,), 3)], [F64]),
    ("cross_entropy_probs", lambda L, d: L.nn.CrossEntropyLoss(), [("x", (4, 3)),
                                                                   ("p", (4, 3))], [F64]),
    ("nll", lambda L, d: L.nn.NLLLoss(reduction="sum"), [("x", (4, 3)), ("i", (4,), 3)],
     [F64]),
    ("bce", lambda L, d: L.nn.BCELoss(weight=L.tensor([1.0, 2.0], dtype=d)),
     [("p", (3, 2)), ("p", (3, 2))], [F64]),
    ("bce_logits", lambda L, d: L.nn.BCEWithLogitsLoss(pos_weight=L.tensor([1.0, 3.0],
                                                                              dtype=d)),
     [("x", (3, 2)), ("p", (3, 2))], [F64]),
    ("kl_div", lambda L, d: L.nn.KLDivLoss(reduction="batchmean"),
     [("x", (3, 4)), ("p", (3, 4))], [F64]),
]

CASES = [pytest.param(ctor, inputs, d, id=f"{name}-{d}")
         for name, ctor, inputs, dtypes in LAYERS for d in dtypes]


def _inputs(spec, dtype, rng):
    """(numpy arrays, which of them require grad)."""
    arrays, grads = [], []
    for s in spec:
        kind, shape = s[0], s[1]
        if kind == "i":
            arrays.append(rng.integers(0, s[2], size=shape))
            grads.append(False)
        elif kind == "p":
            arrays.append(rng.uniform(0.05, 0.95, size=shape))
            grads.append(kind == "p" and len(arrays) == 1)
        else:
            a = rng.standard_normal(shape)
            if dtype == C128:
                a = a + 1j * rng.standard_normal(shape)
            arrays.append(a)
            grads.append(kind == "x")
    return arrays, grads


def _copy_weights(wm, tm):
    sd = {k: torch.tensor(np.asarray(v)) for k, v in wm.state_dict().items()}
    tm.load_state_dict(sd)


@pytest.mark.parametrize("ctor,spec,dtype", CASES)
def test_layer_matches_torch(ctor, spec, dtype):
    wm, tm = ctor(wgrad, _dt(wgrad, dtype)), ctor(torch, _dt(torch, dtype))
    assert repr(wm) == repr(tm)
    assert [(n, tuple(p.shape)) for n, p in wm.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in tm.named_parameters()]
    assert list(wm.state_dict()) == list(tm.state_dict())
    for p in wm.parameters():
        assert p.dtype is _dt(wgrad, dtype)
    _copy_weights(wm, tm)

    rng = np.random.default_rng(0)
    arrays, grads = _inputs(spec, dtype, rng)
    w_in = [wgrad.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    t_in = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    w_out, t_out = wm(*w_in), tm(*t_in)
    np.testing.assert_allclose(_np(w_out), _np(t_out), rtol=1e-7, atol=1e-9)

    g = rng.standard_normal(tuple(t_out.shape))
    if t_out.is_complex():
        g = g + 1j * rng.standard_normal(tuple(t_out.shape))
    w_out.backward(wgrad.tensor(g, dtype=w_out.dtype))
    t_out.backward(torch.tensor(g, dtype=t_out.dtype))
    for a, b, req in zip(w_in, t_in, grads):
        if req:
            np.testing.assert_allclose(_np(a.grad), _np(b.grad), rtol=1e-7, atol=1e-9)
    for (n, p), (_, q) in zip(wm.named_parameters(), tm.named_parameters()):
        assert (p.grad is None) == (q.grad is None), n
        if q.grad is not None:
            np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-7, atol=1e-9,
                                       err_msg=n)
    for (n, a), (_, b) in zip(wm.state_dict().items(), tm.state_dict().items()):
        # e.g. Embedding(max_norm=) renormalises the rows it looked up, in place
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-7, atol=1e-9, err_msg=n)


# -- batch norm: running statistics across steps, then eval ----------------------------

BN = [
    ("bn1d", lambda L: L.nn.BatchNorm1d(3, dtype=L.float64), (4, 3)),
    ("bn1d_3d", lambda L: L.nn.BatchNorm1d(3, momentum=0.3, dtype=L.float64), (4, 3, 5)),
    ("bn2d", lambda L: L.nn.BatchNorm2d(2, dtype=L.float64), (3, 2, 4, 4)),
    ("bn_cumulative", lambda L: L.nn.BatchNorm1d(3, momentum=None, dtype=L.float64), (4, 3)),
    ("bn_untracked", lambda L: L.nn.BatchNorm1d(3, track_running_stats=False,
                                                 dtype=L.float64), (4, 3)),
    ("bn_noaffine", lambda L: L.nn.BatchNorm2d(2, affine=False, dtype=L.float64),
     (3, 2, 2, 2)),
    ("bn_nobias", lambda L: L.nn.BatchNorm1d(3, bias=False, dtype=L.float64), (4, 3)),
]


@pytest.mark.parametrize("ctor,shape", [pytest.param(c, s, id=n) for n, c, s in BN])
def test_batchnorm_running_stats(ctor, shape):
    wm, tm = ctor(wgrad), ctor(torch)
    assert repr(wm) == repr(tm)
    assert list(wm.state_dict()) == list(tm.state_dict())
    assert [n for n, _ in wm.named_buffers()] == [n for n, _ in tm.named_buffers()]
    rng = np.random.default_rng(1)
    for step in range(3):
        wm.train(step < 2)
        tm.train(step < 2)
        a = rng.standard_normal(shape) * 2 + 1
        x, y = wgrad.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
        wo, to = wm(x), tm(y)
        np.testing.assert_allclose(_np(wo), _np(to), rtol=1e-7, atol=1e-9)
        g = rng.standard_normal(shape)
        wo.backward(wgrad.tensor(g))
        to.backward(torch.tensor(g))
        np.testing.assert_allclose(_np(x.grad), _np(y.grad), rtol=1e-7, atol=1e-9)
        for (n, b), (_, c) in zip(wm.named_buffers(), tm.named_buffers()):
            np.testing.assert_allclose(np.asarray(b), c.numpy(), rtol=1e-7, atol=1e-12,
                                       err_msg=n)
        for (n, p), (_, q) in zip(wm.named_parameters(), tm.named_parameters()):
            np.testing.assert_allclose(_np(p.grad), _np(q.grad), rtol=1e-7, atol=1e-9)


def test_batchnorm_input_dims():
    for lib in (wgrad, torch):
        with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
            lib.nn.BatchNorm1d(3)(lib.zeros(1, 3, 2, 2))
        with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
            lib.nn.BatchNorm2d(3)(lib.zeros(1, 3))


def test_dropout_training_and_eval():
    wgrad.manual_seed(0)
    d = wgrad.nn.Dropout(0.5)
    x = wgrad.ones(1000, requires_grad=True)
    y = d(x)
    vals = set(np.unique(np.asarray(y.detach())).tolist())
    assert vals <= {0.0, 2.0} and len(vals) == 2
    y.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.asarray(y.detach()))
    np.testing.assert_array_equal(np.asarray(d.eval()(x).detach()), np.ones(1000))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, "
                                         "but got 1.5"):
        wgrad.nn.Dropout(1.5)


def test_conv_transpose_output_size():
    wm = wgrad.nn.ConvTranspose2d(2, 3, 3, stride=2, dtype=wgrad.float64)
    tm = torch.nn.ConvTranspose2d(2, 3, 3, stride=2, dtype=torch.float64)
    _copy_weights(wm, tm)
    a = np.random.default_rng(2).standard_normal((1, 2, 4, 4))
    out_w = wm(wgrad.tensor(a), output_size=[10, 10])
    out_t = tm(torch.tensor(a), output_size=[10, 10])
    np.testing.assert_allclose(_np(out_w), _np(out_t), rtol=1e-7, atol=1e-9)


def test_embedding_padding_and_pretrained():
    emb = wgrad.nn.Embedding(5, 2, padding_idx=-1)
    assert emb.padding_idx == 4
    np.testing.assert_array_equal(np.asarray(emb.weight.detach())[4], [0.0, 0.0])
    w = wgrad.arange(6.0).reshape(3, 2)
    pre = wgrad.nn.Embedding.from_pretrained(w)
    assert not pre.weight.requires_grad
    np.testing.assert_array_equal(np.asarray(pre(wgrad.tensor([2])).detach()), [[4.0, 5.0]])


@pytest.mark.parametrize("args,msg", [
    (dict(groups=0), "groups must be a positive integer"),
    (dict(groups=4), "in_channels must be divisible by groups"),
    (dict(padding="full"), "Invalid padding string 'full'"),
    (dict(padding="same", stride=2), "padding='same' is not supported for strided "
                                     "convolutions"),
    (dict(padding_mode="wrap"), "padding_mode must be one of"),
])
def test_conv_errors(args, msg):
    for lib in (wgrad, torch):
        with pytest.raises(ValueError, match=msg):
            lib.nn.Conv2d(6, 6, 3, **args)


def test_factory_kwargs_and_init_bounds():
    m = wgrad.nn.Linear(400, 300, dtype=wgrad.cfloat)
    assert m.weight.dtype is wgrad.complex64 and m.bias.dtype is wgrad.complex64
    bound = 1 / 20.0
    for p in (m.weight, m.bias):
        a = np.asarray(p.detach())
        assert np.abs(a.real).max() <= bound + 1e-7 and np.abs(a.imag).max() <= bound + 1e-7
        assert np.abs(a.real).max() > 0.9 * bound  # it fills the interval
    c = wgrad.nn.Conv2d(4, 8, 3, device="cpu")
    fan_in = 4 * 9
    assert np.abs(np.asarray(c.weight.detach())).max() <= 1 / np.sqrt(fan_in) + 1e-7
    assert np.abs(np.asarray(c.bias.detach())).max() <= 1 / np.sqrt(fan_in) + 1e-7
    e = wgrad.nn.Embedding(2000, 10)
    assert abs(float(e.weight.detach().std()) - 1.0) < 0.05
