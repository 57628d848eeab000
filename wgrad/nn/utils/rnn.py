"""``nn.utils.rnn``: PackedSequence, pack_padded_sequence, pad_packed_sequence, pad_sequence,
pack_sequence, unpad_sequence, unpack_sequence (torch's layouts and messages).

A PackedSequence's ``data`` holds time step 0 of every sequence, then step 1 of those
still running, ... (batch columns sorted by decreasing length); ``batch_sizes[t]`` counts
the sequences running at step ``t``. Packing and unpacking are one ``index_select`` each
with a constant index, so gradients flow through them.
"""
import collections

import numpy as np

from ... import _creation, _dtype
from ..._tensor import Tensor
from ...ops.shape import cat, stack

__all__ = ["PackedSequence", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
           "pack_sequence", "unpad_sequence", "unpack_sequence", "invert_permutation"]

_Base = collections.namedtuple("PackedSequence_",
                               ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])


def _long(values):
    return _creation.tensor(np.asarray(values, np.int64))


def invert_permutation(permutation):
    """The inverse of a permutation given as an index tensor (None stays None).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import invert_permutation
    >>> invert_permutation(wgrad.tensor([2, 0, 1]))
    tensor([1, 2, 0])
    """
    if permutation is None:
        return None
    p = np.asarray(permutation.tolist(), np.int64)
    inv = np.empty_like(p)
    inv[p] = np.arange(len(p))
    return _long(inv)


class PackedSequence(_Base):
    """Packed variable-length sequences (see the module docstring for the layout).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import pack_padded_sequence
    >>> p = pack_padded_sequence(wgrad.ones(3, 2, 1), [3, 1])
    >>> p.batch_sizes
    tensor([2, 1, 1])
    """

    def __new__(cls, data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            raise RuntimeError("PackedSequence needs batch_sizes")
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        return type(self)(data, self.batch_sizes, self.sorted_indices, self.unsorted_indices)

    def _cast(self, dtype):
        return self.to(dtype=dtype)

    def double(self):
        return self._cast(_dtype.float64)

    def float(self):
        return self._cast(_dtype.float32)

    def cpu(self, *args, **kwargs):
        return self

    @property
    def is_cuda(self):
        return False

    def is_pinned(self):
        return False


def _lengths_list(lengths):
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _pack_index(lengths, batch):
    """Rows of a time-major ``(T * B)`` flattening, in packed order."""
    idx = []
    for t in range(max(lengths)):
        idx.extend(t * batch + b for b, n in enumerate(lengths) if n > t)
    return np.asarray(idx, np.int64)


def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences
    with the given ``lengths``; unsorted lengths need ``enforce_sorted=False``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import pack_padded_sequence
    >>> x = wgrad.tensor([[1., 2.], [3., 0.]])
    >>> pack_padded_sequence(x, [2, 1]).data
    tensor([1., 2., 3.])
    """
    lens = _lengths_list(lengths)
    if any(n <= 0 for n in lens):
        raise RuntimeError("Length of all samples has to be greater than 0, but found an "
                           "element in 'lengths' that is <= 0")
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:])):
            raise RuntimeError(
                "`lengths` array must be sorted in decreasing order when `enforce_sorted` is "
                "True. You can pass `enforce_sorted=False` to pack_padded_sequence and/or "
                "pack_sequence to sidestep this requirement if you do not need ONNX "
                "exportability.")
        sorted_indices = None
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
        sorted_indices = _long(order)
        lens = [lens[i] for i in order]
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    t_max, batch = input.shape[0], input.shape[1]
    if max(lens) > t_max:
        raise RuntimeError(f"Expected sequence length to be at most {t_max}, but got "
                           f"{max(lens)}")
    flat = input.reshape((t_max * batch,) + tuple(input.shape[2:]))
    data = flat.index_select(0, _long(_pack_index(lens, batch)))
    batch_sizes = _long([sum(1 for n in lens if n > t) for t in range(max(lens))])
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def _packed_lengths(batch_sizes):
    bs = [int(v) for v in batch_sizes.tolist()]
    return [sum(1 for s in bs if s > b) for b in range(bs[0])] if bs else []


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Inverse of :func:`pack_padded_sequence`: ``(padded, lengths)``, in the original
    batch order.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    >>> p = pack_padded_sequence(wgrad.tensor([[1., 2.], [3., 0.]]), [2, 1])
    >>> pad_packed_sequence(p, padding_value=-1.0)
    (tensor([[ 1.,  2.],
            [ 3., -1.]]), tensor([2, 1]))
    """
    data, batch_sizes = sequence.data, sequence.batch_sizes
    lens = _packed_lengths(batch_sizes)
    t_max = len(batch_sizes.tolist())
    if total_length is not None:
        if total_length < t_max:
            raise ValueError(f"Expected total_length to be at least the length of the longest "
                             f"sequence in input, but got total_length={total_length} and max "
                             f"sequence length being {t_max}")
        t_max = total_length
    batch = len(lens)
    n = data.shape[0]
    src = np.full(t_max * batch, n, np.int64)
    src[_pack_index(lens, batch)] = np.arange(n)
    pad_row = _creation.full((1,) + tuple(data.shape[1:]), padding_value, dtype=data.dtype)
    out = cat([data, pad_row]).index_select(0, _long(src))
    out = out.reshape((t_max, batch) + tuple(data.shape[1:]))
    lengths = _long(lens)
    if sequence.unsorted_indices is not None:
        out = out.index_select(1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices)
    if batch_first:
        out = out.transpose(0, 1)
    return out, lengths


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack variable-length sequences ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with
    ``batch_first``), padding on ``padding_side``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import pad_sequence
    >>> pad_sequence([wgrad.ones(2), wgrad.ones(1)], batch_first=True)
    tensor([[1., 1.],
            [1., 0.]])
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got "
                         f"{padding_side}.")
    if isinstance(sequences, Tensor):
        sequences = sequences.unbind(0)
    sequences = list(sequences)
    t_max = max(s.shape[0] for s in sequences)
    rows = []
    for s in sequences:
        gap = t_max - s.shape[0]
        if gap:
            fill = _creation.full((gap,) + tuple(s.shape[1:]), padding_value, dtype=s.dtype)
            s = cat([s, fill]) if padding_side == "right" else cat([fill, s])
        rows.append(s)
    return stack(rows, 0 if batch_first else 1)


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of variable-length sequences ``(L_i, *)``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import pack_sequence
    >>> pack_sequence([wgrad.tensor([1., 2.]), wgrad.tensor([3.])]).data
    tensor([1., 3., 2.])
    """
    lengths = [s.shape[0] for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths,
                                enforce_sorted=enforce_sorted)


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Split a padded batch back into a list of sequences of the given ``lengths``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import unpad_sequence
    >>> [s.shape[0] for s in unpad_sequence(wgrad.ones(3, 2), [3, 1])]
    [3, 1]
    """
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [padded_sequences[i, :n] for i, n in enumerate(_lengths_list(lengths))]


def unpack_sequence(packed_sequences):
    """The list of sequences in a PackedSequence (original order).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils.rnn import pack_sequence, unpack_sequence
    >>> [s.tolist() for s in unpack_sequence(pack_sequence([wgrad.tensor([1., 2.])]))]
    [[1.0, 2.0]]
    """
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
