"""wgrad.amp against torch.amp on a machine without a GPU: what torch does without mixed
precision (disabled autocast, "cuda" disabling itself, a disabled GradScaler) with torch's
warnings; asking for mixed precision raises NotImplementedError."""
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.cuda.amp import GradScaler as CudaGradScaler

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(wgrad.cuda.is_available(), reason="a GPU: autocast raises")


def _run(L):
    """A disabled-AMP training step as user code writes it; its warnings and results."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        x = L.ones(2, requires_grad=True)
        opt = L.optim.SGD([x], lr=0.1)
        scaler = L.cuda.amp.GradScaler()
        with L.autocast("cuda"):
            inside = L.is_autocast_enabled(), L.is_autocast_enabled("cuda")
            loss = (x * 2).sum()
        with L.cuda.amp.autocast():
            pass
        with L.autocast("cpu", enabled=False):
            pass
        scaled = scaler.scale(loss)
        same = scaled is loss
        scaled.backward()
        scaler.unscale_(opt)
        scaler.step(opt)
        scaler.update()
        state = (scaler.is_enabled(), scaler.get_scale(), scaler.state_dict())

        @L.autocast("cpu", enabled=False)
        def f(a):
            return a * 3
        out = f(L.ones(1)).numpy()
    return ([(type(w.message), str(w.message)) for w in seen], inside, same, state,
            x.detach().numpy(), out, str(L.get_autocast_dtype("cpu")).split(".")[1])


def test_disabled_mixed_precision_as_torch():
    got, want = _run(wgrad), _run(torch)
    assert got[0] == want[0]  # the same warnings, in order
    assert got[1:4] == want[1:4] and got[6] == want[6]
    np.testing.assert_array_equal(got[4], want[4])
    np.testing.assert_array_equal(got[5], want[5])


@pytest.mark.parametrize("call", [
    lambda: wgrad.autocast("cpu").__enter__(),
    lambda: wgrad.autocast("cpu", dtype=wgrad.float16)(lambda: 0)(),
    lambda: wgrad.amp.GradScaler("cpu"),
])
def test_mixed_precision_raises(call):
    with pytest.raises(NotImplementedError, match="no automatic mixed precision"):
        call()


def test_device_type_errors_as_torch():
    errors = []
    for L in (wgrad, torch):
        with pytest.raises(RuntimeError) as e:
            L.autocast("tpu")
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert CudaGradScaler is wgrad.cuda.amp.GradScaler  # importable as torch's
