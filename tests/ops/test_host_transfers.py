"""No host-to-device transfer in the steady state of eager ops and backward (issue #23
item 2, NOTE [Python scalars as device constants]): after a warm-up step, the same step
runs under ``jax.transfer_guard("disallow")``, which raises on any implicit transfer."""
import jax
import pytest

import wgrad


def _mlp_step(w, b, x):
    h = x @ w + b
    h = h * 0.5 + 1
    h = (h - 2.0).sin() / 3 + 2 ** h - 1.5 * h.relu()
    h = h.clamp(-3.0, 3.0).exp() + h.tanh() ** 2
    return (h ** 2).mean() * 0.1 + h.sum(0).abs().max() + (1 - h).pow(3).sum() / 7


def _complex_step(w, b, x):
    z = (x @ w) * (0.5 - 2j) + b * 1j
    z = z.exp() / 2 + z * z.conj() - 1
    return (z.abs() ** 2).sum() + (z.real * 3.0).mean()


def _linear_algebra_step(w, b, x):
    a = x.mT @ x + wgrad.eye(4, dtype=x.dtype)
    y = wgrad.einsum("ij,jk->ik", a, w) + b
    return (y * 2).norm() + wgrad.tensordot(y, y, dims=2) * 0.01


CASES = {
    "real": (_mlp_step, wgrad.float32),
    "complex": (_complex_step, wgrad.complex64),
    "linear_algebra": (_linear_algebra_step, wgrad.float64),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_warm_step_transfers_nothing_to_the_device(case):
    step, dtype = CASES[case]
    wgrad.manual_seed(0)
    w = wgrad.randn(4, 3, dtype=dtype, requires_grad=True)
    b = wgrad.randn(3, dtype=dtype, requires_grad=True)
    x = wgrad.randn(5, 4, dtype=dtype)

    def run():
        w.grad = b.grad = None
        loss = step(w, b, x)
        loss.backward()
        return loss, w.grad, b.grad

    warm = run()
    with jax.transfer_guard("disallow"):
        again = run()
    for a, b_ in zip(warm, again):
        assert (a == b_).all().item()


def test_the_guard_would_catch_a_transfer():
    """The check can fail: a fresh Python scalar per call is a transfer."""
    x = wgrad.ones(3)
    with jax.transfer_guard("disallow"):
        with pytest.raises(Exception, match="host-to-device"):
            jax.numpy.multiply(x._data, 0.25)


def test_scalar_constants_keep_torch_promotion_and_signed_zeros():
    torch = pytest.importorskip("torch")
    for dtype in ("float32", "float64", "complex64", "int32"):
        x = wgrad.ones(3, dtype=getattr(wgrad, dtype))
        t = torch.ones(3, dtype=getattr(torch, dtype))
        for scalar in (2, 0.5, -0.0, 1j, True):
            got, want = x * scalar, t * scalar
            assert str(got.dtype)[6:] == str(want.dtype)[6:], (dtype, scalar)
            assert got.tolist() == want.tolist(), (dtype, scalar)
    neg_zero = wgrad.ones(1) * -0.0
    assert str(1 / neg_zero) == str(wgrad.tensor([float("-inf")]))
    assert str(1 / (wgrad.ones(1) * 0.0)) == str(wgrad.tensor([float("inf")]))


@pytest.mark.parametrize("name, kw", [("SGD", {"momentum": 0.9}), ("Adam", {}),
                                      ("AdamW", {"weight_decay": 0.1})])
def test_a_warm_training_step_with_an_optimizer_transfers_nothing(name, kw):
    """lr, betas, eps... are Python numbers handed to the jitted update."""
    w = wgrad.randn(4, 3, requires_grad=True)
    x = wgrad.randn(5, 4)
    opt = getattr(wgrad.optim, name)([w], lr=0.1, **kw)

    def step():
        opt.zero_grad()
        loss = ((x @ w).tanh() * 0.5 - 1).pow(2).mean()
        loss.backward()
        opt.step()
    for _ in range(2):  # the first step creates the state, the second runs with it
        step()
    with jax.transfer_guard("disallow"):
        step()


def test_nan_and_signed_zero_constants_are_cached_once():
    from wgrad._creation import _FILLERS
    from wgrad.ops._primitive import _CONSTS
    x = wgrad.ones(2)
    for _ in range(2):
        for v in (float("nan"), complex("nan+0j"), -0.0, 0.0):
            x * v
            wgrad.full((2,), v)
    n_consts, n_fillers = len(_CONSTS), len(_FILLERS)
    y = x * float("nan")
    z = wgrad.full((2,), float("nan"))
    assert len(_CONSTS) == n_consts and len(_FILLERS) == n_fillers
    assert y.isnan().all().item() and z.isnan().all().item()
    assert str(wgrad.full((1,), -0.0)) == "tensor([-0.])"


def test_the_top_level_test_is_jaxs():
    # device_constant's own test for JAX's top level (NOTE [Python scalars as device
    # constants]) reads JAX's trace state directly: it must agree with JAX's
    # trace_ctx.is_top_level at the top and under each kind of trace
    from jax._src import core

    from wgrad.ops._primitive import _top_level, device_constant

    seen = []
    half = 0.5

    def probe(x):
        seen.append((_top_level(), core.trace_ctx.is_top_level(),
                     device_constant(half) is half))
        return x * 2

    probe(1.0)
    jax.jit(probe)(1.0)
    jax.grad(probe)(1.0)
    jax.vmap(probe)(jax.numpy.ones(2))
    assert seen[0] == (True, True, False)  # at the top: a cached device array
    assert all(s == (False, False, True) for s in seen[1:]), seen  # traced: the number
