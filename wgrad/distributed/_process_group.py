"""The default process group (torch.distributed's c10d names) over ``jax.distributed``.

# NOTE [Processes on JAX's collectives]
# ``init_process_group`` starts JAX's multi-process runtime (``jax.distributed.initialize``,
# the coordinator at MASTER_ADDR:MASTER_PORT or ``tcp://host:port``); afterwards every
# process sees every device of the job (``jax.devices()``) and its own
# (``jax.local_devices()``). The group is a one-axis mesh, axis "rank", holding one device
# per process (its first local device, or ``device_id``). A collective turns each process's
# array into its block of a global array sharded over that axis
# (``jax.make_array_from_single_device_arrays``: no copy) and runs one jitted
# ``jax.shard_map`` whose body calls the XLA collective (``psum``, ``pmax``, ``all_gather``,
# ...); the result's local block is written back into the tensor. Between processes the
# bytes travel over JAX's transports: gloo between CPUs (``jax_cpu_collectives_
# implementation``), NCCL between GPUs. Every process must call the same collectives in the
# same order with the same shapes, as with torch.distributed. A group of one process needs
# no runtime: its collectives return their input (AVG, SUM, MIN, ... of one value).
"""
import datetime
import enum
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import multihost_utils
from jax.sharding import NamedSharding, PartitionSpec

from .._autograd.grad_mode import no_grad
from .._tensor import _make

__all__ = ["init_process_group", "destroy_process_group", "is_available", "is_initialized",
           "get_rank", "get_world_size", "get_backend", "ReduceOp", "Work", "all_reduce",
           "broadcast", "all_gather", "all_gather_into_tensor", "barrier", "group",
           "GroupMember"]

_ERR_NOT_INIT = ("Default process group has not been initialized, please make sure to call "
                 "init_process_group.")
_BACKENDS = (None, "gloo", "nccl", "cpu:gloo,cuda:nccl")
_AXIS = "rank"


class _World:
    """The default group: this process's rank, the world size, and the process mesh."""

    def __init__(self, backend, rank, world_size, started):
        self.backend, self.rank, self.world_size = backend, rank, world_size
        self.started = started  # whether jax.distributed was initialized by us
        self.mesh = self.device = None
        self.kernels = {}


_world = [None]


class _WorldMeta(type):
    @property
    def WORLD(cls):  # noqa: N802 - torch's name
        return _world[0]


class group(metaclass=_WorldMeta):  # noqa: N801 - torch's name
    """``group.WORLD``: the default process group (None before ``init_process_group``)."""


class GroupMember(metaclass=_WorldMeta):
    """``GroupMember.WORLD``: the same as ``group.WORLD``."""


def is_available():
    """True: wgrad.distributed runs on ``jax.distributed`` wherever JAX runs."""
    return True


def is_initialized():
    """Whether the default process group has been initialized."""
    return _world[0] is not None


def _get_world(group=None):
    w = _world[0]
    if w is None:
        raise ValueError(_ERR_NOT_INIT)
    if group is not None and group is not w:
        raise ValueError("wgrad.distributed supports only the default process group "
                         "(group=None)")
    return w


def get_rank(group=None):
    """This process's rank in the default group."""
    return _get_world(group).rank


def get_world_size(group=None):
    """The number of processes in the default group."""
    return _get_world(group).world_size


def get_backend(group=None):
    """The backend the group was initialized with ("gloo" when none was named on CPU)."""
    return _get_world(group).backend


def _env(name, what=None):
    v = os.environ.get(name)
    if v is None:
        raise ValueError(f"Error initializing torch.distributed using env:// rendezvous: "
                         f"environment variable {what or name} expected, but not set")
    return v


