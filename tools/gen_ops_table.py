"""Generate docs/ops.md: every public wgrad op, its dtypes, backward and double backward.

Nothing in the table is declared by hand: each op is *called* on tiny float64 and
complex128 inputs and checked with wgrad's own ``gradcheck`` / ``gradgradcheck`` (fast
mode), and its primitives are read off the graph it records. Ops that need special
arguments have an example call in ``EXAMPLES``; the rest are called on one 2x2 tensor.

Usage::

    python tools/gen_ops_table.py           # rewrite docs/ops.md
    python tools/gen_ops_table.py --check   # exit 1 if docs/ops.md is stale

Rows are probed on ``WGRAD_OPS_THREADS`` threads (default 4): the time is almost all XLA
compilation, which runs outside the GIL. Each probe is seeded by the op's name, so the
output does not depend on the order or the thread count.
"""
import importlib
import os
import sys
import warnings
import zlib
from concurrent.futures import ThreadPoolExecutor

__all__ = ["SECTIONS", "EXAMPLES", "NOT_PROBED", "generate", "probe", "main"]

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
if ROOT not in sys.path:  # run from a checkout without installing
    sys.path.insert(0, ROOT)

import numpy as np  # noqa: E402

from _generated import write_or_check  # noqa: E402
import wgrad  # noqa: E402
from wgrad._tensor import Tensor  # noqa: E402
from wgrad.autograd.gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from wgrad.ops._primitive import OpNode  # noqa: E402

OUT = os.path.join(ROOT, "docs", "ops.md")

# (title, module): one section per public module, one row per name in its __all__
SECTIONS = (
    ("Elementwise", "wgrad.ops.elementwise"),
    ("Shape", "wgrad.ops.shape"),
    ("Reductions", "wgrad.ops.reduction"),
    ("Indexing, scatter/gather, sorting", "wgrad.ops.indexing"),
    ("Matrix products and matrix functions", "wgrad.ops.linear_algebra"),
    ("In-place variants", "wgrad.ops.inplace"),
    ("View copies (`torch.<view>_copy`)", "wgrad.ops.copies"),
    ("Convolutions", "wgrad.ops.conv"),
    ("Comparisons", "wgrad.ops.compare"),
    ("Activations", "wgrad.ops.activation"),
    ("Layer ops: transposed convolutions, normalisation, distances", "wgrad.ops.layer"),
    ("Short-time Fourier transforms", "wgrad.ops.spectral"),
    ("`wgrad.fft`", "wgrad.fft"),
    ("`wgrad.linalg`", "wgrad.linalg"),
    ("`wgrad.nn.functional`", "wgrad.nn.functional"),
)
THREADS = int(os.environ.get("WGRAD_OPS_THREADS", "4"))
DTYPES = (("f64", "float64"), ("c128", "complex128"))


# ======================================================================================
# Example calls
# ======================================================================================

class Ex:
    """How to call an op: the leaf inputs (shapes, or ``(shape, lo, hi)`` for a value
    range; every leaf has the probed dtype and requires grad), ``pre`` (a differentiable
    preparation of the leaves, e.g. making a matrix Hermitian), ``call(op, *prepared)``
    and ``post`` (a function of the outputs that is checked instead of them, e.g. a
    gauge-invariant one). Nodes recorded by ``pre`` and ``post`` are not listed as the
    op's primitives."""

    def __init__(self, *inputs, call=None, pre=None, post=None, note=""):
        self.inputs = inputs or ((2, 2),)
        self.call = call or (lambda f, *xs: f(*xs))
        self.pre = pre or (lambda *xs: xs)
        self.post = post or (lambda *outs: outs)
        self.note = note

    def leaves(self, rng, dtype):
        out = []
        for spec in self.inputs:
            shape, lo, hi = spec if len(spec) == 3 and isinstance(spec[0], tuple) \
                else (spec, 0.2, 0.9)
            v = rng.uniform(lo, hi, shape)
            if dtype == "complex128":
                v = v + 1j * rng.uniform(lo, hi, shape)
            out.append(wgrad.tensor(v, dtype=getattr(wgrad, dtype), requires_grad=True))
        return out

    def inplace(self):
        """The same call on a clone of the first input (an in-place op needs a non-leaf)."""
        return Ex(*self.inputs, call=self.call, post=self.post, note=self.note,
                  pre=lambda *xs: (lambda ys: (ys[0].clone(),) + tuple(ys[1:]))(self.pre(*xs)))


def _i(*v):
    return wgrad.tensor(list(v), dtype=wgrad.int64)


def _mask():
    return wgrad.tensor([[True, False], [False, True]])


