"""One alias model (issue #20 part A): ``.data``, conj views, ``out=``, against torch."""
import warnings

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _run(T, fn):
    """``fn(T)`` -> its values as numpy (tensors) or ``(type, message)`` if it raises."""
    try:
        r = fn(T)
    except Exception as e:  # noqa: BLE001  (the exception is the value compared)
        return type(e).__name__, str(e).split(" (Triggered internally at ")[0]
    rs = r if isinstance(r, (tuple, list)) else (r,)
    return [np.asarray(x.detach().resolve_conj().resolve_neg().numpy()) if hasattr(x, "numpy") else x
            for x in rs]


def _same(fn):
    a, b = _run(wgrad, fn), _run(torch, fn)
    if isinstance(b, tuple):
        assert a == b
    else:
        assert len(a) == len(b)
        for x, y in zip(a, b):
            if isinstance(y, str):
                assert x == y
            else:
                np.testing.assert_allclose(x, y, rtol=1e-6, atol=1e-6)


# ======================================================================================
# .data
# ======================================================================================

def _data_mul_then_backward(T):
    x = T.tensor([2., 4.], requires_grad=True)
    y = (x * x).sum()
    x.data.mul_(2)
    y.backward()
    return x.grad, x.detach(), x._version


def _data_setitem(T):
    x = T.tensor([1., 2.])
    x.data[0] = 5
    return x


def _data_sgd_step(T):
    p = T.tensor([1., 2.], requires_grad=True)
    (p * p).sum().backward()
    p.data.add_(-0.1 * p.grad)
    q = T.tensor([1., 2.], requires_grad=True)
    q.data.copy_(T.tensor([7., 8.]))
    return p.detach(), q.detach(), p._version, p.data._version


def _data_of_view(T):
    v = T.zeros(4)
    w = v[1:3]
    w.data.fill_(1)
    w.data = T.ones(5)
    return v, w, w._base is v


def _data_setter(T):
    p = T.tensor([1., 2.], requires_grad=True)
    p.data = T.tensor([3., 4., 5.])
    o = T.zeros(2)
    q = T.zeros(2)
    q.data = o
    o.add_(1)
    return p.detach(), p.requires_grad, q, p._version, p.is_leaf


def _data_detached(T):
    x = T.tensor([1., 2.], requires_grad=True)
    d, d2 = x.data, x.detach()
    x.data.add_(1)
    y = x * 2
    return d, d2, d._version, x._version, d.requires_grad, y.data.requires_grad, \
        y.data.grad_fn is None, d._base is None


def _data_int_requires_grad(T):
    p = T.tensor([1., 2.], requires_grad=True)
    p.data = T.tensor([1, 2])


def _data_not_tensor(T):
    p = T.tensor([1., 2.])
    p.data = [1, 2]


@pytest.mark.parametrize("fn", [_data_mul_then_backward, _data_setitem, _data_sgd_step,
                                _data_of_view, _data_setter, _data_detached,
                                _data_int_requires_grad, _data_not_tensor])
def test_data_alias(fn):
    _same(fn)


# in-place random fills: torch's errors and graph; values by their distribution
@pytest.mark.parametrize("fn", [
    lambda T: T.zeros(2, dtype=T.long).normal_(),
    lambda T: T.zeros(2, dtype=T.long).uniform_(),
    lambda T: T.zeros(2).normal_(0, -1),
    lambda T: T.zeros(2).uniform_(1, 0),
    lambda T: T.zeros(2).exponential_(-1),
    lambda T: T.zeros(2).bernoulli_(2),
    lambda T: T.zeros(2, dtype=T.cfloat).exponential_(),
    lambda T: T.zeros(2, dtype=T.cfloat).bernoulli_(),
    lambda T: T.ones(2, requires_grad=True).normal_(),
    lambda T: T.zeros(3).bernoulli_(1.),
    lambda T: T.zeros(3).uniform_(2, 2),
    lambda T: T.zeros(3).normal_(3, 0),
])
def test_random_fill_errors(fn):
    _same(fn)


