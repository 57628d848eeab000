"""wgrad.fft: gradcheck, gradgradcheck and the JAX identity for every transform with drawn
``n``/``s`` (padding and truncation), ``dim`` and ``norm``; gradients equal to torch's
(R->C half spectra of rfft/ihfft, C->R of irfft/hfft); errors by message."""
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgrad
from wgrad.testing import check_op, to_np, values

F64, C128 = np.float64, np.complex128
NORMS = st.sampled_from([None, "backward", "ortho", "forward"])
WF = wgrad.fft


def _jnorm(norm):
    return norm or "backward"


# (name, wgrad fn(x, n, dim, norm), jax fn(x, n, dim, norm), input dtypes)
ONE_D = [
    ("fft", WF.fft, lambda x, n, d, nm: jnp.fft.fft(x, n, d, _jnorm(nm)), (F64, C128)),
    ("ifft", WF.ifft, lambda x, n, d, nm: jnp.fft.ifft(x, n, d, _jnorm(nm)), (C128,)),
    ("rfft", WF.rfft, lambda x, n, d, nm: jnp.fft.rfft(x, n, d, _jnorm(nm)), (F64,)),
    ("irfft", WF.irfft, None, (C128,)),
    ("hfft", WF.hfft, None, (C128,)),
    ("ihfft", WF.ihfft, lambda x, n, d, nm: jnp.fft.ihfft(x, n, d, _jnorm(nm)), (F64,)),
]


@pytest.mark.parametrize("name,wfn,jfn,dtypes", ONE_D, ids=[r[0] for r in ONE_D])
@settings(max_examples=2)
@given(data=st.data())
def test_fft_1d(name, wfn, jfn, dtypes, data):
    dtype = data.draw(st.sampled_from(dtypes))
    shape = data.draw(st.sampled_from([(3,), (4,), (2, 3)]))
    dim = data.draw(st.sampled_from([-1, 0]))
    n = data.draw(st.sampled_from([None, 2, 5]))
    norm = data.draw(NORMS)
    x = wgrad.tensor(data.draw(values(dtype, shape)), requires_grad=True)
    j = None if jfn is None else (lambda a: jfn(a, n, dim, norm))
    check_op(lambda a: wfn(a, n, dim, norm), (x,), j)


ND = [
    ("fft2", WF.fft2, jnp.fft.fft2, (F64, C128), True),
    ("ifft2", WF.ifft2, jnp.fft.ifft2, (C128,), True),
    ("fftn", WF.fftn, jnp.fft.fftn, (C128,), False),
    ("ifftn", WF.ifftn, jnp.fft.ifftn, (C128,), False),
    ("rfft2", WF.rfft2, jnp.fft.rfft2, (F64,), True),
    ("rfftn", WF.rfftn, jnp.fft.rfftn, (F64,), False),
    ("irfft2", WF.irfft2, None, (C128,), True),
    ("irfftn", WF.irfftn, None, (C128,), False),
    ("hfft2", WF.hfft2, lambda x, s=None, norm="backward": _jhfftn(x, s, None, norm),
     (C128,), True),
    ("hfftn", WF.hfftn, lambda x, s, axes, norm: _jhfftn(x, s, axes, norm), (C128,), False),
    ("ihfft2", WF.ihfft2, lambda x, s=None, norm="backward": _jihfftn(x, s, None, norm),
     (F64,), True),
    ("ihfftn", WF.ihfftn, lambda x, s, axes, norm: _jihfftn(x, s, axes, norm), (F64,), False),
]
_SWAP = {"backward": "forward", "forward": "backward", "ortho": "ortho"}


def _jhfftn(x, s, axes, norm):
    """hfftn in JAX: irfftn of the conjugate with the other normalization."""
    return jnp.fft.irfftn(jnp.conj(x), s, axes, norm=_SWAP[norm])


def _jihfftn(x, s, axes, norm):
    return jnp.conj(jnp.fft.rfftn(x, s, axes, norm=_SWAP[norm]))


@pytest.mark.parametrize("name,wfn,jfn,dtypes,two", ND, ids=[r[0] for r in ND])
@settings(max_examples=2)
@given(data=st.data())
def test_fft_nd(name, wfn, jfn, dtypes, two, data):
    dtype = data.draw(st.sampled_from(dtypes))
    shape = (2, 3) if two else data.draw(st.sampled_from([(3,), (2, 3), (1, 2, 3)]))
    s = data.draw(st.sampled_from([None, (3, 2), (-1, 4)] if two else [None, (2,), (3, 2)]))
    if s is not None and len(s) > len(shape):
        s = s[:len(shape)]
    norm = data.draw(NORMS)
    x = wgrad.tensor(data.draw(values(dtype, shape)), requires_grad=True)
    if two:
        w = lambda a: wfn(a, s, norm=norm)  # noqa: E731
        js = None if s is None else tuple(shape[i - 2] if v == -1 else v
                                         for i, v in enumerate(s))
        j = None if jfn is None else (lambda a: jfn(a, js, norm=_jnorm(norm)))
    else:
        w = lambda a: wfn(a, s, norm=norm)  # noqa: E731
        axes = None if s is None else tuple(range(len(shape) - len(s), len(shape)))
        j = None if jfn is None else (lambda a: jfn(a, s, axes, _jnorm(norm)))
    check_op(w, (x,), j)


