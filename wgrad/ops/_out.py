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
from ._primitive import Primitive
from ._views import _write, rebind

__all__ = ["install", "TAKES_OUT"]

# family -> the names that take out= (TAKES_OUT); per name, torch's op in the autograd
# error (_ATEN, default the name; none for _NO_GRAD_ERROR) and how out's dtype is checked
# (_RULES: a cast by default). Checked against torch 2.13 (tests/test_aliasing.py).
_ELEMENTWISE = (
    "add sub mul div true_divide floor_divide remainder neg negative pow reciprocal square "
    "exp log log2 log10 log1p expm1 sqrt rsqrt sin cos tan asin acos atan sinh cosh tanh "
    "sigmoid erf abs absolute angle sgn sign conj_physical complex polar where clamp clip "
    "maximum minimum eq ne lt le gt ge floor ceil round trunc frac bitwise_not bitwise_and "
    "bitwise_or bitwise_xor logical_not logical_and logical_or logical_xor atan2 hypot lerp "
    "addcmul addcdiv exp2 logaddexp deg2rad rad2deg acosh asinh atanh clamp_min clamp_max "
    "copysign fmod logaddexp2 heaviside igamma igammac float_power sinc signbit nan_to_num "
    "xlogy digamma erfc erfinv lgamma logit isin softplus fmax fmin isposinf isneginf "
    "arccos arcsin arctan arccosh arcsinh arctanh arctan2 divide multiply subtract greater "
    "greater_equal less less_equal not_equal fix gcd lcm i0 "
    "ldexp nextafter mvlgamma bitwise_left_shift bitwise_right_shift")
# torch.special's functions (ops/special.py): torch computes these without a derivative, so
# out= takes them with inputs that require grad
_SPECIAL_NONDIFF = (
    "airy_ai bessel_j0 bessel_j1 bessel_y0 bessel_y1 chebyshev_polynomial_t "
    "chebyshev_polynomial_u chebyshev_polynomial_v chebyshev_polynomial_w "
    "hermite_polynomial_h hermite_polynomial_he laguerre_polynomial_l legendre_polynomial_p "
    "modified_bessel_i0 modified_bessel_i1 modified_bessel_k0 modified_bessel_k1 "
    "scaled_modified_bessel_k0 scaled_modified_bessel_k1 shifted_chebyshev_polynomial_t "
    "shifted_chebyshev_polynomial_u shifted_chebyshev_polynomial_v "
    "shifted_chebyshev_polynomial_w spherical_bessel_j0")
_SPECIAL_DIFF = "entr erfcx i0e i1 i1e log_ndtr ndtri xlog1py zeta"
_NO_GRAD_ERROR = ("floor_divide eq ne lt le gt ge bitwise_not bitwise_and bitwise_or "
                  "bitwise_xor logical_not logical_and logical_or logical_xor conj_physical "
                  "all any nonzero tensordot isin signbit bucketize searchsorted argmax "
                  "argmin isposinf isneginf greater greater_equal less less_equal not_equal gcd "
                  "lcm bitwise_left_shift bitwise_right_shift linalg_matrix_rank").split() + \
    _SPECIAL_NONDIFF.split()
_ATEN = {"negative": "neg", "square": "pow", "clip": "clamp", "true_divide": "div",
         "absolute": "abs", "concat": "cat", "concatenate": "cat", "hstack": "cat",
         "vstack": "cat", "diff": "sub", "outer": "mul", "ger": "mul", "kron": "mul",
         "inverse": "linalg_inv_ex", "chain_matmul": "mm", "take_along_dim": "gather",
         "linalg_solve": "_linalg_solve_ex", "inv": "linalg_inv_ex", "det": "_linalg_det",
         "slogdet": "_linalg_slogdet", "eigh": "_linalg_eigh", "eigvalsh": "_linalg_eigh",
         "linalg_eig": "linalg_eig", "eigvals": "linalg_eig", "linalg_svd": "_linalg_svd",
         "svdvals": "_linalg_svd", "linalg_cholesky": "linalg_cholesky_ex",
         "pinv": "linalg_pinv", "vector_norm": "linalg_vector_norm", "cross": "linalg_cross",
         "multi_dot": "mm", "vecdot": "sum", "norm": "linalg_vector_norm",
         "fft": "_fft_c2c", "ifft": "_fft_c2c", "fft2": "_fft_c2c", "ifft2": "_fft_c2c",
         "fftn": "_fft_c2c", "ifftn": "_fft_c2c", "rfft": "_fft_r2c", "rfft2": "_fft_r2c",
         "rfftn": "_fft_r2c", "ihfft": "_fft_r2c", "irfft": "_fft_c2r", "irfft2": "_fft_c2r",
         "irfftn": "_fft_c2r", "hfft": "_fft_c2r", "hfft2": "_fft_c2r", "hfftn": "_fft_c2r",
         "ihfft2": "_fft_c2c", "ihfftn": "_fft_c2c", "float_power": "pow",
         "column_stack": "cat", "dstack": "cat", "nanmean": "nansum",
         "logsigmoid": "log_sigmoid_forward", "linalg_lstsq": "linalg_lstsq",
         "matrix_power": "matmul", "arccos": "acos", "arcsin": "asin", "arctan": "atan",
         "arccosh": "acosh", "arcsinh": "asinh", "arctanh": "atanh", "arctan2": "atan2",
         "divide": "div", "multiply": "mul", "subtract": "sub", "fix": "trunc",
         "cholesky_ex": "linalg_cholesky_ex", "inv_ex": "linalg_inv_ex",
         "solve_ex": "_linalg_solve_ex", "householder_product": "linalg_householder_product",
         "orgqr": "linalg_householder_product", "frobenius_norm": "norm",
         **{n: "special_" + n for n in _SPECIAL_DIFF.split()}}