@pytest.mark.parametrize("name, args, mean, var", [
    ("normal_", (1., 2.), 1., 4.), ("uniform_", (-1., 3.), 1., 16 / 12),
    ("bernoulli_", (0.25,), 0.25, 0.25 * 0.75), ("exponential_", (2.,), 0.5, 0.25)])
def test_random_fill_distribution(name, args, mean, var):
    wgrad.manual_seed(0)
    x = wgrad.zeros(20000, dtype=wgrad.float64)
    w = x.data
    assert getattr(w, name)(*args) is w
    assert abs(x.mean().item() - mean) < 0.05 and abs(x.var().item() / var - 1) < 0.05
    y = wgrad.ones(2, requires_grad=True) * 1
    getattr(y, name)(*args)
    tname = getattr(torch.ones(2, requires_grad=True) * 1, name)(*args).grad_fn.name()
    assert y.grad_fn.name() == tname
    y.sum().backward()


# ======================================================================================
# conj views (NOTE [Conjugate views])
# ======================================================================================

def _conj_bits(T):
    z = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    c = z.conj()
    x = T.tensor([1., 2.], requires_grad=True)
    return (c.is_conj(), c._base is z, c.grad_fn.name(), c.clone().is_conj(),
            c.detach().is_conj(), c.data.is_conj(), c[0].is_conj(), (c * 1).is_conj(),
            c.resolve_conj().is_conj(), c.resolve_conj().grad_fn.name(),
            z.conj_physical().grad_fn.name(), z.conj_physical().is_conj(), x.conj() is x,
            x.resolve_conj() is x, z.resolve_conj() is z, c.imag.is_neg(), c.real.is_neg(),
            T.is_neg(c.imag), c.imag.resolve_neg().is_neg(), T.is_conj(c),
            z.conj().conj().is_conj(), c._is_view(), c.imag)


def _conj_write_through(T):
    w = T.tensor([1 + 2j, 3 - 1j])
    w.conj()[0] = 5 + 1j
    w.conj().mul_(1j)
    m = T.tensor([[1 + 1j, 2], [3j, 4]])
    m.H[0, 1] = 7
    return w, m, m.H.is_conj(), m.H._base is m, m.mH._base is m, m.mT._base is m, \
        m.adjoint()._base is m, T.adjoint(m).is_conj(), m.mT.is_conj()


def _conj_inplace_backward(T):
    z = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    a = z * 1
    a.conj().mul_(2)
    (a.real + 3 * a.imag).sum().backward()
    g1 = z.grad
    z2 = T.tensor([1 + 2j, 3 - 1j], requires_grad=True)
    a = z2 * 1
    a.conj()[1] = 2 * z2[0]
    (a * a.conj()).real.sum().backward()
    return g1, z2.grad, a


@pytest.mark.parametrize("fn", [
    _conj_bits, _conj_write_through, _conj_inplace_backward,
    lambda T: T.tensor([1 + 2j], requires_grad=True).conj().mul_(2),
    lambda T: T.tensor([1 + 2j]).conj().numpy(),
    lambda T: T.tensor([1 + 2j]).conj().imag.numpy(),
    lambda T: T.tensor([1 + 2j]).conj().numpy(force=True),
    lambda T: T.view_as_real(T.tensor([1 + 2j]).conj()),
    lambda T: T.view_as_real(T.tensor([1 + 2j]).conj().resolve_conj()),
    lambda T: T.ones(3).H, lambda T: T.ones(2, 3, 4).H, lambda T: T.ones(3).mH,
    lambda T: T.ones(3).mT, lambda T: T.ones(3).adjoint(), lambda T: T.ones(2, 3, 4).mH,
])
def test_conj_view(fn):
    _same(fn)


