"""wgrad.cuda and device movement (issue #23 item 3). Without a GPU: torch's answers for
the counting queries, RuntimeError for those that need a device. With one (JAX's CUDA
build, JAX_PLATFORMS unset so the CPU is there too): placement, differentiable moves and
memory statistics."""
import pytest

import wgrad

GPU = wgrad.cuda.is_available()
no_gpu = pytest.mark.skipif(GPU, reason="behaviour without a GPU")
gpu = pytest.mark.skipif(not GPU, reason="needs a CUDA GPU visible to JAX")


@no_gpu
def test_counting_queries_without_a_gpu_answer_as_torch():
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("torch sees a GPU")
    assert wgrad.cuda.is_available() is torch.cuda.is_available() is False
    assert wgrad.cuda.device_count() == torch.cuda.device_count() == 0
    for name in ("memory_allocated", "max_memory_allocated", "memory_reserved",
                 "max_memory_reserved"):
        assert getattr(wgrad.cuda, name)() == getattr(torch.cuda, name)() == 0, name
    assert wgrad.cuda.empty_cache() is None
    assert wgrad.cuda.memory_stats() == {}
    assert wgrad.backends.cudnn.is_available() is False


@no_gpu
@pytest.mark.parametrize("call", [
    lambda: wgrad.cuda.current_device(), lambda: wgrad.cuda.get_device_name(),
    lambda: wgrad.cuda.synchronize(), lambda: wgrad.cuda.set_device(0),
    lambda: wgrad.ones(2).cuda(), lambda: wgrad.ones(2).to("cuda:1"),
    lambda: wgrad.ones(2, device="cuda"), lambda: wgrad.zeros(2, device="cuda:0"),
    lambda: wgrad.randn(2, device="cuda"), lambda: wgrad.tensor([1.0], device="cuda"),
])
def test_queries_that_need_a_device_raise_without_one(call):
    with pytest.raises(RuntimeError, match="no cuda device is available to JAX"):
        call()


@no_gpu
def test_seeding_cuda_without_a_gpu_changes_nothing():
    wgrad.manual_seed(3)
    a = wgrad.randn(3)
    wgrad.manual_seed(3)
    wgrad.cuda.manual_seed(7)
    wgrad.cuda.manual_seed_all(8)
    assert (a == wgrad.randn(3)).all().item()


FACTORIES = [lambda d: wgrad.zeros(2, device=d), lambda d: wgrad.ones(2, device=d),
             lambda d: wgrad.full((2,), 3.0, device=d), lambda d: wgrad.eye(2, device=d),
             lambda d: wgrad.arange(2, device=d), lambda d: wgrad.randn(2, device=d),
             lambda d: wgrad.tensor([1, 2], device=d),
             lambda d: wgrad.linspace(0, 1, 2, device=d),
             lambda d: wgrad.normal(0.0, 1.0, (2,), device=d),
             lambda d: wgrad.logspace(0, 1, 2, device=d),
             lambda d: wgrad.randint(0, 3, (2,), device=d),
             lambda d: wgrad.randperm(3, device=d), lambda d: wgrad.rand(2, device=d),
             lambda d: wgrad.empty(2, device=d),
             lambda d: wgrad.zeros_like(wgrad.ones(2), device=d),
             lambda d: wgrad.scalar_tensor(1.0, device=d)]


def test_cpu_tensors_and_factories():
    for make in FACTORIES:
        for d in ("cpu", wgrad.device("cpu")):
            t = make(d)
            assert t.device == wgrad.device("cpu") and not t.is_cuda
    t = wgrad.ones(2, device="cpu", requires_grad=True)
    assert t.cpu() is t and t.to("cpu") is t
    # new tensors go to JAX's default device (NOTE [The default device])
    assert wgrad.ones(1).device == wgrad.get_default_device()
    assert wgrad.get_default_device().type == ("cuda" if GPU else "cpu")


# -- on a GPU (JAX's CUDA build; JAX_PLATFORMS unset): run by the suite on a GPU machine --

@gpu
def test_moves_between_devices_are_differentiable():
    x = wgrad.randn(3, dtype=wgrad.complex64, device="cpu", requires_grad=True)
    y = x.cuda()
    assert y.is_cuda and y.device == wgrad.device("cuda", 0)
    assert y.grad_fn.name() == "ToCopyBackward0"
    (y.abs() ** 2).sum().backward()
    assert x.grad.device == wgrad.device("cpu")
    assert wgrad.allclose(x.grad, 2 * x.detach())  # |y| and y/|y| round on the GPU
    z = wgrad.ones(2, device="cuda", requires_grad=True)
    (z.cpu() * 3).sum().backward()
    assert z.grad.is_cuda and z.grad.tolist() == [3.0, 3.0]


