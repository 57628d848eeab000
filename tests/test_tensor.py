"""Tensor basics: dtypes, creation functions, metadata, repr, conversions, random draws."""
import os
import subprocess
import sys
import warnings

import jax
import jax.monitoring
import numpy as np
import pytest

import wgrad


def test_default_dtypes_follow_torch():
    assert wgrad.tensor([1.0]).dtype is wgrad.float32
    assert wgrad.tensor([1]).dtype is wgrad.int64
    assert wgrad.tensor([True]).dtype is wgrad.bool
    assert wgrad.tensor([1j]).dtype is wgrad.complex64
    assert wgrad.tensor(np.ones(2)).dtype is wgrad.float64  # numpy keeps its dtype
    assert wgrad.zeros(2).dtype is wgrad.float32
    assert wgrad.arange(3).dtype is wgrad.int64 and wgrad.arange(0, 1, 0.5).dtype is \
        wgrad.float32
    assert wgrad.full((2,), 1j).dtype is wgrad.complex64
    wgrad.set_default_dtype(wgrad.float64)
    assert wgrad.tensor([1.0]).dtype is wgrad.float64 and wgrad.tensor([1j]).dtype is \
        wgrad.complex128


def test_all_dtypes_round_trip():
    for d in (wgrad.bool, wgrad.int32, wgrad.int64, wgrad.float32, wgrad.float64,
              wgrad.complex64, wgrad.complex128):
        t = wgrad.zeros(2, dtype=d)
        assert t.dtype is d and t.numpy().dtype == d.np


def test_metadata():
    t = wgrad.zeros(2, 3, dtype=wgrad.complex128)
    assert t.shape == (2, 3) and isinstance(t.shape, wgrad.Size) and t.ndim == 2
    assert t.numel() == 6 and t.size(1) == 3 and t.size(-2) == 2 and t.dim() == 2
    assert t.is_complex() and not t.is_floating_point()
    assert t.device == wgrad.get_default_device()  # the CPU, or a GPU when JAX has one
    assert repr(t.shape) == "wgrad.Size([2, 3])"
    with pytest.raises(IndexError, match="Dimension out of range"):
        t.size(2)


def test_item_tolist_numpy():
    t = wgrad.tensor([[1.0, 2.0]])
    assert t.tolist() == [[1.0, 2.0]] and wgrad.tensor(3.5).item() == 3.5
    with pytest.raises(RuntimeError, match="a Tensor with 2 elements cannot be converted to "
                                           "Scalar"):
        t.item()
    r = wgrad.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                                           "grad"):
        r.numpy()
    np.testing.assert_array_equal(r.detach().numpy(), [1, 1])


def test_repr():
    x = wgrad.tensor([1.5, 2.0], device="cpu", requires_grad=True)
    assert repr(x) == "tensor([1.5000, 2.0000], requires_grad=True)"
    assert repr(x * 2) == "tensor([3., 4.], grad_fn=<MulBackward0>)"
    assert "dtype=wgrad.complex128" in repr(wgrad.tensor([1j], dtype=wgrad.complex128))
    if wgrad.cuda.is_available():  # torch's repr names any device but the CPU
        assert repr(x.cuda()) == ("tensor([1.5000, 2.0000], device='cuda:0', "
                                  "grad_fn=<ToCopyBackward0>)")


def test_creation_functions():
    np.testing.assert_array_equal(wgrad.eye(2).numpy(), np.eye(2))
    np.testing.assert_allclose(wgrad.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5))
    np.testing.assert_array_equal(wgrad.arange(1, 7, 2).numpy(), [1, 3, 5])
    assert wgrad.full((2, 2), 3.0).tolist() == [[3.0, 3.0], [3.0, 3.0]]
    base = wgrad.ones(2, 3, dtype=wgrad.complex64)
    for like in (wgrad.zeros_like, wgrad.ones_like, wgrad.randn_like, wgrad.rand_like,
                 wgrad.empty_like):
        t = like(base)
        assert t.shape == base.shape and t.dtype is wgrad.complex64
    assert wgrad.full_like(base, 2).tolist()[0][0] == 2
    assert wgrad.zeros((2, 1)).shape == (2, 1) and wgrad.ones([3]).shape == (3,)


def test_random_draws_seeded_and_complex_normal_has_unit_power():
    wgrad.manual_seed(3)
    a = wgrad.randn(4)
    wgrad.manual_seed(3)
    np.testing.assert_array_equal(a.numpy(), wgrad.randn(4).numpy())
    z = wgrad.randn(200_000, dtype=wgrad.complex128).numpy()
    assert abs(np.mean(np.abs(z) ** 2) - 1) < 0.02
    assert abs(np.var(z.real) - 0.5) < 0.02 and abs(np.var(z.imag) - 0.5) < 0.02
    u = wgrad.rand(1000).numpy()
    assert u.min() >= 0 and u.max() < 1


