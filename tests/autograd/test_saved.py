"""Saved tensors: _saved_/_raw_saved_, pack/unpack hooks, default hooks, release, versions.

Scenarios follow PyTorch's test_autograd.py (test_saved_tensor_hooks_*, test_default_saved_
tensors_hooks_*, test_saved_variable_version_counter, test_save_on_cpu_*)."""
import gc
import threading
import weakref

import numpy as np
import pytest

import wgrad
from wgrad.autograd.graph import (disable_saved_tensors_hooks, save_on_cpu,
                                  saved_tensors_hooks)

VERSION_ERR = "one of the variables needed for gradient computation has been modified by an " \
              "inplace operation"
TWICE_ERR = "Trying to backward through the graph a second time"


def _x(*shape, dtype=wgrad.float64):
    return wgrad.randn(*shape, dtype=dtype, requires_grad=True)


# -- _saved_ / _raw_saved_ -------------------------------------------------------------

def test_saved_input_is_the_tensor_and_saved_output_is_a_copy():
    x = _x(3)
    y = x.sin()
    assert y.grad_fn._saved_self is x
    n = x * 2
    assert n.sin().grad_fn._saved_self is n
    z = x.exp()
    r = z.grad_fn._saved_result
    assert r is not z
    assert r.grad_fn is z.grad_fn
    np.testing.assert_array_equal(r.detach().numpy(), z.detach().numpy())


def test_python_scalars_are_not_packed():
    x = _x(3)
    calls = []
    with saved_tensors_hooks(lambda t: calls.append(t) or t, lambda t: t):
        y = x.pow(2)
    assert len(calls) == 1 and calls[0] is x  # only self, not the exponent 2
    assert y.grad_fn._saved_exponent == 2


def test_register_hooks_pack_once_unpack_every_access():
    x = _x(3)
    y = x * x
    counts = [0, 0]

    def pack(t):
        counts[0] += 1
        return t.detach().numpy().copy()

    def unpack(a):
        counts[1] += 1
        return wgrad.tensor(a)
    y.grad_fn._raw_saved_self.register_hooks(pack, unpack)
    assert counts == [1, 0]
    a = y.grad_fn._saved_self
    b = y.grad_fn._saved_self
    assert counts == [1, 2] and a is not x and b is not a
    np.testing.assert_array_equal(a.detach().numpy(), x.detach().numpy())
    y.sum().backward()
    assert counts == [1, 3]
    np.testing.assert_allclose(x.grad.numpy(), 2 * x.detach().numpy())


def test_unpack_must_return_tensor():
    x = _x(3)
    y = x.sin()
    y.grad_fn._raw_saved_self.register_hooks(lambda t: t, lambda t: 1)
    with pytest.raises(TypeError, match="Output of saved tensor unpack_hook expected to be a "
                                        "Tensor but got result of type int"):
        y.grad_fn._saved_self


def test_register_hooks_errors():
    x = _x(3)
    y = x.sin()
    raw = y.grad_fn._raw_saved_self
    raw.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(RuntimeError, match="whose hooks have already been set. Hint: only one "
                                           "pair of hooks is allowed at a time."):
        raw.register_hooks(lambda t: t, lambda t: t)
    z = (x * x).sum()
    raw = z.grad_fn.next_functions[0][0]._raw_saved_self
    z.backward()
    with pytest.raises(RuntimeError, match="Calling register_hooks on a saved tensor after it "
                                           "has been freed"):
        raw.register_hooks(lambda t: t, lambda t: t)
    with pytest.raises(TypeError, match="register_hooks"):
        x.exp().grad_fn._raw_saved_result.register_hooks(1, lambda t: t)


def test_register_hooks_on_saved_none():
    from wgrad.ops._primitive import Primitive
    p = Primitive("opt_mul", lambda self, w: self if w is None else self * w,
                  self=lambda grad, w: grad if w is None else grad * w.conj())
    y = p(_x(2), None)
    assert y.grad_fn._saved_w is None
    with pytest.raises(RuntimeError, match="Calling register_hooks on a saved tensor with "
                                           "value None is forbidden"):
        y.grad_fn._raw_saved_w.register_hooks(lambda t: t, lambda t: t)


