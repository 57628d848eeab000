"""Forward-mode AD: dual tensors against torch's forward AD and numerical JVPs."""
import numpy as np
import pytest

import wgrad
import wgrad.autograd.forward_ad as fwAD
from wgrad.autograd import gradcheck

torch = pytest.importorskip("torch")
tfwAD = torch.autograd.forward_ad

R = np.array([[0.3, -1.2, 0.7], [1.5, 0.2, -0.4]])
RT = np.array([[1.0, 0.5, -2.0], [0.3, -0.7, 1.1]])
C = R + 1j * np.array([[0.4, 0.9, -0.6], [-1.1, 0.8, 0.25]])
CT = RT - 1j * np.array([[0.2, 1.3, 0.5], [-0.9, 0.1, 0.6]])
KINK = np.array([[0.0, 1.0, -1.0], [0.0, 2.0, 0.0]])  # non-differentiable points

# (name, function of the module (wgrad or torch) and one tensor, domains)
OPS = [
    ("sin", lambda m, x: m.sin(x), "rc"),
    ("exp_mul", lambda m, x: m.exp(x) * x, "rc"),
    ("log_abs", lambda m, x: m.log(x.abs() + 1), "rc"),
    ("div", lambda m, x: x / (x * x + 2), "rc"),
    ("conj_mul", lambda m, x: x * x.conj(), "rc"),  # non-holomorphic
    ("abs", lambda m, x: x.abs(), "rck"),
    ("sgn", lambda m, x: m.sgn(x), "rck"),
    ("angle", lambda m, x: m.angle(x), "rck"),
    ("relu", lambda m, x: m.relu(x), "rk"),
    ("clamp", lambda m, x: m.clamp(x, -1.0, 1.0), "rk"),
    ("sqrt_abs", lambda m, x: m.sqrt(x.abs() + 1), "rc"),
    # torch keeps only the real part of a real input's share of a complex power
    ("pow_real_base", lambda m, x: (x.real.abs() + 0.5) ** x, "rc"),
    ("pow_real_exponent", lambda m, x: x ** x.real, "c"),
    ("pow_zeros", lambda m, x: x.abs() ** m.tensor([0.0, 2.0, 0.5], dtype=m.float64), "rck"),
    ("real_imag", lambda m, x: x.real * 2 + (x * 1j).imag, "c"),
    ("sum", lambda m, x: x.sum(1), "rc"),
    ("amax", lambda m, x: x.amax(1), "rk"),
    ("matmul", lambda m, x: x @ x.transpose(0, 1), "rc"),
    ("norm", lambda m, x: m.linalg.norm(x), "rc"),
    ("prod", lambda m, x: x.prod(1), "rc"),
    ("cumsum", lambda m, x: m.cumsum(x, 0), "rc"),
    ("index", lambda m, x: x[1, 1:] * x[0, :2], "rc"),
    ("reshape_t", lambda m, x: x.reshape(3, 2).t() * 2, "rc"),
    ("fft", lambda m, x: m.fft.fft(x), "rc"),
    ("where", lambda m, x: m.where(x.abs() > 0.6, x, x * x), "rc"),
]


def _cases():
    for name, f, dom in OPS:
        if "r" in dom:
            yield pytest.param(name, f, R, RT, id=f"{name}-real")
        if "c" in dom:
            yield pytest.param(name, f, C, CT, id=f"{name}-complex")
        if "k" in dom:
            yield pytest.param(name, f, KINK, RT, id=f"{name}-kink")
            if "c" in dom:
                yield pytest.param(name, f, KINK + 0j, CT, id=f"{name}-complex-kink")


def _tangent(m, fw, f, x, t):
    with fw.dual_level():
        y = f(m, fw.make_dual(m.tensor(x), m.tensor(t)))
        p, tan = fw.unpack_dual(y)
        return np.asarray(p.detach()), np.asarray(tan.detach())