def _well_conditioned(a):
    return (a + 2 * wgrad.eye(2, dtype=a.dtype),)


def _hermitian(a):
    return (a + a.mH,)


def _hpd(a):
    return (a @ a.mH + wgrad.eye(2, dtype=a.dtype),)


def _abs2(t):
    return t * t.conj()


def _gauge_free(values, vectors):
    return values, _abs2(vectors)


S = (2, 2)
UNARY = Ex(S)
BINARY = Ex(S, S)
DIVISOR = Ex(S, ((2, 2), 1.1, 1.5))  # x / y in (0.13, 0.82): away from integer jumps
VECS = Ex((2,), (2,))
LIST2 = Ex(S, S, call=lambda f, a, b: f([a, b]))
ROW_SRC = Ex(S, (1, 2), call=lambda f, x, s: f(x, 0, _i(1), s))
SCATTER_SRC = Ex(S, (1, 2), call=lambda f, x, s: f(x, 0, _i([1, 0]), s))
WELL = Ex(S, pre=_well_conditioned)
GAUGE = "probed through (values, V * V.conj()), which is gauge-invariant"

# by name; "module:name" overrides a name in one module
EXAMPLES = {
    # elementwise
    **{n: BINARY for n in ("add", "sub", "rsub", "mul", "div", "true_divide", "pow", "atan2",
                           "hypot", "complex", "polar", "maximum", "minimum", "eq", "ne",
                           "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor",
                           "logical_and", "logical_or", "logical_xor", "logaddexp", "kron",
                           "arctan2", "divide", "multiply", "subtract", "greater",
                           "greater_equal", "less", "less_equal", "not_equal", "gcd", "lcm",
                           "bitwise_left_shift", "bitwise_right_shift")},
    "floor_divide": DIVISOR, "remainder": DIVISOR,
    "lerp": Ex(S, S, S), "addcmul": Ex(S, S, S), "addcdiv": Ex(S, S, ((2, 2), 1.1, 1.5)),
    "where": Ex(S, S, call=lambda f, x, y: f(_mask(), x, y)),
    "clamp": Ex(S, call=lambda f, x: f(x, 0.4, 0.7)),
    "clip": Ex(S, call=lambda f, x: f(x, 0.4, 0.7)),
    "masked_fill": Ex(S, call=lambda f, x: f(x, _mask(), 0.5)),
    "acosh": Ex(((2, 2), 1.5, 3.0)),
    "polygamma": Ex(((2, 2), 0.5, 2.0), call=lambda f, x: f(1, x)),
    "lgamma": Ex(((2, 2), 0.5, 2.0)), "digamma": Ex(((2, 2), 0.5, 2.0)),
    "erfinv": Ex(((2, 2), -0.8, 0.8)), "logit": Ex(((2, 2), 0.2, 0.8)),
    "xlogy": Ex(S, ((2, 2), 0.5, 2.0)), "fmod": DIVISOR,
    "float_power": Ex(((2, 2), 0.5, 2.0), S), "copysign": Ex(S, ((2, 2), 0.5, 1.0)),
    "heaviside": BINARY, "logaddexp2": BINARY,
    "clamp_min": Ex(S, call=lambda f, x: f(x, 0.4)),
    "clamp_max": Ex(S, call=lambda f, x: f(x, 0.4)),
    "cummax": Ex(S, call=lambda f, x: f(x, 1)), "cummin": Ex(S, call=lambda f, x: f(x, 1)),
    "logcumsumexp": Ex(S, call=lambda f, x: f(x, 1)),
    "addmm": Ex(S, S, S), "addmv": Ex((2,), S, (2,)), "mv": Ex(S, (2,)),
    "repeat_interleave": Ex(S, call=lambda f, x: f(x, 2, 1)),
    "addbmm": Ex(S, (2, 2, 2), (2, 2, 2)), "baddbmm": Ex((2, 2, 2), (2, 2, 2), (2, 2, 2)),
    "cdist": BINARY, "dist": BINARY,
    "meshgrid": Ex((2,), (2,), call=lambda f, a, b: f(a, b, indexing="ij")),
    "tensor_split": Ex(S, call=lambda f, x: f(x, 2)),
    "hsplit": Ex(S, call=lambda f, x: f(x, 2)), "vsplit": Ex(S, call=lambda f, x: f(x, 2)),
    "dsplit": Ex((2, 2, 2), call=lambda f, x: f(x, 2)),
    "block_diag": BINARY, "column_stack": LIST2, "row_stack": LIST2, "dstack": LIST2,
    "cartesian_prod": VECS,
    "searchsorted": Ex((4,), (2,), pre=lambda a, b: (a.sort().values, b)),
    "bucketize": Ex((2,), (4,), pre=lambda a, b: (a, b.sort().values)),
    "isin": Ex(S, call=lambda f, x: f(x, x)),
    **{n: Ex(((2, 2), 0.5, 2.0), ((2, 2), 0.5, 2.0)) for n in ("igamma", "igammac")},
    # shape
    "reshape": Ex(S, call=lambda f, x: f(x, 4)),
    "view": Ex(S, call=lambda f, x: f(x, 4)),
    "unflatten": Ex(S, call=lambda f, x: f(x, 1, (2, 1))),
    **{n: Ex(S, call=lambda f, x: f(x, 0, 1))
       for n in ("transpose", "swapaxes", "swapdims", "movedim", "moveaxis")},
    "permute": Ex(S, call=lambda f, x: f(x, 1, 0)),
    "squeeze": Ex((2, 1)),
    "unsqueeze": Ex(S, call=lambda f, x: f(x, 0)),
    "expand": Ex(S, call=lambda f, x: f(x, 3, 2, 2)),
    "expand_as": Ex(S, call=lambda f, x: f(x, wgrad.zeros(3, 2, 2))),
    "broadcast_to": Ex(S, call=lambda f, x: f(x, (3, 2, 2))),
    "broadcast_tensors": Ex(S, (2, 1)),
    **{n: LIST2 for n in ("cat", "concat", "concatenate", "stack", "hstack", "vstack")},
    "split": Ex(S, call=lambda f, x: f(x, 1)),
    "chunk": Ex(S, call=lambda f, x: f(x, 2)),
    "unsafe_split": Ex(S, call=lambda f, x: f(x, 1)),
    "unsafe_chunk": Ex(S, call=lambda f, x: f(x, 2)),
    **{n: Ex(S, call=lambda f, x: f(x, (1, 1)))
       for n in ("split_with_sizes", "unsafe_split_with_sizes")},
    "as_strided": Ex(S, call=lambda f, x: f(x, (2,), (3,))),
    "flip": Ex(S, call=lambda f, x: f(x, (0,))),
    "roll": Ex(S, call=lambda f, x: f(x, 1, 0)),
    "repeat": Ex(S, call=lambda f, x: f(x, 2, 1)),
    "tile": Ex(S, call=lambda f, x: f(x, (2,))),
    "to": Ex(S, call=lambda f, x: f(x, wgrad.complex128)),
    "sum_to_size": Ex(S, call=lambda f, x: f(x, 1, 2)),
    "narrow": Ex(S, call=lambda f, x: f(x, 0, 0, 1)),
    "select": Ex(S, call=lambda f, x: f(x, 0, 1)),
    "view_as": Ex(S, call=lambda f, x: f(x, wgrad.zeros(4))),
    "reshape_as": Ex(S, call=lambda f, x: f(x, wgrad.zeros(4))),
    "atleast_1d": Ex(()),
    "atleast_2d": Ex((2,)),
    "pad": Ex(S, call=lambda f, x: f(x, (1, 1))),
    # reductions
    "logsumexp": Ex(S, call=lambda f, x: f(x, 1)),
    "cumsum": Ex(S, call=lambda f, x: f(x, 1)),
    "cumprod": Ex(S, call=lambda f, x: f(x, 1)),
    # indexing
    "getitem": Ex(S, call=lambda f, x: f(x, (slice(None), 1))),
    "index_put": Ex(S, (2,), call=lambda f, x, v: f(x, (_i(0),), v)),
    "index_select": Ex(S, call=lambda f, x: f(x, 0, _i(1, 0))),
    "index_add": ROW_SRC, "index_copy": ROW_SRC,
    "gather": Ex(S, call=lambda f, x: f(x, 1, _i([0, 0], [1, 0]))),
    "take_along_dim": Ex(S, call=lambda f, x: f(x, _i([0, 1], [1, 0]), 1)),
    "take": Ex(S, call=lambda f, x: f(x, _i(0, 3))),
    "put": Ex(S, (2,), call=lambda f, x, s: f(x, _i(0, 3), s)),
    "scatter": SCATTER_SRC, "scatter_add": SCATTER_SRC,
    "scatter_reduce": Ex(S, (1, 2), call=lambda f, x, s: f(x, 0, _i([1, 0]), s, "sum")),
    "index_reduce": Ex(S, (1, 2), call=lambda f, x, s: f(x, 0, _i(1), s, "mean")),
    "masked_select": Ex(S, call=lambda f, x: f(x, _mask())),
    "masked_scatter": Ex(S, (4,), call=lambda f, x, s: f(x, _mask(), s)),
    "unfold": Ex((4,), call=lambda f, x: f(x, 0, 2, 1)),
    "topk": Ex(S, call=lambda f, x: f(x, 1)),
    "kthvalue": Ex(S, call=lambda f, x: f(x, 1)),
    # in-place only
    "copy_": BINARY,
    "fill_": Ex(S, call=lambda f, x: f(x, 0.5)),
    "fill": Ex(S, call=lambda f, x: f(x, 0.5)),
    "quantile": Ex((3,), call=lambda f, x: f(x, 0.4)),
    "nanquantile": Ex((3,), call=lambda f, x: f(x, 0.4)),
    "renorm": Ex(S, call=lambda f, x: f(x, 2, 0, 0.5)),
    "combinations": Ex((3,)),
    "mode": Ex(S, call=lambda f, x: f(x, 0)),
    "histc": Ex(S, call=lambda f, x: f(x, 4, 0.0, 1.0)),
    "cov": Ex((2, 3)),
    "corrcoef": Ex((2, 3)),
    "ldexp": Ex(S, call=lambda f, x: f(x, _i(1, 2))),
    "nextafter": BINARY,
    "mvlgamma": Ex(((2, 2), 1.5, 2.5), call=lambda f, x: f(x, 2)),
    "trapz": BINARY,
    "cumulative_trapezoid": BINARY,
    "index_fill": Ex(S, call=lambda f, x: f(x, 0, _i(1), 0.5)),
    "diagonal_scatter": Ex(S, (2,)),
    "select_scatter": Ex(S, (2,), call=lambda f, x, s: f(x, s, 0, 1)),
    "slice_scatter": Ex(S, (1, 2), call=lambda f, x, s: f(x, s, 0, 1)),
    "as_strided_scatter": Ex(S, (2,), call=lambda f, x, s: f(x, s, (2,), (3,))),
    "histogramdd": Ex(S, call=lambda f, x: f(x, 2)),
    # the view copies: their views' calls
    "as_strided_copy": Ex(S, call=lambda f, x: f(x, (2,), (3,))),
    "expand_copy": Ex(S, call=lambda f, x: f(x, (3, 2, 2))),
    "narrow_copy": Ex(S, call=lambda f, x: f(x, 0, 0, 1)),
    "permute_copy": Ex(S, call=lambda f, x: f(x, (1, 0))),
    "select_copy": Ex(S, call=lambda f, x: f(x, 0, 1)),
    "slice_copy": Ex(S, call=lambda f, x: f(x, 0, 1)),
    "split_copy": Ex(S, call=lambda f, x: f(x, 1)),
    "split_with_sizes_copy": Ex(S, call=lambda f, x: f(x, (1, 1))),
    "squeeze_copy": Ex((2, 1)),
    "transpose_copy": Ex(S, call=lambda f, x: f(x, 0, 1)),
    "unfold_copy": Ex((4,), call=lambda f, x: f(x, 0, 2, 1)),
    "unsqueeze_copy": Ex(S, call=lambda f, x: f(x, 0)),
    "view_copy": Ex(S, call=lambda f, x: f(x, (4,))),
    "fill_diagonal_": Ex(S, call=lambda f, x: f(x, 0.5)),
    "stft": Ex((8,), call=lambda f, x: f(x, 4, hop_length=2, window=wgrad.hann_window(
        4, dtype=x.dtype.to_real()), return_complex=True)),
    "istft": Ex((3, 3), call=lambda f, x: f(x, 4, hop_length=1, window=wgrad.hann_window(
        4, dtype=x.dtype.to_real()).to(x.dtype.to_real()))),
    # matrix products and functions
    **{n: BINARY for n in ("matmul", "mm", "inner", "vecdot")},
    **{n: VECS for n in ("dot", "vdot", "outer", "ger")},
    "bmm": Ex((2, 2, 2), (2, 2, 2)),
    "einsum": Ex(S, S, call=lambda f, a, b: f("ij,jk->ik", a, b)),
    "tensordot": Ex(S, S, call=lambda f, a, b: f(a, b, dims=1)),
    **{n: WELL for n in ("det", "logdet", "slogdet", "inverse", "inv")},
    "matrix_power": Ex(S, call=lambda f, a: f(a, 3)),
    "chain_matmul": Ex(S, S, S),
    "multi_dot": Ex(S, S, S, call=lambda f, a, b, c: f([a, b, c])),
    "solve": Ex(S, S, pre=lambda a, b: _well_conditioned(a) + (b,)),
    "lstsq": Ex(S, S, pre=lambda a, b: _well_conditioned(a) + (b,),
                call=lambda f, a, b: f(a, b)[0]),
    "eigh": Ex(S, pre=_hermitian, post=_gauge_free, note=GAUGE),
    "eigvalsh": Ex(S, pre=_hermitian),
    "eig": Ex(S, post=_gauge_free, note=GAUGE),
    "svd": Ex(S, call=lambda f, a: f(a, full_matrices=False),
              post=lambda u, s, vh: (_abs2(u), s, _abs2(vh)),
              note="probed through (U * U.conj(), S, Vh * Vh.conj()), which is gauge-invariant"),
    "cholesky": Ex(S, pre=_hpd),
    # torch's older factorizations and solvers (wgrad.ops.linear_algebra; the linalg ones
    # keep the plain names above)
    "wgrad.ops.linear_algebra:svd": Ex(S, post=lambda u, s, v: (_abs2(u), s, _abs2(v)),
                                       note="probed through (U * U.conj(), S, V * V.conj()), "
                                       "which is gauge-invariant"),
    "wgrad.ops.linear_algebra:qr": Ex(S, pre=_well_conditioned),
    "cholesky_solve": Ex(S, S, pre=lambda b, a: (b, _hpd(a)[0].cholesky())),
    "cholesky_inverse": Ex(S, pre=lambda a: (_hpd(a)[0].cholesky(),)),
    "triangular_solve": Ex(S, S, pre=lambda b, a: (b, _well_conditioned(a)[0].triu())),
    "lu": Ex(S, pre=_well_conditioned),
    "lu_solve": Ex(S, S, pre=lambda b, a: (b, *wgrad.lu(_well_conditioned(a)[0]))),
    "lu_unpack": Ex(S, pre=lambda a: wgrad.lu(_well_conditioned(a)[0])),
    "addr": Ex(S, (2,), (2,)),
    **{n: Ex(S, pre=_well_conditioned) for n in ("lu_factor", "lu_factor_ex")},
    "solve_triangular": Ex(S, S, pre=lambda a, b: (_well_conditioned(a)[0].triu(), b),
                           call=lambda f, a, b: f(a, b, upper=True)),
    "vander": Ex((3,)),
    "cholesky_ex": Ex(S, pre=_hpd, call=lambda f, a: f(a)[0]),
    "solve_ex": Ex(S, S, pre=lambda a, b: _well_conditioned(a) + (b,),
                   call=lambda f, a, b: f(a, b)[0]),
    "wgrad.linalg:lu_solve": Ex(S, S, pre=lambda a, b: (
        *wgrad.linalg.lu_factor(_well_conditioned(a)[0]), b)),
    "ldl_solve": Ex(S, S, pre=lambda a, b: (*wgrad.linalg.ldl_factor(a + a.mT), b)),
    **{n: Ex((3, 2), (2,)) for n in ("householder_product", "orgqr")},
    "ormqr": Ex((3, 2), (2,), (3, 2)),
    "tensorinv": Ex(S, pre=_well_conditioned, call=lambda f, a: f(a, ind=1)),
    "tensorsolve": Ex(S, (2,), pre=lambda a, b: _well_conditioned(a) + (b,)),
    "frobenius_norm": Ex(S, call=lambda f, a: f(a, (0, 1))),
    "cross": Ex((2, 3), (2, 3)),
    # convolutions
    "conv1d": Ex((1, 1, 4), (1, 1, 2), (1,)),
    "conv2d": Ex((1, 1, 3, 3), (1, 1, 2, 2), (1,)),
    "conv3d": Ex((1, 1, 2, 2, 2), (1, 1, 2, 1, 2), (1,)),
    # activations, layers and losses (wgrad.ops.activation, layer, loss; nn.functional)
    **{n: Ex(S, call=lambda f, x: f(x, 1)) for n in ("softmax", "log_softmax", "softmin")},
    "conv_transpose1d": Ex((1, 1, 4), (1, 1, 2), (1,)),
    "conv_transpose2d": Ex((1, 1, 3, 3), (1, 1, 2, 2), (1,)),
    "conv_transpose3d": Ex((1, 1, 2, 2, 1), (1, 1, 2, 1, 2), (1,)),
    "linear": Ex(S, S, (2,)),
    "bilinear": Ex(S, S, (3, 2, 2), (3,)),
    "embedding": Ex((3, 2), call=lambda f, w: f(_i(0, 2, 2), w)),
    "layer_norm": Ex(S, (2,), (2,), call=lambda f, x, w, b: f(x, (2,), w, b)),
    "batch_norm": Ex(S, (2,), (2,), call=lambda f, x, w, b: f(x, None, None, w, b, True)),
    "one_hot": Ex(S, call=lambda f, x: f((x * 3).long())),
    **{n: BINARY for n in ("cosine_similarity", "pairwise_distance", "mse_loss", "l1_loss",
                           "smooth_l1_loss", "huber_loss", "binary_cross_entropy",
                           "binary_cross_entropy_with_logits")},
    **{n: Ex(S, call=lambda f, x: f(x, _i(0, 1))) for n in ("cross_entropy", "nll_loss")},
    "kl_div": Ex(S, S, call=lambda f, x, t: f(x, t, reduction="batchmean")),
    "group_norm": Ex((1, 2, 2), call=lambda f, x: f(x, 1)),
    "instance_norm": Ex((1, 2, 2)),
    "rms_norm": Ex(S, (2,), call=lambda f, x, w: f(x, (2,), w)),
    "scaled_dot_product_attention": Ex(S, S, S),
    "local_response_norm": Ex((1, 3, 2), call=lambda f, x: f(x, 2)),
    "channel_shuffle": Ex((1, 4, 1), call=lambda f, x: f(x, 2)),
    "native_channel_shuffle": Ex((1, 4, 1), call=lambda f, x: f(x, 2)),
    "conv_tbc": Ex((3, 1, 2), (2, 2, 1), (1,), call=lambda f, x, w, b: f(x, w, b, 1)),
    "linear_cross_entropy": Ex(S, S, call=lambda f, x, w: f(x, w, _i(0, 1))),
    "multi_margin_loss": Ex(S, call=lambda f, x: f(x, _i(0, 1))),
    "multilabel_margin_loss": Ex(S, call=lambda f, x: f(x, wgrad.tensor([[1, -1], [0, 1]]))),
    "triplet_margin_with_distance_loss": Ex(S, S, S),
    "multi_head_attention_forward": Ex(
        (2, 1, 2), (6, 2), S, call=lambda f, x, w, ow: f(
            x, x, x, 2, 1, w, None, None, None, False, 0.0, ow, None, need_weights=False)[0]),
    "gaussian_nll_loss": Ex(S, S, S),
    **{n: Ex(S, S, S) for n in ("margin_ranking_loss", "cosine_embedding_loss",
                                "triplet_margin_loss")},
    **{n: BINARY for n in ("poisson_nll_loss", "hinge_embedding_loss", "soft_margin_loss",
                           "multilabel_soft_margin_loss")},
    **{f"wgrad.nn.functional:{n}_": UNARY.inplace()
       for n in ("relu", "leaky_relu", "elu", "selu", "celu", "hardtanh", "rrelu")},
    # pooling, interpolation, folding and more activations (wgrad/nn/_pooling.py ...)
    **{f"{k}{d}d": Ex((1, 1) + (2,) * d, call=lambda f, x: f(x, 2))
       for d in (1, 2, 3) for k in ("max_pool", "avg_pool")},
    **{f"max_pool{d}d_with_indices": Ex((1, 1) + (2,) * d, call=lambda f, x: f(x, 2))
       for d in (1, 2, 3)},
    **{f"max_unpool{d}d": Ex((1, 1) + (2,) * d, call=lambda f, v, i: f(v, i, 2),
                             pre=lambda x, d=d: getattr(wgrad.nn.functional, f"max_pool{d}d")(
                                 x, 2, return_indices=True))
       for d in (1, 2, 3)},
    **{f"adaptive_{k}_pool{d}d{w}": Ex((1, 1) + (2,) * d, call=lambda f, x: f(x, 1))
       for d in (1, 2, 3) for k in ("max", "avg") for w in ("", "_with_indices")
       if not (k == "avg" and w)},
    **{f"lp_pool{d}d": Ex((1, 1) + (2,) * d, call=lambda f, x: f(x, 2, 2)) for d in (1, 2, 3)},
    **{f"fractional_max_pool{d}d{w}": Ex((1, 1) + (d + 1,) * d, call=lambda f, x, d=d: f(
        x, 2, 2, _random_samples=wgrad.full((1, 1, d), 0.5, dtype=x.dtype)))
       for d in (2, 3) for w in ("", "_with_indices")},
    **{n: Ex((1, 1, 2, 2), call=lambda f, x: f(x, scale_factor=2))
       for n in ("interpolate", "upsample", "upsample_nearest", "upsample_bilinear")},
    "grid_sample": Ex((1, 1, 2, 2), ((1, 1, 2, 2), -0.8, 0.8),
                      call=lambda f, x, g: f(x, g, align_corners=False)),
    "affine_grid": Ex((1, 2, 3), call=lambda f, t: f(t, (1, 1, 2, 2), align_corners=False)),
    "embedding_bag": Ex((4, 2), call=lambda f, w: f(wgrad.tensor([0, 2, 1]), w,
                                                     wgrad.tensor([0, 1]), mode="sum")),
    "ctc_loss": Ex((3, 1, 3), call=lambda f, x: f(x.log_softmax(2), wgrad.tensor([[1]]), [3],
                                                  [1])),
    "pixel_shuffle": Ex((1, 4, 1, 1), call=lambda f, x: f(x, 2)),
    "pixel_unshuffle": Ex((1, 1, 2, 2), call=lambda f, x: f(x, 2)),
    "fold": Ex((1, 4, 1), call=lambda f, x: f(x, (2, 2), (2, 2))),
    "wgrad.nn.functional:unfold": Ex((1, 1, 2, 2), call=lambda f, x: f(x, (2, 2))),
    "prelu": Ex(S, (1,)),
    "threshold": Ex(S, call=lambda f, x: f(x, 0.5, 0.0)),
    "wgrad.nn.functional:threshold_": Ex(S, call=lambda f, x: f(x, 0.5, 0.0)).inplace(),
}

