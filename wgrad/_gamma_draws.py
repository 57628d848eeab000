"""The sampling primitives of torch.distributions' Gamma family: ``_standard_gamma``,
``_sample_dirichlet`` and the reparameterized gradients ``_standard_gamma_grad`` and
``_dirichlet_grad``.

Draws come from wgrad's generator on the host (NOTE [Random numbers] in _creation.py):
numpy's gamma draws in double, cast to the input's dtype and kept at or above its
smallest normal number, as torch's CPU kernels keep theirs. The gradients are torch's
algorithms (ops/_gamma.py); as in torch, ``_standard_gamma``'s backward is
``grad * _standard_gamma_grad(alpha, draw)``, and neither gradient function nor
``_sample_dirichlet`` has a derivative of its own. This module sits above the op families
(it takes their forward-AD errors), so wgrad/__init__.py imports it after them.
"""
import warnings

import numpy as np

from . import _dtype as D
from ._autograd.forward_ad import get_tangent as _get_tangent
from ._autograd.forward_ad import state as _fw
from ._creation import _finish, _from_host, _host_memory, _lock, _rng, _same_device
from ._tensor import Tensor
from .ops import _gamma
from .ops._out import _ERR_RESIZE, no_derivative_formula
from .ops._primitive import Primitive, check_broadcast
from .ops.elementwise import _no_forward_ad
from .ops.linear_algebra import _no_tangent

__all__ = ["_standard_gamma", "_standard_gamma_grad", "_sample_dirichlet", "_dirichlet_grad"]


def _tensor_args(fn, names, args):
    for pos, (name, t) in enumerate(zip(names, args), 1):
        if not isinstance(t, Tensor):
            raise TypeError(f"{fn}(): argument '{name}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")


def _kernel_dtype(kernel, d):
    """torch's CPU kernels take float32 and float64 only (AT_DISPATCH_FLOATING_TYPES)."""
    if d not in (D.float32, D.float64):
        raise NotImplementedError(f'"{kernel}" not implemented for \'{d.scalar_name}\'')


def _elementwise_args(kernel, args):
    """torch's TensorIterator checks for an output of the first argument's shape and dtype:
    shapes broadcast, one dtype, the resize warning for a first argument of fewer
    elements than the broadcast shape, then the kernel's dtypes."""
    check_broadcast(*[t.shape for t in args])
    d = args[0].dtype
    for t in args[1:]:
        if t.dtype is not d:
            raise RuntimeError(f"Found dtype {t.dtype.scalar_name} but expected "
                               f"{d.scalar_name}")
    shape = tuple(np.broadcast_shapes(*[tuple(t.shape) for t in args]))
    if tuple(args[0].shape) != shape and args[0].numel():
        warnings.warn(_ERR_RESIZE.format(list(args[0].shape), list(shape)), UserWarning,
                      stacklevel=3)
    _kernel_dtype(kernel, d)


def _concentrations(fn, kernel, input):
    """``input``'s dtype and its values in double, checked."""
    _tensor_args(fn, ("input",), (input,))
    _kernel_dtype(kernel, input.dtype)
    alpha = np.asarray(input.detach()._data, dtype=np.float64)
    if (alpha < 0).any():
        raise NotImplementedError(f"{fn}(): wgrad draws for concentrations >= 0 only "
                                  f"(torch's result for a negative one is no gamma draw)")
    return input.dtype, alpha


def _draw(alpha, generator):
    """Gamma(alpha, 1) draws in double, each at least the smallest normal double (numpy's
    draw for alpha 0 or NaN is 0 or NaN, torch's that smallest number)."""
    with _lock, _host_memory(alpha.shape, D.float64):
        g = np.asarray(_rng(generator).standard_gamma(alpha), dtype=np.float64)
    return np.fmax(g, np.finfo(np.float64).tiny)


def _raise_not_implemented(name):
    raise NotImplementedError(f"the derivative for '{name}' is not implemented.")


_standard_gamma_grad_p = Primitive(
    "_standard_gamma_grad", lambda self, output: _gamma.standard_gamma_grad(self, output),
    node_name="StandardGammaGradBackward0", jvp=_no_forward_ad("_standard_gamma_grad"),
    self=lambda grad: _raise_not_implemented("_standard_gamma_grad"))


def _standard_gamma_grad(input, output):
    """d output / d input for draws ``output`` of Gamma(``input``, 1), by torch's
    algorithm (a series for small draws, Rice's saddle point expansion for large
    concentrations, a rational approximation between); not differentiable, as torch.

    Example
    -------
    >>> wgrad._standard_gamma_grad(wgrad.tensor([1.]), wgrad.tensor([1.]))
    tensor([1.1736])
    """
    _tensor_args("_standard_gamma_grad", ("input", "output"), (input, output))
    _elementwise_args("_standard_gamma_grad_cpu", (input, output))
    # torch's node has an edge to ``input`` only: the draw takes no gradient
    return _standard_gamma_grad_p(input, output.detach())


