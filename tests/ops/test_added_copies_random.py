"""The view-copy functions (``torch.<view>_copy``), the Tensor metadata methods, the
runtime settings, the random in-place fills and samplers (random_, cauchy_, geometric_,
log_normal_, multinomial, poisson, binomial), histogram/histogramdd and torch.gradient,
each against torch itself: values and dtypes, errors, gradients (gradcheck on float64 and
complex128 where torch differentiates, and the gradient torch gives); random draws by
their distribution, shapes, dtypes and reproducibility under manual_seed."""
import array
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from _outcome import arrays as _run, assert_arrays_agree, assert_grads_agree, grads
from wgrad.testing import assert_jax_identity, check_op

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(7)
_X23 = _RNG.standard_normal((2, 3))
_X234 = _RNG.standard_normal((2, 3, 4))
_C23 = _RNG.standard_normal((2, 3)) + 1j * _RNG.standard_normal((2, 3))
_R32 = _RNG.standard_normal((3, 2))
_H = np.array([1., 2., 1., 4., 2.5, 6., -1.])
_P2 = np.array([[0., 1.], [1., 2.], [2., 0.5], [0.5, 0.5]])
_G = np.array([[1., 2., 4., 8.], [10., 20., 40., 80.]])
_H60 = _RNG.standard_normal(60)
_G33 = _RNG.standard_normal((3, 3)) + 1j * _RNG.standard_normal((3, 3))
_X3 = np.array([0., 1., 1.5])  # uneven sample coordinates


def _t(T, a, dtype=None, rg=False):
    a = np.asarray(a)
    if dtype is None:
        dtype = T.complex128 if a.dtype.kind == "c" else T.float64 if a.dtype.kind == "f" \
            else T.int64 if a.dtype.kind in "iu" else T.bool
    return T.tensor(a, dtype=dtype, requires_grad=rg)


def _np(x):
    if hasattr(x, "detach"):
        return x.detach().resolve_conj().numpy()
    return np.asarray(x)


def _hist(r):
    return (r.hist, *(r.bin_edges if isinstance(r.bin_edges, tuple) else (r.bin_edges,)))


