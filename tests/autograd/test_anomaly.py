"""Anomaly mode: forward tracebacks on nodes, the warning on a failing backward, NaN
checks with torch's message, and the on/off switches."""
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.autograd import Function, detect_anomaly, set_detect_anomaly


@pytest.fixture(autouse=True)
def _anomaly_off():
    from wgrad._autograd.anomaly_mode import _state
    prev = _state.enabled, _state.check_nan
    yield
    _state.enabled, _state.check_nan = prev


class Boom(Function):
    @staticmethod
    def forward(ctx, x):
        return x * 1

    @staticmethod
    def backward(ctx, grad):
        raise ValueError("boom in backward")


def test_switches():
    assert not wgrad.autograd.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled. This mode will "
                                         "increase the runtime"):
        with detect_anomaly(check_nan=False):
            assert wgrad.autograd.is_anomaly_enabled()
            assert not wgrad.autograd.is_anomaly_check_nan_enabled()
    assert not wgrad.autograd.is_anomaly_enabled()
    assert wgrad.autograd.is_anomaly_check_nan_enabled()
    set_detect_anomaly(True)
    assert wgrad.autograd.is_anomaly_enabled()
    set_detect_anomaly(False)
    with set_detect_anomaly(True):
        assert wgrad.autograd.is_anomaly_enabled()
    assert not wgrad.autograd.is_anomaly_enabled()

    with pytest.warns(UserWarning, match="Anomaly Detection"):
        @detect_anomaly()
        def f():
            return wgrad.autograd.is_anomaly_enabled()
    assert f() and not wgrad.autograd.is_anomaly_enabled()


def test_nodes_record_forward_traceback_only_in_anomaly_mode():
    x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)
    y = x * 2
    assert "traceback_" not in y.grad_fn.metadata
    with set_detect_anomaly(True):
        y = x * 2  # FORWARD-LINE-MUL
        z = Boom.apply(x)
    tb = "".join(y.grad_fn.metadata["traceback_"])
    assert "FORWARD-LINE-MUL" in tb and "test_anomaly.py" in tb
    assert "Boom.apply(x)" in z.grad_fn.metadata["traceback_"][-1]


def test_error_in_backward_reports_forward_line():
    x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with detect_anomaly():
            y = Boom.apply(x)  # FORWARD-LINE-BOOM
            with pytest.raises(ValueError, match="boom in backward"):
                y.sum().backward()
    msgs = [str(w.message) for w in rec if "Error detected" in str(w.message)]
    assert len(msgs) == 1
    assert msgs[0].startswith("Error detected in BoomBackward. Traceback of forward call that "
                              "caused the error:\n")
    assert "y = Boom.apply(x)  # FORWARD-LINE-BOOM" in msgs[0]


def test_nan_in_backward_raises_with_torch_message():
    x = wgrad.zeros(2, dtype=wgrad.float64, requires_grad=True)
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with detect_anomaly():
            y = (x * 0).sqrt()  # FORWARD-LINE-NAN (torch: MulBackward0 gets 0 * inf)
            with pytest.raises(RuntimeError, match=r"Function 'MulBackward0' returned nan "
                                                   r"values in its 0th output\."):
                y.sum().backward()
    msgs = [str(w.message) for w in rec if "Error detected" in str(w.message)]
    assert "Error detected in MulBackward0" in msgs[0]
    assert "FORWARD-LINE-NAN" in msgs[0]
    # check_nan=False lets the NaN through, as without anomaly mode
    with set_detect_anomaly(True, check_nan=False):
        (g,) = wgrad.autograd.grad((x.sqrt() * 0).sum(), x)
    assert np.isnan(np.asarray(g)).all()


def test_nan_from_custom_function_names_the_output_index():
    class NanSecond(Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return grad, grad * float("nan")

    a = wgrad.ones(1, dtype=wgrad.float64, requires_grad=True)
    with set_detect_anomaly(True), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="Function 'NanSecondBackward' returned nan "
                                               "values in its 1th output."):
            NanSecond.apply(a, a * 1).sum().backward()


def test_double_backward_reports_parent_traceback():
    class BadDouble(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return Boom.apply(grad * 2 * x)  # created while BadDoubleBackward runs

    x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)
    with set_detect_anomaly(True), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        y = BadDouble.apply(x)  # FORWARD-LINE-PARENT
        (g,) = wgrad.autograd.grad(y.sum(), x, create_graph=True)
        with pytest.raises(ValueError, match="boom"):
            g.sum().backward()
    msgs = [str(w.message) for w in rec]
    i = next(i for i, m in enumerate(msgs) if "Error detected" in m)
    assert msgs[i].startswith("Error detected in BoomBackward.")
    # as torch, the parent's traceback is a warning of its own
    assert "Previous calculation was induced by BadDoubleBackward. Traceback of forward call " \
           "that induced the previous calculation:" in msgs[i + 1]
    assert "FORWARD-LINE-PARENT" in msgs[i + 1]


def test_no_forward_information_message():
    x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)
    y = Boom.apply(x)  # created before anomaly mode
    with set_detect_anomaly(True), warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        with pytest.raises(ValueError):
            y.sum().backward()
    assert any("Error detected in BoomBackward. No forward pass information available"
               in str(w.message) for w in rec)


def _nested_nan_warnings(lib):
    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.sum(0, keepdim=True)

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            g = g.clone().expand(3)  # written through one element below: allowed
            g[0] = 1
            return Inner.apply(g * x, g + x)

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a * 2.0 + b

        @staticmethod
        def backward(ctx, g):
            g2 = g.clone()
            g2[0] = 0
            g2[0] /= 0
            return g.clone(), g2

    x = lib.rand(3, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        with pytest.raises(RuntimeError) as e:
            with lib.autograd.detect_anomaly():
                gx, = lib.autograd.grad(Outer.apply(x), (x,), create_graph=True)
                gx.sum().backward()
    return str(e.value), [str(m.message).split(".")[0].strip() for m in w]


def test_nested_nan_warns_once_per_parent_as_torch():
    torch = pytest.importorskip("torch")
    assert _nested_nan_warnings(wgrad) == _nested_nan_warnings(torch)
