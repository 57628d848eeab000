"""Reduction op table: gradcheck, gradgradcheck and the JAX identity on float64 and
complex128, with hypothesis-drawn shapes (0-d included), dims (ints, negative, tuples)
and keepdim; explicit tests of ties, zeros in prod/cumprod, dtype rules and errors."""
import math

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgrad
from wgrad.autograd import grad as agrad
from wgrad.testing import check_op, dtype_cases, shapes, to_np, values, well_separated

F64, C128 = np.float64, np.complex128
BOTH = (F64, C128)
INF = math.inf


def _dims(ndim, multi=True):
    """None, an int (negative too) or a tuple of distinct dims for a tensor of ``ndim``."""
    n = max(ndim, 1)
    one = st.integers(-n, n - 1)
    if not multi:
        return one
    tup = st.lists(st.integers(0, n - 1), unique=True, max_size=n).flatmap(
        lambda ds: st.tuples(*[st.sampled_from([d, d - n]) for d in ds]))
    return st.one_of(st.none(), one, tup)


def _axis(dim, ndim):
    """The JAX ``axis`` for a torch ``dim``."""
    if ndim == 0 or dim is None or dim == ():
        return None
    if isinstance(dim, int):
        return dim % ndim
    return tuple(d % ndim for d in dim)


def _lse(x, axis, keepdims):
    return jnp.log(jnp.sum(jnp.exp(x), axis=axis, keepdims=keepdims))


def _kw(f):
    return lambda x, a, k: f(x, axis=a, keepdims=k)


def _vn(o):
    return (lambda x, d, k: wgrad.vector_norm(x, o, d, k),
            lambda x, a, k: jnp.linalg.vector_norm(x, ord=o, axis=a, keepdims=k))


# CPU time goes to jit compiles, one per (op, shape): a few small shapes, few examples
SMALL = dict(max_dims=2, max_side=2)
few = settings(max_examples=min(settings.default.max_examples, 2))


# (name, wgrad fn(x, dim, keepdim), jax fn(x, axis, keepdims), dtypes, value options);
# a row ("name", "ord", ords, ...) is vector_norm with ``ord`` drawn from ``ords``
# value options: "distinct" ("distinct_abs") keeps values (|values|) 0.1 apart, away
# from ties;
# "nonzero" keeps them away from 0; "n2" draws at least two elements per dim
MULTI = [
    ("sum", wgrad.sum, _kw(jnp.sum), BOTH, ()),
    ("mean", wgrad.mean, _kw(jnp.mean), BOTH, ()),
    ("amax", wgrad.amax, _kw(jnp.max), (F64,), ("distinct",)),
    ("amin", wgrad.amin, _kw(jnp.min), (F64,), ("distinct",)),
    ("var", lambda x, d, k: wgrad.var(x, d, keepdim=k),
     lambda x, a, k: jnp.var(x, axis=a, ddof=1, keepdims=k), BOTH, ("n2",)),
    ("std", lambda x, d, k: wgrad.std(x, d, keepdim=k),
     lambda x, a, k: jnp.std(x, axis=a, ddof=1, keepdims=k), BOTH, ("n2", "distinct")),
    ("logsumexp", lambda x, d, k: wgrad.logsumexp(x, () if d is None else d, k), _lse, BOTH,
     ()),
    ("vector_norm", "ord", (2, 1, 3, 0.5, 1.5, 0), BOTH, ("nonzero",)),
    ("vector_norm_inf", "ord", (INF, -INF), BOTH, ("distinct_abs",)),
    ("norm_fro", lambda x, d, k: wgrad.norm(x, dim=d, keepdim=k),
     lambda x, a, k: jnp.linalg.vector_norm(x, axis=a, keepdims=k), (C128,), ("nonzero",)),
]