def test_dunders_including_reflected():
    x = wgrad.tensor([1.0, 2.0])
    assert (1 + x).tolist() == [2, 3] and (1 - x).tolist() == [0, -1]
    assert (2 * x).tolist() == [2, 4] and (2 / x).tolist() == [2, 1]
    assert (2 ** x).tolist() == [2, 4] and (x ** 2).tolist() == [1, 4]
    assert (-x).tolist() == [-1, -2] and abs(-x).tolist() == [1, 2]
    assert (x // 1.5).tolist() == [0, 1] and (x % 1.5).tolist() == [1, 0.5]
    assert (x > 1).tolist() == [False, True] and (x == 1).tolist() == [True, False]
    assert (x @ x).item() == 5.0
    m = wgrad.tensor([True, False])
    assert (~m).tolist() == [False, True] and (m | ~m).tolist() == [True, True]
    assert float(wgrad.tensor(2.5)) == 2.5 and int(wgrad.tensor(3)) == 3
    assert len(x) == 2 and [v.item() for v in x] == [1.0, 2.0]


def _run_python(code, **env):
    """Run ``code`` in a fresh interpreter (import-time settings) and return its result."""
    out = subprocess.run([sys.executable, "-c", code], env=dict(os.environ, **env),
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return out


def test_x64_opt_out_raises_clearly():
    code = ("import wgrad\n"
            "assert wgrad.tensor([1.0, 2.0]).dtype is wgrad.float32\n"
            "assert wgrad.tensor([1]).dtype is wgrad.int32\n"
            "try:\n"
            "    wgrad.zeros(2, dtype=wgrad.float64)\n"
            "except RuntimeError as e:\n"
            "    print(e)\n")
    out = _run_python(code, WGRAD_DISABLE_X64="1")
    assert "wgrad.float64 is unavailable: WGRAD_DISABLE_X64 is set" in out.stdout


def test_like_functions_keep_the_device():
    code = ("import wgrad\n"
            "x = wgrad.ones(2).to('cpu:1')\n"
            "print(x.device, wgrad.ones_like(x).device, wgrad.zeros_like(wgrad.ones(2)).device,"
            " wgrad.full_like(x, 2.0).device)\n")
    out = _run_python(code, XLA_FLAGS="--xla_force_host_platform_device_count=2",
                      JAX_PLATFORMS="cpu")
    assert out.stdout.split() == ["cpu:1", "cpu:1", "cpu", "cpu:1"]


def test_default_device_moves_factories_lazy_segments_and_like_functions_together():
    """NOTE [The default device]: set_default_device (JAX's jax_default_device) is where
    new tensors, pending lazy results and *_like functions go; a tensor elsewhere stays."""
    code = """if 1:
    import jax, wgrad
    wgrad.set_default_device("cpu:1")
    x = wgrad.ones(2, requires_grad=True)
    print(wgrad.get_default_device(), x.device, wgrad.zeros_like(x).device, (x * 2).device)
    y = wgrad.ones(2, device="cpu", requires_grad=True)
    with wgrad.lazy():
        a, b = x * 3, y * 4
        print(a.device, b.device)
        (a.sum() + b.sum().to("cpu:1")).backward()
    print(x.grad.tolist(), x.grad.device, y.grad.tolist(), y.grad.device)
    with jax.default_device(jax.devices()[0]):
        print(wgrad.ones(1).device, wgrad.get_default_device())
    wgrad.set_default_device(None)
    print(wgrad.ones(1).device, wgrad.get_default_device())
    """
    out = _run_python(code, XLA_FLAGS="--xla_force_host_platform_device_count=2",
                      JAX_PLATFORMS="cpu")
    assert out.stdout.splitlines() == ["cpu:1 cpu:1 cpu:1 cpu:1", "cpu:1 cpu",
                                       "[3.0, 3.0] cpu:1 [4.0, 4.0] cpu", "cpu cpu",
                                       "cpu cpu"], out.stdout


@pytest.mark.parametrize("arg", [None, "float64", "complex64", "torch.DoubleTensor",
                                 "torch.LongTensor", "DoubleTensor", "float32", "foo", 3])
def test_type_matches_torch(arg):
    """Tensor.type(): the legacy name, or a cast to a dtype, legacy name or class."""
    torch = pytest.importorskip("torch")

    def run(m):
        t = m.tensor([1.5, -2.0])
        a = arg
        if arg in ("float64", "complex64", "float32"):
            a = getattr(m, arg)
        elif arg == "DoubleTensor":
            a = m.DoubleTensor
        try:
            r = t.type() if a is None else t.type(a)
        except Exception as e:
            return type(e).__name__, str(e)
        if isinstance(r, str):
            return r
        return str(r.dtype).split(".")[-1], r.tolist(), r is t
    assert run(wgrad) == run(torch)


def test_size_slices_and_concatenations_stay_sizes_as_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, wgrad):
        s = lib.ones(2, 3, 4).shape
        got = [s[:2], s[1], s + (5,), (1,) + s, s * 2]
        assert [type(g) is lib.Size for g in got] == [True, False, True, True, True]
        assert [tuple(g) if isinstance(g, tuple) else g for g in got] == \
            [(2, 3), 3, (2, 3, 4, 5), (1, 2, 3, 4), (2, 3, 4, 2, 3, 4)]


_COMPILES = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, dur, **kw: _COMPILES.append(name) if "backend_compile" in name else None)


