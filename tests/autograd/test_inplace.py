"""In-place ops: values, versions, graph rewriting, gradients vs torch, errors."""
import numpy as np
import pytest
from hypothesis import given, strategies as st

import wgrad
from wgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")


def _pair(a, requires_grad=True):
    return (wgrad.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(w, t, **kw):
    np.testing.assert_allclose(np.asarray(w.detach().numpy()), t.detach().numpy(),
                               rtol=1e-10, atol=1e-12, **kw)


# (name, extra args builder, domain low, high)
UNARY = ["exp", "neg", "sin", "tanh", "sigmoid", "sqrt", "log", "reciprocal", "square",
         "conj_physical", "abs", "expm1", "rsqrt"]
BINARY = ["add", "sub", "mul", "div", "pow"]


@pytest.mark.parametrize("name", UNARY)
def test_unary_inplace_matches_torch(name):
    a = np.random.default_rng(0).uniform(0.5, 2.0, (2, 3))
    xw, xt = _pair(a)
    yw, yt = xw * 1, xt * 1
    rw = getattr(yw, name + "_")()
    getattr(yt, name + "_")()
    assert rw is yw and yw._version == 1
    _close(yw, yt)
    (yw * yw).sum().backward()
    (yt * yt).sum().backward()
    _close(xw.grad, xt.grad)


@pytest.mark.parametrize("name", BINARY)
def test_binary_inplace_gradients_match_torch(name):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.5, 2.0, (2, 3)), rng.uniform(0.5, 2.0, (3,))
    xw, xt = _pair(a)
    ow, ot = _pair(b)
    yw, yt = xw * 1, xt * 1
    getattr(yw, name + "_")(ow)
    getattr(yt, name + "_")(ot)
    assert yw.grad_fn.name()[:-1] == type(yt.grad_fn).__name__[:-1]
    _close(yw, yt)
    yw.sum().backward()
    yt.sum().backward()
    _close(xw.grad, xt.grad)
    _close(ow.grad, ot.grad)


def test_inplace_gradcheck_complex():
    def f(x, o):
        y = x * 1
        y /= o
        y.mul_(o).add_(o.conj(), alpha=2j).exp_()
        return y
    x = wgrad.randn(2, 3, dtype=wgrad.complex128, requires_grad=True)
    o = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    assert gradcheck(f, (x, o))
    assert gradgradcheck(f, (x, o))


def test_dunder_inplace_ops():
    xw, xt = _pair(np.arange(1.0, 7.0).reshape(2, 3))
    yw, yt = xw * 1, xt * 1
    for op in ("__iadd__", "__isub__", "__imul__", "__itruediv__", "__ipow__"):
        r = getattr(yw, op)(2.0)
        getattr(yt, op)(2.0)
        assert r is yw
    assert yw._version == 5
    _close(yw, yt)
    yw.sum().backward()
    yt.sum().backward()
    _close(xw.grad, xt.grad)
    i = wgrad.tensor([5, 6, 7])
    i //= 2
    i %= 2
    i |= 4
    assert i.tolist() == [4, 5, 5]  # [2, 3, 3] -> [0, 1, 1] -> | 4


def test_clamp_masked_fill_copy_zero_fill():
    xw, xt = _pair(np.linspace(-2, 2, 6))
    vw, vt = _pair(np.array(3.0))
    sw, st_ = _pair(np.array([0.5, -0.5, 0.25, 1.0, 2.0, -1.0]))
    outs = []
    for x, v, s, lib in ((xw, vw, sw, wgrad), (xt, vt, st_, torch)):
        y = x * 1
        y.clamp_(-1, 1)
        y.masked_fill_(lib.tensor([True, False, False, False, False, True]), 0.5)
        z = x * 2
        z[1:3].copy_(s[1:3])
        z[3:].zero_()
        w = x * 3
        w[2:4].fill_(v)
        (y.sum() + (z * z).sum() + (w * w).sum()).backward()
        outs.append((y, z, w, x.grad, v.grad, s.grad))
    for a, b in zip(*outs):
        _close(a, b)
    assert xw.grad is not None
    y = xw * 1
    y.zero_()
    assert y.grad_fn.name() == "ZeroBackward0"
    y.copy_(sw)
    assert y.grad_fn.name() == "torch::autograd::CopyBackwards"


