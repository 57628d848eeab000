"""linspace's values against torch's, bit for bit (NOTE [linspace's values])."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(7)
# random ranges over eight decades, and the edges: no steps, one, two, equal ends, integers
CASES = [(float(a), float(b), int(n)) for (a, b), n in zip(
    _rng.standard_normal((40, 2)) * 10.0 ** _rng.uniform(-3, 5, (40, 2)),
    _rng.integers(2, 3000, 40))] + [
    (0.0, 1.0, 0), (2.0, 3.0, 1), (-1.0, 1.0, 2), (5.0, 5.0, 9), (0, 10, 4), (-7, 100, 33),
    (1e-3, 3e4, 513), (-3.3, 7.1, 101)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int64"])
def test_linspace_matches_torch_bit_for_bit(dtype):
    for start, end, steps in CASES:
        if dtype.startswith("int"):
            start, end = int(start) % 100000, int(end) % 100000
        got = wgrad.linspace(start, end, steps, dtype=getattr(wgrad, dtype)).numpy()
        want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want, err_msg=f"{start} {end} {steps}")


def test_linspace_default_dtype_and_requires_grad():
    t = wgrad.linspace(-2.5, 4.0, 7, requires_grad=True)
    assert t.dtype == wgrad.float32 and t.requires_grad
    np.testing.assert_array_equal(t.detach().numpy(), torch.linspace(-2.5, 4.0, 7).numpy())


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("source", ["float64", "int64", "list"])
def test_halves_from_host_data_round_as_torchs(dtype, source):
    """torch makes a half from a float32 (c10::Half(float)): a double just above a half's
    tie rounds through the float32 tie, to even; a direct rounding would go up."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    halves = rng.uniform(-4, 4, 500).astype(np.float16 if dtype == "float16" else np.float32)
    spacing = np.abs(np.spacing(halves.astype(np.float16))).astype(np.float64)
    x = halves.astype(np.float64) + spacing / 2 + 1e-12  # just above the midpoint
    if source == "int64":
        x = rng.integers(-2**40, 2**40, 500)
    data = x.tolist() if source == "list" else x
    w = wgrad.tensor(data, dtype=getattr(wgrad, dtype)).float().numpy()
    t = torch.tensor(data, dtype=getattr(torch, dtype)).float().numpy()
    np.testing.assert_array_equal(w, t)