def init_process_group(backend=None, init_method=None, timeout=None, world_size=-1, rank=-1,
                       store=None, group_name="", pg_options=None, device_id=None):
    """Initialize the default process group on ``jax.distributed.initialize``.

    As in torch, ``init_method=None`` or ``"env://"`` reads MASTER_ADDR and MASTER_PORT
    (the coordinator, run by rank 0) and, unless given, RANK and WORLD_SIZE from the
    environment; ``"tcp://host:port"`` names the coordinator. Call it before any tensor
    is created: JAX must start its multi-process runtime before its first computation.
    ``backend`` is ``"gloo"`` (CPU; JAX's gloo collectives), ``"nccl"`` (GPU; JAX uses NCCL
    on GPUs) or None (the platform's). A world of one process starts nothing. NOTE
    [Processes on JAX's collectives].

    Example
    -------
    >>> import wgrad.distributed as dist
    >>> dist.init_process_group("gloo", init_method="tcp://127.0.0.1:29500", rank=0,
    ...                         world_size=1)
    >>> dist.get_rank(), dist.get_world_size()
    (0, 1)
    >>> dist.destroy_process_group()
    """
    if _world[0] is not None:
        raise ValueError("trying to initialize the default process group twice!")
    if store is not None:
        raise ValueError("wgrad.distributed: store= is not supported; the coordinator is "
                         "JAX's (init_method='env://' or 'tcp://host:port')")
    if init_method is None or init_method == "env://":
        if rank == -1:
            rank = int(_env("RANK"))
        if world_size == -1:
            world_size = int(_env("WORLD_SIZE"))
        address = None if world_size == 1 else f"{_env('MASTER_ADDR')}:{_env('MASTER_PORT')}"
    elif init_method.startswith("tcp://"):
        address = init_method[len("tcp://"):].split("?")[0]
        if rank == -1 or world_size == -1:
            raise ValueError(f"Error initializing torch.distributed using tcp:// rendezvous: "
                             f"rank and world_size must be given ({init_method})")
    else:
        raise ValueError(f"wgrad.distributed: init_method {init_method!r} is not supported "
                         f"(use 'env://' or 'tcp://host:port')")
    if backend is not None:
        backend = str(backend).lower()
    if backend not in _BACKENDS:
        raise ValueError(f"Invalid backend: '{backend}'")
    if not 0 <= rank < world_size:
        raise ValueError(f"Invalid rank {rank}, rank should be in the interval "
                         f"[0, {world_size - 1}]")
    started = world_size > 1
    if started:
        if backend in (None, "gloo", "cpu:gloo,cuda:nccl") \
                and jax.config.jax_cpu_collectives_implementation != "gloo":
            jax.config.update("jax_cpu_collectives_implementation", "gloo")
        kw = {}
        if timeout is not None:
            secs = timeout.total_seconds() if isinstance(timeout, datetime.timedelta) \
                else timeout
            kw["initialization_timeout"] = int(secs)
        try:
            jax.distributed.initialize(address, num_processes=world_size, process_id=rank,
                                       **kw)
        except RuntimeError as e:
            if "must be called before" in str(e):
                raise RuntimeError(
                    "wgrad.distributed.init_process_group must be called before any tensor "
                    "is created or any JAX computation runs in this process (JAX starts its "
                    "multi-process runtime before its first computation)") from e
            raise
    w = _World(backend or ("nccl" if jax.default_backend() == "gpu" else "gloo"), rank,
               world_size, started)
    if started:
        by_process = {}
        for d in jax.devices():
            by_process.setdefault(d.process_index, d)
        if device_id is not None:
            by_process[jax.process_index()] = _local_device(device_id)
        w.device = by_process[jax.process_index()]
        devs = [by_process[i] for i in range(world_size)]
        w.mesh = jax.sharding.Mesh(np.array(devs), (_AXIS,),
                                   axis_types=(jax.sharding.AxisType.Auto,))
    _world[0] = w


def _local_device(device_id):
    if isinstance(device_id, int):
        return jax.local_devices()[device_id]
    return device_id.jax_device() if hasattr(device_id, "jax_device") else device_id


def destroy_process_group(group=None):
    """Tear down the default group (and JAX's multi-process runtime, which cannot be
    started again in the same process)."""
    w = _get_world(group)
    _world[0] = None
    if w.started:
        jax.distributed.shutdown()


