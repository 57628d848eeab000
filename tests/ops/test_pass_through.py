"""NOTE [Pass-through kernels]: a backward kernel that hands gradients on untouched is
skipped, not dispatched. Its results must equal the kernel's own, and the tensors it
hands on must not alias each other."""
import numpy as np
import pytest

import wgrad


@pytest.fixture(autouse=True)
def _node_by_node():
    # a node-by-node backward (under WGRAD_LAZY=1 a lazy group runs the kernels in one
    # computation instead: NOTE [Lazy backward groups])
    with wgrad.lazy(False):
        yield


def _kernel(t):
    n = t.grad_fn
    return n.prim._bwd_cache[(n.akey, n.needs, n.in_meta, n.out_meta)]


def test_add_hands_the_gradient_on_and_matches_the_compiled_kernel():
    x = wgrad.randn(4, dtype=wgrad.complex128, requires_grad=True)
    y = wgrad.randn(4, dtype=wgrad.complex128, requires_grad=True)
    z = x + y
    g = wgrad.randn(4, dtype=wgrad.complex128)
    z.backward(g, retain_graph=True)
    k = _kernel(z)
    assert k.identity == (0, 0)
    # the plain path: the same kernel, dispatched
    plain = k([g._data], [])
    np.testing.assert_array_equal(x.grad.numpy(), np.asarray(plain[0]))
    np.testing.assert_array_equal(y.grad.numpy(), np.asarray(plain[1]))
    # two leaves, two distinct tensors: changing one .grad leaves the other alone
    assert x.grad is not y.grad
    x.grad.zero_()
    np.testing.assert_array_equal(y.grad.numpy(), g.numpy())


def test_computed_gradients_are_not_taken_for_pass_through():
    x = wgrad.randn(3, 1, dtype=wgrad.float64, requires_grad=True)
    y = wgrad.randn(3, 4, dtype=wgrad.float64, requires_grad=True)
    z = x + y * 2  # x's gradient sums over the broadcast dimension
    z.sum().backward(retain_graph=True)
    assert _kernel(z).identity is None
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 1), 4.0))
    np.testing.assert_array_equal(y.grad.numpy(), np.full((3, 4), 2.0))
    r = wgrad.randn(3, dtype=wgrad.float64, requires_grad=True)
    (r.to(wgrad.complex128) * 1j).real.sum().backward()  # real input: the real part
    np.testing.assert_array_equal(r.grad.numpy(), np.zeros(3))


def test_sub_alpha_and_add_alpha_still_scale():
    x = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    y = wgrad.randn(3, dtype=wgrad.complex128, requires_grad=True)
    wgrad.add(x, y, alpha=2 + 1j).sum().abs().backward()
    s = wgrad.add(x.detach(), y.detach(), alpha=2 + 1j).sum()
    np.testing.assert_allclose(y.grad.numpy(), (s / s.abs()).numpy() * np.conj(2 + 1j))
    np.testing.assert_allclose(x.grad.numpy(), (s / s.abs()).numpy() * np.ones(3))
