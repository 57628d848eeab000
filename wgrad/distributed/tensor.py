"""Sharded tensors: ``distribute_tensor`` with ``Shard(dim)`` / ``Replicate()`` placements
and ``distribute_module`` (torch.distributed.tensor's names) over JAX shardings.

A wgrad Tensor whose array is sharded (a ``jax.Array`` with a ``NamedSharding``) is what
torch calls a DTensor: ``t.jax().sharding`` says how it is laid out, eager ops on it run as
SPMD programs (NOTE [Meshes propagate shardings] in device_mesh.py), and its gradient comes
back laid out as it is (NOTE [Gradients keep their parameters' shardings] in
ops/_transfer.py). ``wgrad.from_jax`` of a sharded array shares it as is.
"""
import jax
from jax.sharding import NamedSharding, PartitionSpec

from .._autograd.grad_mode import no_grad
from .._tensor import Tensor, _make
from .device_mesh import init_device_mesh

__all__ = ["Placement", "Shard", "Replicate", "distribute_tensor", "distribute_module"]


class Placement:
    """How a tensor is laid out along one mesh dimension."""

    def is_shard(self, dim=None):
        return False

    def is_replicate(self):
        return False


class Shard(Placement):
    """Split the tensor's dimension ``dim`` across the devices of a mesh dimension."""

    def __init__(self, dim):
        self.dim = dim

    def is_shard(self, dim=None):
        return dim is None or dim == self.dim

    def __eq__(self, other):
        return isinstance(other, Shard) and other.dim == self.dim

    def __hash__(self):
        return hash(("Shard", self.dim))

    def __repr__(self):
        return f"Shard(dim={self.dim})"

    def __str__(self):
        return f"S({self.dim})"


class Replicate(Placement):
    """A full copy of the tensor on every device of a mesh dimension."""

    def is_replicate(self):
        return True

    def __eq__(self, other):
        return isinstance(other, Replicate)

    def __hash__(self):
        return hash("Replicate")

    def __repr__(self):
        return "Replicate()"

    def __str__(self):
        return "R"


def _default_mesh(tensor):
    n = len(jax.devices(tensor._data.devices().pop().platform))
    return init_device_mesh(tensor.device.type, (n,))


def _named_sharding(device_mesh, placements, ndim):
    """The ``NamedSharding`` of ``placements`` (one per mesh dimension) for a tensor with
    ``ndim`` dimensions."""
    if len(placements) != device_mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{device_mesh.ndim}.")
    spec = [[] for _ in range(ndim)]
    for axis, p in zip(device_mesh.mesh_dim_names, placements):
        if isinstance(p, Shard):
            d = p.dim + ndim if p.dim < 0 else p.dim
            if not 0 <= d < ndim:
                raise IndexError(f"Dimension out of range (expected to be in range of "
                                 f"[{-ndim}, {ndim - 1}], but got {p.dim})")
            spec[d].append(axis)
        elif not isinstance(p, Replicate):
            raise NotImplementedError(f"wgrad.distributed.tensor: placement {p!r} is not "
                                      f"supported (Shard(dim) and Replicate() are)")
    entries = [None if not s else s[0] if len(s) == 1 else tuple(s) for s in spec]
    return NamedSharding(device_mesh.jax_mesh, PartitionSpec(*entries))


def distribute_tensor(tensor, device_mesh=None, placements=None, *, src_data_rank=0):
    """A leaf Tensor holding ``tensor``'s values laid out over ``device_mesh``.

    ``placements`` has one entry per mesh dimension: ``Shard(d)`` splits the tensor's
    dimension ``d`` across that mesh dimension, ``Replicate()`` copies it (the default:
    all replicated). The result is a new leaf with ``tensor``'s ``requires_grad``, its array
    put in place by ``jax.device_put`` with a ``NamedSharding``. Across processes every
    process passes the same values and keeps the shards its devices hold.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.distributed import init_device_mesh
    >>> from wgrad.distributed.tensor import Shard, distribute_tensor
    >>> mesh = init_device_mesh("cpu", (1,), mesh_dim_names=("dp",))
    >>> x = distribute_tensor(wgrad.ones(4, 2), mesh, [Shard(0)])
    >>> x.jax().sharding.spec
    P('dp', None)
    """
    if device_mesh is None:
        device_mesh = _default_mesh(tensor)
    if placements is None:
        placements = [Replicate()] * device_mesh.ndim
    sh = _named_sharding(device_mesh, list(placements), tensor.ndim)
    out = _make(jax.device_put(tensor._data, sh))
    if tensor.requires_grad:
        out.requires_grad_(True)
    return out


def _replicate_params(name, module, device_mesh):
    with no_grad():
        for t in list(module._parameters.values()) + list(module._buffers.values()):
            if isinstance(t, Tensor):
                t.data = distribute_tensor(t.detach(), device_mesh)


def distribute_module(module, device_mesh=None, partition_fn=None, input_fn=None,
                      output_fn=None):
    """Lay out ``module``'s parameters and buffers over ``device_mesh``, in place.

    ``partition_fn(name, submodule, device_mesh)`` is called for every submodule (default:
    replicate its parameters and buffers); ``input_fn(module, inputs, device_mesh)`` and
    ``output_fn(module, outputs, device_mesh)`` become forward pre- and post-hooks. Returns
    ``module``.
    """
    if device_mesh is None:
        first = next(iter(module.parameters()), None)
        device_mesh = init_device_mesh("cpu" if first is None else first.device.type,
                                       (len(jax.devices()),))
    partition_fn = partition_fn or _replicate_params
    for name, sub in module.named_modules():
        partition_fn(name, sub, device_mesh)
    if input_fn is not None:
        module.register_forward_pre_hook(lambda m, inputs: input_fn(m, inputs, device_mesh))
    if output_fn is not None:
        module.register_forward_hook(
            lambda m, inputs, outputs: output_fn(m, outputs, device_mesh))
    return module

