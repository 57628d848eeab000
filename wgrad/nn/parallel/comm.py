"""``wgrad.nn.parallel.comm``: copying tensors between GPUs (torch.nn.parallel.comm).

# NOTE [CUDA communication without a GPU]
# torch implements broadcast, scatter and gather in CUDA kernels of ``torch._C``; a
# CPU-only build of torch has none of them, so there these functions validate their
# arguments and then raise ``AttributeError: module 'torch._C' has no attribute
# '_scatter'`` (and so on), and the autograd functions above them (replicate, scatter,
# gather) raise AssertionErrors for CPU tensors. wgrad does the same when JAX sees no GPU.
# With GPUs, the kernels are wgrad ops: ``Tensor.to(device)`` (differentiable, NOTE
# [Gradients keep their parameters' shardings]), ``chunk``/``split`` and ``cat``; the
# functions of this module run them without recording gradients, as torch's kernels do.
"""
import warnings

from ... import cuda as _cuda
from ..._autograd.grad_mode import no_grad
from ..._device import device as _device
from ...ops.shape import cat

__all__ = ["broadcast", "broadcast_coalesced", "reduce_add", "reduce_add_coalesced",
           "scatter", "gather"]


def _get_device_index(device, optional=False, allow_cpu=False):
    """torch's ``_utils._get_device_index``: an int as it is, a device's index (-1 for the
    CPU where ``allow_cpu``), the current GPU for no index when ``optional`` (None
    without a GPU)."""
    if isinstance(device, str):
        device = _device(device)
    idx = None
    if isinstance(device, _device):
        if not allow_cpu and device.type == "cpu":
            raise ValueError(f"Expected a non cpu device, but got: {device}")
        idx = -1 if device.type == "cpu" else device.index
    if isinstance(device, int):
        idx = device
    if idx is None:
        if not optional:
            raise ValueError(f"Expected a torch.device with a specified index or an integer, "
                             f"but got:{device}")
        idx = _cuda.current_device() if _cuda.is_available() else None
    return idx


def _get_cuda_device_index(device, optional=False, allow_cpu=False):
    """torch's ``cuda._utils._get_device_index``: as :func:`_get_device_index`, with a
    device that is not CUDA (nor the CPU, where ``allow_cpu``) refused."""
    if isinstance(device, int):
        return device
    if isinstance(device, str):
        device = _device(device)
    if isinstance(device, _device):
        if allow_cpu:
            if device.type not in ("cuda", "cpu"):
                raise ValueError(f"Expected a cuda or cpu device, but got: {device}")
        elif device.type != "cuda":
            raise ValueError(f"Expected a cuda device, but got: {device}")
    return _get_device_index(device, optional, allow_cpu)


def _kernel(name):
    """NOTE [CUDA communication without a GPU]: raises without a GPU, as a CPU-only torch."""
    if not _cuda.is_available():
        raise AttributeError(f"module 'torch._C' has no attribute '{name}'")


def _dev(index):
    """The device a torch device index names (-1: the CPU)."""
    return _device("cpu") if index == -1 else _device("cuda", index)


def _on_cpu(t):
    return t.device.type == "cpu"


def _copy(tensor, index):
    """``tensor`` on device ``index``: a new tensor (a view where it is there already, as
    torch's broadcast aliases the source device's copy), never a Parameter."""
    out = tensor.to(_dev(index))
    return out.view_as(out) if out is tensor else out


def _copies(tensor, devices):
    return tuple(_copy(tensor, d) for d in devices)


def _scatter_chunks(tensor, n, chunk_sizes, dim):
    if chunk_sizes is None:
        return tensor.chunk(n, dim)
    chunk_sizes = list(chunk_sizes)
    if len(chunk_sizes) != n:
        raise RuntimeError(f"Expected devices and chunk_sizes to be of same length, but got "
                           f"len(devices) = {n} and len(chunk_sizes) = {len(chunk_sizes)}")
    if sum(chunk_sizes) != tensor.shape[dim]:
        raise RuntimeError(f"Expected chunk sizes to sum to {tensor.shape[dim]}, but got "
                           f"{sum(chunk_sizes)}")
    return tensor.split(chunk_sizes, dim)


def broadcast(tensor, devices=None, *, out=None):
    """Copies of ``tensor`` on each of ``devices`` (GPU indices or devices), or written
    into the GPU tensors ``out``; exactly one of the two is given.

    Examples
    --------
    >>> wgrad.nn.parallel.comm.broadcast(wgrad.ones(2), ["cpu"])
    Traceback (most recent call last):
    ValueError: Expected a non cpu device, but got: cpu
    """
    if not ((devices is None) ^ (out is None)):
        raise RuntimeError(f"Exactly one of 'devices' and 'out' must be specified, but got "
                           f"devices={devices} and out={out}")
    if devices is not None:
        devices = [_get_device_index(d) for d in devices]
        _kernel("_broadcast")
        with no_grad():
            return _copies(tensor, devices)
    _kernel("_broadcast_out")
    with no_grad():
        for o in out:
            o.copy_(tensor)
    return tuple(out)


