"""Indexing op table: gradcheck, gradgradcheck and the JAX identity on float64 and
complex128 with hypothesis-drawn small shapes; torch's error messages; a few gradients
compared with PyTorch itself when it is installed."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgrad
from wgrad.testing import check_op, dtype_cases, shapes, values, well_separated

F64, C128 = np.float64, np.complex128
BOTH = (F64, C128)
# Each check_op compiles a few kernels per shape, so a table row draws one example per dtype
# (hypothesis' first, smallest one: sides of 2, at least 2-d where the op allows, values away
# from 0) and gradchecks in fast mode; other shapes, 0-d included, are drawn by
# test_drawn_shapes below.
FEW = settings(max_examples=1)


def _ix(shape, n, seed=0):
    """A fixed pseudo-random index array of ``shape`` with entries in [0, n)."""
    return np.random.default_rng(seed).integers(0, n, size=shape)


def _mask(shape):
    return (np.arange(int(np.prod(shape))).reshape(shape) % 3) != 1


def _full(index, dim):
    """jnp index tuple for gather/scatter: ``index`` along ``dim``, positions elsewhere."""
    return tuple(jnp.asarray(index) if d == dim else
                 jax.lax.broadcasted_iota(np.int64, index.shape, d) for d in range(index.ndim))


def _gix(shape, dim, seed=0):
    """A gather index for an input of ``shape``: each size at most the input's."""
    s = tuple(max(1, k - (i % 2)) if i != dim else k + 1 for i, k in enumerate(shape))
    return _ix(s, shape[dim], seed)


T = wgrad.tensor

