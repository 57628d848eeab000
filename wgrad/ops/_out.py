"""``out=``: one helper writes any op's result into the tensor(s) given, as torch does.

# NOTE [out= arguments]
# The ops that take ``out=`` in torch are declared in ``TAKES_OUT`` below, per family
# module; ``install`` wraps exactly those (a function not listed has no ``out`` and
# raises TypeError on it, as torch). The wrapper runs the op, then writes its result into
# ``out`` as an in-place update does (NOTE [In-place ops]): through the storage to every
# alias, version bumped. As torch: with grad mode on and any argument requiring grad it
# raises (naming torch's underlying op) unless torch's out variant is non-differentiable
# there; a result that can't be cast to ``out``'s dtype raises (some ops, mostly linalg,
# want ``out``'s dtype exactly); an ``out`` of another shape is resized, with torch's
# warning when it was not empty. Tensor methods never take ``out`` (``_bind_methods``
# binds the unwrapped function).
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

# module -> {name: (torch's op in the autograd error or None for "no error", exact dtype)}
# Unlisted details default to (name, False). Names and rules checked against torch 2.13.
_ELEMENTWISE = (
    "add sub mul div true_divide floor_divide remainder neg negative pow reciprocal square "
    "exp log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "sigmoid erf abs absolute angle sgn sign conj_physical complex polar where clamp clip "
    "maximum minimum eq ne lt le gt ge floor ceil round trunc frac bitwise_not bitwise_and "
    "bitwise_or bitwise_xor logical_not logical_and logical_or logical_xor atan2 hypot lerp "
    "addcmul addcdiv exp2 logaddexp deg2rad rad2deg")
_NO_GRAD_ERROR = ("floor_divide eq ne lt le gt ge bitwise_not bitwise_and bitwise_or "
                  "bitwise_xor logical_not logical_and logical_or logical_xor conj_physical "
                  "all any nonzero inner matrix_power diag tensordot matrix_norm").split()
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
         "irfftn": "_fft_c2r", "hfft": "_fft_c2r"}
_EXACT = set(
    "neg negative matmul mm bmm dot vdot tensordot amax amin sort inverse solve inv det "
    "slogdet eigh eigvalsh svd svdvals qr cholesky matrix_norm vector_norm norm cross "
    "multi_dot vecdot ifft ihfft".split())

TAKES_OUT = {
    "elementwise": _ELEMENTWISE.split(),
    "shape": "cat concat concatenate stack hstack vstack".split(),
    "reduction": ("sum prod mean amax amin max min var std var_mean std_mean logsumexp "
                  "cumsum cumprod diff norm all any").split(),
    "linear_algebra": ("matmul mm bmm dot vdot outer ger inner inverse matrix_power "
                       "chain_matmul tensordot solve inv det slogdet eigh eigvalsh eig "
                       "eigvals svd svdvals qr cholesky pinv matrix_norm vector_norm "
                       "cross multi_dot vecdot").split(),
    "indexing": ("index_select gather take_along_dim masked_select nonzero sort topk "
                 "kthvalue tril triu diag kron").split(),
    "fft": ("fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft "
            "ihfft").split(),
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


def _cast(r, o, name, exact):
    rd, od = r._data.dtype, o._data.dtype
    if rd == od:
        return r._data
    if exact:
        raise RuntimeError(f"Expected out tensor to have dtype {_CPP[rd.name]}, but got "
                           f"{_CPP[od.name]} instead")
    if _KIND_RANK[rd.kind] > _KIND_RANK[od.kind]:
        raise RuntimeError(f"result type {D.from_np(rd).scalar_name} can't be cast to the "
                           f"desired output type {D.from_np(od).scalar_name}")
    return r._data.astype(od)


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


def apply_out(fn_name, aten, exact, result, out, args):
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
    data = [_cast(r, o, fn_name, exact) for r, o in zip(results, outs)]
    for o, d in zip(outs, data):
        _store(o, jnp.asarray(d))
    if not many:
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else outs


def _takes_out(fn, aten, exact):
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
        return apply_out(fn.__name__, aten, exact, fn(*args, **kwargs), out, args)
    with_out.without_out = fn
    return with_out


def _tensors(*groups):
    return [t for g in groups for t in g if isinstance(t, Tensor)]


def install(namespace, family):
    """Wrap the functions of ``TAKES_OUT[family]`` in ``namespace`` (a module's dict)."""
    for name in TAKES_OUT[family]:
        fn = namespace[name]
        aten = None if name in _NO_GRAD_ERROR else _ATEN.get(name, name)
        namespace[name] = _takes_out(getattr(fn, "without_out", fn), aten, name in _EXACT)
