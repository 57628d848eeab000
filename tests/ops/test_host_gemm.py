"""Products computed by numpy's BLAS on the CPU (NOTE [Host GEMM]): values and gradients
against torch and finite differences, which calls take the host path, and that the
arrays JAX adopts from numpy stay valid."""
import gc

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import torch

import wgrad
from wgrad.ops import _host_gemm as H

pytestmark = pytest.mark.skipif(
    jax.default_backend() != "cpu" or len(jax.devices()) > 1,
    reason="the host path is taken only where JAX has one device, a CPU")


@pytest.fixture
def host_calls(monkeypatch):
    """The products numpy computed since the test started; every complex product of
    concrete operands goes to numpy, however small (the tests' products are), lazily
    (WGRAD_LAZY=1) too."""
    monkeypatch.setattr(H, "MIN_WORK", 0)
    monkeypatch.setattr(H, "MIN_WORK_LAZY", 0)
    calls = []
    real = H._product

    def counted(*a, **k):
        calls.append(1)
        return real(*a, **k)
    monkeypatch.setattr(H, "_product", counted)
    return calls


def _rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _pair(rng, shapes, dtype, grads):
    arrays = [_rand(rng, s, dtype) for s in shapes]
    w = [wgrad.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    t = [torch.tensor(a, requires_grad=g) for a, g in zip(arrays, grads)]
    return w, t


# (function, operand shapes, which need grad, keyword arguments, how many products numpy
# computes in the forward and backward together); every forward here is numpy's, where
# all operands are concrete
CASES = [
    ("matmul", [(5, 7), (7, 3)], (True, True), {}, 3),
    ("matmul", [(5, 7), (7, 3)], (False, True), {}, 2),
    ("matmul", [(5, 7), (7, 3)], (True, False), {}, 2),
    ("matmul", [(64, 40), (40, 48)], (True, True), {}, 3),  # the conjugate on the other side
    ("matmul", [(2, 4, 6), (2, 6, 3)], (True, True), {}, 3),
    ("matmul", [(2, 4, 6), (6, 3)], (True, True), {}, 3),  # the matrix's gradient folds rows
    ("matmul", [(2, 1, 4, 6), (3, 6, 5)], (True, True), {}, 1),  # XLA's backward kernel
    ("matmul", [(4, 6), (2, 6, 3)], (True, True), {}, 1),  # XLA's backward kernel
    ("matmul", [(3, 5)], (True,), {"transpose": True}, 3),  # x @ x.mT: one tensor, two uses
    ("bmm", [(3, 4, 5), (3, 5, 2)], (True, True), {}, 3),
    ("addmm", [(6,), (4, 5), (5, 6)], (True, True, True), {}, 3),
    ("addmm", [(4, 6), (4, 5), (5, 6)], (True, True, True), {}, 3),
    ("addmm", [(1, 6), (4, 5), (5, 6)], (True, False, True), {"beta": 0.5, "alpha": 2}, 2),
    ("addmm", [(4, 1), (4, 5), (5, 6)], (True, True, False), {"beta": 0}, 2),
    ("linear", [(4, 5), (6, 5), (6,)], (True, True, True), {}, 3),
    ("linear", [(2, 3, 5), (6, 5), (6,)], (True, True, True), {}, 3),
]


def _call(lib, name, ts, kw):
    if kw.get("transpose"):
        return ts[0] @ ts[0].mT
    if name == "linear":
        return lib.nn.functional.linear(*ts)
    return getattr(lib, name)(*ts, **kw)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
@pytest.mark.parametrize("name,shapes,grads,kw,n_host", CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_host_products_match_torch(name, shapes, grads, kw, n_host, dtype, host_calls):
    rng = np.random.default_rng(len(host_calls) + len(shapes))
    w, t = _pair(rng, shapes, dtype, grads)
    wo, to = _call(wgrad, name, w, kw), _call(torch, name, t, kw)
    assert host_calls  # numpy computed the forward
    g = _rand(rng, tuple(to.shape), dtype)
    wo.backward(wgrad.tensor(g))
    to.backward(torch.tensor(g))
    assert len(host_calls) == n_host
    rtol = 1e-5 if np.dtype(dtype).itemsize <= 8 else 1e-12
    np.testing.assert_allclose(wo.detach().numpy(), to.detach().numpy(), rtol=rtol,
                               atol=rtol * 10)
    for a, b in zip(w, t):
        if b.grad is None:
            assert a.grad is None
        else:
            np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=rtol,
                                       atol=rtol * 10)
            assert a.grad.dtype == a.dtype and a.grad.shape == a.shape


@pytest.mark.parametrize("name,shapes,kw", [
    ("matmul", [(4, 3), (3, 5)], {}),
    ("bmm", [(2, 3, 4), (2, 4, 2)], {}),
    ("addmm", [(5,), (4, 3), (3, 5)], {"beta": 0.5 - 1j, "alpha": 2 + 1j}),
])
def test_host_products_gradcheck(name, shapes, kw, host_calls):
    rng = np.random.default_rng(3)
    ts = [wgrad.tensor(_rand(rng, s, np.complex128), requires_grad=True) for s in shapes]
    assert wgrad.autograd.gradcheck(lambda *a: getattr(wgrad, name)(*a, **kw), ts)
    assert wgrad.autograd.gradgradcheck(lambda *a: getattr(wgrad, name)(*a, **kw), ts)
    assert host_calls


def test_host_gradient_matches_conj_of_jax_vjp(host_calls):
    rng = np.random.default_rng(4)
    a0, b0 = _rand(rng, (6, 4), np.complex128), _rand(rng, (4, 3), np.complex128)
    g0 = _rand(rng, (6, 3), np.complex128)
    a, b = wgrad.tensor(a0, requires_grad=True), wgrad.tensor(b0, requires_grad=True)
    (a @ b).backward(wgrad.tensor(g0))
    _, vjp = jax.vjp(jnp.matmul, a0, b0)
    ga, gb = vjp(np.conj(g0))
    np.testing.assert_allclose(a.grad.numpy(), np.conj(ga), rtol=1e-12)
    np.testing.assert_allclose(b.grad.numpy(), np.conj(gb), rtol=1e-12)
    assert len(host_calls) == 3  # the forward and both gradients


def test_traced_products_stay_in_xla(host_calls):
    rng = np.random.default_rng(5)
    a0, b0 = _rand(rng, (8, 8), np.complex64), _rand(rng, (8, 8), np.complex64)

    def loss(a, b):
        return ((a @ b).abs() ** 2).sum()
    a, b = wgrad.tensor(a0, requires_grad=True), wgrad.tensor(b0)
    step = wgrad.compile(lambda a, b: (loss(a, b).backward(), a.grad)[1])
    got = step(a, b)
    assert not host_calls
    ref = jax.grad(lambda a: jnp.sum(jnp.abs(a @ b0) ** 2))(a0).conj()
    np.testing.assert_allclose(np.asarray(got.numpy()), ref, rtol=1e-4, atol=1e-4)
    f = jax.jit(lambda x, y: wgrad.from_jax(x).matmul(wgrad.from_jax(y)).jax())
    np.testing.assert_allclose(f(a0, b0), a0 @ b0, rtol=1e-5, atol=1e-5)
    assert not host_calls


@pytest.mark.parametrize("side,host", [(32, True), (31, False)])
def test_lazy_products_leave_the_segment_from_min_work_lazy(side, host, host_calls,
                                                             monkeypatch):
    monkeypatch.setattr(H, "MIN_WORK_LAZY", 32 ** 3)
    rng = np.random.default_rng(6)
    a0, b0 = _rand(rng, (side, side), np.complex64), _rand(rng, (side, side), np.complex64)
    a = wgrad.tensor(a0, requires_grad=True)
    with wgrad.lazy():
        loss = ((a * 2) @ wgrad.tensor(b0)).abs().sum()
        loss.backward()
    assert bool(host_calls) == host
    ta = torch.tensor(a0, requires_grad=True)
    ((ta * 2) @ torch.tensor(b0)).abs().sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy(), rtol=1e-4, atol=1e-3)


