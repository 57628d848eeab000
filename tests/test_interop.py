"""JAX interchange: zero-copy arrays and DLPack, devices, the Tensor pytree, and the two
function bridges (jax_function, to_jax) checked on holomorphic, non-holomorphic, R->C and
C->R functions against the same math written in jnp."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import wgrad
from wgrad.testing import check_op, shapes, values

F64, C128 = np.float64, np.complex128


def _ptr(x):
    return x.unsafe_buffer_pointer()


# -- arrays ----------------------------------------------------------------------------
def test_from_jax_and_jax_share_the_buffer():
    a = jnp.arange(6.0).reshape(2, 3)
    t = wgrad.from_jax(a, requires_grad=True)
    assert t.requires_grad and t.is_leaf and t.shape == (2, 3)
    assert _ptr(t.jax()) == _ptr(a)
    assert _ptr(wgrad.from_jax(t.jax()).jax()) == _ptr(a)
    assert _ptr(jnp.asarray(t)) == _ptr(a)


def test_jnp_functions_accept_tensors():
    t = wgrad.tensor([0.5, -1.0], dtype=wgrad.float64)
    np.testing.assert_allclose(jnp.sin(t), np.sin([0.5, -1.0]))
    np.testing.assert_allclose(jnp.add(t, 1.0), [1.5, 0.0])
    assert float(jnp.sum(t)) == -0.5


def test_numpy_round_trip():
    a = np.array([[1.0, 2.0]], dtype=np.float32)
    t = wgrad.from_numpy(a)
    assert t.dtype is wgrad.float32 and t.shape == (1, 2)
    np.testing.assert_array_equal(t.numpy(), a)
    np.testing.assert_array_equal(np.asarray(t), a)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    with pytest.raises(RuntimeError, match="Can't call numpy\\(\\) on Tensor that requires "
                                           "grad"):
        t.requires_grad_().numpy()


def test_dlpack_zero_copy_with_numpy_and_jax():
    t = wgrad.tensor([1.0, 2.0, 3.0], dtype=wgrad.float64)
    assert t.__dlpack_device__()[1] == 0
    n = np.from_dlpack(t)
    assert n.__array_interface__["data"][0] == _ptr(t.jax())
    assert _ptr(wgrad.from_dlpack(t).jax()) == _ptr(t.jax())
    assert _ptr(jax.dlpack.from_dlpack(t)) == _ptr(t.jax())
    back = wgrad.from_dlpack(np.arange(4.0))  # JAX copies a misaligned numpy buffer
    np.testing.assert_array_equal(back.numpy(), [0.0, 1.0, 2.0, 3.0])


def test_dlpack_zero_copy_with_torch():
    torch = pytest.importorskip("torch")
    src = torch.arange(4.0, dtype=torch.float64)
    t = wgrad.from_dlpack(src)
    assert _ptr(t.jax()) == src.data_ptr()
    back = torch.from_dlpack(t)
    assert back.data_ptr() == src.data_ptr()


def test_dlpack_refuses_tensors_that_require_grad():
    t = wgrad.tensor([1.0], requires_grad=True)
    with pytest.raises(BufferError, match="Can't export tensors that require gradient, use "
                                          "tensor.detach\\(\\)"):
        t.__dlpack__()


# -- devices ---------------------------------------------------------------------------
def test_device_strings_and_moves():
    assert wgrad.device("gpu") == wgrad.device("cuda")
    d = wgrad.device("cuda:1")
    assert (d.type, d.index) == ("cuda", 1)
    t = wgrad.tensor([1.0, 2.0], requires_grad=True)
    assert t.device == "cpu" and t.device.jax_device() == jax.devices("cpu")[0]
    assert t.to("cpu") is t and t.cpu() is t and t.to(wgrad.device("cpu")) is t
    if not any(dev.platform == "gpu" for dev in jax.devices()):
        with pytest.raises(RuntimeError, match="no cuda device is available to JAX"):
            t.cuda()
        with pytest.raises(RuntimeError, match="no cuda device is available to JAX"):
            t.to("cuda:1")


def test_device_move_is_differentiable():
    from wgrad.ops._transfer import _to_dev
    cpu = jax.devices("cpu")[0]
    x = wgrad.tensor([1.0, -2.0], dtype=wgrad.float64, requires_grad=True)
    y = _to_dev(x, device=cpu, src=cpu)
    assert y.grad_fn.name() == "ToCopyBackward0" and y.device == "cpu"
    (y * y).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -4.0])


# -- pytree ----------------------------------------------------------------------------
def test_tensor_is_a_pytree():
    w = wgrad.tensor([1.0, 2.0], requires_grad=True)
    b = wgrad.tensor(0.5)
    params = {"w": w, "b": b}
    leaves = jax.tree_util.tree_leaves(params)
    assert len(leaves) == 2 and leaves[1] is w.jax()
    doubled = jax.tree_util.tree_map(lambda a: a * 2, params)
    assert isinstance(doubled["w"], wgrad.Tensor) and doubled["w"].requires_grad
    np.testing.assert_allclose(doubled["w"].detach().numpy(), [2.0, 4.0])

    @jax.jit
    def f(p):
        return {"out": (p["w"] * p["b"]).exp()}
    out = f(params)["out"]
    assert isinstance(out, wgrad.Tensor) and out.grad_fn is None
    np.testing.assert_allclose(out.numpy(), np.exp([0.5, 1.0]), rtol=1e-6)


# -- the function table ----------------------------------------------------------------
# (name, wgrad fn, the same math in jnp, input dtype, output dtype kind)
FUNCS = [
    ("holomorphic", lambda z: z * z.sin(), lambda z: z * jnp.sin(z), C128),
    ("non_holomorphic", lambda z: z.conj() * z.exp(), lambda z: jnp.conj(z) * jnp.exp(z),
     C128),
    ("r_to_c", lambda x: (x * 2j).exp() * x * x, lambda x: x * x * jnp.exp(2j * x), F64),
    ("c_to_r", lambda z: z.real * z.imag + (z * z.conj()).real,
     lambda z: jnp.real(z) * jnp.imag(z) + jnp.real(z * jnp.conj(z)), C128),
    ("real", lambda x: x.tanh() * x, lambda x: jnp.tanh(x) * x, F64),
]
IDS = [f[0] for f in FUNCS]


@pytest.mark.parametrize("name,wfn,jfn,dt", FUNCS, ids=IDS)
@settings(max_examples=2)  # each new shape compiles forward, backward and double backward
@given(data=st.data())
def test_jax_function_identity(name, wfn, jfn, dt, data):
    shape = data.draw(shapes(max_dims=2, max_side=2), label="shape")
    x = wgrad.tensor(data.draw(values(dt, shape, -1.5, 1.5)), dtype=dt, requires_grad=True)
    check_op(wgrad.jax_function(jfn), [x], jfn)


def test_jax_function_double_backward_matches_torch_convention():
    # L = |z|^4: PyTorch's z.grad = dL/dx + i dL/dy = 4|z|^2 z; then the same rule again
    # applied to Re(sum(4|z|^2 z)), checked by central differences
    f = wgrad.jax_function(lambda z: jnp.sum(jnp.abs(z) ** 4))
    z = wgrad.tensor([1.0 + 2.0j, -0.5j], dtype=wgrad.complex128, requires_grad=True)
    g, = wgrad.autograd.grad(f(z), z, create_graph=True)
    zn = np.array([1.0 + 2.0j, -0.5j])
    np.testing.assert_allclose(g.detach().numpy(), 4 * np.abs(zn) ** 2 * zn)
    assert g.grad_fn.name() == "JaxFunctionBackward0"
    gg, = wgrad.autograd.grad(g.real.sum(), z)

    def h(v):
        return np.sum((4 * np.abs(v) ** 2 * v).real)
    num = np.zeros_like(zn)
    for k in range(2):
        for step, part in ((1e-6, 1.0), (1e-6j, 1j)):
            e = np.zeros_like(zn)
            e[k] = step
            num[k] += part * (h(zn + e) - h(zn - e)) / 2e-6
    np.testing.assert_allclose(gg.numpy(), num, rtol=1e-6)


def test_jax_function_pytrees_statics_and_constants():
    def f(p, scale, mode):
        y = p["a"] * jnp.conj(p["b"]) * scale
        return (y, jnp.abs(y) if mode == "abs" else y.real, jnp.argmax(jnp.abs(y)))
    lifted = wgrad.jax_function(f, static_argnums=2)
    a = wgrad.tensor([1 + 1j, 2 - 1j], dtype=wgrad.complex128, requires_grad=True)
    b = wgrad.tensor([0.5j, 1.0 + 0j], dtype=wgrad.complex128, requires_grad=True)
    y, m, idx = lifted({"a": a, "b": b}, jnp.asarray(3.0), "abs")
    assert y.grad_fn is m.grad_fn and idx.grad_fn is None and idx.dtype is wgrad.int64
    assert int(idx.item()) == 1
    (m.sum() + y.real.sum()).backward()
    an, bn = np.array([1 + 1j, 2 - 1j]), np.array([0.5j, 1.0 + 0j])
    yn = an * np.conj(bn) * 3
    gy = yn / np.abs(yn) + 1  # dL/dy* (PyTorch's convention) for |y| + Re(y)
    np.testing.assert_allclose(a.grad.numpy(), gy * np.conj(np.conj(bn) * 3))
    np.testing.assert_allclose(b.grad.numpy(), np.conj(gy) * an * 3)
    assert len(lifted._wgrad_ops) == 1
    lifted({"a": a, "b": b}, jnp.asarray(3.0), "real")
    assert len(lifted._wgrad_ops) == 2


@pytest.mark.parametrize("name,wfn,jfn,dt", FUNCS, ids=IDS)
def test_to_jax_vjp_equals_jnp(name, wfn, jfn, dt):
    rng = np.random.default_rng(1)
    x = rng.uniform(-1.5, 1.5, (2, 3))
    if dt == C128:
        x = x + 1j * rng.uniform(-1.5, 1.5, (2, 3))
    x = jnp.asarray(x)
    out_j, vjp_j = jax.vjp(jfn, x)
    out_w, vjp_w = jax.vjp(wgrad.to_jax(wfn), x)
    np.testing.assert_allclose(out_w, out_j, rtol=1e-12)
    ct = rng.standard_normal(out_j.shape)
    if out_j.dtype.kind == "c":
        ct = ct + 1j * rng.standard_normal(out_j.shape)
    ct = jnp.asarray(ct, out_j.dtype)
    np.testing.assert_allclose(vjp_w(ct)[0], vjp_j(ct)[0], rtol=1e-10, atol=1e-12)
    if out_j.dtype.kind == "f":  # real-valued: jax.grad, jit(grad), jacrev, grad of grad
        def loss_j(v):
            return jnp.sum(jfn(v))
        loss_w = wgrad.to_jax(lambda v: wfn(v).sum())
        np.testing.assert_allclose(jax.grad(loss_w)(x), jax.grad(loss_j)(x), rtol=1e-10)
        np.testing.assert_allclose(jax.jit(jax.grad(loss_w))(x), jax.grad(loss_j)(x),
                                   rtol=1e-10)
        np.testing.assert_allclose(jax.jacrev(wgrad.to_jax(wfn))(x), jax.jacrev(jfn)(x),
                                   rtol=1e-10, atol=1e-12)
        if dt == F64:
            gg_w = jax.grad(lambda v: jnp.sum(jax.grad(loss_w)(v) ** 2))(x)
            gg_j = jax.grad(lambda v: jnp.sum(jax.grad(loss_j)(v) ** 2))(x)
            np.testing.assert_allclose(gg_w, gg_j, rtol=1e-9)


def test_to_jax_abs_squared_worked_example():
    # the docs' example: L = |z|^2. PyTorch/wgrad: dL/dz* = 2z. JAX: conj of that, 2 conj(z)
    z = jnp.asarray(1.0 + 2.0j)
    energy = wgrad.to_jax(lambda w: (w * w.conj()).real)
    np.testing.assert_allclose(jax.grad(energy)(z), 2 * np.conj(1.0 + 2.0j))
    np.testing.assert_allclose(jax.grad(lambda v: jnp.abs(v) ** 2)(z), 2 * np.conj(1 + 2j))
    t = wgrad.tensor(1.0 + 2.0j, dtype=wgrad.complex128, requires_grad=True)
    wgrad.jax_function(lambda v: jnp.abs(v) ** 2)(t).backward()
    np.testing.assert_allclose(t.grad.numpy(), 2 * (1.0 + 2.0j))


def test_to_jax_pytrees_statics_and_integer_inputs():
    def f(p, k, n):
        return {"s": (p["w"] * k).sum() * n}
    jf = wgrad.to_jax(f, static_argnums=2)
    p = {"w": jnp.asarray([1.0, 2.0])}
    k = jnp.asarray([3, 4])
    g = jax.grad(lambda p: jf(p, k, 2)["s"])(p)
    np.testing.assert_allclose(g["w"], [6.0, 8.0])
    out = jax.jit(jf, static_argnums=2)(p, k, 3)
    np.testing.assert_allclose(out["s"], 33.0)


def test_dlpack_capsules_both_ways():
    torch = pytest.importorskip("torch")
    from wgrad.utils import dlpack
    t = wgrad.tensor([1 + 1j, 2 - 3j])
    np.testing.assert_array_equal(torch.utils.dlpack.from_dlpack(wgrad.to_dlpack(t)).numpy(),
                                  t.numpy())
    # a conjugate view exports its values; a tensor that requires grad exports as torch's
    np.testing.assert_array_equal(dlpack.from_dlpack(dlpack.to_dlpack(t.conj())).numpy(),
                                  np.conj(t.numpy()))
    assert dlpack.from_dlpack(wgrad.to_dlpack(wgrad.ones(2, requires_grad=True))).shape == (2,)
    # torch's capsule of a slice (an offset data pointer) comes in with its values
    cap = torch.utils.dlpack.to_dlpack(torch.arange(6.).reshape(2, 3)[1:])
    np.testing.assert_array_equal(wgrad.from_dlpack(cap).numpy(), [[3., 4., 5.]])
    with pytest.raises(TypeError, match="unused DLPack capsule"):
        wgrad.from_dlpack(cap)  # a capsule is consumed once
