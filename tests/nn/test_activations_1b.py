"""PReLU, RReLU, Hardswish, Hardsigmoid, Softsign, Tanhshrink, Threshold, GLU, LogSigmoid,
Softmax2d and the channel dropouts: torch's values and gradients (breakpoints included),
gradcheck (complex128 where torch takes complex), statistics of the random ones, modules."""
import jax
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op, to_np

from nn1b_compare import compare

torch = pytest.importorskip("torch")
F = wgrad.nn.functional

rng = np.random.default_rng(0)
# the breakpoints of every piecewise function, then random values
KINKS = np.array([-4.0, -3.0, -2.5, -1.0, 0.0, 0.5, 1.0, 3.0, 3.5, 25.0, -25.0])
X = rng.standard_normal((2, 3, 4)) * 3

ROWS = [
    ("hardswish", lambda t, x: t.nn.functional.hardswish(x)),
    ("hardsigmoid", lambda t, x: t.nn.functional.hardsigmoid(x)),
    ("softsign", lambda t, x: t.nn.functional.softsign(x)),
    ("tanhshrink", lambda t, x: t.nn.functional.tanhshrink(x)),
    ("threshold", lambda t, x: t.nn.functional.threshold(x, 0.5, -2.0)),
    ("logsigmoid", lambda t, x: t.nn.functional.logsigmoid(x)),
    ("rrelu_eval", lambda t, x: t.nn.functional.rrelu(x, 0.1, 0.3)),
    ("prelu_scalar", lambda t, x: t.nn.functional.prelu(x, t.tensor([0.3], dtype=x.dtype))),
    ("glu", lambda t, x: t.nn.functional.glu(x.reshape(-1, 2), 1)),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_against_torch_at_breakpoints(row):
    x = KINKS if row[0] != "glu" else np.concatenate([KINKS, [1.0]])
    compare(row[1], [x])


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_against_torch_random(row):
    compare(row[1], [X])


def test_prelu_per_channel_against_torch():
    w = np.array([0.1, -0.2, 0.3])
    compare(lambda t, x, w: t.nn.functional.prelu(x, w), [X, w])
    compare(lambda t, x: t.nn.Softmax2d()(x), [X])
    compare(lambda t, x: t.nn.GLU(-2)(x), [X.reshape(2, 4, 3)])


GRADCHECK = [
    ("hardswish", F.hardswish, False), ("hardsigmoid", F.hardsigmoid, False),
    ("softsign", F.softsign, True), ("tanhshrink", F.tanhshrink, True),
    ("logsigmoid", F.logsigmoid, False), ("glu", lambda x: F.glu(x, 0), False),
    ("prelu", lambda x: F.prelu(x, wgrad.tensor([0.2, 0.4], dtype=x.dtype)), False),
]


_JAX = {"hardswish": jax.nn.hard_swish, "hardsigmoid": jax.nn.hard_sigmoid,
        "logsigmoid": jax.nn.log_sigmoid, "glu": lambda x: jax.nn.glu(x, 0)}


@pytest.mark.parametrize("row", GRADCHECK, ids=[r[0] for r in GRADCHECK])
def test_gradcheck(row):
    _, fn, cplx = row
    x = np.array([[-3.7, -1.2], [0.3, 2.1]])           # away from the breakpoints
    # the rows with their own formula (one node, as torch's) differentiate twice too, and
    # are compared with JAX's vjp
    check_op(fn, [wgrad.tensor(x, requires_grad=True)], _JAX.get(row[0]),
             gradgrad=row[0] in _JAX)
    if cplx:
        check_op(fn, [wgrad.tensor(x + 1j * x[::-1], requires_grad=True)])


def test_rrelu_training_slopes_and_eval_slope():
    x = wgrad.full((20000,), -1.0, dtype=wgrad.float64, requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    slopes = -to_np(y)
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.01 and abs(slopes.std() - 0.2 / np.sqrt(12)) < 0.005
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), slopes)     # the drawn slope is the gradient
    m = wgrad.nn.RReLU(0.1, 0.3).eval()
    np.testing.assert_allclose(to_np(m(wgrad.tensor([-2.0, 1.0]))), [-0.4, 1.0])