def test_adopted_arrays_outlive_their_numpy_buffers(host_calls):
    rng = np.random.default_rng(7)
    a0, b0 = _rand(rng, (64, 64), np.complex64), _rand(rng, (64, 64), np.complex64)
    outs = [(wgrad.tensor(a0) * (i + 1)) @ wgrad.tensor(b0) for i in range(8)]
    gc.collect()
    assert len(host_calls) == 8
    junk = [np.full((64, 64), 7.0, np.complex64) for _ in range(64)]  # reuse freed memory
    for i, o in enumerate(outs):
        np.testing.assert_allclose(o.numpy(), (a0 * (i + 1)) @ b0, rtol=1e-5, atol=1e-4)
        np.testing.assert_allclose((o + 1).numpy(), (a0 * (i + 1)) @ b0 + 1, rtol=1e-5,
                                   atol=1e-4)
    assert junk[0][0, 0] == 7.0


def test_in_place_update_of_a_product_leaves_other_arrays_alone(host_calls):
    # an adopted buffer is never written: an in-place op gives the tensor a new array
    a = wgrad.ones(4, 4, dtype=wgrad.complex64)
    p = a @ a
    q = p.detach()
    p.add_(1)
    np.testing.assert_array_equal(q.numpy(), np.full((4, 4), 5, np.complex64))  # shares p
    np.testing.assert_array_equal(p.numpy(), np.full((4, 4), 5, np.complex64))
    assert (a @ a).numpy()[0, 0] == 4
    assert len(host_calls) == 2


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "bfloat16", "int64"])
def test_real_products_stay_in_xla(dtype, host_calls):
    a = wgrad.ones(4, 4, dtype=getattr(wgrad, dtype))
    assert (a @ a).float().sum().item() == 64
    assert not host_calls


