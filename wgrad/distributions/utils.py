"""Helpers shared by the distributions, as torch.distributions.utils."""
import functools
import math
import numbers

from .. import _creation, _dtype, autograd, ops
from .._autograd.grad_mode import enable_grad
from .._tensor import Size, Tensor

__all__ = ["broadcast_all", "logits_to_probs", "clamp_probs", "probs_to_logits",
           "lazy_property", "tril_matrix_to_vec", "vec_to_tril_matrix"]

euler_constant = 0.57721566490153286060  # the Euler-Mascheroni constant


def broadcast_all(*values):
    """``values`` broadcast together as tensors: numbers become tensors of the first
    tensor's dtype and device (the default dtype when all are numbers).

    Example
    -------
    >>> a, b = broadcast_all(wgrad.tensor([1., 2.]), 3)
    >>> b
    tensor([3., 3.])
    """
    if not all(isinstance(v, (Tensor, numbers.Number)) for v in values):
        raise ValueError("Input arguments must all be instances of Number, torch.Tensor or "
                         "objects implementing __torch_function__.")
    first = next((v for v in values if isinstance(v, Tensor)), None)
    options = (dict(dtype=_dtype.get_default_dtype()) if first is None
               else dict(dtype=first.dtype, device=first.device))
    return ops.broadcast_tensors(*(
        v if isinstance(v, Tensor) else _creation.tensor(v, **options) for v in values))


def _standard_normal(shape, dtype, device):
    return _creation.empty(shape, dtype=dtype, device=device).normal_()


def _sum_rightmost(value, dim):
    """``value`` summed over its ``dim`` rightmost dims."""
    if dim == 0:
        return value
    return value.reshape(tuple(value.shape[:-dim]) + (-1,)).sum(-1)


def logits_to_probs(logits, is_binary=False):
    """Probabilities from log-odds (``is_binary``) or unnormalized log-probabilities along
    the last dim."""
    return ops.sigmoid(logits) if is_binary else ops.softmax(logits, dim=-1)


def clamp_probs(probs):
    """``probs`` clamped into ``[eps, 1 - eps]`` (``eps`` of their dtype).

    Example
    -------
    >>> clamp_probs(wgrad.tensor([0.0, 0.5, 1.0]))
    tensor([1.1921e-07, 5.0000e-01, 1.0000e+00])
    """
    eps = _dtype.finfo(probs.dtype).eps
    return probs.clamp(min=eps, max=1 - eps)


def probs_to_logits(probs, is_binary=False):
    """Log-odds (``is_binary``) or log-probabilities of clamped ``probs``."""
    p = clamp_probs(probs)
    return ops.log(p) - ops.log1p(-p) if is_binary else ops.log(p)


class lazy_property:
    """A method computed at its first read (with gradients enabled) and then stored on the
    instance; read on the class it is a property (so a distribution's argument check can
    tell a lazily made parameter)."""

    def __init__(self, wrapped):
        self.wrapped = wrapped
        functools.update_wrapper(self, wrapped)

    def __get__(self, instance, obj_type=None):
        if instance is None:
            return _lazy_property_and_property(self.wrapped)
        with enable_grad():
            value = self.wrapped(instance)
        setattr(instance, self.wrapped.__name__, value)
        return value


class _lazy_property_and_property(lazy_property, property):
    def __init__(self, wrapped):
        property.__init__(self, wrapped)


class _ProbsLogits:
    """A mixin: the events' ``probs`` and ``logits`` (log-odds where ``_binary``, else
    log-probabilities along the last dim), each made from the other at its first use;
    the one given is ``_param``."""
    _binary = True

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=self._binary)

    @lazy_property
    def probs(self):
        return logits_to_probs(self.logits, is_binary=self._binary)

    @property
    def param_shape(self):
        return self._param.size()

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _expanded_probs(self, cls, batch_shape, _instance, *names, **kwargs):
        """``expand``: ``names`` and whichever of probs and logits were made, expanded."""
        made = [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(cls, batch_shape, _instance, *names, *made, **kwargs)
        new._param = getattr(new, made[-1])
        return new


def _tril_mask(n, diag, device):
    r = _creation.arange(n, device=device)
    return r < r.view(-1, 1) + (diag + 1)


def tril_matrix_to_vec(mat, diag=0):
    """The lower-triangular entries (below diagonal ``diag``) of a batch of square
    matrices, row by row."""
    n = mat.shape[-1]
    if diag < -n or diag >= n:
        raise ValueError(f"diag ({diag}) provided is outside [{-n}, {n - 1}].")
    return mat[..., _tril_mask(n, diag, mat.device)]


def vec_to_tril_matrix(vec, diag=0):
    """The lower-triangular matrices (below diagonal ``diag``) whose entries, row by row,
    are ``vec``'s last dim."""
    b = 1 + 2 * diag
    n = (-b + math.sqrt(b ** 2 + 8 * vec.shape[-1] + 4 * abs(diag) * (diag + 1))) / 2
    if round(n) - n > _dtype.finfo(vec.dtype).eps:
        raise ValueError(f"The size of last dimension is {vec.shape[-1]} which cannot be "
                         f"expressed as the lower triangular part of a square D x D matrix.")
    n = round(n)
    mat = vec.new_zeros(Size(tuple(vec.shape[:-1]) + (n, n)))
    mat[..., _tril_mask(n, diag, vec.device)] = vec
    return mat


def _grad(outputs, inputs):
    return autograd.grad(outputs, inputs, create_graph=True)
