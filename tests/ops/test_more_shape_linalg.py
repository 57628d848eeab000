"""meshgrid, tensor_split/hsplit/vsplit/dsplit, column_stack/row_stack/dstack, atleast_3d,
rot90, block_diag, cartesian_prod, diagflat, ravel, tile, torch.cross, addmm/addmv/addbmm/
baddbmm, cdist and dist against torch 2.13: values, gradients (float64 and complex128),
result dtypes and error messages; gradcheck on a few."""
import warnings

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

F64, C128 = np.float64, np.complex128


def _arr(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal(shape)
    if dtype == C128:
        a = a + 1j * rng.standard_normal(shape)
    return a


def _flat(out):
    return list(out) if isinstance(out, (tuple, list)) else [out]


# (name, fn(T, *inputs) written once for wgrad and torch, input shapes, complex128 too).
# Each row compiles its own kernels, so complex128 is run where it says something (the
# products' conjugates, cross, dist), not for every view op; variants whose gradient is
# a view of the same kind are compared forward only, in the dtype table below.
CASES = [
    ("meshgrid_xy", lambda T, a, b, c: T.meshgrid([a, b, c], indexing="xy"),
     [(3,), (2,), ()], False),
    ("tensor_split_idx", lambda T, a: a.tensor_split([-1, 1, 9]), [(5, 2)], False),
    ("rot90_k", lambda T, a: T.rot90(a, -1, [2, 0]), [(2, 3, 4)], False),
    ("block_diag", lambda T, a, b, c: T.block_diag(a, b, c), [(), (3,), (2, 2)], False),
    ("cartesian_prod", lambda T, a, b, c: T.cartesian_prod(a, b, c), [(3,), (2,), (2,)], False),
    ("diagflat", lambda T, a: a.diagflat(), [(2, 2)], False),
    ("cross_dim", lambda T, a, b: T.cross(a, b, dim=0), [(3, 2), (3, 1)], True),
    ("addmm_scaled", lambda T, a, b, c: a.addmm(b, c, beta=0.5, alpha=-2), [(2, 1), (2, 3),
                                                                           (3, 4)], True),
    ("addmm_complex_coef", lambda T, a, b, c: T.addmm(a, b, c, beta=1j, alpha=2 - 1j),
     [(2, 2), (2, 3), (3, 2)], "only"),
    ("addmm_beta0", lambda T, a, b, c: T.addmm(a, b, c, beta=0), [(2, 2), (2, 3), (3, 2)], False),
    ("addmv", lambda T, a, b, c: T.addmv(a, b, c, beta=2, alpha=0.5), [(2,), (2, 3), (3,)], True),
    ("baddbmm", lambda T, a, b, c: T.baddbmm(a, b, c, alpha=3), [(2, 1), (4, 2, 3), (4, 3, 5)],
     True),
    ("addbmm", lambda T, a, b, c: T.addbmm(a, b, c, beta=-1), [(5,), (4, 2, 3), (4, 3, 5)],
     True),
    ("cdist", lambda T, a, b: T.cdist(a, b), [(4, 3), (5, 3)], False),
    ("cdist_batch_p1", lambda T, a, b: T.cdist(a, b, p=1), [(2, 1, 4, 3), (3, 5, 3)], False),
    ("cdist_p3", lambda T, a, b: T.cdist(a, b, 3.0, "donot_use_mm_for_euclid_dist"),
     [(4, 2), (3, 2)], False),
    ("cdist_pinf", lambda T, a, b: T.cdist(a, b, p=float("inf")), [(2, 4, 3), (1, 5, 3)],
     False),
    ("dist", lambda T, a, b: T.dist(a, b), [(2, 3), (3,)], False),
    ("dist_p3", lambda T, a, b: a.dist(b, p=3.5), [(4,), (4,)], True),
]

PARAMS = [pytest.param(name, fn, shapes, dt, id=f"{name}-{np.dtype(dt).name}")
          for name, fn, shapes, cplx in CASES
          for dt in ((C128,) if cplx == "only" else (F64, C128) if cplx else (F64,))]


@pytest.mark.parametrize("name, fn, shapes, dtype", PARAMS)
def test_values_and_grads_match_torch(name, fn, shapes, dtype):
    arrays = [_arr(s, dtype, i) for i, s in enumerate(shapes)]
    outs, grads, cotangents = [], [], None
    for T in (wgrad, torch):
        xs = [T.tensor(a, requires_grad=True) for a in arrays]
        out = _flat(fn(T, *xs))
        # the gradient of a real loss whose gradient at each output is a fixed random array
        # (one backward, no loss kernels to compile)
        if cotangents is None:
            cotangents = [_arr(tuple(o.shape), o.numpy(force=True).dtype.type, 99 + k)
                          for k, o in enumerate(out)]
        T.autograd.backward(out, [T.tensor(c) for c in cotangents])
        outs.append([o.detach().numpy() for o in out])
        grads.append([None if x.grad is None else x.grad.numpy() for x in xs])
    (w_out, t_out), (w_grad, t_grad) = outs, grads
    assert len(w_out) == len(t_out)
    for w, t in zip(w_out, t_out):
        assert w.shape == t.shape and w.dtype == t.dtype
        np.testing.assert_allclose(w, t, rtol=1e-10, atol=1e-12)
    for w, t in zip(w_grad, t_grad):
        assert (w is None) == (t is None)
        if t is not None:
            assert w.dtype == t.dtype
            np.testing.assert_allclose(w, t, rtol=1e-9, atol=1e-12)


GRADCHECK = [
    ("addmm", lambda a, b, c: wgrad.addmm(a, b, c, beta=0.5, alpha=2),
     [(2, 1), (2, 3), (3, 2)], True),
    ("cdist", lambda a, b: wgrad.cdist(a, b), [(3, 2), (2, 2)], False),
    ("cross", lambda a, b: wgrad.cross(a, b, 0), [(3, 2), (3, 2)], True),
    ("block_diag_rot90", lambda a, b: wgrad.block_diag(a, b).rot90(), [(2,), (2, 2)], False),
]


@pytest.mark.parametrize("fn, shapes, dtype", [
    pytest.param(fn, shapes, dt, id=f"{name}-{np.dtype(dt).name}")
    for name, fn, shapes, cplx in GRADCHECK for dt in ((F64, C128) if cplx else (F64,))])
def test_gradcheck(fn, shapes, dtype):
    xs = [wgrad.tensor(_arr(s, dtype, i + 7), requires_grad=True)
          for i, s in enumerate(shapes)]
    assert wgrad.autograd.gradcheck(fn, xs)


def _both(fn):
    res = []
    for T in (wgrad, torch):
        r = fn(T)
        res.append([(tuple(o.shape), str(o.dtype).split(".")[-1], o.tolist())
                    for o in _flat(r)])
    assert res[0] == res[1]


@pytest.mark.parametrize("fn", [
    lambda T: T.meshgrid(T.arange(3.0), T.tensor(2.0), indexing="ij"),
    lambda T: T.arange(6.0).reshape(2, 3).ravel(),
    lambda T: T.tensor_split(T.arange(14.0).reshape(2, 7), 3, 1),
    lambda T: T.arange(8.0).reshape(2, 1, 4).dsplit(2),
    lambda T: T.column_stack((T.arange(3.0), T.ones(3, 2), T.zeros(3, 1))),
    lambda T: T.dstack([T.ones(2, 3), T.arange(12.0).reshape(2, 3, 2)]),
    lambda T: T.atleast_3d(T.tensor(1.0), T.ones(2), T.ones(2, 3), T.ones(1, 2, 3, 2)),
    lambda T: T.atleast_3d([T.ones(2)]),
    lambda T: T.rot90(T.arange(24.0).reshape(2, 3, 4), 1, [1, 2]),
    lambda T: T.cdist(T.arange(90.0).reshape(30, 3) % 7, T.arange(81.0).reshape(27, 3) % 5,
                      compute_mode="use_mm_for_euclid_dist").round(decimals=6),
    lambda T: T.arange(12.0).reshape(3, 4).hsplit([1, 2]),
    lambda T: T.arange(12.0).reshape(3, 4).vsplit(3),
    lambda T: T.row_stack([T.arange(3.0), T.ones(2, 3)]),
    lambda T: T.rot90(T.arange(12.0).reshape(2, 3, 2), 6, (1, -1)),
    lambda T: T.arange(6.0).reshape(2, 3).tile(2),
    lambda T: T.eye(3).cross(T.arange(9.0).reshape(3, 3), -1),
    lambda T: T.addmm(T.arange(2.0), T.arange(6.0).reshape(2, 3), T.ones(3, 2)),
    lambda T: T.arange(6.0).dist(T.ones(6), 1),
    lambda T: T.hsplit(T.arange(5.0), [2]),
    lambda T: T.column_stack([T.tensor(1.0), T.tensor(2.0)]),
    lambda T: T.dstack([T.tensor(1.0), T.tensor(2.0)]),
    lambda T: T.rot90(T.arange(6.0).reshape(2, 3), 4),
    lambda T: T.block_diag(T.ones(0, 2), T.ones(2, 0)),
    lambda T: T.cartesian_prod(T.arange(3.0)),
    lambda T: T.diagflat(T.arange(3.0), -2),
    lambda T: T.arange(2.0).tile(2, 1, 3),
    lambda T: T.arange(3.0).repeat([2, 1]),
    lambda T: T.tensor(1.0).addmv(T.ones(2, 3), T.arange(3.0)),
    lambda T: T.ones(2, 5).addbmm(T.ones(0, 2, 3), T.ones(0, 3, 5)),
    lambda T: T.cdist(T.tensor([[0.0, 1.0, 2.0]]), T.tensor([[0.0, 3.0, 2.0], [1.0, 1, 1]]), p=0),
    lambda T: T.dist(T.tensor([1.0, -4.0]), T.tensor([2.0, 1.0]), float("inf")),
    lambda T: T.addmm(T.ones(2, 2, dtype=T.int64), T.ones(2, 3, dtype=T.int64),
                      T.ones(3, 2, dtype=T.int64), beta=0.5, alpha=2.5),
    lambda T: T.addmv(T.ones(2, dtype=T.int32), T.ones(2, 3, dtype=T.int32),
                      T.ones(3, dtype=T.int32), beta=3),
    lambda T: T.addbmm(T.ones(2, 2, dtype=T.int32), T.ones(3, 2, 2, dtype=T.int32),
                       T.ones(3, 2, 2, dtype=T.int32)),
    lambda T: T.addmm(T.ones(2, 2), T.ones(2, 3), T.ones(3, 2), beta=1 + 0j, alpha=2),
    lambda T: T.addmm(T.full((2, 2), float("nan")), T.ones(2, 3), T.ones(3, 2), beta=0),
    lambda T: T.baddbmm(T.full((2, 2), float("inf")), T.ones(1, 2, 3), T.ones(1, 3, 2), beta=0),
    lambda T: T.block_diag(T.tensor(2), T.ones(1, 2)),
    lambda T: T.block_diag(T.ones(1, dtype=T.float64), T.ones(2, 1, dtype=T.complex64)),
    lambda T: T.block_diag(),
    lambda T: T.column_stack([T.tensor(1), T.tensor(2.0, dtype=T.float64)]),
    lambda T: T.meshgrid(T.arange(3), T.arange(2), indexing="xy"),
    lambda T: T.cartesian_prod(T.tensor([True, False]), T.tensor([False])),
    lambda T: T.dist(T.ones(3), T.zeros(3, dtype=T.int64)),
    lambda T: T.dist(T.ones(3, dtype=T.complex64), T.zeros(3)),
    lambda T: T.cdist(T.ones(0, 3), T.ones(2, 3)),
    lambda T: T.cdist(T.ones(2, 0), T.ones(3, 0), p=float("inf")),
    lambda T: T.rot90(T.arange(6).reshape(2, 3), 1, [1, 0]),
    lambda T: T.arange(7).tensor_split(T.tensor(3)),
    lambda T: T.diagflat(T.arange(4).reshape(2, 2), 1),
    lambda T: T.cross(T.tensor([[1, 0, 0]]), T.tensor([[0, 1, 0]]), dim=1),
])
def test_dtypes_and_special_values_match_torch(fn):
    _both(fn)


def test_beta_zero_gives_input_a_zero_grad():
    x = wgrad.full((2, 2), float("nan"), requires_grad=True)
    m = wgrad.ones(2, 3, requires_grad=True)
    wgrad.addmm(x, m, m.t(), beta=0).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0], [0.0, 0.0]]
    assert m.grad.tolist() == [[4.0] * 3] * 2


