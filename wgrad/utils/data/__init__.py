"""``wgrad.utils.data``: torch.utils.data's datasets, samplers and DataLoader.

The loader runs in the calling process: ``num_workers`` is accepted and the batches are
those of torch's loader, produced without worker processes (JAX's runtime does not survive
a fork; docs/differences.md). Shuffles and splits draw from wgrad's generators, so they are
reproducible with ``wgrad.manual_seed`` or a ``generator=`` but are not torch's orders.

Example
-------
>>> from wgrad.utils.data import DataLoader, TensorDataset
>>> ds = TensorDataset(wgrad.arange(6.).reshape(3, 2), wgrad.tensor([0, 1, 0]))
>>> [y.tolist() for _, y in DataLoader(ds, batch_size=2)]
[[0, 1], [0]]
"""
from .dataloader import DataLoader, default_collate, default_convert, get_worker_info
from .dataset import (ChainDataset, ConcatDataset, Dataset, IterableDataset, StackDataset,
                      Subset, TensorDataset, random_split)
from .sampler import (BatchSampler, RandomSampler, Sampler, SequentialSampler,
                      SubsetRandomSampler, WeightedRandomSampler)

__all__ = ["DataLoader", "default_collate", "default_convert", "get_worker_info",
           "Dataset", "IterableDataset", "TensorDataset", "StackDataset", "ConcatDataset",
           "ChainDataset", "Subset", "random_split", "Sampler", "SequentialSampler",
           "RandomSampler", "SubsetRandomSampler", "WeightedRandomSampler", "BatchSampler"]