def broadcast_coalesced(tensors, devices, buffer_size=10485760):
    """Copies of each of ``tensors`` on each of ``devices``: one list per device."""
    with no_grad():
        return _broadcast_coalesced(tensors, devices)


def _broadcast_coalesced(tensors, devices):
    devices = [_get_device_index(d) for d in devices]
    _kernel("_broadcast_coalesced")
    return [[_copy(t, d) for t in tensors] for d in devices]


def reduce_add(inputs, destination=None):
    """The sum of same-shaped GPU tensors, on ``destination`` (the current GPU by
    default), which must hold one of them."""
    destination = _get_device_index(destination, optional=True)
    size = inputs[0].shape
    root = None
    for i, inp in enumerate(inputs):
        if _on_cpu(inp):
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} "
                                 f"is on CPU")
        if inp.device == _dev(destination):
            root = i
        if inp.shape != size:
            got = "x".join(str(x) for x in inp.shape)
            expected = "x".join(str(x) for x in size)
            raise ValueError(f"input {i} has invalid size: got {got}, but expected {expected}")
    if root is None:
        raise RuntimeError("reduce_add expects destination to be on the same GPU with one of "
                           "the tensors")
    if len(inputs) == 1:
        return inputs[0]
    with no_grad():
        result = inputs[root]
        for i, other in enumerate(inputs):
            if i != root:
                result = result + other.to(inputs[root].device)
    return result


def reduce_add_coalesced(inputs, destination=None, buffer_size=10485760):
    """:func:`reduce_add` of each position of the per-GPU sequences ``inputs``."""
    columns = list(zip(*inputs, strict=True))
    if not columns:
        return ()
    for i, inp in enumerate(inputs):  # torch reduces them flattened: the first CPU list
        if any(_on_cpu(t) for t in inp):
            raise AssertionError(f"reduce_add expects all inputs to be on GPUs, but input {i} "
                                 f"is on CPU")
    return tuple(reduce_add(list(col), destination) for col in columns)


def scatter(tensor, devices=None, chunk_sizes=None, dim=0, streams=None, *, out=None):
    """``tensor`` cut along ``dim`` (into equal chunks, as ``chunk``, or ``chunk_sizes``)
    and copied to ``devices``, or written into the GPU tensors ``out``."""
    if out is None:
        with no_grad():
            return _scatter(tensor, devices, chunk_sizes, dim)
    if devices is not None:
        raise RuntimeError(f"'devices' must not be specified when 'out' is specified, but got "
                           f"devices={devices}")
    if chunk_sizes is not None:
        raise RuntimeError(f"'chunk_sizes' must not be specified when 'out' is specified, but "
                           f"got chunk_sizes={chunk_sizes}")
    _kernel("_scatter_out")
    with no_grad():
        parts = tensor.split([o.shape[dim] for o in out], dim)
        for o, p in zip(out, parts):
            o.copy_(p)
    return tuple(out)


def gather(tensors, dim=0, destination=None, *, out=None):
    """``tensors`` concatenated along ``dim`` on ``destination`` (a GPU, or the CPU:
    ``"cpu"``; -1 is its deprecated name), or written into ``out``."""
    tensors = list(tensors)
    if out is None:
        with no_grad():
            return _gather(tensors, dim, destination, stacklevel=3)
    if destination is not None:
        raise RuntimeError(f"'destination' must not be specified when 'out' is specified, but "
                           f"got destination={destination}")
    _kernel("_gather_out")
    with no_grad():
        out.copy_(cat([t.to(out.device) for t in tensors], dim))
    return out


def _scatter(tensor, devices, chunk_sizes, dim):
    devices = [_get_device_index(d) for d in devices]
    _kernel("_scatter")
    parts = _scatter_chunks(tensor, len(devices), chunk_sizes, dim)
    return tuple(p.to(_dev(d)) for p, d in zip(parts, devices))


def _gather(tensors, dim, destination, stacklevel):
    if destination == -1:
        warnings.warn("Using -1 to represent CPU tensor is deprecated. Please use a device "
                      "object or string instead, e.g., \"cpu\".", FutureWarning,
                      stacklevel=stacklevel)
    destination = _get_device_index(destination, allow_cpu=True, optional=True)
    _kernel("_gather")
    return cat([t.to(_dev(destination)) for t in tensors], dim)
