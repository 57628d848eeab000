"""unique/unique_consecutive/bincount/searchsorted/bucketize and tril/triu_indices against
torch 2.13: values, dtypes, shapes, tuple structure, error messages and the autograd
record of their (non-differentiable) outputs."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

NAN = float("nan")


def _flat(r):
    """``r`` as comparable plain data: tuple structure, dtype names, shapes, values."""
    if isinstance(r, tuple):
        return ("tuple", [_flat(x) for x in r])
    a = r.detach().numpy()
    return (str(r.dtype).split(".")[-1], tuple(r.shape), a)


def _same(got, want):
    if isinstance(want, tuple) and want[0] == "tuple":
        assert got[0] == "tuple" and len(got[1]) == len(want[1])
        for g, w in zip(got[1], want[1]):
            _same(g, w)
        return
    assert got[:2] == want[:2]
    np.testing.assert_allclose(got[2], want[2], rtol=1e-6, equal_nan=True)


def _u2(lib):
    return lib.tensor([[1, 2], [1, 2], [0, 3], [1, 2]])


CASES = {
    # unique
    "unique": lambda L: L.unique(L.tensor([3., 1., 2., 1.])),
    "unique_unsorted": lambda L: L.unique(L.tensor([3, 1, 5, 1, 3]), sorted=False),
    "unique_inverse": lambda L: L.unique(L.tensor([3, 1, 2, 1]), return_inverse=True),
    "unique_counts": lambda L: L.unique(L.tensor([True, False, True]), return_counts=True),
    "unique_both": lambda L: L.unique(L.tensor([5, 5, 1, 5, 2]), return_inverse=True,
                                      return_counts=True),
    "unique_empty": lambda L: L.unique(L.tensor([]), return_inverse=True, return_counts=True),
    "unique_0d": lambda L: L.unique(L.tensor(5.), return_inverse=True, return_counts=True),
    "unique_2d_flat": lambda L: L.unique(_u2(L), return_inverse=True),
    "unique_nan": lambda L: L.unique(L.tensor([NAN, 1., NAN]), return_inverse=True,
                                     return_counts=True),
    "unique_signed_zero": lambda L: L.unique(L.tensor([-0., 0., 0.])),
    "unique_dim0": lambda L: L.unique(_u2(L), dim=0, return_inverse=True, return_counts=True),
    "unique_dim1": lambda L: L.unique(_u2(L).T, dim=1, return_inverse=True,
                                      return_counts=True),
    "unique_dim_neg": lambda L: L.unique(L.tensor([[2., 1., 2.], [0., 4., 0.]]), dim=-1),
    "unique_dim_3d": lambda L: L.unique(L.tensor([[[1, 2]], [[0, 2]], [[1, 2]]]).permute(
        1, 0, 2), dim=1, return_inverse=True, return_counts=True),
    "unique_dim_empty": lambda L: L.unique(L.zeros(2, 0), dim=1, return_inverse=True,
                                           return_counts=True),
    "unique_method": lambda L: L.tensor([2, 2, 0]).unique(return_counts=True),
    # unique_consecutive
    "consecutive": lambda L: L.unique_consecutive(L.tensor([1, 1, 2, 2, 3, 1, 1, 2])),
    "consecutive_both": lambda L: L.unique_consecutive(
        L.tensor([[1., 1.], [2., 1.]]), return_inverse=True, return_counts=True),
    "consecutive_counts": lambda L: L.unique_consecutive(L.tensor([4, 4, 4]),
                                                         return_counts=True),
    "consecutive_dim0": lambda L: L.unique_consecutive(_u2(L), dim=0, return_inverse=True,
                                                       return_counts=True),
    "consecutive_dim1": lambda L: L.tensor([[1, 1, 2], [3, 3, 3]]).unique_consecutive(
        dim=1, return_inverse=True),
    "consecutive_empty": lambda L: L.unique_consecutive(L.tensor([]), return_inverse=True,
                                                        return_counts=True),
    "consecutive_0d": lambda L: L.unique_consecutive(L.tensor(3.), return_inverse=True,
                                                     return_counts=True),
    # bincount
    "bincount": lambda L: L.bincount(L.tensor([1, 1, 3])),
    "bincount_minlength": lambda L: L.bincount(L.tensor([1, 1, 3]), minlength=7),
    "bincount_minlength_small": lambda L: L.bincount(L.tensor([0, 5]), minlength=2),
    "bincount_empty": lambda L: L.bincount(L.tensor([], dtype=L.long)),
    "bincount_empty_min": lambda L: L.bincount(L.tensor([], dtype=L.long),
                                               L.tensor([]), minlength=3),
    "bincount_f32": lambda L: L.bincount(L.tensor([1, 1, 3]), L.tensor([.5, .25, 1.])),
    "bincount_f64": lambda L: L.bincount(L.tensor([2, 0]),
                                         L.tensor([.5, 1.], dtype=L.float64)),
    "bincount_int_w": lambda L: L.bincount(L.tensor([1, 1, 3]), L.tensor([1, 2, 3])),
    "bincount_bool_w": lambda L: L.bincount(L.tensor([0, 2]), L.tensor([True, False])),
    "bincount_f16_w": lambda L: L.bincount(L.tensor([0, 2]),
                                           L.tensor([1., 2.], dtype=L.float16)),
    "bincount_uint8": lambda L: L.bincount(L.tensor([1, 1, 3], dtype=L.uint8), minlength=5),
    "bincount_method": lambda L: L.tensor([2, 2], dtype=L.int32).bincount(),
    # searchsorted
    "ss": lambda L: L.searchsorted(L.tensor([1, 3, 3, 5, 7]), L.tensor([3, 6, 0, 9])),
    "ss_right": lambda L: L.searchsorted(L.tensor([1, 3, 3, 5, 7]), L.tensor([3, 6, 0, 9]),
                                         right=True),
    "ss_side": lambda L: L.searchsorted(L.tensor([1., 3., 3.]), L.tensor([[3.], [1.]]),
                                        side="right", right=True),
    "ss_side_left": lambda L: L.searchsorted(L.tensor([1., 3., 3.]), L.tensor([3.]),
                                             side="left"),
    "ss_scalar": lambda L: L.searchsorted(L.tensor([1, 3, 3, 5]), 3),
    "ss_float_scalar": lambda L: L.searchsorted(L.tensor([1, 3, 3, 5]), 3.5, right=True),
    "ss_int32": lambda L: L.searchsorted(L.tensor([1, 3, 5]), L.tensor([[3, 6], [0, 9]]),
                                         out_int32=True),
    "ss_nd": lambda L: L.searchsorted(L.tensor([[1, 3, 5], [2, 4, 6]]),
                                      L.tensor([[3, 6], [0, 4]]), right=True),
    "ss_sorter": lambda L: L.searchsorted(L.tensor([5, 1, 3, 7]), L.tensor([3, 6, 8, 0]),
                                          sorter=L.tensor([1, 2, 0, 3])),
    "ss_sorter_ties": lambda L: L.searchsorted(L.tensor([5, 3, 1, 3]), L.tensor([3, 5]),
                                               sorter=L.tensor([2, 1, 3, 0]), side="right"),
    "ss_mixed": lambda L: L.searchsorted(L.tensor([1, 3, 5]), L.tensor([3.5, 5.])),
    "ss_empty_seq": lambda L: L.searchsorted(L.tensor([]), L.tensor([3., 6.])),
    "ss_empty_vals": lambda L: L.searchsorted(L.tensor([1., 3.]), L.tensor([])),
    "ss_nan": lambda L: L.searchsorted(L.tensor([1., NAN]), L.tensor([NAN, 6., 0.])),
    # bucketize
    "bucketize": lambda L: L.bucketize(L.tensor([[3, 6], [0, 9]]), L.tensor([1, 3, 5, 7])),
    "bucketize_right": lambda L: L.bucketize(L.tensor([3, 6, 1]), L.tensor([1, 3, 5]),
                                             right=True),
    "bucketize_int32": lambda L: L.bucketize(L.tensor([3., 6.]), L.tensor([1., 3.]),
                                             out_int32=True),
    "bucketize_scalar": lambda L: L.bucketize(3, L.tensor([1, 3, 5])),
    "bucketize_0d": lambda L: L.bucketize(L.tensor(4.), L.tensor([1., 3.])),
    # tril_indices / triu_indices
    "tril_indices": lambda L: L.tril_indices(3, 3),
    "tril_indices_wide": lambda L: L.tril_indices(3, 4, 1),
    "tril_indices_neg": lambda L: L.tril_indices(4, 3, -1),
    "tril_indices_big": lambda L: L.tril_indices(4, 3, 10),
    "tril_indices_none": lambda L: L.tril_indices(4, 3, -10),
    "tril_indices_rows0": lambda L: L.tril_indices(0, 3),
    "tril_indices_int32": lambda L: L.tril_indices(3, 2, dtype=L.int32),
    "triu_indices": lambda L: L.triu_indices(3, 3),
    "triu_indices_wide": lambda L: L.triu_indices(3, 4, 1),
    "triu_indices_neg": lambda L: L.triu_indices(4, 3, -1),
    "triu_indices_all": lambda L: L.triu_indices(4, 3, -10),
    "triu_indices_none": lambda L: L.triu_indices(4, 3, 10),
    "triu_indices_cols0": lambda L: L.triu_indices(3, 0, dtype=L.int32),
}


@pytest.mark.parametrize("name", CASES)
def test_matches_torch(name):
    _same(_flat(CASES[name](wgrad)), _flat(CASES[name](torch)))


ERRORS = {
    "unique_complex": lambda L: L.unique(L.tensor([1j, 2.])),
    "unique_0d_dim": lambda L: L.unique(L.tensor(5.), dim=0),
    "unique_dim_range": lambda L: L.unique(L.zeros(2, 3), dim=2),
    "unique_zero_sized": lambda L: L.unique(L.zeros(0, 3), dim=1),
    "consecutive_zero_sized": lambda L: L.unique_consecutive(L.zeros(0, 2), dim=1),
    "bincount_negative": lambda L: L.bincount(L.tensor([1, -1, 3])),
    "bincount_2d": lambda L: L.bincount(L.tensor([[1, 1, 3]])),
    "bincount_0d": lambda L: L.bincount(L.tensor(1)),
    "bincount_float": lambda L: L.bincount(L.tensor([1., 2.])),
    "bincount_bool": lambda L: L.bincount(L.tensor([True])),
    "bincount_weights_len": lambda L: L.bincount(L.tensor([1, 1]), L.tensor([.5])),
    "bincount_weights_2d": lambda L: L.bincount(L.tensor([1]), L.tensor([[.5]])),
    "bincount_minlength": lambda L: L.bincount(L.tensor([1]), minlength=-1),
    "ss_side_bad": lambda L: L.searchsorted(L.tensor([1, 2]), L.tensor([1]), side="foo"),
    "ss_side_opposite": lambda L: L.searchsorted(L.tensor([1, 2]), L.tensor([1]),
                                                 side="left", right=True),
    "ss_0d_seq": lambda L: L.searchsorted(L.tensor(1.), L.tensor([3.])),
    "ss_scalar_nd": lambda L: L.searchsorted(L.tensor([[1, 3], [2, 4]]), 3),
    "ss_leading": lambda L: L.searchsorted(L.tensor([[1, 3, 5], [2, 4, 6]]),
                                           L.tensor([[3, 6, 1]])),
    "ss_leading_1d": lambda L: L.searchsorted(L.tensor([[1, 3, 5], [2, 4, 6]]),
                                              L.tensor([3, 6, 1])),
    "ss_sorter_size": lambda L: L.searchsorted(L.tensor([5, 1, 3]), L.tensor([3]),
                                               sorter=L.tensor([1, 2])),
    "ss_sorter_dtype": lambda L: L.searchsorted(L.tensor([5, 1]), L.tensor([3]),
                                                sorter=L.tensor([1, 0], dtype=L.int32)),
    "ss_sorter_range": lambda L: L.searchsorted(L.tensor([5, 1]), L.tensor([3]),
                                                sorter=L.tensor([1, 2])),
    "ss_complex": lambda L: L.searchsorted(L.tensor([1j, 2.]), L.tensor([3j])),
    "ss_bool": lambda L: L.searchsorted(L.tensor([True]), L.tensor([False])),
    "bucketize_2d": lambda L: L.bucketize(L.tensor([3]), L.tensor([[1, 3]])),
    "bucketize_0d": lambda L: L.bucketize(L.tensor([3]), L.tensor(1)),
    "tril_indices_row": lambda L: L.tril_indices(-1, 3),
    "triu_indices_col": lambda L: L.triu_indices(3, -2),
    "tril_indices_float": lambda L: L.tril_indices(3, 3, dtype=L.float32),
    "triu_indices_short": lambda L: L.triu_indices(3, 3, dtype=L.int16),
    "tril_indices_grad": lambda L: L.tril_indices(3, 3, requires_grad=True),
}


def _error(f, lib):
    with pytest.raises(Exception) as info:
        f(lib)
    return type(info.value).__name__, str(info.value)


@pytest.mark.parametrize("name", ERRORS)
def test_errors_match_torch(name):
    assert _error(ERRORS[name], wgrad) == _error(ERRORS[name], torch)


GRAD = {
    "unique": lambda L, x: L.unique(x),
    "unique_tuple": lambda L, x: L.unique(x, return_inverse=True)[0],
    "unique_dim": lambda L, x: L.unique(x, dim=0),
    "consecutive": lambda L, x: L.unique_consecutive(x),
    "consecutive_dim": lambda L, x: L.unique_consecutive(x, dim=0),
    "bincount": lambda L, x: L.bincount(L.tensor([0, 2, 2, 1]), weights=x),
}


def _record(lib, f):
    x = lib.tensor([2., 1., 1., 3.], requires_grad=True)
    out = f(lib, x)
    with lib.no_grad():
        off = f(lib, x).requires_grad
    return out.requires_grad, type(out.grad_fn).__name__, off, _error(
        lambda L: out.sum().backward(), lib)


@pytest.mark.parametrize("name", GRAD)
def test_grad_record_matches_torch(name):
    """Outputs of float inputs requiring grad record a node whose backward raises."""
    assert _record(wgrad, GRAD[name]) == _record(torch, GRAD[name])


@pytest.mark.parametrize("lib", [wgrad, torch])
def test_integer_outputs_do_not_require_grad(lib):
    x = lib.tensor([2., 1., 1.], requires_grad=True)
    outs = (lib.unique(x, return_inverse=True, return_counts=True)[1:]
            + (lib.searchsorted(x.detach(), x), lib.bucketize(x, x.detach())))
    assert [o.requires_grad for o in outs] == [False] * 4


# -- repeat_interleave and mv: values, gradients, node names and errors against torch ------
RI = {
    "flat": lambda L, x: x.repeat_interleave(2),
    "dim1": lambda L, x: x.repeat_interleave(2, dim=-1),
    "zero": lambda L, x: x.repeat_interleave(0, dim=1),
    "counts": lambda L, x: x.repeat_interleave(L.tensor([1, 2]), dim=0),
    "count_0d": lambda L, x: x.repeat_interleave(L.tensor(2), dim=0, output_size=4),
    "count_1": lambda L, x: L.repeat_interleave(x, L.tensor([3]), dim=1),
    "indices": lambda L, x: L.repeat_interleave(L.tensor([2, 0, 1])) * x[0, 0],
    "mv": lambda L, x: L.mv(x, x[0].detach() + 1j),
    "matmul_mv": lambda L, x: x @ (x[0].detach() * 2),
    "matmul_dot": lambda L, x: x[1] @ x[0],
}
RI_ERRORS = {
    "negative": lambda L: L.ones(2).repeat_interleave(-1),
    "sizes": lambda L: L.ones(2, 3).repeat_interleave(L.tensor([1, 2]), dim=1),
    "counts_2d": lambda L: L.ones(2).repeat_interleave(L.tensor([[1, 2]])),
    "counts_float": lambda L: L.ones(2).repeat_interleave(L.tensor([1., 2.])),
    "counts_negative": lambda L: L.ones(2).repeat_interleave(L.tensor([1, -2])),
    "output_size": lambda L: L.ones(2).repeat_interleave(2, output_size=5),
    "mv_dims": lambda L: L.mv(L.ones(3), L.ones(3)),
    "mv_size": lambda L: L.mv(L.ones(2, 3), L.ones(2, dtype=L.float64)),
    "mv_dtype": lambda L: L.mv(L.ones(2, 3), L.ones(3, dtype=L.float64)),
}


@pytest.mark.parametrize("name", RI)
def test_repeat_interleave_and_mv_match_torch(name):
    got = {}
    for L in (wgrad, torch):
        x = L.tensor(np.arange(6.).reshape(2, 3) * (1 - 0.5j), requires_grad=True)
        y = RI[name](L, x)
        (y.abs() ** 2).sum().backward()
        got[L] = (_flat(y), y.grad_fn.name(), x.grad.numpy())
    _same(got[wgrad][0], got[torch][0])
    assert got[wgrad][1] == got[torch][1]
    np.testing.assert_allclose(got[wgrad][2], got[torch][2], rtol=1e-12)


@pytest.mark.parametrize("name", RI_ERRORS)
def test_repeat_interleave_and_mv_errors_match_torch(name):
    assert _error(RI_ERRORS[name], wgrad) == _error(RI_ERRORS[name], torch)