def test_conj_gradcheck():
    z = wgrad.tensor([[1 + 2j, 3 - 1j], [0.5j, 2.]], dtype=wgrad.complex128,
                     requires_grad=True)
    for f in (lambda z: z.conj(), lambda z: z.mH, lambda z: z.conj_physical(),
              lambda z: z.conj().resolve_conj(), lambda z: z.conj().imag.resolve_neg()):
        assert wgrad.autograd.gradcheck(f, (z,))


# ======================================================================================
# out= (NOTE [out= arguments])
# ======================================================================================

def _A(T, rg=False):
    return T.tensor([[2., 1.], [1., 3.]], requires_grad=rg)


# (call with out, the out to pass): values, version, identity of the returned out
_OUT_CALLS = [
    (lambda T, A, o: T.add(A, 1, out=o), lambda T: T.zeros(2, 2)),
    (lambda T, A, o: T.mul(A, A, out=o), lambda T: T.zeros(2, 2, dtype=T.float64)),
    (lambda T, A, o: T.exp(A, out=o), lambda T: T.empty(0)),
    (lambda T, A, o: T.sum(A, 0, out=o), lambda T: T.zeros(2)),
    (lambda T, A, o: T.cat([A, A], out=o), lambda T: T.empty(0)),
    (lambda T, A, o: T.stack([A, A], out=o), lambda T: T.empty(0)),
    (lambda T, A, o: T.matmul(A, A, out=o), lambda T: T.zeros(2, 2)),
    (lambda T, A, o: T.tensordot(A, A, out=o), lambda T: T.zeros(())),
    (lambda T, A, o: T.linalg.solve(A, A[0], out=o), lambda T: T.zeros(2)),
    (lambda T, A, o: T.linalg.inv(A, out=o), lambda T: T.zeros(2, 2)),
    (lambda T, A, o: T.linalg.det(A, out=o), lambda T: T.zeros(())),
    (lambda T, A, o: T.linalg.vector_norm(A, out=o), lambda T: T.zeros(())),
    (lambda T, A, o: T.linalg.cross(A.sum(0).repeat(2)[:3], A[0].repeat(2)[:3], out=o),
     lambda T: T.zeros(3)),
    (lambda T, A, o: T.linalg.eigh(A, out=o)[0], lambda T: (T.empty(0), T.empty(0))),
    (lambda T, A, o: T.linalg.svd(A, out=o).S, lambda T: (T.empty(0), T.empty(0), T.empty(0))),
    (lambda T, A, o: T.max(A, 1, out=o).indices, lambda T: (T.empty(0), T.empty(0, dtype=T.long))),
    (lambda T, A, o: T.fft.fft(A, out=o), lambda T: T.zeros(2, 2, dtype=T.complex64)),
]


@pytest.mark.parametrize("k", range(len(_OUT_CALLS)))
def test_out_writes(k):
    call, make = _OUT_CALLS[k]

    def run(T):
        o = make(T)
        x = T.zeros(3, 2, 2) if isinstance(o, T.Tensor) and tuple(o.shape) == (2, 2) else None
        if x is not None:  # out as a view: the write lands in its base
            o = x[1]
        r = call(T, _A(T), o)
        os_ = o if isinstance(o, tuple) else (o,)
        return (*os_, r, *(t._version for t in os_), x if x is not None else T.zeros(1),
                any(r is t for t in os_))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _same(run)