# How each op checks out's dtype against its result's (``_rule``): (how, exception,
# message). how: "exact" (the same dtype), "cast" (a result kind that fits: bool < int <
# float < complex), "float" (a floating out), "floatc" (floating or complex), "real" (not
# complex), "cast_exact" (the message where the kind does not fit, else exact with the
# common message). The message's fields: {res}/{out} torch's ScalarType names of the result's and
# out's dtype, {cres}/{cout} its C++ names; None: torch's common message of that how.
# Unlisted: ("cast", RuntimeError, None). A key "family.name" is one family's op only.
_COMMON = {"exact": "Expected out tensor to have dtype {cres}, but got {cout} instead",
           "cast": "result type {res} can't be cast to the desired output type {out}"}


def _rules(how, names, message=None, exc=RuntimeError):
    return dict.fromkeys(names.split(), (how, exc, message))


_RULES = {
    **_rules("exact", "mm bmm sort inverse linalg_solve inv det slogdet eigh eigvalsh "
                      "linalg_svd svdvals linalg_qr linalg_cholesky vector_norm "
                      "reduction.norm cross ifft ihfft "
                      "addmm addmv baddbmm mv isin softmax log_softmax aminmax avg_pool2d "
                      "avg_pool3d linear scatter scatter_add argmax argmin max min topk "
                      "gather take_along_dim tril triu index_copy index_add index_reduce "
                      "scatter_reduce slice_scatter"),
    **_rules("exact", "gelu softplus softshrink hardshrink abs absolute ceil floor frac round "
                      "sign sgn trunc fix conj_physical neg negative",
             "Found dtype {out} but expected {res}"),
    **_rules("exact", "cummax cummin logcumsumexp",
             "expected scalar_type {res} but found {out}"),
    **_rules("exact", "logsigmoid", "expected scalar type {res} but found {out}"),
    **_rules("exact", "take", "take(): self and out expected to have the same dtype, but got "
                              "self.dtype = {res} and out.dtype = {out}"),
    **_rules("exact", "nan_to_num",
             "nan_to_num: dtype of out: {out} should be same as input: {res}"),
    **_rules("exact", "float_power", "the output given to float_power has dtype {out} but "
                                     "the operation's result requires dtype {res}"),
    **_rules("exact", "signbit", "signbit does not support non-boolean outputs."),
    **_rules("cast", "ldexp", "ldexp can't be cast to the desired output type {out}"),
    **_rules("cast", "mvlgamma",
             "mvlgamma: result type {res} can't be cast to the desired output type {res}"),
    **_rules("exact", "heaviside",
             "heaviside is not yet implemented for tensors with different dtypes."),
    **_rules("exact", "addbmm", "self and mat2 must have the same dtype, but got {out} and "
                                "{res}"),
    **_rules("exact", "searchsorted bucketize", (
        "torch.searchsorted(): output tensor's dtype is wrong, it can only be Int(int32) or "
        "Long(int64) depending on whether out_int32 flag is True, but we got output tensor's "
        "dtype {out} and out_int32 flag is {flag}")),
    **_rules("exact", "kthvalue", "output values must be of same type as input"),
    **_rules("cast_exact", "diag_vector",
             "diag: result type {res} can't be cast to the desired out= type {out}"),
    **_rules("exact", "masked_select",
             "masked_select(): self and result must have the same scalar type"),
    **_rules("exact", "index_select",
             "index_select(): self and result must have the same scalar type"),
    **_rules("exact", "dot vdot", "result dtype {out} does not match input dtype {res}"),
    **_rules("exact", "complex polar", "Expected object of scalar type {res} but got scalar "
                                       "type {out} for argument 'out'"),
    **_rules("exact", "inner tensordot", "tensordot: Expected the output tensor to have "
                                         "dtype {res}, but got an output tensor with dtype "
                                         "{out}"),
    **_rules("exact", "nonzero",
             "nonzero: Expected out tensor to have scalar type Long but got scalar type{out}"),
    **_rules("exact", "all", "all only supports bool tensor for result, got: {out}"),
    **_rules("exact", "any", "any only supports bool tensor for result, got: {out}"),
    **_rules("exact", "amax amin", "Expected the dtype for input and out to match, but got "
                                   "{res} for input's dtype and {out} for out's dtype."),
    **_rules("exact", "vecdot", "linalg.vecdot: Expected out of dtype{res} but found {out}"),
    **_rules("exact", "multi_dot",
             "multi_dot(): expected out tensor to have dtype {cres} but got {cout}"),
    **_rules("exact", "linear_algebra.norm",
             "linalg.norm expected out tensor dtype {res} but got: {out}"),
    **_rules("exact", "matrix_norm",
             "linalg.matrix_norm expected out tensor dtype {res} but got: {out}"),
    **_rules("cast", "linalg_lstsq", "torch.linalg.lstsq: Expected solution to be safely "
                                     "castable from {res} dtype, but got solution with dtype "
                                     "{out}"),
    **_rules("cast", "linalg_eig", "torch.linalg.eig: Expected eigenvalues to be safely "
                                   "castable from {res} dtype, but got eigenvalues with dtype "
                                   "{out}"),
    **_rules("cast", "eigvals", "torch.linalg.eigvals: Expected eigenvalues to be safely "
                                "castable from {res} dtype, but got eigenvalues with dtype "
                                "{out}"),
    **_rules("cast_exact", "matrix_power", "matrix_power: Expected result to be safely "
                                           "castable from {res} dtype, but got result with "
                                           "dtype {out}"),
    **_rules("cast", "pinv", "linalg.pinv: Expected result to be safely castable from {res} "
                             "dtype, but got result with dtype {out}"),
    **_rules("exact", "cholesky_ex inv_ex solve_ex linalg_lu_solve ldl_factor ldl_factor_ex "
                      "ldl_solve frobenius_norm"),
    **_rules("exact", "nuclear_norm",
             "linalg.matrix_norm expected out tensor dtype {res} but got: {out}"),
    **_rules("exact", "ormqr", "torch.ormqr: Expected input and result to have the same dtype, "
                               "but input has dtype{res} and result has dtype {out}"),
    **_rules("cast", "cond", "linalg.cond: Expected result to be safely castable from {res} "
                             "dtype, but got result with dtype {out}"),
    **_rules("cast", "householder_product orgqr", "torch.linalg.householder_product: Expected "
             "result to be safely castable from {res} dtype, but got result with dtype {out}"),
    **_rules("cast", "geqrf", "torch.geqrf: Expected a to be safely castable from {res} dtype, "
                              "but got a with dtype {out}"),
    **_rules("cast", "tensorinv", "tensorinv: Expected result to be safely castable from {res} "
                                  "dtype, but got result with dtype {out}"),
    **_rules("cast", "tensorsolve", "tensorsolve: Expected result to be safely castable from "
                                    "{res} dtype, but got result with dtype {out}"),
    **_rules("cast", "mean", "mean.dtype_out(): input types can't be cast to the desired "
                             "output type {out}"),
    **_rules("cast", "cat concat concatenate stack hstack vstack column_stack dstack",
             "torch.cat(): input types can't be cast to the desired output type {out}",
             TypeError),
    **_rules("float", "nansum nanmean", "\"nansum_cpu\" not implemented for '{out}'",
             NotImplementedError),
    **_rules("float", "irfft hfft", "{name} expects a floating point output tensor, but got "
                                    "{out}"),
    **_rules("float", "irfft2 irfftn",
             "irfftn expects a floating point output tensor, but got {out}"),
    **_rules("floatc", "logsumexp",
             "logsumexp(): Expected floating point type for result tensor, but got: {out}"),
    **_rules("floatc", "normal", "\"normal_kernel_cpu\" not implemented for '{out}'",
             NotImplementedError),
    **_rules("real", "bernoulli",
             "\"bernoulli_tensor_cpu_self_\" not implemented for '{out}'",
             NotImplementedError),
}
# fft's complex-output check names the n-dimensional transform, as torch
_FFT_NAME = {"fft2": "fftn", "ifft2": "fftn", "ifftn": "fftn", "rfft2": "rfftn"}
# computed in out's dtype when no dtype is given (torch: 0.5 sums to 0 into a long out)
_IN_OUT_DTYPE = ("cumsum", "cumprod")
# No autograd error, and out takes a history as torch's composite out variants give it:
# the result's through an in-place copy ("history": a backward through out works), or a
# node that raises at backward naming this aten op (a function of the arguments for diag)
_OUT_GRAPH = {
    "inner": "history", "linear_algebra.norm": "history", "matrix_norm": "history",
    **dict.fromkeys(("cond", "tensorinv", "tensorsolve", "nuclear_norm", "ldl_factor",
                     "ldl_factor_ex", "ldl_solve"), "history"),
    "softmax": "softmax", "log_softmax": "log_softmax", "heaviside": "heaviside",
    "conj_physical": "conj_physical", "slice_scatter": "slice_scatter",
    "special.ndtr": "history",  # a composite: out takes the history, as torch's
    "diag": lambda args: "diag_embed" if args[0].ndim == 1 else "diagonal_copy",
}
_RAISES = {}  # aten op -> the identity Primitive whose backward raises torch's error