# name -> fn(T): compared value by value (shape, dtype, values) between wgrad and torch
VALUES = {
    # the view copies: plain, non-contiguous, complex and integer inputs
    "alias_copy": lambda T: (T.alias_copy(_t(T, _X23)), T.alias_copy(_t(T, _C23).t())),
    "as_strided_copy": lambda T: (T.as_strided_copy(_t(T, _X23), (2, 2), (1, 3)),
                                  T.as_strided_copy(_t(T, _X23)[:, 1:], (2,), (1,)),
                                  T.as_strided_copy(_t(T, _X23).t(), (2, 2), (1, 2), 1)),
    "detach_copy": lambda T: (T.detach_copy(_t(T, _C23)), T.detach_copy(_t(T, [1, 2]))),
    "diagonal_copy": lambda T: (T.diagonal_copy(_t(T, _X234), 1, -1, 0),
                                T.diagonal_copy(_t(T, _C23)), T.diagonal_copy(_t(T, _X23), -1)),
    "expand_copy": lambda T: (T.expand_copy(_t(T, _X23[:1]), (2, 2, 3)),
                              T.expand_copy(_t(T, [1, 2]), [3, -1], implicit=True)),
    "narrow_copy": lambda T: (T.narrow_copy(_t(T, _X234), 2, 1, 2),
                              _t(T, _C23).narrow_copy(-1, -2, 1)),
    "permute_copy": lambda T: (T.permute_copy(_t(T, _X234), (2, 0, 1)),
                               T.permute_copy(_t(T, _C23), [-1, 0])),
    "select_copy": lambda T: (T.select_copy(_t(T, _X234), 1, -1),
                              T.select_copy(_t(T, _C23), 0, 1)),
    "slice_copy": lambda T: (T.slice_copy(_t(T, _X234), 2, 1, None, 2), T.slice_copy(_t(T, _X23)),
                             T.slice_copy(_t(T, _X23), 1, -10, 10),
                             T.slice_copy(_t(T, _X23), 1, 2, 1),
                             T.slice_copy(_t(T, _C23), -1, None, -1)),
    "split_copy": lambda T: (T.split_copy(_t(T, _X234), 2, 2), T.split_copy(_t(T, _C23), 1)),
    "split_with_sizes_copy": lambda T: T.split_with_sizes_copy(_t(T, _X234), [1, 0, 3], -1),
    "squeeze_copy": lambda T: (T.squeeze_copy(_t(T, _X23[:1])), T.squeeze_copy(_t(T, _X23[:1]), 0),
                               T.squeeze_copy(_t(T, _X23[:1, :1]), (0, 1)),
                               T.squeeze_copy(_t(T, _X23), 1)),
    "t_copy": lambda T: (T.t_copy(_t(T, _C23)), T.t_copy(_t(T, [1., 2.])), T.t_copy(_t(T, 3.))),
    "transpose_copy": lambda T: (T.transpose_copy(_t(T, _X234), 0, 2),
                                 T.transpose_copy(_t(T, 3.), 0, -1)),
    "unbind_copy": lambda T: (T.unbind_copy(_t(T, _X234), 1), T.unbind_copy(_t(T, _C23))),
    "unfold_copy": lambda T: (T.unfold_copy(_t(T, _X234), 2, 2, 1),
                              T.unfold_copy(_t(T, 3.), 0, 1, 1)),
    "unsqueeze_copy": lambda T: (T.unsqueeze_copy(_t(T, _X23), -1),
                                 T.unsqueeze_copy(_t(T, 3.), 0)),
    "view_copy": lambda T: (T.view_copy(_t(T, _X234), (4, -1)),
                            T.view_copy(_t(T, _X23).t(), (6,))),
    "view_as_real_copy": lambda T: (T.view_as_real_copy(_t(T, _C23)),
                                    T.view_as_real_copy(_t(T, _C23).conj())),
    "view_as_complex_copy": lambda T: (T.view_as_complex_copy(_t(T, _R32)),
                                       T.view_as_complex_copy(
                                           _t(T, _X234[..., :2]).transpose(0, 1))),
    "as_strided_scatter": lambda T: (
        T.as_strided_scatter(_t(T, _X23), _t(T, [10., 20.]), (2,), (2,), 1),
        _t(T, _X23).as_strided_scatter(_t(T, [[1., 2.], [3., 4.]]), (2, 2), (1, 3)),
        T.as_strided_scatter(_t(T, _X23), _t(T, [1, 2]), (2,), (1,)),
        T.as_strided_scatter(_t(T, _C23), _t(T, [1j, 2.]), (2,), (3,))),
    # histogram, histogramdd, gradient
    "histogram": lambda T: (*_hist(T.histogram(_t(T, _H, T.float32), 4)),
                            *_hist(T.histogram(_t(T, _H), _t(T, [0., 1, 3, 5]))),
                            *_hist(T.histogram(_t(T, _H), 3, range=(0., 3.),
                                               weight=_t(T, np.arange(7.)), density=True)),
                            *_hist(T.histogram(_t(T, np.ones(3)), 4)),
                            *_hist(T.histogram(_t(T, np.zeros(0)), 2)),
                            *_hist(_t(T, _H).histogram(2)),
                            *_hist(T.histogram(_t(T, _H), _t(T, [1., 1., 2.]))),
                            *_hist(T.histogram(_t(T, [1., math.nan]), 3, range=(0., 2.))),
                            *_hist(T.histogram(_t(T, _H60, T.float32), 7))),
    "histogram_type": lambda T: np.array(type(T.histogram(_t(T, _H))).__name__),
    "histogramdd": lambda T: (*_hist(T.histogramdd(_t(T, _P2), [2, 3])),
                              *_hist(T.histogramdd(_t(T, _P2), 2, range=[0., 2., 0., 2.],
                                                   density=True)),
                              *_hist(T.histogramdd(_t(T, _P2), [_t(T, [0., 1., 2.]),
                                                                _t(T, [0., 2.])],
                                                   weight=_t(T, [1., 2., 3., 4.]))),
                              *_hist(T.histogramdd(_t(T, _P2.reshape(2, 2, 2)), 2))),
    # one complex 3 x 3 input, as in GRADS (their kernels are shared)
    "gradient": lambda T: (*T.gradient(_t(T, _G33)), *T.gradient(_t(T, _G33), spacing=2.),
                           *T.gradient(_t(T, _G33), spacing=[2., 0.5], edge_order=2),
                           *T.gradient(_t(T, _G33), spacing=(_t(T, _X3), _t(T, _X3 ** 2))),
                           *T.gradient(_t(T, _G33), spacing=(_t(T, _X3),), dim=1, edge_order=2),
                           *T.gradient(_t(T, [1, 2, 4]), spacing=2),
                           # float32 values, float64 coordinates: float64 derivatives
                           *T.gradient(_t(T, [1., 2., 4.], T.float32), spacing=(_t(T, _X3),)),
                           np.array(len(T.gradient(_t(T, 1.))))),
    # metadata and creation
    "metadata": lambda T: [np.array(v) for v in (
        *(getattr(_t(T, _X23), n) for n in (
            "is_cpu", "itemsize", "nbytes", "is_sparse", "is_sparse_csr", "is_quantized",
            "is_meta", "is_mkldnn", "is_nested", "is_xpu", "is_mps", "is_vulkan", "is_ipu",
            "is_xla", "is_mtia", "is_maia")),
        _t(T, _C23).t().nbytes, _t(T, [1, 2], T.int16).itemsize, _t(T, _X23)[:, :1].nbytes,
        _t(T, _X23).is_pinned(), _t(T, _X23).get_device(), T.get_device(_t(T, 1.)),
        str(_t(T, 1.).layout).split(".")[1], _t(T, _X23).is_shared(),
        T.typename(_t(T, _X23)), T.typename(_t(T, [1])), T.typename(3),
        T.typename(math.sqrt), T.is_storage(_t(T, 1.)), T.is_storage(_t(T, 1.).untyped_storage()),
        T.is_storage([1.]), str(T.get_default_device()), T.is_autocast_enabled(),
        T.is_autocast_enabled("cpu"), str(T.get_autocast_dtype("cpu")).split(".")[1],
        str(T.get_autocast_dtype("cuda")).split(".")[1])],
    # to_dense of a strided tensor: itself, or a copy in a dtype (with its gradient)
    "to_dense": lambda T: (lambda x: [np.array(x.to_dense() is x),
                                      np.array(x.to_dense(masked_grad=True) is x),
                                      x.to_dense(T.float32).detach(),
                                      np.array(x.to_dense(T.float32).grad_fn.name()),
                                      T.autograd.grad((x.to_dense(T.float32) * 3).sum(), x)[0]])(
        _t(T, _X23).requires_grad_()),
    "dim_order": lambda T: [np.array(x) for x in (
        T.zeros(2, 3, 4).permute(2, 0, 1).dim_order(), T.zeros(2, 1, 3).dim_order(),
        T.zeros(3).expand(2, 3).dim_order(), T.zeros(2, 3, 4, 5).permute(0, 2, 3, 1).dim_order(),
        T.zeros(2, 3).dim_order(ambiguity_check=True), T.zeros(2, 3, 1, 1).dim_order(),
        T.zeros(()).dim_order(),
        T.zeros(3, 4, 5).transpose(0, 1)[:, 1:].dim_order(ambiguity_check=True))],
    "empty_strided": lambda T: [np.array(x) for x in (
        T.empty_strided((2, 3), (1, 2)).stride(), T.empty_strided((2, 3), (1, 2)).shape,
        T.empty_strided((2, 3), (3, 1), dtype=T.float64).stride(),
        T.empty_strided((2, 3), (0, 1)).stride(), T.empty_strided((2, 1, 3), (3, 3, 1)).stride(),
        T.empty_strided((2, 3), (1, 2), requires_grad=True).requires_grad,
        T.empty_strided((0, 3), (1, 1)).shape,
        _t(T, [1.], T.float16).new_empty_strided((2, 2), (1, 2)).stride(),
        str(_t(T, [1.], T.float16).new_empty_strided((2, 2), (1, 2)).dtype).split(".")[1])],
    "frombuffer": lambda T: (T.frombuffer(array.array("d", [1., 2., 3.]), dtype=T.float64),
                             T.frombuffer(bytearray(b"\x01\x02\x03\x04"), dtype=T.uint8,
                                          count=2, offset=1),
                             T.frombuffer(bytearray(range(8)), dtype=T.int32),
                             T.frombuffer(b"abcd", dtype=T.int16, offset=2),
                             np.array(T.frombuffer(bytearray(8), dtype=T.float32,
                                                   requires_grad=True).requires_grad)),
    # Tensor methods: resize, as_subclass, Python callbacks
    "resize": lambda T: (_t(T, _X23).resize(3, 2), _t(T, _X23).t().resize(6),
                         _t(T, _X23).resize_as(_t(T, _R32))),
    "callbacks": lambda T: (_t(T, [1, 2]).apply_(lambda v: v * 2.5),
                            _t(T, [True, False]).apply_(lambda v: not v),
                            _t(T, [1j, 2.]).apply_(lambda v: v * 1j),
                            _t(T, _X23).map_(_t(T, [1., 2., 3.]), lambda a, b: a * b),
                            _t(T, [1., 2.]).map2_(_t(T, [[1.], [2.]])[0], _t(T, [3., 4.]),
                                                  lambda a, b, c: a + b * c)),
    "as_subclass": lambda T: (_t(T, _X23).as_subclass(T.Tensor),
                              np.array(_t(T, _X23).as_subclass(T.nn.Parameter).shape)),
    # random fills: bounds (the values themselves are draws)
    "random_bounds": lambda T: [np.array(v) for v in (
        _random_range(T, T.float32), _random_range(T, T.float16), _random_range(T, T.bfloat16),
        _random_range(T, T.uint8), _random_range(T, T.int8), _random_range(T, T.bool),
        _random_range(T, T.int16, 3), _random_range(T, T.int64, -5, -2),
        _random_range(T, T.float16, 0, 65504), _random_range(T, T.uint8, 250, None),
        _random_range(T, T.bool, 1, None), _random_range(T, T.float64, 2, 4))],
}


