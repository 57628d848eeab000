import os

# On a GPU each pytest-xdist worker would otherwise preallocate 75% of its memory and the
# second one would fail to start (issue #23); set before JAX is imported
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck, settings  # noqa: E402

import wgrad  # noqa: E402
from wgrad._autograd.grad_mode import _state
from wgrad.ops import _lazy

settings.register_profile("dev", max_examples=8, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=2, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.filter_too_much])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else
                                     "dev"))


@pytest.fixture(autouse=True)
def _restore_global_state():
    """No test leaks grad mode, inference mode, default dtype or saved-tensor hooks, and
    none starts with a lazy segment cap an earlier test grew."""
    grad, inf = _state.grad, _state.inference
    default = wgrad.get_default_dtype()
    hooks = _saved_hooks_snapshot()
    _lazy.reset_cap()  # NOTE [Segment cap growth]: a test's segments do not depend on others'
    yield
    _state.grad, _state.inference = grad, inf
    wgrad.set_default_dtype(default)
    _saved_hooks_restore(hooks)


@pytest.fixture
def on_the_cpu():
    """wgrad's new tensors on the CPU, where torch makes its own: for tests comparing what
    default-made tensors print or report with torch's (where JAX has a GPU, wgrad's are
    made there: docs/differences.md, "The default device")."""
    wgrad.set_default_device("cpu")
    yield
    wgrad.set_default_device(None)


def _saved_hooks_snapshot():
    try:
        from wgrad._autograd.graph import _hooks_state
    except ImportError:
        return None
    return list(_hooks_state().stack)


def _saved_hooks_restore(snapshot):
    if snapshot is None:
        return
    from wgrad._autograd.graph import _hooks_state
    _hooks_state().stack[:] = snapshot


# -- tolerances for comparing with torch -------------------------------------------------
# (rtol, atol) per dtype: torch.testing.assert_close's defaults on a CPU. On a GPU, XLA's
# kernels legitimately differ from torch's by more (reductions reassociated and fused,
# other cuBLAS/cuFFT algorithms, transcendental functions by other approximations), so the
# tolerances grow by GPU_FACTOR there.
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "complex64": (1.3e-6, 1e-5),
               "float64": (1e-7, 1e-7), "complex128": (1e-7, 1e-7)}
GPU_FACTOR = 10


def tolerance(dtype, device=None):
    """``(rtol, atol)`` for comparing a result of ``dtype`` with torch's, on ``device``
    (default: where JAX computes, ``jax.default_backend()``)."""
    name = str(dtype).rsplit(".", 1)[-1]
    rtol, atol = _TOLERANCES.get(name, (0.0, 0.0))
    on_gpu = (str(device).split(":")[0] in ("cuda", "gpu") if device is not None
              else jax.default_backend() == "gpu")
    return (rtol * GPU_FACTOR, atol * GPU_FACTOR) if on_gpu else (rtol, atol)


@pytest.fixture
def tol():
    """The ``tolerance`` function, for tests comparing with torch."""
    return tolerance


def pytest_collection_modifyitems(items):
    """tests/lazy last: the first ``lazy()`` block in a process turns ``Tensor._data`` into a
    property for the rest of it (NOTE [Lazy segments]), which costs small-op code ~8%;
    running those tests last keeps the rest of each xdist worker on the bare slot."""
    items.sort(key=lambda item: "/tests/lazy/" in str(item.fspath).replace("\\", "/"))

