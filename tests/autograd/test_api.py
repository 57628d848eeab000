"""backward()/grad() entry points, their errors (torch's messages), accumulation,
create_graph, Node surface, hooks and their order, grad(inputs) pruning."""
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from wgrad.autograd import grad


def leaf(values, dtype=wgrad.float64):
    return wgrad.tensor(values, dtype=dtype, requires_grad=True)


# -- errors -----------------------------------------------------------------------------

def test_implicit_gradient_needs_a_scalar():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar "
                                           "outputs"):
        (x * 2).backward()


def test_implicit_gradient_needs_a_real_output():
    z = leaf([1j], wgrad.complex64)
    with pytest.raises(RuntimeError, match="only for real scalar outputs but got "
                                           "wgrad.complex64"):
        (z * 2).sum().backward()


@pytest.mark.parametrize("shape,dtype,retain,fast", [
    ((), "float32", False, True),      # loss.backward(): _scalar_root's short path
    ((), "float64", True, True),
    ((1,), "float64", False, False),   # one element, not 0-d: the general path
    ((), "bfloat16", False, False),
])
def test_scalar_backward_short_path_matches_torch(monkeypatch, shape, dtype, retain, fast):
    import torch
    from wgrad import autograd as A
    general = []
    make = A._make_grads
    monkeypatch.setattr(A, "_make_grads", lambda *a: general.append(1) or make(*a))
    got = []
    for lib in (wgrad, torch):
        x = lib.tensor([0.5, -1.5], dtype=getattr(lib, dtype), requires_grad=True)
        loss = (x.sin() * x).sum().reshape(shape)
        loss.backward(retain_graph=retain)
        if retain:
            loss.backward()
        got.append(x.grad.float().numpy())
    assert (not general) is fast
    np.testing.assert_allclose(got[0], got[1], rtol=1e-2 if dtype == "bfloat16" else 1e-6)


def test_output_without_grad_fn():
    with pytest.raises(RuntimeError, match="element 0 of tensors does not require grad and "
                                           "does not have a grad_fn"):
        wgrad.ones(2).sum().backward()


def test_unused_input_and_allow_unused():
    a, b = leaf([1.0]), leaf([2.0])
    with pytest.raises(RuntimeError, match="The differentiated Tensor at index 1 appears to "
                                           "not have been used in the graph"):
        grad((a * 3).sum(), [a, b])
    ga, gb = grad((a * 3).sum(), [a, b], allow_unused=True)
    assert ga.tolist() == [3.0] and gb is None
    ga, gb = grad((a * 3).sum(), [a, b], materialize_grads=True)
    assert gb.tolist() == [0.0]
    with pytest.raises(ValueError, match="Expected allow_unused to be True"):
        grad((a * 3).sum(), [a, b], materialize_grads=True, allow_unused=False)


def test_input_not_requiring_grad():
    a = leaf([1.0])
    with pytest.raises(RuntimeError, match="One of the differentiated Tensors does not "
                                           "require grad"):
        grad((a * 3).sum(), [wgrad.ones(1)])


def test_gradient_shape_and_dtype_mismatch():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"Mismatch in shape: grad_output\[0\] has a shape "
                                           r"of wgrad.Size\(\[3\]\) and output\[0\] has a shape "
                                           r"of wgrad.Size\(\[2\]\)"):
        (x * 2).backward(wgrad.ones(3))
    z = leaf([1j], wgrad.complex128)
    with pytest.raises(RuntimeError, match="For complex Tensors, both grad_output and output "
                                           "are required to have the same dtype"):
        (z * 2).backward(wgrad.ones(1, dtype=wgrad.float64))


def test_second_backward_through_freed_graph():
    x = leaf([1.0, 2.0])
    y = (x * x).sum()
    y.backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second "
                                           "time"):
        y.backward()
    y2 = (x * x).sum()
    y2.backward(retain_graph=True)
    y2.backward()
    assert x.grad.tolist() == [2 + 2 + 2, 4 + 4 + 4]


def test_graph_with_nothing_saved_backprops_twice():
    x = leaf([1.0, 2.0])
    y = (x + 1).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]