def test_fftn_dims_and_batches():
    x = wgrad.tensor(np.arange(12.).reshape(2, 3, 2) * (1 + 0.5j), requires_grad=True)
    check_op(lambda a: WF.fftn(a, s=(4, 1), dim=(2, 0), norm="ortho"), (x,),
             lambda a: jnp.fft.fftn(a, (4, 1), (2, 0), "ortho"))
    r = wgrad.tensor(np.arange(12.).reshape(2, 3, 2), requires_grad=True)
    check_op(lambda a: WF.irfftn(WF.rfftn(a, dim=(0, 1)), s=(2, 3), dim=(0, 1)), (r,),
             lambda a: a)


def test_shifts_and_freqs():
    x = wgrad.tensor(np.arange(6.).reshape(2, 3) + 1j, requires_grad=True)
    check_op(lambda a: WF.fftshift(a), (x,), jnp.fft.fftshift)
    check_op(lambda a: WF.ifftshift(a, dim=1), (x,), lambda a: jnp.fft.ifftshift(a, axes=1))
    np.testing.assert_allclose(to_np(WF.fftfreq(5, 0.5)), np.fft.fftfreq(5, 0.5))
    np.testing.assert_allclose(to_np(WF.rfftfreq(6)), np.fft.rfftfreq(6))
    assert WF.fftfreq(4).dtype is wgrad.float32
    assert WF.rfftfreq(4, dtype=wgrad.float64).dtype is wgrad.float64


def test_namespace_not_shadowed():
    import wgrad.fft as mod
    assert wgrad.fft is mod and callable(wgrad.fft.fft)
    assert not hasattr(wgrad.Tensor, "fft")


@pytest.mark.parametrize("name", ["fft", "rfft", "irfft", "hfft", "ihfft", "rfft2", "irfftn"])
def test_gradients_equal_torch(name):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    real_in = name in ("rfft", "ihfft", "rfft2")
    a = rng.standard_normal((3, 4)) + (0 if real_in else 1j * rng.standard_normal((3, 4)))
    kw = {"norm": "ortho"}
    if name in ("rfft2", "irfftn"):
        kw["s"] = (2, 5)
    else:
        kw["n"] = 5
    w = wgrad.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    wo = getattr(wgrad.fft, name)(w, **kw)
    to = getattr(torch.fft, name)(t, **kw)
    g = rng.standard_normal(tuple(to.shape)) + (1j * rng.standard_normal(tuple(to.shape))
                                              if to.is_complex() else 0)
    wo.backward(wgrad.tensor(g))
    to.backward(torch.tensor(g))
    np.testing.assert_allclose(to_np(wo.detach()), to.detach().resolve_conj().numpy(),
                               atol=1e-10)
    np.testing.assert_allclose(to_np(w.grad), t.grad.resolve_conj().numpy(), atol=1e-10)


def test_errors():
    x = wgrad.ones(4, dtype=wgrad.float64)
    with pytest.raises(RuntimeError, match='Invalid normalization mode: "foo"'):
        WF.fft(x, norm="foo")
    with pytest.raises(RuntimeError, match="rfft expects a real input tensor, but got "
                                           "ComplexDouble"):
        WF.rfft(x.to(wgrad.complex128))
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        WF.fft(x, n=0)
    with pytest.raises(RuntimeError, match=r"Invalid number of data points \(0\) specified"):
        WF.irfft(wgrad.ones(1))
    with pytest.raises(RuntimeError, match="Got shape with 2 values but input tensor only has "
                                           "1 dimensions."):
        WF.fftn(x, s=(2, 2))
    with pytest.raises(RuntimeError, match="FFT dims must be unique"):
        WF.fftn(wgrad.ones(2, 2), dim=(0, 0))
    with pytest.raises(RuntimeError, match="When given, dim and shape arguments must have the "
                                           "same length"):
        WF.fftn(wgrad.ones(2, 2), s=(2,), dim=(0, 1))


def test_node_names_and_gradients_match_torch():
    """torch's graph: a 1-D fft of a real signal is one FftR2CBackward0 (onesided=False),
    fftn/fft2 of it promote to complex and run FftC2CBackward0."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((4, 6))
    calls = [lambda L, x: L.fft.fft(x), lambda L, x: L.fft.fft(x, n=8, dim=0),
             lambda L, x: L.fft.fft2(x), lambda L, x: L.fft.fftn(x, dim=0),
             lambda L, x: L.fft.fft(x * 1j), lambda L, x: L.fft.rfft(x),
             lambda L, x: L.fft.irfft(x * (1 + 1j)),
             lambda L, x: L.fft.hfft2(x * (1 + 1j)), lambda L, x: L.fft.hfftn(x * 1j, dim=0),
             lambda L, x: L.fft.hfftn(x * 1j, s=(3, 5), norm="ortho"),
             lambda L, x: L.fft.ihfft2(x), lambda L, x: L.fft.ihfftn(x, s=(5, 8)),
             lambda L, x: L.fft.ihfft2(x, dim=(1, 0), norm="forward")]
    for f in calls:
        got = []
        for L in (wgrad, torch):
            x = L.tensor(a, requires_grad=True)
            y = f(L, x)
            (y.abs() ** 2 * L.arange(y.numel()).reshape(y.shape)).sum().backward()
            got.append((type(y.grad_fn).__name__, str(y.dtype).split(".")[1], y.detach(),
                        x.grad))
        assert got[0][:2] == got[1][:2]
        np.testing.assert_allclose(got[0][2].numpy(), got[1][2].numpy(), atol=1e-12)
        np.testing.assert_allclose(got[0][3].numpy(), got[1][3].numpy(), atol=1e-10)
