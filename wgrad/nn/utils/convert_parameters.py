"""parameters_to_vector, vector_to_parameters."""
from ..._tensor import Tensor
from ...ops import cat
from ..modules.module import _typename

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """All ``parameters`` flattened and concatenated into one 1-D tensor.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils import parameters_to_vector
    >>> parameters_to_vector([wgrad.ones(2, 2), wgrad.zeros(3)])
    tensor([1., 1., 1., 1., 0., 0., 0.])
    """
    return cat([p.reshape(-1) for p in parameters])


def vector_to_parameters(vec, parameters):
    """Write consecutive slices of the 1-D ``vec`` into the data of ``parameters``.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.nn.utils import vector_to_parameters
    >>> p = wgrad.nn.Parameter(wgrad.zeros(2))
    >>> vector_to_parameters(wgrad.tensor([1., 2.]), [p])
    >>> p
    Parameter containing:
    tensor([1., 2.], requires_grad=True)
    """
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected torch.Tensor, but got: {_typename(vec)}")
    pointer = 0
    for p in parameters:
        n = p.numel()
        p.data = vec[pointer:pointer + n].reshape(p.shape).data
        pointer += n