def test_cdist_inf_gives_each_tied_coordinate_the_whole_gradient():
    grads = []
    for T in (wgrad, torch):
        x = T.tensor([[1.0, -1.0], [2.0, 0.5]], requires_grad=True)
        T.cdist(x, T.zeros(1, 2), p=float("inf")).sum().backward()
        grads.append(x.grad.tolist())
    assert grads[0] == grads[1] == [[1.0, -1.0], [1.0, 0.0]]


def test_views_and_warnings():
    x = wgrad.arange(6.0)
    pieces = x.tensor_split(2)
    assert pieces[1]._base is x
    with pytest.warns(UserWarning, match="it will be required to pass the indexing argument"):
        g = wgrad.meshgrid(wgrad.ones(2), wgrad.ones(3))
    assert [tuple(t.shape) for t in g] == [(2, 3), (2, 3)]
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg"):
        out = wgrad.cross(wgrad.eye(3), wgrad.ones(3, 3))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = torch.cross(torch.eye(3), torch.ones(3, 3))
    assert out.tolist() == ref.tolist()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wgrad.cross(wgrad.eye(3), wgrad.ones(3, 3), dim=1)
        wgrad.meshgrid(wgrad.ones(2), indexing="ij")


ERRORS = [
    lambda T: T.meshgrid(T.ones(2), T.ones(2, dtype=T.float64), indexing="ij"),
    lambda T: T.meshgrid(T.ones(2), indexing="foo"),
    lambda T: T.meshgrid([], indexing="ij"),
    lambda T: T.tensor_split(T.ones(4), 0),
    lambda T: T.tensor_split(T.tensor(1.0), 2),
    lambda T: T.tensor_split(T.ones(4), T.tensor([1.0])),
    lambda T: T.tensor_split(T.ones(4), T.ones(1, 1, dtype=T.int64)),
    lambda T: T.tensor_split(T.ones(4), 2, dim=1),
    lambda T: T.hsplit(T.ones(4, 6), 4),
    lambda T: T.hsplit(T.tensor(1.0), 1),
    lambda T: T.vsplit(T.ones(3), 1),
    lambda T: T.dsplit(T.ones(2, 2, 4), 3),
    lambda T: T.column_stack([]),
    lambda T: T.column_stack(T.ones(2)),
    lambda T: T.row_stack([]),
    lambda T: T.dstack([T.ones(2, 3), T.ones(3, 3)]),
    lambda T: T.rot90(T.ones(2, 3, 4), 1, [0]),
    lambda T: T.rot90(T.ones(2, 3, 4), 1, [0, -3]),
    lambda T: T.rot90(T.ones(2, 3, 4), 1, [0, 3]),
    lambda T: T.rot90(T.ones(3)),
    lambda T: T.block_diag(T.ones(2, 2, 2)),
    lambda T: T.cartesian_prod(T.ones(3), T.ones(2, 2)),
    lambda T: T.tile(T.ones(3), 2.0),
    lambda T: T.ones(3).repeat(2, 2.0),
    lambda T: T.ones(3).tile(),
    lambda T: T.cross(T.ones(2, 4), T.ones(2, 4)),
    lambda T: T.cross(T.ones(3, 4), T.ones(1, 4)),
    lambda T: T.cross(T.ones(3), T.ones(3, dtype=T.float64), dim=0),
    lambda T: T.cross(T.ones(3, 4), T.ones(3, 4), dim=2),
    lambda T: T.addmm(T.ones(2, 2), T.ones(2, 3), T.ones(2, 3)),
    lambda T: T.addmm(T.ones(2, 2), T.ones(3), T.ones(3, 2)),
    lambda T: T.addmm(T.ones(2, 2), T.ones(2, 3), T.ones(3, 2, dtype=T.float64)),
    lambda T: T.addmm(T.ones(2, 2, dtype=T.float64), T.ones(2, 3), T.ones(3, 2)),
    lambda T: T.addmm(T.ones(3), T.ones(2, 3), T.ones(3, 2)),
    lambda T: T.addmm(T.ones(2, 2), T.ones(2, 2), T.ones(2, 2), beta=1j),
    lambda T: T.addmm(T.ones(2, 2, dtype=T.bool), T.ones(2, 2, dtype=T.bool),
                      T.ones(2, 2, dtype=T.bool)),
    lambda T: T.addmv(T.ones(3), T.ones(2, 3), T.ones(3)),
    lambda T: T.addmv(T.ones(2, 1), T.ones(2, 3), T.ones(3)),
    lambda T: T.addmv(T.ones(2), T.ones(2, 3), T.ones(3, dtype=T.float64)),
    lambda T: T.baddbmm(T.ones(4, 2, 5), T.ones(4, 2, 3), T.ones(3, 3, 5)),
    lambda T: T.baddbmm(T.ones(3, 2, 5), T.ones(4, 2, 3), T.ones(4, 3, 5)),
    lambda T: T.baddbmm(T.ones(2, 5), T.ones(4, 2, 3, 1), T.ones(4, 3, 5)),
    lambda T: T.baddbmm(T.ones(2, 5, dtype=T.float64), T.ones(4, 2, 3), T.ones(4, 3, 5)),
    lambda T: T.baddbmm(T.ones(2, 5), T.ones(4, 2, 3), T.ones(4, 3, 5, dtype=T.float64)),
    lambda T: T.addbmm(T.ones(2, 5), T.ones(4, 2, 3), T.ones(3, 3, 5)),
    lambda T: T.addbmm(T.ones(2, 5), T.ones(4, 2, 3), T.ones(4, 4, 5)),
    lambda T: T.addbmm(T.ones(2, 5), T.ones(4, 2, 3), T.ones(4, 3, 5, dtype=T.float64)),
    lambda T: T.cdist(T.ones(4, 3, dtype=T.complex128), T.ones(5, 3, dtype=T.complex128)),
    lambda T: T.cdist(T.ones(4, 3, dtype=T.int64), T.ones(5, 3, dtype=T.int64)),
    lambda T: T.cdist(T.ones(3), T.ones(5, 3)),
    lambda T: T.cdist(T.ones(4, 3), T.ones(5, 2)),
    lambda T: T.cdist(T.ones(4, 3), T.ones(5, 3, dtype=T.float64)),
    lambda T: T.cdist(T.ones(4, 3), T.ones(5, 3), p=-1),
    lambda T: T.cdist(T.ones(4, 3), T.ones(5, 3), compute_mode="foo"),
    lambda T: T.cdist(T.ones(2, 4, 3), T.ones(3, 5, 3)),
    lambda T: T.dist(T.ones(3, dtype=T.int64), T.ones(3, dtype=T.int64)),
    lambda T: T.dist(T.ones(4), T.ones(5)),
    lambda T: T.dist(T.ones(4), T.ones(4), p=1j),
    lambda T: T.dist(T.ones(0), T.ones(0), float("inf")),
]


@pytest.mark.filterwarnings("ignore:Using torch.cross without specifying the dim")
@pytest.mark.parametrize("fn", ERRORS)
def test_errors_match_torch(fn):
    with pytest.raises(Exception) as te:
        fn(torch)
    with pytest.raises(type(te.value)) as we:
        fn(wgrad)
    assert type(we.value) is type(te.value)
    assert str(we.value) == str(te.value)


def test_meshgrid_rejects_a_2d_tensor():
    with pytest.raises(RuntimeError, match="torch.meshgrid: Expected 0D or 1D tensor in the "
                                           "tensor list but got:"):
        wgrad.meshgrid(wgrad.ones(3), wgrad.ones(2, 2), indexing="ij")


def test_linalg_cross_keeps_its_default_dim():
    a, b = np.eye(3), np.arange(9.0).reshape(3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = wgrad.linalg.cross(wgrad.tensor(a), wgrad.tensor(b))
    assert out.tolist() == torch.linalg.cross(torch.tensor(a), torch.tensor(b)).tolist()
    assert out.tolist() != wgrad.cross(wgrad.tensor(a), wgrad.tensor(b), dim=0).tolist()