def no_derivative_formula(aten):
    """The backward formula of an input of an op torch has no derivative for: it raises
    torch's error."""
    def formula(grad):
        raise RuntimeError(f"derivative for aten::{aten} is not implemented")
    return formula


def _raises_at_backward(aten):
    p = _RAISES.get(aten)
    if p is None:
        p = _RAISES[aten] = Primitive(f"out_{aten}", lambda self: self,
                                      node_name="NotImplemented",
                                      self=no_derivative_formula(aten))
    return p


_NO_DERIVATIVE = {}  # (aten op, number of outputs) -> its Primitive


def no_derivative(aten, outputs, inputs):
    """``outputs`` (computed without autograd) as the results of torch's ``NotImplemented``
    node linked to those of ``inputs`` that require grad: torch's ops without a derivative
    formula (histogram, binomial, detach_copy) return outputs that require grad, and a
    backward through them raises "derivative for aten::<aten> is not implemented". The
    tuple ``outputs`` as it is with grad mode off or no input requiring grad."""
    needs = [t for t in inputs if isinstance(t, Tensor) and t.requires_grad]
    if not (needs and _state.grad):
        return tuple(outputs)
    n = len(outputs)
    p = _NO_DERIVATIVE.get((aten, n))
    if p is None:
        def formula():
            raise RuntimeError(f"derivative for aten::{aten} is not implemented")
        p = _NO_DERIVATIVE[aten, n] = Primitive(
            f"no_derivative_{aten}", lambda *tensors, n: tensors[:n] if n > 1 else tensors[0],
            nout=n, node_name="NotImplemented", tensors=formula)
    out = p(*outputs, *needs, n=n)
    return tuple(out) if n > 1 else (out,)
