"""``embedding_bag``: sums, means or maxima of bags of embeddings without materializing
the looked-up rows per bag, as torch's.

A composite of wgrad ops: the bag of each index and the entries to drop (``padding_idx``,
which torch excludes from the reduction, not only from the gradient) are worked out on the
host from the integer input and offsets; the kept rows are looked up with ``embedding``
(``max_norm``), weighted by ``per_sample_weights`` and reduced per
bag with ``index_add`` (sum, mean), or gathered from each bag's first maximal row (max: the
gradient goes where torch's ``max_indices`` send it, not split between ties). An empty bag
is zeros.
"""
import warnings

import numpy as np

from .. import _dtype as D
from .._autograd.grad_mode import no_grad
from .._creation import arange, full, tensor, zeros
from .._tensor import Tensor
from ..ops.elementwise import where
from ..ops.layer import embedding
from ..ops.shape import cat

__all__ = ["embedding_bag"]


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2, scale_grad_by_freq=False,
                  mode="mean", sparse=False, per_sample_weights=None, include_last_offset=False,
                  padding_idx=None):
    """Reduce bags of rows of ``weight``: ``input`` (B, L) holds B bags of L indices, or a
    1-D ``input`` is cut into bags at ``offsets``. ``mode``: 'sum', 'mean' or 'max';
    ``per_sample_weights`` (same shape as ``input``, 'sum' only) scale the rows; entries
    equal to ``padding_idx`` are left out of their bag.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.arange(6.).reshape(3, 2)
    >>> wgrad.nn.functional.embedding_bag(wgrad.tensor([0, 2, 1]), w, wgrad.tensor([0, 2]))
    tensor([[2., 3.],
            [2., 3.]])
    """
    if weight.dtype == D.int64 and input.is_floating_point():
        warnings.warn("Argument order of nn.functional.embedding_bag was changed. Usage "
                      "`embedding_bag(weight, input, ...)` is deprecated, and should now be "
                      "`embedding_bag(input, weight, ...)`.", UserWarning, stacklevel=2)
        weight, input = input, weight
    if per_sample_weights is not None and tuple(input.shape) != tuple(per_sample_weights.shape):
        raise ValueError(f"embedding_bag: If per_sample_weights ({_size(per_sample_weights)}) "
                         f"is not None, then it must have the same shape as the input "
                         f"({_size(input)})")
    if weight.dim() != 2:
        raise ValueError(f"weight has to be a 2D Tensor, but got Tensor of dimension "
                         f"{weight.dim()}")
    if input.dim() == 2:
        if offsets is not None:
            raise ValueError(f"if input is 2D, then offsets has to be None, as input is treated "
                             f"is a mini-batch of fixed length sequences. However, found "
                             f"offsets of type {_type_name(offsets)}")
        nbags, length = input.shape
        bags = np.repeat(np.arange(nbags), length)
        input = input.reshape(-1)
        if per_sample_weights is not None:
            per_sample_weights = per_sample_weights.reshape(-1)
    elif input.dim() == 1:
        if offsets is None:
            raise ValueError("offsets has to be a 1D Tensor but got None")
        if offsets.dim() != 1:
            raise ValueError("offsets has to be a 1D Tensor")
        bags, nbags = _bags(np.asarray(offsets._data).astype(np.int64), input.shape[0],
                            include_last_offset)
    else:
        raise ValueError(f"input has to be 1D or 2D Tensor, but got Tensor of dimension "
                         f"{input.dim()}")
    if mode not in ("sum", "mean", "max"):
        raise ValueError("mode has to be one of sum, mean or max")
    if max_norm is not None:
        max_norm = float(max_norm)
    if scale_grad_by_freq:
        # torch's CPU kernel divides some rows' gradients by another index's count (index
        # 3 of [1, 2, 4, 2, 5, 0, 3, 2] by 3): no rule to follow, so no silent difference
        raise NotImplementedError("embedding_bag: scale_grad_by_freq=True is not supported by "
                                  "wgrad (docs/differences.md)")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"embedding_bag: per_sample_weights was not None. "
                                  f"per_sample_weights is only supported for mode='sum' (got "
                                  f"mode='{mode}'). Please open a feature request on GitHub.")
    if not weight.is_floating_point():
        raise RuntimeError(f"Expected tensor for argument #1 'weight' to have one of the "
                           f"following scalar types: Half, BFloat16, Float, Double; but got "
                           f"CPU{weight.dtype.scalar_name}Type instead (while checking "
                           f"arguments for embedding_bag)")
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{input.dtype.scalar_name}Tensor instead (while checking "
                           f"arguments for embedding_bag)")
    idx = np.asarray(input._data).astype(np.int64)
    n = weight.shape[0]
    bad = np.flatnonzero((idx < 0) | (idx >= n))
    if bad.size:
        raise RuntimeError(f"Index {bad[0]} of input takes value {idx[bad[0]]} which is not in "
                           f"the valid range [0, {n})")
    if padding_idx is not None and padding_idx < 0:
        padding_idx += n
    in_bag = bags >= 0  # past the last offset (include_last_offset): in no bag
    keep = np.flatnonzero(in_bag & (idx != padding_idx) if padding_idx is not None
                          else in_bag)
    out_shape = (nbags, weight.shape[1])
    out = zeros(out_shape, dtype=weight.dtype, device=weight.device)
    if keep.size == 0:
        return out + 0 * weight.sum()  # every bag empty: zeros, still in the graph
    kept = tensor(keep)
    rows = embedding(input[kept], weight, None, max_norm, norm_type, scale_grad_by_freq, sparse)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[kept].unsqueeze(1).to(rows.dtype)
    seg = tensor(bags[keep])
    if mode == "max":
        return _bag_max(rows, seg, out)
    total = out.index_add(0, seg, rows)
    if mode == "sum":
        return total
    counts = np.bincount(bags[keep], minlength=nbags).astype(np.float64)
    return total / tensor(np.maximum(counts, 1)[:, None], dtype=total.dtype)