def test_index_put_index_add_scatter():
    rng = np.random.default_rng(2)
    a = rng.standard_normal((4, 3))
    xw, xt = _pair(a)
    vw, vt = _pair(rng.standard_normal((2, 3)))
    res = []
    for x, v, lib in ((xw, vw, wgrad), (xt, vt, torch)):
        i = lib.tensor([3, 0])
        y = x * 1
        y.index_put_((i,), v * 2)
        y.index_add_(0, lib.tensor([1, 1]), v, alpha=0.5)
        y.scatter_(1, lib.tensor([[0], [2]]), v[:, :1])
        y.scatter_add_(0, lib.tensor([[1, 2, 3]]), v[:1])
        (y * y).sum().backward()
        res.append((y, x.grad, v.grad))
    for a_, b_ in zip(*res):
        _close(a_, b_)


def test_setitem_basic_and_advanced_with_gradients():
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 4))
    xw, xt = _pair(a)
    vw, vt = _pair(rng.standard_normal((4,)))
    res = []
    for x, v, lib in ((xw, vw, wgrad), (xt, vt, torch)):
        y = x * 1
        y[0] = v                      # basic, broadcast row
        y[1:, 1] = 7.0                # basic slice, scalar
        y[[2, 1], [0, 3]] = v[:2]     # advanced
        y[y.detach() > 1.0] = 0.0     # boolean mask
        y[:, lib.tensor([0, 2])] = v[1] * 3  # mixed, broadcast 0-d tensor
        (y * y).sum().backward()
        res.append((y, x.grad, v.grad))
        name = y.grad_fn.name() if lib is wgrad else type(y.grad_fn).__name__
        assert name in ("IndexPutBackward0", "CopySlices")
    for p, q in zip(*res):
        _close(p, q)


def test_inplace_gradcheck_setitem_complex():
    def f(x, v):
        y = x * 1
        y[1] = v
        y[:, 0] = v[0] * 2
        return y.abs() ** 2
    x = wgrad.randn(3, 2, dtype=wgrad.complex128, requires_grad=True)
    v = wgrad.randn(2, dtype=wgrad.complex128, requires_grad=True)
    assert gradcheck(f, (x, v))


def test_errors():
    x = wgrad.randn(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        x.add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad is "
                                           "being used in an in-place operation."):
        x[0].add_(1)
    with pytest.raises(RuntimeError, match="a view of a leaf Variable"):
        x[1] = 2.0
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        x[[1]] = 2.0
    with wgrad.no_grad():
        x.mul_(2)  # allowed under no_grad
    with wgrad.inference_mode():
        it = wgrad.ones(3)
        it.add_(1)  # allowed inside inference mode
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        it.add_(1)
    with pytest.raises(RuntimeError, match=r"output with shape \[3\] doesn't match the "
                                           r"broadcast shape \[2, 3\]"):
        wgrad.zeros(3).add_(wgrad.zeros(2, 3))
    with pytest.raises(RuntimeError, match="can't be cast to the desired output type Long"):
        wgrad.zeros(3, dtype=wgrad.int64).add_(wgrad.tensor([1.5], dtype=wgrad.float32))
    with pytest.raises(RuntimeError, match="result type ComplexFloat can't be cast to the "
                                           "desired output type Float"):
        wgrad.zeros(3).add_(wgrad.tensor(1j, dtype=wgrad.complex64))
    with pytest.raises(RuntimeError, match="fill_ only supports 0-dimension value tensor"):
        wgrad.zeros(3).fill_(wgrad.ones(2))


def test_inplace_comparison_keeps_a_zero_gradient_node():
    # as torch: the float result stays in the graph (GtBackward0), its gradient is zero;
    # on an integer tensor there is no graph to keep
    x = wgrad.randn(3, requires_grad=True)
    y = x * 1
    y.gt_(0)
    assert y.grad_fn.name() == "GtBackward0" and y.requires_grad
    assert y.dtype is wgrad.float32
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    n = wgrad.tensor([1, 5]).gt_(2)
    assert n.grad_fn is None and n.tolist() == [0, 1]


@given(st.integers(0, 3))
def test_inplace_same_tensor_as_other(k):
    a = np.array([0.5, 1.5, -1.0])[: k or 1]
    xw = wgrad.tensor(a, requires_grad=True)
    y = xw * 1
    y.mul_(y)  # the old value is used for both factors: d(x^2)/dx = 2x
    y.sum().backward()
    np.testing.assert_allclose(xw.grad.numpy(), 2 * a)
