"""``wgrad.cuda``: torch.cuda's device queries over JAX's GPU devices.

JAX owns the devices, streams and the allocator, so this module reports what JAX knows:
the GPUs JAX sees (``jax.devices("gpu")``), their memory statistics (``memory_stats()``)
and names. Without a GPU, queries that only count return 0 or False (``is_available``,
``device_count``, ``memory_allocated``...), as torch's; those that need a device
(``current_device``, ``get_device_name``, ``synchronize``, ``set_device``) raise
RuntimeError, as a CUDA build of torch does on a machine without a GPU (a CPU-only build
of torch raises AssertionError "Torch not compiled with CUDA enabled" instead).
"""
import functools
import sys

import jax
import jax.numpy as jnp

from . import _cuda_amp as amp  # torch.cuda.amp (deprecated aliases of wgrad.amp's)
from . import _device as _dev_mod
from ._creation import manual_seed as _manual_seed
from ._device import device as _device

__all__ = ["is_available", "device_count", "current_device", "set_device", "synchronize",
           "manual_seed", "manual_seed_all", "memory_allocated", "max_memory_allocated",
           "memory_reserved", "max_memory_reserved", "memory_stats", "empty_cache",
           "get_device_name", "is_initialized", "init", "amp"]
sys.modules[__name__ + ".amp"] = amp  # ``from wgrad.cuda.amp import autocast``


def _gpus():
    try:
        return jax.devices("gpu")
    except RuntimeError:
        return []


def _no_gpu():
    return RuntimeError(f"wgrad: no cuda device is available to JAX "
                        f"(jax.devices() = {jax.devices()})")


def is_available():
    """Whether JAX sees a CUDA GPU.

    Example
    -------
    >>> import wgrad
    >>> wgrad.cuda.is_available() == (wgrad.cuda.device_count() > 0)
    True
    """
    return bool(_gpus())


def is_initialized():
    """True once a GPU is available (JAX initialises its backends on first use)."""
    return is_available()


def init():
    """Initialise JAX's GPU backend (a no-op when it already is)."""
    _gpus()


def device_count():
    """The number of GPUs JAX sees (0 without one)."""
    return len(_gpus())


def _index(device):
    """The GPU index ``device`` names (None: the current one); raises without a GPU."""
    gpus = _gpus()
    if not gpus:
        raise _no_gpu()
    if device is None:
        return _dev_mod.current_index[0]
    if isinstance(device, int):
        return device
    d = _device(device)
    if d.type != "cuda":
        raise ValueError(f"Expected a cuda device, but got: {d}")
    return _dev_mod.current_index[0] if d.index is None else d.index


def _jax_gpu(device):
    i = _index(device)
    gpus = _gpus()
    if not 0 <= i < len(gpus):
        raise RuntimeError("CUDA error: invalid device ordinal")
    return gpus[i]


def current_device():
    """The index of the current GPU (``set_device``), 0 unless changed."""
    return _index(None)


def set_device(device):
    """Make ``device`` (an index, ``"cuda:1"`` or a ``wgrad.device``) the GPU that
    ``"cuda"`` without an index names; a negative index changes nothing, as torch."""
    i = _index(device)
    if i < 0:
        return
    _jax_gpu(i)
    _dev_mod.current_index[0] = i


@functools.lru_cache(maxsize=None)
def _marker(jdev):
    return jax.jit(lambda: jnp.zeros(()), out_shardings=jax.sharding.SingleDeviceSharding(jdev))


def synchronize(device=None):
    """Wait until the work queued on the GPU is done: a tiny program is queued behind it
    and waited for (JAX runs a device's programs in order)."""
    jax.effects_barrier()
    _marker(_jax_gpu(device))().block_until_ready()


def manual_seed(seed):
    """Seed the generator CUDA tensors draw from. wgrad draws every random tensor from one
    generator (on the host, then placed on its device), so with a GPU this is
    ``wgrad.manual_seed``; without one it does nothing, as torch."""
    if is_available():
        _manual_seed(seed)


def manual_seed_all(seed):
    """``manual_seed``: one generator serves all GPUs."""
    manual_seed(seed)


def memory_stats(device=None):
    """JAX's memory statistics of a GPU (``{}`` without one): ``bytes_in_use``,
    ``peak_bytes_in_use``, ``bytes_limit``, ``pool_bytes``... (names of XLA's allocator,
    not torch's)."""
    if not is_available():
        return {}
    return dict(_jax_gpu(device).memory_stats() or {})


def memory_allocated(device=None):
    """Bytes held by live arrays on a GPU (0 without one)."""
    return int(memory_stats(device).get("bytes_in_use", 0))


def max_memory_allocated(device=None):
    """The peak of ``memory_allocated`` since the process started (0 without a GPU)."""
    return int(memory_stats(device).get("peak_bytes_in_use", 0))


def memory_reserved(device=None):
    """Bytes JAX's allocator holds on a GPU (its pool; with preallocation, most of the
    GPU), 0 without one."""
    s = memory_stats(device)
    return int(max(s.get("pool_bytes", 0), s.get("bytes_reserved", 0),
                   s.get("bytes_in_use", 0)))


def max_memory_reserved(device=None):
    """The peak of ``memory_reserved`` (0 without a GPU)."""
    s = memory_stats(device)
    return int(max(s.get("peak_pool_bytes", 0), s.get("peak_bytes_reserved", 0),
                   s.get("peak_bytes_in_use", 0)))


def empty_cache():
    """Does nothing: JAX's allocator returns no cached blocks on request (set
    XLA_PYTHON_CLIENT_PREALLOCATE=false or XLA_PYTHON_CLIENT_ALLOCATOR=platform to let
    memory go back to the GPU)."""


def get_device_name(device=None):
    """The GPU's name as JAX reports it (``device_kind``, e.g. 'NVIDIA H100 80GB HBM3')."""
    return _jax_gpu(device).device_kind
