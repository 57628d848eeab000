"""Anomaly mode: forward tracebacks on nodes, and NaN checks in backward.

# NOTE [Anomaly mode]
# While anomaly mode is on, every node created (by a Primitive or a custom Function)
# stores the Python traceback of the forward call in ``node.metadata["traceback_"]``, and
# the node that was running backward when it was created (double backward) as its parent.
# The engine then calls nodes through ``_checked_apply``: if a node raises, or (with
# check_nan) returns a gradient containing NaN, a warning prints the forward traceback of
# that node and of its parents, and the error propagates. Off, the cost is one flag test
# per node creation and per node call. As in torch the mode is process-wide.
"""
import os
import sys
import threading
import traceback
import warnings

import jax
import jax.numpy as jnp

from .grad_mode import _DecoratorContextManager

__all__ = ["detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
           "is_anomaly_check_nan_enabled"]


class _AnomalyState:
    __slots__ = ("enabled", "check_nan")

    def __init__(self):
        self.enabled = False
        self.check_nan = True


_state = _AnomalyState()
_running = threading.local()  # the node whose backward is running on this thread
_PKG = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def is_anomaly_enabled():
    """Whether anomaly detection is on."""
    return _state.enabled


def is_anomaly_check_nan_enabled():
    """Whether anomaly detection also checks backward results for NaN."""
    return _state.check_nan


class detect_anomaly(_DecoratorContextManager):
    """Context manager / decorator turning on anomaly detection.

    Nodes created inside record the traceback of their forward call; an error raised in
    their backward, or (``check_nan=True``) a NaN in their result, warns with that
    traceback ("Traceback of forward call that caused the error:"), and NaN raises
    ``RuntimeError: Function 'XBackward0' returned nan values in its 0th output.``

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.zeros(1, requires_grad=True)
    >>> with wgrad.autograd.detect_anomaly():  # doctest: +SKIP
    ...     (x.sqrt() * 0).sum().backward()
    Traceback (most recent call last):
    RuntimeError: Function 'MulBackward0' returned nan values in its 0th output.
    """

    def __init__(self, check_nan=True):
        self.check_nan = check_nan
        self.prev = _state.enabled
        self.prev_check_nan = _state.check_nan
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)

    def __enter__(self):
        self.prev, self.prev_check_nan = _state.enabled, _state.check_nan
        _state.enabled, _state.check_nan = True, self.check_nan

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev, self.prev_check_nan

    def clone(self):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return self.__class__(self.check_nan)


class set_detect_anomaly:
    """Turn anomaly detection on or off; as a context manager, restore it on exit.

    Example
    -------
    >>> import wgrad
    >>> with wgrad.autograd.set_detect_anomaly(True):
    ...     wgrad.autograd.is_anomaly_enabled()
    True
    """

    def __init__(self, mode, check_nan=True):
        self.prev, self.prev_check_nan = _state.enabled, _state.check_nan
        _state.enabled, _state.check_nan = bool(mode), bool(check_nan)

    def __enter__(self):
        return None

    def __exit__(self, *exc):
        _state.enabled, _state.check_nan = self.prev, self.prev_check_nan


# -- used by node creation and by the engine ---------------------------------------------

def _record_forward(node):
    """Store the forward traceback (without wgrad's own trailing frames) on ``node``."""
    frames = traceback.extract_stack()[:-1]
    while frames and frames[-1].filename.startswith(_PKG):
        frames.pop()
    node.metadata["traceback_"] = traceback.format_list(frames)
    node._parent = getattr(_running, "node", None)


def _forward_stack_messages(node):
    """The warnings for an error in ``node``: its forward traceback, then one per parent
    (the node whose double backward created it), as torch warns them."""
    name = node.name()
    meta = node._metadata or {}
    tb = meta.get("traceback_")
    if tb is None:
        return [f"Error detected in {name}. No forward pass information available. Enable "
                f"detect anomaly during forward pass for more information."]
    msgs = [f"Error detected in {name}. Traceback of forward call that caused the error:\n"
            + "".join(tb)]
    parent = getattr(node, "_parent", None)
    while parent is not None:
        ptb = (parent._metadata or {}).get("traceback_")
        if ptb is None:
            break
        msgs.append(f"\n\nPrevious calculation was induced by {parent.name()}. Traceback of "
                    f"forward call that induced the previous calculation:\n" + "".join(ptb))
        parent = getattr(parent, "_parent", None)
    return msgs


def _warn(msg):
    """Warn; a warning turned into an error goes to stderr instead, so the backward
    error itself propagates (torch does the same)."""
    try:
        warnings.warn(msg, stacklevel=3)
    except Warning:
        print(msg, file=sys.stderr)


def _checked_apply(node, inputs):
    """``node.apply(inputs)`` with anomaly reporting (NOTE [Anomaly mode])."""
    prev = getattr(_running, "node", None)
    _running.node = node
    try:
        outputs = node.apply(inputs)
        if _state.check_nan:
            for i, g in enumerate(outputs):
                if g is None or isinstance(g._data, jax.core.Tracer):
                    continue
                if bool(jnp.any(jnp.isnan(g._data))):
                    raise RuntimeError(f"Function '{node.name()}' returned nan values in its "
                                       f"{i}th output.")
        return outputs
    except Exception:
        for msg in _forward_stack_messages(node):
            _warn(msg)
        raise
    finally:
        _running.node = prev
