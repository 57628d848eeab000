"""wgrad.func against torch.func: values (real and complex), compositions, functional_call,
stack_module_state and error messages."""
import functools

import numpy as np
import pytest

import wgrad
from wgrad import func as wf

torch = pytest.importorskip("torch")
tf = torch.func

RNG = np.random.default_rng(0)
XR = RNG.standard_normal(3)
XR2 = RNG.standard_normal(3)
XC = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
TC = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
BATCH = RNG.standard_normal((4, 3))


def _both(a):
    return wgrad.tensor(a), torch.tensor(a)


def _np(x):
    if isinstance(x, (tuple, list)):
        return [_np(v) for v in x]
    if isinstance(x, dict):
        return {k: _np(v) for k, v in x.items()}
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def _close(a, b):
    a, b = _np(a), _np(b)
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b)
        for u, v in zip(a, b):
            _close(u, v)
    elif isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _close(a[k], b[k])
    else:
        np.testing.assert_allclose(a, b, rtol=1e-6, atol=1e-9)


def hol(m, z):
    return z * z.sin()


def nonhol(m, z):
    return z * z.conj() + z.real


def real_of_complex(m, z):
    return (z * z.conj()).real.sum() + (z * z).abs().sum()


def f_real(m, x):
    return (x.sin() * x ** 2).sum()


def f_vec(m, x):
    return x.sin() * x.exp()


# (id, transform applied as T(m)(inputs) -> result, inputs (numpy))
CASES = [
    ("grad_real", lambda m: m.func.grad(lambda x: f_real(m, x)), (XR,)),
    ("grad_complex", lambda m: m.func.grad(lambda z: real_of_complex(m, z)), (XC,)),
    ("grad_argnums", lambda m: m.func.grad(lambda x, y: (x * y.cos()).sum(), argnums=(0, 1)),
     (XR, XR2)),
    ("grad_aux", lambda m: m.func.grad(lambda x: (f_real(m, x), x.cos()), has_aux=True),
     (XR,)),
    ("grad_and_value", lambda m: m.func.grad_and_value(lambda x: f_real(m, x)), (XR,)),
    ("grad_dict", lambda m: m.func.grad(lambda d: (d["a"] * d["b"][0].exp()).sum()),
     ({"a": XR, "b": [XR2]},)),
    ("vjp_hol", lambda m: (lambda z, t: m.func.vjp(lambda u: hol(m, u), z)[1](t)), (XC, TC)),
    ("vjp_nonhol", lambda m: (lambda z, t: m.func.vjp(lambda u: nonhol(m, u), z)[1](t)),
     (XC, TC)),
    ("vjp_aux", lambda m: (lambda x: (lambda r: (r[0], r[1](r[0]), r[2]))(
        m.func.vjp(lambda u: (u.exp(), {"c": u.cos()}), x, has_aux=True))), (XR,)),
    ("jvp_aux", lambda m: (lambda x: m.func.jvp(lambda u: (u.exp(), [u.cos()]), (x,), (x,),
                                                has_aux=True)), (XR,)),
    ("jvp_hol", lambda m: (lambda z, t: m.func.jvp(lambda u: hol(m, u), (z,), (t,))),
     (XC, TC)),
    ("jvp_nonhol", lambda m: (lambda z, t: m.func.jvp(lambda u: nonhol(m, u), (z,), (t,))),
     (XC, TC)),
    ("linearize", lambda m: (lambda z, t: m.func.linearize(lambda u: hol(m, u), z)[1](t)),
     (XC, TC)),
    ("jacrev", lambda m: m.func.jacrev(lambda x: f_vec(m, x)), (XR,)),
    ("jacrev_tree", lambda m: m.func.jacrev(lambda x, y: {"a": x * y, "b": (x * y).sum()},
                                            argnums=(0, 1)), (XR, XR2)),
    ("jacfwd", lambda m: m.func.jacfwd(lambda x: f_vec(m, x)), (XR,)),
    ("jacfwd_tree", lambda m: m.func.jacfwd(lambda x, y: (x * y, (x * y).sum()),
                                            argnums=(0, 1)), (XR, XR2)),
    ("hessian", lambda m: m.func.hessian(lambda x: f_real(m, x)), (XR,)),
    ("vmap", lambda m: m.func.vmap(lambda x, y: x * y.sum(), in_dims=(0, None)),
     (BATCH, XR)),
    ("vmap_out_dims", lambda m: m.func.vmap(lambda x: (x.exp(), x.sum()), in_dims=1,
                                            out_dims=(1, 0)), (BATCH,)),
    ("vmap_chunk", lambda m: m.func.vmap(lambda x: x.exp() * 2, chunk_size=2), (BATCH,)),
    ("vmap_grad", lambda m: m.func.vmap(m.func.grad(lambda x: f_real(m, x))), (BATCH,)),
    ("vmap_vmap", lambda m: m.func.vmap(m.func.vmap(lambda x: x.sin() * x)), (BATCH,)),
    ("vmap_jacrev", lambda m: m.func.vmap(m.func.jacrev(lambda x: f_vec(m, x))), (BATCH,)),
    ("jacrev_jacfwd", lambda m: m.func.jacrev(m.func.jacfwd(lambda x: f_vec(m, x))), (XR,)),
    ("grad_grad", lambda m: m.func.grad(
        lambda x: m.func.grad(lambda u: (u.sin() * u ** 3).sum())(x).cos().sum()), (XR,)),
    ("grad_through_vmap", lambda m: m.func.grad(
        lambda a: m.func.vmap(lambda r: (r.sin() * r).sum())(a).sum()), (BATCH,)),
    ("jvp_through_vmap", lambda m: (lambda a: m.func.jvp(
        m.func.vmap(lambda r: (r.sin() * r).sum()), (a,), (a,))), (BATCH,)),
    ("jacfwd_jacfwd", lambda m: m.func.jacfwd(m.func.jacfwd(lambda x: f_vec(m, x))), (XR,)),
    ("vmap_grad_complex", lambda m: m.func.vmap(m.func.grad(lambda z: real_of_complex(m, z))),
     (BATCH * (1 + 0.5j),)),
]


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_func(case):
    _, make, inputs = case

    def conv(lib, a):
        if isinstance(a, dict):
            return {k: conv(lib, v) for k, v in a.items()}
        if isinstance(a, list):
            return [conv(lib, v) for v in a]
        return lib.tensor(a)
    got = make(wgrad)(*[conv(wgrad, a) for a in inputs])
    want = make(torch)(*[conv(torch, a) for a in inputs])
    _close(got, want)