@pytest.mark.parametrize("name,shape", [("dropout1d", (40, 50, 3)), ("dropout2d", (40, 50, 2, 2)),
                                        ("dropout3d", (40, 50, 1, 2, 2))])
def test_channel_dropout_statistics(name, shape):
    wgrad.manual_seed(0)
    p = 0.3
    y = to_np(getattr(F, name)(wgrad.ones(*shape), p))
    per_channel = y.reshape(shape[0], shape[1], -1)
    assert (per_channel.min(-1) == per_channel.max(-1)).all()       # whole channels
    assert set(np.unique(y)) <= {0.0, np.float32(1 / (1 - p))}
    assert abs((y == 0).mean() - p) < 0.03
    x = wgrad.ones(*shape)
    assert getattr(F, name)(x, p, training=False) is x


def test_alpha_dropouts_keep_mean_and_variance():
    wgrad.manual_seed(0)
    x = wgrad.randn(400, 500, dtype=wgrad.float64)
    for fn in (F.alpha_dropout, F.feature_alpha_dropout):
        y = to_np(fn(x, 0.2, True))
        assert abs(y.mean()) < 0.03 and abs(y.std() - 1) < 0.03
        assert fn(x, 0.2, False) is x
    y = to_np(F.feature_alpha_dropout(x.reshape(400, 50, 10), 0.5, True))
    dropped = y.std(-1) == 0                  # whole channels set to one value
    assert abs(dropped.mean() - 0.5) < 0.02
    alpha, p = 1.7580993408473766, 0.5        # SELU's saturation value, -lambda * alpha
    a = 1 / np.sqrt((alpha ** 2 * p + 1) * (1 - p))
    np.testing.assert_allclose(y[dropped][:, 0], -alpha * a + alpha * a * p)
    assert wgrad.nn.AlphaDropout(0.2).eval()(x) is x


ERRORS = [
    lambda t, x: t.nn.functional.glu(x[:, :1], 1),
    lambda t, x: t.nn.functional.glu(x[0, 0, 0]),
    lambda t, x: t.nn.functional.prelu(x, t.ones(4, dtype=x.dtype)),
    lambda t, x: t.nn.functional.dropout2d(x, 1.5),
    lambda t, x: t.nn.functional.dropout1d(x[None], 0.5),
    lambda t, x: t.nn.functional.hardswish(x.to(t.complex128)),
    lambda t, x: t.nn.functional.logsigmoid(x.to(t.complex128)),
    lambda t, x: t.nn.Softmax2d()(x[0, 0]),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_messages(i):
    with pytest.raises(Exception) as et:
        ERRORS[i](torch, torch.tensor(X))
    with pytest.raises(type(et.value)) as ew:
        ERRORS[i](wgrad, wgrad.tensor(X))
    assert str(ew.value) == str(et.value)


def test_modules_reprs_and_parameters():
    mods = [("PReLU", ()), ("PReLU", (3, 0.1)), ("RReLU", (0.1, 0.3, True)), ("Hardswish", ()),
            ("Hardsigmoid", ()), ("Softsign", ()), ("Tanhshrink", ()), ("Threshold", (0.1, 20)),
            ("GLU", (1,)), ("LogSigmoid", ()), ("Softmax2d", ()), ("Dropout1d", ()),
            ("Dropout2d", (0.3,)), ("Dropout3d", (0.5, True)), ("AlphaDropout", (0.2,)),
            ("FeatureAlphaDropout", ())]
    for name, args in mods:
        assert repr(getattr(wgrad.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    w = wgrad.nn.PReLU(3, 0.1)
    assert list(w.state_dict()) == ["weight"] and np.allclose(to_np(w.weight), 0.1)
    x = wgrad.tensor(X, dtype=w.weight.dtype, requires_grad=True)  # prelu: one dtype, as torch
    w(x).sum().backward()
    assert w.weight.grad is not None and w.weight.grad.shape == (3,)
