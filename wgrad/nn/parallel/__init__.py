"""``wgrad.nn.parallel``: ``DistributedDataParallel`` (torch.nn.parallel's name) over
``wgrad.distributed``, and ``DataParallel`` (``wgrad.nn.DataParallel``) with its
functional pieces ``data_parallel``, ``replicate``, ``scatter``, ``parallel_apply``,
``gather`` and ``comm`` (torch's; without a GPU they raise as a CPU-only torch's)."""
from ..modules.remaining import DataParallel, _Deprecated
from . import comm, scatter_gather  # noqa: F401
from .data_parallel import data_parallel
from .distributed import DistributedDataParallel
from .parallel_apply import parallel_apply
from .replicate import replicate
from .scatter_gather import gather, scatter

__all__ = ["replicate", "scatter", "parallel_apply", "gather", "data_parallel",
           "DataParallel", "DistributedDataParallel"]


class DistributedDataParallelCPU(_Deprecated, DistributedDataParallel):
    """torch's deprecated alias of :class:`DistributedDataParallel` (creating one warns)."""
    __deprecated__ = ("`torch.nn.parallel.DistributedDataParallelCPU` is deprecated, please "
                      "use `torch.nn.parallel.DistributedDataParallel` instead.")