@pytest.mark.parametrize("name,f,x,t", list(_cases()))
def test_tangent_matches_torch(name, f, x, t):
    p, tan = _tangent(wgrad, fwAD, f, x, t)
    tp, ttan = _tangent(torch, tfwAD, f, x, t)
    np.testing.assert_allclose(p, tp, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(tan, ttan, rtol=1e-10, atol=1e-12)


# kinks, and torch's real share of a complex power, are not the finite difference
@pytest.mark.parametrize("name,f,x,t", [c for c in _cases() if "kink" not in c.id
                                        and not c.id.startswith("pow_real")])
def test_tangent_matches_finite_differences(name, f, x, t):
    _, tan = _tangent(wgrad, fwAD, f, x, t)
    eps = 1e-6
    plus = np.asarray(f(wgrad, wgrad.tensor(x + eps * t)))
    minus = np.asarray(f(wgrad, wgrad.tensor(x - eps * t)))
    np.testing.assert_allclose(tan, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,dtype", [
    (lambda x: (x.sin() * x).sum(1), wgrad.float64),
    (lambda z: z.exp() * z.conj(), wgrad.complex128),
    (lambda z: z.abs() + z.angle(), wgrad.complex128),
])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_forward_ad(f, dtype, fast_mode):
    x = wgrad.tensor(C if dtype is wgrad.complex128 else R, dtype=dtype, requires_grad=True)
    assert gradcheck(f, (x,), check_forward_ad=True, fast_mode=fast_mode)
    assert gradcheck(f, (x,), check_forward_ad=True, check_backward_ad=False,
                     fast_mode=fast_mode)


def _custom(m, jvp_scale):
    class Scale(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, k):
            ctx.save_for_forward(x)
            return x * k

        @staticmethod
        def backward(ctx, g, k=None):
            return g * 2, None

        @staticmethod
        def jvp(ctx, t, k):
            x, = ctx.saved_tensors
            assert k is None
            return t * jvp_scale + 0 * x
    return Scale


def test_custom_function_jvp_and_gradcheck():
    x = wgrad.tensor(R, requires_grad=True)
    with fwAD.dual_level():
        y = _custom(wgrad, 2.0).apply(fwAD.make_dual(x, wgrad.tensor(RT)), 2.0)
        np.testing.assert_allclose(np.asarray(fwAD.unpack_dual(y).tangent), 2 * RT)
    assert gradcheck(lambda x: _custom(wgrad, 2.0).apply(x, 2.0), (x,), check_forward_ad=True)
    with pytest.raises(wgrad.autograd.GradcheckError, match="forward mode"):
        gradcheck(lambda x: _custom(wgrad, 3.0).apply(x, 2.0), (x,), check_forward_ad=True)


