"""``out=``: one helper writes any op's result into the tensor(s) given, as torch does.

# NOTE [out= arguments]
# The ops that take ``out=`` in torch are declared in ``TAKES_OUT`` below, per family
# module; ``install`` wraps exactly those (a function not listed has no ``out`` and
# raises TypeError on it, as torch). The wrapper runs the op, then writes its result into
# ``out`` as an in-place update does (NOTE [In-place ops]): through the storage to every
# alias, version bumped. As torch: with grad mode on and any argument requiring grad it
# raises (naming torch's underlying op) unless torch's out variant is non-differentiable
# there (softmax, log_softmax and heaviside then give ``out`` the result's history); a
# result that can't be cast to ``out``'s dtype raises, and some ops want ``out``'s dtype
# exactly, each with torch's message (``_rule``: clamp's depends on whether its bounds
# are numbers); an ``out`` of another shape is resized, with torch's warning when it was
# not empty. Tensor methods never take ``out`` (``_bind_methods`` binds the unwrapped
# function). The set is every op whose OpInfo in torch 2.13 says it takes ``out=``
# (tests/test_aliasing.py compares each with torch).
"""
import functools
import warnings

import jax.numpy as jnp

from .. import _dtype as D
from .._autograd import forward_ad as _fw
from .._autograd.grad_mode import _state
from .._tensor import Tensor, _make
from ._views import _write, rebind

__all__ = ["install", "TAKES_OUT"]

# family -> the names that take out= (TAKES_OUT); per name, torch's op in the autograd
# error (_ATEN, default the name; none for _NO_GRAD_ERROR) and how out's dtype is checked
# (_rule: a cast by default, _EXACT, _DTYPE_MESSAGE, _CAST_MESSAGE). Checked against
# torch 2.13 (tests/test_aliasing.py).
_ELEMENTWISE = (
    "add sub mul div true_divide floor_divide remainder neg negative pow reciprocal square "
    "exp log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "sigmoid erf abs absolute angle sgn sign conj_physical complex polar where clamp clip "
    "maximum minimum eq ne lt le gt ge floor ceil round trunc frac bitwise_not bitwise_and "
    "bitwise_or bitwise_xor logical_not logical_and logical_or logical_xor atan2 hypot lerp "
    "addcmul addcdiv exp2 logaddexp deg2rad rad2deg acosh asinh atanh clamp_min clamp_max "
    "copysign fmod logaddexp2 heaviside igamma igammac float_power sinc signbit nan_to_num "
    "xlogy digamma erfc erfinv lgamma logit isin softplus")
_NO_GRAD_ERROR = ("floor_divide eq ne lt le gt ge bitwise_not bitwise_and bitwise_or "
                  "bitwise_xor logical_not logical_and logical_or logical_xor conj_physical "
                  "all any nonzero inner matrix_power diag tensordot matrix_norm isin "
                  "signbit bucketize searchsorted argmax argmin softmax log_softmax "
                  "heaviside").split()
_ATEN = {"negative": "neg", "square": "pow", "clip": "clamp", "true_divide": "div",
         "absolute": "abs", "concat": "cat", "concatenate": "cat", "hstack": "cat",
         "vstack": "cat", "diff": "sub", "outer": "mul", "ger": "mul", "kron": "mul",
         "inverse": "linalg_inv_ex", "chain_matmul": "mm", "take_along_dim": "gather",
         "solve": "_linalg_solve_ex", "inv": "linalg_inv_ex", "det": "_linalg_det",
         "slogdet": "_linalg_slogdet", "eigh": "_linalg_eigh", "eigvalsh": "_linalg_eigh",
         "eig": "linalg_eig", "eigvals": "linalg_eig", "svd": "_linalg_svd",
         "svdvals": "_linalg_svd", "qr": "linalg_qr", "cholesky": "linalg_cholesky_ex",
         "pinv": "linalg_pinv", "vector_norm": "linalg_vector_norm", "cross": "linalg_cross",
         "multi_dot": "mm", "vecdot": "sum", "norm": "linalg_vector_norm",
         "fft": "_fft_c2c", "ifft": "_fft_c2c", "fft2": "_fft_c2c", "ifft2": "_fft_c2c",
         "fftn": "_fft_c2c", "ifftn": "_fft_c2c", "rfft": "_fft_r2c", "rfft2": "_fft_r2c",
         "rfftn": "_fft_r2c", "ihfft": "_fft_r2c", "irfft": "_fft_c2r", "irfft2": "_fft_c2r",
         "irfftn": "_fft_c2r", "hfft": "_fft_c2r", "float_power": "pow",
         "column_stack": "cat", "dstack": "cat", "nanmean": "nansum",
         "logsigmoid": "log_sigmoid_forward", "lstsq": "linalg_lstsq"}