def _model(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Linear(3, 4), lib.nn.Tanh(), lib.nn.Linear(4, 2))
    with lib.no_grad():
        for p, a in zip(m.parameters(), _PARAMS):
            p.copy_(lib.tensor(a, dtype=p.dtype))
    return m


_PARAMS = [RNG.standard_normal(s).astype(np.float32) for s in ((4, 3), (4,), (2, 4), (2,))]


def test_per_example_gradients_of_a_module():
    res = []
    for lib in (wgrad, torch):
        model = _model(lib)
        params = {k: v.detach() for k, v in model.named_parameters()}

        def loss(p, x, y, lib=lib, model=model):
            out = lib.func.functional_call(model, p, (x[None],))
            return lib.nn.functional.mse_loss(out, y[None])
        X = lib.tensor(BATCH, dtype=lib.float32)
        Y = lib.tensor(BATCH[:, :2] * 0.5, dtype=lib.float32)
        g = lib.func.vmap(lib.func.grad(loss), in_dims=(None, 0, 0))(params, X, Y)
        assert not any(v.requires_grad for v in g.values())
        res.append({k: v.detach().numpy() for k, v in g.items()})
    for k in res[1]:
        np.testing.assert_allclose(res[0][k], res[1][k], rtol=1e-5, atol=1e-6)


def test_vmap_output_is_differentiable_by_backward():
    grads = []
    for lib in (wgrad, torch):
        w = lib.tensor(XR, requires_grad=True)
        x = lib.tensor(BATCH, requires_grad=True)
        seen = []
        x.register_hook(lambda g, seen=seen: seen.append(g.numpy()))
        out = lib.func.vmap(lambda r, w=w: (w * r).sin().sum())(x)
        (out ** 2).sum().backward()
        grads.append((w.grad.numpy(), seen[0]))
    _close(grads[0], grads[1])


def test_grad_of_inputs_that_require_grad_is_differentiable():
    res = []
    for lib in (wgrad, torch):
        x = lib.tensor(XR, requires_grad=True)
        g = lib.func.grad(lambda u: (u ** 3).sum())(x)
        assert g.requires_grad
        g.sum().backward()
        res.append(x.grad.numpy())
    np.testing.assert_allclose(res[0], res[1])


