"""The view-copy functions (``torch.<view>_copy``): a view op whose results are new tensors
that never alias the input (their own storage and version counter), differentiable as the
view (the gradient is the view's; torch's node is the view's with a ``_copy`` suffix,
wgrad's is the view's own).
"""
from .. import _dtype as D
from .._autograd import forward_ad as _fw
from .._autograd.grad_mode import _state
from .._tensor import Tensor, _make, _raw_data, _wrap_dim
from . import elementwise as _E
from . import indexing as _I
from . import shape as _S
from ._out import no_derivative

# name -> (the view of torch's signature, a docstring example and its output); each is
# checked against torch in tests/ops/test_added_copies_random.py
_VIEWS = {
    "alias_copy": (lambda input: _S.clone(input),
                   "wgrad.alias_copy(wgrad.tensor([1., 2.]))", "tensor([1., 2.])"),
    "as_strided_copy": (
        lambda input, size, stride, storage_offset=None: _S.as_strided(
            input, size, stride, storage_offset),
        "wgrad.as_strided_copy(wgrad.arange(4.), (2,), (2,))", "tensor([0., 2.])"),
    "diagonal_copy": (
        lambda input, offset=0, dim1=0, dim2=1: _I.diagonal(input, offset, dim1, dim2),
        "wgrad.diagonal_copy(wgrad.tensor([[1., 2.], [3., 4.]]))", "tensor([1., 4.])"),
    "expand_copy": (lambda input, size, *, implicit=False: _S.expand(input, size),
                    "wgrad.expand_copy(wgrad.tensor([1.]), (3,))", "tensor([1., 1., 1.])"),
    "narrow_copy": (lambda input, dim, start, length: _S.narrow(input, dim, start, length),
                    "wgrad.arange(4.).narrow_copy(0, 1, 2)", "tensor([1., 2.])"),
    "permute_copy": (lambda input, dims: _S.permute(input, dims),
                     "wgrad.permute_copy(wgrad.ones(1, 2), (1, 0)).shape",
                     "wgrad.Size([2, 1])"),
    "select_copy": (lambda input, dim, index: _S.select(_real_grad("select_copy", input), dim,
                                                        index),
                    "wgrad.select_copy(wgrad.tensor([[1., 2.], [3., 4.]]), 1, 0)",
                    "tensor([1., 3.])"),
    "slice_copy": (lambda input, dim=0, start=None, end=None, step=1: _slice(
        _real_grad("slice_copy", input), dim, start, end, step),
        "wgrad.slice_copy(wgrad.arange(5.), 0, 1, None, 2)", "tensor([1., 3.])"),
    "split_copy": (lambda input, split_size, dim=0: _S.split(input, split_size, dim),
                   "wgrad.split_copy(wgrad.arange(3.), 2)",
                   "(tensor([0., 1.]), tensor([2.]))"),
    "split_with_sizes_copy": (
        lambda input, split_sizes, dim=0: _S.split_with_sizes(input, split_sizes, dim),
        "wgrad.split_with_sizes_copy(wgrad.arange(3.), [1, 2])",
        "(tensor([0.]), tensor([1., 2.]))"),
    "squeeze_copy": (lambda input, dim=None: _S.squeeze(input, dim),
                     "wgrad.squeeze_copy(wgrad.ones(1, 2)).shape", "wgrad.Size([2])"),
    "t_copy": (lambda input: _S.t(input), "wgrad.t_copy(wgrad.ones(2, 1)).shape",
               "wgrad.Size([1, 2])"),
    "transpose_copy": (lambda input, dim0, dim1: _S.transpose(input, dim0, dim1),
                       "wgrad.transpose_copy(wgrad.ones(2, 1, 3), 0, 2).shape",
                       "wgrad.Size([3, 1, 2])"),
    "unbind_copy": (lambda input, dim=0: _S.unbind(input, dim),
                    "wgrad.unbind_copy(wgrad.tensor([[1., 2.], [3., 4.]]))",
                    "(tensor([1., 2.]), tensor([3., 4.]))"),
    "unfold_copy": (lambda input, dimension, size, step: _I.unfold(input, dimension, size, step),
                    "wgrad.unfold_copy(wgrad.arange(4.), 0, 2, 2).shape",
                    "wgrad.Size([2, 2])"),
    "unsqueeze_copy": (lambda input, dim: _S.unsqueeze(input, dim),
                       "wgrad.unsqueeze_copy(wgrad.ones(2), 0).shape", "wgrad.Size([1, 2])"),
    "view_copy": (lambda input, size: _view(input, size),
                  "wgrad.view_copy(wgrad.ones(2, 3), (6,)).shape", "wgrad.Size([6])"),
    # torch resolves a conjugate view first (view_as_real of one raises)
    "view_as_real_copy": (lambda input: _E.view_as_real(_E.resolve_conj(input)),
                          "wgrad.view_as_real_copy(wgrad.tensor([1+2j]))",
                          "tensor([[1., 2.]])"),
    "view_as_complex_copy": (lambda input: _view_as_complex(input),
                             "wgrad.view_as_complex_copy(wgrad.tensor([[1., 2.]]))",
                             "tensor([1.+2.j])"),
}