def _bag_max(rows, seg, out):
    """Each bag's maximum per dim, its gradient going to the first row that reaches it,
    as torch's ``max_indices`` (scatter_reduce 'amax' would split it between ties)."""
    k, d = rows.shape
    index = seg.unsqueeze(1).expand(k, d)
    with no_grad():
        best = out.scatter_reduce(0, index, rows, "amax", include_self=False)
        at = arange(k).unsqueeze(1).expand(k, d)
        first = where(rows == best[seg], at, k)
        winner = full(out.shape, k, dtype=at.dtype).scatter_reduce(0, index, first, "amin")
    padded = cat([rows, zeros(1, d, dtype=rows.dtype, device=rows.device)])  # empty bag: 0
    return padded.gather(0, winner)


def _bags(offsets, n, include_last_offset):
    if offsets.size and offsets[0] != 0:
        raise RuntimeError(f"offsets[0] has to be 0, i.e., the first sequence in the mini-batch "
                           f"has to start from position 0. However, got {offsets[0]}")
    if offsets.size and offsets[-1] > n:
        raise RuntimeError(f"offsets[-1] can not be greater than input's length {n} but got "
                           f"offsets[-1] of {offsets[-1]}")
    # torch: with include_last_offset the last bag still runs to the end of the input
    starts = offsets[:-1] if include_last_offset else offsets
    ends = np.append(starts[1:], n)
    bags = np.full(n, -1, np.int64)
    for b, (s, e) in enumerate(zip(starts, ends)):
        bags[s:e] = b
    return bags, len(starts)


def _size(t):
    return "torch.Size([" + ", ".join(str(s) for s in t.shape) + "])"


def _type_name(x):
    if isinstance(x, Tensor):
        return "<class 'torch.Tensor'>"
    return str(type(x))
