"""Where the time of the eager chain goes: forward and backward per op, the bare cost of
one XLA dispatch, and the share of Python's cyclic garbage collector.

    python bench/profile_chain.py
"""
import gc
import time

import jax
import jax.numpy as jnp

import wgrad

N_OPS = 4 * 300 + 3


def main(reps=10):
    x = wgrad.randn(16, dtype=wgrad.complex64, requires_grad=True)
    c = wgrad.randn(16, dtype=wgrad.complex64)

    def fwd():
        y = x
        for _ in range(300):
            y = (y.sin() * c) * 0.5 + c
        return (y.abs() ** 2).sum()

    for _ in range(3):
        fwd().backward()
    for label, disable in (("gc enabled", False), ("gc disabled", True)):
        (gc.disable if disable else gc.enable)()
        tf = tb = 0.0
        for _ in range(reps):
            t0 = time.perf_counter()
            loss = fwd()
            t1 = time.perf_counter()
            loss.backward()
            tf += t1 - t0
            tb += time.perf_counter() - t1
        print(f"{label}: forward {tf / reps / N_OPS * 1e6:.1f} us/op, "
              f"backward {tb / reps / N_OPS * 1e6:.1f} us/node")
    gc.enable()
    f = jax.jit(jnp.sin)
    a = x._data
    f(a)
    t0 = time.perf_counter()
    for _ in range(20000):
        f(a)
    print(f"one dispatch of a jitted kernel: {(time.perf_counter() - t0) / 20000 * 1e6:.1f} us")


if __name__ == "__main__":
    main()
