"""Property-test the gradient of a custom complex autograd.Function with hypothesis.

``s = z * |z|`` is complex and not holomorphic, so its backward needs both Wirtinger
derivatives: with ``grad = dL/ds*`` (PyTorch's convention),

    dL/dz* = conj(grad) * ds/dz* + grad * conj(ds/dz),   ds/dz = 3|z|/2,  ds/dz* = z^2/(2|z|)

hypothesis draws shapes and complex values; ``wgrad.testing.check_op`` checks each draw
with gradcheck and gradgradcheck (numerical Wirtinger Jacobians), JAX's identity
``backward(g) == conj(jax.vjp(f)(conj g))`` and graph hygiene. The same property then
catches a backward written in JAX's convention (the conjugate).

Run:  python examples/hypothesis_gradcheck.py [--quick]
(--quick: a few examples; otherwise 40 and a figure, hypothesis_gradcheck.png)
"""
import argparse

import jax.numpy as jnp
import numpy as np
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

import wgrad as torch
from wgrad.testing import check_op, shapes, tensors


class ZAbsZ(torch.autograd.Function):
    """s = z |z|, with its backward written by hand."""

    @staticmethod
    def forward(ctx, z):
        ctx.save_for_backward(z)
        return z * z.abs()

    @staticmethod
    def backward(ctx, grad):
        z, = ctx.saved_tensors
        r = z.abs()
        # both derivatives tend to 0 at z = 0; the where keeps 0/0 out of the picture
        safe = torch.where(r > 0, r, torch.ones_like(r))
        ds_dzc = torch.where(r > 0, z * z / (2 * safe), torch.zeros_like(z))
        return grad.conj() * ds_dzc + grad * (1.5 * r)


class ZAbsZJaxConvention(ZAbsZ):
    """The same formula conjugated, as a port of a JAX rule would have it: wrong here."""

    @staticmethod
    def backward(ctx, grad):
        return ZAbsZ.backward(ctx, grad).conj()


def prop(fn, n, shrink=True):
    phases = tuple(Phase) if shrink else (Phase.explicit, Phase.generate)
    @settings(max_examples=n, deadline=None, derandomize=True, database=None, phases=phases,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
    @given(shape=shapes(min_dims=1, max_dims=2, max_side=2 if n < 10 else 3), data=st.data())
    def test(shape, data):
        z = data.draw(tensors(np.complex128, shape, avoid=0.0))    # |z| has a kink at 0
        check_op(fn.apply, (z,), jfn=lambda z: z * jnp.abs(z), gradgrad=fn is ZAbsZ)
    return test


def main(quick):
    n = 3 if quick else 40
    prop(ZAbsZ, n)()
    print(f"property held on {n} hypothesis examples: gradcheck, gradgradcheck, "
          "JAX identity")
    try:
        prop(ZAbsZJaxConvention, n, shrink=False)()
        caught = False
    except Exception:       # hypothesis re-raises the failing check, shrunk
        caught = True
    print(f"a backward in JAX's convention is caught: {caught}")

    # one value to check by hand: L = |s|^2 = |z|^4; PyTorch's .grad of a real L is
    # dL/dx + i dL/dy = 2 dL/dz* = 4 |z|^2 z
    z = torch.tensor(1 + 2j, dtype=torch.complex128, requires_grad=True)
    (ZAbsZ.apply(z).abs() ** 2).backward()
    print(f"z = {complex(z.item())}: z.grad = {complex(z.grad.item()):.6g} "
          f"(4|z|^2 z = {4 * abs(1 + 2j) ** 2 * (1 + 2j):.6g})")

    if not quick:
        from wgrad.viz import complex_image      # matplotlib: pip install wgrad[viz]
        import matplotlib.pyplot as plt
        x = torch.linspace(-2, 2, 201, dtype=torch.float64)
        zz = torch.complex(x[None, :], x[:, None]).requires_grad_()
        s = ZAbsZ.apply(zz)
        ((s - 1).abs() ** 2).sum().backward()
        fig, axes = plt.subplots(1, 2, figsize=(9, 4.5))
        ext = (-2, 2, -2, 2)
        complex_image(s, ax=axes[0], extent=ext, origin="lower", title="s = z|z|")
        complex_image(zz.grad, ax=axes[1], extent=ext, origin="lower", wheel=True,
                      title="dL/dz* for L = |s - 1|^2")
        fig.tight_layout()
        fig.savefig("hypothesis_gradcheck.png", dpi=100)
        print("saved hypothesis_gradcheck.png")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="a few examples, no figure")
    main(p.parse_args().quick)