# (name, wgrad fn, jax fn, min_dims, dtypes)
UNARY = [
    ("basic", lambda x: x[..., ::2], lambda x: x[..., ::2], 1, BOTH),
    ("int_none_ellipsis", lambda x: x[None, -1, ...], lambda x: x[None, -1, ...], 1, BOTH),
    ("int_list", lambda x: x[[0, -1, 0]], lambda x: x[np.array([0, -1, 0])], 1, BOTH),
    ("int_tensor", lambda x: x[T(_ix((2, 2), x.shape[0]))],
     lambda x: x[_ix((2, 2), x.shape[0])], 1, BOTH),
    ("mixed", lambda x: x[1:, [0, 0]], lambda x: x[1:, np.array([0, 0])], 2, BOTH),
    ("two_adv", lambda x: x[T([0, -1]), :, T([1, 0])],
     lambda x: x[np.array([0, -1]), :, np.array([1, 0])], 3, BOTH),
    ("bool_mask", lambda x: x[T(_mask(x.shape))], lambda x: x[_mask(x.shape)], 1, BOTH),
    ("bool_mask_dim1", lambda x: x[:, T(_mask(x.shape[1:2]))],
     lambda x: x[:, _mask(x.shape[1:2])], 2, BOTH),
    ("index_select", lambda x: x.index_select(-1, T([x.shape[-1] - 1, 0, 0])),
     lambda x: x[..., np.array([x.shape[-1] - 1, 0, 0])], 1, BOTH),
    ("gather", lambda x: x.gather(0, T(_gix(x.shape, 0))),
     lambda x: x[_full(_gix(x.shape, 0), 0)], 1, BOTH),
    ("gather_last", lambda x: x.gather(-1, T(_gix(x.shape, x.ndim - 1))),
     lambda x: x[_full(_gix(x.shape, x.ndim - 1), x.ndim - 1)], 1, BOTH),
    ("take_along_dim", lambda x: wgrad.take_along_dim(x, T(_ix((1,) * (x.ndim - 1) + (3,),
                                                               x.shape[-1])), -1),
     lambda x: jnp.take_along_axis(x, _ix((1,) * (x.ndim - 1) + (3,), x.shape[-1]), -1),
     1, BOTH),
    ("take", lambda x: x.take(T(_ix((2, 3), x.numel()))),
     lambda x: x.reshape(-1)[_ix((2, 3), x.size)], 0, BOTH),
    ("masked_select", lambda x: x.masked_select(T(_mask(x.shape[-1:]))),
     lambda x: x[..., _mask(x.shape[-1:])].reshape(-1), 1, BOTH),
    ("unfold", lambda x: x.unfold(-1, 2, 1),
     lambda x: jnp.stack([x[..., i:i + 2] for i in range(x.shape[-1] - 1)], -2), 1, BOTH),
    ("unfold_step", lambda x: x.unfold(0, 1, 2),
     lambda x: jnp.moveaxis(x[::2, None], 1, -1), 1, BOTH),
    ("tril", lambda x: x.tril(), jnp.tril, 2, BOTH),
    ("triu_1", lambda x: x.triu(1), lambda x: jnp.triu(x, 1), 2, BOTH),
    ("tril_m1", lambda x: wgrad.tril(x, -1), lambda x: jnp.tril(x, -1), 2, BOTH),
    ("diagonal", lambda x: x.diagonal(), lambda x: jnp.diagonal(x), 2, BOTH),
    ("diagonal_off", lambda x: x.diagonal(-1, -1, 0), lambda x: jnp.diagonal(x, -1, -1, 0),
     2, BOTH),
    ("diag_embed", lambda x: x.diag_embed(1), lambda x: jax.vmap(
        lambda v: jnp.diag(v, 1))(x.reshape(-1, x.shape[-1])).reshape(
            x.shape[:-1] + (x.shape[-1] + 1,) * 2), 1, BOTH),
    ("diag_1d", lambda x: x.reshape(-1).diag(-1), lambda x: jnp.diag(x.reshape(-1), -1),
     0, BOTH),
    ("diag_2d", lambda x: x.reshape(x.shape[0], -1).diag(1),
     lambda x: jnp.diag(x.reshape(x.shape[0], -1), 1), 1, BOTH),
    ("sort", lambda x: x.sort(-1).values, lambda x: jnp.sort(x, -1), 1, (F64,)),
    ("sort_desc", lambda x: x.sort(0, descending=True)[0], lambda x: -jnp.sort(-x, 0), 1,
     (F64,)),
    ("topk", lambda x: x.topk(1).values, lambda x: jax.lax.top_k(x, 1)[0], 1, (F64,)),
    ("topk_smallest", lambda x: x.topk(x.shape[0], 0, largest=False).values,
     lambda x: jnp.sort(x, 0), 1, (F64,)),
    ("kthvalue", lambda x: x.kthvalue(1, 0).values, lambda x: jnp.sort(x, 0)[0], 1, (F64,)),
    ("kthvalue_keepdim", lambda x: x.kthvalue(x.shape[-1], keepdim=True).values,
     lambda x: jnp.sort(x, -1)[..., -1:], 1, (F64,)),
    ("median", lambda x: x.median(), lambda x: jnp.sort(x.reshape(-1))[(x.size - 1) // 2],
     0, (F64,)),
    ("median_dim", lambda x: x.median(-1).values,
     lambda x: jnp.sort(x, -1)[..., (x.shape[-1] - 1) // 2], 1, (F64,)),
]


@pytest.mark.parametrize("name,wfn,jfn,lo,dtypes,dtype", **dtype_cases(UNARY, 4))
@FEW
@given(data=st.data())
def test_unary(name, wfn, jfn, lo, dtypes, dtype, data):
    shape = data.draw(shapes(min_dims=max(lo, 2), max_dims=3, min_side=2))
    v = values(dtype, shape, 0.3, 2)
    if dtype is F64 and name.startswith(("sort", "topk", "kth", "median")):
        # order statistics are smooth only away from ties
        v = v.filter(lambda a: well_separated(a, 0.05))
    x = wgrad.tensor(data.draw(v), requires_grad=True)
    check_op(wfn, (x,), jfn, fast_mode=True)


def _src(x, shape):
    return np.asarray(np.arange(1, 1 + int(np.prod(shape))).reshape(shape) / 4,
                      x.dtype if hasattr(x, "dtype") and not isinstance(x, wgrad.Tensor)
                      else np.dtype(x.dtype.name))


# (name, wgrad fn(x, s), jax fn(x, s), shape of s from x's shape, min_dims, dtypes)
BINARY = [
    ("index_put", lambda x, s: x.index_put((T([0, -1]),), s),
     lambda x, s: x.at[np.array([0, -1])].set(s), lambda sh: (2,) + sh[1:], 1, BOTH),
    ("index_put_acc", lambda x, s: x.index_put((T([0, 0]), T([-1, 0])), s, accumulate=True),
     lambda x, s: x.at[np.array([0, 0]), np.array([-1, 0])].add(s), lambda sh: (), 2, BOTH),
    ("index_put_mask", lambda x, s: x.index_put((T(_mask(x.shape)),), s),
     lambda x, s: x.at[_mask(x.shape)].set(s), lambda sh: (), 0, BOTH),
    ("index_add", lambda x, s: x.index_add(0, T([0, 0]), s, alpha=2),
     lambda x, s: x.at[np.array([0, 0])].add(2 * s), lambda sh: (2,) + sh[1:], 1, BOTH),
    ("index_copy", lambda x, s: x.index_copy(-1, T([x.shape[-1] - 1]), s),
     lambda x, s: x.at[..., np.array([x.shape[-1] - 1])].set(s),
     lambda sh: sh[:-1] + (1,), 1, BOTH),
    ("scatter", lambda x, s: x.scatter(0, T(_ix((1,) + x.shape[1:], x.shape[0])), s),
     lambda x, s: x.at[_full(_ix((1,) + x.shape[1:], x.shape[0]), 0)].set(s[:1]),
     lambda sh: (2,) + sh[1:], 1, BOTH),
    ("scatter_add", lambda x, s: x.scatter_add(-1, T(_gix(x.shape, x.ndim - 1)), s),
     lambda x, s: x.at[_full(_gix(x.shape, x.ndim - 1), x.ndim - 1)].add(s),
     lambda sh: _gix(sh, len(sh) - 1).shape, 1, BOTH),
    ("scatter_sum_noself", lambda x, s: x.scatter_reduce(
        0, T(_gix(x.shape, 0)), s, "sum", include_self=False),
     lambda x, s: x.at[_full(_gix(x.shape, 0), 0)].set(0).at[
         _full(_gix(x.shape, 0), 0)].add(s), lambda sh: _gix(sh, 0).shape, 1, BOTH),
    ("scatter_mean", lambda x, s: x.scatter_reduce(0, T(_gix(x.shape, 0)), s, "mean"),
     lambda x, s: _jmean(x, s, _gix(x.shape, 0), True), lambda sh: _gix(sh, 0).shape, 1,
     BOTH),
    ("scatter_mean_noself", lambda x, s: x.scatter_reduce(
        0, T(_gix(x.shape, 0)), s, "mean", include_self=False),
     lambda x, s: _jmean(x, s, _gix(x.shape, 0), False), lambda sh: _gix(sh, 0).shape, 1,
     BOTH),
    ("scatter_amax", lambda x, s: x.scatter_reduce(0, T(_gix(x.shape, 0)), s, "amax"),
     lambda x, s: x.at[_full(_gix(x.shape, 0), 0)].max(s), lambda sh: _gix(sh, 0).shape, 1,
     (F64,)),
    ("scatter_amin_noself", lambda x, s: x.scatter_reduce(
        0, T(_gix(x.shape, 0)), s, "amin", include_self=False),
     lambda x, s: x.at[_full(_gix(x.shape, 0), 0)].set(jnp.inf).at[
         _full(_gix(x.shape, 0), 0)].min(s), lambda sh: _gix(sh, 0).shape, 1, (F64,)),
    ("put", lambda x, s: x.put(T([0, -1]), s), lambda x, s: x.reshape(-1).at[
        np.array([0, -1])].set(s).reshape(x.shape), lambda sh: (2,), 0, BOTH),
    ("put_acc", lambda x, s: x.put(T([0, 0]), s, accumulate=True), lambda x, s: x.reshape(
        -1).at[np.array([0, 0])].add(s).reshape(x.shape), lambda sh: (2,), 0, BOTH),
    ("masked_scatter", lambda x, s: x.masked_scatter(T(_mask(x.shape)), s),
     lambda x, s: x.at[_mask(x.shape)].set(s.reshape(-1)[:int(_mask(x.shape).sum())]),
     lambda sh: (int(np.prod(sh)) + 1,), 0, BOTH),
    ("kron", wgrad.kron, jnp.kron, lambda sh: sh[::-1], 0, BOTH),
]


def _jmean(x, s, index, include_self):
    ix = _full(index, 0)
    base = x if include_self else x.at[ix].set(0)
    count = jnp.zeros(x.shape).at[ix].add(1.0) + (1.0 if include_self else 0.0)
    return base.at[ix].add(s) / jnp.where(count == 0, 1, count)


@pytest.mark.parametrize("name,wfn,jfn,sshape,lo,dtypes,dtype", **dtype_cases(BINARY, 5))
@FEW
@given(data=st.data())
def test_binary(name, wfn, jfn, sshape, lo, dtypes, dtype, data):
    shape = data.draw(shapes(min_dims=max(lo, 2), max_dims=3, min_side=2))
    xv = data.draw(values(dtype, shape, 0.3, 2))
    sv = data.draw(values(dtype, sshape(shape), -2, -0.3))
    if "amax" in name or "amin" in name:  # distinct values: no ties between self and src
        allv = np.concatenate([np.ravel(xv), np.ravel(sv)])
        perm = np.random.default_rng(0).permutation(allv.size) * 0.37 - 1.5
        xv, sv = perm[:np.size(xv)].reshape(np.shape(xv)), perm[np.size(xv):].reshape(
            np.shape(sv))
    x = wgrad.tensor(xv, requires_grad=True)
    s = wgrad.tensor(sv, requires_grad=True)
    check_op(wfn, (x, s), jfn, fast_mode=True)


def test_scatter_value_and_mixed_types():
    x = wgrad.tensor(np.arange(6.0).reshape(2, 3) + 1j, requires_grad=True)
    ix = np.array([[1, 0, 1]])
    check_op(lambda x: x.scatter(0, T(ix), 2.5), (x,),
             lambda x: x.at[_full(ix, 0)].set(2.5))
    assert wgrad.zeros(3).scatter(0, T([2, 0]), T([1., 2.])).tolist() == [2.0, 0.0, 1.0]
    assert wgrad.zeros(2).scatter(0, T([1, 1]), T([1., 2.]), reduce="add").tolist() == [0, 3]


def test_scatter_reduce_ties_share_the_gradient():
    # torch's scatter_reduce_backward: equal maxima split the gradient evenly
    x = wgrad.tensor([2.0, 0.0], dtype=wgrad.float64, requires_grad=True)
    s = wgrad.tensor([2.0, 1.0, 2.0], dtype=wgrad.float64, requires_grad=True)
    out = x.scatter_reduce(0, T([0, 1, 0]), s, "amax")
    assert out.tolist() == [2.0, 1.0]
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1 / 3, 0.0])
    np.testing.assert_allclose(s.grad.numpy(), [1 / 3, 1.0, 1 / 3])


def test_median_ties_share_the_gradient_and_values():
    x = wgrad.tensor([1.0, 3.0, 1.0, 0.0], dtype=wgrad.float64, requires_grad=True)
    m = x.median()
    assert m.item() == 1.0
    m.backward()
    assert x.grad.tolist() == [0.5, 0.0, 0.5, 0.0]
    v, i = wgrad.tensor([[3.0, 1.0, 2.0, 5.0]]).median(1)
    assert v.tolist() == [2.0] and i.tolist() == [2] and not i.requires_grad


def test_sort_topk_kthvalue_values_and_indices():
    x = wgrad.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]], requires_grad=True)
    v, i = x.sort(1, descending=True)
    assert v.tolist() == [[3, 2, 1], [5, 4, 0]] and i.tolist() == [[0, 2, 1], [1, 2, 0]]
    assert v.grad_fn.name() == "SortBackward0" and not i.requires_grad
    assert wgrad.tensor([1.0, 0.0, 1.0]).sort(stable=True).indices.tolist() == [1, 0, 2]
    assert wgrad.argsort(wgrad.tensor([2.0, 0.0, 1.0])).tolist() == [1, 2, 0]
    v, i = x.topk(2)
    assert v.tolist() == [[3, 2], [5, 4]] and i.tolist() == [[0, 2], [1, 2]]
    v, i = x.kthvalue(2, 0)
    assert v.tolist() == [3, 5, 4] and i.tolist() == [0, 1, 1]
    v, i = wgrad.tensor(3.0).sort()
    assert v.item() == 3.0 and i.item() == 0 and v.shape == () and i.shape == ()
    v, i = wgrad.tensor(3.0).kthvalue(1)
    assert v.item() == 3.0 and i.item() == 0 and v.shape == ()