def test_pack_hook_modifying_input_in_place_raises():
    x = _x(3)
    y = x * 1
    with saved_tensors_hooks(lambda t: t.add_(1), lambda t: t):
        with pytest.raises(RuntimeError, match="A saved tensor pack hook is modifying its "
                                               "input in place"):
            y.sin()


# -- default hooks ---------------------------------------------------------------------

def test_default_hooks_pack_unpack_counts_and_gradient():
    x = _x(4)
    packs, unpacks = [], [0]

    def pack(t):
        packs.append(t)
        return t.detach().numpy().copy()

    def unpack(a):
        unpacks[0] += 1
        return wgrad.tensor(a)
    with saved_tensors_hooks(pack, unpack):
        y = x.sin()      # saves self
        z = y.exp()      # saves result
        w = (z * y).sum()
    assert len(packs) == 4 and packs[0] is x
    w.backward()
    assert unpacks[0] == 4
    xv = x.detach().numpy()
    expected = np.exp(np.sin(xv)) * (np.sin(xv) + 1) * np.cos(xv)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_innermost_default_hooks_win():
    x = _x(2)
    seen = []
    with saved_tensors_hooks(lambda t: seen.append("outer") or t, lambda t: t):
        with saved_tensors_hooks(lambda t: seen.append("inner") or t, lambda t: t):
            x.sin()
        x.cos()
    x.tan()
    assert seen == ["inner", "outer"]


def test_hooks_are_thread_local():
    x = _x(2)
    seen = []

    def work():
        x.sin()
    with saved_tensors_hooks(lambda t: seen.append(t) or t, lambda t: t):
        th = threading.Thread(target=work)
        th.start()
        th.join(timeout=30)
        assert not th.is_alive()
    assert seen == []


def test_hooks_skip_version_check_as_torch():
    x = _x(3)
    with saved_tensors_hooks(lambda t: t.detach() * 1, lambda t: t):
        y = x * 1
        z = y.sin()
    y.add_(1)
    z.sum().backward()  # the packed copy is what the hooks return: no version check
    assert x.grad is not None


def test_disable_saved_tensors_hooks():
    with disable_saved_tensors_hooks("no hooks in here"):
        with pytest.raises(RuntimeError, match="no hooks in here"):
            with saved_tensors_hooks(lambda t: t, lambda t: t):
                pass
    with saved_tensors_hooks(lambda t: t, lambda t: t):
        with pytest.raises(RuntimeError, match="outer hooks"):
            with disable_saved_tensors_hooks("outer hooks"):
                pass

    @disable_saved_tensors_hooks("decorated")
    def f():
        with saved_tensors_hooks(lambda t: t, lambda t: t):
            pass
    with pytest.raises(RuntimeError, match="decorated"):
        f()
    with saved_tensors_hooks(lambda t: t, lambda t: t):  # restored on exit
        pass


def test_save_on_cpu_copies_to_host_and_back():
    x = wgrad.randn(3, 3, dtype=wgrad.complex128, requires_grad=True)
    with save_on_cpu(pin_memory=False) as h:
        y = x * x.conj().exp()
    raw = y.grad_fn._raw_saved_self
    dev, arr = h.pack_hook(x)
    assert isinstance(arr, np.ndarray) and not np.shares_memory(arr, np.asarray(x._data))
    u = y.grad_fn._saved_self
    assert u is not x and u.device == x.device
    np.testing.assert_array_equal(u.detach().numpy(), x.detach().numpy())
    y.abs().sum().backward()
    ref = wgrad.randn(1)  # unrelated tensor: the hooks are gone
    x2 = x.detach().requires_grad_()
    (x2 * x2.conj().exp()).abs().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), x2.grad.numpy(), rtol=1e-12)
    assert raw is not None and ref.shape == (1,)


