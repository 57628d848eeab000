"""Moving a tensor between devices, differentiably (``Tensor.to(device)``, ``.cpu()``,
``.cuda()``): the gradient moves back to where the input was."""
import jax

from .._device import device as _device
from ._primitive import Primitive

__all__ = ["to_device", "cuda", "reshard"]


def _move(self, *, device, src):
    return jax.device_put(self, device)


class _Transfer(Primitive):
    """A device move or reshard. Its backward moves the gradient back with an eager
    ``jax.device_put``: inside a jitted kernel (or a lazy segment) a transfer to a device
    is no transfer, and the gradient would stay where it arrived."""
    lazy_backward = False

    def _build_kernel(self, attrs, needs, in_meta, out_meta):
        k = super()._build_kernel(attrs, needs, in_meta, out_meta)
        src = attrs["src"]

        def run(grads, saved_vals):
            return [jax.device_put(grads[0], src)]
        run.names = k.names
        run.identity = None  # NOTE [Pass-through kernels]: never (it moves the array)
        return run


_to_dev = _Transfer("to_device", _move, jit=False, node_name="ToCopyBackward0",
                    self=lambda grad, device, src: _to_dev(grad, device=src, src=device))


def _current_jax_device(data):
    try:
        devs = data.devices()
    except Exception:  # a tracer: placement is decided by the enclosing jit
        return None
    return next(iter(devs)) if len(devs) == 1 else None


def to_device(tensor, device):
    """Move ``tensor`` to ``device`` (a string, index or ``wgrad.device``); differentiable:
    the gradient moves back. Returns ``tensor`` itself when it is already there."""
    dst = _device(device).jax_device()
    src = _current_jax_device(tensor._data)
    if src is None or src == dst:
        return tensor
    return _to_dev(tensor, device=dst, src=src)


def cuda(tensor, device=None):
    """``Tensor.cuda(device)``: ``device`` defaults to the current CUDA device."""
    if device is None:
        device = "cuda"
    elif isinstance(device, int):
        device = _device("cuda", device)
    return to_device(tensor, device)


# NOTE [Gradients keep their parameters' shardings]
# Eager ops on sharded arrays run as SPMD programs and XLA picks each result's sharding.
# A gradient can therefore come back laid out differently from its leaf (on one device
# for a parameter split over a mesh, when the backward formulas only met the root's seed).
# AccumulateGrad (Tensor._accumulate_grad) moves the gradient of a leaf whose array spans
# several devices to the leaf's sharding with a differentiable jax.device_put, only when
# the two differ, so `.grad` is laid out as the parameter is (as torch's .grad is on its
# parameter's device) and updates such as `p - lr * p.grad` keep the parameter's layout.
# A single-device leaf is left alone: if its array is uncommitted (made without naming a
# device) JAX lets it join a computation over a mesh, and its gradient is laid out as XLA
# chose (the first update then moves the parameter onto the mesh); a committed one cannot
# meet mesh arrays at all.
def _put(self, *, sharding, src):
    return jax.device_put(self, sharding)


_reshard = _Transfer("reshard", _put, jit=False, node_name="ToCopyBackward0",
                     self=lambda grad, sharding, src: _reshard(grad, sharding=src, src=sharding))


def reshard(tensor, sharding):
    """``tensor`` laid out as the JAX ``sharding`` (differentiable, ``jax.device_put``);
    ``tensor`` itself when it already is, or when its array is a tracer."""
    src = getattr(tensor._data, "sharding", None)
    if src is None or src is sharding or src.is_equivalent_to(sharding, tensor._data.ndim):
        return tensor
    return _reshard(tensor, sharding=sharding, src=src)
