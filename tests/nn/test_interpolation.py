"""interpolate / Upsample, pixel_shuffle / unshuffle, fold / unfold against torch (values and
gradients, float64 and float32), gradcheck on float64 and complex128, torch's messages."""
import numpy as np
import pytest
import torch

import wgrad
from wgrad.testing import check_op

from nn1b_compare import compare

torch = pytest.importorskip("torch")
F = wgrad.nn.functional

rng = np.random.default_rng(0)
X1 = rng.standard_normal((1, 2, 5))
X2 = rng.standard_normal((1, 2, 5, 4))
X3 = rng.standard_normal((1, 1, 3, 4, 2))


def _interp(**kw):
    return lambda t, x: t.nn.functional.interpolate(x, **kw)


ROWS = [
    ("nearest_size", _interp(size=(7, 3)), X2),
    ("nearest_scale", _interp(scale_factor=1.7), X2),
    ("nearest_x2", _interp(scale_factor=2), X1),
    ("nearest_exact", _interp(scale_factor=(1.5, 0.6), mode="nearest-exact"), X2),
    ("nearest_3d", _interp(size=(4, 3, 5)), X3),
    ("linear", _interp(scale_factor=2.5, mode="linear"), X1),
    ("linear_ac", _interp(size=8, mode="linear", align_corners=True), X1),
    ("bilinear_down", _interp(size=(3, 3), mode="bilinear"), X2),
    ("bilinear_scale", _interp(scale_factor=1.3, mode="bilinear"), X2),
    ("bilinear_recompute", _interp(scale_factor=1.3, mode="bilinear",
                                   recompute_scale_factor=True), X2),
    ("bicubic", _interp(size=(9, 7), mode="bicubic"), X2),
    ("bicubic_ac", _interp(scale_factor=0.7, mode="bicubic", align_corners=True), X2),
    ("trilinear", _interp(size=(5, 3, 4), mode="trilinear"), X3),
    ("area", _interp(size=(3, 3), mode="area"), X2),
    ("area_scale", _interp(scale_factor=0.5, mode="area"), X2),
    ("upsample_bilinear2d", lambda t, x: t.nn.UpsamplingBilinear2d(scale_factor=2)(x), X2),
    ("pixel_shuffle", lambda t, x: t.nn.functional.pixel_shuffle(x.reshape(2, 4, 1, 5), 2), X2),
    ("pixel_unshuffle", lambda t, x: t.nn.PixelUnshuffle(2)(x.reshape(1, 1, 4, 10)), X2),
    ("unfold", lambda t, x: t.nn.functional.unfold(x, (2, 3), dilation=(1, 2), padding=1,
                                                   stride=(2, 1)), X2),
    ("fold", lambda t, x: t.nn.Fold((4, 5), 2, padding=(1, 0), stride=(1, 2))(
        x.reshape(1, 4, 10)), X2),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_against_torch(row):
    _, call, x = row
    compare(call, [x])


@pytest.mark.parametrize("mode", ["nearest", "bilinear", "bicubic"])
def test_float32_source_indices(mode):
    # torch computes the source indices and weights in float32 for float32 input
    x = rng.standard_normal((1, 1, 7, 9)).astype(np.float32)
    compare(_interp(scale_factor=(1.37, 0.71), mode=mode), [x], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kw", [dict(size=60), dict(scale_factor=1.5), dict(size=17)])
def test_linear_source_indices_as_torch(kw):
    """torch rounds ``scale * (i + 0.5) - 0.5`` once (a fused multiply-add): with two
    roundings 3% of the float32 outputs differed by up to ~20 ulps. Bit for bit with XLA's
    default flags; the suite's (no fusion emitters) leave ``x0 * w0 + x1 * w1`` without a
    fused multiply-add, an ulp or two."""
    x = rng.standard_normal((2, 3, 41)).astype(np.float32) * 3
    got = F.interpolate(wgrad.tensor(x), mode="linear", **kw).numpy()
    want = torch.nn.functional.interpolate(torch.tensor(x), mode="linear", **kw).numpy()
    np.testing.assert_allclose(got, want, rtol=4e-7, atol=1e-7)


# (id, fn, shape, gradgrad too, complex128 too)
GRADCHECK = [
    ("bicubic", lambda x: F.interpolate(x, size=(4, 3), mode="bicubic"), (1, 1, 3, 2), False,
     True),
    ("bilinear", lambda x: F.interpolate(x, scale_factor=1.5, mode="bilinear"), (1, 1, 3, 2),
     True, False),
    ("area", lambda x: F.interpolate(x, size=(2, 1), mode="area"), (1, 1, 3, 2), False, True),
    ("pixel_shuffle", lambda x: F.pixel_shuffle(x, 2), (1, 4, 2, 1), False, True),
    ("unfold", lambda x: F.unfold(x, 2, padding=1, stride=2), (1, 1, 3, 2), True, True),
    ("fold", lambda x: F.fold(x, (3, 3), 2, stride=1), (1, 4, 4), False, True),
]


@pytest.mark.parametrize("row", GRADCHECK, ids=[r[0] for r in GRADCHECK])
def test_gradcheck(row):
    _, fn, shape, gradgrad, cplx = row
    x = rng.standard_normal(shape)
    check_op(fn, [wgrad.tensor(x, requires_grad=True)], gradgrad=gradgrad)
    if cplx:
        z = x + 1j * rng.standard_normal(shape)
        check_op(fn, [wgrad.tensor(z, requires_grad=True)], gradgrad=False)


def test_complex_pixel_shuffle_and_fold_match_torch():
    z = X2 + 1j * X2[..., ::-1]
    compare(lambda t, x: t.nn.functional.pixel_unshuffle(x.reshape(1, 2, 2, 10), 2), [z])
    compare(lambda t, x: t.nn.functional.fold(t.nn.functional.unfold(x, 2), (5, 4), 2), [z])


ERRORS = [
    _interp(size=3, scale_factor=2),
    _interp(),
    _interp(size=3, mode="foo"),
    _interp(size=3, mode="nearest", align_corners=True),
    _interp(size=3, mode="linear"),
    _interp(size=(3, 3, 3)),
    _interp(scale_factor=(2, 2, 2)),
    lambda t, x: t.nn.functional.pixel_shuffle(x, 2),
    lambda t, x: t.nn.functional.pixel_unshuffle(x, 2),
    lambda t, x: t.nn.functional.fold(x.reshape(1, 8, 5), (5, 5), 2),
    lambda t, x: t.nn.functional.unfold(x, 6),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_messages(i):
    with pytest.raises(Exception) as et:
        ERRORS[i](torch, torch.tensor(X2))
    with pytest.raises(type(et.value)) as ew:
        ERRORS[i](wgrad, wgrad.tensor(X2))
    assert str(ew.value) == str(et.value)


def test_module_reprs():
    for name, kw in [("Upsample", dict(scale_factor=2)),
                     ("Upsample", dict(size=3, mode="bilinear", align_corners=True)),
                     ("UpsamplingNearest2d", dict(size=4)),
                     ("PixelShuffle", dict(upscale_factor=2)),
                     ("Fold", dict(output_size=4, kernel_size=2)), ("Unfold", dict(kernel_size=2))]:
        assert repr(getattr(wgrad.nn, name)(**kw)) == repr(getattr(torch.nn, name)(**kw))
