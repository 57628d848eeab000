"""gradcheck + gradgradcheck (and the JAX identity where an independent JAX reference
exists) for this release's differentiable functionals: conv3d / conv_transpose3d (float64
and complex128), grid_sample, affine_grid and embedding_bag (float64: torch takes no complex
input there). ctc_loss has no double backward (as torch: tests/nn/test_ctc.py)."""
import jax
import numpy as np
import pytest

import wgrad
import wgrad.nn.functional as F
from wgrad.testing import check_op


def _t(rng, shape, dtype):
    a = rng.standard_normal(shape)
    if dtype == "complex128":
        a = a + 1j * rng.standard_normal(shape)
    return wgrad.tensor(a, dtype=getattr(wgrad, dtype), requires_grad=True)


def _jax_conv3d(x, w):
    return jax.lax.conv_general_dilated(x, w, (1, 1, 1), [(1, 1), (0, 0), (0, 0)],
                                        dimension_numbers=("NCDHW", "OIDHW", "NCDHW"),
                                        precision=jax.lax.Precision.HIGHEST)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_conv3d(dtype):
    rng = np.random.default_rng(0)
    x, w = _t(rng, (1, 1, 2, 2, 3), dtype), _t(rng, (2, 1, 1, 2, 2), dtype)
    check_op(lambda x, w: F.conv3d(x, w, padding=(1, 0, 0)), (x, w), _jax_conv3d,
             fast_mode=True)


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
def test_conv_transpose3d(dtype):
    rng = np.random.default_rng(1)
    x, w = _t(rng, (1, 2, 1, 2, 2), dtype), _t(rng, (2, 1, 2, 1, 2), dtype)
    check_op(lambda x, w: F.conv_transpose3d(x, w, stride=(1, 2, 1)), (x, w), fast_mode=True)


@pytest.mark.parametrize("mode, pad", [("bilinear", "reflection"), ("bicubic", "zeros")])
def test_grid_sample(mode, pad):
    rng = np.random.default_rng(2)
    x = _t(rng, (1, 1, 3, 3), "float64")
    g = wgrad.tensor(rng.uniform(-1.2, 1.2, (1, 2, 2, 2)), requires_grad=True)
    check_op(lambda x, g: F.grid_sample(x, g, mode=mode, padding_mode=pad,
                                        align_corners=False), (x, g), fast_mode=True)


def test_affine_grid():
    theta = _t(np.random.default_rng(3), (1, 2, 3), "float64")
    check_op(lambda t: F.affine_grid(t, (1, 1, 2, 3), align_corners=False), (theta,),
             fast_mode=True)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_embedding_bag(mode):
    rng = np.random.default_rng(4)
    w = _t(rng, (5, 2), "float64")
    psw = wgrad.tensor(rng.uniform(0.5, 2, 6), requires_grad=True) if mode == "sum" else None
    idx, off = wgrad.tensor([0, 3, 1, 4, 4, 2]), wgrad.tensor([0, 2, 2])
    inputs = (w, psw) if psw is not None else (w,)
    check_op(lambda w, p=None: F.embedding_bag(idx, w, off, mode=mode, per_sample_weights=p),
             inputs, fast_mode=True)