def test_empty_inputs_to_backward():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be "
                                           "empty."):
        x.sum().backward(inputs=[])


def test_requires_grad_flags():
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="you can only change requires_grad flags of leaf "
                                           "variables"):
        (x * 2).requires_grad_(False)
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require "
                                           "gradients"):
        wgrad.ones(2, dtype=wgrad.int64).requires_grad_()
    assert (x * 2).requires_grad and not (x * 2).is_leaf and x.is_leaf
    assert not (x.detach() * 2).requires_grad
    y = wgrad.ones(2)
    assert y.requires_grad_() is y and y.requires_grad


# -- accumulation, inputs=, create_graph ---------------------------------------------------

def test_grad_accumulates_and_keeps_identity():
    x = leaf([1.0, 2.0])
    (x * 3).sum().backward()
    g = x.grad
    (x * 3).sum().backward()
    assert x.grad is g and g.tolist() == [6.0, 6.0]


def test_backward_inputs_accumulates_only_there():
    a, b = leaf([1.0]), leaf([2.0])
    (a * b).sum().backward(inputs=[b])
    assert a.grad is None and b.grad.tolist() == [1.0]
    c = a * 2
    (c * b).sum().backward(inputs=[c])
    assert c.grad.tolist() == [2.0] and a.grad is None


def test_complex_gradient_is_conjugate_of_jax():
    z0 = np.array([0.3 + 0.4j, -1.0 + 2.0j])
    z = leaf(z0, wgrad.complex128)
    ((z * z).abs() ** 2 + z.real * z.imag).sum().backward()
    jg = jax.grad(lambda z: jnp.sum(jnp.abs(z * z) ** 2 + z.real * z.imag))(jnp.asarray(z0))
    np.testing.assert_allclose(z.grad.numpy(), np.conj(jg), rtol=1e-12)


def test_double_backward_complex_matches_jax_hvp():
    z0 = jnp.asarray([0.3 + 0.4j, -1.0 + 2.0j])
    z = leaf(np.asarray(z0), wgrad.complex128)
    loss = ((z.sin() * z.conj()).abs() ** 2).sum()
    (g,) = grad(loss, z, create_graph=True)
    assert g.requires_grad and g.grad_fn is not None
    v = wgrad.tensor([1.0 - 0.5j, 0.2 + 1j], dtype=wgrad.complex128)
    (h,) = grad((g.conj() * v).real.sum(), z)

    def f(x):  # the same loss over R^2n, jax's convention
        zz = x[:2] + 1j * x[2:]
        return jnp.sum(jnp.abs(jnp.sin(zz) * jnp.conj(zz)) ** 2)
    x0 = jnp.concatenate([z0.real, z0.imag])
    vv = jnp.concatenate([v._data.real, v._data.imag])
    hv = jax.jvp(jax.grad(f), (x0,), (vv,))[1]
    np.testing.assert_allclose(h.numpy(), np.asarray(hv[:2] + 1j * hv[2:]), rtol=1e-10)


def test_create_graph_accumulates_a_differentiable_grad():
    x = leaf([1.5])
    (x ** 3).sum().backward(create_graph=True)
    assert x.grad.requires_grad
    (gg,) = grad(x.grad.sum(), x)
    assert gg.tolist() == [6 * 1.5]


# -- nodes ---------------------------------------------------------------------------------

def test_node_surface():
    x = leaf([1.0, 2.0])
    y = x * x
    fn = y.grad_fn
    assert fn.name() == "MulBackward0" and "grad_fn=<MulBackward0>" in repr(y)
    (n0, i0), (n1, i1) = fn.next_functions
    assert n0 is n1 and n0.name() == "torch::autograd::AccumulateGrad" and n0.variable is x
    assert i0 == i1 == 0
    assert fn._saved_self is x and fn._saved_other is x
    e = x.exp()
    assert e.grad_fn._saved_result is not e
    np.testing.assert_array_equal(e.grad_fn._saved_result.numpy(force=True), e.numpy(force=True))
    fn.metadata["k"] = 1
    assert fn.metadata == {"k": 1}
    z = y + 1
    assert z.grad_fn._sequence_nr() > fn._sequence_nr()
    assert z.grad_fn.next_functions[1] == (None, 0)


