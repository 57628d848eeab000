"""wgrad.compile vs jax.jit(jax.grad) on one complex phase-retrieval step, in one run.

    python bench/bench_compile.py [--n 128] [--rounds 40] [--chunk 25] [--dtype complex64]

The step: F = wgrad.fft.fft2(x); loss = sum((|F|^2 - y)^2) / n^4; the gradient;
x <- x - lr * grad (PyTorch's convention on the wgrad side, x - lr * conj(jax.grad) on the
JAX side: the same update). Both sides donate x. Each step is timed to completion
(block_until_ready), and again pipelined (one sync per chunk). The compiled sides run
interleaved, ``--chunk`` steps each per round, so that load on a shared machine hits
them alike. Prints markdown tables of median milliseconds per step and the ratio to
jax.jit(jax.grad), per trial; also eager wgrad (measured once, fewer steps). The row
"its XLA program alone" calls wgrad.compile's jitted function directly: its difference
to jax.jit(jax.grad) is the programs' (wgrad's formulas vs JAX's), and the difference
between it and wgrad.compile is wgrad's per-call work.
"""
import argparse
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import wgrad
import wgrad.fft

__all__ = ["main"]


def _problem(n, dtype, seed=0):
    rng = np.random.default_rng(seed)
    obj = (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n))).astype(dtype)
    y = (np.abs(np.fft.fft2(obj)) ** 2).astype(np.dtype(dtype).type(0).real.dtype)
    x0 = obj + 0.3 * (rng.standard_normal((n, n)) + 1j * rng.standard_normal((n, n)))
    return x0.astype(dtype), y


def _wgrad_step(n, x0, y, lr):
    fft2 = wgrad.fft.fft2
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


def _times_ms(fn, sync, reps):
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - t) * 1e3)
    return times


def _interleaved(impls, rounds, chunk, pipelined=False):
    """Median ms per step of each (fn, sync) in ``impls``, run in alternating chunks.
    Each step is synced, or with ``pipelined`` only the chunk (as in a training loop
    that does not wait: dispatch then overlaps the previous step's computation)."""
    times = {name: [] for name in impls}
    for _ in range(rounds):
        for name, (fn, sync) in impls.items():
            fn()  # the first step of a chunk also pays for switching: not timed
            sync()
            if pipelined:
                t = time.perf_counter()
                for _ in range(chunk):
                    fn()
                sync()
                times[name].append((time.perf_counter() - t) * 1e3 / chunk)
            else:
                times[name] += _times_ms(fn, sync, chunk)
    return {name: statistics.median(t) for name, t in times.items()}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=128)
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--chunk", type=int, default=25)
    p.add_argument("--trials", type=int, default=3)
    p.add_argument("--dtype", default="complex64")
    p.add_argument("--lr", type=float, default=1e-3)
    a = p.parse_args(argv)
    x0, y = _problem(a.n, a.dtype)

    xw, yw, wstep = _wgrad_step(a.n, x0, y, a.lr)
    compiled = wgrad.compile(wstep)
    state = {"x": jnp.asarray(x0)}
    yj = jnp.asarray(y)
    jstep = _jax_step(a.n, a.lr)

    def run_jax():
        state["x"], _ = jstep(state["x"], yj)

    # wgrad.compile's own XLA program called directly, without its per-call work (finding
    # tensors, donation checks, writing back): separates that work from the difference
    # between the two programs (wgrad's formulas vs JAX's vjps)
    xp, yp, pstep = _wgrad_step(a.n, x0, y, a.lr)
    cp = wgrad.compile(pstep)
    cp(yp)
    (program,) = cp._cache.values()  # inputs: captured x, then the argument y

    def run_program():
        xp._data = program(xp._data, yp._data)[1][0]
    impls = {"jax.jit(jax.grad)": (run_jax, lambda: state["x"].block_until_ready()),
             "wgrad.compile": (lambda: compiled(yw), lambda: xw.jax().block_until_ready()),
             "its XLA program alone": (run_program, lambda: xp.jax().block_until_ready())}
    for fn, sync in impls.values():  # compile all
        fn()
        sync()
    trials = [_interleaved(impls, a.rounds, a.chunk) for _ in range(a.trials)]
    piped = [_interleaved(impls, a.rounds, a.chunk, pipelined=True) for _ in range(a.trials)]

    xe, ye, estep = _wgrad_step(a.n, x0, y, a.lr)
    estep(ye)
    t_eager = statistics.median(_times_ms(lambda: estep(ye),
                                          lambda: xe.jax().block_until_ready(), 30))

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
    steps = a.rounds * a.chunk
    print(f"phase retrieval, fft2 {a.n}x{a.n} {a.dtype}, device {dev.platform} "
          f"({dev.device_kind}); {a.trials} trials of {steps} interleaved steps per side; "
          f"relative difference after 5 steps {err:.1e}\n")
    base = "jax.jit(jax.grad)"
    for title, rows in (("each step synced (block_until_ready)", trials),
                        (f"pipelined ({a.chunk} steps, then one sync)", piped)):
        print(f"{title}:\n\n| implementation | " + " | ".join(
            f"trial {i + 1} ms (ratio)" for i in range(a.trials)) + " |")
        print("|---|" + "---:|" * a.trials)
        for name in impls:
            print(f"| {name} | " + " | ".join(f"{t[name]:.3f} ({t[name] / t[base]:.2f}x)"
                                              for t in rows) + " |")
        print()
    t_jax = statistics.median(t[base] for t in trials)
    print(f"wgrad eager (not interleaved, 30 steps): {t_eager:.3f} ms / step, "
          f"{t_eager / t_jax:.1f}x jax.jit(jax.grad)")


if __name__ == "__main__":
    main()