def test_tensors_from_host_data_are_copies_made_without_compiling():
    # NOTE [Tensors from host data]: no XLA program per shape, and never the caller's memory
    buf = np.empty(64 * 5, np.uint8)  # 64-byte aligned: JAX could alias such an array
    off = -buf.__array_interface__["data"][0] % 64
    a = buf[off:off + 64 * 4].view(np.float32)
    a[:] = 1.0
    before = len(_COMPILES)
    ts = [wgrad.tensor(a), wgrad.tensor(a, dtype=wgrad.float64), wgrad.from_numpy(a)]
    ts += [wgrad.tensor(np.ones((n, 3))) for n in range(7, 11)]  # shapes new to the process
    assert len(_COMPILES) == before
    a[:] = 7.0
    assert all(float(t.sum()) == t.numel() for t in ts)
    torch = pytest.importorskip("torch")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # an overflow to inf warns in neither
        for data, name in (([1e40, -1e40, 0.1, 1 / 3], "float32"), ([2 ** 40 + 1], "float32"),
                           (np.array([70000, -3]), "int16"), (np.array([200], np.uint8), "int8"),
                           ([True, False], "complex64"), (np.array([65520.0]), "float16"),
                           (np.array([1 + 1e-9j]), "complex64")):
            w = wgrad.tensor(data, dtype=getattr(wgrad, name)).numpy()
            t = torch.tensor(data, dtype=getattr(torch, name)).numpy()
            assert w.dtype == t.dtype and w.tobytes() == t.tobytes(), (data, name)


@pytest.mark.parametrize("data,name", [
    ([127.5], "int8"), ([-255], "uint8"), ([-256], "uint8"), ([-1.0], "uint8"),
    ([float("nan")], "int64"), ([2 ** 31], "int32"), ([1, 300], "int8"), (300, "int8"),
    ([3.9, -3.9], "int16"), (np.array([300]), "int8"), ([300], "bool"), ([-128], "int8")])
def test_python_numbers_out_of_an_integer_range_raise_as_torch(data, name):
    # Python numbers beyond the dtype raise (c10's overflows); NumPy arrays wrap in both
    torch = pytest.importorskip("torch")
    got = []
    for lib in (wgrad, torch):
        try:
            got.append(lib.tensor(data, dtype=getattr(lib, name)).tolist())
        except RuntimeError as e:
            got.append(str(e))
    assert got[0] == got[1]


