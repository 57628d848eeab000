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
        assert b.grad_fn.name() == "torch::autograd::CopySlices"  # torch's C++ name
        assert type(b.grad_fn).__name__ == "CopySlices"
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


def _custom_view(lib):
    class Alias(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x.view_as(x)

        @staticmethod
        def backward(ctx, g):
            return g
    return Alias.apply


def _nograd_view(lib, a):
    with lib.no_grad():
        return a.view(4)


def _view_of_nograd_view(lib, _):
    with lib.no_grad():
        y = lib.zeros(4).view(4)
    return y.requires_grad_(True).view(4)


# (name, view maker, whether the in-place needs another input that requires grad)
RESTRICTED = [
    ("unbind", lambda lib, a: a.unbind()[1], False),
    ("split", lambda lib, a: a.split(2)[1], False),
    ("chunk", lambda lib, a: a.chunk(2)[0], False),
    ("split_with_sizes", lambda lib, a: a.split_with_sizes((1, 3))[1], False),
    ("view_of_unbind", lambda lib, a: a.unbind()[0].view_as(a.unbind()[0]), False),
    ("no_grad", _nograd_view, False),
    ("view_of_no_grad_view", _view_of_nograd_view, False),
    ("custom_function", lambda lib, a: _custom_view(lib)(a), False),
    ("unbind_other_input", lambda lib, a: a.detach().unbind()[0], True),
    ("unsafe_split", lambda lib, a: a.unsafe_split(2)[1], False),
    ("unbind_no_grad_involved", lambda lib, a: a.detach().unbind()[0], None),
]


@pytest.mark.parametrize("name,make,other", RESTRICTED, ids=[r[0] for r in RESTRICTED])
def test_inplace_on_restricted_view_matches_torch(name, make, other):
    """NOTE [View creation meta]: which in-place changes of views are refused, and how."""
    outcomes = []
    for lib in (wgrad, torch):
        a = lib.arange(4.0).requires_grad_().clone()
        v = make(lib, a)
        arg = lib.ones(()).requires_grad_() if other else 2.0
        try:
            v.mul_(arg)
            outcomes.append(None)
        except RuntimeError as e:
            outcomes.append(str(e))
    assert outcomes[0] == outcomes[1]
    if name not in ("unsafe_split", "unbind_no_grad_involved"):
        assert outcomes[0] is not None


INPLACE_VIEW_OPS = [
    ("transpose_", lambda t: t.transpose_(0, 1)),
    ("t_", lambda t: t.t_()),
    ("squeeze_", lambda t: t.unsqueeze_(0).squeeze_(0)),
    ("unsqueeze_", lambda t: t.unsqueeze_(1)),
    ("as_strided_", lambda t: t.as_strided_((2, 2), (1, 3), 1)),
]


@pytest.mark.parametrize("name,fn", INPLACE_VIEW_OPS, ids=[r[0] for r in INPLACE_VIEW_OPS])
def test_inplace_view_ops_match_torch(name, fn):
    res = []
    for lib in (wgrad, torch):
        leaf = lib.tensor(np.arange(6.0).reshape(2, 3), requires_grad=True)
        x = leaf * 1
        v0 = x._version
        y = fn(x)
        assert y is x
        (x * lib.arange(float(x.numel())).reshape(x.shape)).sum().backward()
        res.append((tuple(x.shape), x.stride(), x._version - v0, x.detach().numpy().copy(),
                    leaf.grad.numpy().copy()))
    w, t = res
    assert w[:3] == t[:3]
    np.testing.assert_array_equal(w[3], t[3])
    np.testing.assert_array_equal(w[4], t[4])


LAYOUTS = [
    ("transpose", lambda t: t.t()),
    ("slice", lambda t: t[1:, ::2]),
    ("select", lambda t: t[:, 1]),
    ("expand", lambda t: t[:1].expand(3, 4)),
]


@pytest.mark.parametrize("name,fn", LAYOUTS, ids=[r[0] for r in LAYOUTS])
def test_strides_storage_and_as_strided_match_torch(name, fn):
    """NOTE [Strides without strides]: stride(), storage_offset(), storage() and
    as_strided over a view's storage, with gradients, as torch."""
    res = []
    for lib in (wgrad, torch):
        base = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True)
        v = fn(base * 1)
        s = v.as_strided((2, 2), (v.stride(0) if v.ndim else 1, 1), v.storage_offset())
        (s * lib.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
        res.append((v.stride(), v.storage_offset(), len(v.storage()), v.is_contiguous(),
                    v.data_ptr() == (base * 1).data_ptr(), s.detach().numpy().copy(),
                    base.grad.numpy().copy()))
    w, t = res
    assert w[:5] == t[:5]
    np.testing.assert_array_equal(w[5], t[5])
    np.testing.assert_array_equal(w[6], t[6])
    x = wgrad.arange(6.0)
    assert x[2:].data_ptr() - x.data_ptr() == 2 * x.element_size()
    assert x[2:].untyped_storage().data_ptr() == x.untyped_storage().data_ptr()


def test_hooks_on_a_view_before_its_inplace_change_do_not_fire():
    """As torch's CopySlices: the in-place op reads the view replayed on the base."""
    fired = []
    for lib in (wgrad, torch):
        base = lib.tensor([1.0, 2.0], requires_grad=True).clone()
        view, view2 = base[:1], base[:1]
        view.register_hook(lambda g: fired.append(("view", lib.__name__)))
        view.mul_(2)
        view2.grad_fn
        view2.register_hook(lambda g: fired.append(("view2", lib.__name__, g.tolist())))
        (view + view2).sum().backward()
    assert fired == [("view2", "wgrad", [1.0]), ("view2", "torch", [1.0])]


def test_neg_view_has_the_negative_bit_as_torch():
    res = []
    for lib in (wgrad, torch):
        fw = lib.autograd.forward_ad
        x = lib.tensor(np.array([1 + 2j, -0.5j]), requires_grad=True)
        n = (x * 1)._neg_view()
        (n * lib.tensor(np.array([2.0 + 0j, 1j]))).real.sum().backward()
        t = lib.tensor(np.array([1.0 + 0j, 2.0]))._neg_view()
        with fw.dual_level():
            same = fw.unpack_dual(fw.make_dual(n.detach(), t)).tangent is t
            other = fw.unpack_dual(fw.make_dual(n.detach().resolve_neg(), t)).tangent is t
        res.append((n.is_neg(), n.resolve_neg().is_neg(), n.detach().resolve_neg().tolist(),
                    x.grad.numpy().tolist(), same, other))
    assert res[0] == res[1]


def test_no_grad_view_changed_in_place_has_an_invalid_history():
    # torch refuses to rebuild the history of a view made in no_grad mode of a base that
    # requires grad once the view (or its base) changed in place; repr shows it as Invalid
    torch = pytest.importorskip("torch")
    out = {}
    for L in (wgrad, torch):
        a = L.ones(1, requires_grad=True)
        with L.no_grad():
            b = a[:]
            b *= 2
        errors = []
        for read in (lambda: b.grad_fn, lambda: b.is_leaf):
            try:
                read()
                errors.append(None)
            except RuntimeError as e:
                errors.append(str(e))
        out[L.__name__] = (repr(b), errors)
    assert out["wgrad"] == out["torch"] and out["torch"][1][0] is not None