def _draw_input(data, dtype, opts):
    shape = data.draw(shapes(min_dims=1 if "n2" in opts else 0, max_dims=2, max_side=2,
                             min_side=2 if "n2" in opts else 1))
    if "distinct" in opts:
        x = data.draw(values(dtype, shape).filter(well_separated))
    elif "distinct_abs" in opts:  # and away from 0
        lo, avoid = (0.3, None) if dtype == C128 else (-2, [0.0])
        x = data.draw(values(dtype, shape, lo, 2, avoid=avoid).filter(
            lambda a: well_separated(a, key=np.abs)))
    else:
        x = data.draw(values(dtype, shape, avoid=[0.0] if "nonzero" in opts else None))
    return wgrad.tensor(x, requires_grad=True)


@pytest.mark.parametrize("name,wfn,jfn,dtypes,opts,dtype", **dtype_cases(MULTI, 3))
@few
@given(data=st.data())
def test_reduction(name, wfn, jfn, dtypes, opts, dtype, data):
    if wfn == "ord":
        wfn, jfn = _vn(data.draw(st.sampled_from(jfn), label="ord"))
    x = _draw_input(data, dtype, opts)
    dim = data.draw(_dims(x.ndim), label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    a = _axis(dim, x.ndim)
    check_op(lambda x: wfn(x, dim, keepdim), (x,), lambda x: jfn(x, a, keepdim))


def _cum_jax(f):
    return lambda x, a, k: f(x, axis=a) if x.ndim else x


def _maxmin(f, x=None, d=None, k=False):
    """max/min without dim when ``d`` is None, else the values of max(dim)/min(dim)."""
    if x is None:
        return lambda x, a, k: f(x) if a is None else f(x, axis=a, keepdims=k)
    return f(x) if d is None else f(x, d, k).values


# single-dim ops: (name, wgrad fn(x, dim, keepdim), jax fn(x, axis, keepdims), dtypes,
# value options); "nd" excludes 0-d inputs, "all" also draws dim=None
SINGLE = [
    ("prod", wgrad.prod, lambda x, a, k: jnp.prod(x, axis=a, keepdims=k and a is not None),
     BOTH, ("all",)),
    ("max", lambda x, d, k: _maxmin(wgrad.max, x, d, k), _maxmin(jnp.max), (F64,),
     ("distinct", "all")),
    ("min", lambda x, d, k: _maxmin(wgrad.min, x, d, k), _maxmin(jnp.min), (F64,),
     ("distinct", "all")),
    ("cumsum", lambda x, d, k: wgrad.cumsum(x, d), _cum_jax(jnp.cumsum), BOTH, ()),
    ("cumprod", lambda x, d, k: wgrad.cumprod(x, d), _cum_jax(jnp.cumprod), BOTH, ()),
    ("diff", lambda x, d, k: wgrad.diff(x, 1 + k, d),
     lambda x, a, k: jnp.diff(x, 1 + k, axis=a), BOTH, ("nd",)),
    ("trapezoid", lambda x, d, k: wgrad.trapezoid(x, dx=0.5, dim=d),
     lambda x, a, k: jnp.trapezoid(x, dx=0.5, axis=a), BOTH, ("nd",)),
]


@pytest.mark.parametrize("name,wfn,jfn,dtypes,opts,dtype", **dtype_cases(SINGLE, 3))
@few
@given(data=st.data())
def test_single_dim(name, wfn, jfn, dtypes, opts, dtype, data):
    shape = data.draw(shapes(min_dims=1 if "nd" in opts else 0, **SMALL))
    arr = values(dtype, shape)
    x = wgrad.tensor(data.draw(arr.filter(well_separated) if "distinct" in opts else arr),
                     requires_grad=True)
    dims = _dims(x.ndim, multi=False)
    dim = data.draw(st.one_of(st.none(), dims) if "all" in opts else dims, label="dim")
    keepdim = data.draw(st.booleans(), label="keepdim")
    check_op(lambda x: wfn(x, dim, keepdim), (x,), lambda x: jfn(x, _axis(dim, x.ndim),
                                                                  keepdim))


# -- ties and selections --------------------------------------------------------------

def test_amax_ties_share_gradient():
    x = wgrad.tensor([[1.0, 3.0, 3.0], [2.0, 0.0, 2.0]], requires_grad=True)
    wgrad.amax(x, 1).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.5, 0.5], [0.5, 0.0, 0.5]]
    y = wgrad.tensor([1.0, 1.0, 1.0, 0.0], requires_grad=True)
    wgrad.amin(y[:3]).backward()
    assert np.allclose(to_np(y.grad), [1 / 3, 1 / 3, 1 / 3, 0.0])


