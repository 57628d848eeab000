"""Reductions: sum, mean, prod, amax/amin, max/min, var/std, logsumexp, cumsum/cumprod,
diff, trapezoid, norms; non-differentiable argmax/argmin, count_nonzero, all, any;
statistics: cov, corrcoef, quantile/nanquantile, mode, msort, renorm, combinations and the
non-differentiable histc.

Every formula follows NOTE [Conjugate Wirtinger convention] in _primitive.py. Reductions
that pick elements (amax, max(), vector_norm(ord=inf)) share the gradient evenly among
ties, as torch; max(dim)/min(dim) send it to the returned index only.
"""
import builtins
import collections
import functools
import itertools
import math
import warnings

import jax
import jax.numpy as jnp
import numpy as np

from .. import _dtype as D
from .._tensor import Tensor, _make, _wrap_dim
from .._autograd.grad_mode import _state
from ._out import _CPP, no_derivative
from ._lazy_disk import kept
from ._primitive import Primitive, name_by_op
from .indexing import _gather_prim, scatter_add
from . import elementwise
from . import linear_algebra as linalg  # imports this module too: used at call time
from .elementwise import where
from .shape import _dims, cat, expand, flip, movedim, narrow, reshape, unsqueeze

__all__ = ["sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var",
           "std", "var_mean", "std_mean", "logsumexp", "cumsum", "cumprod", "diff",
           "trapezoid", "trapz", "cumulative_trapezoid", "norm", "vector_norm",
           "count_nonzero", "all", "any", "nansum",
           "nanmean", "cummax", "cummin", "logcumsumexp", "aminmax", "cov", "corrcoef",
           "quantile", "nanquantile", "mode", "msort", "histc", "renorm", "combinations",
           "histogram", "histogramdd", "gradient"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ("sum", "mean", "prod", "amax", "amin", "max", "min", "argmax", "argmin", "var",
           "std", "logsumexp", "cumsum", "cumprod", "diff", "norm", "count_nonzero", "all",
           "any", "nansum", "nanmean", "cummax", "cummin", "logcumsumexp", "aminmax", "cov",
           "corrcoef", "quantile", "nanquantile", "mode", "msort", "histc", "renorm",
           "histogram")


def _axes(dim, ndim):
    """Normalize ``dim`` (None, int or sequence) to a sorted tuple, or None for all."""
    if dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0):
        return None
    axes = tuple(sorted(_dims(dim, ndim, unique=True)))
    # a 0-d tensor accepts dim 0 / -1 and reduces over "everything"
    return None if ndim == 0 else axes


def _unreduce(grad, self_shape, dim, keepdim):
    """Broadcast a reduced gradient back to ``self_shape``."""
    if not keepdim and dim is not None:
        shp = list(grad.shape)
        for d in dim:
            shp.insert(d, 1)
        grad = reshape(grad, tuple(shp))
    return expand(grad, tuple(self_shape))  # torch: a 0-d grad expands without a view


def _numel_of(shape, dim):
    n = 1
    for i, s in enumerate(shape):
        if dim is None or i in dim:
            n *= s
    return n


def _is_float(t):
    d = t.dtype
    return d.is_floating_point or d.is_complex


def _const(value, shape, dtype):
    return _make(jnp.full(shape, value, dtype))


def _rcumsum(x, dim):
    """Reversed cumulative sum: out_i = sum_{j >= i} x_j."""
    return flip(cumsum(flip(x, dim), dim), dim)


def _results(fields, name):
    cls = collections.namedtuple(name, fields)
    cls.__module__ = "wgrad.return_types"
    cls.__repr__ = _results_repr
    return cls


def _results_repr(self):
    """torch.return_types' repr: one field a line."""
    fields = ",\n".join(f"{k}={v!r}" for k, v in zip(self._fields, self))
    return f"{type(self).__module__}.{type(self).__name__}(\n{fields})"


_MaxMin = {n: _results(["values", "indices"], n) for n in ("max", "min", "cummax", "cummin")}
_AminMax = _results(["min", "max"], "aminmax")


# ======================================================================================
# sum, mean, prod
# ======================================================================================

# ``op="dim"``: the overload with a dim argument, which torch names SumBackward1 (and so
# for mean and prod)
_sum = Primitive(
    "sum", lambda self, *, dim, keepdim, dtype, op=None: jnp.sum(self, axis=dim,
                                                                 keepdims=keepdim, dtype=dtype),
    node_name_of=name_by_op({"dim": "SumBackward1"}),
    self=lambda grad, self_shape, dim, keepdim: _unreduce(grad, self_shape, dim, keepdim))


def sum(input, dim=None, keepdim=False, *, dtype=None):
    """Sum over ``dim`` (all dims by default); bools and ints sum as int64, as torch.

    Example
    -------
    >>> wgrad.sum(wgrad.tensor([[1., 2.], [3., 4.]]), dim=0)
    tensor([4., 6.])
    """
    if dtype is None:
        d = input.dtype
        dtype = D.default_int() if not (d.is_floating_point or d.is_complex) else d
    else:
        dtype = D.as_dtype(dtype)
    if dim is None:
        return _sum(input, dim=None, keepdim=bool(keepdim), dtype=dtype.np)
    return _sum(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim), dtype=dtype.np,
                op="dim")


def divide_by_count(s, n):
    """``s / n`` for a count ``n`` as torch's ``sum / n``: a true quotient for real ``s``
    (NOTE [Division by a broadcast divisor]: jnp.mean's product with ``1 / n`` differed in
    33% of float32 means), the product with ``1 / n`` for complex ``s``, as torch's."""
    if jnp.iscomplexobj(s):
        return s * jnp.asarray(1.0 / n, s.dtype) if n else s / n
    return elementwise.true_quotient(s, jnp.asarray(n, s.dtype))


def true_mean(x, axis=None, keepdims=False):
    """jnp.mean with torch's true division by the count."""
    return divide_by_count(jnp.sum(x, axis=axis, keepdims=keepdims),
                           _numel_of(x.shape, axis))


_mean = Primitive(
    "mean", lambda self, *, dim, keepdim, op=None: true_mean(self, dim, keepdim),
    node_name_of=name_by_op({"dim": "MeanBackward1"}),
    self=lambda grad, self_shape, dim, keepdim: _unreduce(
        grad, self_shape, dim, keepdim) / _numel_of(self_shape, dim))


def mean(input, dim=None, keepdim=False, *, dtype=None):
    """Mean over ``dim`` (all dims by default); needs a floating or complex dtype.

    Example
    -------
    >>> wgrad.mean(wgrad.tensor([1., 2., 3., 6.]))
    tensor(3.)
    """
    if dtype is not None:
        input = input.to(dtype)
    d = input.dtype
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either "
                           f"a floating point or complex dtype. Got: {d.scalar_name}")
    if dim is None:
        return _mean(input, dim=None, keepdim=bool(keepdim))
    return _mean(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim), op="dim")


# torch's formula: the gradient times ``self == self`` (an all-NaN nanmean gives nan)
_nansum = Primitive(
    "nansum", lambda self, *, dim, keepdim, dtype: jnp.nansum(self, axis=dim, keepdims=keepdim,
                                                              dtype=dtype),
    self=lambda grad, self, dim, keepdim: _nansum_backward(
        _unreduce(grad, self.shape, dim, keepdim), self))


def _nansum_backward(g, self):
    # ``g * 0`` at a NaN, not a select of 0 (which XLA makes of ``g * mask``): inf -> nan
    return where(self.isnan(), g * 0, g)


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """:func:`sum` treating NaN as 0 (no gradient there).

    Example
    -------
    >>> wgrad.nansum(wgrad.tensor([1., float("nan"), 2.]))
    tensor(3.)
    """
    if input.is_complex():
        raise RuntimeError("nansum on CPU does not support complex inputs")
    if dtype is None:
        dtype = input.dtype if _is_float(input) else D.default_int()
    else:
        dtype = D.as_dtype(dtype)
    return _nansum(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim), dtype=dtype.np)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """:func:`mean` of the non-NaN elements (nan where there are none)."""
    if not _is_float(input):
        raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                           f"dtype but got {input.dtype.scalar_name}")
    count = (~input.isnan()).sum(dim, keepdim)
    return nansum(input, dim, keepdim, dtype=dtype) / count


def _prod_others(x, d):
    """prod_{j != i} x_j along ``d`` without division (exact with any number of zeros):
    an exclusive cumprod from the left times one from the right (torch's
    prod_safe_zeros_backward)."""
    n = x.shape[d]
    if n <= 1:
        return _const(1, tuple(x.shape), x._data.dtype)
    shp = list(x.shape)
    shp[d] = 1
    ones = _const(1, tuple(shp), x._data.dtype)
    left = cumprod(cat([ones, narrow(x, d, 0, n - 1)], d), d)
    right = flip(cumprod(cat([ones, flip(narrow(x, d, 1, n - 1), d)], d), d), d)
    return left * right


def _prod_backward(grad, self, dim, keepdim):
    g = _unreduce(grad, self.shape, dim, keepdim)
    if self.ndim == 0:
        return g
    if dim is None:
        others = reshape(_prod_others(reshape(self, (-1,)), 0), tuple(self.shape))
    else:
        others = _prod_others(self, dim[0])
    return g * others.conj()


