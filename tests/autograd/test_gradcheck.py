"""gradcheck / gradgradcheck: they accept correct formulas and reject wrong ones, for
real and complex inputs and outputs, in slow and fast mode."""
import warnings
import numpy as np
import pytest

import wgrad
from wgrad.autograd import GradcheckError, gradcheck, gradgradcheck
from wgrad.ops._primitive import Primitive
import jax.numpy as jnp


def c128(*shape):
    return wgrad.randn(*shape, dtype=wgrad.complex128, requires_grad=True)


def f64(*shape):
    return wgrad.randn(*shape, dtype=wgrad.float64, requires_grad=True)


# A holomorphic square with a correct formula and three wrong ones.
_good = Primitive("sq_good", lambda self: self * self,
                  self=lambda grad, self: grad * (2 * self).conj())
_no_conj = Primitive("sq_no_conj", lambda self: self * self,
                     self=lambda grad, self: grad * (2 * self))
_factor = Primitive("sq_factor", lambda self: self * self,
                    self=lambda grad, self: grad * self.conj())
# correct first derivative, wrong second: d/dz of the formula is dropped in double backward
_flat = Primitive("sq_flat", lambda self: self * self,
                  self=lambda grad, self: grad * (2 * self.detach()).conj())


@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
def test_accepts_correct_formulas(fast):
    z, x = c128(3), f64(2, 2)
    assert gradcheck(_good, (z,), fast_mode=fast)
    assert gradcheck(_good, (x,), fast_mode=fast)
    assert gradgradcheck(_good, (z,), fast_mode=fast)
    assert gradcheck(lambda a, b: (a * b).exp(), (z, wgrad.randn(
        3, dtype=wgrad.float64, requires_grad=True)), fast_mode=fast)  # R->C mixing
    assert gradcheck(lambda a: a.abs(), (z,), fast_mode=fast)  # C->R


@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
def test_rejects_a_dropped_conjugate(fast):
    z = c128(3)
    with pytest.raises(GradcheckError, match="Jacobian mismatch for output 0 with respect to "
                                             "input 0"):
        gradcheck(_no_conj, (z,), fast_mode=fast)
    assert gradcheck(_no_conj, (f64(3),), fast_mode=fast)  # invisible on real inputs
    assert not gradcheck(_no_conj, (z,), fast_mode=fast, raise_exception=False)


@pytest.mark.parametrize("fast", [False, True], ids=["slow", "fast"])
def test_rejects_a_wrong_factor_on_real_inputs(fast):
    with pytest.raises(GradcheckError):
        gradcheck(_factor, (f64(3),), fast_mode=fast)


def test_gradgradcheck_rejects_a_wrong_second_derivative():
    z = c128(2)
    assert gradcheck(_flat, (z,))
    with pytest.raises(GradcheckError):
        gradgradcheck(_flat, (z,))


def test_complex_output_parts_are_named_in_the_message():
    z = c128(2)
    with pytest.raises(GradcheckError, match="complex"):
        gradcheck(_no_conj, (z,))


def test_needs_an_input_requiring_grad_and_warns_on_single_precision():
    with pytest.raises(ValueError, match="at least one input tensor to require gradient"):
        gradcheck(lambda x: x * 2, (wgrad.ones(2, dtype=wgrad.float64),))
    x = wgrad.randn(2, requires_grad=True)
    with pytest.warns(UserWarning, match="is not a double precision"):
        gradcheck(lambda x: x * 2, (x,), atol=1e-2, rtol=1e-2, eps=1e-3)


def test_identity_helper_catches_a_dropped_conjugate():
    from wgrad.testing import assert_jax_identity
    z = c128(3)
    assert_jax_identity(_good, lambda a: a * a, (z,))
    with pytest.raises(AssertionError, match="conj\\(jax.vjp"):
        assert_jax_identity(_no_conj, lambda a: a * a, (z,))
    np.testing.assert_allclose(_good(z).numpy(force=True), np.asarray(jnp.square(z._data)))


# -- torch's failure reports (compared with torch.autograd.gradcheck) -------------------

def _gradcheck_outcome(lib, case, fast_mode):
    gc, ggc = lib.autograd.gradcheck, lib.autograd.gradgradcheck
    x = lib.ones(1, dtype=lib.float64, requires_grad=True)

    class NonDet(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t, jitter):
            ctx.jitter = jitter
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            return NonDet.apply(g, ctx.jitter) * (1 + lib.rand_like(g) * ctx.jitter), None

    def hooked(t):
        y = lib.complex(t, t)
        y.register_hook(lambda g: g + 1e-2)
        return y

    calls = {
        "shape": lambda: gc(lambda t: lib.cat([t, t]) if bool((t >= 1).all()) else t, (x,),
                            fast_mode=fast_mode),
        "dtype": lambda: gc(lambda t: t.to(lib.float32) if bool((t >= 1).all()) else t, (x,),
                            fast_mode=fast_mode),
        "zero": lambda: gc(lambda t: t.detach() * 2, (x,), fast_mode=fast_mode),
        "zero_quiet": lambda: gc(lambda t: t.detach() * 2, (x,), fast_mode=fast_mode,
                                 raise_exception=False),
        "no_outputs": lambda: gc(lambda t: (), (x,), fast_mode=fast_mode),
        "nondet": lambda: gc(lambda t: NonDet.apply(t, 1e-6), (x,), fast_mode=fast_mode),
        "nondet_tol": lambda: gc(lambda t: NonDet.apply(t, 1e-6), (x,), fast_mode=fast_mode,
                                 nondet_tol=1e-5),
        "nondet_2nd": lambda: ggc(lambda t: NonDet.apply(t, 1e-12), (x,), fast_mode=fast_mode),
        "complex_part": lambda: gc(hooked, (x,), fast_mode=False),
    }
    try:
        return repr(calls[case]())
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        msg = str(e).replace("torch.", "").replace("wgrad.", "")
        # up to the numbers, and to torch's advice about its own test suite
        return type(e).__name__, msg.split("\nnumerical")[0].split("\n\nNOTE")[0]