def test_vmap_grad_is_one_cached_computation():
    ops = wgrad.func._lower._ops
    wf.vmap(wf.grad(_f_global))(wgrad.tensor(BATCH))
    before = list(ops)
    out = wf.vmap(wf.grad(_f_global))(wgrad.tensor(BATCH + 1))  # new wrappers, same op
    assert list(ops)[-1] == before[-1] and len(ops) == len(before)
    np.testing.assert_allclose(out[2].numpy(),
                               wf.grad(_f_global)(wgrad.tensor(BATCH[2] + 1)).numpy())
    wf.vmap(wf.grad(lambda x: (x.sin() * x).sum()))(wgrad.tensor(BATCH))
    assert list(ops)[-1] != before[-1]  # another function: another op


def _f_global(x):
    return (x.cos() * x).sum()


def test_a_user_wrapper_of_a_transform_is_its_own_function():
    g = wf.grad(_f_global)

    @functools.wraps(g)
    def twice(x):
        return g(x) * 2
    x = wgrad.tensor(BATCH)
    a, b = wf.vmap(g)(x), wf.vmap(twice)(x)
    np.testing.assert_allclose(b.numpy(), 2 * a.numpy())


def test_vmap_reads_captured_tensors_afresh():
    w = wgrad.tensor(XR)
    f = wf.vmap(_scaled(w))
    a = f(wgrad.tensor(BATCH))
    with wgrad.no_grad():
        w.mul_(2)
    b = f(wgrad.tensor(BATCH))
    np.testing.assert_allclose(b.numpy(), 2 * a.numpy())


def test_vmap_sees_new_python_values_of_its_closure():
    scale = 2.0

    def f(x):
        return x * scale
    a = wf.vmap(f)(wgrad.tensor(BATCH))
    scale = 3.0
    b = wf.vmap(f)(wgrad.tensor(BATCH))
    np.testing.assert_allclose(b.numpy(), 1.5 * a.numpy())


def _scaled(w):
    def f(x):
        return x * w
    return f


