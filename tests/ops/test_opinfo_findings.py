"""Cases where a pass over torch's OpInfo samples (2026-11-27) found wgrad differing from
torch: each compares values, gradients or the error with torch itself."""
import math

import numpy as np
import pytest

import wgrad
from _outcome import outcome

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(7)
_X, _LO, _HI = (_RNG.standard_normal(8) for _ in range(3))  # lo > hi at some elements
_X[0], _LO[0], _HI[0] = -2., 1., 0.  # below both bounds, lo > hi: the result is hi


def _t(T, a, rg=False, dtype=None):
    return T.tensor(a, dtype=dtype or T.float64, requires_grad=rg)


def _run(T, fn):
    """``fn(T)`` as numpy arrays (tensors, with gradients) or ``(type, message)``."""
    r = outcome(T, fn)
    return r if isinstance(r, tuple) else [
        x.detach().numpy() if hasattr(x, "detach") else np.asarray(x) for x in r]


def _clamp_grads(T):
    x, lo, hi = _t(T, _X, True), _t(T, _LO, True), _t(T, _HI, True)
    (T.clamp(x, lo, hi) * _t(T, np.arange(8.))).sum().backward()
    return x.grad, lo.grad, hi.grad


def _clamp_jvp(T):
    fw = T.autograd.forward_ad
    with fw.dual_level():
        d = [fw.make_dual(_t(T, v), _t(T, np.full(8, k))) for k, v in
             ((1., _X), (2., _LO), (3., _HI))]
        return fw.unpack_dual(T.clamp(*d)).tangent


def _digamma_grad(T):
    x = _t(T, [-100.3, -8.3157, -3.7, 0.4, 2.5], True)
    T.digamma(x).sum().backward()
    return x.grad


_C = _RNG.standard_normal((3, 5)) * 3 + 1j * _RNG.standard_normal((3, 5)) * 3


def _logaddexp_complex(T):
    a = _t(T, [1 + 1j, 2 - 3j, -1 + 0.5j], True, T.complex128)
    b = _t(T, [0.5 + 2j, 2 + 3j, 4 - 1j], True, T.complex128)
    r = T.logaddexp(a, b)
    (r * _t(T, [1 + 1j, 2, 1j], dtype=T.complex128)).real.sum().backward()
    return r, a.grad, b.grad


_LSTSQ_A = [[1., 2.], [3., 4.], [5., 7.]]
_PINV_A = _RNG.standard_normal((3, 4, 3))
_PINV_A[0, :, 2] = _PINV_A[0, :, 1] * 2  # rank deficient
_NAN = float("nan")
_TD_A, _TD_B = _RNG.standard_normal((1, 1, 3)), _RNG.standard_normal((2, 4, 2))

def _not_reparameterized(T):
    # torch's normal/bernoulli give their tensor arguments a zero gradient (wgrad's normal
    # passed the draw's derivative: 1 to mean, the noise to std)
    m, sd = _t(T, [0.3, 0.7], True), _t(T, [1., 2.], True)
    draws = (T.normal(m, 1.0), T.normal(0.0, sd), T.normal(m, sd), T.bernoulli(m))
    grads = T.autograd.grad(sum(d.sum() for d in draws), (m, sd))
    return (*grads, *(np.array(type(d.grad_fn).__name__) for d in draws))


def _fmax_fmin(T):
    a = _t(T, [1., _NAN, 2., 3., _NAN], True)
    b = _t(T, [1., 3., _NAN, 1., _NAN], True)
    r = (T.fmax(a, b), T.fmin(a, b), a.fmax(b))
    return (*r, *T.autograd.grad(sum(v.sum() * k for k, v in enumerate(r, 1)), (a, b)))