def test_max_all_ties_evenly_distributed():
    x = wgrad.tensor([4.0, 1.0, 4.0, 4.0, -1.0], requires_grad=True)
    (wgrad.max(x) * 3).backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0, 1.0, 0.0]
    x.grad = None
    x.min().backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0, 0.0, 1.0]


def test_max_dim_gradient_only_to_returned_index():
    x = wgrad.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 0.0]], requires_grad=True)
    out = wgrad.max(x, 1)
    assert out.indices.tolist() == [1, 0]  # first maximal index, as torch on CPU
    assert out.values.grad_fn.name() == "MaxBackward0"
    assert not out.indices.requires_grad
    out.values.sum().backward()
    assert x.grad.tolist() == [[0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]
    v, i = x.min(dim=0, keepdim=True)
    assert tuple(v.shape) == (1, 3) and i.tolist() == [[0, 1, 1]]
    g, = agrad(v, x, wgrad.ones(1, 3, dtype=x.dtype))
    assert g.tolist() == [[1.0, 0.0, 0.0], [0.0, 1.0, 1.0]]


def test_max_with_tensor_is_maximum():
    a, b = wgrad.tensor([1.0, 5.0]), wgrad.tensor([3.0, 2.0])
    assert wgrad.max(a, b).tolist() == [3.0, 5.0] and wgrad.min(a, b).tolist() == [1.0, 2.0]


def test_norm_inf_ties_share_gradient():
    x = wgrad.tensor([-2.0, 2.0, 1.0], requires_grad=True)
    wgrad.vector_norm(x, INF).backward()
    assert x.grad.tolist() == [-0.5, 0.5, 0.0]


def test_norm_subgradients_at_zero():
    x = wgrad.tensor([[0.0, 0.0], [3.0, -4.0]], dtype=wgrad.float64, requires_grad=True)
    for o, row1 in ((2, [0.6, -0.8]), (1, [1.0, -1.0]), (3, None), (0.5, None)):
        g, = agrad(wgrad.vector_norm(x, o, 1).sum(), x)
        assert to_np(g)[0].tolist() == [0.0, 0.0]
        if row1 is not None:
            assert np.allclose(to_np(g)[1], row1)
    z = wgrad.tensor([0j, 3 + 4j], requires_grad=True)
    g, = agrad(wgrad.vector_norm(z), z)
    assert np.allclose(to_np(g), [0, 0.6 + 0.8j])
    x0 = wgrad.tensor([0.0, 2.0], requires_grad=True)
    g, = agrad(wgrad.vector_norm(x0, 0.5), x0)
    assert to_np(g)[0] == 0.0 and np.isfinite(to_np(g)).all()


def test_std_of_constant_has_zero_gradient():
    x = wgrad.tensor([2.0, 2.0, 2.0], requires_grad=True)
    wgrad.std(x).backward()
    assert x.grad.tolist() == [0.0, 0.0, 0.0]


# -- prod and cumprod with zeros -------------------------------------------------------

def _hessian(f, x):
    g, = agrad(f(x), x, create_graph=True)
    rows = []
    for i in range(x.numel()):
        h, = agrad(g[i], x, retain_graph=True, allow_unused=True)
        rows.append(to_np(h) if h is not None else np.zeros(x.numel()))
    return np.stack(rows)


def test_prod_one_zero():
    x = wgrad.tensor([2.0, 0.0, 3.0], dtype=wgrad.float64, requires_grad=True)
    g, = agrad(wgrad.prod(x), x)
    assert g.tolist() == [0.0, 6.0, 0.0]
    # d2 prod / dxi dxj = product of the entries other than i and j
    assert np.array_equal(_hessian(wgrad.prod, x), [[0, 3, 0], [3, 0, 2], [0, 2, 0]])


def test_prod_two_zeros():
    x = wgrad.tensor([0.0, 2.0, 0.0], dtype=wgrad.float64, requires_grad=True)
    g, = agrad(wgrad.prod(x), x)
    assert g.tolist() == [0.0, 0.0, 0.0]
    assert np.array_equal(_hessian(wgrad.prod, x), [[0, 0, 2], [0, 0, 0], [2, 0, 0]])


def test_prod_and_cumprod_with_zeros_gradcheck():
    # one zero in row 0, two in row 1: first and second derivatives stay exact
    x = wgrad.tensor([[0.0, 1.5, -2.0], [0.0, 0.0, 3.0]], dtype=wgrad.float64,
                     requires_grad=True)
    check_op(lambda x: wgrad.prod(x, 1), (x,))
    check_op(lambda x: wgrad.cumprod(x, 1), (x,))
    z = wgrad.tensor([[0j, 1 + 1j, 2 - 0.5j, 0j]], dtype=wgrad.complex128, requires_grad=True)
    check_op(lambda z: wgrad.cumprod(z, -1), (z,))


def test_cumprod_one_zero_hand_derived():
    x = wgrad.tensor([4.0, 0.0, 6.0], dtype=wgrad.float64, requires_grad=True)
    # y = (x0, x0 x1, x0 x1 x2): d(sum y)/dx = (1 + x1 + x1 x2, x0 + x0 x2, x0 x1)
    g, = agrad(wgrad.cumprod(x, 0).sum(), x)
    assert g.tolist() == [1.0, 28.0, 0.0]


def test_prod_zeros_against_torch():
    torch = pytest.importorskip("torch")
    # rows with one zero, two zeros, none; then the same with complex entries
    a = np.array([[0.0, 2.0, 3.0], [0.0, 0.0, 5.0], [1.0, 2.0, 3.0]])
    c = a + 1j * np.array([[0.0, 1, 2], [0, 0, -1], [1, 1, 1]])
    cases = [(arr, f) for arr in (a, c) for f in ("prod", "cumprod")]
    for arr, f in cases:
        x, tx = wgrad.tensor(arr, requires_grad=True), torch.tensor(arr, requires_grad=True)
        out, tout = getattr(wgrad, f)(x, 1), getattr(torch, f)(tx, 1)
        go = np.linspace(0.5, 2.0, out.numel()).reshape(tuple(out.shape)) * (
            1 - 0.5j if arr is c else 1)
        g, = agrad(out, x, wgrad.tensor(go))
        tg, = torch.autograd.grad(tout, tx, torch.tensor(go))
        np.testing.assert_allclose(to_np(out), tout.detach().numpy())
        np.testing.assert_allclose(to_np(g), tg.numpy())


# -- composites with extra arguments ----------------------------------------------------
# (their double backward is that of the primitives they are built from, checked above)

def test_diff_prepend_append():
    x = wgrad.tensor(np.array([[1.0, 2j], [0.5, -1.0]]), requires_grad=True)
    p = wgrad.tensor(np.array([[3.0 - 1j, 0.0]]), requires_grad=True)
    q = wgrad.tensor(np.array([[1j, 2.0]]), requires_grad=True)
    check_op(lambda x, p, q: wgrad.diff(x, 2, 0, prepend=p, append=q), (x, p, q),
             lambda x, p, q: jnp.diff(x, 2, axis=0, prepend=p, append=q), gradgrad=False)


def test_trapezoid_with_x():
    a = np.array([[1.0, 2j], [0.5, -1.0]])
    y = wgrad.tensor(a, requires_grad=True)
    x1 = wgrad.tensor([0.5, 2.0], dtype=wgrad.float64, requires_grad=True)
    check_op(lambda y, x: wgrad.trapezoid(y, x, dim=-2), (y, x1),
             lambda y, x: jnp.trapezoid(y, x, axis=-2), gradgrad=False)
    xf = np.array([[0.0, 1.0], [2.0, 4.0]])
    np.testing.assert_allclose(to_np(wgrad.trapezoid(y, wgrad.tensor(xf), dim=1)),
                               np.trapezoid(a, xf, axis=1))
    np.testing.assert_allclose(to_np(wgrad.trapezoid(y, dx=0.5)), np.trapezoid(a, dx=0.5))


def test_var_mean_std_mean_and_unbiased():
    a = np.array([[1.0, 2.0], [0.5, -1.0]]) + 1j * np.array([[0.0, 1], [3, 1]])
    x = wgrad.tensor(a, requires_grad=True)
    v, m = wgrad.var_mean(x, 1)
    s, m2 = wgrad.std_mean(x, 1, keepdim=True)
    assert v.dtype is wgrad.float64 and m.dtype is wgrad.complex128
    np.testing.assert_allclose(to_np(v), np.var(a, 1, ddof=1))
    np.testing.assert_allclose(to_np(s), np.std(a, 1, ddof=1, keepdims=True))
    np.testing.assert_allclose(to_np(m), a.mean(1))
    np.testing.assert_allclose(to_np(wgrad.var(x, False)), np.var(a))
    np.testing.assert_allclose(to_np(wgrad.var(x, 0, False)), np.var(a, 0))
    np.testing.assert_allclose(to_np(wgrad.std(x, (0, 1), correction=0.5)),
                               np.sqrt(np.sum(np.abs(a - a.mean()) ** 2) / 3.5))
    check_op(lambda x: wgrad.std_mean(x, -1, correction=0), (x,),
             lambda x: (jnp.std(x, -1), jnp.mean(x, -1)), gradgrad=False)


def test_norm_variants():
    a = np.array([[3.0, -4.0], [1.0, 2.0]])
    x = wgrad.tensor(a)
    np.testing.assert_allclose(to_np(wgrad.norm(x)), np.linalg.norm(a))
    np.testing.assert_allclose(to_np(wgrad.norm(x, None, 1)), np.linalg.norm(a, axis=1))
    np.testing.assert_allclose(to_np(wgrad.norm(x, 3, 0, True)),
                               np.sum(np.abs(a) ** 3, 0, keepdims=True) ** (1 / 3))
    assert wgrad.norm(x, INF).item() == 4.0 and wgrad.norm(x, -INF).item() == 1.0
    assert x.norm(p=1).item() == 10.0
    assert wgrad.vector_norm(x, 0).item() == 4.0
    assert wgrad.vector_norm(wgrad.tensor([3 + 4j])).dtype is wgrad.float32
    assert wgrad.vector_norm(x, dtype=wgrad.float64).dtype is wgrad.float64


# -- dtype rules, shapes, non-differentiable reductions -----------------------------------

def test_dtype_rules():
    i = wgrad.tensor([[1, 2, 3], [4, 5, 6]])
    for f in (wgrad.sum, wgrad.prod, lambda t: wgrad.cumsum(t, 1),
              lambda t: wgrad.cumprod(t, 0)):
        assert f(i).dtype is wgrad.int64
    assert wgrad.prod(i).item() == 720 and wgrad.cumsum(i, 1).tolist() == [[1, 3, 6],
                                                                          [4, 9, 15]]
    assert wgrad.mean(i, dtype=wgrad.float64).item() == 3.5
    assert wgrad.cumsum(i, 0, dtype=wgrad.float64).dtype is wgrad.float64
    assert wgrad.logsumexp(i, 1).dtype is wgrad.float32
    c = wgrad.tensor([1 + 1j, 2 - 1j], dtype=wgrad.complex128)
    assert wgrad.var(c).dtype is wgrad.float64 and wgrad.std(c).dtype is wgrad.float64
    assert wgrad.norm(c).dtype is wgrad.float64


def test_shapes_keepdim_negative_and_0d():
    x = wgrad.zeros(2, 3, 4)
    assert tuple(wgrad.sum(x, (-1, 0)).shape) == (3,)
    assert tuple(wgrad.mean(x, (-1, 0), keepdim=True).shape) == (1, 3, 1)
    assert tuple(wgrad.amax(x, -2, True).shape) == (2, 1, 4)
    assert tuple(wgrad.prod(x, 1, True).shape) == (2, 1, 4)
    assert tuple(wgrad.sum(x, ()).shape) == ()
    s = wgrad.tensor(2.5, requires_grad=True)
    for f in (lambda t: wgrad.sum(t, 0), lambda t: wgrad.mean(t, -1, True), wgrad.prod,
              lambda t: wgrad.cumsum(t, 0), lambda t: wgrad.max(t, 0)[0], wgrad.amax):
        out = f(s)
        assert tuple(out.shape) == () and out.item() == 2.5
        g, = agrad(out, s)
        assert g.item() == 1.0


def test_argmax_argmin_count_all_any():
    a = np.array([[1.0, 5.0, -2.0], [7.0, 0.0, 3.0]])
    x = wgrad.tensor(a, requires_grad=True)
    for f, nf in ((wgrad.argmax, np.argmax), (wgrad.argmin, np.argmin)):
        assert f(x).item() == nf(a) and not f(x).requires_grad
        assert f(x, 1).tolist() == nf(a, 1).tolist()
        assert f(x, -2, keepdim=True).tolist() == [nf(a, 0).tolist()]
        assert tuple(f(x, keepdim=True).shape) == (1, 1)
    assert x.argmax().dtype is wgrad.int64
    assert wgrad.count_nonzero(x).item() == 5
    assert wgrad.count_nonzero(x, 0).tolist() == [2, 1, 2]
    assert wgrad.count_nonzero(x).dtype is wgrad.int64
    assert wgrad.all(x).item() is False and wgrad.any(x).item() is True
    assert wgrad.all(x, 0).tolist() == [True, False, True]
    assert wgrad.any(wgrad.zeros(2, 2), 1, keepdim=True).tolist() == [[False], [False]]
    assert wgrad.all(wgrad.zeros(0)).item() is True
    assert x.all(1).dtype is wgrad.bool and not x.any().requires_grad


def test_max_namedtuple():
    r = wgrad.max(wgrad.tensor([[1.0, 4.0]]), 1)
    assert r.values.tolist() == [4.0] and r.indices.tolist() == [1]
    v, i = r
    assert r[0] is v and type(r).__name__ == "max"


# -- errors ---------------------------------------------------------------------------

def test_errors():
    i = wgrad.tensor([[1, 2], [3, 4]])
    x = wgrad.zeros(2, 2)
    c = wgrad.zeros(2, dtype=wgrad.complex128)
    with pytest.raises(RuntimeError, match=r"mean\(\): could not infer output dtype. Input "
                                           r"dtype must be either a floating point or "
                                           r"complex dtype. Got: Long"):
        wgrad.mean(i)
    with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in range "
                                         r"of \[-2, 1\], but got 2\)"):
        wgrad.sum(x, 2)
    with pytest.raises(IndexError, match=r"Dimension out of range"):
        wgrad.amax(x, (0, -3))
    with pytest.raises(RuntimeError, match="dim 0 appears multiple times in the list of dims"):
        wgrad.sum(x, (0, -2))
    with pytest.raises(RuntimeError, match="std and var only support floating point and "
                                           "complex dtypes"):
        wgrad.var(i)
    with pytest.raises(RuntimeError, match="linalg.vector_norm: Expected a floating point or "
                                           "complex tensor as input. Got Long"):
        wgrad.vector_norm(i)
    with pytest.raises(RuntimeError, match=r"max\(\): does not support complex input"):
        wgrad.max(c, 0)
    with pytest.raises(RuntimeError, match=r"argmax\(\): does not support complex input"):
        wgrad.argmax(c)
    with pytest.raises(NotImplementedError, match="\"max_all\" not implemented for "
                                                  "'ComplexDouble'"):
        wgrad.max(c)
    with pytest.raises(IndexError, match=r"amax\(\): Expected reduction dim 0 to have "
                                         r"non-zero size."):
        wgrad.amax(wgrad.zeros(0, 3), 0)
    with pytest.raises(RuntimeError, match=r"max\(\): Expected reduction dim to be specified "
                                           r"for input.numel\(\) == 0."):
        wgrad.max(wgrad.zeros(0))
    with pytest.raises(RuntimeError, match="diff expects input to be at least "
                                           "one-dimensional"):
        wgrad.diff(wgrad.tensor(1.0))
    with pytest.raises(RuntimeError, match="diff expects prepend or append to be the same "
                                           "dimension as input"):
        wgrad.diff(x, prepend=wgrad.tensor(1.0))
    with pytest.raises(RuntimeError, match="order must be non-negative but got -1"):
        wgrad.diff(x, n=-1)
    with pytest.raises(RuntimeError, match="trapezoid: There must be one `x` value for each "
                                           "sample point"):
        wgrad.trapezoid(x, wgrad.zeros(3))
    with pytest.raises(RuntimeError, match="linalg.vector_norm cannot compute the -1 norm on "
                                           "an empty tensor"):
        wgrad.vector_norm(wgrad.zeros(0), -1)
    with pytest.raises(RuntimeError, match="linalg.matrix_norm: Order abc not supported."):
        wgrad.norm(x, "abc")


