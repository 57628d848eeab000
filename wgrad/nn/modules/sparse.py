"""Embedding: a lookup table of vectors."""
from ..._creation import empty
from ...autograd.grad_mode import no_grad
from .. import functional as F
from .. import init
from ..parameter import Parameter
from .module import Module

__all__ = ["Embedding", "EmbeddingBag"]


def _padding_idx(padding_idx, num_embeddings, name):
    """``padding_idx`` checked against the table and made non-negative (torch's
    AssertionError names it ``name``: Embedding and EmbeddingBag spell it differently)."""
    if padding_idx is None:
        return None
    if not -num_embeddings <= padding_idx < num_embeddings:
        raise AssertionError(f"{name} must be within num_embeddings")
    return padding_idx + num_embeddings if padding_idx < 0 else padding_idx


class Embedding(Module):
    """A table of ``num_embeddings`` vectors of size ``embedding_dim``, indexed by integer
    tensors. Weights start as N(0, 1); the ``padding_idx`` row starts at zero and gets no
    gradient; ``max_norm`` renormalises looked-up rows in place.

    Example
    -------
    >>> import wgrad
    >>> emb = wgrad.nn.Embedding(10, 3, padding_idx=0)
    >>> emb(wgrad.tensor([[0, 2], [4, 5]])).shape
    wgrad.Size([2, 2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, "Padding_idx")
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.sparse = sparse
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device,
                                          dtype=dtype), requires_grad=not _freeze)
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        self._fill_padding_idx_with_zero()

    def _fill_padding_idx_with_zero(self):
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx].fill_(0)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm,
                           self.norm_type, self.scale_grad_by_freq, self.sparse)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += ", scale_grad_by_freq=True"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose table is ``embeddings`` (2-D), frozen unless ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        return cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                   _freeze=freeze, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


class EmbeddingBag(Module):
    """Sums, means or maxima of bags of embeddings (``F.embedding_bag``): ``forward(input,
    offsets=None, per_sample_weights=None)`` takes (B, L) bags or a 1-D input cut at
    ``offsets``. Weights start as N(0, 1); the ``padding_idx`` row starts at zero and its
    entries are left out of their bags.

    Example
    -------
    >>> import wgrad
    >>> bag = wgrad.nn.EmbeddingBag(10, 3, mode="sum")
    >>> bag(wgrad.tensor([1, 2, 4, 5]), wgrad.tensor([0, 2])).shape
    wgrad.Size([2, 3])
    """

    def __init__(self, num_embeddings, embedding_dim, max_norm=None, norm_type=2.0,
                 scale_grad_by_freq=False, mode="mean", sparse=False, _weight=None,
                 include_last_offset=False, padding_idx=None, device=None, dtype=None):
        super().__init__()
        self.num_embeddings = num_embeddings
        self.embedding_dim = embedding_dim
        self.max_norm = max_norm
        self.norm_type = norm_type
        self.scale_grad_by_freq = scale_grad_by_freq
        self.padding_idx = _padding_idx(padding_idx, num_embeddings, "padding_idx")
        if _weight is None:
            self.weight = Parameter(empty(num_embeddings, embedding_dim, device=device,
                                          dtype=dtype))
            self.reset_parameters()
        else:
            if list(_weight.shape) != [num_embeddings, embedding_dim]:
                raise AssertionError("Shape of weight does not match num_embeddings and "
                                     "embedding_dim")
            self.weight = Parameter(_weight)
        self.mode = mode
        self.sparse = sparse
        self.include_last_offset = include_last_offset

    reset_parameters = Embedding.reset_parameters
    _fill_padding_idx_with_zero = Embedding._fill_padding_idx_with_zero

    def forward(self, input, offsets=None, per_sample_weights=None):
        return F.embedding_bag(input, self.weight, offsets, self.max_norm, self.norm_type,
                               self.scale_grad_by_freq, self.mode, self.sparse,
                               per_sample_weights, self.include_last_offset, self.padding_idx)

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        s += f", mode={self.mode!r}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        return s

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, max_norm=None, norm_type=2.0,
                        scale_grad_by_freq=False, mode="mean", sparse=False,
                        include_last_offset=False, padding_idx=None):
        """An EmbeddingBag whose table is ``embeddings`` (2-D), frozen unless
        ``freeze=False``."""
        if embeddings.dim() != 2:
            raise AssertionError("Embeddings parameter is expected to be 2-dimensional")
        rows, cols = embeddings.shape
        bag = cls(num_embeddings=rows, embedding_dim=cols, _weight=embeddings,
                  max_norm=max_norm, norm_type=norm_type,
                  scale_grad_by_freq=scale_grad_by_freq, mode=mode, sparse=sparse,
                  include_last_offset=include_last_offset, padding_idx=padding_idx)
        bag.weight.requires_grad = not freeze
        return bag