# names that are not tensor ops: shown, never called
NOT_PROBED = {
    "broadcast_shapes": "takes shapes, not tensors",
    "bincount": "counts integers (host-side); tests/ops/test_more_indexing.py",
    "fftfreq": "creation function (no tensor input)",
    "rfftfreq": "creation function (no tensor input)",
    "LinAlgError": "exception class",
    **{f"wgrad.ops.inplace:{n}_": "records no node, as torch's: the tensor keeps its history "
       "and its gradient ignores the change; tests/ops/test_opinfo_findings.py"
       for n in ("logical_not", "logical_and", "logical_or", "logical_xor")},
    **{f"wgrad.ops.linear_algebra:{n}": "removed from torch in 1.9: raises torch's error "
       "naming its replacement" for n in ("solve", "lstsq", "eig", "symeig", "matrix_rank")},
    **{n: "random (a new mask per call); its gradient is the mask, tests/nn"
       for n in ("dropout", "dropout1d", "dropout2d", "dropout3d")},
    "gumbel_softmax": "random (new Gumbel noise per call); tests/nn/test_gumbel.py",
    "unravel_index": "takes integer indices and a shape (no gradient)",
    **{n: "random (new draws per call: finite differences see other values)"
       for n in ("normal_", "uniform_", "bernoulli_", "exponential_")},
}