TAKES_OUT = {
    "elementwise": _ELEMENTWISE.split(),
    "shape": "cat concat concatenate stack hstack vstack column_stack dstack cross".split(),
    "reduction": ("sum prod mean amax amin max min var std var_mean std_mean logsumexp "
                  "cumsum cumprod diff norm all any cummax cummin aminmax logcumsumexp "
                  "argmax argmin nanmean nansum").split(),
    "linear_algebra": ("matmul mm bmm dot vdot outer ger inner inverse matrix_power "
                       "chain_matmul tensordot linalg_solve inv det slogdet eigh eigvalsh "
                       "linalg_eig eigvals linalg_svd svdvals linalg_qr linalg_cholesky pinv "
                       "matrix_norm vector_norm cross multi_dot vecdot addmm addmv addbmm "
                       "baddbmm mv linalg_lstsq norm cond linalg_matrix_rank cholesky_ex "
                       "inv_ex solve_ex linalg_lu_solve householder_product orgqr ormqr geqrf "
                       "tensorinv tensorsolve ldl_factor ldl_factor_ex ldl_solve nuclear_norm "
                       "frobenius_norm").split(),
    "indexing": ("index_select gather take_along_dim masked_select nonzero sort topk "
                 "kthvalue tril triu diag kron take scatter scatter_add bucketize "
                 "searchsorted index_copy index_add index_reduce scatter_reduce "
                 "slice_scatter").split(),
    "fft": ("fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft "
            "ihfft hfft2 ihfft2 hfftn ihfftn").split(),
    "activation": "softmax log_softmax softshrink hardshrink gelu".split(),
    "layer": ["linear"],
    "pooling": ["avg_pool2d", "avg_pool3d"],
    "nn_extra": ["logsigmoid"],
    "creation": ["normal", "bernoulli"],
    "special": _SPECIAL_DIFF.split() + ["ndtr"] + _SPECIAL_NONDIFF.split(),
}
# factory functions: out's dtype unless dtype= is given (then it must match), and out is
# resized without a warning, as torch's
FACTORIES = {
    "creation": "zeros ones empty full eye arange linspace logspace rand randn".split(),
    "fft": ["fftfreq", "rfftfreq"],
}

