"""``DistributedDataParallel``: gradients averaged across processes, bucket by bucket.

# NOTE [DDP buckets]
# As torch's reducer does, the parameters that require grad are assigned to buckets in
# reverse registration order (the order backward tends to produce their gradients), one
# dtype per bucket, each capped at ``bucket_cap_mb`` (by default 25 MiB, the first bucket
# 1 MiB). A post-accumulate-grad hook on each parameter counts the bucket's
# ready gradients; when the last one arrives the bucket is averaged across processes by
# one collective (its gradients flattened into one buffer inside one jitted shard_map,
# NOTE [Processes on JAX's collectives]) and written back into each ``.grad``. JAX
# dispatches asynchronously, so the collective overlaps the rest of the backward pass.
# Every process must reduce the same buckets in the same order, which holds when all run
# the same graph. With ``find_unused_parameters=True`` nothing is reduced during the
# backward pass: a callback queued on the engine reduces every bucket at its end, in
# bucket order, with zeros standing in for the gradients this process did not produce (a
# parameter no process used keeps ``.grad`` None: a flag per parameter rides along in the
# bucket's collective, as torch's reducer all-reduces its map of used parameters).
"""
import jax
import jax.numpy as jnp
import numpy as np

from ..._autograd.engine import get_default_engine
from ..._autograd.grad_mode import no_grad
from ..._creation import zeros_like
from ..._tensor import _make
from ...distributed._process_group import (_get_world, all_reduce_coalesced,
                                           broadcast_coalesced)
from ..modules.module import Module

__all__ = ["DistributedDataParallel"]

_FIRST_BUCKET_BYTES = 1024 * 1024
_ERR_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss.")

_ERR_TRACED = (
    "DistributedDataParallel averages gradients between processes eagerly, after each "
    "backward(); it cannot run inside wgrad.compile or jax.jit. Compile the step without "
    "DDP in each process and average the gradients with wgrad.distributed.all_reduce "
    "after the call, or, for several devices of one process, shard the batch over a mesh "
    "(docs/distributed.md).")


def _assign_buckets(params, cap_bytes, first_cap_bytes):
    """Parameter indices per bucket (NOTE [DDP buckets])."""
    buckets, open_, limits = [], {}, {}
    for i in reversed(range(len(params))):
        p = params[i]
        key = p._data.dtype
        b = open_.get(key)
        if b is None:
            b = open_[key] = [[], 0]
        b[0].append(i)
        b[1] += p._data.size * p._data.dtype.itemsize
        limit = limits.get(key, first_cap_bytes)
        if b[1] >= limit:
            buckets.append(b[0])
            limits[key] = cap_bytes
            del open_[key]
    buckets.extend(b[0] for b in open_.values())
    return buckets


