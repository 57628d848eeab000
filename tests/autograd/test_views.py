"""Views: _base/_is_view, shared versions, write-through to base and sibling views,
CopySlices gradients compared with torch and gradcheck."""
import numpy as np
import pytest

import wgrad
from wgrad.autograd import gradcheck

torch = pytest.importorskip("torch")

VIEWS = [
    ("reshape", lambda t: t.reshape(6, 2)),
    ("view", lambda t: t.view(2, 2, 3)),
    ("transpose", lambda t: t.transpose(0, 1)),
    ("permute", lambda t: t.permute(1, 0)),
    ("t", lambda t: t.t()),
    ("slice", lambda t: t[1:, ::2]),
    ("select", lambda t: t[2]),
    ("narrow", lambda t: t.narrow(1, 1, 2)),
    ("squeeze", lambda t: t.unsqueeze(0).squeeze(0)),
    ("unsqueeze", lambda t: t.unsqueeze(1)),
    ("diagonal", lambda t: t.diagonal()),
    ("chain", lambda t: t.t()[1:][:, ::2].unsqueeze(0)),
]
# every view kind is checked for values above; gradients on a representative subset
GRAD_VIEWS = [v for v in VIEWS if v[0] in ("reshape", "transpose", "slice", "select",
                                            "diagonal", "chain")]


@pytest.mark.parametrize("name,fn", VIEWS, ids=[v[0] for v in VIEWS])
def test_view_is_view_and_writes_through(name, fn):
    a = np.arange(12.0).reshape(4, 3)
    bw, bt = wgrad.tensor(a), torch.tensor(a)
    vw, vt = fn(bw), fn(bt)
    other_w, other_t = bw.t(), bt.t()
    assert vw._is_view() and vw._base is bw and vt._base is bt
    vw.mul_(-1)
    vt.mul_(-1)
    assert bw._version == vw._version == other_w._version == 1
    np.testing.assert_array_equal(bw.numpy(), bt.numpy())
    np.testing.assert_array_equal(other_w.numpy(), other_t.numpy())
    np.testing.assert_array_equal(vw.numpy(), vt.numpy())
    bw.add_(1)  # writing the base updates the view
    bt.add_(1)
    np.testing.assert_array_equal(vw.numpy(), vt.numpy())


@pytest.mark.parametrize("name,fn", GRAD_VIEWS, ids=[v[0] for v in GRAD_VIEWS])
def test_inplace_through_view_gradient_matches_torch(name, fn):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((4, 3))
    w_ = rng.standard_normal(())
    res = []
    for lib in (wgrad, torch):
        x = lib.tensor(a, requires_grad=True)
        s = lib.tensor(w_, requires_grad=True)
        b = x * 1
        v = fn(b)
        sib = b[1:3]
        v.mul_(s).exp_()
        assert (b.grad_fn.name() if lib is wgrad else type(b.grad_fn).__name__) == "CopySlices"
        ((b * b).sum() + (sib * 3).sum() + v.sum()).backward()
        res.append((b, x.grad, s.grad))
    for p, q in zip(*res):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-10)


def test_view_gradcheck():
    def f(x, s):
        b = x * 1
        b.t()[1:].mul_(s)
        b[0].pow_(2)
        return b.sin()
    x = wgrad.randn(3, 3, dtype=wgrad.float64, requires_grad=True)
    s = wgrad.randn(2, 1, dtype=wgrad.float64, requires_grad=True)
    assert gradcheck(f, (x, s))


def test_complex_real_imag_view_as_real():
    rng = np.random.default_rng(5)
    a = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    res = []
    for lib in (wgrad, torch):
        x = lib.tensor(a, requires_grad=True)
        b = x * 1
        re, im, vr = b.real, b.imag, lib.view_as_real(b)
        assert re._base is b and im._base is b and vr._base is b
        re.mul_(2)
        im[1] = 5.0
        vr[0, 1].add_(1)
        c = lib.view_as_complex(vr.detach().clone())
        c.mul_(1j)
        (b.abs() ** 2).sum().backward()
        res.append((b, re, im, x.grad, c))
    for p, q in zip(*res):
        np.testing.assert_allclose(p.detach().numpy(), q.detach().numpy(), rtol=1e-12)

    def f(x):
        b = x * 1
        b.imag.mul_(3)
        b.real[0] = 1.0
        return b
    x = wgrad.randn(2, dtype=wgrad.complex128, requires_grad=True)
    assert gradcheck(f, (x,))


def test_detach_shares_data_and_counter_but_is_not_a_view():
    x = wgrad.randn(3, requires_grad=True)
    d = x.detach()
    assert not d._is_view() and d._base is None
    d.zero_()
    assert x._version == 1
    np.testing.assert_array_equal(x.detach().numpy(), np.zeros(3))
    v = x.detach()[1:]
    assert v._base is not None and v._base is not x
    v.fill_(2.0)
    np.testing.assert_array_equal(x.detach().numpy(), [0.0, 2.0, 2.0])


def test_expand_is_not_writable():
    e = wgrad.randn(1).expand(3)
    with pytest.raises(RuntimeError, match="unsupported operation: more than one element of "
                                           "the written-to tensor refers to a single memory "
                                           "location"):
        e.add_(1)
    ok = wgrad.randn(3).expand(1, 3)  # no element is repeated: writable, as torch
    ok.add_(1)


def test_views_of_views_share_root_base_and_integer_views():
    x = wgrad.zeros(2, 3, dtype=wgrad.int64)
    v = x[1][1:]
    assert v._base is x
    v[0] = 7
    assert x.tolist() == [[0, 0, 0], [0, 7, 0]]
    x.view(-1)[0] = 1
    assert x[0, 0].item() == 1


def test_view_grad_fn_is_regenerated_after_base_inplace():
    x = wgrad.randn(2, 2, dtype=wgrad.float64, requires_grad=True)
    b = x * 1
    v = b[0]
    b.mul_(3)
    v.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[3.0, 3.0], [0.0, 0.0]])
