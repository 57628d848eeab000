"""Gradient clipping: clip_grad_norm_ (complex gradients by |g|), clip_grad_value_."""
import math
import warnings

from ... import _dtype as D
from ..._creation import tensor
from ..._tensor import Tensor
from ...autograd.grad_mode import no_grad
from ...ops import clamp, stack, vector_norm

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_"]


def _tensors(parameters):
    return [parameters] if isinstance(parameters, Tensor) else list(parameters)


def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The ``norm_type``-norm of all ``tensors`` together (complex entries by modulus).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils import get_total_norm
    >>> get_total_norm([wgrad.tensor([3.]), wgrad.tensor([4.])])
    tensor(5.)
    """
    tensors = [t for t in _tensors(tensors) if t is not None]
    norm_type = float(norm_type)
    if not tensors:
        return tensor(0.0)
    with no_grad():
        norms = [vector_norm(t, norm_type) for t in tensors]
        dt = norms[0].dtype
        for n in norms[1:]:
            dt = D.promote_types(dt, n.dtype)
        total = vector_norm(stack([n.to(dt) for n in norms]), norm_type)
    if error_if_nonfinite and not math.isfinite(total.item()):
        raise RuntimeError(f"The total norm of order {norm_type} for gradients from "
                           f"`parameters` is non-finite, so it cannot be clipped. To disable "
                           f"this error and scale the gradients by the non-finite norm "
                           f"anyway, set `error_if_nonfinite=False`")
    return total


def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale the gradients of ``parameters`` in place by ``min(1, max_norm / (total_norm +
    1e-6))``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils import clip_grads_with_norm_
    >>> p = wgrad.nn.Parameter(wgrad.zeros(2))
    >>> p.grad = wgrad.tensor([3., 4.])
    >>> clip_grads_with_norm_([p], 1.0, wgrad.tensor(5.))
    >>> p.grad
    tensor([0.6000, 0.8000])
    """
    grads = [p.grad for p in _tensors(parameters) if p.grad is not None]
    if not grads:
        return
    with no_grad():
        coef = clamp(float(max_norm) / (total_norm + 1e-6), max=1.0)
        for g in grads:
            g.mul_(coef.to(g.dtype.to_real()))


def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale the gradients of ``parameters`` in place so that their total
    ``norm_type``-norm (complex gradients by |g|; ``inf`` for the max) is at most
    ``max_norm``; returns the total norm before clipping. ``foreach`` is accepted and
    ignored.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils import clip_grad_norm_
    >>> p = wgrad.nn.Parameter(wgrad.zeros(2, dtype=wgrad.cfloat))
    >>> p.grad = wgrad.tensor([3 + 4j, 0j])
    >>> clip_grad_norm_(p, 1.0)
    tensor(5.)
    >>> p.grad
    tensor([0.6000+0.8000j, 0.0000+0.0000j])
    """
    params = _tensors(parameters)
    grads = [p.grad for p in params if p.grad is not None]
    total = get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    clip_grads_with_norm_(params, max_norm, total, foreach)
    return total


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated alias of ``clip_grad_norm_`` (torch warns the same way)."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient of ``parameters`` in place to ``[-clip_value, clip_value]``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils import clip_grad_value_
    >>> p = wgrad.nn.Parameter(wgrad.zeros(2))
    >>> p.grad = wgrad.tensor([-3., 0.5])
    >>> clip_grad_value_(p, 1.0)
    >>> p.grad
    tensor([-1.0000,  0.5000])
    """
    clip_value = float(clip_value)
    with no_grad():
        for p in _tensors(parameters):
            if p.grad is not None:
                if p.grad.is_complex():
                    raise NotImplementedError("clamp is not supported for complex types")
                p.grad.clamp_(min=-clip_value, max=clip_value)