@pytest.mark.parametrize("fn", [
    lambda T: T.add(_A(T, True), 1, out=T.empty(0)),
    lambda T: T.sum(_A(T, True) * 2, 0, out=T.empty(0)),
    lambda T: T.cat([_A(T, True), _A(T)], out=T.empty(0)),
    lambda T: T.add(_A(T), 1, out=T.zeros(2, 2, requires_grad=True)),
    lambda T: T.linalg.solve(_A(T, True), _A(T), out=T.empty(0)),
    lambda T: T.linalg.inv(_A(T, True), out=T.empty(0)),
    lambda T: T.linalg.det(_A(T, True), out=T.empty(0)),
    lambda T: T.linalg.eigh(_A(T, True), out=(T.empty(0), T.empty(0))),
    lambda T: T.linalg.svd(_A(T, True), out=(T.empty(0),) * 3),
    lambda T: T.linalg.vector_norm(_A(T, True), out=T.empty(0)),
    lambda T: T.linalg.cross(T.ones(3, requires_grad=True), T.ones(3), out=T.empty(0)),
    lambda T: T.matmul(_A(T, True), _A(T), out=T.empty(0)),
    lambda T: T.add(_A(T), 1, out=T.zeros(2, dtype=T.long)),
    lambda T: T.linalg.inv(_A(T), out=T.zeros(2, 2, dtype=T.float64)),
    lambda T: T.linalg.det(_A(T), out=T.zeros((), dtype=T.float64)),
    lambda T: T.linalg.cross(T.ones(3), T.ones(3), out=T.empty(3, dtype=T.long)),
    lambda T: T.fft.fft(_A(T), out=T.empty(0)),
    lambda T: T.neg(_A(T), out=[1]),
    lambda T: T.linalg.svd(_A(T), out=T.empty(0)),
    lambda T: _A(T).add(1, out=T.empty(2)),
    lambda T: T.zeros_like(_A(T), out=T.empty(2)),
])
def test_out_errors(fn):
    a, b = _run(wgrad, fn), _run(torch, fn)
    assert isinstance(b, tuple) and a[0] == b[0]
    if "out" in b[1] and "argument" not in b[1]:  # torch's message, except the arg parser's
        assert a[1] == b[1]


def _x(T, rg=False):
    return T.tensor([[0.5, -1.5], [2.0, 0.25]], requires_grad=rg)


def _i(T):
    return T.tensor([[1, 0], [0, 1]])