@pytest.mark.parametrize("call", [
    "full((2,), 1e40)", "full((2,), 3.4028235e38)", "full((1,), 1e40)",
    "full((2,), 70000.0, dtype=L.float16)", "full((1,), 70000.0, dtype=L.float16)",
    "full((), 1e40, dtype=L.bfloat16)", "full((2,), 65504.0, dtype=L.float16)",
    "full((2,), 1e300, dtype=L.float64)", "full((), 300, dtype=L.int8)",
    "full((2,), -1, dtype=L.uint8)", "full((2,), -256, dtype=L.uint8)",
    "full((2,), 2 ** 63)", "full((2,), 2 ** 63, dtype=L.float32)", "full((2,), 2 ** 64)",
    "full((2,), -2 ** 63 - 1, dtype=L.float32)", "full((2,), float('nan'), dtype=L.int32)",
    "full((2,), 3.5, dtype=L.int32)", "full((2,), complex(1, 1e40), dtype=L.complex64)",
    "full((2,), 1 + 1j, dtype=L.float32)", "full((2,), 1 + 0j, dtype=L.float32)",
    "full((2,), 2, dtype=L.bool)", "full_like(L.zeros(2), 1e40)",
    "zeros(2).new_full((3,), 1e40)", "zeros(1, dtype=L.float16).fill_(1e40)",
    "zeros(2, dtype=L.float16).fill_(1e40)", "zeros(2).fill_(2 ** 64)",
    "zeros(1, dtype=L.float16).masked_fill(L.ones(1, dtype=L.bool), 1e40)",
    "zeros(2, dtype=L.int8).clamp(min=-129)", "clamp(L.zeros(2, dtype=L.int8), 300, 400)",
    "zeros(2).clamp(max=1e40)", "zeros(2, dtype=L.int8).clamp_max(300)",
    "zeros(2, dtype=L.float16).clamp(max=1e6)", "zeros(2, dtype=L.uint8).clamp(min=-1)",
    "zeros(2, dtype=L.int8).clamp(min=0.5)", "zeros(2, dtype=L.int8).clamp(min=L.tensor(300))",
    "where(L.tensor([True, False]), L.zeros(2), 1e40)",
    "where(L.tensor([True, False]), 300, L.zeros(2, dtype=L.int8))",
    "where(L.tensor([True, False]), L.zeros(2, dtype=L.float16), 1e6)",
    "zeros(2).add(L.ones(2), alpha=1e40)", "zeros(2).lerp(L.ones(2), 1e40)",
    "zeros(2, dtype=L.int8).add(L.ones(2, dtype=L.int8), alpha=300)",
    # add/sub's alpha_check, and a NumPy alpha as a Python number (no float64 promotion)
    "zeros(2, dtype=L.int64).add(L.ones(2, dtype=L.int64), alpha=2.5)",
    "zeros(2, dtype=L.int8).add(L.ones(2, dtype=L.int8), alpha=True)",
    "zeros(2).sub(L.ones(2), alpha=1j)",
    "zeros(2, dtype=L.bool).add(L.ones(2, dtype=L.bool), alpha=2)",
    "zeros(2).add(L.ones(2), alpha=np.float64(2.5))",
    "zeros(2, dtype=L.int32).add(L.ones(2, dtype=L.int32), alpha=np.int64(3))",
    "zeros(2, dtype=L.int32).lerp(L.ones(2, dtype=L.int32), 1j)",
    # results cast into bfloat16 outputs (NumPy calls its kind "V": a KeyError before)
    "add(L.ones(2), L.ones(2), out=L.zeros(2, dtype=L.bfloat16))",
    "add(L.ones(2, dtype=L.complex64), L.ones(2), out=L.zeros(2, dtype=L.bfloat16))",
    "sin(L.ones(2, dtype=L.int64), out=L.zeros(2, dtype=L.bfloat16))",
    "zeros(2, dtype=L.bfloat16).add_(L.zeros(2, dtype=L.complex64))",
    "zeros(2, dtype=L.bfloat16).mul_(L.ones(2, dtype=L.int64))",
    "zeros(2, dtype=L.int32).add_(L.ones(2, dtype=L.bfloat16))"])
def test_values_converted_to_a_dtype_are_checked_as_torch(call):
    # c10's checked_convert: values beyond the dtype raise, not inf or a wrapped integer;
    # float16 and bfloat16 filled one element at a time (or where's) take any value
    torch = pytest.importorskip("torch")
    got = []
    for lib in (wgrad, torch):
        try:
            r = eval("L." + call, {"L": lib, "np": np})
            got.append((r.tolist(), str(r.dtype).split(".")[-1]))
        except (RuntimeError, OverflowError, NotImplementedError) as e:
            got.append((type(e), str(e)))
    assert got[0] == got[1]


def test_fillers_of_new_shapes_compile_nothing_on_a_cpu():
    # NOTE [Fillers on the host]: values as PyTorch's, bytes for bytes, and no XLA program
    torch = pytest.importorskip("torch")
    before = len(_COMPILES)
    made = [(wgrad.zeros(n, 3), torch.zeros(n, 3)) for n in range(11, 14)]
    made += [(wgrad.eye(n, 3, dtype=wgrad.complex64), torch.eye(n, 3, dtype=torch.complex64))
             for n in (3, 4)]
    made += [(wgrad.empty(n), torch.zeros(n)) for n in (15, 16)]
    made += [(wgrad.zeros(n, device="cpu"), torch.zeros(n)) for n in (17, 18)]
    drawn = [wgrad.randn(19, 3), wgrad.rand(20, dtype=wgrad.complex64)]  # values: NumPy's
    made += [(wgrad.ones(2, n, dtype=wgrad.int8), torch.ones(2, n, dtype=torch.int8))
             for n in range(11, 13)]
    made += [(wgrad.full((n,), 2.5, dtype=wgrad.complex64),
              torch.full((n,), 2.5, dtype=torch.complex64)) for n in range(11, 13)]
    made += [(wgrad.full((5,), -0.0), torch.full((5,), -0.0)),
             (wgrad.zeros(4, dtype=wgrad.bool), torch.zeros(4, dtype=torch.bool))]
    if jax.default_backend() == "cpu":
        assert len(_COMPILES) == before
    assert [d.dtype for d in drawn] == [wgrad.float32, wgrad.complex64]
    for w, t in made:
        assert w.numpy().tobytes() == t.numpy().tobytes() and w.numpy().dtype == t.numpy().dtype
