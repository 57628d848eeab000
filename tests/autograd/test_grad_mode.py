"""Grad modes: no_grad, enable_grad, set_grad_enabled, inference_mode — thread-local."""
import threading

import pytest

import wgrad


def leaf():
    return wgrad.ones(2, requires_grad=True)


def test_no_grad_context_decorator_and_bare_decorator():
    x = leaf()
    with wgrad.no_grad():
        assert not wgrad.is_grad_enabled()
        assert not (x * 2).requires_grad
    assert wgrad.is_grad_enabled()

    @wgrad.no_grad()
    def f():
        return x * 2

    @wgrad.no_grad
    def g():
        return x * 2
    assert not f().requires_grad and not g().requires_grad
    assert (x * 2).requires_grad


def test_no_grad_on_generators():
    x = leaf()

    @wgrad.no_grad()
    def gen():
        yield x * 2
        yield x * 3
    assert [t.requires_grad for t in gen()] == [False, False]
    assert wgrad.is_grad_enabled()


def test_enable_grad_inside_no_grad():
    x = leaf()
    with wgrad.no_grad():
        with wgrad.enable_grad():
            assert (x * 2).requires_grad
        assert not (x * 2).requires_grad


def test_set_grad_enabled_function_context_and_decorator():
    x = leaf()
    wgrad.set_grad_enabled(False)
    assert not wgrad.is_grad_enabled()
    wgrad.set_grad_enabled(True)
    with wgrad.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert wgrad.is_grad_enabled()

    @wgrad.set_grad_enabled(False)
    def f():
        return wgrad.is_grad_enabled()
    assert wgrad.is_grad_enabled()
    assert f() is False and wgrad.is_grad_enabled()


def test_grad_mode_is_thread_local():
    seen = []
    with wgrad.no_grad():
        t = threading.Thread(target=lambda: seen.append(wgrad.is_grad_enabled()))
        t.start()
        t.join(timeout=10)
    assert seen == [True]


def test_grad_mode_restored_after_exception():
    with pytest.raises(ValueError):
        with wgrad.no_grad():
            raise ValueError
    assert wgrad.is_grad_enabled()


def test_inference_mode():
    x = leaf()
    with wgrad.inference_mode():
        assert not wgrad.is_grad_enabled() and wgrad.is_inference_mode_enabled()
        i = wgrad.ones(2) * 3
        assert i.is_inference() and not i.requires_grad
    assert not x.is_inference()
    with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
        (i * x).sum().backward()
    with pytest.raises(RuntimeError, match="Setting requires_grad=True on inference tensor "
                                           "outside InferenceMode is not allowed."):
        i.requires_grad_()
    assert not (i + x).is_inference()  # add saves nothing: inference tensors may take part
    with wgrad.inference_mode(False):
        assert wgrad.is_grad_enabled()

    @wgrad.inference_mode()
    def f():
        return wgrad.ones(1).is_inference()
    assert f()