# the ops given out= in 2026-11-27's pass over torch's OpInfos (every op whose OpInfo says
# it takes out=): name -> the call, given the module, the inputs' requires_grad and out
_OUT_OPS = {
    "acosh": lambda T, rg, o: T.acosh(_x(T, rg) + 2, out=o),
    "asinh": lambda T, rg, o: T.asinh(_x(T, rg), out=o),
    "atanh": lambda T, rg, o: T.atanh(_x(T, rg) / 4, out=o),
    "clamp_min": lambda T, rg, o: T.clamp_min(_x(T, rg), 0.3, out=o),
    "clamp_max": lambda T, rg, o: T.clamp_max(_x(T, rg), 0.3, out=o),
    "clamp_max_tensor": lambda T, rg, o: T.clamp_max(_x(T, rg), _x(T)[0], out=o),
    "clamp": lambda T, rg, o: T.clamp(_x(T, rg), 0, 1, out=o),  # number bounds: exact
    "clip_tensor": lambda T, rg, o: T.clip(_x(T, rg), max=_x(T)[1], out=o),  # a cast
    "copysign": lambda T, rg, o: T.copysign(_x(T, rg), -_x(T), out=o),
    "fmod": lambda T, rg, o: T.fmod(_x(T, rg), 0.7, out=o),
    "logaddexp2": lambda T, rg, o: T.logaddexp2(_x(T, rg), _x(T) * 2, out=o),
    "heaviside": lambda T, rg, o: T.heaviside(_x(T, rg), _x(T), out=o),
    "igamma": lambda T, rg, o: T.igamma(_x(T, rg).abs() + 1, _x(T).abs(), out=o),
    "igammac": lambda T, rg, o: T.igammac(_x(T, rg).abs() + 1, _x(T).abs(), out=o),
    "float_power": lambda T, rg, o: T.float_power(_x(T, rg), 2, out=o),
    "sinc": lambda T, rg, o: T.sinc(_x(T, rg), out=o),
    "signbit": lambda T, rg, o: T.signbit(_x(T, rg), out=o),
    "nan_to_num": lambda T, rg, o: T.nan_to_num(_x(T, rg).log(), out=o),
    "xlogy": lambda T, rg, o: T.xlogy(_x(T, rg), _x(T).abs(), out=o),
    "digamma": lambda T, rg, o: T.digamma(_x(T, rg), out=o),
    "erfc": lambda T, rg, o: T.erfc(_x(T, rg), out=o),
    "erfinv": lambda T, rg, o: T.erfinv(_x(T, rg) / 4, out=o),
    "lgamma": lambda T, rg, o: T.lgamma(_x(T, rg), out=o),
    "logit": lambda T, rg, o: T.logit(_x(T, rg).sigmoid(), out=o),
    "isin": lambda T, rg, o: T.isin(_x(T, rg), _x(T)[0], out=o),
    "softplus": lambda T, rg, o: T.nn.functional.softplus(_x(T, rg), out=o),
    "addmm": lambda T, rg, o: T.addmm(_x(T, rg), _x(T), _x(T), out=o),
    "addmv": lambda T, rg, o: T.addmv(_x(T, rg)[0], _x(T), _x(T)[1], out=o),
    "addbmm": lambda T, rg, o: T.addbmm(_x(T, rg), _x(T)[None], _x(T)[None], out=o),
    "baddbmm": lambda T, rg, o: T.baddbmm(_x(T, rg)[None], _x(T)[None], _x(T)[None], out=o),
    "mv": lambda T, rg, o: T.mv(_x(T, rg), _x(T)[0], out=o),
    "lstsq": lambda T, rg, o: T.linalg.lstsq(_x(T, rg), _x(T), out=o),
    "cross": lambda T, rg, o: T.cross(T.tensor([1., 2., 3.], requires_grad=rg),
                                      T.tensor([0., 1., 5.]), dim=0, out=o),
    "column_stack": lambda T, rg, o: T.column_stack([_x(T, rg), _x(T)], out=o),
    "dstack": lambda T, rg, o: T.dstack([_x(T, rg), _x(T)], out=o),
    "cummax": lambda T, rg, o: T.cummax(_x(T, rg), 0, out=o),
    "cummin": lambda T, rg, o: T.cummin(_x(T, rg), 1, out=o),
    "aminmax": lambda T, rg, o: T.aminmax(_x(T, rg), dim=0, out=o),
    "logcumsumexp": lambda T, rg, o: T.logcumsumexp(_x(T, rg), 0, out=o),
    "argmax": lambda T, rg, o: T.argmax(_x(T, rg), out=o),
    "argmin": lambda T, rg, o: T.argmin(_x(T, rg), 1, out=o),
    "nanmean": lambda T, rg, o: T.nanmean(_x(T, rg).log(), out=o),
    "nansum": lambda T, rg, o: T.nansum(_x(T, rg).log(), 0, out=o),
    "take": lambda T, rg, o: T.take(_x(T, rg), _i(T), out=o),
    "scatter": lambda T, rg, o: T.scatter(_x(T, rg), 0, _i(T), _x(T), out=o),
    "scatter_add": lambda T, rg, o: T.scatter_add(_x(T, rg), 1, _i(T), _x(T), out=o),
    "bucketize": lambda T, rg, o: T.bucketize(_x(T, rg), T.tensor([0., 1.]), out=o),
    "searchsorted": lambda T, rg, o: T.searchsorted(T.tensor([0., 1.]), _x(T, rg), out=o),
    "softmax": lambda T, rg, o: T.softmax(_x(T, rg), 0, out=o),
    "log_softmax": lambda T, rg, o: T.log_softmax(_x(T, rg), 1, out=o),
    "softshrink": lambda T, rg, o: T.nn.functional.softshrink(_x(T, rg), out=o),
    "hardshrink": lambda T, rg, o: T.nn.functional.hardshrink(_x(T, rg), out=o),
    "gelu": lambda T, rg, o: T.nn.functional.gelu(_x(T, rg), out=o),
    "linear": lambda T, rg, o: T.nn.functional.linear(_x(T, rg), _x(T), _x(T)[0], out=o),
    "avg_pool2d": lambda T, rg, o: T.nn.functional.avg_pool2d(
        _x(T, rg).reshape(1, 1, 2, 2), 1, out=o),
    "avg_pool3d": lambda T, rg, o: T.nn.functional.avg_pool3d(
        _x(T, rg).reshape(1, 1, 1, 2, 2), 1, out=o),
    "logsigmoid": lambda T, rg, o: T.nn.functional.logsigmoid(_x(T, rg), out=o),
    # ops that took out= before, for their dtype rules and messages
    **{f: (lambda f: lambda T, rg, o: getattr(T, f)(_x(T, rg), out=o))(f) for f in (
        "abs ceil floor round sign sgn trunc frac conj_physical neg diag tril triu nonzero "
        "all any amax amin mean").split()},
    "logsumexp": lambda T, rg, o: T.logsumexp(_x(T, rg), 0, out=o),
    "diag_vector": lambda T, rg, o: T.diag(_x(T, rg)[0], out=o),
    "max": lambda T, rg, o: T.max(_x(T, rg), 1, out=o),
    "topk": lambda T, rg, o: T.topk(_x(T, rg), 1, out=o),
    "kthvalue": lambda T, rg, o: T.kthvalue(_x(T, rg), 1, out=o),
    "diff": lambda T, rg, o: T.diff(_x(T, rg), out=o),
    "gather": lambda T, rg, o: T.gather(_x(T, rg), 1, _i(T), out=o),
    "take_along_dim": lambda T, rg, o: T.take_along_dim(_x(T, rg), _i(T), 1, out=o),
    "masked_select": lambda T, rg, o: T.masked_select(_x(T, rg), _x(T) > 0, out=o),
    "index_select": lambda T, rg, o: T.index_select(_x(T, rg), 0, _i(T)[0], out=o),
    "dot": lambda T, rg, o: T.dot(_x(T, rg)[0], _x(T)[1], out=o),
    "matmul_vectors": lambda T, rg, o: T.matmul(_x(T, rg)[0], _x(T)[1], out=o),
    "matmul": lambda T, rg, o: T.matmul(_x(T, rg), _x(T), out=o),
    "complex": lambda T, rg, o: T.complex(_x(T, rg), _x(T), out=o),
    "inner": lambda T, rg, o: T.inner(_x(T, rg), _x(T), out=o),
    "cumsum": lambda T, rg, o: T.cumsum(_x(T, rg), 0, out=o),  # computed in out's dtype
    "cumprod": lambda T, rg, o: T.cumprod(_x(T, rg) + 1, 1, out=o),
    "fft2": lambda T, rg, o: T.fft.fft2(_x(T, rg), out=o),
    "rfft2": lambda T, rg, o: T.fft.rfft2(_x(T, rg), out=o),
    "irfft": lambda T, rg, o: T.fft.irfft(_x(T, rg), out=o),
    "hfft": lambda T, rg, o: T.fft.hfft(_x(T, rg), out=o),
    "vecdot": lambda T, rg, o: T.linalg.vecdot(_x(T, rg), _x(T), out=o),
    "eig": lambda T, rg, o: T.linalg.eig(_x(T, rg), out=o),
    "matrix_power": lambda T, rg, o: T.linalg.matrix_power(_x(T, rg), 2, out=o),
    "pinv": lambda T, rg, o: T.linalg.pinv(_x(T, rg), out=o),
    "multi_dot": lambda T, rg, o: T.linalg.multi_dot([_x(T, rg), _x(T)], out=o),
    "linalg.norm": lambda T, rg, o: T.linalg.norm(_x(T, rg), out=o),
    "matrix_norm": lambda T, rg, o: T.linalg.matrix_norm(_x(T, rg), out=o),
    "index_add": lambda T, rg, o: T.index_add(_x(T, rg), 0, _i(T)[0], _x(T), out=o),
    "index_copy": lambda T, rg, o: T.index_copy(_x(T, rg), 1, _i(T)[0], _x(T), out=o),
    "index_reduce": lambda T, rg, o: T.index_reduce(_x(T, rg), 0, _i(T)[0], _x(T), "prod",
                                                    out=o),
    "scatter_reduce": lambda T, rg, o: T.scatter_reduce(_x(T, rg), 0, _i(T), _x(T), "sum",
                                                        out=o),
    "normalize": lambda T, rg, o: T.nn.functional.normalize(_x(T, rg), out=o),
}


