"""wgrad.compile vs jax.jit(jax.grad) on one complex phase-retrieval step, in one run.

    python bench/bench_compile.py [--n 128] [--reps 200] [--dtype complex64]

The step: F = fft2(x); loss = sum((|F|^2 - y)^2) / n^4; the gradient; x <- x - lr * grad
(PyTorch's convention on the wgrad side, x - lr * conj(jax.grad) on the JAX side: the same
update). Both sides donate x. Prints a markdown table of median milliseconds per step
(after warm-up) and the ratio wgrad.compile / jax.jit(jax.grad); also eager wgrad.
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import wgrad

__all__ = ["main"]


def _fft2():
    fft = getattr(wgrad, "fft", None)
    if fft is not None and hasattr(fft, "fft2"):
        return fft.fft2
    return wgrad.jax_function(jnp.fft.fft2)


def _problem(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    obj = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype)
    y = (np.abs(np.fft.fft2(obj)) ** 2).astype(np.dtype(dtype).type(0).real.dtype)
    x0 = obj + 0.3 * (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    return x0.astype(dtype), y


def _wgrad_step(n, x0, y, lr):
    fft2 = _fft2()
    x = wgrad.from_numpy(x0).requires_grad_()
    yt = wgrad.from_numpy(y)
    scale = 1.0 / n ** 4

    def step(y):
        loss = ((fft2(x).abs() ** 2 - y) ** 2).sum() * scale
        loss.backward()
        with wgrad.no_grad():
            x.data = x.data - lr * x.grad
        x.grad = None
        return loss
    return x, yt, step


def _jax_step(n, lr):
    scale = 1.0 / n ** 4

    def loss_fn(x, y):
        return jnp.sum((jnp.abs(jnp.fft.fft2(x)) ** 2 - y) ** 2) * scale

    @_jit_donating_x
    def step(x, y):
        loss, g = jax.value_and_grad(loss_fn)(x, y)
        return x - lr * jnp.conj(g), loss
    return step


def _jit_donating_x(f):
    return jax.jit(f, donate_argnums=(0,))


def _median_ms(fn, sync, reps):
    fn()
    sync()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=128)
    p.add_argument("--reps", type=int, default=200)
    p.add_argument("--dtype", default="complex64")
    p.add_argument("--lr", type=float, default=1e-3)
    a = p.parse_args(argv)
    x0, y = _problem(a.n, a.dtype)

    xw, yw, wstep = _wgrad_step(a.n, x0, y, a.lr)
    compiled = wgrad.compile(wstep)
    t_compile = _median_ms(lambda: compiled(yw), lambda: xw.jax().block_until_ready(), a.reps)

    state = {"x": jnp.asarray(x0)}
    yj = jnp.asarray(y)
    jstep = _jax_step(a.n, a.lr)

    def run_jax():
        state["x"], _ = jstep(state["x"], yj)
    t_jax = _median_ms(run_jax, lambda: state["x"].block_until_ready(), a.reps)

    xe, ye, estep = _wgrad_step(a.n, x0, y, a.lr)
    t_eager = _median_ms(lambda: estep(ye), lambda: xe.jax().block_until_ready(),
                         max(10, a.reps // 10))

    # the same math: after the same number of steps from the same start, the same x
    xa, ya, sa = _wgrad_step(a.n, x0, y, a.lr)
    ca = wgrad.compile(sa)
    xb = jnp.asarray(x0)
    for _ in range(5):
        ca(ya)
        xb, _ = jstep(xb, yj)
    err = float(np.max(np.abs(np.asarray(xa.jax()) - np.asarray(xb))) /
                np.max(np.abs(np.asarray(xb))))

    dev = jax.devices()[0]
    print(f"phase retrieval, fft2 {a.n}x{a.n} {a.dtype}, {a.reps} steps, "
          f"device {dev.platform} ({dev.device_kind}), relative difference after 5 steps "
          f"{err:.1e}\n")
    print("| implementation | median ms / step | ratio to jax.jit(jax.grad) |")
    print("|---|---:|---:|")
    for name, t in (("jax.jit(jax.grad)", t_jax), ("wgrad.compile", t_compile),
                    ("wgrad eager", t_eager)):
        print(f"| {name} | {t:.3f} | {t / t_jax:.2f}x |")


if __name__ == "__main__":
    main()