def _random_range(T, dtype, *args):
    """Whether 400 draws of ``random_(*args)`` lie in the range torch documents (the least
    and greatest value possible), and the dtype."""
    T.manual_seed(0)
    x = T.zeros(400, dtype=dtype).random_(*args).tolist()
    if not args:
        hi = 1 if dtype is T.bool else 2 ** {T.float32: 24, T.float16: 11, T.bfloat16: 8}.get(
            dtype, 0) or {T.uint8: 255, T.int8: 127}[dtype]
        lo = 0
    elif len(args) == 1:
        lo, hi = 0, args[0] - 1
    else:
        lo = args[0]
        hi = args[1] - 1 if args[1] is not None else 1 if dtype is T.bool else 255
    return bool(lo <= min(x) and max(x) <= hi), str(dtype).split(".")[1]


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_agree_with_torch(name, request):
    if name == "metadata":  # compared with torch's CPU tensors, also where JAX has a GPU
        request.getfixturevalue("on_the_cpu")
    assert_arrays_agree(_run(wgrad, VALUES[name]), _run(torch, VALUES[name]))


ERRORS = {
    # copies: the view's errors, and the copies' own
    "t_copy_3d": lambda T: T.t_copy(T.zeros(2, 2, 2)),
    "slice_copy_0d": lambda T: T.slice_copy(T.tensor(1.)),
    "slice_copy_step": lambda T: T.slice_copy(T.zeros(2, 3), 1, 0, 3, 0),
    "slice_copy_dim": lambda T: T.slice_copy(T.zeros(2, 3), 2),
    "select_copy_index": lambda T: T.select_copy(T.zeros(2, 3), 0, 5),
    "narrow_copy_length": lambda T: T.narrow_copy(T.zeros(2, 3), 0, 0, 5),
    "as_strided_copy_bounds": lambda T: T.as_strided_copy(T.zeros(2, 3), (2,), (1,), 10),
    "split_copy_zero": lambda T: T.split_copy(T.zeros(2, 3), 0, 1),
    "unfold_copy_size": lambda T: T.unfold_copy(T.zeros(2, 3), 1, 4, 1),
    "diagonal_copy_dims": lambda T: T.diagonal_copy(T.zeros(2, 3), 0, 1, 1),
    "permute_copy_dims": lambda T: T.permute_copy(T.zeros(2, 3), (0,)),
    "view_copy_size": lambda T: T.view_copy(T.zeros(2, 3), (4,)),
    "view_as_real_copy_real": lambda T: T.view_as_real_copy(T.zeros(2)),
    "view_as_complex_copy_offset": lambda T: T.view_as_complex_copy(
        T.arange(8.)[1:7].reshape(3, 2)),
    "view_as_complex_copy_stride": lambda T: T.view_as_complex_copy(T.zeros(3, 3)[:, :2]),
    "view_as_complex_copy_last_stride": lambda T: T.view_as_complex_copy(T.zeros(2, 3).t()),
    "view_as_complex_copy_0d": lambda T: T.view_as_complex_copy(T.tensor(1.)),
    "view_as_complex_copy_grad": lambda T: T.view_as_complex_copy(
        T.zeros(3, 2, requires_grad=True)),
    "copy_not_tensor": lambda T: T.t_copy([1., 2.]),
    "select_copy_complex_grad": lambda T: T.select_copy(T.ones(2, 2, dtype=T.complex128,
                                                              requires_grad=True), 0, 1),
    "slice_copy_complex_grad": lambda T: T.slice_copy(T.ones(2, dtype=T.complex128,
                                                            requires_grad=True)),
    "detach_copy_backward": lambda T: T.detach_copy(
        T.ones(2, requires_grad=True)).sum().backward(),
    "as_strided_scatter_size": lambda T: T.as_strided_scatter(T.zeros(2, 3), T.zeros(3), (2,),
                                                              (2,)),
    "as_strided_scatter_overlap": lambda T: T.as_strided_scatter(T.zeros(2, 3), T.zeros(2), (2,),
                                                                 (0,)),
    "as_strided_scatter_strides": lambda T: T.as_strided_scatter(T.zeros(2, 3), T.zeros(2), (2,),
                                                                 (1, 2)),
    # in-place views, metadata
    "detach__view": lambda T: T.detach_(T.ones(2, 2)[0]),
    "get_device_not_tensor": lambda T: T.get_device(3),
    "pin_memory": lambda T: T.ones(2).pin_memory(),
    "set_warn_always_int": lambda T: T.set_warn_always(1),
    "set_flush_denormal_int": lambda T: T.set_flush_denormal(1),
    "as_subclass_not_tensor": lambda T: T.ones(1).as_subclass(int),
    "dim_order_ambiguous": lambda T: T.zeros(2, 1, 3).dim_order(ambiguity_check=True),
    "dim_order_stride_0": lambda T: T.zeros(3).expand(2, 3).dim_order(ambiguity_check=True),
    "resize_numel": lambda T: T.zeros(6).resize(2, 4),
    "resize_tuple": lambda T: T.zeros(6).resize((3, 2)),
    "apply__requires_grad": lambda T: T.ones(2, requires_grad=True).apply_(lambda v: v),
    "apply__result": lambda T: T.tensor([1, 2]).apply_(lambda v: "a"),
    "apply__none": lambda T: T.tensor([1., 2.]).apply_(lambda v: None),
    "map__dtype": lambda T: T.ones(3).map_(T.ones(3, dtype=T.float64), lambda a, b: a),
    "map__shape": lambda T: T.ones(3).map_(T.ones(2), lambda a, b: a),
    "map2__dtype": lambda T: T.ones(3).map2_(T.ones(1), T.ones(3, dtype=T.int64), lambda *v: 1.),
    "empty_strided_lengths": lambda T: T.empty_strided((2, 3), (1,)),
    "empty_strided_negative_size": lambda T: T.empty_strided((2, -1), (1, 1)),
    "empty_strided_negative_stride": lambda T: T.empty_strided((2, 3), (1, -1)),
    "empty_strided_int_size": lambda T: T.empty_strided(2, 1),
    "frombuffer_multiple": lambda T: T.frombuffer(bytearray(7), dtype=T.int32),
    "frombuffer_offset": lambda T: T.frombuffer(bytearray(8), dtype=T.int32, offset=9),
    "frombuffer_count": lambda T: T.frombuffer(bytearray(8), dtype=T.int32, count=3),
    "frombuffer_empty": lambda T: T.frombuffer(bytearray(0), dtype=T.int32),
    "frombuffer_no_buffer": lambda T: T.frombuffer([1, 2], dtype=T.int32),
    "frombuffer_count_zero": lambda T: T.frombuffer(bytearray(8), dtype=T.int32, count=0),
    # random fills and samplers
    "random__from_to": lambda T: T.zeros(3).random_(5, 2),
    "random__to_zero": lambda T: T.zeros(3).random_(0),
    "random__uint8_to": lambda T: T.zeros(3, dtype=T.uint8).random_(300),
    "random__uint8_from": lambda T: T.zeros(3, dtype=T.uint8).random_(-1, 5),
    "random__int8_from": lambda T: T.zeros(3, dtype=T.int8).random_(-129, 5),
    "random__half_to": lambda T: T.zeros(3, dtype=T.float16).random_(70000),
    "random__half_from": lambda T: T.zeros(3, dtype=T.float16).random_(-70000, 0),
    "random__half_to_inc": lambda T: T.zeros(3, dtype=T.float16).random_(5000, None),
    "random__float_to_inc": lambda T: T.zeros(3).random_(2 ** 24, None),
    "random__bool_to": lambda T: T.zeros(3, dtype=T.bool).random_(3),
    "random__bool_from": lambda T: T.zeros(3, dtype=T.bool).random_(-1, 2),
    "random__int32_to": lambda T: T.zeros(3, dtype=T.int32).random_(2 ** 31 + 1),
    "random__full_range_int8": lambda T: T.zeros(3, dtype=T.int8).random_(-2 ** 63, None),
    "random__complex": lambda T: T.zeros(3, dtype=T.complex64).random_(),
    "random__complex_to": lambda T: T.zeros(3, dtype=T.complex64).random_(3),
    "random__complex_from": lambda T: T.zeros(3, dtype=T.complex64).random_(1, None),
    "random__float_arg": lambda T: T.zeros(3).random_(2.5),
    "random__bool_arg": lambda T: T.zeros(3).random_(True),
    "random__to_none": lambda T: T.zeros(3).random_(to=None),
    "random__three_args": lambda T: T.zeros(3).random_(1, 2, 3),
    "random__leaf": lambda T: T.zeros(3, requires_grad=True).random_(),
    "cauchy__sigma": lambda T: T.zeros(3).cauchy_(0, -1),
    "cauchy__long": lambda T: T.zeros(3, dtype=T.int64).cauchy_(),
    "cauchy__complex": lambda T: T.zeros(3, dtype=T.complex64).cauchy_(),
    "geometric__p": lambda T: T.zeros(3).geometric_(1),
    "geometric__nan": lambda T: T.zeros(3).geometric_(math.nan),
    "geometric__complex": lambda T: T.zeros(3, dtype=T.complex64).geometric_(0.5),
    "geometric__bool": lambda T: T.zeros(3, dtype=T.bool).geometric_(0.5),
    "log_normal__std": lambda T: T.zeros(3).log_normal_(0, 0),
    "log_normal__long": lambda T: T.zeros(3, dtype=T.int64).log_normal_(),
    "multinomial_negative": lambda T: T.multinomial(T.tensor([-1., 2.]), 1),
    "multinomial_zero_sum": lambda T: T.multinomial(T.tensor([0., 0.]), 1),
    "multinomial_zero_row": lambda T: T.multinomial(T.tensor([[1., 1.], [0., 0.]]), 3, True),
    "multinomial_inf": lambda T: T.multinomial(T.tensor([math.inf, 2.]), 1),
    "multinomial_nan": lambda T: T.multinomial(T.tensor([math.nan, 2.]), 1, True),
    "multinomial_3d": lambda T: T.multinomial(T.ones(2, 2, 2), 1),
    "multinomial_0d_long": lambda T: T.multinomial(T.tensor(1), 0),
    "multinomial_n_zero": lambda T: T.multinomial(T.ones(3), 0),
    "multinomial_long": lambda T: T.multinomial(T.tensor([1, 2]), 1),
    "multinomial_complex": lambda T: T.multinomial(T.tensor([1j, 2.]), 1),
    "multinomial_too_many": lambda T: T.multinomial(T.ones(3), 4),
    "multinomial_method": lambda T: T.ones(3).multinomial(0),
    "multinomial_empty": lambda T: T.multinomial(T.zeros(2, 0), 1),
    "multinomial_float_n": lambda T: T.multinomial(T.ones(3), 2.0),
    "multinomial_int_replacement": lambda T: T.multinomial(T.ones(3), 2, replacement=1),
    "poisson_negative": lambda T: T.poisson(T.tensor([-1.])),
    "poisson_nan": lambda T: T.poisson(T.tensor([math.nan])),
    "poisson_long": lambda T: T.poisson(T.tensor([1, 2])),
    "poisson_bool": lambda T: T.poisson(T.tensor([True])),
    "poisson_complex": lambda T: T.poisson(T.tensor([1j])),
    "poisson_number": lambda T: T.poisson(3.),
    "binomial_long_count": lambda T: T.binomial(T.tensor([1, 2]), T.tensor([0.5, 0.5])),
    "binomial_long_prob": lambda T: T.binomial(T.tensor([5.]), T.tensor([1])),
    "binomial_dtypes": lambda T: T.binomial(T.tensor([1., 2.]), T.tensor([0.5, 0.5]).double()),
    "binomial_half": lambda T: T.binomial(T.tensor([5.]).half(), T.tensor([0.5]).half()),
    "binomial_shapes": lambda T: T.binomial(T.tensor([1., 2.]), T.tensor([0.5, 0.5, 0.5])),
    "binomial_number": lambda T: T.binomial(T.tensor([5.]), 0.5),
    "binomial_backward": lambda T: T.binomial(T.tensor([5.], requires_grad=True),
                                              T.tensor([0.5])).sum().backward(),
    # histogram, histogramdd, gradient
    "histogram_long": lambda T: T.histogram(T.tensor([1, 2]), 3),
    "histogram_half": lambda T: T.histogram(T.ones(2).half(), 3),
    "histogram_bins_zero": lambda T: T.histogram(T.ones(2), 0),
    "histogram_bins_float": lambda T: T.histogram(T.ones(2), 2.5),
    "histogram_range_order": lambda T: T.histogram(T.ones(2), 3, range=(3., 1.)),
    "histogram_range_length": lambda T: T.histogram(T.ones(2), 2, range=(0., 1., 2.)),
    "histogram_bins_2d": lambda T: T.histogram(T.ones(2), T.tensor([[3., 1.]])),
    "histogram_bins_one_edge": lambda T: T.histogram(T.ones(2), T.tensor([1.])),
    "histogram_bins_dtype": lambda T: T.histogram(T.ones(2), T.tensor([1., 2.]).double()),
    "histogram_weight_shape": lambda T: T.histogram(T.ones(2), 3, weight=T.ones(3)),
    "histogram_weight_dtype": lambda T: T.histogram(T.ones(2), 3, weight=T.ones(2).double()),
    "histogram_infinite": lambda T: T.histogram(T.tensor([1., math.inf]), 3),
    "histogram_nan": lambda T: T.histogram(T.tensor([1., math.nan]), 3),
    "histogram_range_infinite": lambda T: T.histogram(T.ones(2), 3, range=(0., math.inf)),
    "histogram_backward": lambda T: T.histogram(T.ones(3, requires_grad=True), 2).hist.sum(
    ).backward(),
    "histogramdd_bins_zero": lambda T: T.histogramdd(T.ones(3, 2), [0, 2]),
    "histogramdd_bins_count": lambda T: T.histogramdd(T.ones(3, 2), [2]),
    "histogramdd_range_length": lambda T: T.histogramdd(T.ones(3, 2), 2, range=[0., 1.]),
    "histogramdd_edges_count": lambda T: T.histogramdd(T.ones(3, 2), [T.tensor([0., 1.])]),
    "histogramdd_0d": lambda T: T.histogramdd(T.tensor(1.), 2),
    "gradient_size": lambda T: T.gradient(T.tensor([1.])),
    "gradient_size_order_2": lambda T: T.gradient(T.tensor([1., 2.]), edge_order=2),
    "gradient_edge_order": lambda T: T.gradient(T.ones(2, 3), edge_order=3),
    "gradient_spacing_length": lambda T: T.gradient(T.ones(2, 3), spacing=[1., 2., 3.]),
    "gradient_spacing_dim_length": lambda T: T.gradient(T.ones(2, 3), spacing=[2., 3.], dim=[1]),
    "gradient_dim": lambda T: T.gradient(T.ones(2, 3), dim=2),
    "gradient_dims_repeated": lambda T: T.gradient(T.ones(2, 3), dim=(0, 0)),
    "gradient_coordinates_2d": lambda T: T.gradient(T.ones(2, 3), spacing=(T.ones(1, 2),),
                                                    dim=0),
    "gradient_coordinates_0d": lambda T: T.gradient(T.ones(2, 3), spacing=(T.tensor(2.),), dim=1),
    "gradient_bool": lambda T: T.gradient(T.tensor([True, False])),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_agree_with_torch(name):
    if name == "pin_memory" and wgrad.cuda.is_available():
        # with a GPU torch pins host memory; wgrad cannot (docs/differences.md)
        with pytest.raises(NotImplementedError, match="no pinned host buffers"):
            ERRORS[name](wgrad)
        return
    a, b = _run(wgrad, ERRORS[name]), _run(torch, ERRORS[name])
    assert isinstance(b, tuple), "torch raised nothing"
    assert a == b


# -- where wgrad raises and torch does not (wgrad never differs silently) ---------------

@pytest.mark.parametrize("call, match", [
    # torch 2.13's gradient with respect to input is the complement of the right one
    (lambda: wgrad.as_strided_scatter(wgrad.ones(2, 3, requires_grad=True), wgrad.ones(2),
                                      (2,), (2,)).sum().backward(), "torch 2.13's is wrong"),
    # torch writes through a clone that keeps some layouts: its element order
    (lambda: wgrad.as_strided_scatter(wgrad.ones(2, 3).t(), wgrad.ones(2), (2,), (1,)),
     "non-contiguous"),
    # torch's results here are no draws (garbage, or a hang for an infinite count)
    (lambda: wgrad.binomial(wgrad.tensor([-1.]), wgrad.tensor([0.5])), "whole"),
    (lambda: wgrad.binomial(wgrad.tensor([2.5]), wgrad.tensor([0.5])), "whole"),
    (lambda: wgrad.binomial(wgrad.tensor([math.inf]), wgrad.tensor([0.5])), "whole"),
    (lambda: wgrad.binomial(wgrad.tensor([math.nan]), wgrad.tensor([0.5])), "whole"),
    (lambda: wgrad.binomial(wgrad.tensor([3.]), wgrad.tensor([1.5])), "whole"),
    (lambda: wgrad.poisson(wgrad.tensor([math.inf])), "rate"),
    # strides of size-1 dims of a view, which wgrad does not keep
    (lambda: wgrad.zeros(4, 1, 3).transpose(0, 2).dim_order(), "size-1"),
    (lambda: wgrad.empty_strided((2, 1, 3), (3, 7, 1)), "strides"),
    (lambda: wgrad.view_copy(wgrad.zeros(2), wgrad.int32), "view_copy\\(dtype\\)"),
    (lambda: wgrad.t_copy(wgrad.ones(2), out=wgrad.ones(2)), "out="),
    (lambda: wgrad.set_default_device("cpu:1"), "out of range"),
    # coordinates of another length than the dim: torch reads what it finds
    (lambda: wgrad.gradient(wgrad.ones(4), spacing=(wgrad.arange(3.),)), "coordinates"),
])
def test_unsupported_raises(call, match):
    with pytest.raises((NotImplementedError, RuntimeError), match=match):
        call()


def test_binomial_nan_and_poisson_zero_match_torch():
    for T in (wgrad, torch):
        b = T.binomial(T.tensor([3., 0., 4.]), T.tensor([math.nan, math.nan, 1.]))
        assert np.isnan(_np(b)[0]) and _np(b)[1:].tolist() == [0., 4.]
        assert _np(T.poisson(T.zeros(3, dtype=T.float64))).tolist() == [0., 0., 0.]


# -- the copies never alias their input --------------------------------------------------

COPIES = [
    lambda T, x: T.alias_copy(x), lambda T, x: T.as_strided_copy(x, (2,), (1,)),
    lambda T, x: T.detach_copy(x), lambda T, x: T.diagonal_copy(x),
    lambda T, x: T.expand_copy(x, (2, 3)), lambda T, x: T.narrow_copy(x, 1, 0, 2),
    lambda T, x: T.permute_copy(x, (1, 0)), lambda T, x: T.select_copy(x, 0, 1),
    lambda T, x: T.slice_copy(x, 1, 1), lambda T, x: T.split_copy(x, 1)[1],
    lambda T, x: T.split_with_sizes_copy(x, [2, 1], 1)[0], lambda T, x: T.squeeze_copy(x),
    lambda T, x: T.t_copy(x), lambda T, x: T.transpose_copy(x, 0, 1),
    lambda T, x: T.unbind_copy(x)[0], lambda T, x: T.unfold_copy(x, 1, 2, 1),
    lambda T, x: T.unsqueeze_copy(x, 0), lambda T, x: T.view_copy(x, (6,)),
    lambda T, x: T.view_as_real_copy(x.to(T.complex128)),
    lambda T, x: T.view_as_complex_copy(x[:, :2].contiguous()),
]


@pytest.mark.parametrize("k", range(len(COPIES)))
def test_copies_do_not_alias(k):
    def run(T):
        x = _t(T, _X23)
        r = COPIES[k](T, x)
        before = x._version
        other = r.untyped_storage().data_ptr() != x.untyped_storage().data_ptr()
        r.fill_(7.)
        return x, np.array((r._base is None, other, x._version - before, r._version))
    a, b = _run(wgrad, run), _run(torch, run)
    np.testing.assert_array_equal(a[0], _X23)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_copies_of_views_and_leaves_keep_their_history():
    x = wgrad.ones(2, 3, dtype=wgrad.float64, requires_grad=True)
    r = wgrad.t_copy(wgrad.ones(3, dtype=wgrad.float64, requires_grad=True))
    assert r.requires_grad and not r.is_leaf  # a 1-D t() returns the leaf itself
    y = x * 2
    v = wgrad.narrow_copy(y, 1, 0, 2)
    y.mul_(3)  # the copy does not see it, its gradient is the view's
    assert v.tolist() == [[2., 2.], [2., 2.]]
    v.sum().backward()
    assert x.grad.tolist() == [[2., 2., 0.], [2., 2., 0.]]
    with wgrad.no_grad():
        assert not wgrad.detach_copy(x).requires_grad and not wgrad.t_copy(x).requires_grad


def test_copies_carry_tangents():
    fw = wgrad.autograd.forward_ad
    with fw.dual_level():
        x = fw.make_dual(wgrad.tensor(_X23), wgrad.tensor(_X23 * 2))
        t = fw.unpack_dual(wgrad.t_copy(x)).tangent
    np.testing.assert_allclose(t.numpy(), _X23.T * 2)


# -- gradients ----------------------------------------------------------------------------

def _c(*shape):
    return _RNG.standard_normal(shape) + 1j * _RNG.standard_normal(shape)


# name -> (fn(T, *inputs), input arrays (complex where torch differentiates complex
# inputs)[, "once"]): gradcheck runs on the arrays and on their real parts, "once" on the
# arrays only (the op takes complex inputs only, or it is a view whose real path is the
# same code: the copies checked on both cover the real path)
GRADS = {
    "alias_copy": (lambda T, x: T.alias_copy(x), [_c(2, 3)], "once"),
    "as_strided_copy": (lambda T, x: T.as_strided_copy(x, (2, 2), (1, 2), 1), [_c(2, 3)]),
    "diagonal_copy": (lambda T, x: T.diagonal_copy(x, 1, 0, 2), [_c(2, 3, 3)], "once"),
    "expand_copy": (lambda T, x: T.expand_copy(x, (2, 2, 3)), [_c(1, 3)]),
    "narrow_copy": (lambda T, x: T.narrow_copy(x, 1, 1, 2), [_c(2, 3)], "once"),
    "permute_copy": (lambda T, x: T.permute_copy(x, (2, 0, 1)), [_c(2, 3, 2)], "once"),
    "select_copy": (lambda T, x: T.select_copy(x, 1, -1), [_X23]),
    "slice_copy": (lambda T, x: T.slice_copy(x, 1, 0, None, 2), [_X23]),
    "split_copy": (lambda T, x: T.split_copy(x, 2, 1), [_c(2, 3)], "once"),
    "split_with_sizes_copy": (lambda T, x: T.split_with_sizes_copy(x, [1, 2], 1), [_c(2, 3)],
                              "once"),
    "squeeze_copy": (lambda T, x: T.squeeze_copy(x, 0), [_c(1, 3)], "once"),
    "t_copy": (lambda T, x: T.t_copy(x), [_c(2, 3)]),
    "t_copy_1d": (lambda T, x: T.t_copy(x), [_c(3)]),
    "transpose_copy": (lambda T, x: T.transpose_copy(x, 0, -1), [_c(2, 3, 2)], "once"),
    "unbind_copy": (lambda T, x: T.unbind_copy(x, 1), [_c(2, 3)], "once"),
    "unfold_copy": (lambda T, x: T.unfold_copy(x, 1, 2, 1), [_c(2, 3)], "once"),
    "unsqueeze_copy": (lambda T, x: T.unsqueeze_copy(x, 1), [_c(2, 3)], "once"),
    "view_copy": (lambda T, x: T.view_copy(x.t(), (6,)), [_c(2, 3)]),
    "view_as_real_copy": (lambda T, x: T.view_as_real_copy(x), [_c(2, 3)], "once"),
    "view_as_real_copy_conj": (lambda T, x: T.view_as_real_copy(x.conj()), [_c(3)], "once"),
    "as_strided_scatter_src": (lambda T, s: T.as_strided_scatter(
        T.tensor(_X23, dtype=s.dtype), s, (2,), (2,), 1), [_c(2)]),
    # the inputs of VALUES["gradient"] (its kernels are shared)
    "gradient": (lambda T, x: T.gradient(x), [_G33], "once"),
    "gradient_order_2": (lambda T, x: T.gradient(x, spacing=[2., 0.5], edge_order=2), [_G33],
                         "once"),
    "gradient_coordinates": (lambda T, x, c: T.gradient(x, spacing=(c,), dim=1, edge_order=2),
                             [_G33, _X3], "once"),
}


def _tensors(T, arrays, real=False):
    return [_t(T, a.real if real else a, rg=True) for a in arrays]


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays, *only = GRADS[name]
    for real in (False,) if only else (False, True):
        check_op(lambda *xs: fn(wgrad, *xs), _tensors(wgrad, arrays, real),
                 gradgrad=not real, fast_mode=True)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_agree_with_torch(name):
    fn, arrays = GRADS[name][:2]
    assert_grads_agree(*(grads(T, fn, _tensors(T, arrays)) for T in (wgrad, torch)))


def test_zero_gradient_of_the_draws():
    # torch's nodes: the draws take no gradient to their parameters or the old values
    for T in (wgrad, torch):
        rate = T.tensor([1., 4.], dtype=T.float64, requires_grad=True)
        T.poisson(rate).sum().backward()
        assert rate.grad.tolist() == [0., 0.]
        x = T.ones(2, requires_grad=True)
        for fill in (lambda y: y.random_(), lambda y: y.random_(3), lambda y: y.random_(1, 3),
                     lambda y: y.cauchy_(), lambda y: y.geometric_(0.5),
                     lambda y: y.log_normal_()):
            y = x * 1
            fill(y)
            name = y.grad_fn.name()
            y.sum().backward()
            assert x.grad.tolist() == [0., 0.], name
            x.grad = None
    names = [(lambda y: y.random_(1, 3))(T.ones(2, requires_grad=True) * 1).grad_fn.name()
             for T in (wgrad, torch)]
    assert names[0] == names[1] == "RandomBackward0"


def test_poisson_node_against_jax():
    # the draw is a constant of the rate: conj(jax.vjp) of a stop_gradient is zero
    rate = wgrad.tensor([1., 4., 0.5], dtype=wgrad.float64, requires_grad=True)
    wgrad.manual_seed(4)
    draw = jnp.asarray(wgrad.poisson(rate.detach())._data)

    def wfn(r):
        wgrad.manual_seed(4)
        return wgrad.poisson(r)
    assert_jax_identity(wfn, lambda r: draw + 0 * jax.lax.stop_gradient(r), [rate])


def test_no_derivative_outputs_require_grad_as_torch():
    for T in (wgrad, torch):
        x = T.ones(3, requires_grad=True)
        h = T.histogram(x, 2)
        assert h.hist.requires_grad and h.bin_edges.requires_grad
        assert T.detach_copy(x).requires_grad
        assert T.binomial(x * 3, T.full((3,), 0.5)).requires_grad
        with T.no_grad():
            assert not T.histogram(x, 2).hist.requires_grad


# -- random draws: distributions, reproducibility, dtypes -------------------------------

def _draws(seed=0):
    wgrad.manual_seed(seed)
    return {
        "random_from_to": wgrad.zeros(20000, dtype=wgrad.float64).random_(2, 7),
        "random_to": wgrad.zeros(20000, dtype=wgrad.int32).random_(5),
        "cauchy": wgrad.zeros(20000, dtype=wgrad.float64).cauchy_(1., 2.),
        "geometric": wgrad.zeros(20000, dtype=wgrad.int64).geometric_(0.25),
        "log_normal": wgrad.zeros(20000, dtype=wgrad.float64).log_normal_(0.5, 0.75),
        "multinomial": wgrad.multinomial(wgrad.tensor([0.1, 0., 0.6, 0.3]), 20000, True),
        "multinomial_rows": wgrad.multinomial(wgrad.tensor([[1., 0., 3., 4.]] * 5000), 3),
        "poisson": wgrad.poisson(wgrad.full((20000,), 3.5, dtype=wgrad.float64)),
        "binomial": wgrad.binomial(wgrad.full((20000,), 10.), wgrad.full((20000,), 0.3)),
    }


def _within(sample, mean, sd, z=4):
    """The sample mean within ``z`` standard errors of ``mean``."""
    return abs(sample.mean() - mean) < z * sd / math.sqrt(sample.size)


def test_draws_follow_their_distributions():
    d = {k: v.numpy().astype(np.float64) for k, v in _draws().items()}
    r = d["random_from_to"]
    assert set(np.unique(r)) == {2., 3., 4., 5., 6.} and _within(r, 4., math.sqrt(2.))
    assert set(np.unique(d["random_to"])) == {0., 1., 2., 3., 4.}
    # the Cauchy median: standard error pi * sigma / (2 sqrt(n))
    assert abs(np.median(d["cauchy"]) - 1.) < 4 * math.pi * 2. / (2 * math.sqrt(20000))
    g = d["geometric"]
    assert g.min() == 1 and _within(g, 4., math.sqrt(0.75) / 0.25)
    lg = np.log(d["log_normal"])
    assert _within(lg, 0.5, 0.75) and abs(lg.std() / 0.75 - 1) < 0.05
    m = d["multinomial"]
    freq = np.bincount(m.astype(np.int64), minlength=4) / m.size
    assert freq[1] == 0 and np.all(np.abs(freq - [0.1, 0., 0.6, 0.3]) < 0.02)
    rows = d["multinomial_rows"].astype(np.int64)
    assert all(len(set(row)) == 3 and 1 not in row for row in rows)  # without replacement
    first = np.bincount(rows[:, 0], minlength=4) / rows.shape[0]
    assert np.all(np.abs(first - [0.125, 0., 0.375, 0.5]) < 0.03)
    assert _within(d["poisson"], 3.5, math.sqrt(3.5))
    assert _within(d["binomial"], 3., math.sqrt(10 * 0.3 * 0.7))


def test_draws_are_reproducible_and_typed():
    a, b, c = _draws(1), _draws(1), _draws(2)
    for k in a:
        assert a[k].tolist() == b[k].tolist(), k
        assert a[k].tolist() != c[k].tolist(), k
    dtypes = {"random_from_to": "float64", "random_to": "int32", "cauchy": "float64",
              "geometric": "int64", "log_normal": "float64", "multinomial": "int64",
              "multinomial_rows": "int64", "poisson": "float64", "binomial": "float32"}
    assert {k: v.dtype.name for k, v in a.items()} == dtypes
    assert a["multinomial_rows"].shape == (5000, 3)
    gen = wgrad.manual_seed(9)
    x = wgrad.zeros(5).random_(10, generator=gen)
    wgrad.manual_seed(9)
    assert wgrad.zeros(5).random_(10).tolist() == x.tolist()
    # multinomial without replacement picks categories of weight 0 last, in order (torch)
    for T in (wgrad, torch):
        assert T.multinomial(T.tensor([0., 1., 0.]), 3).tolist() == [1, 0, 2]


def test_random_fills_write_through_views():
    x = wgrad.zeros(2, 4)
    v = x[1]
    v.random_(3, 4)
    assert x.tolist() == [[0.] * 4, [3.] * 4] and x._version == 1
    assert wgrad.zeros(0).random_().shape == (0,)


# -- metadata, runtime settings -----------------------------------------------------------

def test_shared_memory_flag():
    for T in (wgrad, torch):
        x = T.zeros(3, device="cpu")
        v = x[1:]
        assert not x.is_shared() and x.share_memory_() is x
        assert x.is_shared() and v.is_shared() and not T.zeros(1, device="cpu").is_shared()
    if wgrad.cuda.is_available():  # as torch's: a GPU tensor counts as shared
        assert wgrad.zeros(1, device="cuda").is_shared()


def test_as_subclass_is_a_view_in_the_graph():
    class Mine(wgrad.Tensor):
        pass
    x = wgrad.ones(3, requires_grad=True)
    y = x.as_subclass(Mine)
    assert type(y) is Mine and y._base is x and y.requires_grad and not y.is_leaf
    (y * 2).sum().backward()
    assert x.grad.tolist() == [2., 2., 2.]
    z = wgrad.zeros(2)
    w = z.as_subclass(Mine)
    z.add_(1)
    assert w.tolist() == [1., 1.] and w._version == 1


def test_detach__and_as_strided__functions():
    x = wgrad.ones(2, requires_grad=True) * 2
    assert wgrad.detach_(x) is x and not x.requires_grad
    y = wgrad.arange(6.)
    assert wgrad.as_strided_(y, (2, 2), (1, 2)) is y and y.tolist() == [[0., 2.], [1., 3.]]


def test_runtime_settings():
    assert wgrad.set_default_device("cpu") is None
    assert str(wgrad.get_default_device()) == "cpu"
    assert wgrad.set_default_device(None) is None
    assert str(wgrad.get_default_device()) == ("cuda:0" if wgrad.cuda.is_available() else "cpu")
    if not wgrad.cuda.is_available():
        with pytest.raises(RuntimeError, match="no cuda device"):
            wgrad.set_default_device("cuda")
    with pytest.raises(RuntimeError, match="Expected one of"):
        wgrad.set_default_device("foo")
    wgrad.set_warn_always(True)
    assert wgrad.is_warn_always_enabled()
    wgrad.set_warn_always(False)
    assert not wgrad.is_warn_always_enabled()
    # XLA's CPU kernels flush subnormals: keeping them cannot be set
    assert wgrad.set_flush_denormal(True) and not wgrad.set_flush_denormal(False)
    assert not wgrad.is_autocast_enabled("cuda")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch warns once a process: wgrad on every call
        with pytest.raises(UserWarning, match="non-inplace resize is deprecated"):
            wgrad.zeros(4).resize(2, 2)