class RedOpType(enum.IntEnum):
    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7

    def __str__(self):
        return f"RedOpType.{self.name}"


class ReduceOp:
    """The reductions of ``all_reduce``: ``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``,
    ``MAX``, ``BAND``, ``BOR``, ``BXOR``."""

    RedOpType = RedOpType
    SUM, AVG, PRODUCT, MIN, MAX = (RedOpType.SUM, RedOpType.AVG, RedOpType.PRODUCT,
                                   RedOpType.MIN, RedOpType.MAX)
    BAND, BOR, BXOR = RedOpType.BAND, RedOpType.BOR, RedOpType.BXOR


# the body of each reduction over the process axis, on one process's block
def _gathered(reduce):
    return lambda x: reduce(jax.lax.all_gather(x, _AXIS), axis=0)


_REDUCE = {
    RedOpType.SUM: lambda x: jax.lax.psum(x, _AXIS),
    RedOpType.AVG: lambda x: jax.lax.pmean(x, _AXIS),
    RedOpType.MIN: lambda x: jax.lax.pmin(x, _AXIS),
    RedOpType.MAX: lambda x: jax.lax.pmax(x, _AXIS),
    RedOpType.PRODUCT: _gathered(jnp.prod),
    RedOpType.BAND: _gathered(jnp.bitwise_and.reduce),
    RedOpType.BOR: _gathered(jnp.bitwise_or.reduce),
    RedOpType.BXOR: _gathered(jnp.bitwise_xor.reduce),
}


class Work:
    """What a collective with ``async_op=True`` returns: JAX dispatches asynchronously, so
    ``wait()`` blocks until the result is ready."""

    def __init__(self, tensors):
        self._tensors = tensors

    def wait(self, timeout=None):
        for t in self._tensors:
            t._data.block_until_ready()
        return True

    def is_completed(self):
        return all(t._data.is_ready() for t in self._tensors)

    def is_success(self):
        return True


def _done(async_op, tensors):
    return Work(tensors) if async_op else None


def _kernel(w, key, body, n):
    """The jitted shard_map of ``body`` (n process blocks in, a tuple out, replicated)."""
    key = key + (n,)
    k = w.kernels.get(key)
    if k is None:
        spec = PartitionSpec(_AXIS)
        mapped = jax.shard_map(body, mesh=w.mesh, in_specs=(spec,) * n,
                               out_specs=PartitionSpec(), check_vma=False)
        k = w.kernels[key] = jax.jit(mapped)
    return k


def _to_global(w, x):
    """This process's array as its block of a global array over the process axis."""
    block = jax.device_put(x.reshape((1,) + x.shape), w.device)
    return jax.make_array_from_single_device_arrays(
        (w.world_size,) + x.shape, NamedSharding(w.mesh, PartitionSpec(_AXIS)), [block])


def run_collective(w, key, body, arrays):
    """Run ``body`` (one block of shape (1, ...) per array in, a tuple out) over this
    process's ``arrays``; the local results, each on the device of its array."""
    k = _kernel(w, key, body, len(arrays))
    outs = k(*[_to_global(w, a) for a in arrays])
    res = []
    for o, a in zip(outs, arrays):
        o = o.addressable_data(0)
        dev = next(iter(a.devices()))
        res.append(o if dev == w.device else jax.device_put(o, dev))
    return res


def _coalesced(reduce):
    """A body that reduces all its blocks as one flat buffer: one collective for all."""
    def body(*blocks):
        flat = jnp.concatenate([b.reshape(-1) for b in blocks])
        out, res, i = reduce(flat), [], 0
        for b in blocks:
            res.append(out[i:i + b.size].reshape(b.shape[1:]))
            i += b.size
        return tuple(res)
    return body


def all_reduce_coalesced(arrays, op=ReduceOp.SUM, group=None):
    """``arrays`` (one dtype) reduced across processes by one collective; new arrays."""
    w = _get_world(group)
    if w.world_size == 1:
        return list(arrays)
    op = RedOpType(op)
    return run_collective(w, ("coalesced", op), _coalesced(_REDUCE[op]), arrays)