def example(module, name):
    ex = EXAMPLES.get(f"{module}:{name}") or EXAMPLES.get(name)
    if ex is None and module == "wgrad.ops.inplace" and name.endswith("_"):
        return (EXAMPLES.get(name[:-1]) or UNARY).inplace()
    if ex is not None and module == "wgrad.ops.inplace":
        return ex.inplace()
    return ex or UNARY


# ======================================================================================
# Probing
# ======================================================================================

def _tuple(x):
    return tuple(x) if isinstance(x, (list, tuple)) else (x,)


def _nodes(tensors):
    seen, stack = {}, [t.grad_fn for t in tensors if isinstance(t, Tensor) and t.grad_fn]
    while stack:
        n = stack.pop()
        if id(n) in seen:
            continue
        seen[id(n)] = n
        stack.extend(fn for fn, _ in n.next_functions if fn is not None)
    return seen


def _failure(e):
    return "gradcheck mismatch" if isinstance(e, GradcheckError) else type(e).__name__


def probe(f, ex, dtype, seed):
    """One (op, dtype) probe: {"fwd": error or None, "diff": bool, "bwd"/"bwd2": error or
    None (absent when not reached), "prims": set of primitive names}."""
    rng = np.random.default_rng(seed)
    leaves = ex.leaves(rng, dtype)

    def func(*xs):
        return _tuple(ex.post(*_tuple(ex.call(f, *ex.pre(*xs)))))

    res = {"prims": set()}
    try:
        xs = ex.pre(*leaves)
        before = _nodes(xs)
        outs = _tuple(ex.call(f, *xs))
        ex.post(*outs)
    except Exception as e:  # noqa: BLE001  (the probe reports whatever the op raises)
        res["fwd"] = type(e).__name__
        return res
    res["fwd"] = None
    for k, n in _nodes(outs).items():
        if k not in before and type(n).__name__ != "AccumulateGrad":
            res["prims"].add(n.prim.name if isinstance(n, OpNode) else n.name())
    res["diff"] = any(isinstance(o, Tensor) and o.requires_grad for o in outs)
    if not res["diff"]:
        return res
    for key, check in (("bwd", gradcheck), ("bwd2", gradgradcheck)):
        try:
            check(func, tuple(leaves), fast_mode=True)
        except Exception as e:  # noqa: BLE001
            res[key] = _failure(e)
            return res
        res[key] = None
    return res


