"""Conversions and integer arithmetic as torch's CPU kernels do them, compared with torch:
floats out of an integer type's range (NOTE [Float to integer]), bool addition, rounding
to decimals."""
import numpy as np
import pytest
import torch

import wgrad

_F = [5e9 + 7, -5e9, 3e9, 40000.5, -40000.0, 128.0, -129.0, float("inf"), float("-inf"),
      float("nan"), 2.5e9, -1.5, 65536.0 * 3 + 5, 1e20, -0.7]

CASES = {
    **{f"{src}_to_{dst}": (lambda s, d: lambda T: T.tensor(_F, dtype=getattr(T, s)).to(
        getattr(T, d)))(src, dst)
       for src in ("float32", "float64") for dst in
       ("uint8", "int8", "int16", "int32", "int64", "bool")},
    "half_to_uint8": lambda T: T.tensor([300.0, -1.0], dtype=T.float16).to(T.uint8),
    "bfloat16_to_int8": lambda T: T.tensor([300.0, -129.0], dtype=T.bfloat16).to(T.int8),
    "long_method": lambda T: T.tensor([float("nan"), 1e30]).long(),
    "copy_into_int": lambda T: T.zeros(3, dtype=T.int16).copy_(T.tensor([40000.0, -1.5, 7.9])),
    "setitem_into_uint8": lambda T: _setitem(T),
    "complex_to_int": lambda T: T.tensor([3.7 + 2j, -1.2 - 1j]).to(T.int32),
    "bool_add": lambda T: T.tensor([True, False]) + T.tensor([True, True]),
    "bool_add_number": lambda T: T.tensor([True, False]) + True,
    "bool_add_int": lambda T: T.tensor([True, False]) + 1,
    **{f"round_{d}_{dt}": (lambda d, dt: lambda T: T.round(
        T.tensor(np.linspace(-100, 100, 2001) + 0.005, dtype=getattr(T, dt)), decimals=d))(d, dt)
       for d in (-2, -1, 1, 2, 3) for dt in ("float32", "float64")},
}


def _setitem(T):
    x = T.zeros(3, dtype=T.uint8)
    x[:] = T.tensor([256.0, -1.0, 300.5])
    return x


@pytest.mark.parametrize("name", sorted(CASES))
def test_like_torch(name):
    got, want = CASES[name](wgrad), CASES[name](torch)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    np.testing.assert_array_equal(got.numpy(), want.numpy())


MEANS = {
    "rows_of_3": lambda T, x: x.reshape(-1, 3).mean(1),
    "complex_rows": lambda T, x: T.complex(x, x.flip(0)).reshape(-1, 3).mean(1),
    "mse_mean": lambda T, x: T.nn.functional.mse_loss(x[:3], x[3:6]),
}


@pytest.mark.parametrize("name", sorted(MEANS))
def test_mean_divides_as_torch(name):
    """A mean is torch's ``sum / n``: a true quotient for real sums (jnp.mean's product
    with ``1 / n`` differed in a third of float32 means), ``sum * (1 / n)`` for complex."""
    x = np.random.default_rng(1).standard_normal(3000).astype(np.float32)
    got, want = MEANS[name](wgrad, wgrad.tensor(x)), MEANS[name](torch, torch.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