# torch's C++ names of the dtypes, as its exact-dtype message prints them
_CPP = {"float32": "float", "float64": "double", "float16": "c10::Half",
        "bfloat16": "c10::BFloat16", "int64": "long int", "int32": "int",
        "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
        "bool": "bool", "complex64": "c10::complex<float>",
        "complex128": "c10::complex<double>"}
_KIND_RANK = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}


def kind(npd):
    """A NumPy dtype's kind, "f" for bfloat16 too (NumPy calls ml_dtypes' floats "V")."""
    k = npd.kind
    return "f" if k == "V" else k


def kind_rank(npd):
    """torch's category order: bool < integer < floating < complex."""
    return _KIND_RANK[kind(npd)]
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


_FITS = {"exact": lambda rd, od: False,
         "cast_exact": lambda rd, od: kind_rank(rd) <= kind_rank(od),
         "cast": lambda rd, od: kind_rank(rd) <= kind_rank(od),
         "float": lambda rd, od: kind(od) == "f",
         "floatc": lambda rd, od: kind(od) in "fc",
         "real": lambda rd, od: od.kind != "c"}


def _cast(r, o, rule, name):
    """``r``'s array in ``out``'s dtype, or torch's error where ``rule`` (``(how,
    exception, message)`` from ``_rule``) forbids it."""
    rd, od = r._data.dtype, o._data.dtype
    if rd == od:
        return r._data
    how, exc, msg = rule
    if how == "cast_exact" and _FITS[how](rd, od):
        how, msg = "exact", None
    if not _FITS[how](rd, od):
        msg = msg or _COMMON[how]
        raise exc(msg.format(res=D.from_np(rd).scalar_name, out=D.from_np(od).scalar_name,
                             cres=_CPP[rd.name], cout=_CPP[od.name], flag=rd == jnp.int32,
                             name=name))
    return r._data.astype(od)


def _clamp_rule(args, kwargs):
    """clamp's rule: with number bounds out's dtype exactly, with tensor bounds a cast."""
    if any(isinstance(a, Tensor) for a in (*args[1:], *kwargs.values())):
        return "cast", RuntimeError, None
    return _RULES["gelu"]


def _matmul_rule(args, kwargs):
    """matmul's: dot's message for two vectors, mm's otherwise."""
    if all(isinstance(a, Tensor) and a.ndim == 1 for a in args[:2]):
        return _RULES["dot"]
    return _RULES["mm"]


def _diag_rule(args, kwargs):
    """diag's: building a matrix from a vector casts first, taking a diagonal is exact."""
    return _RULES["diag_vector"] if args[0].ndim == 1 else ("exact", RuntimeError, None)


def _rule(family, name):
    """How ``name`` of ``family`` checks its out dtype (``_RULES``); for clamp, matmul and
    diag, a function of the call's arguments giving that."""
    if name in ("clamp", "clip", "clamp_min", "clamp_max"):
        return _clamp_rule
    if name == "matmul":
        return _matmul_rule
    if name == "diag":
        return _diag_rule
    return _RULES.get(f"{family}.{name}") or _RULES.get(name) or ("cast", RuntimeError, None)


def _resized(o, shape, warn=True):
    """Whether ``o`` was resized to ``shape`` (as torch's resize_output: a warning when it
    had elements); its new array is zeros."""
    if o._data.shape == shape:
        return False
    if o._data.size and warn:
        warnings.warn(_ERR_RESIZE.format(list(o._data.shape), list(shape)), UserWarning,
                      stacklevel=5)
    rebind(o, _make(jnp.zeros(shape, o._data.dtype)))
    return True