def _inplace_variants(T):
    x = _t(T, [1., 2., 3.], True)
    y = x * 1
    y.cumsum_(0)
    y.cumprod_(0)
    m = _t(T, [[1., 2.], [3., 4.]], True) * 1
    m0 = m.detach().clone()  # an operand aliasing m: PyTorch's value depends on its BLAS
    m.addmm_(m0, m0, beta=2)
    v = _t(T, [1., 2.]).addmv_(_t(T, [[1., 2.], [3., 4.]]), _t(T, [1., -1.]))
    b = T.ones(2, 2, dtype=T.float64).addbmm_(T.ones(3, 2, 2, dtype=T.float64),
                                              T.ones(3, 2, 2, dtype=T.float64))
    c = T.ones(3, 2, 2, dtype=T.float64).baddbmm_(T.ones(3, 2, 2, dtype=T.float64),
                                                  T.ones(3, 2, 2, dtype=T.float64), alpha=0.5)
    g = _t(T, [1., 2.]).igamma_(_t(T, [0.5, 1.]))
    f = _t(T, [1., 2.]).float_power_(2)
    return (y, m, v, b, c, g, f, *T.autograd.grad(y.sum() + m.sum(), x))


def _comparison_inplace(T, name, other):
    """A comparison in place on a float tensor inside autograd: its node (a number or a
    tensor overload), its value and the zero gradients it passes."""
    x = _t(T, [1., -2., 0.5], True)
    o = _t(T, [0.5, 0.5, 0.5], True) if other is None else other
    y = x * 1
    getattr(y, name)(o)
    gs = T.autograd.grad(y.sum(), (x, o) if other is None else (x,))
    return (np.asarray(type(y.grad_fn).__name__), np.asarray(len(y.grad_fn.next_functions)),
            y, *gs)


def _cholesky_lower(T):
    """linalg.cholesky reads the lower triangle (wgrad symmetrized: a wrong factor, or a
    wrong error, for a non-symmetric input), and its gradient is torch's."""
    x = _t(T, [[4., 100.], [2., 5.]], True)
    L = T.linalg.cholesky(x)
    return (L, *T.autograd.grad((L * _t(T, [[1., 2.], [3., 4.]])).sum(), x))


def _cholesky_batch_message(T):
    try:  # torch's exception class is torch._C._LinAlgError: compare the message
        T.linalg.cholesky(T.stack([T.eye(2), -T.eye(2)]).double())
    except Exception as e:  # noqa: BLE001
        return np.asarray(str(e))


_COMPLEX_PAIR = (lambda T: T.tensor([1 + 1j, 2j]), lambda T: T.tensor([1j, 1j]))


