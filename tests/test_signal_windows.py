"""wgrad.signal.windows against torch.signal.windows: values (float32 and float64, both
symmetric and periodic, the short lengths), gradients of a window made with
requires_grad, and torch's errors."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

CALLS = [
    ("bartlett", {}), ("blackman", {}), ("cosine", {}), ("exponential", {"tau": 2.5}),
    ("exponential", {"sym": False, "center": 3.0}), ("gaussian", {"std": 1.7}),
    ("general_cosine", {"a": [0.4, 0.3, 0.2, 0.1]}), ("general_hamming", {"alpha": 0.6}),
    ("hamming", {}), ("hann", {}), ("kaiser", {"beta": 5.0}), ("nuttall", {}),
]


@pytest.mark.parametrize("name,kw", CALLS, ids=[f"{n}{i}" for i, (n, _) in enumerate(CALLS)])
def test_windows_as_torch(name, kw):
    for M in (0, 1, 2, 7, 16):
        for sym in (True, False):
            if sym and "center" in kw:  # a center is for periodic windows only
                continue
            for dt in ("float32", "float64"):
                args = dict(kw, sym=sym, dtype=getattr(wgrad, dt))
                got = getattr(wgrad.signal.windows, name)(M, **args).numpy()
                args["dtype"] = getattr(torch, dt)
                want = getattr(torch.signal.windows, name)(M, **args).numpy()
                assert got.dtype == want.dtype
                np.testing.assert_allclose(got, want, rtol=2e-6 if dt == "float32" else 1e-12,
                                           atol=1e-7 if dt == "float32" else 1e-15)


def test_window_gradients_as_torch():
    out = []
    for L in (wgrad, torch):
        w = L.signal.windows.gaussian(8, std=2.0, dtype=L.float64, requires_grad=True)
        (w * L.arange(8.)).sum().backward()
        out.append((w.detach().numpy(), type(w.grad_fn).__name__))
    np.testing.assert_allclose(out[0][0], out[1][0], rtol=1e-12)
    assert out[0][1] == out[1][1]


@pytest.mark.parametrize("call", [
    lambda W, L: W.hann(-1), lambda W, L: W.hann(4, dtype=L.int64),
    lambda W, L: W.exponential(4, tau=0), lambda W, L: W.exponential(4, center=1.0),
    lambda W, L: W.gaussian(4, std=-1.0), lambda W, L: W.kaiser(4, beta=-1.0),
    lambda W, L: W.general_cosine(4, a=[]), lambda W, L: W.general_cosine(4, a=3),
])
def test_errors_as_torch(call):
    errors = []
    for L in (wgrad, torch):
        with pytest.raises(Exception) as e:
            call(L.signal.windows, L)
        errors.append((type(e.value), str(e.value).replace("wgrad.", "torch.")))
    assert errors[0] == errors[1]
