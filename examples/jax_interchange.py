"""JAX inside a wgrad model, and the wgrad model inside ``jax.jit``.

A phase mask ``phi`` (real) and a complex amplitude ``a`` shape a field
``u = a * exp(i phi)``; free-space propagation is a JAX function (angular-spectrum
method: FFT, multiply by a transfer function, inverse FFT) lifted into wgrad with
``wgrad.jax_function``. The loss compares the propagated intensity with a target.

1. wgrad computes the loss and its gradients (PyTorch's convention).
2. ``wgrad.to_jax`` turns the whole wgrad loss into a JAX function; ``jax.jit`` of its
   ``jax.grad`` gives the same real gradient, and for the complex ``a`` the conjugate
   (JAX's convention), checked below.
3. The jitted gradient drives a short gradient descent on ``phi``.

Run:  python examples/jax_interchange.py [--quick]
(--quick: fewer steps, no figure; otherwise jax_interchange.png and the loss's backward
graph, jax_interchange_graph.svg)
"""
import argparse

import jax
import jax.numpy as jnp
import numpy as np

import wgrad as torch
from wgrad.viz import backward_graph

try:
    from tqdm import trange
except ImportError:     # tqdm is optional
    trange = range

N = 32          # grid points per side
DX = 1.0        # sample spacing (wavelengths)
Z = 40.0        # propagation distance (wavelengths)


def propagate(u):
    """Angular-spectrum propagation over Z (a pure JAX function)."""
    f = jnp.fft.fftfreq(N, d=DX)
    fx, fy = jnp.meshgrid(f, f, indexing="xy")
    kz = 2 * jnp.pi * jnp.sqrt(jnp.maximum(1.0 - fx ** 2 - fy ** 2, 0.0) + 0j)
    return jnp.fft.ifft2(jnp.fft.fft2(u) * jnp.exp(1j * kz * Z))


propagate_op = torch.jax_function(propagate)


def target_intensity():
    x = np.arange(N) - N / 2
    xx, yy = np.meshgrid(x, x)
    spots = np.exp(-((xx - 6) ** 2 + yy ** 2) / 8) + np.exp(-((xx + 6) ** 2 + yy ** 2) / 8)
    return torch.tensor(spots / spots.sum() * N * N, dtype=torch.float64)


TARGET = target_intensity()


def loss_fn(phi, a):
    u = a * torch.exp(1j * phi)
    intensity = propagate_op(u).abs() ** 2
    return ((intensity - TARGET) ** 2).mean()


def main(quick):
    gen = np.random.default_rng(0)
    phi = torch.tensor(gen.uniform(0, 2 * np.pi, (N, N)), requires_grad=True)
    a = torch.tensor(1.0 + 0.2j, dtype=torch.complex128, requires_grad=True)

    # 1. wgrad: a JAX function inside the model, PyTorch's gradients
    loss = loss_fn(phi, a)
    loss.backward()
    print(f"loss (wgrad eager)              = {loss.item():.10f}")

    # 2. the whole wgrad loss as a JAX function, differentiated and jitted by JAX
    jloss = torch.to_jax(loss_fn)
    jgrad = jax.jit(jax.value_and_grad(jloss, argnums=(0, 1)))
    phi_j, a_j = jnp.asarray(phi.detach().numpy()), jnp.asarray(a.detach().numpy())
    value, (gphi, ga) = jgrad(phi_j, a_j)
    print(f"loss (jax.jit of wgrad.to_jax)  = {float(value):.10f}")
    print(f"max |dL/dphi wgrad - jax|       = "
          f"{np.abs(np.asarray(gphi) - phi.grad.numpy()).max():.2e}")
    print(f"complex a: jax.grad == conj(wgrad a.grad): "
          f"{np.allclose(np.asarray(ga), np.conj(a.grad.numpy()), rtol=1e-10, atol=0)}")

    # 3. gradient descent on phi with the jitted gradient
    steps, lr = (20, 20.0) if quick else (300, 20.0)
    first = float(value)
    for _ in trange(steps):
        value, (gphi, _) = jgrad(phi_j, a_j)
        phi_j = phi_j - lr * gphi
    final = float(jloss(phi_j, a_j))
    print(f"gradient descent, {steps} jitted steps: loss {first:.6f} -> {final:.6f}")

    if not quick:
        graph = backward_graph(loss, params={"phi": phi, "a": a})
        graph.save("jax_interchange_graph.svg")          # no Graphviz or matplotlib needed
        import matplotlib.pyplot as plt      # pip install wgrad[viz]
        inten = np.abs(np.asarray(propagate(a_j * jnp.exp(1j * phi_j)))) ** 2
        fig, axes = plt.subplots(1, 3, figsize=(10, 3.4))
        for ax, img, title in zip(axes, (np.asarray(phi_j) % (2 * np.pi), inten,
                                         TARGET.numpy()),
                                  ("phase mask", "propagated intensity", "target")):
            ax.imshow(img, cmap="twilight" if title == "phase mask" else "magma")
            ax.set_title(title)
            ax.axis("off")
        fig.tight_layout()
        fig.savefig("jax_interchange.png", dpi=100)
        print("saved jax_interchange.png, jax_interchange_graph.svg")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--quick", action="store_true", help="fewer steps, no figure")
    main(p.parse_args().quick)