CASES = {
    "fmax_fmin": _fmax_fmin,
    "fmax_number_other": lambda T: T.fmax(T.ones(2), 0.5),
    "isposinf_isneginf": lambda T: (T.isposinf(_t(T, [math.inf, -math.inf, 1.])),
                                    _t(T, [math.inf, -math.inf]).isneginf()),
    "isposinf_complex": lambda T: T.isposinf(_t(T, [1j], dtype=T.complex128)),
    "inplace_variants": _inplace_variants,
    "float_power_inplace_float32": lambda T: T.ones(2).float_power_(2),
    "casters": lambda T: (T.tensor([1.5, -3.]).char(), T.tensor([1.5, 200.]).byte(),
                          T.tensor([1.5, -3.]).short(),
                          T.tensor([1.5, -3.]).bfloat16().float()),
    "normal_bernoulli_zero_grad": _not_reparameterized,
    # clamp with tensor bounds where min > max: only max takes the gradient (torch's
    # clamp_backward_min_max); wgrad gave both
    "clamp_tensor_bounds_grad": _clamp_grads,
    "clamp_min_only_grad": lambda T: (lambda x, lo: T.autograd.grad(
        T.clamp(x, lo).sum(), (x, lo)))(_t(T, _X, True), _t(T, _LO, True)),
    "clamp_tensor_bounds_jvp": _clamp_jvp,
    # JAX's polygamma is wrong far below 0 (trigamma(-100.3) came out -0.0099)
    **{f"polygamma_{n}_negative": (lambda n: lambda T: T.polygamma(
        n, _t(T, [-100.3, -8.3157, -3.7, -0.5, 0.01, 2.5])))(n) for n in (1, 2, 3)},
    "digamma_grad_negative": _digamma_grad,
    # complex logcumsumexp carries the imaginary part as torch (not wrapped to (-pi, pi])
    "logcumsumexp_complex": lambda T: T.logcumsumexp(_t(T, _C, dtype=T.complex128), 1),
    "logcumsumexp_complex_inf_nan": lambda T: T.logcumsumexp(_t(
        T, [1 + 1j, -math.inf, complex(math.inf, 2), _NAN, 3 - 2j], dtype=T.complex128), 0),
    "logaddexp_complex": _logaddexp_complex,
    "logaddexp_mixed": lambda T: T.logaddexp(_t(T, [1., 2.]),
                                             _t(T, [1 + 1j, 0j], dtype=T.complex128)),
    # where's condition must be bool (uint8 deprecated)
    "where_float_condition": lambda T: T.where(_t(T, [1., 0.]), _t(T, [1., 2.]), 0.),
    "where_long_condition": lambda T: _t(T, [1., 2.]).where(T.tensor([1, 0]), 0.),
    "where_uint8_condition": lambda T: T.where(T.tensor([1, 0], dtype=T.uint8),
                                               _t(T, [1., 2.]), _t(T, [3., 4.])),
    "complex_broadcasts": lambda T: T.complex(_t(T, [[1.], [2.]]), _t(T, [3., 4., 5.])),
    # zero-size batches
    "unfold_empty_batch": lambda T: T.nn.functional.unfold(T.zeros(0, 1, 5, 5), 2),
    "bilinear_empty_batch": lambda T: T.nn.functional.bilinear(
        T.zeros(0, 3), T.zeros(0, 4), T.ones(5, 3, 4), T.ones(5)),
    "einsum_broadcast_zero": lambda T: T.einsum("ij,j->i", T.ones(2, 1), T.ones(0)),
    # tensordot: a contracted size 1 broadcasts
    "tensordot_size_one": lambda T: T.tensordot(_t(T, _TD_A), _t(T, _TD_B),
                                                dims=([0, 1], [2, 0])),
    # lstsq: rank from every driver but gels, singular values from gelsd/gelss
    **{f"lstsq_{d}": (lambda d: lambda T: tuple(T.linalg.lstsq(
        _t(T, _LSTSQ_A), T.ones(3, 2, dtype=T.float64), driver=d)))(d)
       for d in ("gels", "gelsy", "gelsd", "gelss")},
    "lstsq_bad_driver": lambda T: T.linalg.lstsq(_t(T, _LSTSQ_A), _t(T, _LSTSQ_A),
                                                 driver="foo"),
    # pinv's atol/rtol (were NotImplementedError) and pinverse's rcond (was ignored)
    "pinv_atol": lambda T: T.linalg.pinv(_t(T, _PINV_A), atol=0.5),
    "pinv_rtol": lambda T: T.linalg.pinv(_t(T, _PINV_A), rtol=0.3),
    "pinv_atol_tensor": lambda T: T.linalg.pinv(_t(T, _PINV_A), atol=_t(T, [0., 1., 2.])),
    "pinv_hermitian_atol": lambda T: T.linalg.pinv(
        _t(T, _PINV_A[:, :3] + _PINV_A[:, :3].transpose(0, 2, 1)), atol=1.0, hermitian=True),
    "pinverse_rcond": lambda T: T.pinverse(_t(T, _PINV_A), rcond=0.4),
    # circular padding with a negative width crops first and wraps what is left (wgrad
    # wrapped the uncropped input); sizes below 1 raise torch's errors
    "pad_circular_crop": lambda T: T.nn.functional.pad(
        T.arange(48.).reshape(1, 3, 4, 4), [-1, 1, -2, 1], mode="circular"),
    "pad_circular_crop_3d": lambda T: T.nn.functional.pad(
        T.arange(48.).reshape(1, 1, 3, 4, 4), [1, -2, 0, 2, -1, 1], mode="circular"),
    "pad_circular_negative_size": lambda T: T.nn.functional.pad(T.ones(1, 2, 3), [-2, -2],
                                                                mode="circular"),
    "pad_reflect_too_small": lambda T: T.nn.functional.pad(T.ones(1, 2, 4, 4), [-2] * 4,
                                                           mode="reflect"),
    "pad_replicate_too_small": lambda T: T.nn.functional.pad(T.ones(1, 2, 4, 4), [-2] * 4,
                                                             mode="replicate"),
    # pinv(hermitian=True) reads the lower triangle, as torch's eigh
    "pinv_hermitian_lower": lambda T: T.linalg.pinv(_t(T, _PINV_A[0, :3]), hermitian=True),
    # take_along_dim takes indices modulo the size; flattened, negative ones raise
    "take_along_dim_modulo": lambda T: T.take_along_dim(
        T.arange(15.).reshape(3, 5), T.tensor([[-6, 5, 4]]), 1),
    "take_along_dim_flat_negative": lambda T: T.take_along_dim(T.arange(15.),
                                                               T.tensor([-1, 0])),
    "gather_empty_index": lambda T: T.gather(T.ones(3), 0, T.zeros(2, 0, dtype=T.long)),
    "linspace_integer_truncates": lambda T: (T.linspace(-2, -3, 5, dtype=T.int64),
                                             T.linspace(-5.5, 5.5, 4, dtype=T.int64)),
    "broadcast_shapes_ints": lambda T: np.array(T.broadcast_shapes([5, 1], 5)),
    "cumsum_into_bool_out": lambda T: T.cumsum(T.ones(2), 0, out=T.empty(0, dtype=T.bool)),
    "cumsum_into_long_out": lambda T: T.cumsum(_t(T, [0.5, 0.7, 0.9]), 0,
                                               out=T.empty(0, dtype=T.int64)),
    "abs_inplace_complex": lambda T: T.tensor([1 + 1j, 2j]).abs_(),
    "to_memory_format": lambda T: T.ones(2).to(T.float64, memory_format=T.preserve_format),
    # in-place comparisons keep a node with zero gradient (wgrad cut the history)
    **{f"{n}_inplace_{k}": (lambda n, o: lambda T: _comparison_inplace(T, n, o))(n, o)
       for n in ("eq_", "ne_", "lt_", "le_", "gt_", "ge_", "greater_", "not_equal_")
       for k, o in (("tensor", None), ("number", 0.5))},
    # complex numbers have no order: torch raises (wgrad compared them)
    **{f"{n}_complex": (lambda n: lambda T: getattr(T, n)(
        _COMPLEX_PAIR[0](T), _COMPLEX_PAIR[1](T)))(n) for n in ("gt", "ge", "lt", "le",
                                                                 "greater", "less_equal")},
    "gt_inplace_complex": lambda T: _COMPLEX_PAIR[0](T).gt_(0),
    "clamp_complex": lambda T: T.clamp(_COMPLEX_PAIR[0](T), 0),
    "hardtanh_complex": lambda T: T.nn.functional.hardtanh(_COMPLEX_PAIR[0](T)),
    "topk_complex": lambda T: T.topk(_COMPLEX_PAIR[0](T), 1),
    "kthvalue_complex": lambda T: T.kthvalue(_COMPLEX_PAIR[0](T), 1),
    "median_complex": lambda T: T.median(_COMPLEX_PAIR[0](T)),
    "median_dim_complex": lambda T: T.median(_COMPLEX_PAIR[0](T), 0),
    "nanmedian_dim_complex": lambda T: T.nanmedian(_COMPLEX_PAIR[0](T), 0),
    "linalg_cholesky_lower_triangle": _cholesky_lower,
    "linalg_cholesky_batch_error": _cholesky_batch_message,
    # expand names the mismatching dimension counting from the last, as torch
    **{f"expand_error_{i}": (lambda a, b: lambda T: T.ones(*a).expand(*b))(a, b)
       for i, (a, b) in enumerate((((3, 3), (2, 2)), ((3,), (-1, 5)), ((1, 3), (-1, 2, 4))))},
    # nanmedian along a dim (was NotImplementedError): values, indices and gradient
    "nanmedian_dim": lambda T: (lambda x: (lambda r: (r.values, r.indices, T.autograd.grad(
        r.values.sum(), x)[0]))(T.nanmedian(x, 1)))(_t(
            T, [[_NAN, 1., 3., 2.], [5., _NAN, 4., _NAN], [1., 2., 2., 7.]], True)),
    # logical ops in place record no node: the tensor keeps its history, a leaf that requires
    # grad may take them, and the gradient ignores the change (it cut the history before)
    **{f"{op}_keeps_history": (lambda op: lambda T: _logical_inplace(T, op))(op)
       for op in ("logical_not_", "logical_and_", "logical_or_", "logical_xor_")},
    # scatter(reduce="multiply") (was NotImplementedError): values, in place, a number, an
    # integer tensor, torch's dtype error, and its NotImplemented node whose backward raises
    "scatter_multiply": lambda T: _scatter_multiply(T),
    "scatter_multiply_dtype": lambda T: T.ones(2).scatter(0, T.tensor([0]), _t(T, [2.]),
                                                          reduce="multiply"),
    "scatter_multiply_backward": lambda T: T.ones(3, requires_grad=True).scatter(
        0, T.tensor([0, 0]), 2., reduce="multiply").sum().backward(),
    # scatter(reduce="add") has no derivative in torch either (wgrad gave scatter_add's)
    "scatter_add_reduce": lambda T: _scatter_add_reduce(T),
    "scatter_add_reduce_backward": lambda T: T.ones(3).scatter(
        0, T.tensor([0, 0]), T.ones(2, requires_grad=True), reduce="add").sum().backward(),
    "scatter_add_reduce_value_backward": lambda T: T.ones(3, requires_grad=True).scatter(
        0, T.tensor([0, 0]), 2., reduce="add").sum().backward(),
}