_prod = Primitive(
    "prod", lambda self, *, dim, keepdim, op=None: jnp.prod(self, axis=dim, keepdims=keepdim),
    node_name_of=name_by_op({"dim": "ProdBackward1"}),
    self=_prod_backward)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """Product over one ``dim`` (all elements by default); ints multiply as int64.

    The gradient is exact with zeros in the input (one or several), also twice.

    Example
    -------
    >>> wgrad.prod(wgrad.tensor([[1., 2.], [3., 4.]]), 1)
    tensor([ 2., 12.])
    """
    if dim is not None and not isinstance(dim, int):
        raise TypeError(f"prod(): argument 'dim' must be int, not {type(dim).__name__}")
    if dtype is not None:
        input = input.to(dtype)
    elif not _is_float(input):
        input = input.to(D.default_int())
    axes = None if dim is None else _axes(dim, input.ndim)
    if dim is None:
        return _prod(input, dim=None, keepdim=False)
    return _prod(input, dim=axes, keepdim=bool(keepdim), op="dim")


# ======================================================================================
# amax/amin, max/min, argmax/argmin
# ======================================================================================

def _even_backward(grad, self, result, dim, keepdim):
    # ties share the gradient evenly (torch's scale_grad_by_count / evenly_distribute)
    r = _unreduce(result, self.shape, dim, keepdim)
    mask = (self == r).to(self.dtype)
    count = mask.sum(dim, keepdim=True)
    return _unreduce(grad, self.shape, dim, keepdim) * mask / count


_amax = Primitive("amax", lambda self, *, dim, keepdim: jnp.max(self, axis=dim,
                                                                   keepdims=keepdim),
                  self=_even_backward)
_amin = Primitive("amin", lambda self, *, dim, keepdim: jnp.min(self, axis=dim,
                                                                   keepdims=keepdim),
                  self=_even_backward)
def _evenly_distribute(grad, self, result):
    # max()/min() of all elements: a NaN result shares the gradient among the NaNs (torch's
    # evenly_distribute_backward; amax/amin's scale_grad_by_count gives NaN there)
    mask = (self == result) | (self.isnan() & result.isnan())
    return grad * mask.to(grad.dtype) / mask.sum().to(grad.dtype)


_max_all = Primitive("max", lambda self: jnp.max(self), node_name="MaxBackward1",
                     self=_evenly_distribute)
_min_all = Primitive("min", lambda self: jnp.min(self), node_name="MinBackward1",
                     self=_evenly_distribute)


def _check_nonempty(name, input, axes):
    for a in (range(input.ndim) if axes is None else axes):
        if input.shape[a] == 0:
            raise IndexError(f"{name}(): Expected reduction dim {a} to have non-zero size.")


def _amaxmin(name, prim, input, dim, keepdim):
    if input.is_complex():
        raise NotImplementedError(f"\"{name}_values_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    axes = _axes(dim, input.ndim)
    _check_nonempty(name.replace("max", "amax").replace("min", "amin"), input, axes)
    return prim(input, dim=axes, keepdim=bool(keepdim))


def amax(input, dim=(), keepdim=False):
    """Maximum over ``dim`` (all dims by default); tied maxima share the gradient evenly.

    Example
    -------
    >>> wgrad.amax(wgrad.tensor([[1., 5.], [7., 2.]]), dim=1)
    tensor([5., 7.])
    """
    return _amaxmin("max", _amax, input, dim, keepdim)


def amin(input, dim=(), keepdim=False):
    """Minimum over ``dim`` (all dims by default); tied minima share the gradient evenly."""
    return _amaxmin("min", _amin, input, dim, keepdim)


def _max_dim_backward(grads, results, self_shape, dim, keepdim):
    grad, idx = grads[0], results[1]
    if len(self_shape) == 0:
        return grad
    if not keepdim:
        grad, idx = unsqueeze(grad, dim), unsqueeze(idx, dim)
    shp = [1] * len(self_shape)
    shp[dim] = self_shape[dim]
    pos = _make(jnp.arange(self_shape[dim]).reshape(shp))
    return where(idx == pos, grad, 0.)


def _argfn(fn):
    def f(self, *, dim, keepdim):
        if self.ndim == 0:
            return jnp.zeros((), jnp.int64 if D.X64_ENABLED else jnp.int32)
        return fn(self, axis=dim, keepdims=keepdim)
    return f


def _max_dim_fwd(fn, argfn):
    def f(self, *, dim, keepdim):
        if self.ndim == 0:
            return self, jnp.zeros((), D.default_int().np)
        return fn(self, axis=dim, keepdims=keepdim), argfn(self, axis=dim, keepdims=keepdim)
    return f


_max_dim = Primitive("max", _max_dim_fwd(jnp.max, jnp.argmax), nout=2, nondiff_outputs=(1,),
                     node_name="MaxBackward0", self=_max_dim_backward)
_min_dim = Primitive("min", _max_dim_fwd(jnp.min, jnp.argmin), nout=2, nondiff_outputs=(1,),
                     node_name="MinBackward0", self=_max_dim_backward)


def _maxmin(name, all_prim, dim_prim, input, dim, keepdim):
    if isinstance(dim, Tensor):
        return getattr(elementwise, "maximum" if name == "max" else "minimum")(input, dim)
    if dim is None:
        if input.is_complex():
            raise NotImplementedError(f"\"{name}_all\" not implemented for "
                                      f"'{input.dtype.scalar_name}'")
        if input.numel() == 0:
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f"argument.")
        return all_prim(input)
    if input.is_complex():
        raise RuntimeError(f"{name}(): does not support complex input")
    d = _wrap_dim(dim, input.ndim)
    if input.ndim and input.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    v, i = dim_prim(input, dim=d, keepdim=bool(keepdim))
    return _MaxMin[name](v, i)


def max(input, dim=None, keepdim=False):
    """``max(input)``: the largest element (ties share the gradient evenly);
    ``max(input, dim, keepdim=False)``: ``(values, indices)``, the gradient going to the
    returned index only; ``max(input, other)``: ``maximum``.

    Example
    -------
    >>> wgrad.max(wgrad.tensor([[1., 5.], [7., 2.]]), 1)
    wgrad.return_types.max(
    values=tensor([5., 7.]),
    indices=tensor([1, 0]))
    """
    return _maxmin("max", _max_all, _max_dim, input, dim, keepdim)


def min(input, dim=None, keepdim=False):
    """The smallest element, or ``(values, indices)`` along ``dim``; see :func:`max`."""
    return _maxmin("min", _min_all, _min_dim, input, dim, keepdim)


def aminmax(input, *, dim=None, keepdim=False):
    """``(amin, amax)`` over ``dim`` (all elements by default), a named tuple; ties share
    the gradient evenly.

    Example
    -------
    >>> wgrad.aminmax(wgrad.tensor([3., 1., 2.]))
    wgrad.return_types.aminmax(
    min=tensor(1.),
    max=tensor(3.))
    """
    if input.is_complex():
        raise NotImplementedError(f"\"aminmax_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    if dim is None:
        if input.numel() == 0:
            raise RuntimeError("aminmax(): cannot compute aminmax over an empty dimension as "
                               "the operation has no identity.")
        dim = ()
    else:
        d = _wrap_dim(dim, input.ndim)
        if input.ndim and input.shape[d] == 0:
            raise IndexError(f"aminmax: Expected reduction dim {d} to have non-zero size.")
    return _AminMax(_amin(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim)),
                    _amax(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim)))


_argmax = Primitive("argmax", _argfn(jnp.argmax))
_argmin = Primitive("argmin", _argfn(jnp.argmin))


def _arg(name, prim, input, dim, keepdim):
    if input.is_complex():
        raise RuntimeError(f"{name}(): does not support complex input")
    if dim is None:
        out = prim(reshape(input, (-1,)), dim=0, keepdim=False)
        return reshape(out, (1,) * input.ndim) if keepdim else out
    return prim(input, dim=_wrap_dim(dim, input.ndim), keepdim=bool(keepdim))


def argmax(input, dim=None, keepdim=False):
    """Index of the largest element (of the flattened input when ``dim`` is None).

    Example
    -------
    >>> wgrad.argmax(wgrad.tensor([[1., 5.], [7., 2.]]), dim=1)
    tensor([1, 0])
    """
    _arg_no_bool("argmax", input)
    return _arg("argmax", _argmax, input, dim, keepdim)


def argmin(input, dim=None, keepdim=False):
    """Index of the smallest element (of the flattened input when ``dim`` is None)."""
    _arg_no_bool("argmin", input)
    return _arg("argmin", _argmin, input, dim, keepdim)


def _arg_no_bool(name, input):
    if input.dtype is D.bool:
        raise RuntimeError(f"{name}(): does not support bool input")



# ======================================================================================
# var, std, logsumexp
# ======================================================================================

def _var_backward(grad, self, dim, correction, keepdim):
    n = builtins.max(0, _numel_of(self.shape, dim) - correction)
    centered = self - mean(self, dim, keepdim=True)
    return (2.0 / n) * _unreduce(grad, self.shape, dim, keepdim) * centered


def _std_backward(grad, self, result, dim, correction, keepdim):
    # torch's std_backward: a zero std gets gradient 0, not nan
    g = where(result == 0, 0., grad / (2 * result))
    return _var_backward(g, self, dim, correction, keepdim)


