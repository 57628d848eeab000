"""scatter_reduce / index_reduce with reduce='prod' against torch (NOTE [Scatter product
gradient]): values and gradients with zeros in self and src (none, one, two per slot),
include_self both ways, gradcheck/gradgradcheck, and torch's double-backward error."""
import numpy as np
import pytest

import wgrad
from wgrad.autograd import gradcheck, gradgradcheck

torch = pytest.importorskip("torch")

SELF = np.array([[1.0, 2.0, 0.0], [4.0, -1.5, 3.0]])
SRC = np.array([[0.0, 3.0, 5.0, 0.0], [0.0, 2.0, 0.5, -2.0]])
IDX = np.array([[0, 1, 1, 2], [2, 2, 0, 1]])


@pytest.mark.parametrize("include_self", [True, False])
@pytest.mark.parametrize("fn", ["scatter_reduce", "index_reduce"])
def test_prod_matches_torch(fn, include_self):
    res = []
    for lib in (torch, wgrad):
        x = lib.tensor(SELF, requires_grad=True)
        s = lib.tensor(SRC, requires_grad=True)
        if fn == "scatter_reduce":
            out = x.scatter_reduce(1, lib.tensor(IDX), s, "prod", include_self=include_self)
        else:
            out = x.index_reduce(1, lib.tensor([0, 1, 1, 2]), s, "prod",
                                 include_self=include_self)
        g = lib.tensor(np.arange(1.0, 7.0).reshape(2, 3))
        gx, gs = lib.autograd.grad(out, (x, s), g)
        res.append([out.detach().numpy(), gx.numpy(), gs.numpy()])
    for a, b in zip(*res):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_prod_gradchecks_and_double_backward_error():
    x = wgrad.tensor([1.5, -0.5, 2.0], dtype=wgrad.float64, requires_grad=True)
    s = wgrad.tensor([0.5, 0.0, 2.0, -1.0], dtype=wgrad.float64, requires_grad=True)
    idx = wgrad.tensor([0, 1, 1, 2])
    for inc in (True, False):
        f = lambda a, b: a.scatter_reduce(0, idx, b, "prod", include_self=inc)  # noqa: E731
        assert gradcheck(f, (x, s)) and gradgradcheck(f, (x, s))
    two = wgrad.tensor([0.0, 0.0], dtype=wgrad.float64, requires_grad=True)
    one = wgrad.tensor([1.0], dtype=wgrad.float64, requires_grad=True)
    for name, what in (("scatter_reduce", "src"), ("index_reduce", "source")):
        fn = getattr(wgrad, name)
        assert gradcheck(fn, (one, 0, wgrad.tensor([0, 0]), two, "prod"))
        with pytest.raises(RuntimeError, match=f"{name}\\(\\): Double backward is unsupported "
                                               f"for {what} when >1 zeros"):
            gradgradcheck(fn, (one, 0, wgrad.tensor([0, 0]), two, "prod"))


def test_complex_prod_values_and_no_autograd_as_torch():
    for lib in (torch, wgrad):
        x = lib.ones(3, dtype=lib.complex64)
        s = lib.tensor([2j, 1 + 1j], dtype=lib.complex64)
        out = x.scatter_reduce(0, lib.tensor([0, 0]), s, "prod")
        np.testing.assert_allclose(out.numpy(), [2j * (1 + 1j), 1, 1])
        with pytest.raises(RuntimeError, match="does not support automatic differentiation "
                                               "for outputs with complex dtype"):
            x.scatter_reduce(0, lib.tensor([0, 0]), s.requires_grad_(), "prod")
        for red in ("prod", "mean"):  # index_reduce takes no complex input at all
            with pytest.raises(NotImplementedError, match="\"index_func_\" not implemented "
                                                          "for 'ComplexFloat'"):
                x.index_reduce(0, lib.tensor([0, 0]), s.detach(), red)


def test_prod_gradient_equals_jax_vjp_without_zeros():
    """Away from zeros the product's gradient is the plain derivative: JAX's vjp of the
    same scatter-multiply (real inputs, so conj(vjp(conj g)) is vjp(g))."""
    import jax
    import jax.numpy as jnp
    x0, s0 = SELF + 5.0, SRC + 5.0  # no zeros
    g0 = np.arange(1.0, 7.0).reshape(2, 3)
    hit = IDX[:, :, None] == np.arange(3)  # [row, j, slot]

    def f(a, b):  # the scatter-product written densely (JAX's scatter_mul has no gradient
        return a * jnp.prod(jnp.where(hit, b[:, :, None], 1.0), axis=1)  # for repeats)
    _, vjp = jax.vjp(f, jnp.asarray(x0), jnp.asarray(s0))
    want = vjp(jnp.asarray(g0))
    x = wgrad.tensor(x0, requires_grad=True)
    s = wgrad.tensor(s0, requires_grad=True)
    got = wgrad.autograd.grad(x.scatter_reduce(1, wgrad.tensor(IDX), s, "prod"), (x, s),
                              wgrad.tensor(g0))
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.numpy(), np.asarray(b), rtol=1e-12)