# -- release ---------------------------------------------------------------------------

def test_release_after_backward_and_retain_graph():
    x = _x(3)
    y = x.sin().sum()
    y.backward(retain_graph=True)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(x.detach().numpy()))
    with pytest.raises(RuntimeError, match=TWICE_ERR):
        y.backward()
    with pytest.raises(RuntimeError, match=TWICE_ERR):
        y.grad_fn.next_functions[0][0]._saved_self


def test_graph_with_nothing_saved_backprops_twice():
    x = _x(3)
    y = (x + 1).sum()
    y.backward()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.ones(3))


@wgrad.lazy(False)  # a lazy group holds a saved result of its own weakly (test_groups.py)
def test_saved_arrays_unreachable_after_backward():
    x = _x(50)
    h = x * 2
    ref_t, ref_a = weakref.ref(h), weakref.ref(h._data)
    e = h.sin().exp()
    ref_r = weakref.ref(e._data)
    out = (e * 3).sum()
    del h, e
    gc.collect()
    assert ref_t() is not None and ref_a() is not None and ref_r() is not None
    out.backward()
    gc.collect()
    assert ref_t() is None and ref_a() is None and ref_r() is None


# -- version counters ------------------------------------------------------------------

def test_version_error_message_for_non_leaf():
    x = _x(2, 3)
    y = x * 1
    z = y.sin()
    y.add_(1)
    with pytest.raises(RuntimeError, match=r"inplace operation: \[torch.DoubleTensor \[2, 3\]\], "
                       r"which is output 0 of Add, is at version 1; expected version 0 "
                       r"instead. Hint:"):
        z.sum().backward()


def test_version_error_for_saved_output():
    x = _x(3)
    z = x.exp()
    z.mul_(2)
    with pytest.raises(RuntimeError, match=r"\[torch.DoubleTensor \[3\]\], which is output 0 of "
                       r"Exp, is at version 1; expected version 0"):
        z.sum().backward()


def test_no_grad_inplace_and_detached_alias_bump_version():
    x = _x(3)
    z = x.sin()
    with wgrad.no_grad():
        x.add_(1)
    assert x._version == 1
    with pytest.raises(RuntimeError, match=r"\[torch.DoubleTensor \[3\]\] is at version 1; "
                                           r"expected version 0 instead"):
        z.sum().backward()
    w = _x(3)
    z = w.sin()
    w.detach().mul_(2)
    assert w._version == 1
    with pytest.raises(RuntimeError, match=VERSION_ERR):
        z.sum().backward()


def test_modified_through_view_names_copyslices():
    x = _x(2, 3)
    y = x * 1
    z = y.sin()
    y[0].mul_(2)
    with pytest.raises(RuntimeError, match="which is output 0 of torch::autograd::CopySlices, "
                                           "is at version 1"):
        z.sum().backward()


def test_packed_value_does_not_keep_the_original_array_alive():
    """A pack hook that detaches and copies out must let the original array go (the
    saved value must not hold the version counter's alias storage)."""
    import gc

    import jax
    import numpy as np

    import wgrad
    from wgrad.autograd.graph import saved_tensors_hooks

    store = {}

    def pack(t):
        store[len(store)] = np.asarray(t.detach()._data).copy()
        return len(store) - 1

    x = wgrad.randn(4, 8, dtype=wgrad.complex128, requires_grad=True)
    gc.collect()
    before = sum(a.nbytes for a in jax.live_arrays())
    with saved_tensors_hooks(pack, lambda k: wgrad.tensor(store[k])):
        y = x
        for _ in range(5):
            y = (y * 1.5).tanh()
        loss = (y.abs() ** 2).sum()
    del y
    gc.collect()
    held = sum(a.nbytes for a in jax.live_arrays()) - before
    assert held < 4 * 8 * 16 * 2, f"the graph still holds {held} bytes of JAX arrays"
    loss.backward()
    assert x.grad is not None and x.grad.shape == x.shape