@pytest.mark.parametrize("m,k,n,host", [(128, 128, 128, True), (32, 256, 256, True),
                                        (64, 128, 128, False), (16, 16, 16, False)])
def test_by_default_complex_products_from_min_work_go_to_numpy(m, k, n, host, monkeypatch):
    calls = []
    real = H._product
    monkeypatch.setattr(H, "_product", lambda *a, **kw: calls.append(1) or real(*a, **kw))
    a = wgrad.ones(m, k, dtype=wgrad.complex64, requires_grad=True)
    with wgrad.lazy(False):  # eager mode's threshold
        (a @ wgrad.ones(k, n, dtype=wgrad.complex64)).real.sum().backward()
    assert len(calls) == (2 if host else 0)
    assert a.grad.numpy()[0, 0] == n


def test_host_path_can_be_turned_off(monkeypatch, host_calls):
    monkeypatch.setenv("WGRAD_HOST_GEMM", "0")
    monkeypatch.setattr(H, "_STATE", [])
    a = wgrad.ones(4, 4, dtype=wgrad.complex64, requires_grad=True)
    (a @ a).real.sum().backward()
    assert not host_calls
    assert a.grad.numpy()[0, 0] == 8


def test_first_product_under_a_trace_leaves_the_host_path_working(monkeypatch, host_calls):
    # the path is set up on the first product of a process; that one may be traced
    monkeypatch.setattr(H, "_STATE", [])
    f = jax.jit(lambda x: (wgrad.from_jax(x) @ wgrad.from_jax(x)).jax())
    np.testing.assert_allclose(f(np.eye(3, dtype=np.complex64) * 2), np.eye(3) * 4)
    assert not host_calls
    a = wgrad.ones(3, 3, dtype=wgrad.complex64)
    assert (a @ a).numpy()[0, 0] == 3
    assert host_calls


def test_a_transfer_guard_lets_the_adoption_through(host_calls):
    # nothing moves on a CPU-only JAX: a guard against implicit transfers stays quiet
    a = wgrad.ones(4, 4, dtype=wgrad.complex64, requires_grad=True)
    with jax.transfer_guard("disallow"):
        p = a @ a
        p.real.sum().backward()
    assert len(host_calls) == 3
    assert p.detach().numpy()[0, 0] == 4 and a.grad.numpy()[0, 0] == 8
