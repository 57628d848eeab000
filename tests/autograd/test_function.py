"""Custom autograd Functions: every ctx method, option and error, complex Functions
checked by gradcheck/gradgradcheck, and gradcheck rejecting a dropped conjugate."""
import gc
import weakref

import jax.numpy as jnp
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import wgrad
from wgrad.autograd import Function, GradcheckError, gradcheck, gradgradcheck
from wgrad.autograd.function import once_differentiable
from wgrad.testing import assert_jax_identity, shapes, values

C128 = wgrad.complex128
F64 = wgrad.float64


def _c(a, requires_grad=True):
    return wgrad.tensor(np.asarray(a, np.complex128), requires_grad=requires_grad)


def _r(a, requires_grad=True):
    return wgrad.tensor(np.asarray(a, np.float64), requires_grad=requires_grad)


# -- complex Functions ----------------------------------------------------------------

class CMul(Function):
    """z * w: holomorphic in both: grad * conj(other), NOTE [Conjugate Wirtinger convention]."""

    @staticmethod
    def forward(ctx, z, w):
        ctx.save_for_backward(z, w)
        return z * w

    @staticmethod
    def backward(ctx, grad):
        z, w = ctx.saved_tensors
        return grad * w.conj(), grad * z.conj()


class AbsSq(Function):
    """|z|^2 (C -> R): ds/dz* = z, so dL/dz* = grad * z (grad real)."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return (z * z.conj()).real

    @staticmethod
    def backward(ctx, grad):
        z, = ctx.saved_tensors
        return grad * z * 2


class ExpNoConj(Function):
    """exp with the conjugate dropped: wrong for complex inputs."""

    @staticmethod
    def forward(ctx, z):
        y = z.exp()
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y


class Exp(Function):
    @staticmethod
    def forward(ctx, z):
        y = z.exp()
        ctx.save_for_backward(y)  # an output: rebuilt with this node as grad_fn
        return y

    @staticmethod
    def backward(ctx, grad):
        y, = ctx.saved_tensors
        return grad * y.conj()


@given(data=st.data())
def test_complex_functions_gradcheck_gradgradcheck(data):
    shape = data.draw(shapes(max_dims=2))
    z = wgrad.tensor(data.draw(values(np.complex128, shape)), requires_grad=True)
    w = wgrad.tensor(data.draw(values(np.complex128, shape)), requires_grad=True)
    assert gradcheck(CMul.apply, (z, w))
    assert gradgradcheck(CMul.apply, (z, w))
    assert gradcheck(AbsSq.apply, (z,))
    assert gradgradcheck(AbsSq.apply, (z,))
    assert gradcheck(Exp.apply, (z,))
    assert gradgradcheck(Exp.apply, (z,))
    assert_jax_identity(CMul.apply, jnp.multiply, (z, w))
    assert_jax_identity(Exp.apply, jnp.exp, (z,))
    assert_jax_identity(AbsSq.apply, lambda z: jnp.abs(z) ** 2, (z,))


def test_gradcheck_rejects_dropped_conjugate():
    z = _c([0.3 + 0.7j, -0.5 + 0.2j])
    with pytest.raises(GradcheckError, match="Jacobian mismatch"):
        gradcheck(ExpNoConj.apply, (z,))
    assert not gradcheck(ExpNoConj.apply, (z,), raise_exception=False)
    # on real inputs the missing conjugate is harmless
    assert gradcheck(ExpNoConj.apply, (_r([0.3, -0.5]),))


def test_real_function_matches_builtin():
    x = _r([0.5, -1.0, 2.0])
    (g,) = wgrad.autograd.grad(Exp.apply(x).sum(), x)
    np.testing.assert_allclose(np.asarray(g), np.exp([0.5, -1.0, 2.0]))


# -- node and ctx ---------------------------------------------------------------------

class Scale(Function):
    @staticmethod
    def forward(ctx, x, k):
        ctx.k = k
        return x * k

    @staticmethod
    def backward(ctx, grad):
        return grad * ctx.k, None


def test_node_name_next_functions_needs_input_grad():
    x = _r([1.0, 2.0])
    y = Scale.apply(x, 3.0)
    assert y.grad_fn.name() == "ScaleBackward"
    assert type(y.grad_fn).__name__ == "ScaleBackward"
    assert y.grad_fn.needs_input_grad == (True, False)
    assert len(y.grad_fn.next_functions) == 1
    assert y.grad_fn.next_functions[0][0].name() == "torch::autograd::AccumulateGrad"
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [3.0, 3.0])


def test_needs_input_grad_per_tensor():
    seen = []

    class F(Function):
        @staticmethod
        def forward(ctx, a, b):
            seen.append(ctx.needs_input_grad)
            return a * b

        @staticmethod
        def backward(ctx, grad):
            return (grad if ctx.needs_input_grad[0] else None,
                    grad if ctx.needs_input_grad[1] else None)

    a, b = _r([1.0]), _r([2.0], requires_grad=False)
    y = F.apply(a, b)
    assert seen == [(True, False)]
    assert y.grad_fn.next_functions[1] == (None, 0)
    y.sum().backward()
    assert a.grad is not None and b.grad is None


def test_no_grad_and_no_input_requiring_grad_give_no_node():
    x = _r([1.0])
    with wgrad.no_grad():
        assert Scale.apply(x, 2.0).grad_fn is None
    y = Scale.apply(_r([1.0], requires_grad=False), 2.0)
    assert y.grad_fn is None and not y.requires_grad


def test_forward_runs_without_grad_mode():
    modes = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            modes.append(wgrad.is_grad_enabled())
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    F.apply(_r([1.0]))
    assert modes == [False]


def test_setup_context_and_default_args():
    class F(Function):
        @staticmethod
        def forward(x, k=3.0):
            return x * k

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.k = inputs[1]
            ctx.save_for_backward(inputs[0], output)

        @staticmethod
        def backward(ctx, grad):
            x, out = ctx.saved_tensors
            assert out.grad_fn is not None
            return grad * ctx.k, None

    x = _r([1.0, 2.0])
    (g,) = wgrad.autograd.grad(F.apply(x).sum(), x)
    np.testing.assert_allclose(np.asarray(g), [3.0, 3.0])
    (g,) = wgrad.autograd.grad(F.apply(x, k=5.0).sum(), x)
    np.testing.assert_allclose(np.asarray(g), [5.0, 5.0])


def test_kwargs_bind_to_positions():
    x = _r([1.0, 2.0])
    y = Scale.apply(x, k=4.0)
    (g,) = wgrad.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(np.asarray(g), [4.0, 4.0])


def test_non_tensor_outputs_and_inputs():
    class F(Function):
        @staticmethod
        def forward(ctx, x, name):
            return x * 2, name + "!", 7

        @staticmethod
        def backward(ctx, ga, gb, gc):
            assert gb is None and gc is None
            return ga * 2, None

    x = _r([1.0])
    a, b, c = F.apply(x, "hi")
    assert b == "hi!" and c == 7
    assert a.grad_fn.num_outputs == 3
    a.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [2.0])


def test_save_for_backward_and_saved_tensors():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            y = x * x
            ctx.save_for_backward(x, y, None)
            return y

        @staticmethod
        def backward(ctx, grad):
            x, y, none = ctx.saved_tensors
            assert none is None
            assert y.grad_fn is ctx
            return grad * 2 * x

    x = _r([1.0, 3.0])
    y = F.apply(x)
    assert y.grad_fn.saved_tensors[0] is x
    assert len(y.grad_fn._raw_saved_tensors) == 3
    y.sum().backward(retain_graph=True)
    np.testing.assert_allclose(np.asarray(x.grad), [2.0, 6.0])
    y.sum().backward()
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second"):
        y.grad_fn.saved_tensors
    with pytest.raises(TypeError, match="save_for_backward can only save variables, but "
                                        "argument 1 is of type int"):
        class G(Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 1

            @staticmethod
            def backward(ctx, grad):
                return grad
        G.apply(x)


def test_saved_tensor_version_check():
    x = _r([1.0, 2.0])
    a = x * 1
    y = Exp.apply(a)
    b = x * 1
    y2 = CMul.apply(b, x)
    with wgrad.no_grad():
        b.mul_(2)
    with pytest.raises(RuntimeError, match="modified by an inplace operation.*is at version 1; "
                                           "expected version 0"):
        y2.sum().backward()
    y.sum().backward()  # an untouched saved output is fine


def test_saved_tensors_hooks_apply():
    packed = []
    with wgrad.autograd.graph.saved_tensors_hooks(lambda t: (packed.append(1), t)[1],
                                                  lambda t: t):
        x = _r([1.0, 2.0])
        y = CMul.apply(x, x)
    assert len(packed) == 2
    (g,) = wgrad.autograd.grad(y.sum(), x)
    np.testing.assert_allclose(np.asarray(g), [2.0, 4.0])


def test_mark_dirty():
    class AddOne(Function):
        @staticmethod
        def forward(ctx, x):
            x.add_(1)
            ctx.mark_dirty(x)
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad

    x = _r([1.0, 2.0])
    a = x * 2
    v0 = a._version
    b = AddOne.apply(a)
    assert b is a and a.grad_fn.name() == "AddOneBackward" and a._version == v0 + 1
    np.testing.assert_allclose(np.asarray(a.detach()), [3.0, 5.0])
    (b * b).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [12.0, 20.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used "
                                           "in an in-place operation."):
        AddOne.apply(_r([1.0]))

    class Forgot(Function):
        @staticmethod
        def forward(ctx, x, y):
            ctx.mark_dirty(x)
            return y * 2

        @staticmethod
        def backward(ctx, grad):
            return None, grad * 2

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                                           "method were not returned as output"):
        Forgot.apply(x * 1, x)


def test_returned_input_is_a_new_view():
    class Id(Function):
        @staticmethod
        def forward(ctx, x):
            return x

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    x = _r([1.0])
    y = Id.apply(x)
    assert y is not x and y._base is x and y._version == x._version
    assert y.grad_fn.name() == "IdBackward" and x.grad_fn is None
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [3.0])


def test_mark_non_differentiable_and_materialize():
    got = []

    class F(Function):
        @staticmethod
        def forward(ctx, x):
            idx = x.argmax()
            ctx.mark_non_differentiable(idx)
            return x * 2, idx, x * 3

        @staticmethod
        def backward(ctx, ga, gidx, gc):
            got.append((ga, gidx, gc))
            return ga * 2

    x = _r([1.0, 5.0, 2.0])
    a, idx, c = F.apply(x)
    assert not idx.requires_grad and idx.grad_fn is None
    a.sum().backward()
    ga, gidx, gc = got[0]
    np.testing.assert_array_equal(np.asarray(gidx), 0)
    assert gidx.dtype == idx.dtype
    np.testing.assert_array_equal(np.asarray(gc), [0.0, 0.0, 0.0])

    class G(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.set_materialize_grads(False)
            return x * 2, x * 3

        @staticmethod
        def backward(ctx, ga, gb):
            got.append((ga, gb))
            return ga * 2 if gb is None else ga * 2 + gb * 3

    a, b = G.apply(x)
    a.sum().backward()
    assert got[-1][1] is None


def test_wrong_number_of_gradients():
    class TooFew(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad

    class TooMany(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, None, grad

    class ExtraNone(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad * k_, None, None

    k_ = 2.0
    x = _r([1.0, 2.0])
    with pytest.raises(RuntimeError, match=r"function TooFewBackward returned an incorrect "
                                           r"number of gradients \(expected 2, got 1\)"):
        TooFew.apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"function TooManyBackward returned an incorrect "
                                           r"number of gradients \(expected 2, got 3\)"):
        TooMany.apply(x, 2.0).sum().backward()
    ExtraNone.apply(x, 2.0).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [2.0, 2.0])


def test_gradient_for_non_tensor_and_wrong_shape_and_type():
    class NonNone(Function):
        @staticmethod
        def forward(ctx, x, k):
            return x * k

        @staticmethod
        def backward(ctx, grad):
            return grad, grad

    class BadShape(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return wgrad.ones(5, dtype=F64)

    class BadType(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return 3.0

    x = _r([1.0, 2.0, 3.0])
    with pytest.raises(RuntimeError, match="function NonNoneBackward returned a gradient "
                                           "different than None at position 2, but the "
                                           "corresponding forward input was not a Variable"):
        NonNone.apply(x, 2.0).sum().backward()
    with pytest.raises(RuntimeError, match=r"Function BadShapeBackward returned an invalid "
                                           r"gradient at index 0 - got \[5\] but expected "
                                           r"shape compatible with \[3\]"):
        BadShape.apply(x).sum().backward()
    with pytest.raises(RuntimeError, match=r"expected Variable or None \(got float\)"):
        BadType.apply(x).sum().backward()


def test_broadcastable_gradient_is_reduced_and_cast():
    class F(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return wgrad.ones(4, 3, dtype=C128) * (1 + 1j)

    x = _r([1.0, 2.0, 3.0])
    F.apply(x).sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), [4.0, 4.0, 4.0])
    assert x.grad.dtype == F64


def test_legacy_call_and_missing_methods():
    with pytest.warns(DeprecationWarning, match="should not be instantiated. Methods on "
                      "autograd functions are all static"):
        f = Scale()  # torch warns, and still returns an instance
    assert isinstance(f, Scale)
    with pytest.raises(RuntimeError, match="Legacy autograd function with non-static forward"):
        f(_r([1.0]), 2.0)

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, x):
            return x * 1

    with pytest.raises(NotImplementedError, match="You must implement either the backward"):
        NoBackward.apply(_r([1.0])).sum().backward()


# -- double backward ------------------------------------------------------------------

def test_double_backward_through_custom_function():
    class Cube(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, grad):
            x, = ctx.saved_tensors
            return grad * 3 * x ** 2

    x = _r([1.0, 2.0])
    (g,) = wgrad.autograd.grad(Cube.apply(x).sum(), x, create_graph=True)
    assert g.requires_grad
    (gg,) = wgrad.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(np.asarray(gg), [6.0, 12.0])


def test_once_differentiable():
    class Sq(Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        @once_differentiable
        def backward(ctx, grad):
            assert not wgrad.is_grad_enabled()
            x, = ctx.saved_tensors
            return grad * 2 * x

    x = _r([1.0, 2.0])
    (g,) = wgrad.autograd.grad(Sq.apply(x).sum(), x)
    np.testing.assert_allclose(np.asarray(g), [2.0, 4.0])
    # grad_outputs that do not require grad: a plain (non-differentiable) result
    (g,) = wgrad.autograd.grad(Sq.apply(x).sum(), x, create_graph=True)
    assert not g.requires_grad
    v = wgrad.ones(2, dtype=F64, requires_grad=True)
    (g,) = wgrad.autograd.grad(Sq.apply(x), x, v, create_graph=True)
    assert g.requires_grad and g.grad_fn.name() == "Error"
    with pytest.raises(RuntimeError, match="trying to differentiate twice a function that "
                                           "was marked with @once_differentiable"):
        g.sum().backward()


def test_graph_is_freed():
    x = _r([1.0, 2.0])
    y = Exp.apply(x * 1)
    ref = weakref.ref(y.grad_fn)
    y.sum().backward()
    del y
    gc.collect()
    assert ref() is None


def test_function_marking_a_view_dirty_rebases_the_base_as_torch():
    """A custom Function writing a view of a non-leaf: the base's history becomes
    CopySlices over the Function's node (gradients compared with torch)."""
    torch = pytest.importorskip("torch")
    res = []
    for lib in (wgrad, torch):
        class PyAdd(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                ctx.mark_dirty(x)
                x.add_(y * 2)
                return x

            @staticmethod
            def backward(ctx, grad):
                return grad, grad * 2

        a = lib.tensor(np.arange(16.0).reshape(4, 4), requires_grad=True)
        b = lib.tensor([[1.0, -1.0], [2.0, 0.5]], requires_grad=True)
        x = a.clone()
        PyAdd.apply(x.narrow(1, 2, 2).narrow(0, 1, 2), b)
        (x * lib.arange(16.0).reshape(4, 4)).sum().backward()
        res.append((type(x.grad_fn).__name__, a.grad.numpy(), b.grad.numpy()))
    assert res[0][0] == res[1][0] == "CopySlices"
    np.testing.assert_array_equal(res[0][1], res[1][1])
    np.testing.assert_array_equal(res[0][2], res[1][2])