def _var_fwd(self, *, dim, correction, keepdim):
    m = jnp.mean(self, axis=dim, keepdims=True)
    c = self - m
    s = jnp.sum((c * jnp.conj(c)).real if jnp.iscomplexobj(c) else c * c, axis=dim,
                keepdims=keepdim)
    # torch clamps the degrees of freedom at 0: inf (or nan) rather than a negative value
    return s / builtins.max(0, _numel_of(self.shape, dim) - correction)


_var = Primitive("var", _var_fwd, self=_var_backward)
_std = Primitive("std", lambda self, *, dim, correction, keepdim: jnp.sqrt(
    _var_fwd(self, dim=dim, correction=correction, keepdim=keepdim)), self=_std_backward)


def _var_args(name, input, dim, unbiased, keepdim, correction):
    if not _is_float(input):
        raise RuntimeError("std and var only support floating point and complex dtypes")
    if isinstance(dim, bool):  # legacy var(input, unbiased)
        dim, unbiased = None, dim
    if unbiased is not None and correction is not None:
        raise RuntimeError(f"{name}: cannot specify both 'unbiased' and 'correction'")
    if correction is None:
        correction = 1 if unbiased is None or unbiased else 0
    if _numel_of(tuple(input.shape), _axes(dim, input.ndim)) - correction <= 0:
        warnings.warn(f"{name}(): degrees of freedom is <= 0. Correction should be strictly "
                      f"less than the reduction factor (input numel divided by output "
                      f"numel).", UserWarning, stacklevel=3)
    return dict(dim=_axes(dim, input.ndim), correction=correction, keepdim=bool(keepdim))


def var(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Variance ``sum |x - mean|^2 / (N - correction)`` over ``dim``; complex input gives a
    real output. ``unbiased`` is the legacy spelling of ``correction`` 1 or 0.

    Example
    -------
    >>> wgrad.var(wgrad.tensor([1., 2., 3., 4.]))
    tensor(1.6667)
    """
    return _var(input, **_var_args("var", input, dim, unbiased, keepdim, correction))


def std(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """Standard deviation, the square root of :func:`var` (same arguments)."""
    return _std(input, **_var_args("std", input, dim, unbiased, keepdim, correction))


# one node with two outputs, as torch's VarMeanBackward0 / StdMeanBackward0 (a hook on it
# sees both gradients)
def _mean_part(grad, self, dim, keepdim):
    return _unreduce(grad, self.shape, dim, keepdim) / _numel_of(self.shape, dim)


_var_mean = Primitive(
    "var_mean", lambda self, *, dim, correction, keepdim: (
        _var_fwd(self, dim=dim, correction=correction, keepdim=keepdim),
        true_mean(self, dim, keepdim)), nout=2,
    self=lambda grads, self, dim, correction, keepdim: _var_backward(
        grads[0], self, dim, correction, keepdim) + _mean_part(grads[1], self, dim, keepdim))
_std_mean = Primitive(
    "std_mean", lambda self, *, dim, correction, keepdim: (
        jnp.sqrt(_var_fwd(self, dim=dim, correction=correction, keepdim=keepdim)),
        true_mean(self, dim, keepdim)), nout=2,
    self=lambda grads, self, results, dim, correction, keepdim: _std_backward(
        grads[0], self, results[0], dim, correction, keepdim) + _mean_part(
            grads[1], self, dim, keepdim))


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(var(input, ...), mean(input, dim, keepdim))``."""
    return _var_mean(input, **_var_args("var_mean", input, dim, unbiased, keepdim, correction))


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """``(std(input, ...), mean(input, dim, keepdim))``."""
    return _std_mean(input, **_var_args("std_mean", input, dim, unbiased, keepdim, correction))


def _logsumexp_fwd(self, *, dim, keepdim):
    if not jnp.iscomplexobj(self):
        return jax.nn.logsumexp(self, axis=dim, keepdims=keepdim)
    m = jnp.max(self.real, axis=dim, keepdims=True)
    m = jnp.where(jnp.isfinite(m), m, 0)
    out = jnp.log(jnp.sum(jnp.exp(self - m), axis=dim, keepdims=True)) + m
    return out if keepdim else jnp.squeeze(out, dim)


_logsumexp = Primitive(
    "logsumexp", _logsumexp_fwd,
    self=lambda grad, self, result, dim, keepdim: _unreduce(grad, self.shape, dim, keepdim) * (
        self - _unreduce(result, self.shape, dim, keepdim)).exp().conj())


def logsumexp(input, dim, keepdim=False):
    """``log(sum(exp(input), dim))`` computed stably; integer input computes in the
    default float dtype.

    Example
    -------
    >>> wgrad.logsumexp(wgrad.tensor([0., 0.]), 0)
    tensor(0.6931)
    """
    if not _is_float(input):
        input = input.to(D.get_default_dtype())
    return _logsumexp(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim))


# ======================================================================================
# cumsum, cumprod, diff, trapezoid
# ======================================================================================

_cumsum = Primitive("cumsum", lambda self, *, dim: jnp.cumsum(self, axis=dim),
                    self=lambda grad, dim: _rcumsum(grad, dim))


def _cum_dtype(input, dtype):
    if dtype is not None:
        return input.to(dtype)
    return input if _is_float(input) else input.to(D.default_int())


def cumsum(input, dim, *, dtype=None):
    """Cumulative sum along ``dim``; bools and ints accumulate as int64, as torch.

    Example
    -------
    >>> wgrad.cumsum(wgrad.tensor([1., 2., 3.]), 0)
    tensor([1., 3., 6.])
    """
    d = _wrap_dim(dim, input.ndim)
    input = _cum_dtype(input, dtype)
    if input.ndim == 0:
        return input.clone()
    return _cumsum(input, dim=d)


def _cumprod_backward(grad, self, result, dim):
    # NOTE [cumprod gradient with zeros]
    # dy_j/dx_i = prod_{l <= j, l != i} x_l. Before the first zero k the usual
    # rcumsum(g * y) / x holds; at k the gradient is E_k * sum_{j >= k} g_j Q_j with E the
    # product before k and Q the product over (k, j]; after k it is 0. That masked O(n)
    # form is exact to first order; when the gradient itself is recorded (create_graph)
    # the O(n^2) product form is used, which stays exact when differentiated again.
    if self.shape[dim] <= 1:
        return grad
    if _state.grad:
        return _cumprod_backward_dense(grad, self, dim)
    z = self == 0
    cz = cumsum(z, dim)
    before = cz == 0
    first = z & (cz == 1)
    after = (cz >= 1) & ~first
    g_before = _rcumsum(grad * result.conj(), dim) / where(before, self, 1.).conj()
    e = cumprod(where(before, self, 1.), dim)
    q = cumprod(where(after, self, 1.), dim)
    g_first = e.conj() * _rcumsum(grad * q.conj(), dim)
    return where(before, g_before, where(first, g_first, 0.))


def _cumprod_backward_dense(grad, self, dim):
    x, g = movedim(self, dim, -1), movedim(grad, dim, -1)
    n = x.shape[-1]
    eye = _make(jnp.eye(n, dtype=bool))
    c = cumprod(where(eye, 1., unsqueeze(x, -2)), -1)  # c[i, j] = prod_{l<=j, l!=i} x_l
    upper = _make(jnp.triu(jnp.ones((n, n), bool)))
    gi = where(upper, unsqueeze(g, -2) * c.conj(), 0.).sum(-1)
    return movedim(gi, -1, dim)


_cumprod = Primitive("cumprod", lambda self, *, dim: jnp.cumprod(self, axis=dim),
                     self=_cumprod_backward)


def cumprod(input, dim, *, dtype=None):
    """Cumulative product along ``dim``; the gradient is exact with zeros in the input.

    Example
    -------
    >>> wgrad.cumprod(wgrad.tensor([1., 2., 3.]), 0)
    tensor([1., 2., 6.])
    """
    d = _wrap_dim(dim, input.ndim)
    input = _cum_dtype(input, dtype)
    if input.ndim == 0:
        return input.clone()
    return _cumprod(input, dim=d)


def _cum_extreme_fwd(later_wins):
    # a scan keeping (value, index); NaN wins and stays, a tie goes to the later index
    # (torch's): the maximum of a total order, so associative
    def combine(a, b):
        (va, ia), (vb, ib) = a, b
        take = jnp.isnan(vb) | (~jnp.isnan(va) & later_wins(vb, va))
        return jnp.where(take, vb, va), jnp.where(take, ib, ia)

    def f(self, *, dim):
        shp = [1] * self.ndim
        if self.ndim:
            shp[dim] = self.shape[dim]
        idx = jnp.broadcast_to(jnp.arange(self.shape[dim] if self.ndim else 1,
                                          dtype=D.default_int().np).reshape(shp), self.shape)
        if self.size == 0 or self.ndim == 0:
            return self, idx
        return jax.lax.associative_scan(combine, (self, idx), axis=dim)
    return f


def _cum_extreme_backward(grads, results, self_shape, dim):
    # the gradient goes to the returned index of each position (summed over repeats)
    if len(self_shape) == 0:
        return grads[0]
    zeros = _const(0, tuple(self_shape), grads[0]._data.dtype)
    return scatter_add(zeros, dim, results[1], grads[0])