def test_nonzero_masks_and_data_dependent_shapes():
    x = wgrad.tensor([[0.0, 1.5], [2.0, 0.0]])
    assert x.nonzero().tolist() == [[0, 1], [1, 0]]
    r, c = x.nonzero(as_tuple=True)
    assert r.tolist() == [0, 1] and c.tolist() == [1, 0]
    assert wgrad.tensor(1.0).nonzero().shape == (1, 0)
    assert [t.tolist() for t in wgrad.tensor(1.0).nonzero(as_tuple=True)] == [[0]]
    assert wgrad.masked_select(x, x > 0).tolist() == [1.5, 2.0]
    assert x[x > 0].tolist() == [1.5, 2.0]
    assert x[wgrad.tensor(True)].shape == (1, 2, 2)
    assert x[wgrad.tensor(False)].shape == (0, 2, 2)


def test_getitem_forward_matches_numpy():
    a = np.arange(24.0).reshape(2, 3, 4)
    x = wgrad.tensor(a)
    for key in [(0,), (-1, ..., 1), (slice(None), None, [2, 0]), ([1, 0], slice(1, 3), [3, 3]),
                (Ellipsis,), (None,), ([[0], [1]], [0, 2]), (slice(None, None, 2), 1)]:
        wk = tuple(wgrad.tensor(k) if isinstance(k, list) else k for k in key)
        np.testing.assert_array_equal(x[wk].numpy(), a[key])
        np.testing.assert_array_equal(x[key].numpy(), a[key])