def broadcast_coalesced(arrays, src=0, group=None):
    """``arrays`` (one dtype) of rank ``src``, by one collective; new arrays."""
    w = _get_world(group)
    if w.world_size == 1:
        return list(arrays)

    def from_src(flat):
        return jax.lax.psum(jnp.where(jax.lax.axis_index(_AXIS) == src, flat,
                                      jnp.zeros_like(flat)), _AXIS)
    return run_collective(w, ("broadcast_coalesced", src), _coalesced(from_src), arrays)


def _write(tensor, array):
    with no_grad():
        tensor.copy_(_make(array))


def all_reduce(tensor, op=ReduceOp.SUM, group=None, async_op=False):
    """Reduce ``tensor`` across all processes, in place (every process gets the result).

    Example
    -------
    >>> import wgrad, wgrad.distributed as dist
    >>> dist.init_process_group(init_method="tcp://127.0.0.1:29500", rank=0, world_size=1)
    >>> t = wgrad.tensor([1.0, 2.0])
    >>> dist.all_reduce(t, op=dist.ReduceOp.SUM)
    >>> t
    tensor([1., 2.])
    >>> dist.destroy_process_group()
    """
    w = _get_world(group)
    op = RedOpType(op)
    if w.world_size > 1:
        reduce = _REDUCE[op]
        (out,) = run_collective(w, ("all_reduce", op), lambda x: (reduce(x[0]),),
                                [tensor._data])
        _write(tensor, out)
    return _done(async_op, [tensor])


def broadcast(tensor, src=None, group=None, async_op=False, group_src=None):
    """Copy ``tensor`` of rank ``src`` into ``tensor`` of every process."""
    w = _get_world(group)
    src = group_src if src is None else src
    if src is None:
        raise ValueError("Either src or group_src must be set")
    if not 0 <= src < w.world_size:
        raise ValueError(f"Invalid rank {src}, rank should be in the interval "
                         f"[0, {w.world_size - 1}]")
    if w.world_size > 1:
        (out,) = run_collective(w, ("broadcast", src),
                                lambda x: (jax.lax.all_gather(x[0], _AXIS)[src],),
                                [tensor._data])
        _write(tensor, out)
    return _done(async_op, [tensor])


def all_gather(tensor_list, tensor, group=None, async_op=False):
    """Gather ``tensor`` of every process into ``tensor_list`` (one tensor per rank)."""
    w = _get_world(group)
    if len(tensor_list) != w.world_size:
        raise RuntimeError(f"ProcessGroupGloo::allgather: invalid output tensor list at index "
                           f"0 (expected length {w.world_size}, got {len(tensor_list)})")
    if w.world_size == 1:
        _write(tensor_list[0], tensor._data)
    else:
        (out,) = run_collective(w, ("all_gather",),
                                lambda x: (jax.lax.all_gather(x[0], _AXIS),), [tensor._data])
        for i, t in enumerate(tensor_list):
            _write(t, out[i])
    return _done(async_op, list(tensor_list))


def all_gather_into_tensor(output_tensor, input_tensor, group=None, async_op=False):
    """Gather ``input_tensor`` of every process into ``output_tensor``, concatenated along
    dim 0 (or stacked when ``output_tensor`` has one more dim)."""
    w = _get_world(group)
    if w.world_size == 1:
        out = input_tensor._data
    else:
        (out,) = run_collective(w, ("all_gather",),
                                lambda x: (jax.lax.all_gather(x[0], _AXIS),),
                                [input_tensor._data])
    _write(output_tensor, out.reshape(output_tensor.shape))
    return _done(async_op, [output_tensor])


def barrier(group=None, async_op=False, device_ids=None):
    """Wait until every process reaches this call."""
    w = _get_world(group)
    if w.world_size > 1:
        multihost_utils.sync_global_devices("wgrad.distributed.barrier")
    return _done(async_op, [])