_EXACT = set(
    "neg negative matmul mm bmm dot vdot tensordot amax amin sort inverse solve inv det "
    "slogdet eigh eigvalsh svd svdvals qr cholesky matrix_norm vector_norm norm cross "
    "multi_dot vecdot ifft ihfft addmm addmv baddbmm mv isin softmax log_softmax aminmax "
    "avg_pool2d avg_pool3d linear scatter scatter_add argmax argmin".split())
# ops whose out dtype check has a message of its own ({res}: the result's dtype, {out}:
# out's, as torch's ScalarType names): exact, except those in _CAST_MESSAGE (a cast as
# by default, this message where the default one would be)
_DTYPE_MESSAGE = {
    **dict.fromkeys(("gelu", "softplus", "softshrink", "hardshrink"),
                    "Found dtype {out} but expected {res}"),
    **dict.fromkeys(("cummax", "cummin", "logcumsumexp"),
                    "expected scalar_type {res} but found {out}"),
    "logsigmoid": "expected scalar type {res} but found {out}",
    "take": "take(): self and out expected to have the same dtype, but got self.dtype = {res} "
            "and out.dtype = {out}",
    "nan_to_num": "nan_to_num: dtype of out: {out} should be same as input: {res}",
    "float_power": "the output given to float_power has dtype {out} but the operation's "
                   "result requires dtype {res}",
    "signbit": "signbit does not support non-boolean outputs.",
    "heaviside": "heaviside is not yet implemented for tensors with different dtypes.",
    "addbmm": "self and mat2 must have the same dtype, but got {out} and {res}",
    **dict.fromkeys(("searchsorted", "bucketize"), (
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
        "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
        "dtype {out} and out_int32 flag is {flag}")),
}
# a cast as by default, with torch's message and exception where it fails
_CAST_MESSAGE = {
    "lstsq": (RuntimeError, "torch.linalg.lstsq: Expected solution to be safely castable "
                            "from {res} dtype, but got solution with dtype {out}"),
    **dict.fromkeys(("cat", "concat", "concatenate", "stack", "hstack", "vstack",
                     "column_stack", "dstack"),
                    (TypeError, "torch.cat(): input types can't be cast to the desired "
                                "output type {out}")),
}
# a cast into a floating out only
_FLOAT_OUT = dict.fromkeys(("nansum", "nanmean"), "\"nansum_cpu\" not implemented for '{out}'")
# no autograd error, and out takes the result's history (torch gives out a node that
# raises at backward for softmax and log_softmax: docs/differences.md)
_OUT_WITH_GRAPH = ("softmax", "log_softmax", "heaviside")

TAKES_OUT = {
    "elementwise": _ELEMENTWISE.split(),
    "shape": "cat concat concatenate stack hstack vstack column_stack dstack cross".split(),
    "reduction": ("sum prod mean amax amin max min var std var_mean std_mean logsumexp "
                  "cumsum cumprod diff norm all any cummax cummin aminmax logcumsumexp "
                  "argmax argmin nanmean nansum").split(),
    "linear_algebra": ("matmul mm bmm dot vdot outer ger inner inverse matrix_power "
                       "chain_matmul tensordot solve inv det slogdet eigh eigvalsh eig "
                       "eigvals svd svdvals qr cholesky pinv matrix_norm vector_norm "
                       "cross multi_dot vecdot addmm addmv addbmm baddbmm mv lstsq").split(),
    "indexing": ("index_select gather take_along_dim masked_select nonzero sort topk "
                 "kthvalue tril triu diag kron take scatter scatter_add bucketize "
                 "searchsorted").split(),
    "fft": ("fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft "
            "ihfft").split(),
    "activation": "softmax log_softmax softshrink hardshrink gelu".split(),
    "layer": ["linear"],
    "pooling": ["avg_pool2d", "avg_pool3d"],
    "nn_extra": ["logsigmoid"],
    "creation": ["normal", "bernoulli"],
}

# torch's C++ names of the dtypes, as its exact-dtype message prints them
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
        "bool": "bool", "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>"}
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}
_ERR_RESIZE = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future "
    "PyTorch release outputs will not be resized unless they have zero elements. You can "
    "explicitly reuse an out tensor t by resizing it, inplace, to zero elements with "
    "t.resize_(0).")


def _requires_grad(args):
    for a in args:
        if isinstance(a, Tensor):
            if a.requires_grad:
                return True
        elif isinstance(a, (list, tuple)) and _requires_grad(a):
            return True
    return False


def _cast(r, o, rule):
    """``r``'s array in ``out``'s dtype, or torch's error where ``rule`` (``(how, message,
    exception)`` from ``_rule``) forbids it."""
    rd, od = r._data.dtype, o._data.dtype
    if rd == od:
        return r._data
    how, msg, exc = rule
    if how == "exact" and msg is None:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP[rd.name]}, but got "
                           f"{_CPP[od.name]} instead")
    if how == "exact" or (how == "float" and od.kind != "f") or \
            _KIND_RANK[rd.kind] > _KIND_RANK[od.kind]:
        msg = msg or "result type {res} can't be cast to the desired output type {out}"
        raise exc(msg.format(res=D.from_np(rd).scalar_name, out=D.from_np(od).scalar_name,
                             flag=rd == jnp.int32))
    return r._data.astype(od)


