"""SparseAdam (torch.optim.SparseAdam): its constructor, and torch's error at ``step``.

wgrad has no sparse tensors, so every gradient is dense, and torch's SparseAdam raises
for a dense gradient: ``step`` raises torch's RuntimeError wherever a parameter has a
gradient, and code written for SparseAdam fails as it would in torch with dense
gradients (use Adam).
"""
from .._tensor import Tensor
from ..autograd.grad_mode import enable_grad
from .optimizer import Optimizer

__all__ = ["SparseAdam"]


def _num(x):
    return float(x._data.reshape(())) if isinstance(x, Tensor) else x


class SparseAdam(Optimizer):
    """SparseAdam (torch.optim.SparseAdam): Adam for sparse gradients. wgrad's gradients
    are dense, so ``step`` raises torch's error for a dense gradient; the constructor's
    checks, ``param_groups`` and ``state_dict`` are torch's.

    Example
    -------
    >>> import wgrad
    >>> w = wgrad.zeros(3, requires_grad=True)
    >>> opt = wgrad.optim.SparseAdam([w], lr=0.1)
    >>> w.sum().backward()
    >>> opt.step()
    Traceback (most recent call last):
    ...
    RuntimeError: SparseAdam does not support dense gradients, please consider Adam instead
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, maximize=False):
        if isinstance(lr, Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 < _num(lr):
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        defaults = dict(lr=lr, betas=betas, eps=eps, maximize=maximize)
        super().__init__(params, defaults)
        sparse, cplx = [], []
        for index, group in enumerate(self.param_groups):
            for d_index, p in enumerate(group["params"]):
                if p.is_sparse:
                    sparse.append([index, d_index])
                if p.is_complex():
                    cplx.append([index, d_index])
        if sparse:
            raise ValueError(f"Sparse params at indices {sparse}: SparseAdam requires dense "
                             "parameter tensors")
        if cplx:
            raise ValueError(f"Complex params at indices {cplx}: SparseAdam does not support "
                             "complex parameters")

    def step(self, closure=None):
        """Raise torch's error for a dense gradient (every wgrad gradient is dense) if any
        parameter has a gradient; else return the closure's loss (None without one)."""
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p._grad is not None and not p._grad.is_sparse:
                    raise RuntimeError("SparseAdam does not support dense gradients, please "
                                       "consider Adam instead")
        return loss
