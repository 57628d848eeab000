"""``wgrad.nn.parallel``: ``DistributedDataParallel`` (torch.nn.parallel's name) over
``wgrad.distributed``."""
from .distributed import DistributedDataParallel

__all__ = ["DistributedDataParallel"]
