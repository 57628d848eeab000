"""DataLoader and its collation, as torch.utils.data's (in the calling process)."""
import collections.abc
import re

import numpy as np

from ... import _creation, _dtype as D
from ..._tensor import Tensor
from ...ops import stack
from .dataset import IterableDataset
from .sampler import BatchSampler, RandomSampler, SequentialSampler

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info"]

_COLLATE_ERR = ("default_collate: batch must contain tensors, numpy arrays, numbers, dicts "
                "or lists; found {}")
_STRINGS = re.compile(r"[SaUO]")  # numpy dtypes of strings and objects: not converted


def get_worker_info():
    """None: batches are made in the calling process (as in torch's main process)."""
    return None


def default_convert(data):
    """numpy arrays and scalars (not of strings or objects) as tensors, inside mappings and
    sequences; everything else as it is."""
    if isinstance(data, Tensor):
        return data
    if isinstance(data, np.ndarray) or isinstance(data, np.generic):
        if _STRINGS.search(data.dtype.str):
            return data
        return _creation.as_tensor(data)
    if isinstance(data, collections.abc.Mapping):
        return _rebuild(data, {k: default_convert(v) for k, v in data.items()})
    if isinstance(data, tuple) and hasattr(data, "_fields"):  # a namedtuple
        return type(data)(*(default_convert(d) for d in data))
    if isinstance(data, tuple):
        return [default_convert(d) for d in data]
    if isinstance(data, collections.abc.Sequence) and not isinstance(data, (str, bytes)):
        return _rebuild(data, [default_convert(d) for d in data])
    return data


def _rebuild(like, value):
    """``value`` in the container type of ``like`` where that type can be built from it."""
    try:
        return type(like)(value)
    except TypeError:
        return value


def default_collate(batch):
    """A batch of samples as one structure: tensors (and numpy arrays, numbers) stacked
    along a new first dim, mappings and sequences collated field by field, strings
    listed."""
    elem = batch[0]
    if isinstance(elem, Tensor):
        return stack(list(batch), 0)
    if isinstance(elem, np.ndarray) and elem.dtype.kind not in "SaUO":
        return stack([_creation.as_tensor(b) for b in batch], 0)
    if isinstance(elem, np.generic) and elem.dtype.kind not in "SaUO":
        return _creation.as_tensor(np.stack(batch))
    if isinstance(elem, np.ndarray) or isinstance(elem, np.generic):
        raise TypeError(_COLLATE_ERR.format(elem.dtype))
    if isinstance(elem, float):
        return _creation.tensor(batch, dtype=D.float64)
    if isinstance(elem, bool) or isinstance(elem, int):
        return _creation.tensor(batch)
    if isinstance(elem, (str, bytes)):
        return batch
    if isinstance(elem, collections.abc.Mapping):
        return _rebuild(elem, {k: default_collate([d[k] for d in batch]) for k in elem})
    if isinstance(elem, tuple) and hasattr(elem, "_fields"):  # a namedtuple
        return type(elem)(*(default_collate(s) for s in zip(*batch)))
    if isinstance(elem, collections.abc.Sequence):
        if any(len(e) != len(elem) for e in batch):
            raise RuntimeError("each element in list of batch should be of equal size")
        fields = [default_collate(s) for s in zip(*batch)]
        return fields if isinstance(elem, tuple) else _rebuild(elem, fields)
    raise TypeError(_COLLATE_ERR.format(type(elem)))


class DataLoader:
    """Batches of a dataset: map-style datasets through a sampler (``shuffle``: random)
    grouped by a batch sampler, iterable ones in their order; ``collate_fn`` (by default
    ``default_collate``, ``default_convert`` without batching) makes each batch. The
    arguments and their checks are torch's; ``num_workers`` > 0 still loads in this
    process (docs/differences.md), ``pin_memory`` has nothing to pin on the CPU."""

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        if num_workers < 0:
            raise ValueError("num_workers option should be non-negative; use num_workers=0 "
                             "to disable multiprocessing.")
        if timeout < 0:
            raise ValueError("timeout option should be non-negative")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("prefetch_factor option could only be specified in "
                             "multiprocessing.let num_workers > 0 to enable multiprocessing, "
                             "otherwise set prefetch_factor to None.")
        if persistent_workers and num_workers == 0:
            raise ValueError("persistent_workers option needs num_workers > 0")
        self.dataset = dataset
        self.num_workers = num_workers
        self.prefetch_factor = prefetch_factor
        self.pin_memory = pin_memory
        self.pin_memory_device = pin_memory_device
        self.timeout = timeout
        self.worker_init_fn = worker_init_fn
        self.multiprocessing_context = multiprocessing_context
        self.persistent_workers = persistent_workers
        self.in_order = in_order
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            if shuffle not in {False, None}:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"shuffle option, but got shuffle={shuffle}")
            if sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"sampler option, but got sampler={sampler}")
            if batch_sampler is not None:
                raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                 f"batch_sampler option, but got batch_sampler="
                                 f"{batch_sampler}")
        else:
            shuffle = bool(shuffle)
        if sampler is not None and shuffle:
            raise ValueError("sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("batch_sampler option is mutually exclusive with batch_size, "
                                 "shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("batch_size=None option disables auto-batching and is mutually "
                             "exclusive with drop_last")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, drop_last)
        self.batch_size = batch_size
        self.drop_last = drop_last
        self.sampler = sampler
        self.batch_sampler = batch_sampler
        self.generator = generator
        if collate_fn is None:
            collate_fn = default_collate if self._auto_collation else default_convert
        self.collate_fn = collate_fn

    @property
    def _auto_collation(self):
        return self.batch_sampler is not None or self._iterable and \
            self.batch_size is not None

    def __iter__(self):
        if self._iterable:
            return self._iter_stream()
        return self._iter_map()

    def _iter_map(self):
        d, collate = self.dataset, self.collate_fn
        if self.batch_sampler is None:
            for i in self.sampler:
                yield collate(d[i])
            return
        many = getattr(d, "__getitems__", None)
        for keys in self.batch_sampler:
            yield collate(many(keys) if callable(many) else [d[i] for i in keys])

    def _iter_stream(self):
        if self.batch_size is None:
            for sample in self.dataset:
                yield self.collate_fn(sample)
            return
        batch = []
        for sample in self.dataset:
            batch.append(sample)
            if len(batch) == self.batch_size:
                yield self.collate_fn(batch)
                batch = []
        if batch and not self.drop_last:
            yield self.collate_fn(batch)

    def __len__(self):
        if self._iterable:
            n = len(self.dataset)
            if self.batch_size is not None:
                n = n // self.batch_size if self.drop_last else -(-n // self.batch_size)
            return n
        return len(self.batch_sampler if self.batch_sampler is not None else self.sampler)