_MEMO = {}


def _row(module, name):
    why = NOT_PROBED.get(f"{module}:{name}") or NOT_PROBED.get(name)
    if why:
        return f"| `{name}` | not probed | not probed | — | — | — | {why} |"
    f = getattr(importlib.import_module(module), name)
    ex = example(module, name)
    key = (f, ex)  # a name re-exported by another module is probed once
    results = _MEMO.get(key)
    if results is None:
        results = _MEMO[key] = {short: probe(f, ex, dt, zlib.crc32(f"{name}:{dt}".encode()))
                                for short, dt in DTYPES}
    cells, notes = [], []
    for short, _ in DTYPES:
        r = results[short]
        cells.append("✓" if r["fwd"] is None else "✗")
        if r["fwd"] is not None:
            notes.append(f"{short}: {r['fwd']}")
    fwd_ok = [s for s, _ in DTYPES if results[s]["fwd"] is None]
    diff = [s for s in fwd_ok if results[s]["diff"]]
    if not fwd_ok:
        bwd = bwd2 = "—"
    elif not diff:
        bwd = bwd2 = "n/a"
        notes.append("output not differentiable (integer/bool)")
    else:
        bwd = ", ".join(s for s in diff if results[s].get("bwd", "x") is None) or "—"
        bwd2 = ", ".join(s for s in diff if results[s].get("bwd2", "x") is None) or "—"
        for s in diff:
            r = results[s]
            if r["bwd"] is not None:
                notes.append(f"{s} backward: {r['bwd']}")
            elif r["bwd2"] is not None:
                notes.append(f"{s} double backward: {r['bwd2']}")
    if ex.note:
        notes.append(ex.note)
    prims = sorted(set().union(*(r["prims"] for r in results.values())))
    prims = ", ".join(f"`{p}`" for p in prims) or "—"
    return (f"| `{name}` | {cells[0]} | {cells[1]} | {bwd} | {bwd2} | {prims} | "
            f"{'; '.join(notes)} |")