_cummax = Primitive("cummax", _cum_extreme_fwd(jnp.greater_equal), nout=2,
                    nondiff_outputs=(1,), self=_cum_extreme_backward)
_cummin = Primitive("cummin", _cum_extreme_fwd(jnp.less_equal), nout=2,
                    nondiff_outputs=(1,), self=_cum_extreme_backward)


def _cum_extreme(name, prim, input, dim):
    if input.is_complex():
        raise NotImplementedError(f"\"{name}_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    values, indices = prim(input, dim=_wrap_dim(dim, input.ndim))
    return _MaxMin[name](values, indices)


def cummax(input, dim):
    """``(values, indices)``: the running maximum along ``dim`` and where it was taken
    (the later index on ties, a NaN once met); the gradient goes to those indices.

    Example
    -------
    >>> wgrad.cummax(wgrad.tensor([1., 3., 2.]), 0)
    wgrad.return_types.cummax(
    values=tensor([1., 3., 3.]),
    indices=tensor([0, 1, 1]))
    """
    return _cum_extreme("cummax", _cummax, input, dim)


def cummin(input, dim):
    """``(values, indices)``: the running minimum along ``dim``; see :func:`cummax`."""
    return _cum_extreme("cummin", _cummin, input, dim)


def _logaddexp_raw(a, b):
    m = jnp.maximum(jnp.real(a), jnp.real(b))
    m = jnp.where(jnp.isfinite(m), m, jnp.zeros_like(m))  # two infinities: no inf - inf
    return jnp.log(jnp.exp(a - m) + jnp.exp(b - m)) + m


def _logcumsumexp_fwd(self, *, dim):
    if self.ndim == 0 or self.size == 0:
        return self
    if jnp.iscomplexobj(self):  # torch's order, element by element (see _logaddexp_complex)
        def step(acc, x):
            acc = elementwise.logaddexp_complex(x, acc)
            return acc, acc
        xs = jnp.moveaxis(self, dim, 0)
        _, ys = jax.lax.scan(step, jnp.full(xs.shape[1:], -jnp.inf, self.dtype), xs)
        return jnp.moveaxis(ys, 0, dim)
    return jax.lax.associative_scan(_logaddexp_raw, self, axis=dim)


def _rlogcumsumexp(x, dim):
    return flip(logcumsumexp(flip(x, dim), dim), dim)


def _log_part(g, keep):
    """log(g) where ``keep``, -inf elsewhere (no log of 0 or of a negative)."""
    return where(keep, where(keep, g, 1.).log(), -math.inf)


def _logcumsumexp_backward(grad, self, result, dim):
    # dL/dx_i = sum_{j >= i} g_j conj(exp(x_i - y_j)), summed in log space: for a real
    # gradient its positive and negative parts separately. A y_j = -inf (x_{<=j} all -inf)
    # adds nothing (torch: nan), so an all -inf part stays nan-free when differentiated again
    dead = (result.real if result.is_complex() else result) == -math.inf
    y = where(dead, 0., result).conj()

    def part(lg):
        return (self.conj() + _rlogcumsumexp(where(dead, -math.inf, lg - y), dim)).exp()
    if self.is_complex():
        return part(_log_part(grad, grad != 0))
    return part(_log_part(grad, grad > 0)) - part(_log_part(-grad, grad < 0))


_logcumsumexp = Primitive("logcumsumexp", _logcumsumexp_fwd, self=_logcumsumexp_backward)


def logcumsumexp(input, dim):
    """``log(cumsum(exp(input), dim))`` computed stably (complex input included).

    Example
    -------
    >>> wgrad.logcumsumexp(wgrad.tensor([0., 0.]), 0)
    tensor([0.0000, 0.6931])
    """
    if not _is_float(input):
        raise NotImplementedError(f"\"logcumsumexp_out_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    return _logcumsumexp(input, dim=_wrap_dim(dim, input.ndim))


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along ``dim``, after concatenating ``prepend`` and
    ``append``.

    Example
    -------
    >>> wgrad.diff(wgrad.tensor([1., 4., 9.]))
    tensor([3., 5.])
    """
    if input.ndim == 0:
        raise RuntimeError("diff expects input to be at least one-dimensional")
    if n < 0:
        raise RuntimeError(f"order must be non-negative but got {n}")
    d = _wrap_dim(dim, input.ndim)
    parts = [p for p in (prepend, input, append) if p is not None]
    if len(parts) > 1:
        if builtins.any(p.ndim != input.ndim for p in parts):
            raise RuntimeError("diff expects prepend or append to be the same dimension as "
                               "input")
        input = cat(parts, d)
    for _ in range(n):
        size = input.shape[d]
        if size == 0:
            break
        a, b = narrow(input, d, 1, size - 1), narrow(input, d, 0, size - 1)
        input = (a ^ b) if input.dtype is D.bool else a - b
    return input


# torch's overloads of the trapezoid functions, as its argument errors list them
_TRAPEZOID_FORMS = (" * (Tensor y, Tensor x, *, int dim = -1)\n"
                    " * (Tensor y, *, Number dx = 1, int dim = -1)\n")
_TRAPZ_FORMS = {"trapezoid": _TRAPEZOID_FORMS, "cumulative_trapezoid": _TRAPEZOID_FORMS,
                "trapz": (" * (Tensor y, *, float dx = 1, int dim = -1)\n"
                          " * (Tensor y, Tensor x, *, int dim = -1)\n")}


def _trapezoid_args(name, y, x, dx):
    """torch's argument errors: ``x`` a tensor or ``dx`` a real number, not both."""
    ok = isinstance(y, Tensor) and (x is None or isinstance(x, Tensor) and dx is None) and (
        dx is None or isinstance(dx, (int, float)) or
        isinstance(dx, complex) and name != "trapz")
    if not ok:
        got = [type(y).__name__] + ([type(x).__name__] if x is not None else []) + (
            [f"dx={type(dx).__name__}"] if dx is not None else [])
        raise TypeError(f"{name}() received an invalid combination of arguments - got "
                        f"({', '.join(got)}), but expected one of:\n{_TRAPZ_FORMS[name]}")
    if isinstance(dx, (complex, builtins.bool)):
        raise RuntimeError(f"{name}: Currently, we only support dx as a real number.")


def _trapezoid_dim(y, x, dim, zero_dim_error):
    """``dim`` wrapped, with torch's errors for a 0-d ``y``."""
    if y.ndim == 0:
        if x is not None:
            dim = _wrap_dim(dim, 0)
        raise IndexError(zero_dim_error or f"Dimension specified as {dim} but tensor has no "
                                            f"dimensions")
    return _wrap_dim(dim, y.ndim)


def _no_bool(name, y, x):
    if y.dtype is D.bool or x is not None and x.dtype is D.bool:
        which = "`y`" if x is None else "`x` or `y`"
        raise RuntimeError(f"{name}: received a bool input for {which}, but bool is not "
                           f"supported")


def _spacings(name, y, x, d):
    """The differences of the sample points ``x`` along ``d``, shaped as torch shapes them
    to broadcast against ``y``'s: a vector along ``d``, fewer dimensions padded in front."""
    if x.ndim == 1:
        if x.shape[0] != y.shape[d]:
            raise RuntimeError(f"{name}: There must be one `x` value for each sample point")
        shape = [1] * y.ndim
        shape[d] = x.shape[0]
        x = reshape(x, tuple(shape))
    elif x.ndim < y.ndim:
        x = reshape(x, (1,) * (y.ndim - x.ndim) + tuple(x.shape))
    n = builtins.max(x.shape[d] - 1, 0)
    return narrow(x, d, builtins.min(1, x.shape[d]), n) - narrow(x, d, 0, n)


def _pair_sums(y, d):
    """``y[1:] + y[:-1]`` along ``d``."""
    n = builtins.max(y.shape[d] - 1, 0)
    return narrow(y, d, builtins.min(1, y.shape[d]), n) + narrow(y, d, 0, n)


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """Integrate ``y`` along ``dim`` with the trapezoid rule, at sample points ``x`` or
    with uniform spacing ``dx`` (1 by default).

    Example
    -------
    >>> wgrad.trapezoid(wgrad.tensor([1., 2., 3.]))
    tensor(4.)
    """
    _trapezoid_args("trapezoid", y, x, dx)
    d = _trapezoid_dim(y, x, dim, None)
    size = y.shape[d]
    if size == 0:  # no sample: zeros, in y's dtype (as numpy)
        return sum(y, d) * 0 if y.dtype is not D.bool else any(y, d)
    _no_bool("trapezoid", y, x)
    if x is None:
        ends = narrow(y, d, 0, 1).squeeze(d) + narrow(y, d, size - 1, 1).squeeze(d)
        return (sum(y, d) - ends * 0.5) * (1 if dx is None else dx)
    return sum(_pair_sums(y, d) * _spacings("trapezoid", y, x, d), d) * 0.5


def trapz(y, x=None, *, dx=None, dim=-1):
    """torch's older name of :func:`trapezoid`: ``trapz(y, x, *, dim=-1)`` or
    ``trapz(y, *, dx=1, dim=-1)``.

    Example
    -------
    >>> wgrad.trapz(wgrad.tensor([1., 2., 3.]), dx=2.)
    tensor(8.)
    """
    _trapezoid_args("trapz", y, x, dx)
    return trapezoid(y, x, dx=dx, dim=dim)


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoid-rule integral of ``y`` along ``dim`` (one value less than
    ``y`` has there), at sample points ``x`` or with uniform spacing ``dx``.

    Example
    -------
    >>> wgrad.cumulative_trapezoid(wgrad.tensor([1., 2., 4.]))
    tensor([1.5000, 4.5000])
    """
    _trapezoid_args("cumulative_trapezoid", y, x, dx)
    d = _trapezoid_dim(y, x, dim, None if x is not None else
                       "slice() cannot be applied to a 0-dim tensor.")
    _no_bool("cumulative_trapezoid", y, x)
    if x is None:
        return cumsum(_pair_sums(y, d) * ((1 if dx is None else dx) / 2), d)
    spacings = _spacings("cumulative_trapezoid", y, x, d)
    return cumsum(_pair_sums(y, d) * spacings / 2, d)


# ======================================================================================
# Norms
# ======================================================================================

def _norm_backward(grad, self, result, ord, dim, keepdim):
    # torch's norm_backward: subgradient 0 where the norm (or, for ord < 1, the entry) is 0
    g = _unreduce(grad, self.shape, dim, keepdim)
    n = _unreduce(result, self.shape, dim, keepdim)
    if ord == 0:
        return g * 0
    if ord == 1:
        return self.sgn() * g
    if ord == 2:
        return g * where(n == 0, 0., self / n)
    if math.isinf(ord):
        a = self.abs()
        mask = ((a == n) | a.isnan()).to(a.dtype)
        return self.sgn() * (g * mask / mask.sum(dim, keepdim=True))
    a = self.abs()
    if ord < 1:
        scaled = self.sgn() * where(self == 0, 0., a ** (ord - 1))
        return scaled * g * n ** (1 - ord)
    scaled = self.sgn() * a ** (ord - 1) if ord < 2 else self * a ** (ord - 2)
    return scaled * where(n == 0, 0., g / n ** (ord - 1))


def _vector_norm_fwd(self, *, ord, dim, keepdim):
    a = jnp.abs(self)
    if ord == 0:
        return jnp.sum(a != 0, axis=dim, keepdims=keepdim).astype(a.dtype)
    if ord == math.inf:
        return jnp.max(a, axis=dim, keepdims=keepdim)
    if ord == -math.inf:
        return jnp.min(a, axis=dim, keepdims=keepdim)
    if ord == 1:
        return jnp.sum(a, axis=dim, keepdims=keepdim)
    if ord == 2:
        return jnp.sqrt(jnp.sum(a * a, axis=dim, keepdims=keepdim))
    return jnp.sum(a ** ord, axis=dim, keepdims=keepdim) ** (1.0 / ord)


_vector_norm = Primitive("linalg_vector_norm", _vector_norm_fwd, self=_norm_backward)


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """The ``ord``-norm of ``x`` over ``dim`` (all elements by default): ``sum |x|^ord``
    to the ``1/ord``, ``max |x|`` for inf, ``min |x|`` for -inf, the count of nonzeros
    for 0. Complex input uses ``|z|`` and gives a real output.

    Example
    -------
    >>> wgrad.linalg.vector_norm(wgrad.tensor([3., 4j]))
    tensor(5.)
    """
    if dtype is not None:
        x = x.to(dtype)
    if not _is_float(x):
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor "
                           f"as input. Got {x.dtype.scalar_name}")
    ord = float(ord)
    axes = _axes(dim, x.ndim)
    if ord < 0 and x.numel() == 0:
        raise RuntimeError(f"linalg.vector_norm cannot compute the {_ord_str(ord)} norm on an "
                           f"empty tensor because the operation does not have an identity")
    return _vector_norm(x, ord=ord, dim=axes, keepdim=bool(keepdim))


def _ord_str(o):
    return f"{o:g}"


def norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """torch.norm: the vector ``p``-norm over ``dim`` (``"fro"`` is the 2-norm).

    Example
    -------
    >>> wgrad.norm(wgrad.tensor([[3., 4.], [0., 0.]]), dim=1)
    tensor([5., 0.])
    """
    if out is not None:
        raise NotImplementedError("norm(): out= is not supported (wgrad tensors are "
                                  "immutable JAX arrays)")
    if p is None or p == "fro":
        p = 2
    elif p == "nuc":
        if not hasattr(linalg, "matrix_norm"):
            raise NotImplementedError("norm(p='nuc') needs linalg.matrix_norm")
        return linalg.matrix_norm(input, "nuc", (0, 1) if dim is None else dim, keepdim,
                                  dtype=dtype)
    elif isinstance(p, str):
        raise RuntimeError(f"linalg.matrix_norm: Order {p} not supported.")
    return vector_norm(input, p, dim, keepdim, dtype=dtype)


# ======================================================================================
# Non-differentiable: count_nonzero, all, any
# ======================================================================================

_count_nonzero = Primitive("count_nonzero", lambda self, *, dim: jnp.sum(
    self != 0, axis=dim).astype(D.default_int().np))
_all = Primitive("all", lambda self, *, dim, keepdim: jnp.all(self, axis=dim, keepdims=keepdim))
_any = Primitive("any", lambda self, *, dim, keepdim: jnp.any(self, axis=dim, keepdims=keepdim))


def count_nonzero(input, dim=None):
    """Number of nonzero elements over ``dim`` (all by default), as int64.

    Example
    -------
    >>> wgrad.count_nonzero(wgrad.tensor([0., 1., 2.]))
    tensor(2)
    """
    return _count_nonzero(input, dim=_axes(dim, input.ndim))


def all(input, dim=None, keepdim=False):
    """Whether every element over ``dim`` is nonzero (True for an empty tensor).

    Example
    -------
    >>> wgrad.all(wgrad.tensor([1., 0.]))
    tensor(False)
    """
    return _uint8_kept(input, _all(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim)))


def any(input, dim=None, keepdim=False):
    """Whether some element over ``dim`` is nonzero (False for an empty tensor)."""
    return _uint8_kept(input, _any(input, dim=_axes(dim, input.ndim), keepdim=bool(keepdim)))


def _uint8_kept(input, out):
    """torch's all/any of a uint8 tensor is uint8 (0 or 1), of any other dtype bool."""
    return out.to(D.uint8) if input.dtype is D.uint8 else out


# ======================================================================================
# Statistics: cov, corrcoef, quantile, mode, msort, histc, renorm, combinations
# ======================================================================================

def _check_weights(name, w, n, integral):
    if w.ndim > 1:
        raise RuntimeError(f"cov(): expected {name} to have one or fewer dimensions but got "
                           f"{name} with {w.ndim} dimensions")
    d = w.dtype
    if (integral and (d.is_floating_point or d.is_complex or d is D.bool)) or (
            not integral and not d.is_floating_point):
        kind = "integral" if integral else "floating point"
        raise RuntimeError(f"cov(): expected {name} to have {kind} dtype but got {name} with "
                           f"{d.scalar_name} dtype")
    if w.numel() != n:
        raise RuntimeError(f"cov(): expected {name} to have the same numel as there are "
                           f"observations in the input but got {w.numel()} != {n}")
    if _known(w) and bool(_ANY_NEGATIVE(w._data)):
        raise RuntimeError(f"cov(): {name} cannot be negative")


# the host's checks (NOTE [Eager disk cache]: kept on disk, not traced in every process)
_ANY_NEGATIVE = kept("any negative", lambda a: (a < 0).any())
_ALL_IN_UNIT = kept("all in [0, 1]", lambda a: ((a >= 0) & (a <= 1)).all())


def _known(t):
    """Whether ``t``'s values can be read on the host (not a tracer)."""
    return not isinstance(t._data, jax.core.Tracer)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in the rows of ``input`` (observations in
    its columns), with integer frequency weights and float observation weights.

    Example
    -------
    >>> wgrad.cov(wgrad.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"cov(): expected input to have two or fewer dimensions but got an "
                           f"input with {input.ndim} dimensions")
    if input.dtype is D.bool:
        raise RuntimeError("cov(): bool dtype is not supported for input")
    if not isinstance(correction, int) or isinstance(correction, builtins.bool):
        raise TypeError(f"cov(): argument 'correction' must be int, not "
                        f"{type(correction).__name__}")
    x = input.reshape(1, -1) if input.ndim < 2 else input
    n = x.shape[1]
    w = None
    for name, wt, integral in (("fweights", fweights, True), ("aweights", aweights, False)):
        if wt is not None:
            _check_weights(name, wt, n, integral)
            wt = wt.reshape(-1)
            w = wt if w is None else w * wt
    if w is None:
        w_sum, norm = n, n - correction
    else:
        w_sum = sum(w)
        if _known(w_sum) and bool(w_sum._data == 0):
            raise RuntimeError("cov(): weights sum to zero, can't be normalized")
        norm = w_sum - correction * (sum(w * aweights.reshape(-1)) / w_sum
                                     if aweights is not None and correction else 1)
    xm = x - (sum(x * w, 1) if w is not None else sum(x, 1)).div(w_sum).unsqueeze(1)
    if (not isinstance(norm, Tensor) or _known(norm)) and float(norm) <= 0:
        warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                      "than the number of observations.", UserWarning, stacklevel=2)
        norm = norm * 0
    c = xm @ (xm * w if w is not None else xm).mH
    return c.div(norm).squeeze()


def corrcoef(input):
    """Pearson correlation coefficients of the variables in the rows of ``input``, clipped
    to [-1, 1] (real and imaginary parts apart for complex input).

    Example
    -------
    >>> wgrad.corrcoef(wgrad.tensor([[0., 1., 2.], [2., 1., 0.]]))
    tensor([[ 1., -1.],
            [-1.,  1.]])
    """
    if input.ndim > 2:
        raise RuntimeError(f"corrcoef(): expected input to have two or fewer dimensions but "
                           f"got an input with {input.ndim} dimensions")
    c = cov(input)
    if c.ndim == 0:
        return c / c
    d = c.diagonal()
    std = (d.real if d.is_complex() else d).sqrt()
    c = c / std.unsqueeze(1) / std.unsqueeze(0)
    if c.is_complex():
        return elementwise.complex(c.real.clip(-1, 1), c.imag.clip(-1, 1))
    return c.clip(-1, 1)


_QUANTILE_MODES = ("linear", "lower", "higher", "midpoint", "nearest")


def _quantile(input, q, dim, keepdim, interpolation, ignore_nan):
    """torch's quantile_compute: sort, the rank ``q (n - 1)`` of each quantile (``n`` the
    count of non-NaN values for nanquantile; the last, NaN, for a slice holding NaN in
    quantile), then the values at the ranks around it, interpolated."""
    scalar_q = not isinstance(q, Tensor)
    if input.numel() == 0:
        raise RuntimeError("quantile() input tensor must be non-empty")
    if not scalar_q and q.ndim > 1:
        raise RuntimeError("quantile() q must be a scalar or 1D tensor")
    if input.dtype not in (D.float32, D.float64):
        raise RuntimeError("quantile() input tensor must be either float or double dtype")
    if not scalar_q and q.dtype is not input.dtype:
        raise RuntimeError("quantile() q tensor must be same dtype as the input tensor")
    if scalar_q and not 0 <= q <= 1:
        raise RuntimeError(f"quantile() q must be in the range [0, 1] but got {q:g}")
    if interpolation not in _QUANTILE_MODES:
        raise RuntimeError(f"quantile() interpolation must be one of linear, lower, higher, "
                           f"midpoint or nearest, but got {interpolation}")
    if input.numel() > 1 << 24:
        raise RuntimeError("quantile() input tensor is too large")
    if not scalar_q and _known(q) and not bool(_ALL_IN_UNIT(q._data)):
        raise RuntimeError("quantile() q values must be in the range [0, 1]")
    qs = (_make(jnp.asarray([q], input.dtype.np)) if scalar_q else q.reshape(-1))
    if dim is None:
        x = input.reshape(-1)
        out_shape = (1,) * input.ndim if keepdim else ()
    else:
        d = _wrap_dim(dim, input.ndim)
        x = movedim(input, d, -1) if input.ndim else input.reshape(1)
        out_shape = list(input.shape)
        if input.ndim:
            if keepdim:
                out_shape[d] = 1
            else:
                del out_shape[d]
        out_shape = tuple(out_shape)
    s = x.sort(-1).values  # NaN sorts last
    n = s.shape[-1]
    qs = qs.reshape((-1,) + (1,) * s.ndim)  # (Q, 1, ..., 1) against (..., n)
    if ignore_nan:
        k = (~s.isnan()).sum(-1, keepdim=True)
        ranks = where(k == 0, float(n - 1), qs * (k - 1))
    else:
        ranks = where(s.narrow(-1, n - 1, 1).isnan(), float(n - 1), qs * (n - 1))
    s = s.unsqueeze(0).expand(tuple(ranks.shape[:-1]) + (n,))

    def at(r):
        return s.gather(-1, r.detach().long())

    if interpolation in ("lower", "higher", "nearest"):
        rounding = {"lower": "floor", "higher": "ceil", "nearest": "round"}[interpolation]
        out = at(getattr(ranks.detach(), rounding)())
    else:
        below = ranks.detach().floor()
        weight = ranks - below if interpolation == "linear" else 0.5
        out = at(below).lerp(at(ranks.detach().ceil()), weight)
    out = out.reshape((qs.shape[0],) + out_shape)
    return out.squeeze(0) if scalar_q else out


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The ``q``-th quantiles (``q`` a number or a 1-D tensor, leading the result's dims)
    of ``input`` over ``dim`` (all elements by default); a slice holding NaN gives NaN.

    Example
    -------
    >>> wgrad.quantile(wgrad.tensor([0., 1., 2., 7.]), wgrad.tensor([0.25, 0.5]))
    tensor([0.7500, 1.5000])
    """
    return _quantile(input, q, dim, keepdim, interpolation, False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """:func:`quantile` ignoring NaN (a slice of NaN only gives NaN).

    Example
    -------
    >>> wgrad.nanquantile(wgrad.tensor([0., float("nan"), 2.]), 0.5)
    tensor(1.)
    """
    return _quantile(input, q, dim, keepdim, interpolation, True)


_Mode = _results(["values", "indices"], "mode")
_mode_values = _gather_prim("mode", "ModeBackward0")


@jax.jit
def _mode_index(a):
    """The index along the last axis of the most frequent value (the smallest of them on a
    tie) at its last occurrence, as torch's CPU kernel, keeping that axis (size 1)."""
    n = a.shape[-1]
    order = jnp.argsort(a, axis=-1, stable=True)
    s = jnp.take_along_axis(a, order, -1)
    change = s[..., 1:] != s[..., :-1]
    edge = jnp.ones(a.shape[:-1] + (1,), bool)
    pos = jnp.arange(n)
    first = jax.lax.cummax(jnp.where(jnp.concatenate([edge, change], -1), pos, 0),
                           axis=a.ndim - 1)
    last = jax.lax.cummin(jnp.where(jnp.concatenate([change, edge], -1), pos, n - 1),
                          axis=a.ndim - 1, reverse=True)
    best = jnp.argmax(last - first, -1, keepdims=True)  # the first run: the smallest value
    return jnp.take_along_axis(order, jnp.take_along_axis(last, best, -1), -1)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along ``dim`` (the smallest one on a tie) and the index of
    its last occurrence.

    Example
    -------
    >>> wgrad.mode(wgrad.tensor([3., 1., 3., 1., 2.]))
    wgrad.return_types.mode(
    values=tensor(1.),
    indices=tensor(3))
    """
    if input.is_complex():
        raise NotImplementedError(f"\"mode_cpu\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    x = input.reshape(1) if input.ndim == 0 else input
    d = _wrap_dim(dim, x.ndim)
    if x.shape[d] == 0:
        raise IndexError(f"mode(): Expected reduction dim {d} to have non-zero size.")
    a = x._data
    if a.dtype.kind == "f" and _known(x) and bool(linalg.ANY_NAN(a)):
        raise NotImplementedError("mode(): inputs holding NaN are not supported (torch's "
                                  "result for them depends on how its sort orders NaN)")
    if a.size == 0:
        ix = jnp.zeros(a.shape[:d] + (1,) + a.shape[d + 1:], jnp.int32)
    else:
        ix = jnp.moveaxis(_mode_index(jnp.moveaxis(a, d, -1)), -1, d)
    squeeze = not keepdim or input.ndim == 0
    vals = _mode_values(x, ix, dim=d, squeeze=squeeze)
    ix = jnp.squeeze(ix, d) if squeeze else ix
    return _Mode(vals, _make(ix.astype(D.default_int().np)))


def msort(input):
    """``input`` sorted along its first dim (``sort(input, 0).values``).

    Example
    -------
    >>> wgrad.msort(wgrad.tensor([[3., 1.], [1., 2.]]))
    tensor([[1., 1.],
            [3., 2.]])
    """
    return input.sort(0).values


def _bound_str(v, from_data):
    if math.isnan(v):  # torch prints the NaN its aminmax gives as -nan
        return "-nan" if from_data else "nan"
    return f"{v:g}"


def histc(input, bins=100, min=0, max=0):
    """A histogram of ``input``'s values in ``bins`` equal bins between ``min`` and
    ``max`` (the data's range when they are equal); values outside are ignored, ``max``
    falls in the last bin. Not differentiable.

    Example
    -------
    >>> wgrad.histc(wgrad.tensor([1., 2., 1.]), bins=4, min=0, max=3)
    tensor([0., 2., 1., 0.])
    """
    if not isinstance(bins, int) or isinstance(bins, builtins.bool):
        raise TypeError(f"histc(): argument 'bins' must be int, not {type(bins).__name__}")
    if bins <= 0:
        raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {bins} for "
                           f"dimension 0")
    lo, hi = (float(v.item() if isinstance(v, Tensor) else v) for v in (min, max))
    from_data = lo == hi and input.numel() > 0
    if input.dtype is D.bool:
        raise NotImplementedError("\"linspace_cpu\" not implemented for 'Bool'")
    kernel = "aminmax_cpu" if from_data and input.is_complex() else "histogram_cpu"
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f"\"{kernel}\" not implemented for "
                                  f"'{input.dtype.scalar_name}'")
    x = input._data
    if from_data:
        lo, hi = (float(v) for v in _MINMAX(x))
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise RuntimeError(f"torch.histc: range of [{_bound_str(lo, from_data)}, "
                           f"{_bound_str(hi, from_data)}] is not finite")
    if not lo < hi:
        raise RuntimeError("torch.histc: max must be larger than min")
    # the bounds put from the host: jnp.asarray traced a conversion per dtype
    lo, hi = (jax.device_put(np.asarray(v, x.dtype)) for v in (lo, hi))
    if x.dtype.itemsize > 2:
        return _make(_histc_counter(bins)(x, lo, hi))
    # float16/bfloat16 op by op (eager), so that each step rounds as in torch's kernel
    return _make(_histc_counts(x.reshape(-1), lo, hi, bins=bins))


# min and max of the data, and the counts per number of bins, kept on disk (NOTE [Eager
# disk cache]): a jax.jit function traces in every process
_MINMAX = kept("histc minmax", lambda x: (jnp.min(x), jnp.max(x)))


@functools.lru_cache(maxsize=64)  # NOTE [Bounded caches]
def _histc_counter(bins):
    return kept(f"histc {bins}", lambda x, lo, hi: _histc_counts(x.reshape(-1), lo, hi,
                                                                  bins=bins))


def _histc_counts(x, lo, hi, *, bins):
    """torch's bin of each x in x's dtype: (x - lo) * bins / (hi - lo), truncated, where
    x == hi goes in the last bin; values outside [lo, hi] (and NaN) are dropped."""
    pos = ((x - lo) * jnp.asarray(bins, x.dtype) / (hi - lo)).astype(jnp.int64)
    pos = jnp.where(pos == bins, bins - 1, pos)
    pos = jnp.where((x >= lo) & (x <= hi), pos, bins)
    return jnp.zeros((bins,), x.dtype).at[pos].add(1, mode="drop")


def _scalar_arg(v):
    return v.item() if isinstance(v, Tensor) else v


def renorm(input, p, dim, maxnorm):
    """Each slice ``input.select(dim, i)`` whose ``p``-norm exceeds ``maxnorm`` scaled
    down to norm ``maxnorm`` (by ``maxnorm / (norm + 1e-7)``, as torch).

    Example
    -------
    >>> wgrad.renorm(wgrad.tensor([[3., 4.], [0.3, 0.4]]), 2, 0, 1.)
    tensor([[0.6000, 0.8000],
            [0.3000, 0.4000]])
    """
    if input.ndim < 2:
        raise RuntimeError(f"renorm: input needs at least 2 dimensions, got {input.ndim} "
                           f"dimensions")
    d = _wrap_dim(dim, input.ndim)
    p, maxnorm = _scalar_arg(p), _scalar_arg(maxnorm)
    if p <= 0:
        raise RuntimeError("renorm: non-positive-norm not supported")
    if maxnorm < 0:
        raise RuntimeError(f"renorm: expected maxnorm to be >= 0 but got {maxnorm:g}")
    others = tuple(i for i in range(input.ndim) if i != d)
    low = input.dtype in (D.float16, D.bfloat16)  # torch: the norm in float32
    norm = vector_norm(input, p, others, True, dtype=D.float32 if low else None)
    if low:
        norm = norm.to(input.dtype)
    return input * where(norm > maxnorm, maxnorm / (norm + 1e-7), 1.)


def combinations(input, r=2, with_replacement=False):
    """The length-``r`` combinations of a 1-D ``input``'s elements, one a row, in
    lexicographic order of positions (``itertools.combinations``).

    Example
    -------
    >>> wgrad.combinations(wgrad.tensor([1, 2, 3]))
    tensor([[1, 2],
            [1, 3],
            [2, 3]])
    """
    if input.ndim != 1:
        raise RuntimeError(f"Expect a 1D vector, but got shape {list(input.shape)}")
    if not isinstance(r, int) or isinstance(r, builtins.bool):
        raise TypeError(f"combinations(): argument 'r' (position 2) must be int, not "
                        f"{type(r).__name__}")
    if r < 0:
        raise RuntimeError(f"Expect a non-negative number, but got {r}")
    if r == 0:
        return _make(jnp.zeros((0,), input._data.dtype))
    pick = (itertools.combinations_with_replacement if with_replacement else
            itertools.combinations)
    idx = np.array(list(pick(range(input.shape[0]), r)), np.int64).reshape(-1)
    return input.index_select(0, _make(jnp.asarray(idx))).reshape(-1, r)


# ======================================================================================
# histogram, histogramdd (host-side counts, no derivative) and gradient (differentiable,
# built from slices and arithmetic)
# ======================================================================================

_Histogram = _results(["hist", "bin_edges"], "histogram")
_Histogramdd = _results(["hist", "bin_edges"], "histogramdd")


def _torch_linspace(lo, hi, n, dt):
    """torch's CPU linspace in ``dt``: from the start for the first half, from the end for
    the second, so both ends are exact."""
    start, end = dt.type(lo), dt.type(hi)
    step = (end - start) / dt.type(n - 1) if n > 1 else dt.type(0)
    i = np.arange(n)
    head = start + step * i.astype(dt)
    tail = end - step * (n - 1 - i).astype(dt)
    return np.where(i < n // 2, head, tail).astype(dt)


def _hist_edges(x, bins, rng):
    """The bin edges of each of the ``x.shape[-1]`` dims (numpy arrays), torch's checks."""
    ndim, dt = x.shape[-1], x.dtype
    if isinstance(bins, int):
        bins = [bins] * ndim
    if bins and builtins.all(isinstance(b, Tensor) for b in bins):
        if len(bins) != ndim:
            raise RuntimeError(f"torch.histogramdd: expected {ndim} sequences of bin edges for "
                               f"a {ndim}-dimensional histogram but got {len(bins)}")
        edges = []
        for i, b in enumerate(bins):
            if b.ndim != 1:
                raise RuntimeError(f"torch.histogramdd: bins tensor should have one dimension, "
                                   f"but got {b.ndim} dimensions in the bins tensor for "
                                   f"dimension {i}")
            if b.numel() < 2:
                raise RuntimeError(f"torch.histogram(): bins must be > 0, but got "
                                   f"{b.numel() - 1} for dimension {i}")
            if b.dtype.np != dt:
                raise RuntimeError(f"torch.histogramdd: input tensor and bins tensors should "
                                   f"have the same dtype, but got input with dtype "
                                   f"{_CPP[D.from_np(dt).name]} and bins for dimension {i} "
                                   f"with dtype {_CPP[b.dtype.name]}")
            edges.append(np.asarray(b.detach()._data))
        return edges
    if len(bins) != ndim:
        raise RuntimeError("histogramdd: The size of bins must be equal to the innermost "
                           "dimension of the input.")
    for i, b in enumerate(bins):
        if b <= 0:
            raise RuntimeError(f"torch.histogram(): bins must be > 0, but got {b} for "
                               f"dimension {i}")
    if rng is not None and len(rng) != 2 * ndim:
        raise RuntimeError(f"torch.histogramdd: for a {ndim}-dimensional histogram range "
                           f"should have {2 * ndim} elements, but got {len(rng)}")
    edges = []
    for i, b in enumerate(bins):
        if rng is not None:
            lo, hi = float(rng[2 * i]), float(rng[2 * i + 1])
        elif x.shape[0]:
            lo, hi = float(x[:, i].min()), float(x[:, i].max())
        else:
            lo, hi = 0.0, 1.0
        if lo > hi:
            raise RuntimeError(f"torch.histogramdd: min should not exceed max, but got min "
                               f"{lo:g} max {hi:g} for dimension {i}")
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise RuntimeError(f"torch.histogramdd: dimension {i}'s range [{lo:g}, {hi:g}] "
                               f"is not finite")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        edges.append(_torch_linspace(lo, hi, b + 1, dt))
    return edges


def _hist_counts(input, bins, rng, weight, density):
    """``(hist, edges)`` as numpy arrays of the histogram of ``input``'s rows (its last dim
    names the coordinates): each value falls in the bin whose left edge is the last one
    <= it (the last bin holds its right edge too); values outside the edges and NaN drop."""
    d = input.dtype
    if d not in (D.float32, D.float64):
        raise NotImplementedError(f"\"histogramdd\" not implemented for '{d.scalar_name}'")
    if input.ndim == 0:
        raise IndexError("Dimension specified as -1 but tensor has no dimensions")
    x = np.asarray(input.detach()._data).reshape(-1, input.shape[-1])
    w = None
    if weight is not None:
        if tuple(weight.shape) != tuple(input.shape[:-1]):
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided it should "
                               f"have the same shape as the input tensor excluding its "
                               f"innermost dimension, but got input with shape "
                               f"{list(input.shape)} and weight with shape "
                               f"{list(weight.shape)}")
        if weight.dtype is not d:
            raise RuntimeError(f"torch.histogramdd: if weight tensor is provided, input tensor "
                               f"and weight tensor should have the same dtype, but got "
                               f"input({_CPP[d.name]}), and weight({_CPP[weight.dtype.name]})")
        w = np.asarray(weight.detach()._data).reshape(-1)
    edges = _hist_edges(x, bins, rng)
    keep = np.ones(x.shape[0], bool)
    flat = np.zeros(x.shape[0], np.int64)
    for i, e in enumerate(edges):
        col = x[:, i]
        keep &= (col >= e[0]) & (col <= e[-1])
        pos = np.minimum(np.searchsorted(e, col, side="right") - 1, e.size - 2)
        flat = flat * (e.size - 1) + np.clip(pos, 0, None)
    shape = tuple(e.size - 1 for e in edges)
    hist = np.bincount(flat[keep], None if w is None else w[keep].astype(np.float64),
                       minlength=math.prod(shape)).astype(np.float64).reshape(shape)
    if density:
        with np.errstate(divide="ignore", invalid="ignore"):
            hist = hist / hist.sum()
            for i, e in enumerate(edges):
                hist = hist / np.diff(e.astype(np.float64)).reshape(
                    (-1,) + (1,) * (len(edges) - i - 1))
    return hist.astype(x.dtype), edges


def _check_bins(name, bins, sequences):
    """torch's error for ``bins`` of another type than an int, a tensor, or (with
    ``sequences``) a list of either."""
    kinds = (int, Tensor, list, tuple) if sequences else (int, Tensor)
    if isinstance(bins, builtins.bool) or not isinstance(bins, kinds):
        raise TypeError(
            f"{name}() received an invalid combination of arguments - got (Tensor, "
            f"{type(bins).__name__}), but expected one of:\n"
            f" * (Tensor input, Tensor bins, *, Tensor weight = None, bool density = False, "
            f"tuple of Tensors out = None)\n"
            f" * (Tensor input, int bins = 100, *, tuple of floats range = None, Tensor weight "
            f"= None, bool density = False, tuple of Tensors out = None)\n")


def histogram(input, bins=100, *, range=None, weight=None, density=False):  # noqa: A002
    """The histogram of ``input``'s values: ``bins`` equal bins over ``range`` (default: the
    data's range), or the bins between the edges of a 1-D tensor ``bins``; each value is
    counted (or adds its ``weight``) in the bin ``[e_i, e_i+1)`` holding it, the last bin
    holding its right edge. ``density`` divides by the total and the bin widths. Returns
    ``(hist, bin_edges)``; no derivative, as torch.

    Example
    -------
    >>> wgrad.histogram(wgrad.tensor([1., 2., 1., 4.]), 3).hist
    tensor([2., 1., 1.])
    """
    _check_bins("histogram", bins, False)
    if range is not None and len(range) != 2:
        raise RuntimeError(f"torch.histogramdd: for a 1-dimensional histogram range should "
                           f"have 2 elements, but got {len(range)}")
    col = input.reshape(-1, 1)
    hist, edges = _hist_counts(col, [bins] if isinstance(bins, Tensor) else bins,
                               range, None if weight is None else weight.reshape(-1), density)
    out = (_make(jnp.asarray(hist)), _make(jnp.asarray(edges[0])))
    return _Histogram(*no_derivative("histogram", out, (input, weight, bins)))


def histogramdd(input, bins, range=None, weight=None, density=False):  # noqa: A002
    """The ``D``-dimensional histogram of the points in ``input`` (its last dim of size
    ``D`` holds their coordinates): ``bins`` an int, ``D`` ints or ``D`` 1-D tensors of
    edges; otherwise as :func:`histogram`. Returns ``(hist, bin_edges)`` with one tensor
    of edges per dim.

    Example
    -------
    >>> wgrad.histogramdd(wgrad.tensor([[0., 0.], [1., 1.]]), [2, 1]).hist
    tensor([[1.],
            [1.]])
    """
    _check_bins("histogramdd", bins, True)
    if isinstance(bins, (list, tuple)):
        bins = list(bins)
    hist, edges = _hist_counts(input, bins, range, weight, density)
    tensors = isinstance(bins, list) and bins and isinstance(bins[0], Tensor)
    aten = "_histogramdd_from_bin_tensors" if tensors else "_histogramdd_from_bin_cts"
    srcs = (input, weight, *(bins if tensors else ()))
    hist = no_derivative(aten, (_make(jnp.asarray(hist)),), srcs)[0]
    edges = no_derivative("_histogramdd_bin_edges", tuple(_make(jnp.asarray(e))
                                                          for e in edges), srcs)
    return _Histogramdd(hist, tuple(edges))


def _coefficients_shape(ndim, d, n):
    return (1,) * d + (n,) + (1,) * (ndim - d - 1)


def _gradient_along(f, d, h, edge_order):
    """The derivative of ``f`` along dim ``d``: central differences inside, one-sided ones
    of order ``edge_order`` at the ends; ``h`` a number (uniform spacing) or a 1-D tensor
    of coordinates (numpy's second-order formulas for uneven spacing)."""
    n = f.shape[d]

    def part(start, length):
        return narrow(f, d, start, length)

    if not isinstance(h, Tensor):
        inner = (part(2, n - 2) - part(0, n - 2)) / (2 * h)
        if edge_order == 1:
            first = (part(1, 1) - part(0, 1)) / h
            last = (part(n - 1, 1) - part(n - 2, 1)) / h
        else:
            first = (part(0, 1) * -1.5 + part(1, 1) * 2 - part(2, 1) * 0.5) / h
            last = (part(n - 3, 1) * 0.5 - part(n - 2, 1) * 2 + part(n - 1, 1) * 1.5) / h
        return cat([first, inner, last], d)
    dx = (h[1:] - h[:-1]).reshape(_coefficients_shape(f.ndim, d, n - 1))
    a, b = narrow(dx, d, 0, n - 2), narrow(dx, d, 1, n - 2)
    inner = (part(0, n - 2) * (-b / (a * (a + b))) + part(1, n - 2) * ((b - a) / (a * b))
             + part(2, n - 2) * (a / (b * (a + b))))
    if edge_order == 1:
        first = (part(1, 1) - part(0, 1)) / narrow(dx, d, 0, 1)
        last = (part(n - 1, 1) - part(n - 2, 1)) / narrow(dx, d, n - 2, 1)
    else:
        a, b = narrow(dx, d, 0, 1), narrow(dx, d, 1, 1)
        first = (part(0, 1) * (-(2 * a + b) / (a * (a + b))) + part(1, 1) * ((a + b) / (a * b))
                 + part(2, 1) * (-a / (b * (a + b))))
        a, b = narrow(dx, d, n - 3, 1), narrow(dx, d, n - 2, 1)
        last = (part(n - 3, 1) * (b / (a * (a + b))) + part(n - 2, 1) * (-(a + b) / (a * b))
                + part(n - 1, 1) * ((2 * b + a) / (b * (a + b))))
    return cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of ``input`` along each of the dims ``dim`` (default: all), as a
    tuple: central differences inside, one-sided differences of order ``edge_order`` (1 or
    2) at the ends. ``spacing`` is the distance between samples (a number, one per dim)
    or, per dim, a 1-D tensor of sample coordinates. Differentiable.

    Example
    -------
    >>> wgrad.gradient(wgrad.tensor([1., 2., 4., 8.]))
    (tensor([1.0000, 1.5000, 3.0000, 4.0000]),)
    """
    if edge_order not in (1, 2):
        raise RuntimeError("torch.gradient only supports edge_order=1 and edge_order=2.")
    given = dim is not None
    dims = (_dims(dim, input.ndim, unique=True) if given else tuple(builtins.range(
        input.ndim)))
    if spacing is None:
        spacing = 1
    if isinstance(spacing, (list, tuple)):
        spacing = list(spacing)
        if len(spacing) != len(dims):
            if not given:
                raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a "
                                   f"scalar, or a list of length equal to 'self.dim() = "
                                   f"{input.ndim}', since dim argument was not given, but "
                                   f"got a list of length {len(spacing)}")
            raise RuntimeError(f"torch.gradient expected spacing to be unspecified, a scalar "
                               f"or it's spacing and dim arguments to have the same length, "
                               f"but got a spacing argument of length {len(spacing)} and a "
                               f"dim argument of length {len(dims)}.")
        if builtins.any(isinstance(h, Tensor) for h in spacing) and not builtins.all(
                isinstance(h, Tensor) for h in spacing):
            raise TypeError("gradient(): spacing must be numbers or tensors, not a mix")
    elif isinstance(spacing, Tensor):
        raise TypeError("gradient(): argument 'spacing' must be a number or a tuple of "
                        "numbers or of tensors, not Tensor")
    else:
        spacing = [spacing] * len(dims)
    for d in dims:
        if input.shape[d] < edge_order + 1:
            raise RuntimeError("torch.gradient expected each dimension size to be at least "
                               "edge_order+1")
    for d, h in zip(dims, spacing):
        if isinstance(h, Tensor):
            if h.ndim != 1:
                raise RuntimeError(f"torch.gradient expected each element of spacing to have "
                                   f"one dimension, but got an element with {h.ndim} "
                                   f"dimensions!")
            if h.shape[0] != input.shape[d]:
                raise RuntimeError(f"torch.gradient: the coordinates of dimension {d} have "
                                   f"{h.shape[0]} elements, not its size {input.shape[d]}")
    return tuple(_gradient_along(input, d, h, edge_order) for d, h in zip(dims, spacing))
