"""Pooling against torch (values, indices, gradients; inputs with ties), gradcheck on
float64 (complex128 where torch pools complex: nowhere, so wgrad's complex average pools are
checked by gradcheck alone), torch's messages."""
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op

from nn1b_compare import compare

torch = pytest.importorskip("torch")
F = wgrad.nn.functional

rng = np.random.default_rng(0)
TIES = rng.integers(-2, 3, (2, 3, 7, 6)).astype(np.float64)     # many equal maxima
X2 = rng.standard_normal((2, 3, 7, 6))
X1 = rng.standard_normal((2, 3, 9))
X3 = rng.standard_normal((1, 2, 5, 4, 6))

ROWS = [
    ("max2d", lambda t, x: t.nn.functional.max_pool2d(x, 2, return_indices=True), TIES),
    ("max2d_overlap", lambda t, x: t.nn.functional.max_pool2d(x, 3, 1, 1, return_indices=True),
     TIES),
    ("max2d_ceil_dil", lambda t, x: t.nn.functional.max_pool2d(
        x, (2, 3), 2, 1, dilation=(2, 1), ceil_mode=True, return_indices=True), TIES),
    ("max1d", lambda t, x: t.nn.functional.max_pool1d(x, 3, 2, 1, return_indices=True), X1),
    ("max3d", lambda t, x: t.nn.functional.max_pool3d(x, 2, ceil_mode=True,
                                                      return_indices=True), X3),
    ("avg2d", lambda t, x: t.nn.functional.avg_pool2d(x, 3, 2, 1), X2),
    ("avg2d_nopad_ceil", lambda t, x: t.nn.functional.avg_pool2d(
        x, 3, 2, 1, ceil_mode=True, count_include_pad=False), X2),
    ("avg2d_divisor", lambda t, x: t.nn.functional.avg_pool2d(x, (2, 3), 1, (1, 0),
                                                              divisor_override=5), X2),
    ("avg3d", lambda t, x: t.nn.functional.avg_pool3d(x, 3, 2, 1, count_include_pad=False),
     X3),
    ("adaptive_avg2d", lambda t, x: t.nn.functional.adaptive_avg_pool2d(x, (3, 4)), X2),
    ("adaptive_avg1d", lambda t, x: t.nn.functional.adaptive_avg_pool1d(x, 4), X1),
    ("adaptive_avg3d", lambda t, x: t.nn.functional.adaptive_avg_pool3d(x, (2, 3, 4)), X3),
    ("adaptive_max2d", lambda t, x: t.nn.functional.adaptive_max_pool2d(
        x, (3, 4), return_indices=True), TIES),
    ("adaptive_max1d", lambda t, x: t.nn.functional.adaptive_max_pool1d(
        x, 4, return_indices=True), X1),
    ("lp2d", lambda t, x: t.nn.functional.lp_pool2d(x.abs() + 0.1, 2, 3, 2), X2),
    ("unpool2d", lambda t, x: t.nn.functional.max_unpool2d(
        *t.nn.functional.max_pool2d(x, 2, return_indices=True), 2, output_size=(7, 6)), X2),
    ("unpool1d", lambda t, x: t.nn.functional.max_unpool1d(
        *t.nn.functional.max_pool1d(x, 3, 2, 1, return_indices=True), 3, 2, 1), X1),
]


@pytest.mark.parametrize("row", ROWS, ids=[r[0] for r in ROWS])
def test_against_torch(row):
    _, call, x = row
    compare(call, [x])


def test_nan_and_inf_windows_pick_torch_index():
    x = np.array([[[1.0, np.nan, 3.0, np.nan, -np.inf, -np.inf]]])
    compare(lambda t, a: t.nn.functional.max_pool1d(a, 3, 1, 1, return_indices=True), [x],
            grad=False)


# (id, fn, shape, complex too, gradgrad too)
GRADCHECK = [
    ("max2d", lambda x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True), (1, 2, 5, 4), False, True),
    ("adaptive_max2d", lambda x: F.adaptive_max_pool2d(x, (2, 3)), (1, 2, 5, 4), False, False),
    ("avg2d", lambda x: F.avg_pool2d(x, 3, 2, 1, count_include_pad=False), (1, 2, 5, 4), True,
     True),
    ("adaptive_avg2d", lambda x: F.adaptive_avg_pool2d(x, (2, 3)), (1, 2, 5, 4), True, False),
]


@pytest.mark.parametrize("row", GRADCHECK, ids=[r[0] for r in GRADCHECK])
def test_gradcheck(row):
    _, fn, shape, cplx, gradgrad = row
    x = np.random.default_rng(1).permutation(np.prod(shape)).reshape(shape) / 7.0 + 0.3
    check_op(fn, [wgrad.tensor(x, requires_grad=True)], gradgrad=gradgrad)
    if cplx:
        z = x + 1j * np.random.default_rng(2).standard_normal(shape)
        check_op(fn, [wgrad.tensor(z, requires_grad=True)], gradgrad=False)


def _msg(call, x):
    with pytest.raises(Exception) as et:
        call(torch, torch.tensor(x))
    with pytest.raises(type(et.value)) as ew:
        call(wgrad, wgrad.tensor(x))
    assert str(ew.value) == str(et.value)


ERRORS = [
    lambda t, x: t.nn.functional.max_pool2d(x, 2, padding=2),
    lambda t, x: t.nn.functional.max_pool1d(x[0], 2, padding=2),
    lambda t, x: t.nn.functional.avg_pool2d(x, 2, padding=2),
    lambda t, x: t.nn.functional.max_pool2d(x, 8),
    lambda t, x: t.nn.functional.max_pool2d(x, 2, stride=0),
    lambda t, x: t.nn.functional.max_pool2d(x[0, 0], 2),
    lambda t, x: t.nn.functional.max_pool2d(x, (2, 2, 2)),
    lambda t, x: t.nn.functional.adaptive_avg_pool2d(x, (3,)),
    lambda t, x: t.nn.functional.max_pool2d(x.to(t.complex128), 2),
    lambda t, x: t.nn.functional.max_unpool2d(x, t.full(x.shape, 1000), 2),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_messages(i):
    _msg(ERRORS[i], X2)


def test_modules_match_torch():
    for name, args in [("MaxPool2d", (3, 2, 1)), ("AvgPool2d", (2,)), ("AdaptiveAvgPool2d", (3,)),
                       ("AdaptiveMaxPool2d", ((2, None),)), ("LPPool2d", (2, 3)),
                       ("AvgPool1d", (2,)), ("MaxUnpool2d", (2,)), ("MaxPool1d", (3, 2, 1))]:
        assert repr(getattr(wgrad.nn, name)(*args)) == repr(getattr(torch.nn, name)(*args))
    compare(lambda t, x: t.nn.MaxPool2d(3, 2, 1, return_indices=True)(x), [X2])
    compare(lambda t, x: t.nn.AdaptiveAvgPool1d(2)(x), [X1])