class DistributedDataParallel(Module):
    """Data parallelism across processes: each process runs ``module`` on its share of the
    batch, and after ``backward()`` every parameter's ``.grad`` holds the average over all
    processes (NOTE [DDP buckets]). At construction, rank 0's parameters and buffers are
    copied to every process (``init_sync``); with ``broadcast_buffers`` its buffers are
    copied again before each forward. Needs ``wgrad.distributed.init_process_group``.

    Example
    -------
    >>> import wgrad, wgrad.distributed as dist
    >>> dist.init_process_group(init_method="tcp://127.0.0.1:29500", rank=0, world_size=1)
    >>> model = wgrad.nn.parallel.DistributedDataParallel(wgrad.nn.Linear(2, 1))
    >>> model(wgrad.ones(3, 2)).sum().backward()
    >>> model.module.weight.grad.shape
    wgrad.Size([1, 2])
    >>> dist.destroy_process_group()
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0,
                 broadcast_buffers=True, init_sync=True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters=False, check_reduction=False,
                 gradient_as_bucket_view=False, static_graph=False):
        super().__init__()
        self._world = _get_world(process_group)
        params = [p for p in module.parameters() if p.requires_grad]
        if not params:
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        self.module = module
        self.dim = dim
        self.device_ids = device_ids
        self.output_device = output_device
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb)
                                    * 1024 * 1024)
        self._params = params
        first = _FIRST_BUCKET_BYTES if bucket_cap_mb is None else self.bucket_bytes_cap
        self._buckets = _assign_buckets(params, self.bucket_bytes_cap, first)
        self._bucket_of = {}
        for b, idx in enumerate(self._buckets):
            for i in idx:
                self._bucket_of[i] = b
        self._pending = None  # per bucket: gradients still to come in this backward
        self._queued = False
        self._unfinished = False
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i))
                       for i, p in enumerate(params)]
        if init_sync:
            self._sync([p for p in module.parameters()] + list(module.buffers()))

    # -- forward ---------------------------------------------------------------------------
    def forward(self, *inputs, **kwargs):
        if self._unfinished:
            raise RuntimeError(_ERR_UNFINISHED)
        if self.broadcast_buffers:
            self._sync(list(self.module.buffers()))
        self._pending = None
        return self.module(*inputs, **kwargs)

    def no_sync(self):
        """A context manager in which backward passes accumulate gradients locally
        without averaging them (the next backward outside it averages the sum)."""
        return _NoSync(self)

    def _sync(self, tensors):
        """Copy rank 0's ``tensors`` to every process, one collective per dtype."""
        if self._world.world_size == 1 or not tensors:
            return
        by_dtype = {}
        for t in tensors:
            by_dtype.setdefault(t._data.dtype, []).append(t)
        with no_grad():
            for ts in by_dtype.values():
                for t, a in zip(ts, broadcast_coalesced([t._data for t in ts], 0)):
                    t.copy_(_make(a))

    # -- backward --------------------------------------------------------------------------
    def _make_hook(self, i):
        def hook(param):
            if not self.require_backward_grad_sync:
                return
            if self._pending is None:
                self._pending = [len(b) for b in self._buckets]
                self._done = [False] * len(self._buckets)
            if not self._queued:
                self._queued = True
                get_default_engine().queue_callback(self._finish)
            b = self._bucket_of[i]
            self._pending[b] -= 1
            if self._pending[b] == 0 and not self.find_unused_parameters:
                self._reduce(b)
        return hook

    def _reduce(self, b):
        self._done[b] = True
        n = self._world.world_size
        if n == 1:  # the average of one gradient
            return
        params = [self._params[i] for i in self._buckets[b]]
        if any(p.grad is not None and isinstance(p.grad._data, jax.core.Tracer)
               for p in params):
            raise RuntimeError(_ERR_TRACED)
        grads = [p.grad if p.grad is not None else zeros_like(p) for p in params]
        arrays = [g._data for g in grads]
        partial = any(p.grad is None for p in params)
        if partial:  # which parameters some process used: those get a gradient
            arrays.append(jnp.asarray([p.grad is not None for p in params], arrays[0].dtype))
        out = all_reduce_coalesced(arrays)
        used = [True] * len(params) if not partial else [bool(u) for u in np.asarray(out[-1])]
        with no_grad():
            for p, g, a, u in zip(params, grads, out, used):
                if not u:
                    continue
                a = (a / n).astype(g._data.dtype)
                if p.grad is None:
                    p.grad = _make(a)
                else:
                    p.grad.copy_(_make(a))

    def _finish(self):
        """Queued on the engine: runs once the backward pass is over."""
        self._queued = False
        if self._pending is None:
            return
        if self.find_unused_parameters:
            for b in range(len(self._buckets)):
                if not self._done[b]:
                    self._reduce(b)
        elif not all(self._done):
            self._unfinished = True
        self._pending = None


class _NoSync:
    def __init__(self, ddp):
        self.ddp = ddp

    def __enter__(self):
        self.prev = self.ddp.require_backward_grad_sync
        self.ddp.require_backward_grad_sync = False

    def __exit__(self, *exc):
        self.ddp.require_backward_grad_sync = self.prev
