"""Torch-style device names mapped onto JAX devices."""
import jax
from jax._src.config import transfer_guard_host_to_device as _guard

__all__ = ["device", "current_index", "default_jax_device", "several_devices"]

# wgrad.cuda.set_device: the CUDA device that "cuda" without an index names
current_index = [0]


class device:
    """``wgrad.device("cpu")``, ``device("cuda:1")``; "gpu" is an alias of "cuda"."""

    __slots__ = ("type", "index")

    def __init__(self, type, index=None):  # noqa: A002 - torch's argument name
        if isinstance(type, device):
            self.type, self.index = type.type, type.index
            return
        if isinstance(type, int):
            type, index = "cuda", type
        name = str(type)
        if ":" in name:
            name, idx = name.split(":", 1)
            if index is not None:
                raise RuntimeError("type (string) must not include an index because index "
                                   "was passed explicitly: " + str(type))
            index = int(idx)
        name = {"gpu": "cuda"}.get(name, name)
        if name not in ("cpu", "cuda", "tpu"):
            raise RuntimeError(f"Expected one of cpu, cuda, gpu, tpu device type at start of "
                               f"device string: {type}")
        self.type, self.index = name, index

    def __repr__(self):
        idx = "" if self.index is None else f", index={self.index}"
        return f"device(type='{self.type}'{idx})"

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def jax_device(self):
        """The JAX device this names."""
        platform = {"cuda": "gpu"}.get(self.type, self.type)
        try:
            devs = jax.devices(platform)
        except RuntimeError:
            raise RuntimeError(f"wgrad: no {self.type} device is available to JAX "
                               f"(jax.devices() = {jax.devices()})") from None
        i = self.index
        if i is None:
            i = current_index[0] if self.type == "cuda" else 0
        if i >= len(devs):
            raise RuntimeError(f"wgrad: {self} is out of range: JAX sees {len(devs)} "
                               f"{self.type} device(s)")
        return devs[i]

    @staticmethod
    def of_jax(d):
        """The torch-style device of JAX device ``d`` (one object per JAX device: a
        tensor's ``.device``, and the engine's choice of ready queue, ask per call)."""
        r = _OF_JAX.get(d)
        if r is None:
            t = {"gpu": "cuda"}.get(d.platform, d.platform)
            same = jax.devices(d.platform)
            idx = same.index(d) if d in same else d.id
            r = _OF_JAX[d] = device(t, None if (t == "cpu" and idx == 0) else idx)
        return r


_OF_JAX = {}  # JAX device -> its wgrad device (as many entries as JAX has devices)


# NOTE [The default device]
# New tensors go where JAX puts a new array: JAX's default device, which is its
# ``jax_default_device`` setting (or the ``with jax.default_device(...)`` in force) when set,
# else the first device of its default platform (a GPU when JAX has one). Every place
# that needs "the default device" (get_default_device, lazy segments, the *_like
# functions) asks here, so that setting it, through JAX or through
# wgrad.set_default_device, moves them all together.

def default_jax_device():
    """The JAX device new arrays are made on (NOTE [The default device])."""
    d = jax.config.jax_default_device
    if d is None:
        return jax.devices()[0]
    if isinstance(d, str):
        return jax.devices(d)[0]
    return d


_SEVERAL = [None]


def several_devices():
    """Whether JAX sees more than one device over all its platforms (the CPU beside a GPU
    counts): whether an array can be anywhere but the default device."""
    r = _SEVERAL[0]
    if r is None:
        n = len(jax.devices())
        if jax.default_backend() != "cpu":
            try:
                n += len(jax.devices("cpu"))
            except RuntimeError:  # JAX_PLATFORMS left the CPU out
                pass
        r = _SEVERAL[0] = n > 1
    return r


def cpu_only():
    """Whether JAX has one device, a CPU: where a host array is adopted, not moved (NOTE
    [Host GEMM], [Fillers on the host])."""
    if not _CPU_ONLY:
        _CPU_ONLY.append(not several_devices() and jax.default_backend() == "cpu")
    return _CPU_ONLY[0]


_CPU_ONLY = []


def unguarded(call, *args):
    """``call(*args)``, a host-to-device put, past a transfer guard: on a CPU-only JAX
    no data moves (NOTE [Host GEMM])."""
    if _guard.value in (None, "allow"):
        return call(*args)
    with jax.transfer_guard_host_to_device("allow"):
        return call(*args)