__all__ = [*_VIEWS, "detach_copy"]

# Tensor methods (torch's ``variants: method``), bound by ops/__init__.py
METHODS = ("narrow_copy",)


def _real_grad(name, input):
    """``input``, after torch's error where its copy has no complex derivative."""
    if _state.grad and input.requires_grad and input.is_complex():
        raise RuntimeError(f"{name} does not support automatic differentiation for outputs "
                           f"with complex dtype.")
    return input


def _slice(input, dim, start, end, step):
    if input.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    d = _wrap_dim(dim, input.ndim)
    if step <= 0:
        raise RuntimeError("slice step must be positive")
    return input[(slice(None),) * d + (slice(start, end, step),)]


def _view(input, size):
    if isinstance(size, (D.dtype, type, str)):
        raise NotImplementedError("view_copy(dtype) is not supported by wgrad (nor is "
                                  "view(dtype))")
    return _S.reshape(input, size)  # torch's view_copy reshapes any layout


def _view_as_complex(input):
    out = _E.view_as_complex(input)
    if _state.grad and input.requires_grad:
        raise RuntimeError("view_as_complex_copy does not support automatic differentiation "
                           "for outputs with complex dtype.")
    return out


def _fresh(v):
    """``v`` as a new tensor that aliases nothing, with ``v``'s history (a leaf that
    requires grad, which a view op may return as is, gets a node)."""
    if v._grad_fn is None and v._requires_grad and _state.grad:
        return _S.clone(v)
    out = _make(_raw_data(v), v._grad_fn, v._output_nr)  # raw: a pending value stays so
    if _fw.state.active:
        tangent = _fw.get_tangent(v)
        if tangent is not None:
            _fw.set_tangent(out, tangent)
    return out


def _copy_function(name, view, example, shown):
    def copy(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' (position 1) must be Tensor, not "
                            f"{type(input).__name__}")
        if "out" in kwargs:
            raise NotImplementedError(f"{name}(): wgrad does not support out= here")
        r = view(input, *args, **kwargs)
        return tuple(_fresh(v) for v in r) if isinstance(r, tuple) else _fresh(r)
    copy.__name__ = copy.__qualname__ = name
    copy.__wrapped__ = view  # inspect.signature: torch's parameters
    copy.__doc__ = (f"``torch.{name[:-5]}`` of ``input`` as new tensors that do not alias it\n"
                    f"(their own storage and version counter), with the view's gradient.\n\n"
                    f"Example\n-------\n>>> {example}\n{shown}\n")
    return copy


for _name, (_view_fn, _example, _shown) in _VIEWS.items():
    globals()[_name] = _copy_function(_name, _view_fn, _example, _shown)
del _name, _view_fn, _example, _shown


def detach_copy(input):
    """``input.detach()`` as a new tensor that does not alias ``input``. As torch's, it
    requires grad when ``input`` does (with grad mode on) and a backward through it raises.

    Example
    -------
    >>> wgrad.detach_copy(wgrad.tensor([1., 2.]))
    tensor([1., 2.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"detach_copy(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return no_derivative("detach_copy", (_make(_raw_data(input)),), (input,))[0]
