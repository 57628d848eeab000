"""Graph utilities: register_multi_grad_hook, GradientEdge / get_gradient_edge in grad(),
increment_version, Node.metadata."""
import numpy as np
import pytest

import wgrad
from wgrad._autograd.graph import _current_graph_task_id, _will_engine_execute_node
from wgrad.autograd.graph import (GradientEdge, get_gradient_edge, increment_version,
                                  register_multi_grad_hook)


def _t(a):
    return wgrad.tensor(np.asarray(a, np.float64), requires_grad=True)


def test_multi_grad_hook_all_backward():
    a, b, c = _t([1.0, 2.0]), _t([3.0]), _t([4.0])
    calls = []
    h = register_multi_grad_hook((a, b, c), lambda gs: calls.append(
        [None if g is None else np.asarray(g).tolist() for g in gs]))
    ((a * 2).sum() + (b * 5).sum()).backward()
    assert calls == [[[2.0, 2.0], [5.0], None]]  # c is not reached: None, called once
    (a * b).sum().backward()
    assert calls[-1] == [[3.0, 3.0], [3.0], None]
    ((a * 3).sum() + (b * c).sum()).backward()
    assert calls[-1] == [[3.0, 3.0], [4.0], [3.0]]
    assert len(calls) == 3
    h.remove()
    (a * b).sum().backward()
    assert len(calls) == 3


def test_multi_grad_hook_all_with_grad_and_non_leaves():
    x = _t([1.0, 2.0])
    u, v = x * 2, x * 3
    calls = []
    register_multi_grad_hook((u, v), lambda gs: calls.append(len([g for g in gs if g is not None])))
    out = (u * v).sum()
    wgrad.autograd.grad(out, x, retain_graph=True)
    assert calls == [2]
    # grad() that only reaches u: fn fires with v's gradient missing
    wgrad.autograd.grad(u.sum(), x)
    assert calls == [2, 1]
    # u and v themselves as grad() inputs (captured gradients run the hooks too)
    wgrad.autograd.grad(out, (u, v))
    assert calls == [2, 1, 2]


def test_multi_grad_hook_any():
    a, b = _t([1.0]), _t([2.0])
    seen = []
    register_multi_grad_hook((a, b), lambda g: seen.append(float(np.asarray(g)[0])),
                             mode="any")
    (a * 7 + b * 5).sum().backward()
    assert len(seen) == 1 and seen[0] in (7.0, 5.0)
    (b * 4).sum().backward()
    assert seen[-1] == 4.0 and len(seen) == 2
    with pytest.raises(ValueError, match=r"Expects mode to be one of \('all', 'any'\) but got "
                                         r"xx"):
        register_multi_grad_hook((a,), lambda g: None, mode="xx")


def test_current_graph_task_helpers_outside_backward():
    assert _current_graph_task_id() == -1
    with pytest.raises(RuntimeError, match="_will_engine_execute_node should only be called "
                                           "during the backward pass"):
        _will_engine_execute_node(None)
    ids, flags = [], []
    x = _t([1.0])
    y, z = x * 2, x * 3

    def hook(g):
        ids.append(_current_graph_task_id())
        flags.append((_will_engine_execute_node(y.grad_fn),
                      _will_engine_execute_node(z.grad_fn)))
    y.register_hook(hook)
    y.sum().backward(retain_graph=True)
    (y + z).sum().backward()
    assert ids[0] != ids[1] and -1 not in ids
    assert flags == [(True, False), (True, True)]


def test_gradient_edge_as_grad_inputs_and_outputs():
    x = _t([1.0, 2.0])
    a = x * 3
    ea = get_gradient_edge(a)
    assert isinstance(ea, GradientEdge) and ea.node is a.grad_fn and ea.output_nr == 0
    # as an input: the gradient flowing into a
    (ga,) = wgrad.autograd.grad((a * a).sum(), ea, retain_graph=True)
    np.testing.assert_allclose(np.asarray(ga), 2 * np.asarray(a.detach()))
    # as an output: backpropagate from a's edge
    (gx,) = wgrad.autograd.grad(ea, x, wgrad.ones(2, dtype=wgrad.float64))
    np.testing.assert_allclose(np.asarray(gx), [3.0, 3.0])
    # a leaf's edge is its AccumulateGrad
    ex = get_gradient_edge(x)
    assert ex.node.name() == "torch::autograd::AccumulateGrad"
    (g,) = wgrad.autograd.grad((x * 4).sum(), ex)
    np.testing.assert_allclose(np.asarray(g), [4.0, 4.0])
    x2 = _t([1.0])
    wgrad.autograd.backward((x2 * 4).sum(), inputs=[get_gradient_edge(x2)])
    np.testing.assert_allclose(np.asarray(x2.grad), [4.0])
    with pytest.raises(RuntimeError, match="It is not possible to get the gradient edge for a "
                                           "Tensor that does not require gradients"):
        get_gradient_edge(wgrad.ones(1))


def test_increment_version():
    x = _t([1.0, 2.0])
    a = x * 1
    y = a * a
    v = a._version
    increment_version(a)
    assert a._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.sum().backward()
    b, c = wgrad.ones(1), wgrad.ones(1)
    increment_version([b, c])
    assert (b._version, c._version) == (1, 1)


def test_node_metadata():
    x = _t([1.0])
    y = x * 2
    assert y.grad_fn.metadata == {}
    y.grad_fn.metadata["tag"] = 42
    assert y.grad_fn.metadata["tag"] == 42
    assert y.grad_fn.metadata is y.grad_fn.metadata
