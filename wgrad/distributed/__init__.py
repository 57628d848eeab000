"""``wgrad.distributed``: torch.distributed's core names on JAX's distributed machinery.

* processes: ``init_process_group`` (over ``jax.distributed.initialize``), ``get_rank``,
  ``get_world_size``, ``all_reduce``, ``broadcast``, ``all_gather``, ``barrier``, ...
  (NOTE [Processes on JAX's collectives] in _process_group.py);
* devices: ``DeviceMesh`` / ``init_device_mesh`` over a ``jax.sharding.Mesh``, and in
  ``wgrad.distributed.tensor`` ``distribute_tensor`` with ``Shard`` / ``Replicate``.

``nn.parallel.DistributedDataParallel`` averages gradients across processes. See
docs/distributed.md.
"""
from . import device_mesh, tensor  # noqa: F401
from ._process_group import (GroupMember, ReduceOp, Work, all_gather,  # noqa: F401
                             all_gather_into_tensor, all_reduce, barrier, broadcast,
                             destroy_process_group, get_backend, get_rank, get_world_size,
                             group, init_process_group, is_available, is_initialized)
from .device_mesh import DeviceMesh, init_device_mesh  # noqa: F401

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "get_rank", "get_world_size", "get_backend", "ReduceOp", "Work", "all_reduce",
           "broadcast", "all_gather", "all_gather_into_tensor", "barrier", "group",
           "GroupMember", "DeviceMesh", "init_device_mesh", "device_mesh", "tensor"]
