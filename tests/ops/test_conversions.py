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


def _complex(n, seed):
    r = np.random.default_rng(seed)
    return (r.standard_normal(n) + 1j * r.standard_normal(n)).astype(np.complex64)


_Z, _W = _complex(2000, 2), _complex(2000, 3)
COMPLEX = {
    "div": lambda T, z, w: z / w, "div_number": lambda T, z, w: z / 0.3,
    "div_complex_number": lambda T, z, w: z / (1 + 2j), "rdiv": lambda T, z, w: 2.0 / z,
    "div_real_tensor": lambda T, z, w: z / w.real, "reciprocal": lambda T, z, w: z.reciprocal(),
    "abs": lambda T, z, w: z.abs(), "normalize": lambda T, z, w: z / z.abs(),
    "abs_squared": lambda T, z, w: z.abs() ** 2,
    "specials": lambda T, z, w: T.tensor(
        [1 + 1j, 0j, 1j, complex("nan+0j"), complex("inf+1j")], dtype=T.complex64) / T.tensor(
        [0j, 0j, complex("inf+0j"), 1 + 0j, 2 + 0j], dtype=T.complex64),
    "abs_specials": lambda T, z, w: T.tensor(
        [complex("inf+nanj"), complex("nan+infj"), complex("nan+1j"), 3e38 + 3e38j],
        dtype=T.complex64).abs(),
}


@pytest.mark.parametrize("name", sorted(COMPLEX))
def test_complex64_division_and_abs_as_torch(name):
    """complex64 quotients are c10::complex's (Smith's scaling, fused multiply-adds) and
    |z| is hypot, as torch's CPU kernels (NOTE [Complex division]: XLA's differed in 38%
    and 35% of values)."""
    got = COMPLEX[name](wgrad, wgrad.tensor(_Z), wgrad.tensor(_W)).numpy()
    want = COMPLEX[name](torch, torch.tensor(_Z), torch.tensor(_W)).numpy()
    np.testing.assert_array_equal(got, want)


def test_complex64_division_gradients():
    """Gradients through the emulated division (backward and forward mode) against torch."""
    def grads(T):
        z = T.tensor(_Z[:50].astype(np.complex128), requires_grad=True)
        w = T.tensor(_W[:50].astype(np.complex128), requires_grad=True)
        (z / w).abs().sum().backward()
        return z.grad.numpy(), w.grad.numpy()

    for a, b in zip(grads(wgrad), grads(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    z = wgrad.tensor(_Z[:4], requires_grad=True)
    assert wgrad.autograd.gradcheck(lambda a, b: a / b, (z.to(wgrad.complex128),
                                   wgrad.tensor(_W[:4]).to(wgrad.complex128).requires_grad_()))
    with wgrad.autograd.forward_ad.dual_level():
        dz = wgrad.autograd.forward_ad.make_dual(wgrad.tensor(_Z[:4]), wgrad.tensor(_W[:4]))
        tangent = wgrad.autograd.forward_ad.unpack_dual(dz / wgrad.tensor(_W[:4])).tangent
    np.testing.assert_allclose(tangent.numpy(), np.ones(4), rtol=1e-6)