# -- complex gradients against PyTorch ---------------------------------------------------

def test_complex_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    a = rng.standard_normal((2, 2)) + 1j * rng.standard_normal((2, 2))
    cases = [
        (lambda m, x: m.sum(x, 1), None),
        (lambda m, x: m.mean(x, (0, 1)), None),
        (lambda m, x: m.prod(x, 0), None),
        (lambda m, x: m.cumsum(x, 1), None),
        (lambda m, x: m.cumprod(x, 0), None),
        (lambda m, x: m.var(x, 1), None),
        (lambda m, x: m.std(x, 0, correction=0), None),
        (lambda m, x: m.logsumexp(x, 1), None),
        (lambda m, x: m.norm(x, dim=1), None),
        (lambda m, x: m.diff(x, dim=0), None),
        (lambda m, x: m.trapezoid(x, dim=1), None),
        (lambda m, x: (m.linalg.vector_norm if m is torch else m.vector_norm)(x, 1.5, 0),
         None),
        (lambda m, x: (m.linalg.vector_norm if m is torch else m.vector_norm)(x, INF, 1),
         None),
    ]
    for f, _ in cases:
        x = wgrad.tensor(a, requires_grad=True)
        tx = torch.tensor(a, requires_grad=True)
        out, tout = f(wgrad, x), f(torch, tx)
        go = rng.standard_normal(tuple(out.shape))
        if tout.is_complex():
            go = go + 1j * rng.standard_normal(tuple(out.shape))
        g, = agrad(out, x, wgrad.tensor(go))
        tg, = torch.autograd.grad(tout, tx, torch.tensor(go))
        np.testing.assert_allclose(to_np(out), tout.detach().numpy(), rtol=1e-10)
        np.testing.assert_allclose(to_np(g), tg.numpy(), rtol=1e-8, atol=1e-12)