def _errors(m, fw):
    msgs = []

    def grab(f):
        try:
            f()
        except Exception as e:  # the message is compared with torch's
            msgs.append((type(e).__name__, str(e).replace("wgrad.", "torch.")))
        else:
            msgs.append(None)

    class NoJvp(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g

    class NonDiff(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            out = x.clone()
            ctx.mark_non_differentiable(out)
            return x.clone(), out

        @staticmethod
        def jvp(ctx, t):
            return t, t

    class Dirty(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.mark_dirty(x)
            return x.mul_(2)

        @staticmethod
        def jvp(ctx, t):
            return t * 2

    class DirtyOk(Dirty):
        @staticmethod
        def jvp(ctx, t):
            return t.mul_(2)

    x = m.ones(2)
    grab(lambda: fw.make_dual(x, m.ones(2)))
    with fw.dual_level():
        grab(lambda: fw.enter_dual_level())
        grab(lambda: fw.make_dual(x, m.ones(3)))
        grab(lambda: fw.make_dual(m.arange(2), m.ones(2)))
        grab(lambda: fw.make_dual(x, m.arange(2)))
        d = fw.make_dual(x, m.ones(2))
        grab(lambda: fw.make_dual(d, m.ones(2)))
        grab(lambda: fw.exit_dual_level(level=3))
        grab(lambda: NoJvp.apply(d))
        grab(lambda: NonDiff.apply(d))
        grab(lambda: Dirty.apply(fw.make_dual(m.ones(2), m.ones(2))))
        grab(lambda: DirtyOk.apply(fw.make_dual(m.ones(2), m.ones(2))))
    grab(lambda: fw.exit_dual_level())
    return msgs


def test_errors_match_torch():
    assert _errors(wgrad, fwAD) == _errors(torch, tfwAD)


def test_level_state_and_unpack():
    x = wgrad.tensor(R, requires_grad=True)
    assert fwAD._current_level == -1
    with fwAD.dual_level() as lvl:
        assert lvl == 0 and fwAD._current_level == 0
        d = fwAD.make_dual(x, wgrad.tensor(RT))
        assert d._base is x and d.grad_fn.name() == "ViewBackward0"
        u = fwAD.unpack_dual(d)
        assert isinstance(u, fwAD.UnpackedDualTensor) and u._fields == ("primal", "tangent")
        assert fwAD.unpack_dual(u.primal).tangent is None
        assert fwAD.unpack_dual(d.long()).tangent is None
        assert fwAD.unpack_dual(d > 0).tangent is None
        assert fwAD.unpack_dual(d.detach()).tangent is None
    assert fwAD._current_level == -1
    assert fwAD.unpack_dual(d).tangent is None


def _views_and_inplace(m, fw):
    out = []
    with fw.dual_level():
        x = fw.make_dual(m.tensor([1., 2., 3.]), m.tensor([1., -1., 2.]))
        for y in (x.reshape(3), x.view(3, 1), x[1:]):
            out.append(fw.unpack_dual(y).tangent)
        z = m.zeros(3)
        z.add_(x)
        z.mul_(x)
        out.append(fw.unpack_dual(z).tangent)
        w = m.ones(4)
        w[1:].copy_(x)
        w[0] = x[2]
        out.append(fw.unpack_dual(w).tangent)
        b = m.zeros(2, 3)
        v = b[1]
        v.add_(x * x)
        out += [fw.unpack_dual(b).tangent, fw.unpack_dual(v).tangent]
        c = x.clone()
        c.sin_()
        out.append(fw.unpack_dual(c).tangent)
    return [np.asarray(t) for t in out]


def test_views_and_inplace_match_torch():
    for a, b in zip(_views_and_inplace(wgrad, fwAD), _views_and_inplace(torch, tfwAD)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def _hvp(m, fw, create_graph):
    x = m.tensor([0.5, -1.0, 2.0], requires_grad=True)
    v = m.tensor([1.0, 0.5, -1.0])
    with fw.dual_level():
        d = fw.make_dual(x, v)
        y = (d.exp() * d.sin()).sum() + (d * d).prod()
        g, = m.autograd.grad(y, d, create_graph=create_graph)
        return np.asarray(fw.unpack_dual(g).tangent.detach())


@pytest.mark.parametrize("create_graph", [False, True])
def test_forward_over_reverse_hvp(create_graph):
    np.testing.assert_allclose(_hvp(wgrad, fwAD, create_graph), _hvp(torch, tfwAD, create_graph),
                               rtol=1e-6)


def test_no_level_costs_no_tangents():
    x = wgrad.tensor(R)
    assert fwAD.unpack_dual(x.sin()).tangent is None


def _view_checks(m, fw):
    class ViewFn(m.autograd.Function):
        @staticmethod
        def forward(ctx, x, flag):
            ctx.flag = flag
            return x.narrow(0, 0, 2)

        @staticmethod
        def jvp(ctx, t, _):
            res = t.narrow(0, 0, 2)
            if ctx.flag != "ok":
                res = res.clone()
            if ctx.flag in ("other", "other_base"):
                res = res.view_as(res)
            return res

    class AsIs(m.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2, x

        @staticmethod
        def jvp(ctx, t):
            return t * 2, (t.view_as(t) if AsIs.view else t)

    out = []
    for flag in ("ok", "not_a_view", "other", "other_base"):
        for rg in (False, True):
            with fw.dual_level():
                x = m.ones(4, 3, dtype=m.float64, requires_grad=rg)
                x = x.view_as(x) if flag == "other_base" else x
                d = fw.make_dual(x, m.ones(4, 3, dtype=m.float64))
                d = d.view_as(d) if flag == "other_base" else d
                try:
                    r = ViewFn.apply(d, flag)
                    out.append(fw.unpack_dual(r).tangent._base is not None)
                except RuntimeError as e:
                    out.append(str(e))
    for view in (True, False):
        AsIs.view = view
        with fw.dual_level():
            t = m.ones(2, dtype=m.float64)
            try:
                _, o = AsIs.apply(fw.make_dual(m.ones(2, dtype=m.float64), t))
                out.append(fw.unpack_dual(o).tangent._base is t)
            except RuntimeError as e:
                out.append(str(e))
    return out


def test_custom_function_view_checks_match_torch():
    assert _view_checks(wgrad, fwAD) == _view_checks(torch, tfwAD)


def _functional(m):
    F = m.autograd.functional
    x = m.tensor([0.5, -1.0, 2.0], dtype=m.float64)
    z = m.tensor([0.5 + 1j, -1.0 - 0.3j], dtype=m.complex128)
    res = [
        F.jacobian(lambda a: (a.sin() * a.exp(), a.sum() * a), x, vectorize=True,
                   strategy="forward-mode"),
        F.jacobian(lambda a, b: a * b.sum(), (x, x * 2), vectorize=True,
                   strategy="forward-mode"),
        F.jacobian(lambda a: a * a.exp(), z, vectorize=True, strategy="forward-mode"),
        F.hessian(lambda a: (a.sin() * a.exp()).sum() + a.prod(), x, vectorize=True,
                  outer_jacobian_strategy="forward-mode"),
        F.hessian(lambda a, b: (a.sin() * b.exp()).sum(), (x, x * 2), vectorize=True,
                  outer_jacobian_strategy="forward-mode"),
    ]

    def flat(r):
        if isinstance(r, (list, tuple)):
            return [type(r).__name__] + [flat(e) for e in r]
        return np.asarray(r.detach())
    return flat(res)


def _assert_same(a, b):
    if isinstance(a, list):
        assert isinstance(b, list) and len(a) == len(b) and a[0] == b[0]
        for x, y in zip(a[1:], b[1:]):
            _assert_same(x, y)
    else:
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_functional_forward_mode_matches_torch():
    _assert_same(_functional(wgrad), _functional(torch))


def test_gradcheck_batched_grad():
    z = wgrad.tensor(C, requires_grad=True)
    assert gradcheck(lambda z: (z.exp() * z.conj()).sum(0), (z,), check_batched_grad=True,
                     check_forward_ad=True)


def _inference_dual(m, fw):
    with m.inference_mode():
        foo = m.ones(2)
        with fw.dual_level():
            dual = fw.make_dual(foo, m.ones(2))
            is_view = dual._is_view()
            dual += 1
            return is_view, np.asarray(foo).tolist(), np.asarray(fw.unpack_dual(dual).tangent).tolist()


def test_make_dual_in_inference_mode_matches_torch():
    assert _inference_dual(wgrad, fwAD) == _inference_dual(torch, tfwAD)


def _reverse_over_forward(m, fw, f, x, t):
    xp = m.tensor(x, requires_grad=True)
    tp = m.tensor(t, requires_grad=True)
    with fw.dual_level():
        tan = fw.unpack_dual(f(m, fw.make_dual(xp, tp))).tangent
        if not tan.requires_grad:  # a constant tangent (sgn, angle of a real input)
            return None
        w = m.tensor(np.linspace(0.5, 1.5, tan.numel()).reshape(tuple(tan.shape)))
        loss = (tan * w).sum()
        loss = loss.real if loss.is_complex() else loss
        gs = m.autograd.grad(loss, (xp, tp), allow_unused=True)
    return [None if g is None else
            (g.numpy(force=True) if m is torch else np.asarray(g)) for g in gs]


# complex rows (real ones where complex is not in the domain): the suite stays lean
@pytest.mark.parametrize("name,f,x,t", [c for c in _cases() if c.id.endswith("-complex")
                                        or c.id in ("relu-real", "clamp-real", "amax-real")])
def test_reverse_over_forward_matches_torch(name, f, x, t):
    # NOTE [Recorded tangents]: a tangent is differentiable in its primal and in itself
    a = _reverse_over_forward(wgrad, fwAD, f, x, t)
    b = _reverse_over_forward(torch, tfwAD, f, x, t)
    if b is None:
        assert a is None or not any(np.any(g) for g in a if g is not None)
        return
    for ga, gb in zip(a, b):
        if gb is None:
            assert ga is None or not np.any(ga)
        else:
            np.testing.assert_allclose(ga, gb, rtol=1e-8, atol=1e-10)


def _dual_metadata(lib):
    fw = lib.autograd.forward_ad
    out = []
    with fw.dual_level():
        for primal, tangent in ((lib.arange(5.0)[:4], lib.ones(4)),
                                (lib.ones(2, 3).t(), lib.ones(3, 2)),
                                (lib.arange(4.0)[::2], lib.ones(4)[::2])):
            t = fw.unpack_dual(fw.make_dual(primal, tangent)).tangent
            t *= 2  # a copied tangent leaves the given one alone
            out.append((t is tangent, tangent.tolist()))
        d = fw.make_dual(lib.tensor([1.0, 2.0]), lib.tensor([3.0, 4.0]))
        out.append(repr(d * 2).replace("torch", "wgrad"))
        c = d.clone()
        c.detach_()  # leaves forward AD as well
        out.append(fw.unpack_dual(c * 2).tangent)
        with pytest.raises(RuntimeError) as e:
            lib.add(d, d, out=lib.zeros(2))
        out.append(str(e.value))
    return out


def test_make_dual_layout_check_repr_and_out_error_match_torch():
    torch = pytest.importorskip("torch")
    assert _dual_metadata(wgrad) == _dual_metadata(torch)