def _scatter_multiply(T):
    x, idx = T.full((3, 2), 2.), T.tensor([[0, 1], [0, 0]])
    src = T.tensor([[3., 4.], [5., 6.]])
    y = x.clone()
    y.scatter_(0, idx, src, reduce="multiply")
    r = x.requires_grad_().scatter(0, idx, src, reduce="multiply")
    return (r.detach(), x.scatter(0, idx, 3.0, reduce="multiply").detach(), y,
            T.full((3, 2), 2).scatter(0, idx, 3, reduce="multiply"),
            np.array(r.grad_fn.name()))


def _scatter_add_reduce(T):
    x, idx = T.full((3, 2), 2.), T.tensor([[0, 1], [0, 0]])
    src = T.tensor([[3., 4.], [5., 6.]], requires_grad=True)
    r = x.scatter(0, idx, src, reduce="add")
    y = x.clone()
    y.scatter_(0, idx, 1.5, reduce="add")
    return r.detach(), y, np.array(r.grad_fn.name())


def _logical_inplace(T, op):
    a, x = _t(T, [1., 2., 0.], True), _t(T, [3., 4., 5.], True)
    other = () if op == "logical_not_" else (_t(T, [0., 1., 1.]),)
    leaf = _t(T, [1., 0., 2.], True)
    getattr(leaf, op)(*other)
    b = a * 1
    v = b._version
    getattr(b, op)(*other)
    name = np.array(b.grad_fn.name())
    (b * x).sum().backward()
    return leaf.detach(), b.detach(), a.grad, x.grad, name, b._version - v