# -- functional_call / stack_module_state -------------------------------------------------
def test_functional_call_swaps_and_restores():
    lin = wgrad.nn.Linear(2, 2)
    w0 = lin.weight
    new = {"weight": wgrad.eye(2) * 2, "bias": wgrad.zeros(2)}
    out = wf.functional_call(lin, new, (wgrad.tensor([1.0, 2.0]),))
    np.testing.assert_allclose(out.numpy(), [2.0, 4.0])
    assert lin.weight is w0

    class Boom(wgrad.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = wgrad.nn.Parameter(wgrad.ones(1))

        def forward(self, x):
            raise ValueError("boom")
    m = Boom()
    w = m.w
    with pytest.raises(ValueError, match="boom"):
        wf.functional_call(m, {"w": wgrad.zeros(1)}, wgrad.ones(1))
    assert m.w is w


class _Tied:
    def __init__(self, lib):
        class T(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.a = lib.nn.Linear(2, 2, bias=False)
                self.b = lib.nn.Linear(2, 2, bias=False)
                self.b.weight = self.a.weight

            def forward(self, x):
                return self.b(self.a(x))
        self.m = T()


FC_CASES = [
    ("tied", lambda lib, m, w: lib.func.functional_call(m, {"a.weight": w}, (lib.ones(2),))),
    ("tied_same", lambda lib, m, w: lib.func.functional_call(
        m, {"a.weight": w, "b.weight": w}, (lib.ones(2),))),
    ("tied_conflict", lambda lib, m, w: lib.func.functional_call(
        m, {"a.weight": w, "b.weight": w * 3}, (lib.ones(2),))),
    ("strict_missing", lambda lib, m, w: lib.func.functional_call(
        m, {"a.weight": w}, (lib.ones(2),), tie_weights=False, strict=True)),
    ("strict_unexpected", lambda lib, m, w: lib.func.functional_call(
        m, {"a.weight": w, "c": w}, (lib.ones(2),), strict=True)),
    ("duplicate_dicts", lambda lib, m, w: lib.func.functional_call(
        m, ({"a.weight": w}, {"a.weight": w}), (lib.ones(2),))),
]


@pytest.mark.parametrize("case", FC_CASES, ids=[c[0] for c in FC_CASES])
def test_functional_call_like_torch(case):
    _, call = case
    res = []
    for lib in (wgrad, torch):
        m = _Tied(lib).m
        try:
            res.append(("ok", call(lib, m, lib.eye(2) * 2).detach().numpy()))
        except Exception as e:  # noqa: BLE001 (compared with torch's)
            res.append((type(e).__name__, str(e)))
    if res[1][0] == "ok":
        assert res[0][0] == "ok", res[0]
        np.testing.assert_allclose(res[0][1], res[1][1])
    else:
        assert res[0] == res[1]


def test_stack_module_state_like_torch():
    got = []
    for lib in (wgrad, torch):
        models = [lib.nn.BatchNorm1d(2) for _ in range(3)]
        params, buffers = lib.func.stack_module_state(models)
        got.append(({k: (tuple(v.shape), v.requires_grad, v.is_leaf) for k, v in params.items()},
                    {k: (tuple(v.shape), v.requires_grad) for k, v in buffers.items()}))
        models[0].eval()
        with pytest.raises(RuntimeError) as e:
            lib.func.stack_module_state(models)
        got.append(str(e.value))
        with pytest.raises(RuntimeError) as e:
            lib.func.stack_module_state([])
        got.append(str(e.value))
    assert got[:3] == got[3:]


def test_ensemble_vmap_over_stacked_modules():
    res = []
    for lib in (wgrad, torch):
        lib.manual_seed(0)
        models = [lib.nn.Linear(3, 2) for _ in range(2)]
        with lib.no_grad():
            for i, m in enumerate(models):
                m.weight.copy_(lib.tensor(_PARAMS[0][:2] * (i + 1)))
                m.bias.fill_(float(i))
        params, buffers = lib.func.stack_module_state(models)
        base = models[0]

        def call(p, b, x, base=base, lib=lib):
            return lib.func.functional_call(base, (p, b), (x,))
        out = lib.func.vmap(call, in_dims=(0, 0, None))(params, buffers,
                                                        lib.tensor(BATCH, dtype=lib.float32))
        res.append(out.detach().numpy())
    np.testing.assert_allclose(res[0], res[1], rtol=1e-6)


# -- errors -------------------------------------------------------------------------------
X3 = np.arange(3.0)
ERROR_CASES = [
    ("grad_nonscalar", lambda lib, x: lib.func.grad(lambda u: u)(x)),
    ("grad_nontensor_out", lambda lib, x: lib.func.grad(lambda u: (u.sum(),))(x)),
    ("grad_aux_form", lambda lib, x: lib.func.grad(lambda u: u.sum(), has_aux=True)(x)),
    ("grad_argnum_range", lambda lib, x: lib.func.grad(lambda u: u.sum(), argnums=2)(x)),
    ("grad_argnum_unique", lambda lib, x: lib.func.grad(lambda u: u.sum(),
                                                        argnums=(0, 0))(x)),
    ("grad_argnum_type", lambda lib, x: lib.func.grad(lambda u: u.sum(), argnums=1.0)(x)),
    ("grad_not_tensor", lambda lib, x: lib.func.grad(lambda u: u.sum())(3.0)),
    ("vmap_in_dims_structure", lambda lib, x: lib.func.vmap(lambda u: u,
                                                            in_dims=(0, 0))(x)),
    ("vmap_in_dim_range", lambda lib, x: lib.func.vmap(lambda u: u, in_dims=1)(x)),
    ("vmap_sizes", lambda lib, x: lib.func.vmap(lambda u, v: u + v)(x, lib.ones(4))),
    ("vmap_in_dims_type", lambda lib, x: lib.func.vmap(lambda u: u, in_dims=None)(x)),
    ("vmap_no_inputs", lambda lib, x: lib.func.vmap(lambda: x)()),
    ("vmap_non_tensor", lambda lib, x: lib.func.vmap(lambda u: u)(3.0)),
    ("vmap_none_only", lambda lib, x: lib.func.vmap(lambda u: u, in_dims=(None,))(x)),
    ("vmap_returns_float", lambda lib, x: lib.func.vmap(lambda u: 3.0)(x)),
    ("vmap_randomness_value", lambda lib, x: lib.func.vmap(lambda u: u, randomness="x")(x)),
    ("vmap_random_op", lambda lib, x: lib.func.vmap(lambda u: lib.randn(()) + u)(x)),
    ("vmap_dropout", lambda lib, x: lib.func.vmap(
        lambda u: lib.nn.functional.dropout(u, 0.5))(x)),
    ("vmap_item", lambda lib, x: lib.func.vmap(lambda u: u.sum().item())(x[None])),
    ("vmap_control_flow", lambda lib, x: lib.func.vmap(lambda u: u if u.sum() > 0 else u)(x)),
    ("vmap_chunk_size", lambda lib, x: lib.func.vmap(lambda u: u, chunk_size=0)(x)),
    ("vjp_nontensor_out", lambda lib, x: lib.func.vjp(lambda u: 3.0, x)),
    ("vjp_ct_structure", lambda lib, x: lib.func.vjp(lambda u: (u, u), x)[1](x)),
    ("jvp_primals_tuple", lambda lib, x: lib.func.jvp(lambda u: u, x, x)),
    ("jvp_structure", lambda lib, x: lib.func.jvp(lambda u: u, (x,), (x, x))),
    ("jvp_tangent_type", lambda lib, x: lib.func.jvp(lambda u: u, (x,), (3.0,))),
    ("jacrev_complex_in", lambda lib, x: lib.func.jacrev(lambda u: u)(x * 1j)),
    ("jacrev_complex_out", lambda lib, x: lib.func.jacrev(lambda u: u * 1j)(x)),
    ("jacfwd_complex_in", lambda lib, x: lib.func.jacfwd(lambda u: u)(x * 1j)),
    ("stack_empty", lambda lib, x: lib.func.stack_module_state([])),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_like_torch(case):
    _, call = case
    got = []
    for lib in (wgrad, torch):
        with pytest.raises(Exception) as e:
            call(lib, lib.tensor(X3))
        got.append((type(e.value).__name__, str(e.value)))
    assert got[0] == got[1]


def test_hooks_like_torch():
    res = []
    for lib in (wgrad, torch):
        calls = []

        def f(u, calls=calls):
            y = u * 2
            y.register_hook(lambda g: g * 10)
            return (y ** 2).sum()
        x = lib.tensor(BATCH)
        out = [lib.func.grad(f)(x[0]), lib.func.vmap(lib.func.grad(f))(x)]
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with pytest.raises(RuntimeError) as e:
                lib.func.grad(f)(x[0])
        res.append((_np(out), str(e.value)))
    _close(res[0][0], res[1][0])
    assert res[0][1] == res[1][1]


def test_vmap_non_tensor_output_with_out_dim_none():
    out = wf.vmap(lambda u: (u * 2, 3.0, None), out_dims=(0, None, None))(wgrad.tensor(BATCH))
    assert out[1:] == (3.0, None)
    np.testing.assert_allclose(out[0].numpy(), 2 * BATCH)


def test_vmap_randomness_same_and_different():
    x = wgrad.tensor(BATCH)
    out = wf.vmap(lambda u: u * 0 + wgrad.randn(()), randomness="same")(x)
    assert np.unique(out.numpy()).size == 1
    out = wf.vmap(lambda u: u * 0 + wgrad.randn(()), randomness="different")(x)
    rows = out.numpy()
    assert (rows == rows[:, :1]).all() and np.unique(rows[:, 0]).size == len(rows)  # one draw
    again = wf.vmap(lambda u: u * 0 + wgrad.randn(()), randomness="different")(x)
    assert not np.array_equal(again.numpy(), out.numpy())  # drawn anew on each call


class _OldStyle(wgrad.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        return x * 2

    @staticmethod
    def backward(ctx, g):
        return g * 2


class _NoVmapRule(wgrad.autograd.Function):
    @staticmethod
    def forward(x):
        return x * 2

    @staticmethod
    def setup_context(ctx, inputs, output):
        pass

    @staticmethod
    def backward(ctx, g):
        return g * 2


@pytest.mark.parametrize("name", ["_OldStyle", "_NoVmapRule"])
def test_custom_function_inside_vmap_raises_torchs_error(name):
    torch = pytest.importorskip("torch")
    tcls = type(name, (torch.autograd.Function,),
                {k: v for k, v in vars(globals()[name]).items()
                 if k in ("forward", "setup_context", "backward")})
    with pytest.raises(RuntimeError) as expected:
        torch.func.vmap(tcls.apply)(torch.ones(3, 2))
    with pytest.raises(RuntimeError) as got:
        wgrad.func.vmap(globals()[name].apply)(wgrad.ones(3, 2))
    assert str(got.value) == str(expected.value)