@pytest.mark.parametrize("name", ["max", "min"])
def test_values_indices_repr_matches_torch(name):
    torch = pytest.importorskip("torch")
    rows = [[1.0, 5.0], [7.0, 2.0]]
    got = repr(getattr(wgrad, name)(wgrad.tensor(rows), 1))
    assert got == repr(getattr(torch, name)(torch.tensor(rows), 1)).replace("torch.", "wgrad.")


@pytest.mark.parametrize("name", ["var_mean", "std_mean"])
def test_var_mean_is_one_node_with_two_gradients(name):
    torch = pytest.importorskip("torch")
    res = []
    for lib in (wgrad, torch):
        a = lib.tensor(np.arange(6.0).reshape(2, 3) ** 2, requires_grad=True)
        v, m = getattr(lib, name)(a, dim=0)
        seen = []
        m.grad_fn.register_prehook(lambda go: seen.append(len(go)) or (go[0] * 2, go[1] * 3))
        (v + m).sum().backward()
        res.append((type(v.grad_fn).__name__, m.grad_fn is v.grad_fn, seen, a.grad.numpy()))
    assert res[0][:3] == res[1][:3]
    np.testing.assert_allclose(res[0][3], res[1][3], rtol=1e-12)
    z = wgrad.tensor(np.array([[1 + 2j, 0.5], [-1j, 2.0]]), requires_grad=True)
    assert wgrad.autograd.gradcheck(lambda z: getattr(wgrad, name)(z, 1), (z,))
