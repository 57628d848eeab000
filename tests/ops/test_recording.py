"""NOTE [Recording cost]: nodes share their interned ``needs``/``in_meta`` tuples, the
intern tables stay bounded, and gradients are unaffected."""
import numpy as np

import wgrad
from wgrad.ops import _lazy, _lazy_graph, _primitive as P


def test_nodes_of_the_same_op_and_shapes_share_their_metadata():
    x = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    a, b = x.sin(), (x * 2).sin()
    na, nb = a.grad_fn, b.grad_fn
    assert na is not nb
    assert na.needs is nb.needs and na.in_meta is nb.in_meta
    # a different shape gets its own entry
    c = wgrad.randn(4, dtype=wgrad.complex128, requires_grad=True).sin()
    assert c.grad_fn.in_meta != na.in_meta


def test_intern_tables_are_bounded_and_gradients_unchanged(monkeypatch):
    monkeypatch.setattr(P, "_INTERN_MAX", 3)
    # lazily, a signature an earlier test recorded is reused without interning again
    # (NOTE [Recording cost], NOTE [Lazy fast lane]): start from none, so both modes
    # intern here
    monkeypatch.setattr(_lazy, "_AVALS", {})
    monkeypatch.setattr(_lazy_graph, "_FAST", {})
    x = wgrad.tensor(np.array([0.3, -1.2]), requires_grad=True)
    total = 0
    for n in range(1, 9):  # eight distinct input shapes: the table is cleared on the way
        y = wgrad.tensor(np.linspace(0.1, 1.0, n), requires_grad=True)
        (y.sin().sum() * x.cos().sum()).backward()
        np.testing.assert_allclose(y.grad.numpy(), np.cos(np.linspace(0.1, 1.0, n)) *
                                   np.cos([0.3, -1.2]).sum(), rtol=1e-12)
        total += np.sin(np.linspace(0.1, 1.0, n)).sum()
        assert len(P._IN_META) <= P._INTERN_MAX + 1
    np.testing.assert_allclose(x.grad.numpy(), -np.sin([0.3, -1.2]) * total, rtol=1e-12)
