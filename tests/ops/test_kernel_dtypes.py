"""Which dtypes torch's CPU kernels take, and what they return, for ops where wgrad's
JAX code would take others: each case ends as torch's (the result's dtype and values, or
the error's type and message)."""
import numpy as np
import pytest
import torch

import wgrad
from _outcome import outcome

OPS = {
    "abs": lambda T, x: x.abs(), "floor": lambda T, x: x.floor(), "trunc": lambda T, x: x.trunc(),
    "round": lambda T, x: x.round(), "sign": lambda T, x: x.sign(),
    "argmax": lambda T, x: x.argmax(), "argmin": lambda T, x: x.argmin(dim=0),
    "median": lambda T, x: x.median(), "median_dim": lambda T, x: x.median(0),
    "nanmedian": lambda T, x: x.nanmedian(), "trace_1d": lambda T, x: x.trace(),
    "all": lambda T, x: x.all(), "any_dim": lambda T, x: x.any(0),
    "relu": lambda T, x: T.relu(x), "gelu": lambda T, x: T.nn.functional.gelu(x),
    "leaky_relu": lambda T, x: T.nn.functional.leaky_relu(x),
    "silu": lambda T, x: T.nn.functional.silu(x),
    "hardtanh": lambda T, x: T.nn.functional.hardtanh(x),
    "hardtanh_half": lambda T, x: T.nn.functional.hardtanh(x, -0.5, 1.5),
    "relu6": lambda T, x: T.nn.functional.relu6(x), "hypot": lambda T, x: T.hypot(x, x),
    "addcmul": lambda T, x: T.addcmul(x, x, x), "bitwise_and": lambda T, x: x & x,
    "bitwise_not": lambda T, x: T.bitwise_not(x), "invert": lambda T, x: ~x,
    "floor_divide": lambda T, x: x // 2, "remainder": lambda T, x: x % 2,
    "div_trunc": lambda T, x: T.div(x, 2, rounding_mode="trunc"),
    "fft": lambda T, x: T.fft.fft(x), "rfft": lambda T, x: T.fft.rfft(x),
}
DTYPES = ("bool", "uint8", "int8", "int64", "float16", "bfloat16", "float32", "complex64")


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("name", sorted(OPS))
def test_like_torch(name, dtype):
    def run(T):
        x = T.tensor([3, 0, -2, 7]).to(getattr(T, dtype))
        r = outcome(T, lambda T: OPS[name](T, x))
        if isinstance(r, tuple):
            return r
        r = r[0]
        r = r.values if hasattr(r, "values") and not callable(r.values) else r
        return str(r.dtype).split(".")[-1], r.to(T.complex128 if r.is_complex() else
                                               T.float64).tolist()

    got, want = run(wgrad), run(torch)
    if want[0] == "RuntimeError" and want[1].startswith("Unsupported dtype"):
        assert got == want
    elif isinstance(want, tuple) and want[0].endswith("Error"):
        assert got == want
    else:
        assert got[0] == want[0]
        np.testing.assert_allclose(np.asarray(got[1]), np.asarray(want[1]), rtol=1e-3)


def test_hypot_does_not_overflow():
    x, y = wgrad.tensor([1e200, 3.0], dtype=wgrad.float64), torch.tensor([1e200, 3.0],
                                                                         dtype=torch.float64)
    np.testing.assert_allclose(wgrad.hypot(x, x).numpy(), torch.hypot(y, y).numpy(),
                               rtol=1e-15)