def test_grad_inputs_never_runs_unneeded_nodes():
    a, b = leaf([1.0]), leaf([2.0])
    ran = []
    side = (b * 5).sin()
    side.grad_fn.register_prehook(lambda g: ran.append("side"))
    main = a * 2
    main.grad_fn.register_prehook(lambda g: ran.append("main"))
    out = (main + side).sum()
    grad(out, [a])
    assert ran == ["main"]


# -- hooks ---------------------------------------------------------------------------------

def test_hook_order_follows_torch_note():
    order = []
    x = leaf([1.0, 2.0])
    y = x * 2
    y.register_hook(lambda g: order.append("tensor_hook1"))
    y.retain_grad()
    y.register_hook(lambda g: order.append("tensor_hook2"))
    y.grad_fn.register_prehook(lambda g: order.append("node_prehook"))
    y.grad_fn.register_hook(lambda gi, go: order.append("node_posthook"))
    x.register_hook(lambda g: order.append("leaf_hook"))
    x.register_post_accumulate_grad_hook(lambda t: order.append("post_acc"))
    y.sum().backward()
    assert order == ["tensor_hook1", "tensor_hook2", "node_prehook", "node_posthook",
                     "leaf_hook", "post_acc"]
    assert y.grad.tolist() == [1.0, 1.0]


def test_tensor_hook_replaces_gradient_and_handle_removes():
    x = leaf([1.0, 2.0])
    h = x.register_hook(lambda g: g * 10)
    (x * 1).sum().backward()
    assert x.grad.tolist() == [10.0, 10.0]
    h.remove()
    x.grad = None
    (x * 1).sum().backward()
    assert x.grad.tolist() == [1.0, 1.0]
    y = x * 3
    y.register_hook(lambda g: g + 1)
    (gx,) = grad(y.sum(), x)
    assert gx.tolist() == [6.0, 6.0]


def test_node_hooks_replace_gradients():
    x = leaf([1.0])
    y = x * 2
    y.grad_fn.register_prehook(lambda go: (go[0] * 5,))
    y.grad_fn.register_hook(lambda gi, go: (gi[0] + 1, gi[1]))
    y.sum().backward()
    assert x.grad.tolist() == [11.0]


def test_post_accumulate_grad_hook_sees_accumulated_grad():
    x = leaf([1.0])
    seen = []
    x.register_post_accumulate_grad_hook(lambda t: seen.append(t.grad.tolist()))
    (x * 2).sum().backward()
    (x * 2).sum().backward()
    assert seen == [[2.0], [4.0]]


def test_hook_registration_errors():
    with pytest.raises(RuntimeError, match="cannot register a hook on a tensor that doesn't "
                                           "require gradient"):
        wgrad.ones(2).register_hook(lambda g: g)
    x = leaf([1.0])
    with pytest.raises(RuntimeError, match="post accumulate grad hooks cannot be registered "
                                           "on non-leaf tensors"):
        (x * 2).register_post_accumulate_grad_hook(lambda t: None)
    with pytest.raises(RuntimeError, match="can't retain_grad on Tensor that has "
                                           "requires_grad=False"):
        wgrad.ones(2).retain_grad()


def test_nonleaf_grad_access_warns():
    x = leaf([1.0])
    with pytest.warns(UserWarning, match="is not a leaf Tensor is being accessed"):
        assert (x * 2).grad is None
    y = x * 2
    y.retain_grad()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert y.grad is None


def test_hook_on_an_output_without_gradient_is_called_with_none():
    """A multi-output node that runs calls the hooks of an output that got no gradient,
    with None (torch wraps the undefined gradient as None)."""
    torch = pytest.importorskip("torch")
    got = {}
    for lib in (torch, wgrad):
        a = lib.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=lib.float64, requires_grad=True)
        vals, vecs = lib.linalg.eigh(a)
        seen = []
        vecs.register_hook(lambda g: seen.append(None if g is None else "tensor"))
        vals.register_hook(lambda g: seen.append(None if g is None else "tensor"))
        vals.sum().backward()
        got[lib.__name__] = seen
    assert got["wgrad"] == got["torch"] == [None, "tensor"]
