"""``wgrad.random``: torch.random's handles on the global generator (NOTE [Random
numbers]), and ``fork_rng``.

Example
-------
>>> with wgrad.random.fork_rng():
...     _ = wgrad.randn(3)  # draws here leave the global state as it was
"""
import contextlib

from ._creation import (Generator, default_generator, get_rng_state, initial_seed,
                        manual_seed, seed, set_rng_state)

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed",
           "manual_seed", "seed", "set_rng_state"]


@contextlib.contextmanager
def fork_rng(devices=None, enabled=True, _caller="fork_rng", _devices_kw="devices",
             device_type="cuda"):
    """Run the block with the global generator's state saved before and restored after
    (wgrad's one generator serves every device)."""
    if not enabled:
        yield
        return
    state = get_rng_state()
    try:
        yield
    finally:
        set_rng_state(state)