@pytest.mark.parametrize("case", ["shape", "dtype", "zero", "zero_quiet", "no_outputs",
                                  "nondet", "nondet_tol", "nondet_2nd", "complex_part"])
@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_reports_match_torch(case, fast_mode):
    torch = pytest.importorskip("torch")
    got = _gradcheck_outcome(wgrad, case, fast_mode)
    want = _gradcheck_outcome(torch, case, fast_mode)
    if fast_mode and case in ("shape", "dtype"):  # which side grew depends on the random u
        got, want = [(o[0], o[1].split("but got")[0]) for o in (got, want)]
    assert got == want


def test_deprecated_jacobian_helpers_match_torch():
    """torch.autograd.gradcheck's deprecated get_numerical_jacobian /
    get_analytical_jacobian: the same Jacobians (complex inputs too), flags, warnings and
    errors."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a0, z0 = rng.standard_normal((2, 2)), rng.standard_normal(3) + 1j * rng.standard_normal(3)
    res = {}
    for lib in (torch, wgrad):
        gc = __import__(f"{lib.__name__}.autograd.gradcheck", fromlist=["x"])
        a = lib.tensor(a0, requires_grad=True)
        z = lib.tensor(z0, requires_grad=True)

        def fn(inputs):
            x, w = inputs
            return (x.sin() * 2).sum(0).repeat(2) + (w * w.conj()).real.sum(), x

        with pytest.warns(FutureWarning, match="get_numerical_jacobian` was part of PyTorch"):
            num = gc.get_numerical_jacobian(fn, (a, z), eps=1e-6)
        out = fn((a, z))[0]
        with pytest.warns(FutureWarning, match="get_analytical_jacobian` was part of PyTorch"):
            ana, reentrant, sizes_ok, types_ok = gc.get_analytical_jacobian((a, z), out)
        with pytest.raises(ValueError, match="Expected grad_out to be 1.0"), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            gc.get_analytical_jacobian((a,), out, grad_out=2.0)
        res[lib.__name__] = ([j.detach().numpy() for j in num],
                             [j.detach().numpy() for j in ana], reentrant, sizes_ok, types_ok)
    (tn, ta, *tf), (wn, wa, *wf) = res["torch"], res["wgrad"]
    assert tf == wf == [True, True, True]
    for x, y in zip(tn + ta, wn + wa):
        assert x.shape == y.shape and x.dtype == y.dtype
        np.testing.assert_allclose(y, x, rtol=1e-6, atol=1e-8)


def test_undefined_output_gradients_are_checked_as_torch():
    """check_undefined_grad (on by default): backward must run with undefined output
    gradients (a hook receives None) and give undefined or zero input gradients; and
    zero output gradients must give zero input gradients."""
    torch = pytest.importorskip("torch")
    for lib in (torch, wgrad):
        def hooked(x):
            def hook(g):
                if g is None:
                    raise RuntimeError("x is undefined")
            y = x.clone()
            y.register_hook(hook)
            return y

        class OnesIfUndefined(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(False)
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return lib.ones(1, dtype=lib.float64) if g is None else g

        class Leaky(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, g):
                return g + 1  # not zero for a zero gradient

        x = lib.ones(1, dtype=lib.float64, requires_grad=True)
        for fn, match in ((hooked, "Expected backward function to handle undefined output"),
                          (OnesIfUndefined.apply,
                           "Expected all input grads to be undefined or zero")):
            with pytest.warns(UserWarning, match="New undefined gradient support checking"):
                with pytest.raises(RuntimeError, match=match):
                    lib.autograd.gradcheck(fn, (x,))
            assert lib.autograd.gradcheck(fn, (x,), check_undefined_grad=False)
        with pytest.raises(RuntimeError, match="backward not multiplied by grad_output"):
            lib.autograd.gradcheck(Leaky.apply, (x,), atol=2)


def test_undefined_tangent_check_runs_as_torch():
    """With check_forward_ad, check_undefined_grad also runs the function with each
    input's tangent zero and then absent (torch's count of jvp calls: 2 more per input)."""
    torch = pytest.importorskip("torch")
    counts = {}
    for lib in (torch, wgrad):
        n = [0]

        class UserFn(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x.clone(), y.clone()

            @staticmethod
            def jvp(ctx, x_t, y_t):
                n[0] += 1
                return x_t, y_t

        x = lib.rand(1, dtype=lib.float64, requires_grad=True)
        y = lib.rand(1, dtype=lib.float64, requires_grad=True)
        got = []
        for undefined in (False, True):
            n[0] = 0
            assert lib.autograd.gradcheck(UserFn.apply, (x, y), check_forward_ad=True,
                                          check_backward_ad=False,
                                          check_undefined_grad=undefined)
            got.append(n[0])
        counts[lib.__name__] = got
    assert counts["wgrad"] == counts["torch"] == [2, 6]