# the draw with torch's node: StandardGammaBackward0, the reparameterized gradient
_standard_gamma_node = Primitive(
    "_standard_gamma", lambda draw, self: draw, node_name="StandardGammaBackward0",
    jvp=_no_forward_ad("_standard_gamma"),
    self=lambda grad, self, result: grad * _standard_gamma_grad(self, result))


def _standard_gamma(input, generator=None):
    """A draw of Gamma(``input``, 1) per element, in ``input``'s dtype; its gradient to
    ``input`` is the reparameterized one, as torch's.

    Example
    -------
    >>> wgrad._standard_gamma(wgrad.ones(2)).shape
    wgrad.Size([2])
    """
    d, alpha = _concentrations("_standard_gamma", "gamma_cpu", input)
    with np.errstate(over="ignore"):  # a draw beyond float32's range is inf, as torch's
        a = np.fmax(_draw(alpha, generator).astype(d.np), np.finfo(d.np).tiny)
    out = _finish(_from_host(np.asarray(a), d.np, fresh=True), False, _same_device(input, None))
    return _standard_gamma_node(out, input) if input.requires_grad or _fw.active else out


_sample_dirichlet_node = Primitive(
    "_sample_dirichlet", lambda draw, self: draw, node_name="NotImplemented",
    jvp=_no_tangent("_sample_dirichlet"), self=no_derivative_formula("_sample_dirichlet"))


def _sample_dirichlet(input, generator=None):
    """A draw of Dirichlet(``input``) along the last dim, in ``input``'s dtype: gamma
    draws in double divided by their sum, each then kept within the dtype's smallest
    normal number and the largest number below 1, as torch's (so all-zero concentrations
    give equal parts). As torch's, its backward raises.

    Example
    -------
    >>> wgrad._sample_dirichlet(wgrad.zeros(2))
    tensor([0.5000, 0.5000])
    """
    d, alpha = _concentrations("_sample_dirichlet", "dirichlet", input)
    g = _draw(alpha, generator)
    with np.errstate(invalid="ignore", over="ignore", under="ignore"):
        p = (g / (g.sum(-1, keepdims=True) if g.ndim else g)).astype(d.np)
    # fmax and fmin: an inf concentration's NaN (inf / inf) is the smallest number too
    p = np.fmin(np.fmax(p, np.finfo(d.np).tiny), np.nextafter(np.ones((), d.np), 0))
    out = _finish(_from_host(np.asarray(p), d.np, fresh=True), False, _same_device(input, None))
    return _sample_dirichlet_node(out, input) if input.requires_grad or _fw.active else out


_dirichlet_grad_p = Primitive("_dirichlet_grad", _gamma.dirichlet_grad)
_dirichlet_grad_node = Primitive(
    "_dirichlet_grad_node", lambda value, x, alpha, total: value, node_name="NotImplemented",
    scalar_overload=True, jvp=_no_tangent("_dirichlet_grad"),
    x=no_derivative_formula("_dirichlet_grad"), alpha=no_derivative_formula("_dirichlet_grad"),
    total=no_derivative_formula("_dirichlet_grad"))


def _dirichlet_grad(x, alpha, total):
    """torch's scaled reparameterized gradient of a Beta(``alpha``, ``total - alpha``)
    draw ``x`` in ``alpha``, -(d/d alpha cdf(x)) / pdf(x) / (1 - x), which its Dirichlet
    gradient is built from; torch's algorithm, elementwise and broadcast. Its backward
    raises, as torch's.

    Example
    -------
    >>> wgrad._dirichlet_grad(wgrad.tensor([.5]), wgrad.tensor([1.]), wgrad.tensor([2.]))
    tensor([0.6931])
    """
    _tensor_args("_dirichlet_grad", ("x", "alpha", "total"), (x, alpha, total))
    _elementwise_args("_dirichlet_grad_cpu", (x, alpha, total))
    out = _dirichlet_grad_p(x.detach(), alpha.detach(), total.detach())
    linked = [t if t.requires_grad or _fw.active and _get_tangent(t) is not None else 0
              for t in (x, alpha, total)]
    if not any(isinstance(t, Tensor) for t in linked):
        return out
    # torch's node has edges to the inputs that require grad only: the others are given
    # as numbers, which a scalar_overload primitive gives no edge (NOTE [Node edges])
    return _dirichlet_grad_node(out, *linked)
