"""``wgrad.nn.parallel``: ``DistributedDataParallel`` (torch.nn.parallel's name) over
``wgrad.distributed``, and ``DataParallel`` (``wgrad.nn.DataParallel``)."""
from ..modules.remaining import DataParallel
from .distributed import DistributedDataParallel

__all__ = ["DataParallel", "DistributedDataParallel"]