@gpu
def test_set_default_device_cpu_keeps_eager_and_lazy_work_and_gradients_on_the_cpu():
    wgrad.set_default_device("cpu")
    try:
        x = wgrad.randn(3, dtype=wgrad.complex64, requires_grad=True)
        assert x.device == wgrad.device("cpu")
        for lazy in (False, True):
            x.grad = None
            with wgrad.lazy(lazy):
                y = (x.sin() * 2).abs().sum()
                assert y.device == wgrad.device("cpu")
                y.backward()
            assert x.grad.device == wgrad.device("cpu"), lazy
            # a moved copy's gradient comes back to the CPU
            x.grad = None
            with wgrad.lazy(lazy):
                (x.cuda().abs() ** 2).sum().backward()
            assert x.grad.device == wgrad.device("cpu"), lazy
            assert wgrad.allclose(x.grad, 2 * x.detach())
    finally:
        wgrad.set_default_device(None)
    assert wgrad.ones(1).is_cuda


@gpu
def test_factories_place_on_the_gpu():
    for make in FACTORIES:
        for d in ("cuda", "cuda:0", wgrad.device("cuda", 0)):
            t = make(d)
            assert t.is_cuda and t.device == wgrad.device("cuda", 0), make


@gpu
def test_gpu_queries_and_memory():
    n = wgrad.cuda.device_count()
    assert n >= 1 and wgrad.cuda.current_device() == 0
    assert isinstance(wgrad.cuda.get_device_name(), str)
    before = wgrad.cuda.memory_allocated()
    big = wgrad.ones(1024, 1024, device="cuda")
    wgrad.cuda.synchronize()
    assert wgrad.cuda.memory_allocated() >= before + 4 * 1024 * 1024
    assert wgrad.cuda.max_memory_allocated() >= wgrad.cuda.memory_allocated()
    assert wgrad.cuda.memory_reserved() >= wgrad.cuda.memory_allocated()
    del big
    wgrad.cuda.set_device(n - 1)
    try:
        assert wgrad.ones(1, device="cuda").device == wgrad.device("cuda", n - 1)
    finally:
        wgrad.cuda.set_device(0)


@gpu
def test_float32_matmul_precision_on_the_gpu():
    """'highest' is float32 accurate (torch's default), 'high' allows TF32 (issue #23)."""
    import numpy as np
    wgrad.manual_seed(0)
    a = wgrad.randn(1024, 1024, device="cuda")
    b = wgrad.randn(1024, 1024, device="cuda")
    ref = np.asarray(a.double().cpu().numpy()) @ np.asarray(b.double().cpu().numpy())

    def err():
        got = (a @ b).double().cpu().numpy()
        return np.linalg.norm(got - ref) / np.linalg.norm(ref)
    before = wgrad.get_float32_matmul_precision()
    try:
        wgrad.set_float32_matmul_precision("highest")
        assert err() < 1e-5
        wgrad.set_float32_matmul_precision("high")
        assert err() < 1e-2
    finally:
        wgrad.set_float32_matmul_precision(before)


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128"])
def test_cpu_tolerances_are_torchs_assert_close_defaults(dtype, tol):
    torch = pytest.importorskip("torch")
    rtol, atol = tol(dtype, "cpu")
    t = getattr(torch, dtype)
    base = torch.full((1,), 1000.0, dtype=t)
    inside, outside = base * (1 + 0.9 * rtol), base * (1 + 1.5 * rtol) + 2 * atol
    torch.testing.assert_close(inside, base)
    with pytest.raises(AssertionError):
        torch.testing.assert_close(outside, base)
    assert tol(dtype, "cuda:0") == (rtol * 10, atol * 10)


class _FakeGpu:
    device_kind = "Fake GPU"

    def memory_stats(self):
        return {"bytes_in_use": 100, "peak_bytes_in_use": 300, "pool_bytes": 1000,
                "peak_pool_bytes": 2000, "bytes_limit": 4000}


def test_queries_read_jax_device_statistics(monkeypatch):
    """The GPU code paths on a CPU machine, over a stand-in for JAX's GPU device."""
    monkeypatch.setattr(wgrad.cuda, "_gpus", lambda: [_FakeGpu(), _FakeGpu()])
    assert wgrad.cuda.is_available() and wgrad.cuda.device_count() == 2
    assert wgrad.cuda.current_device() == 0
    assert wgrad.cuda.get_device_name() == wgrad.cuda.get_device_name("cuda:1") == "Fake GPU"
    assert wgrad.cuda.memory_allocated() == 100
    assert wgrad.cuda.max_memory_allocated(0) == 300
    assert wgrad.cuda.memory_reserved() == 1000
    assert wgrad.cuda.max_memory_reserved(wgrad.device("cuda", 1)) == 2000
    assert wgrad.cuda.memory_stats()["bytes_limit"] == 4000
    with pytest.raises(RuntimeError, match="invalid device ordinal"):
        wgrad.cuda.set_device(2)
    with pytest.raises(ValueError, match="Expected a cuda device"):
        wgrad.cuda.memory_allocated("cpu")
    wgrad.cuda.set_device(1)
    try:
        assert wgrad.cuda.current_device() == 1
        wgrad.cuda.set_device(-1)  # torch: a negative index changes nothing
        assert wgrad.cuda.current_device() == 1
    finally:
        wgrad.cuda.set_device(0)