def test_index_ops_values():
    x = wgrad.zeros(3)
    assert x.index_put((T([0, 0]),), T(1.0), accumulate=True).tolist() == [2, 0, 0]
    assert x.index_put((T([0, 0]),), T(1.0)).tolist() == [1, 0, 0]
    assert x.index_add(0, T([0, 0, 2]), T([1.0, 2.0, 3.0])).tolist() == [3, 0, 3]
    assert x.index_copy(0, T([2, 0]), T([1.0, 2.0])).tolist() == [2, 0, 1]
    assert wgrad.index_select(T([[1.0, 2.0], [3.0, 4.0]]), 1, T([1])).tolist() == [[2], [4]]
    assert wgrad.index_select(T([[1.0, 2.0]]), 0, T(0)).shape == (1, 2)
    assert T([0.0, 5.0]).scatter_reduce(0, T([0, 0, 1]), T([1.0, 3.0, 2.0]), "amax").tolist() \
        == [3, 5]
    assert T([1.0, 5.0]).scatter_reduce(0, T([0, 0]), T([1.0, 4.0]), "mean",
                                        include_self=False).tolist() == [2.5, 5]
    assert T([1.0, 5.0]).scatter_reduce(0, T([0, 0]), T([1.0, 4.0]), "mean").tolist() == [2, 5]
    assert wgrad.take(T([[1.0, 2.0], [3.0, 4.0]]), T([0, 3])).tolist() == [1, 4]
    assert T([1.0, 2.0]).put(T([1]), T([9.0])).tolist() == [1, 9]
    assert wgrad.arange(5.0).unfold(0, 2, 2).tolist() == [[0, 1], [2, 3]]
    assert wgrad.kron(T([1.0, 2.0]), T([1.0, 10.0])).tolist() == [1, 10, 2, 20]
    assert wgrad.diag(T([1.0, 2.0]), 1).tolist() == [[0, 1, 0], [0, 0, 2], [0, 0, 0]]
    assert wgrad.diag_embed(T([[1.0, 2.0]]), 0, 0, 2).shape == (2, 1, 2)


