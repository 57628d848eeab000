"""Shape op table: gradcheck, gradgradcheck and the JAX identity on float64 and complex128
with hypothesis-drawn small shapes (0-d where the op takes it); torch's error messages."""
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgrad
from wgrad.ops.shape import pad
from wgrad.testing import check_op, shapes, values

F64, C128 = np.float64, np.complex128
BOTH = (F64, C128)

# Each check_op compiles a few kernels per shape, so a table row draws one example per dtype
# (hypothesis' first, smallest one: sides of 2, at least 2-d where the op allows, values away
# from 0) and gradchecks in fast mode (random Wirtinger projections); 0-d inputs and other
# shapes are drawn by the tests below the tables.
FEW = settings(max_examples=1)


def _jpad(x, widths, mode):
    w = [(0, 0)] * (x.ndim - len(widths)) + list(widths)
    return jnp.pad(x, w, mode={"replicate": "edge", "circular": "wrap"}.get(mode, mode))


# (name, wgrad fn, jax fn, min_dims, max_dims)
UNARY = [
    ("reshape", lambda x: x.reshape(-1), lambda x: x.reshape(-1), 0, 3),
    ("view", lambda x: x.view(1, x.numel()), lambda x: x.reshape(1, -1), 0, 3),
    ("flatten", lambda x: x.flatten(), lambda x: x.reshape(-1), 0, 3),
    ("flatten_1", lambda x: x.flatten(1), lambda x: x.reshape(x.shape[0], -1), 2, 3),
    ("unflatten", lambda x: x.unflatten(0, (1, -1)), lambda x: x[None], 1, 3),
    ("transpose", lambda x: x.transpose(0, -1), lambda x: jnp.swapaxes(x, 0, -1), 1, 3),
    ("t", lambda x: x.t(), lambda x: x.T, 0, 2),
    ("T", lambda x: x.T, lambda x: x.T, 2, 2),
    ("mT", lambda x: x.mT, lambda x: jnp.swapaxes(x, -1, -2), 2, 3),
    ("mH", lambda x: x.mH, lambda x: jnp.swapaxes(x, -1, -2).conj(), 2, 3),
    ("permute", lambda x: x.permute(*reversed(range(x.ndim))), lambda x: x.T, 0, 3),
    ("movedim", lambda x: x.movedim(0, -1), lambda x: jnp.moveaxis(x, 0, -1), 1, 3),
    ("squeeze", lambda x: x.squeeze(), jnp.squeeze, 0, 3),
    ("squeeze_dims", lambda x: x.squeeze((0, -1)),
     lambda x: jnp.squeeze(x, tuple({d % x.ndim for d in (0, -1) if x.shape[d] == 1})), 2, 3),
    ("unsqueeze", lambda x: x.unsqueeze(-1), lambda x: x[..., None], 0, 3),
    ("expand", lambda x: x.expand(2, *x.shape), lambda x: jnp.broadcast_to(x, (2,) + x.shape),
     0, 2),
    ("expand_ones", lambda x: x[None].expand(2, *([-1] * x.ndim)),
     lambda x: jnp.broadcast_to(x, (2,) + x.shape), 0, 2),
    ("broadcast_to", lambda x: x.broadcast_to((3, 1) + tuple(x.shape)),
     lambda x: jnp.broadcast_to(x, (3, 1) + x.shape), 0, 2),
    ("split", lambda x: x.split(2, 0), lambda x: tuple(x[i:i + 2] for i in range(0, len(x), 2)),
     1, 3),
    ("split_sizes", lambda x: x.split([1, x.shape[-1] - 1], -1),
     lambda x: (x[..., :1], x[..., 1:]), 1, 3),
    ("chunk", lambda x: x.chunk(2, -1),
     lambda x: tuple(jnp.split(x, [-(-x.shape[-1] // 2)], -1)), 1, 3),
    ("unbind", lambda x: x.unbind(-1), lambda x: tuple(jnp.moveaxis(x, -1, 0)), 1, 3),
    ("narrow", lambda x: x.narrow(-1, 1, x.shape[-1] - 1), lambda x: x[..., 1:], 1, 3),
    ("select", lambda x: x.select(0, -1), lambda x: x[-1], 1, 3),
    ("flip", lambda x: x.flip((0, -1)), lambda x: jnp.flip(x, (0, -1)), 2, 3),
    ("fliplr", lambda x: x.fliplr(), jnp.fliplr, 2, 3),
    ("roll", lambda x: x.roll((1, -2), (0, -1)), lambda x: jnp.roll(x, (1, -2), (0, -1)), 2, 3),
    ("roll_flat", lambda x: x.roll(2), lambda x: jnp.roll(x, 2), 0, 3),
    ("repeat", lambda x: x.repeat(2, *([1] * x.ndim)), lambda x: jnp.tile(x, (2,) + (1,) * x.ndim),
     0, 2),
    ("repeat_inner", lambda x: x.repeat(*([2] * x.ndim)), lambda x: jnp.tile(x, (2,) * x.ndim),
     1, 2),
    ("tile", lambda x: x.tile((2,)), lambda x: jnp.tile(x, (1,) * (x.ndim - 1) + (2,)), 1, 3),
    ("clone", lambda x: x.clone(), lambda x: x, 0, 3),
    ("sum_to_size", lambda x: x.expand(2, *x.shape).sum_to_size(x.shape), lambda x: 2 * x,
     0, 2),
    ("sum_to_size_1", lambda x: x.sum_to_size((1,) * x.ndim),
     lambda x: jnp.sum(x, keepdims=True), 1, 3),
    ("pad_constant", lambda x: pad(x, (1, 2), value=0.5),
     lambda x: jnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(1, 2)], constant_values=0.5), 1, 3),
    ("pad_crop", lambda x: pad(x, (-1, 1, 1, 0)),
     lambda x: _jpad(x, [(1, 0), (0, 1)], "constant")[..., 1:], 2, 3),
    ("pad_reflect", lambda x: pad(x, (x.shape[-1] - 1, 1), mode="reflect"),
     lambda x: _jpad(x, [(x.shape[-1] - 1, 1)], "reflect"), 2, 3),
    ("pad_replicate", lambda x: pad(x, (2, 1, 1, 0), mode="replicate"),
     lambda x: _jpad(x, [(1, 0), (2, 1)], "replicate"), 3, 3),
    ("pad_circular", lambda x: pad(x, (x.shape[-1], 1), mode="circular"),
     lambda x: _jpad(x, [(x.shape[-1], 1)], "circular"), 2, 3),
]


@pytest.mark.parametrize("name,wfn,jfn,lo,hi", UNARY, ids=[u[0] for u in UNARY])
@pytest.mark.parametrize("dtype", BOTH, ids=["f64", "c128"])
@FEW
@given(data=st.data())
def test_unary(name, wfn, jfn, lo, hi, dtype, data):
    shape = data.draw(shapes(min_dims=min(max(lo, 2), hi), max_dims=hi, min_side=2))
    x = wgrad.tensor(data.draw(values(dtype, shape, 0.3, 2)), requires_grad=True)
    check_op(wfn, (x,), jfn, fast_mode=True)


BINARY = [
    ("cat0", lambda a, b: wgrad.cat([a, b]), lambda a, b: jnp.concatenate([a, b])),
    ("cat_last", lambda a, b: wgrad.cat([a, b], -1), lambda a, b: jnp.concatenate([a, b], -1)),
    ("stack", lambda a, b: wgrad.stack([a, b], -1), lambda a, b: jnp.stack([a, b], -1)),
    ("hstack", lambda a, b: wgrad.hstack([a, b]), lambda a, b: jnp.hstack([a, b])),
    ("vstack", lambda a, b: wgrad.vstack([a, b]), lambda a, b: jnp.vstack([a, b])),
    ("broadcast_tensors", lambda a, b: wgrad.broadcast_tensors(a, b[:1]),
     lambda a, b: tuple(jnp.broadcast_arrays(a, b[:1]))),
    ("expand_as", lambda a, b: a[:1].expand_as(b), lambda a, b: jnp.broadcast_to(a[:1], b.shape)),
]


@pytest.mark.parametrize("name,wfn,jfn", BINARY, ids=[b[0] for b in BINARY])
@pytest.mark.parametrize("da,db", [(F64, F64), (C128, C128)], ids=["rr", "cc"])
@FEW
@given(data=st.data())
def test_binary(name, wfn, jfn, da, db, data):
    shape = data.draw(shapes(min_dims=2, max_dims=3, min_side=2))
    a = wgrad.tensor(data.draw(values(da, shape, 0.3, 2)), requires_grad=True)
    b = wgrad.tensor(data.draw(values(db, shape, -2, -0.3)), requires_grad=True)
    check_op(wfn, (a, b), jfn, fast_mode=True)


@pytest.mark.parametrize("src,dst", [(F64, C128), (C128, F64)], ids=["r2c", "c2r"])
@settings(max_examples=2)
@given(data=st.data())
def test_to_dtype(src, dst, data):
    x = wgrad.tensor(data.draw(values(src, data.draw(shapes()))), requires_grad=True)
    jfn = (lambda x: x.real) if dst is F64 else (lambda x: x.astype(dst))
    wdt = {F64: wgrad.float64, C128: wgrad.complex128}[dst]
    if dst is F64:
        with pytest.warns(UserWarning, match="discards the imaginary part"):
            check_op(lambda x: x.to(wdt), (x,), jfn)
    else:
        check_op(lambda x: x.to(wdt), (x,), jfn)


def test_complex_to_real_gradient_is_real_as_complex():
    z = wgrad.tensor([1 + 2j, -1j], dtype=wgrad.complex128, requires_grad=True)
    with pytest.warns(UserWarning, match="discards the imaginary part"):
        r = z.to(wgrad.float64)
    assert r.dtype is wgrad.float64 and r.tolist() == [1.0, 0.0]
    (r * wgrad.tensor([3.0, -2.0], dtype=wgrad.float64)).sum().backward()
    assert z.grad.dtype is wgrad.complex128
    assert z.grad.tolist() == [3 + 0j, -2 + 0j]


def test_to_int_does_not_require_grad_and_views_share_values():
    x = wgrad.tensor([1.5, -2.5], requires_grad=True)
    assert not x.to(wgrad.int64).requires_grad
    assert x.to(wgrad.int64).tolist() == [1, -2]
    y = wgrad.arange(6.).view(2, 3)
    assert y.tolist() == [[0, 1, 2], [3, 4, 5]]
    assert y.t().shape == (3, 2) and y.T.shape == (3, 2)
    assert wgrad.ones(1, 2, 1).squeeze((0, 2)).shape == (2,)
    assert wgrad.ones(1, 2, 1).squeeze(1).shape == (1, 2, 1)
    assert wgrad.tensor(1.).squeeze(0).shape == ()
    assert wgrad.tensor(1.).unsqueeze(0).shape == (1,)


def _x(*s):
    return wgrad.ones(*s)


ERRORS = [
    (lambda: _x(2, 3).reshape(4, -1), RuntimeError,
     r"shape '\[4, -1\]' is invalid for input of size 6"),
    (lambda: _x(2, 3).reshape(-1, -1), RuntimeError, "only one dimension can be inferred"),
    (lambda: _x(2, 3).flatten(1, 0), RuntimeError, "start_dim cannot come after end_dim"),
    (lambda: _x(2, 6).unflatten(1, (4, -1)), RuntimeError,
     r"unflatten: Provided sizes \[4, -1\] don't multiply up to the size of dim 1 \(6\)"),
    (lambda: _x(2, 3).transpose(0, 2), IndexError,
     r"Dimension out of range \(expected to be in range of \[-2, 1\], but got 2\)"),
    (lambda: _x(2, 3, 4).t(), RuntimeError, "t\\(\\) expects a tensor with <= 2 dimensions, "
     "but self is 3D"),
    (lambda: _x(2, 3).permute(0), RuntimeError, r"input.dim\(\) = 2 is not equal to len\(dims\) "
     "= 1"),
    (lambda: _x(2, 3).permute(0, 0), RuntimeError, "duplicate dims are not allowed"),
    (lambda: _x(2, 3).movedim((0, 1), (0,)), RuntimeError, "should contain the same number of "
     "dims as destination"),
    (lambda: _x(2, 3).movedim((0, 0), (0, 1)), RuntimeError,
     r"movedim: repeated dim in `source` \(\[0, 0\]\)"),
    (lambda: _x(1, 3).squeeze((0, 0)), RuntimeError, "dim 0 appears multiple times in the list "
     "of dims"),
    (lambda: _x(1, 3).unsqueeze(3), IndexError, r"expected to be in range of \[-3, 2\]"),
    (lambda: _x(2, 3).expand(3), RuntimeError, r"the number of sizes provided \(1\) must be "
     r"greater or equal to the number of dimensions in the tensor \(2\)"),
    (lambda: _x(2, 3).expand(2, 4), RuntimeError, r"The expanded size of the tensor \(4\) must "
     r"match the existing size \(3\) at non-singleton dimension 1.  Target sizes: \[2, 4\].  "
     r"Tensor sizes: \[2, 3\]"),
    (lambda: wgrad.broadcast_tensors(_x(2, 3), _x(4)), RuntimeError,
     r"The size of tensor a \(3\) must match the size of tensor b \(4\) at non-singleton "
     "dimension 1"),
    (lambda: wgrad.broadcast_shapes((2, 3), (4,)), RuntimeError, "Attempting to broadcast a "
     "dimension of length 4 at -1! Mismatching argument at index 1 had \\(4,\\)"),
    (lambda: wgrad.cat([_x(2, 3), _x(2, 4)]), RuntimeError, "Sizes of tensors must match except "
     "in dimension 0. Expected size 3 but got size 4 for tensor number 1 in the list."),
    (lambda: wgrad.cat([_x(2, 3), _x(2)]), RuntimeError, "Tensors must have same number of "
     "dimensions: got 2 and 1"),
    (lambda: wgrad.cat([]), ValueError, "expected a non-empty list of Tensors"),
    (lambda: wgrad.stack([_x(2, 3), _x(2, 4)]), RuntimeError, r"stack expects each tensor to be "
     r"equal size, but got \[2, 3\] at entry 0 and \[2, 4\] at entry 1"),
    (lambda: wgrad.stack([]), RuntimeError, "stack expects a non-empty TensorList"),
    (lambda: _x(5).split([2, 2]), RuntimeError, "split_with_sizes expects split_sizes to sum "
     r"exactly to 5 \(input tensor's size at dimension 0\), but got split_sizes=\[2, 2\]"),
    (lambda: _x(5).split(0), RuntimeError, "split_size can only be 0 if dimension size is 0"),
    (lambda: _x(5).chunk(0), RuntimeError, "chunk expects `chunks` to be greater than 0, got: 0"),
    (lambda: _x(5).narrow(0, 3, 3), RuntimeError, r"start \(3\) \+ length \(3\) exceeds "
     r"dimension size \(5\)."),
    (lambda: _x(5).narrow(0, 6, 0), IndexError, r"start out of range \(expected to be in range "
     r"of \[-5, 5\], but got 6\)"),
    (lambda: _x(5).select(0, 5), IndexError, r"select\(\): index 5 out of range for tensor of "
     r"size \[5\] at dimension 0"),
    (lambda: _x(5, 2).flip((0, 0)), RuntimeError, "dim 0 appears multiple times"),
    (lambda: _x(5).roll((1, 2)), RuntimeError, "shifts and dimensions must align. shifts: 2, "
     "dims:0"),
    (lambda: _x(5).roll((1, 2), (0,)), RuntimeError, "shifts and dimensions must align. "
     "shifts: 2, dims:1"),
    (lambda: _x(2, 3).repeat(2), RuntimeError, "Number of dimensions of repeat dims can not be "
     "smaller than number of dimensions of tensor"),
    (lambda: _x(2, 3).tile((2, -1)), RuntimeError, r"Trying to create tensor with negative "
     r"dimension -3: \[4, -3\]"),
    (lambda: _x(2, 3).sum_to_size(4), RuntimeError, r"size \{\[4\]\} is not expandable to size "
     r"\{\[2, 3\]\}."),
    (lambda: pad(_x(2, 3), (1,)), RuntimeError, "Padding length must be divisible by 2"),
    (lambda: pad(_x(2, 3), (-2, -2)), RuntimeError, "narrow\\(\\): length must be "
     "non-negative."),
    (lambda: pad(_x(2), (1, 1, 1, 1)), RuntimeError, "Padding length should be less than or "
     "equal to two times the input dimension but got padding length 4 and input of dimension 1"),
    (lambda: pad(_x(1, 2, 3), (3, 2), mode="reflect"), RuntimeError, r"Argument #4: Padding "
     r"size should be less than the corresponding input dimension, but got: padding \(3, 2\) "
     r"at dimension 2 of input \[1, 2, 3\]"),
    (lambda: pad(_x(1, 2, 3), (4, 2), mode="circular"), RuntimeError,
     "Padding value causes wrapping around more than once."),
    (lambda: pad(_x(2), (1, 1), mode="replicate"), NotImplementedError,
     "Padding size 2 is not supported for 1D input tensor."),
    (lambda: pad(_x(1, 2), (1, 1), mode="replicate", value=2.0), RuntimeError,
     "Padding mode \"replicate\" doesn't take in value argument"),
    (lambda: pad(_x(1, 2), (1, 1), mode="wrap"), NotImplementedError,
     "Unrecognised padding mode wrap"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


def test_errors_match_torch():
    torch = pytest.importorskip("torch")
    import torch.nn.functional as F
    pairs = [
        (lambda L, P: L.ones(2, 6).unflatten(1, (4, 2))),
        (lambda L, P: L.ones(2, 3).movedim((0, 1), (0,))),
        (lambda L, P: L.broadcast_tensors(L.ones(4), L.ones(2, 3))),
        (lambda L, P: L.broadcast_shapes((2, 3), (3,), (4, 1))),
        (lambda L, P: L.ones(5).narrow(0, 2, -1)),
        (lambda L, P: P(L.ones(1, 2, 3), (1, 1, 3, 3), mode="reflect")),
    ]
    for f in pairs:
        with pytest.raises(Exception) as et:
            f(torch, F.pad)
        with pytest.raises(type(et.value)) as ew:
            f(wgrad, pad)
        assert str(ew.value) == str(et.value)


@settings(max_examples=2)
@given(data=st.data())
def test_cat_mixed_dtypes(data):
    shape = data.draw(shapes(min_dims=1, max_dims=2))
    a = wgrad.tensor(data.draw(values(F64, shape)), requires_grad=True)
    b = wgrad.tensor(data.draw(values(C128, shape)), requires_grad=True)
    check_op(lambda a, b: wgrad.cat([a, b], -1), (a, b),
             lambda a, b: jnp.concatenate([a.astype(b.dtype), b], -1), fast_mode=True)


def _zero_d_ops(x):
    """Every shape op that takes a 0-d tensor, stacked into one output."""
    parts = [x.reshape(1), x.view(1, 1).flatten(), x.unsqueeze(0), x.expand(2), x.t().reshape(1),
             x.permute(()).reshape(1), x.squeeze().reshape(1), x.squeeze(0).reshape(1),
             x.roll(1).reshape(1), x.repeat(2), x.tile((2,)), x.flip(0).reshape(1),
             x.clone().reshape(1), x.broadcast_to((2,)), wgrad.hstack([x, x]),
             wgrad.vstack([x]).reshape(1), wgrad.stack([x, x]), x.movedim(0, 0).reshape(1)]
    return wgrad.cat(parts)


@pytest.mark.parametrize("dtype", BOTH, ids=["f64", "c128"])
@settings(max_examples=1)
@given(data=st.data())
def test_zero_d(dtype, data):
    x = wgrad.tensor(data.draw(values(dtype, ())), requires_grad=True)
    check_op(_zero_d_ops, (x,), lambda x: jnp.concatenate([x.reshape(1)] * 3 + [
        jnp.broadcast_to(x, (2,))] + [x.reshape(1)] * 5 + [jnp.broadcast_to(x, (2,))] * 2 + [
        x.reshape(1)] * 2 + [jnp.broadcast_to(x, (2,))] * 2 + [x.reshape(1)] + [
        jnp.broadcast_to(x, (2,))] + [x.reshape(1)]), fast_mode=True)


@pytest.mark.parametrize("dtype", BOTH, ids=["f64", "c128"])
@settings(max_examples=2)
@given(data=st.data())
def test_drawn_shapes(dtype, data):
    """A chain of shape ops on hypothesis-drawn shapes, 1-d to 3-d, sides 1 to 3."""
    shape = data.draw(shapes(min_dims=1, max_dims=3))
    x = wgrad.tensor(data.draw(values(dtype, shape)), requires_grad=True)

    def f(x):
        y = x.reshape(-1).flip(0).roll(1).unsqueeze(0).expand(2, -1).mT
        return wgrad.cat([y.t(), y.t().flip(1)], 0).repeat(1, 2).narrow(1, 1, x.numel())

    def jf(x):
        y = jnp.broadcast_to(jnp.roll(jnp.flip(x.reshape(-1), 0), 1)[None], (2, x.size)).T
        return jnp.tile(jnp.concatenate([y.T, jnp.flip(y.T, 1)], 0), (1, 2))[:, 1:1 + x.size]
    check_op(f, (x,), jf, fast_mode=True)


def test_broadcast_tensors_returns_a_tensor_of_the_shape_itself():
    """As torch's expand_outplace: identity (and no ExpandBackward0) for a tensor already
    of the broadcast shape, an expanded view for the others."""
    torch = pytest.importorskip("torch")

    def run(T):
        a, b = T.ones(3, requires_grad=True), T.ones(2, 1)
        x, y = T.broadcast_tensors(a, a * 2)
        u, v = T.broadcast_tensors(a, b)
        return (x is a, type(y.grad_fn).__name__, type(u.grad_fn).__name__, tuple(v.shape))
    assert run(wgrad) == run(torch)