def _outs_like(T, r, dtype):
    rs = r if isinstance(r, tuple) else (r,)
    outs = tuple(T.empty(0, dtype=dtype or t.dtype) for t in rs)
    return outs if isinstance(r, tuple) else outs[0]


@pytest.mark.parametrize("name", sorted(_OUT_OPS))
def test_out_ops(name):
    # values written into out, torch's autograd error (or none), and its rule for an out of
    # another dtype (a cast, or its message), each against torch
    call = _OUT_OPS[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for rg, dtype in ((False, None), (True, None), (False, "float64"), (False, "int64"),
                          (False, "float16")):
            def run(T, rg=rg, dtype=dtype):
                with T.no_grad():
                    r = call(T, False, None)
                o = _outs_like(T, r, dtype and getattr(T, dtype))
                got = call(T, rg, o)
                os_ = o if isinstance(o, tuple) else (o,)
                return (*os_, any(got is t for t in os_), *(t.requires_grad for t in os_))
            _same(run)


@pytest.mark.parametrize("call", [
    lambda T, x, o: T.inner(x, x.detach(), out=o),
    lambda T, x, o: T.linalg.norm(x, out=o),
    lambda T, x, o: T.linalg.matrix_norm(x, out=o),
    lambda T, x, o: T.softmax(x, 0, out=o),
    lambda T, x, o: T.log_softmax(x, 0, out=o),
    lambda T, x, o: T.diag(x, out=o),
    lambda T, x, o: T.diag(x[0], out=o),
    lambda T, x, o: T.conj_physical(x, out=o),
    lambda T, x, o: T.heaviside(x, x.detach(), out=o),
])
def test_out_history(call):
    # torch's composite out variants: out takes the result's history (a backward through
    # it works) or a node whose backward raises naming the op; not a silent partial grad
    def run(T):
        x = _x(T, True)
        o = T.empty(0)
        call(T, x, o)
        (o.sum() + x.sum()).backward()
        return x.grad
    _same(run)


def test_out_factories():
    # dtype from out unless given (then it must match); out resized without a warning
    calls = [lambda T, **k: T.zeros(2, 3, **k), lambda T, **k: T.ones(3, **k),
             lambda T, **k: T.full((2,), 1.7, **k), lambda T, **k: T.eye(2, 3, **k),
             lambda T, **k: T.arange(0.5, 3, **k), lambda T, **k: T.linspace(0, 3, 4, **k),
             lambda T, **k: T.logspace(0, 2, 3, **k), lambda T, **k: T.fft.fftfreq(4, **k),
             lambda T, **k: T.fft.rfftfreq(5, **k)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # torch's warnings (arange's) are compared as errors
        for call in calls:
            for dtype, given, shape in (("float64", False, (7,)), ("int64", False, (2, 2)),
                                        ("float32", True, (0,)), ("float64", True, (7,))):
                def run(T, dtype=dtype, given=given, shape=shape):
                    o = T.zeros(shape, dtype=getattr(T, dtype))
                    k = {"dtype": T.float32} if given else {}
                    return o, call(T, out=o, **k) is o, o._version > 0
                _same(run)
    for T in (wgrad, torch):  # random draws: out's shape and dtype
        o = T.zeros(0, dtype=T.float64)
        assert T.randn(2, 3, out=o) is o and o.shape == (2, 3) and o.dtype == T.float64
        assert T.rand(4, out=o) is o and o.shape == (4,) and bool((o >= 0).all())


def test_out_random_ops():
    # normal and bernoulli: out takes the draw (its shape, dtype, version), and torch's
    # autograd error
    for fn in (lambda T, o, rg: T.normal(_x(T, rg), 1.0, out=o),
               lambda T, o, rg: T.bernoulli(_x(T, rg).abs() / 2, out=o)):
        for T in (wgrad, torch):
            o = T.zeros(2, 2, dtype=T.float64)
            r = fn(T, o, False)
            assert r is o and o._version == 1 and o.dtype == T.float64
        a, b = (_run(T, lambda T: fn(T, T.empty(0), True)) for T in (wgrad, torch))
        assert a == b and a[0] == "RuntimeError"


def test_out_without_gradient():
    # torch's out variant of these is not differentiable: no error, a result without grad
    _same(lambda T: (T.tensordot(_A(T, True), _A(T), out=T.empty(0)),
                     T.lt(_A(T, True), 2, out=T.empty(0, dtype=T.bool))))


def test_out_resize_warns():
    for T in (wgrad, torch):
        o = T.zeros(3)
        with pytest.warns(UserWarning, match="An output with one or more elements was "
                                              "resized since it had shape \\[3\\]"):
            T.add(T.ones(2), 1, out=o)
        assert o.tolist() == [2., 2.]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wgrad.add(wgrad.ones(2), 1, out=wgrad.empty(0))
    with wgrad.no_grad():  # no autograd: no error
        assert wgrad.add(_A(wgrad, True), 1, out=wgrad.empty(0)).tolist() == [[3., 2.], [2., 4.]]


# ======================================================================================
# reshape/view/contiguous of views (NOTE [Strides without strides])
# ======================================================================================

def _layouts(T):
    x = T.arange(6., requires_grad=True).reshape(2, 3)
    t = x.t()
    r, c = t.reshape(6), t.contiguous()
    y = T.arange(6.).reshape(2, 3)
    w = y.t().reshape(6)
    w[0] = 100
    y.t().contiguous()[0, 0] = 7
    y[:, 1:].reshape(4)[0] = 9  # a copy: y unchanged
    y[1].reshape(3, 1)[0, 0] = 8  # a view: written
    y.t().view(3, 2, 1)[2, 1, 0] = 6
    flags = [v.is_contiguous() for v in (x, t, y[:, 1:], y[1], y[:, :1],
                                         y.expand(2, 2, 3), T.zeros(3, 1).expand(3, 4))]
    return (y, r._base is None, r.grad_fn.name(), c._base is None, c.grad_fn.name(),
            x.contiguous() is x, y.t().flatten()._base is None,
            y.t().reshape(3, 2, 1)._base is y, *flags)


@pytest.mark.parametrize("fn", [
    _layouts,
    lambda T: T.arange(6.).reshape(2, 3).t().view(6),
    lambda T: T.arange(6.).reshape(2, 3)[:, 1:].view(4),
    lambda T: T.zeros(3, 1).expand(3, 4).view(12),
])
def test_reshape_of_views(fn):
    _same(fn)


# retain_grad() then an in-place op: .grad is the latest version's (fixed on conf)
def _retain_then_inplace(T):
    x = T.ones(2, requires_grad=True)
    y = x * 2
    y.retain_grad()
    y.mul_(3)
    (y * y).sum().backward()
    v = T.ones(2, 2, requires_grad=True) * 1
    v.retain_grad()
    v[0].mul_(2)
    v.sum().backward()
    return y.grad, x.grad, v.grad


def test_retain_grad_then_inplace():
    _same(_retain_then_inplace)


def _set_data_keeps_counter(T):
    x = T.zeros(1, 2)
    xz = x[:]
    xz.add_(1)
    v = x._version
    x.data = T.ones(2, 3)
    same = x._version == v
    x.add_(1)
    xz.add_(1)  # still shares x's counter, but not its new storage
    return x, xz, same, x._version == xz._version, x._version


def test_set_data_keeps_the_version_counter():
    _same(_set_data_keeps_counter)