def _x(*s, dtype=None):
    return wgrad.ones(*s, dtype=dtype)


ERRORS = [
    (lambda: _x(3, 4)[5], IndexError, "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: _x(3, 4)[:, 7], IndexError, "index 7 is out of bounds for dimension 1 with size 4"),
    (lambda: _x(3, 4)[T([0, 5])], IndexError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: _x(3, 4)[:, T([-5])], IndexError,
     "index -5 is out of bounds for dimension 1 with size 4"),
    (lambda: _x(3, 4)[1, 2, 3], IndexError, "too many indices for tensor of dimension 2"),
    (lambda: _x(3, 4)[T([0.5])], IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    (lambda: _x(3, 4)[T([True, False])], IndexError, r"The shape of the mask \[2\] at index 0 "
     r"does not match the shape of the indexed tensor \[3, 4\]"),
    (lambda: _x(3, 4).index_select(0, T([0, 3])), IndexError, "index out of range in self"),
    (lambda: _x(3, 4).index_select(0, T([[1]])), IndexError,
     r"index_select\(\): Index is supposed to be a vector"),
    (lambda: _x(3, 4).gather(0, T([[0, 3]])), RuntimeError,
     "index 3 is out of bounds for dimension 0 with size 3"),
    (lambda: _x(3, 4).gather(0, T([0, 1])), RuntimeError,
     "Index tensor must have the same number of dimensions as input tensor"),
    (lambda: _x(3, 4).gather(1, T([[0, 1]] * 4)), RuntimeError,
     r"Size does not match at dimension 0 expected index \[4, 2\] to be no larger than self "
     r"\[3, 4\] apart from dimension 1"),
    (lambda: _x(3, 4).take(T([12])), IndexError,
     "out of range: tried to access index 12 on a tensor of 12 elements."),
    (lambda: _x(3, 4).scatter(0, T([[0, 5]]), _x(1, 2)), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    (lambda: _x(3, 4).scatter(0, T([[0, 1]]), _x(1, 1)), RuntimeError,
     r"Expected index \[1, 2\] to be no larger than self \[3, 4\] apart from dimension 0 and to "
     r"be no larger size than src \[1, 1\]"),
    (lambda: _x(3, 4).scatter_reduce(0, T([[0, 1]]), _x(1, 2), "foo"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got foo"),
    (lambda: _x(2, dtype=wgrad.complex128).scatter_reduce(
        0, T([0]), _x(1, dtype=wgrad.complex128), "amax"), NotImplementedError,
     "\"scatter_gather_tensor_cpu_reduce_amax\" not implemented for 'ComplexDouble'"),
    (lambda: _x(3, 4).index_add(0, T([0, 1]), _x(3, 4)), RuntimeError,
     r"index_add_\(\): Number of indices \(2\) should be equal to source.size\(dim\): \(3\), "
     "for dim: 0"),
    (lambda: _x(3, 4).index_copy(0, T([0, 1]), _x(3, 4)), IndexError,
     r"index_copy_\(\): Number of indices \(2\) should be equal to source.size\(dim\) \(3\)"),
    (lambda: _x(3, 4).index_put((T([0]),), _x(1, dtype=wgrad.float64)), RuntimeError,
     "Index put requires the source and destination dtypes match, got Float for the "
     "destination and Double for the source."),
    (lambda: _x(3, 4).index_put((T([0]), T([0]), T([0])), _x(1)), IndexError,
     r"too many indices for tensor of dimension 2 \(got 3\)"),
    (lambda: _x(3, 4).put(T([0, 1]), _x(3)), IndexError,
     r"put_\(\): Expected source and index to have the same number of elements, but got "
     r"source.numel\(\) = 3, index.numel\(\) = 2"),
    (lambda: _x(3, 4).masked_scatter(_x(3, 4) > 0, _x(2)), RuntimeError,
     "Number of elements of source < number of ones in mask"),
    (lambda: wgrad.take_along_dim(_x(3, 4), T([[[0, 1]]]), dim=1), RuntimeError,
     r"torch.take_along_dim\(\): input and indices should have the same number of dimensions, "
     "but got 2 dimensions for input, and 3 dimensions for indices"),
    (lambda: _x(3, 4).unfold(1, 5, 1), RuntimeError,
     "maximum size for tensor at dimension 1 is 4 but size is 5"),
    (lambda: _x(3, 4).unfold(1, 2, 0), RuntimeError, "step is 0 but must be > 0"),
    (lambda: _x(3, 4).topk(5), RuntimeError, "selected index k out of range"),
    (lambda: _x(3, 4).kthvalue(5), RuntimeError,
     r"kthvalue\(\): selected number k out of range for dimension 1"),
    (lambda: _x(2, dtype=wgrad.complex128).sort(), RuntimeError,
     "Sort does not support complex dtypes on CPU"),
    (lambda: wgrad.diag(_x(2, 2, 2)), RuntimeError, r"diag\(\): Supports 1D or 2D tensors. "
     "Got 3D"),
    (lambda: wgrad.tril(_x(2)), RuntimeError, "tril: input tensor must have at least 2 "
     "dimensions"),
    (lambda: wgrad.triu(_x(2)), RuntimeError, "triu: input tensor must have at least 2 "
     "dimensions"),
    (lambda: wgrad.diagonal(_x(3, 4), 0, 1, 1), RuntimeError,
     "diagonal dimensions cannot be identical 1, 1"),
]


@pytest.mark.parametrize("fn,exc,msg", ERRORS, ids=[str(i) for i in range(len(ERRORS))])
def test_errors(fn, exc, msg):
    with pytest.raises(exc, match=msg):
        fn()


def test_masked_select_is_not_traceable():
    x = wgrad.ones(3)

    @jax.jit
    def f(a):
        return wgrad.masked_select(x, wgrad.Tensor._make(a) > 0)._data
    with pytest.raises(RuntimeError, match="data-dependent output shape"):
        f(jnp.ones(3))


def test_gradients_match_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4))
    s = rng.standard_normal((2, 4)) + 1j * rng.standard_normal((2, 4))
    ix = np.array([[2, 0, 0, 1], [2, 2, 1, 0]])
    r = rng.standard_normal((3, 4))
    rs = rng.standard_normal((2, 4)) * 3
    cases = [
        ("gather", a, s, lambda L, x, y, i: x.gather(0, i) * y),
        ("scatter", a, s, lambda L, x, y, i: x.scatter(0, i, y)),
        ("scatter_add", a, s, lambda L, x, y, i: x.scatter_add(0, i, y)),
        ("index_add", a, s, lambda L, x, y, i: x.index_add(0, i[1, :2], y, alpha=2)),
        # torch differentiates scatter_reduce for real dtypes only
        ("mean_noself", r, rs, lambda L, x, y, i: x.scatter_reduce(0, i, y, "mean",
                                                                   include_self=False)),
        ("amax_ties", r.round(), rs.round(), lambda L, x, y, i: x.scatter_reduce(
            0, i, y, "amax")),
        ("amin_noself", r.round(), rs.round(), lambda L, x, y, i: x.scatter_reduce(
            0, i, y, "amin", include_self=False)),
        ("masked_scatter", a, s, lambda L, x, y, i: x.masked_scatter(L.tensor(_mask((3, 4))), y)),
    ]
    for name, xv, yv, f in cases:
        tx = torch.tensor(xv, requires_grad=True)
        ty = torch.tensor(yv, requires_grad=True)
        wx = wgrad.tensor(xv, requires_grad=True)
        wy = wgrad.tensor(yv, requires_grad=True)
        to = f(torch, tx, ty, torch.tensor(ix))
        wo = f(wgrad, wx, wy, wgrad.tensor(ix))
        np.testing.assert_allclose(wo.detach().numpy(), to.detach().numpy(), err_msg=name)
        g = rng.standard_normal(tuple(to.shape)) + (1j * rng.standard_normal(tuple(to.shape))
                                                    if to.is_complex() else 0)
        tg = torch.autograd.grad(to, (tx, ty), torch.tensor(g), allow_unused=True)
        wg = wgrad.autograd.grad(wo, (wx, wy), wgrad.tensor(g), allow_unused=True)
        for t, w in zip(tg, wg):
            if t is None:
                assert w is None or not np.any(w.numpy()), name
            else:
                np.testing.assert_allclose(w.numpy(), t.numpy(), atol=1e-12, err_msg=name)


@pytest.mark.parametrize("reduce", ["amax", "amin", "mean"])
def test_index_reduce_matches_torch(reduce):
    torch = pytest.importorskip("torch")
    src = np.array([[1.0, 4.0, 2.0], [3.0, 4.0, 0.5], [2.0, -1.0, 6.0]])
    res = []
    for lib in (wgrad, torch):
        x = lib.tensor(np.full((2, 3), 2.0), requires_grad=True)
        s = lib.tensor(src, requires_grad=True)
        out = lib.index_reduce(x, 0, lib.tensor([1, 0, 1]), s, reduce, include_self=True)
        (out * lib.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])).sum().backward()
        res.append([a.detach().numpy() for a in (out, x.grad, s.grad)])
    for w, t in zip(*res):
        np.testing.assert_allclose(w, t, rtol=1e-12)


@pytest.mark.parametrize("reduce", ["amax", "mean"])
def test_index_reduce_gradcheck(reduce):
    rng = np.random.default_rng(3)
    x = wgrad.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    s = wgrad.tensor(rng.standard_normal((3, 3)), requires_grad=True)  # distinct: no ties
    idx = wgrad.tensor([1, 0, 1])
    check_op(lambda x, s: wgrad.index_reduce(x, 0, idx, s, reduce, include_self=True), (x, s))


def test_nanmedian_gradcheck():
    x = wgrad.tensor([[1.0, np.nan, 3.0, 0.5], [2.0, -1.0, np.nan, np.nan]], dtype=wgrad.float64,
                     requires_grad=True)
    check_op(wgrad.nanmedian, (x,))  # the median of the 5 numbers, 1.0


def test_nanmedian_and_nan_extremes_match_torch():
    torch = pytest.importorskip("torch")
    rows = [[1.0, np.nan, 3.0, 0.0, 3.0], [np.nan, np.nan]]
    for row in rows:
        for name in ("nanmedian", "max"):
            res = []
            for lib in (wgrad, torch):
                x = lib.tensor(row, dtype=lib.float64, requires_grad=True)
                y = getattr(lib, name)(x)
                y.backward()
                res.append((y.item(), x.grad.numpy()))
            np.testing.assert_equal(res[0][0], res[1][0])
            np.testing.assert_allclose(res[0][1], res[1][1], rtol=1e-12)


# -- node names and views of x[...] against torch (NOTE [Node names per call]) ----------

_NAMED = [lambda L: (slice(1, None),), lambda L: (slice(None), 1), lambda L: (slice(1, None), 2),
          lambda L: (2, slice(1, None)), lambda L: (None,), lambda L: (Ellipsis,),
          lambda L: (slice(None),), lambda L: (slice(0, 100),), lambda L: (slice(-4, None),),
          lambda L: (slice(None, None, 2),), lambda L: (1, None), lambda L: (-1,),
          lambda L: (1, 2, 3), lambda L: (Ellipsis, slice(1, 3)), lambda L: (slice(None), None, 1),
          lambda L: (slice(None), slice(None)), lambda L: (0, Ellipsis, None),
          lambda L: (L.tensor([0, 2]),), lambda L: (1, L.tensor([0, 1])), lambda L: (True,),
          lambda L: (1, False), lambda L: (L.tensor(True),), lambda L: (Ellipsis, L.tensor(False))]


def test_indexing_node_names_and_views_match_torch():
    torch = pytest.importorskip("torch")
    a = np.arange(120.0).reshape(4, 5, 6)
    for make in _NAMED:
        got = []
        for lib in (wgrad, torch):
            x = lib.tensor(a, requires_grad=True).clone()
            y = x[make(lib)]
            got.append((type(y.grad_fn).__name__, y.grad_fn.name(), y._base is x,
                        tuple(y.shape)))
            with lib.no_grad():
                y.mul_(-1)  # a view writes through to x, a copy does not
            got.append(x.detach().numpy().tolist())
        assert got[:2] == got[2:], make(wgrad)


def test_select_is_one_select_node_that_compiles_once():
    torch = pytest.importorskip("torch")
    names = []
    for lib in (wgrad, torch):
        x = lib.tensor(np.arange(12.0).reshape(3, 4), requires_grad=True).clone()
        v = x.select(1, -1)
        names.append((type(v.grad_fn).__name__, v.grad_fn.next_functions[0][0].name(),
                      v.tolist()))
    assert names[0] == names[1]
    x = wgrad.arange(8.0)
    wgrad.ops.indexing._index._fwd_cache.clear()
    for i in range(8):
        assert x.select(0, i).item() == i
    [kernel] = wgrad.ops.indexing._index._fwd_cache.values()  # the index is an argument
    assert kernel._cache_size() == 1  # noqa: SLF001 - one XLA compile for 8 index values