def _bounds_rule(args, kwargs):
    """clamp's rule: with number bounds out's dtype exactly, with tensor bounds a cast."""
    if any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values())):
        return "cast", None, RuntimeError
    return "exact", _DTYPE_MESSAGE["gelu"], RuntimeError


def _rule(name):
    """How ``name`` checks its out dtype: ``(how, message, exception)``, ``how`` "exact",
    "cast" or "float" (a cast into a floating out), ``message`` None for torch's common
    one; for clamp, a function of the call's arguments giving that triple."""
    if name in ("clamp", "clip", "clamp_min", "clamp_max"):
        return _bounds_rule
    if name in _DTYPE_MESSAGE:
        return "exact", _DTYPE_MESSAGE[name], RuntimeError
    if name in _CAST_MESSAGE:
        return "cast", _CAST_MESSAGE[name][1], _CAST_MESSAGE[name][0]
    if name in _FLOAT_OUT:
        return "float", _FLOAT_OUT[name], NotImplementedError
    return ("exact" if name in _EXACT else "cast"), None, RuntimeError


def _store(o, data):
    """Write ``data`` into ``o`` as an in-place update (resized first if its shape
    differs, as torch's resize_output)."""
    if o._data.shape != data.shape:
        if o._data.size:
            warnings.warn(_ERR_RESIZE.format(list(o._data.shape), list(data.shape)),
                          UserWarning, stacklevel=4)
        rebind(o, _make(data))
    else:
        _write(o, data)
    o._vc.v += 1


def apply_out(fn_name, aten, rule, result, out, args, graph=False):
    """Write ``result`` into ``out`` (a tensor, or a tuple for a tuple result) and return
    ``out`` in the result's form (NOTE [out= arguments])."""
    many = isinstance(result, tuple)
    if many and not (isinstance(out, (tuple, list)) and all(isinstance(o, Tensor)
                                                           for o in out)):
        raise TypeError(f"{fn_name}(): argument 'out' must be tuple of Tensors, not "
                        f"{type(out).__name__}")
    if not many and not isinstance(out, Tensor):
        raise TypeError(f"{fn_name}(): argument 'out' must be Tensor, not "
                        f"{type(out).__name__}")
    outs, results = (tuple(out), result) if many else ((out,), (result,))
    if len(outs) != len(results):
        raise RuntimeError(f"{fn_name}(): expected out to have {len(results)} tensors, but "
                           f"got {len(outs)}")
    data = [_cast(r, o, rule) for r, o in zip(results, outs)]
    for o, d, r in zip(outs, data, results):
        if graph and r.requires_grad:  # out takes r's history, as an in-place copy does
            if o._data.shape != d.shape:
                _store(o, jnp.zeros(d.shape, o._data.dtype))
            o.copy_(r)
        else:
            _store(o, jnp.asarray(d))
    if not many:
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else outs


def _takes_out(fn, aten, rule, name):
    graph = name in _OUT_WITH_GRAPH

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if aten in ("_fft_c2c", "_fft_r2c") and isinstance(out, Tensor) and \
                not out.is_complex():
            raise RuntimeError(f"{fn.__name__} expects a complex output tensor, but got "
                               f"{out.dtype.scalar_name}")
        if aten is not None and _state.grad and (
                _requires_grad(args) or _requires_grad(kwargs.values()) or
                _requires_grad(out if isinstance(out, (tuple, list)) else (out,))):
            raise RuntimeError(f"{aten}(): functions with out=... arguments don't support "
                               f"automatic differentiation, but one of the arguments "
                               f"requires grad.")
        if _fw.state.active and any(_fw.get_tangent(t) is not None for t in _tensors(
                args, kwargs.values(), out if isinstance(out, (tuple, list)) else (out,))):
            raise RuntimeError(f"Trying to use forward AD with {aten or fn.__name__}_out that "
                               f"does not support it because it is an out= function")
        how = rule(args, kwargs) if callable(rule) else rule
        return apply_out(name, aten, how, fn(*args, **kwargs), out, args, graph)
    with_out.without_out = fn
    return with_out


def _tensors(*groups):
    return [t for g in groups for t in g if isinstance(t, Tensor)]


def install(namespace, family):
    """Wrap the functions of ``TAKES_OUT[family]`` in ``namespace`` (a module's dict)."""
    for name in TAKES_OUT[family]:
        fn = namespace[name]
        aten = None if name in _NO_GRAD_ERROR else _ATEN.get(name, name)
        # torch's argument parser names the linalg-only functions linalg_<name>
        parser = name if family != "linear_algebra" or name in namespace["__all__"] \
            else "linalg_" + name
        namespace[name] = _takes_out(getattr(fn, "without_out", fn), aten, _rule(name), parser)