HEADER = """\
# Ops

<!-- Generated by tools/gen_ops_table.py; do not edit by hand. Regenerate with
     `python tools/gen_ops_table.py` (tests/test_ops_table.py checks it is current). -->

Every public op of wgrad, one section per module and one row per name in the module's
`__all__`. Nothing here is declared by hand: the generator **calls** each op and records
what happened.

- **float64 / complex128**: ✓ when the forward accepts inputs of that dtype (2×2 tensors,
  or the small example call in `EXAMPLES` of the generator), ✗ when it raises (the
  exception type is in the notes; for most ✗ entries torch raises too).
- **backward**: the dtypes for which `wgrad.autograd.gradcheck(..., fast_mode=True)`
  passes at that point: the vector-Jacobian product of a random output direction matches
  central finite differences along a random input direction (numerical Wirtinger
  derivatives for complex inputs and outputs).
- **double backward**: the dtypes for which `gradgradcheck(..., fast_mode=True)` passes:
  the gradient computed with `create_graph=True` is itself checked the same way, with
  respect to the inputs and the incoming gradient.
- **n/a**: the op's outputs are integer or bool (never recorded); — : nothing passed,
  or the forward failed for both dtypes.
- **primitives**: the `Primitive`s (or other nodes) the call records, read off the graph;
  — when it records none (it returns its input, or its output is not differentiable).
- In-place variants are probed on a clone of the input, since an in-place op on a leaf
  that requires grad is an error.

The points are random but fixed (seeded by the op's name), inside the op's domain and away
from kinks and branch cuts; a ✓ says the op works at such a point, not that every edge case
(ties, zeros, singular matrices) is covered: the op tests in `tests/ops/` do that.
Decompositions whose vectors are defined up to a phase (eigh, eig, svd) are probed through a
gauge-invariant function of their outputs, as the notes say.
"""

TABLE_HEAD = ("| op | float64 | complex128 | backward | double backward | primitives | notes |\n"
              "|---|---|---|---|---|---|---|")


def generate():
    """The text of docs/ops.md."""
    parts = [HEADER]
    _MEMO.clear()
    with warnings.catch_warnings(), ThreadPoolExecutor(THREADS) as pool:
        warnings.simplefilter("ignore")
        for title, module in SECTIONS:
            names = importlib.import_module(module).__all__
            parts.append(f"\n## {title}\n\nModule `{module}`.\n\n{TABLE_HEAD}")
            parts.extend(pool.map(lambda n: _row(module, n), names))
    return "\n".join(parts) + "\n"


def main(argv=None):
    return write_or_check(generate, OUT, "gen_ops_table.py", argv)


if __name__ == "__main__":
    sys.exit(main())
