"""conv1d/conv2d with complex inputs and weights: gradcheck + gradgradcheck (gradients are
convolutions again, NOTE [Convolution backward as convolutions]), JAX identity, torch."""
import jax
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op, to_np

F = wgrad.nn.functional


def _c(rng, *shape):
    return wgrad.tensor(rng.standard_normal(shape) + 1j * rng.standard_normal(shape),
                        requires_grad=True)


def _jconv(x, w, stride, pad, dil, groups):
    dn = jax.lax.conv_dimension_numbers(x.shape, w.shape, ("NCHW", "OIHW", "NCHW"))
    return jax.lax.conv_general_dilated(x, w, stride, pad, rhs_dilation=dil,
                                        dimension_numbers=dn, feature_group_count=groups,
                                        precision=jax.lax.Precision.HIGHEST)


@pytest.mark.parametrize("kw", [dict(stride=2, padding=1), dict(padding="same", dilation=2,
                                                                 groups=2)])
def test_conv2d_complex(kw):
    rng = np.random.default_rng(0)
    x, w = _c(rng, 1, 2, 4, 3), _c(rng, 2, 2 // kw.get("groups", 1), 2, 2)
    s = (kw.get("stride", 1),) * 2
    d = (kw.get("dilation", 1),) * 2
    pad = [(1, 1)] * 2 if kw.get("padding") == 1 else [(1, 1), (1, 1)]
    check_op(lambda a, b: F.conv2d(a, b, **kw), (x, w),
             lambda a, b: _jconv(a, b, s, pad, d, kw.get("groups", 1)))


def test_conv1d_bias_unbatched_real():
    rng = np.random.default_rng(1)
    x = wgrad.tensor(rng.standard_normal((2, 5)), requires_grad=True)
    w = wgrad.tensor(rng.standard_normal((3, 2, 2)), requires_grad=True)
    b = wgrad.tensor(rng.standard_normal(3), requires_grad=True)
    check_op(lambda a, c, e: F.conv1d(a, c, e, stride=2), (x, w, b))


def test_conv_equals_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x = rng.standard_normal((2, 4, 5, 5)) + 1j * rng.standard_normal((2, 4, 5, 5))
    w = rng.standard_normal((4, 2, 3, 2)) + 1j * rng.standard_normal((4, 2, 3, 2))
    kw = dict(stride=(2, 1), padding=(1, 2), dilation=(1, 2), groups=2)
    wx, ww = wgrad.tensor(x, requires_grad=True), wgrad.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    wo, to = F.conv2d(wx, ww, **kw), torch.nn.functional.conv2d(tx, tw, **kw)
    np.testing.assert_allclose(to_np(wo.detach()), to.detach().numpy(), atol=1e-10)
    (wo.abs() ** 2).sum().backward()
    (to.abs() ** 2).sum().backward()
    np.testing.assert_allclose(to_np(wx.grad), tx.grad.numpy(), atol=1e-9)
    np.testing.assert_allclose(to_np(ww.grad), tw.grad.numpy(), atol=1e-9)


def test_conv_errors():
    with pytest.raises(RuntimeError, match="Expected 3D \\(unbatched\\) or 4D \\(batched\\) "
                                           "input to conv2d, but got input of size: \\[2, 3\\]"):
        F.conv2d(wgrad.ones(2, 3), wgrad.ones(1, 1, 1, 1))
    with pytest.raises(RuntimeError, match="Given groups=1, weight of size \\[4, 3, 3, 3\\], "
                                           "expected input\\[1, 2, 5, 5\\] to have 3 channels, "
                                           "but got 2 channels instead"):
        F.conv2d(wgrad.ones(1, 2, 5, 5), wgrad.ones(4, 3, 3, 3))
    with pytest.raises(ValueError, match="padding='same' is not supported for strided "
                                         "convolutions"):
        F.conv1d(wgrad.ones(1, 1, 4), wgrad.ones(1, 1, 2), stride=2, padding="same")
