import os

import pytest
from hypothesis import HealthCheck, settings

import wgrad
from wgrad._autograd.grad_mode import _state

settings.register_profile("dev", max_examples=8, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", max_examples=3, deadline=None, derandomize=True,
                          suppress_health_check=[HealthCheck.too_slow,
                                                 HealthCheck.filter_too_much])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else
                                     "dev"))


@pytest.fixture(autouse=True)
def _restore_global_state():
    """No test leaks grad mode, inference mode, default dtype or saved-tensor hooks."""
    grad, inf = _state.grad, _state.inference
    default = wgrad.get_default_dtype()
    hooks = _saved_hooks_snapshot()
    yield
    _state.grad, _state.inference = grad, inf
    wgrad.set_default_dtype(default)
    _saved_hooks_restore(hooks)


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