@pytest.mark.parametrize("name", sorted(CASES))
def test_agrees_with_torch(name):
    a, b = _run(wgrad, CASES[name]), _run(torch, CASES[name])
    if isinstance(b, tuple):
        assert a == b
        return
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype
        if x.dtype.kind == "U":  # a node name
            assert x == y
        else:
            np.testing.assert_allclose(x, y, rtol=1e-7, atol=1e-9)


def test_new_formulas_gradcheck():
    # the formulas added with these fixes, against finite differences
    c = wgrad.tensor([[1 + 1j, 2 - 3j], [0.5 + 2j, 2.5 + 3j]], dtype=wgrad.complex128,
                     requires_grad=True)
    gc = wgrad.autograd.gradcheck
    assert gc(lambda a, b: wgrad.logaddexp(a, b), (c[0], c[1]))
    assert wgrad.autograd.gradgradcheck(lambda a, b: wgrad.logaddexp(a, b), (c[0], c[1]))
    assert gc(lambda x: wgrad.logcumsumexp(x, 1), (c,))
    x = wgrad.tensor(_RNG.standard_normal((4, 3)), requires_grad=True)
    assert gc(lambda a: wgrad.linalg.pinv(a, rtol=1e-3), (x,))
    assert gc(lambda a: wgrad.polygamma(2, a), (wgrad.tensor([-8.3, -3.7, 0.4],
                                                             dtype=wgrad.float64,
                                                             requires_grad=True),))