def _store(o, data, warn=True):
    """Write ``data`` into ``o`` as an in-place update (resized first if its shape
    differs)."""
    if _resized(o, data.shape, warn):
        rebind(o, _make(data))
    else:
        _write(o, data)
    o._vc.v += 1


def apply_out(fn_name, aten, rule, result, out, args, graph=None):
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
    data = [_cast(r, o, rule, fn_name) for r, o in zip(results, outs)]
    for o, d, r in zip(outs, data, results):
        if graph is not None and r.requires_grad:  # _OUT_GRAPH
            if graph != "history":
                r = _raises_at_backward(graph(args) if callable(graph) else graph)(r)
            _resized(o, d.shape)
            o.copy_(r)
        else:
            _store(o, jnp.asarray(d))
    if not many:
        return out
    return type(result)(*outs) if hasattr(result, "_fields") else outs


def _takes_out(fn, aten, rule, name, graph):

    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if aten in ("_fft_c2c", "_fft_r2c") and isinstance(out, Tensor) and \
                not out.is_complex():
            raise RuntimeError(f"{_FFT_NAME.get(name, name)} expects a complex output tensor, "
                               f"but got {out.dtype.scalar_name}")
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
        if name in _IN_OUT_DTYPE and kwargs.get("dtype") is None and isinstance(out, Tensor):
            if out.dtype.scalar_name == "Bool":
                raise NotImplementedError(f"\"{name}_out_cpu\" not implemented for 'Bool'")
            kwargs["dtype"] = out.dtype
        how = rule(args, kwargs) if callable(rule) else rule
        return apply_out(name, aten, how, fn(*args, **kwargs), out, args, graph)
    with_out.without_out = fn
    return with_out


# sequences keep out's shape when it has their length; the first three warn otherwise
_SEQUENCES = ("arange", "fftfreq", "rfftfreq", "linspace", "logspace")
_ERR_RANGE = ("The number of elements in the out tensor of shape {} is {} which does not "
              "match the computed number of elements {}. Note that this may occur as a "
              "result of rounding error. The out tensor will be resized to a tensor of shape "
              "({},).")


def _factory(fn, name):
    """``fn`` (a factory) with torch's ``out=`` (FACTORIES)."""
    @functools.wraps(fn)
    def with_out(*args, out=None, **kwargs):
        if out is None:
            return fn(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"{name}(): argument 'out' must be Tensor, not "
                            f"{type(out).__name__}")
        dtype = kwargs.get("dtype")
        if dtype is not None and D.as_dtype(dtype) != out.dtype:
            raise RuntimeError(f"dtype {D.as_dtype(dtype).scalar_name} does not match dtype "
                               f"of out parameter ({out.dtype.scalar_name})")
        kwargs["dtype"] = out.dtype
        data = fn(*args, **kwargs)._data
        if name in _SEQUENCES and out._data.size == data.size:
            data = data.reshape(out._data.shape)  # torch fills out in its own shape
        elif name in _SEQUENCES[:3] and out._data.size:
            warnings.warn(_ERR_RANGE.format(list(out._data.shape), out._data.size, data.size,
                                            data.size),
                          UserWarning, stacklevel=2)
        _store(out, data, warn=False)
        return out
    with_out.without_out = fn
    return with_out


def _tensors(*groups):
    return [t for g in groups for t in g if isinstance(t, Tensor)]


def install(namespace, family):
    """Wrap the functions of ``TAKES_OUT[family]`` and ``FACTORIES[family]`` in
    ``namespace`` (a module's dict)."""
    for name in FACTORIES.get(family, ()):
        namespace[name] = _factory(getattr(namespace[name], "without_out", namespace[name]),
                                   name)
    for name in TAKES_OUT[family]:
        fn = namespace[name]
        aten = None if name in _NO_GRAD_ERROR else _ATEN.get(name, name)
        # torch's argument parser names the linalg-only functions linalg_<name>
        parser = name if family != "linear_algebra" or name in namespace["__all__"] or \
            name.startswith("linalg_") else "linalg_" + name
        graph = _OUT_GRAPH.get(f"{family}.{name}", _OUT_GRAPH.get(name))
        if graph is not None:
            aten = None  # no autograd error: out takes a history
        namespace[name] = _takes_out(getattr(fn, "without_out", fn), aten,
                                     _rule(family, name), parser, graph)
