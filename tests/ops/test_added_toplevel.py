"""torch's top-level forms of nn.functional's ops (torch.dropout, torch.batch_norm,
torch.embedding(weight, indices), torch.kl_div(..., reduction: int), the RNN cells,
native_layer_norm/native_batch_norm/native_group_norm, conv_tbc, grid_sampler, ...) and
Tensor.prelu, each against torch itself: values and dtypes, errors, gradients (gradcheck on
float64, complex128 where torch takes complex, and the gradient torch gives). The random
ones (dropouts, rrelu in training) are compared by what a draw must satisfy."""
import warnings

import numpy as np
import pytest

import wgrad
from _outcome import arrays as _run, assert_arrays_agree, assert_grads_agree, grads
from wgrad.testing import check_op

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(7)


def _randn(*shape, cplx=False):
    a = _RNG.standard_normal(shape)
    return a + 1j * _RNG.standard_normal(shape) if cplx else a


def _c(*shape):
    return _randn(*shape, cplx=True)


def _t(T, a, dtype=None, rg=False):
    a = np.asarray(a)
    if dtype is None:
        dtype = T.complex128 if a.dtype.kind == "c" else T.float64 if a.dtype.kind == "f" \
            else T.int64 if a.dtype.kind in "iu" else T.bool
    return T.tensor(a, dtype=dtype, requires_grad=rg)


_X, _X4, _X5 = _randn(2, 3, 8), _randn(1, 2, 4, 4), _randn(1, 1, 2, 4, 4)
_X234, _C234 = _randn(2, 3, 4), _c(2, 3, 4)
_W3, _B3 = _randn(3), _randn(3)
_RM, _RV = _randn(3), np.abs(_randn(3)) + 0.5
_P, _Q = _randn(3, 4), _RNG.uniform(0.1, 0.9, (3, 4))
_TGT = np.sign(_randn(3))
_EMB, _IDX = _randn(5, 2), np.array([[0, 3], [3, 4]])
_PS, _PU = _randn(1, 8, 2, 3), _randn(1, 2, 4, 6)
_NAN_X = np.array([0.5, np.nan, 2., -1.])
_LP = np.log(_RNG.dirichlet(np.ones(4), (6, 2))).astype(np.float64)  # (T, N, C)
_CTC_T = np.array([[1, 2, 2], [3, 1, 0]])
_TBC, _TBC_W, _TBC_B = _randn(5, 2, 3), _randn(3, 3, 4), _randn(4)
_IMG, _GRID = _randn(1, 2, 3, 3), _RNG.uniform(-1.1, 1.1, (1, 2, 2, 2))
_IMG3, _GRID3 = _randn(1, 1, 2, 3, 3), _RNG.uniform(-1, 1, (1, 2, 1, 2, 3))
_TH2, _TH3 = _randn(2, 2, 3), _randn(1, 3, 4)


def _cell_args(n_in, hidden, gates, batch=3, cplx=False):
    r = _c if cplx else _randn
    return (r(batch, n_in), r(batch, hidden), r(gates * hidden, n_in),
            r(gates * hidden, hidden), r(gates * hidden), r(gates * hidden))


_LSTM, _GRU, _RNN = _cell_args(4, 5, 4), _cell_args(4, 5, 3), _cell_args(4, 5, 1)
_LSTM_C, _GRU_C, _RNN_C = (_cell_args(2, 3, g, 2, cplx=True) for g in (4, 3, 1))


def _lstm(T, a, bias=True):
    x, h, wi, wh, bi, bh = (_t(T, v) for v in a)
    return T.lstm_cell(x, (h, h * 0.5), wi, wh, *((bi, bh) if bias else ()))


def _cell(T, name, a, bias=True):
    x, h, wi, wh, bi, bh = (_t(T, v) for v in a)
    return getattr(T, name)(x, h, wi, wh, *((bi, bh) if bias else ()))


def _bn_running(T, training):
    rm, rv = _t(T, _RM), _t(T, _RV)
    out = T.batch_norm(_t(T, _X234), _t(T, _W3), _t(T, _B3), rm, rv, training, 0.3, 1e-5,
                       False)
    return out, rm, rv


def _in_running(T):
    rm, rv = _t(T, _RM), _t(T, _RV)
    out = T.instance_norm(_t(T, _X234), None, None, rm, rv, True, 0.2, 1e-5, False)
    return out, rm, rv


def _nbn(T, training, stats=True):
    rm, rv = (_t(T, _RM), _t(T, _RV)) if stats else (None, None)
    out = T.native_batch_norm(_t(T, _X234), _t(T, _W3), None, rm, rv, training, 0.1, 1e-5)
    return (*out, rm, rv) if stats else out


def _det_dropouts(T):
    """The dropouts where no draw happens: p = 0, train=False, p = 1, empty input."""
    out = []
    for name in ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout"):
        f, f_ = getattr(T, name), getattr(T, name + "_")
        out += [f(_t(T, _X234), 0.0, True), f(_t(T, _X234), 0.4, False),
                f(_t(T, _X234), 1.0, True), f(_t(T, [1, 2]), 1.0, True),
                f(_t(T, _c(2, 2)), 1.0, True), f(_t(T, np.ones((0, 3))), 0.5, True),
                f_(_t(T, _X234), 1.0, True), f_(_t(T, _X234), 0.5, False)]
    return out


def _inplace(T, name, *args):
    x = _t(T, _X234)
    r = getattr(T, name)(x, *args)
    return r, x, np.array(r is x)


_FIXED = {}


def _r(shape, cplx=False):
    """A random array fixed per shape: the same for the wgrad call and the torch call."""
    if (shape, cplx) not in _FIXED:
        _FIXED[shape, cplx] = _randn(*shape, cplx=cplx)
    return _FIXED[shape, cplx]


# name -> fn(T): compared value by value (shape, dtype, values) between wgrad and torch
VALUES = {
    "dropouts_deterministic": _det_dropouts,
    "batch_norm": lambda T: (*_bn_running(T, True), *_bn_running(T, False),
                             T.batch_norm(_t(T, _X234), None, None, None, None, True, 0.1,
                                          1e-5, True),
                             # one value per channel: allowed here (not in F.batch_norm)
                             T.batch_norm(_t(T, _P[:1]), None, None, None, None, True, 0.1,
                                          1e-5, False)),
    "instance_norm": lambda T: (*_in_running(T),
                                T.instance_norm(_t(T, _X234), _t(T, _W3), _t(T, _B3), None,
                                                None, True, 0.1, 1e-5, False),
                                T.instance_norm(_t(T, _X234), None, None, _t(T, _RM),
                                                _t(T, _RV), False, 0.1, 1e-5, False),
                                T.instance_norm(_t(T, _X234[..., :1]), None, None, None, None,
                                                True, 0.1, 1e-5, False)),
    "embedding": lambda T: (T.embedding(_t(T, _EMB), _t(T, _IDX)),
                            T.embedding(_t(T, _EMB), _t(T, _IDX, T.int32), 3, True),
                            T.embedding(_t(T, _r((4, 3), True)), _t(T, [1, 0, 1]))),
    "max_pool_long": lambda T: (*T.max_pool1d_with_indices(_t(T, [[3, 1, 2, 5]]), 2, 1, 1),
                                *T.adaptive_max_pool1d(_t(T, _X), 2)),
    "max_pool": lambda T: (T.max_pool1d(_t(T, _X), 2), T.max_pool1d(_t(T, _X), 3, 2, 1, 2, True),
                           T.max_pool1d(_t(T, _X), [2], [], [0], [1], False),
                           T.max_pool1d(_t(T, _X), 2, None), T.max_pool2d(_t(T, _X4), 2, (), 1),
                           T.max_pool3d(_t(T, _X5), 2, 1, 0, 1, True),
                           *T.max_pool1d_with_indices(_t(T, _X[0]), 3, 2, 1)),
    "avg_pool": lambda T: (T.avg_pool1d(_t(T, _X), 2), T.avg_pool1d(_t(T, _X), 3, 2, 1, True,
                                                                     False),
                           T.adaptive_avg_pool1d(_t(T, _X), (3,)),
                           *T.adaptive_max_pool1d(_t(T, _X[0]), [3])),
    "shuffles": lambda T: (T.pixel_shuffle(_t(T, _PS), 2), T.pixel_unshuffle(_t(T, _PU), 2),
                           T.channel_shuffle(_t(T, _PS), 4),
                           T.native_channel_shuffle(_t(T, _PS), 2),
                           T.native_channel_shuffle(_t(T, _r((1, 6, 2), True)), 3),
                           T.channel_shuffle(_t(T, np.arange(12).reshape(1, 6, 2)), 2)),
    "prelu": lambda T: (T.prelu(_t(T, _X234), _t(T, [0.25])),
                        T.prelu(_t(T, _X234), _t(T, _W3)), _t(T, _X234).prelu(_t(T, 0.1)),
                        T.prelu(_t(T, [-2., 0., 3.]), _t(T, [0.5])),
                        T.prelu(_t(T, -1.), _t(T, [0.2]))),
    "threshold": lambda T: (T.threshold(_t(T, _X234), 0.1, -2.0),
                            T.threshold(_t(T, _NAN_X), 1.0, 9.0),
                            T.threshold(_t(T, [0, 1, -1]), -0.5, 7.5),
                            T.threshold(_t(T, _NAN_X), 0, 1 + 0j),
                            *_inplace(T, "threshold_", 0.0, 5.0)),
    "rrelu_eval": lambda T: (T.rrelu(_t(T, _X234)), T.rrelu(_t(T, _X234), 0.2, 0.4),
                             T.rrelu(_t(T, _X234), 0.3, 0.3, True),
                             *_inplace(T, "rrelu_", 0.1, 0.5)),
    "selu_celu_": lambda T: (*_inplace(T, "selu_"), *_inplace(T, "celu_"),
                             *_inplace(T, "celu_", 2.5)),
    "constant_pad_nd": lambda T: (T.constant_pad_nd(_t(T, _X234), [1, 2], 3.0),
                                  T.constant_pad_nd(_t(T, _X234), [1, 2, -1, 0]),
                                  T.constant_pad_nd(_t(T, _X234), (0, 0, 1, 1, 2, 0), -1),
                                  T.constant_pad_nd(_t(T, [[1, 2]]), (1, 1), 2.5),
                                  T.constant_pad_nd(_t(T, _C234), (1, 1), 2 + 1j),
                                  T.constant_pad_nd(_t(T, _X234), (1, 1), 2 + 0j)),
    # reduction omitted: torch 2.13's binding reads its default as 0 (none)
    "bce_with_logits": lambda T: (
        *(T.binary_cross_entropy_with_logits(_t(T, _P), _t(T, _Q), None, None, r)
          for r in (0, 1, 2, 3, -1)),
        T.binary_cross_entropy_with_logits(_t(T, _P), _t(T, _Q)),
        T.binary_cross_entropy_with_logits(_t(T, _P), _t(T, _Q), _t(T, _Q[:, :1]),
                                           _t(T, _Q[0] * 3), 1),
        T.binary_cross_entropy_with_logits(_t(T, _P[0]), _t(T, _Q), _t(T, _Q[0]))),
    "kl_div": lambda T: (*(T.kl_div(_t(T, _P), _t(T, _Q), r) for r in (0, 1, 2, 5)),
                         T.kl_div(_t(T, _P), _t(T, _Q)),
                         T.kl_div(_t(T, _P), _t(T, _P), 2, log_target=True),
                         T.kl_div(_t(T, _P), _t(T, np.where(_Q > 0.5, _Q, 0.)), 1)),
    "margin_losses": lambda T: (
        *(T.cosine_embedding_loss(_t(T, _P), _t(T, _Q), _t(T, _TGT), 0.2, r) for r in (0, 1)),
        T.cosine_embedding_loss(_t(T, _P), _t(T, _Q), _t(T, _TGT)),
        *(T.margin_ranking_loss(_t(T, _P), _t(T, _Q), _t(T, _TGT[:, None]), 0.3, r)
          for r in (0, 2)),
        T.margin_ranking_loss(_t(T, _P), _t(T, _Q), _t(T, _TGT[:, None])),
        *(T.hinge_embedding_loss(_t(T, _P), _t(T, np.sign(_P)), 0.5, r) for r in (0, 1)),
        T.hinge_embedding_loss(_t(T, _P), _t(T, np.sign(_P))),
        *(T.triplet_margin_loss(_t(T, _P), _t(T, _Q), _t(T, _P * 0.5), 1.5, p, 1e-6, s, r)
          for p, s, r in ((2.0, False, 0), (1.0, True, 1), (3.0, False, 2))),
        T.triplet_margin_loss(_t(T, _P), _t(T, _Q), _t(T, _P * 0.5))),
    "poisson_nll_loss": lambda T: (
        T.poisson_nll_loss(_t(T, _P), _t(T, _Q * 3), True, False, 1e-8, 1),
        T.poisson_nll_loss(_t(T, _Q), _t(T, _Q * 3), False, True, 1e-3, 0),
        T.poisson_nll_loss(_t(T, _P), _t(T, _Q * 3), True, True, 1e-8, 2)),
    "ctc_loss": lambda T: (
        *(T.ctc_loss(_t(T, _LP), _t(T, _CTC_T), [6, 5], [3, 2], 0, r) for r in (0, 2)),
        T.ctc_loss(_t(T, _LP), _t(T, _CTC_T), [6, 5], [3, 2]),
        T.ctc_loss(_t(T, _LP), _t(T, _CTC_T), _t(T, [6, 5]), _t(T, [3, 2]), 3, 1, True)),
    "rnn_cells": lambda T: (*_lstm(T, _LSTM), _cell(T, "gru_cell", _GRU, False),
                            _cell(T, "rnn_tanh_cell", _RNN), _cell(T, "rnn_relu_cell", _RNN),
                            *_lstm(T, _LSTM_C, False), _cell(T, "gru_cell", _GRU_C)),
    "conv_tbc": lambda T: (*(T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W), _t(T, _TBC_B), p)
                             for p in (2, -1)),
                           T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W), _t(T, _TBC_B)),
                           T.conv_tbc(_t(T, _r((4, 1, 2), True)), _t(T, _r((2, 2, 3), True)),
                                      _t(T, _r((3,), True)))),
    "native_layer_norm": lambda T: (
        *T.native_layer_norm(_t(T, _X234), [4], None, None, 1e-5),
        *T.native_layer_norm(_t(T, _X234), (3, 4), _t(T, _r((3, 4))), _t(T, _r((3, 4))),
                             1e-3),
        *T.native_layer_norm(_t(T, _X234, T.float32), [4], None, None, 1e-5)),
    "native_batch_norm": lambda T: (*_nbn(T, True), *_nbn(T, False), *_nbn(T, True, False)),
    "native_group_norm": lambda T: (
        *T.native_group_norm(_t(T, _r((2, 4, 3))), None, None, 2, 4, 3, 2, 1e-5),
        *T.native_group_norm(_t(T, _r((2, 6, 2, 2))), _t(T, _r((6,))), _t(T, _r((6,))), 2,
                             6, 4, 3, 1e-3),
        *T.native_group_norm(_t(T, _r((2, 4))), None, None, 2, 4, 1, 4, 1e-5)),
    # each mode and padding int once (grid_sample's own table checks their combinations)
    "grid_sampler": lambda T: (*(T.grid_sampler(_t(T, _IMG), _t(T, _GRID), m, p, a)
                                 for m, p, a in ((0, 0, False), (1, 1, True), (2, 2, False))),
                               T.grid_sampler(_t(T, _IMG3), _t(T, _GRID3), 0, 2, True)),
    "affine_grid_generator": lambda T: (
        T.affine_grid_generator(_t(T, _TH2), [2, 1, 3, 4], False),
        T.affine_grid_generator(_t(T, _TH3), [1, 1, 2, 1, 3], True),
        T.affine_grid_generator(_t(T, _r((1, 2, 3), True)), [1, 1, 2, 2], False),
        T.affine_grid_generator(_t(T, _TH2), [2, 1, 0, 3], False)),
}


@pytest.mark.parametrize("name", sorted(VALUES))
def test_values_agree_with_torch(name):
    assert_arrays_agree(_run(wgrad, VALUES[name]), _run(torch, VALUES[name]))


def _lstm_err(T, x=_LSTM[0], h=_LSTM[1], c=_LSTM[1], wi=_LSTM[2], wh=_LSTM[3], b=None):
    return T.lstm_cell(_t(T, x), (_t(T, h), _t(T, c)), _t(T, wi), _t(T, wh),
                       None if b is None else _t(T, b))


ERRORS = {
    **{f"{n}_p_{p}": (lambda T, n=n, p=p: getattr(T, n)(_t(T, _X234), p, True))
       for n in ("dropout", "feature_dropout_", "alpha_dropout", "feature_alpha_dropout")
       for p in (1.5, -0.1)},
    "dropout_p_eval": lambda T: T.dropout(_t(T, _X234), 2.0, False),
    "dropout_train_int": lambda T: T.dropout(_t(T, _X234), 0.5, 1),
    "alpha_dropout_train_none": lambda T: T.alpha_dropout_(_t(T, _X234), 0.5, None),
    "feature_dropout_1d": lambda T: T.feature_dropout(_t(T, _W3), 0.5, True),
    "feature_alpha_dropout_1d": lambda T: T.feature_alpha_dropout(_t(T, _W3), 0.5, True),
    "dropout_complex": lambda T: T.dropout(_t(T, _C234), 0.5, True),
    "alpha_dropout_long": lambda T: T.alpha_dropout(_t(T, [1, 2]), 0.5, True),
    "dropout_leaf_inplace": lambda T: T.dropout_(_t(T, _X234, rg=True), 0.5, True),
    "batch_norm_1d": lambda T: T.batch_norm(_t(T, _W3), None, None, None, None, True, 0.1, 1e-5,
                                            False),
    "batch_norm_eval": lambda T: T.batch_norm(_t(T, _X234), None, None, None, None, False, 0.1,
                                              1e-5, False),
    "batch_norm_weight": lambda T: T.batch_norm(_t(T, _X234), _t(T, _W3[:2]), None, None, None,
                                                True, 0.1, 1e-5, False),
    "batch_norm_complex": lambda T: T.batch_norm(_t(T, _C234), None, None, None, None, True,
                                                 0.1, 1e-5, False),
    "batch_norm_training_int": lambda T: T.batch_norm(_t(T, _X234), None, None, None, None, 1,
                                                      0.1, 1e-5, False),
    "instance_norm_no_stats": lambda T: T.instance_norm(_t(T, _X234), None, None, _t(T, _RM),
                                                        None, False, 0.1, 1e-5, False),
    "instance_norm_1d": lambda T: T.instance_norm(_t(T, _W3), None, None, None, None, True,
                                                  0.1, 1e-5, False),
    "embedding_float_indices": lambda T: T.embedding(_t(T, _EMB), _t(T, [0., 1.])),
    "embedding_out_of_range": lambda T: T.embedding(_t(T, _EMB), _t(T, [5])),
    "embedding_negative": lambda T: T.embedding(_t(T, _EMB), _t(T, [-1])),
    "embedding_1d_weight": lambda T: T.embedding(_t(T, _W3), _t(T, [0])),
    "max_pool1d_padding": lambda T: T.max_pool1d(_t(T, _X), 2, padding=2),
    "max_pool1d_kernel_0": lambda T: T.max_pool1d(_t(T, _X), 0),
    "max_pool1d_kernel_2": lambda T: T.max_pool1d(_t(T, _X), (2, 2)),
    "max_pool1d_stride_0": lambda T: T.max_pool1d(_t(T, _X), 2, 0),
    "max_pool1d_stride_2": lambda T: T.max_pool1d(_t(T, _X), 2, (2, 2)),
    "max_pool1d_padding_neg": lambda T: T.max_pool1d(_t(T, _X), 2, 1, -1),
    "max_pool1d_padding_2": lambda T: T.max_pool1d(_t(T, _X), 2, 1, (1, 1)),
    "max_pool1d_dilation_0": lambda T: T.max_pool1d(_t(T, _X), 2, 1, 0, 0),
    "max_pool1d_dilation_2": lambda T: T.max_pool1d(_t(T, _X), 2, 1, 0, (1, 1)),
    "max_pool1d_output_size": lambda T: T.max_pool1d(_t(T, _X), 9),
    "max_pool1d_1d": lambda T: T.max_pool1d(_t(T, _W3), 2),
    "max_pool1d_long": lambda T: T.max_pool1d(_t(T, [[1, 2]]), 2),
    "max_pool1d_complex_grad": lambda T: T.max_pool1d(_t(T, _r((1, 4), True), rg=True), 2),
    "max_pool1d_return_indices": lambda T: T.max_pool1d(_t(T, _X), 2, return_indices=True),
    "max_pool1d_complex": lambda T: T.max_pool1d(_t(T, _r((1, 4), True)), 2),
    "max_pool2d_complex": lambda T: T.max_pool2d(_t(T, _r((1, 4, 4), True)), 2),
    "adaptive_max_pool1d_long": lambda T: T.adaptive_max_pool1d(_t(T, [[1, 2, 3]]), 2),
    "adaptive_max_pool1d_complex": lambda T: T.adaptive_max_pool1d(_t(T, _r((1, 4), True)), 2),
    "adaptive_avg_pool1d_long": lambda T: T.adaptive_avg_pool1d(_t(T, [[1, 2, 3]]), 2),
    "adaptive_avg_pool1d_complex": lambda T: T.adaptive_avg_pool1d(_t(T, _r((1, 4), True)), 2),
    "avg_pool1d_complex": lambda T: T.avg_pool1d(_t(T, _r((1, 4), True)), 2),
    "channel_shuffle_groups": lambda T: T.channel_shuffle(_t(T, _PS), 3),
    "native_channel_shuffle_0": lambda T: T.native_channel_shuffle(_t(T, _PS), 0),
    "native_channel_shuffle_2d": lambda T: T.native_channel_shuffle(_t(T, _P), 2),
    "native_channel_shuffle_float": lambda T: T.native_channel_shuffle(_t(T, _PS), 2.0),
    "native_channel_shuffle_backward": lambda T: T.native_channel_shuffle(
        _t(T, _PS, rg=True), 2).sum().backward(),
    "embedding_complex_grad": lambda T: T.embedding(_t(T, _r((4, 3), True), rg=True),
                                                    _t(T, [1, 0])),
    "conv_tbc_complex_grad": lambda T: T.conv_tbc(_t(T, _r((4, 1, 2), True)),
                                                  _t(T, _r((2, 2, 3), True)),
                                                  _t(T, _r((3,), True), rg=True)),
    "affine_grid_complex_grad": lambda T: T.affine_grid_generator(
        _t(T, _r((1, 2, 3), True), rg=True), [1, 1, 2, 2], False),
    "prelu_weight_2d": lambda T: T.prelu(_t(T, _X234), _t(T, np.ones((3, 1)))),
    "prelu_weight_count": lambda T: T.prelu(_t(T, _X234), _t(T, [0.1, 0.2])),
    "prelu_dtype": lambda T: T.prelu(_t(T, _X234), _t(T, [0.1], T.float32)),
    "prelu_long": lambda T: T.prelu(_t(T, [1, 2]), _t(T, [2])),
    "prelu_complex": lambda T: T.prelu(_t(T, _C234), _t(T, [0.1])),
    "prelu_complex_weight": lambda T: T.prelu(_t(T, _C234), _t(T, [0.1j])),
    "prelu_long_float": lambda T: T.prelu(_t(T, [1, 2]), _t(T, [0.5], T.float32)),
    "prelu_method_count": lambda T: _t(T, [1., 2.]).prelu(_t(T, [0.1, 0.2])),
    "threshold_complex": lambda T: T.threshold(_t(T, _C234), 0.5, 1.0),
    "threshold_complex_value": lambda T: T.threshold(_t(T, _X234), 0.5, 1j),
    "rrelu_bounds": lambda T: T.rrelu(_t(T, _X234), 0.4, 0.2),
    "rrelu_bounds_training": lambda T: T.rrelu_(_t(T, _X234), 0.4, 0.2, True),
    "rrelu_complex": lambda T: T.rrelu(_t(T, _C234)),
    "rrelu_long": lambda T: T.rrelu(_t(T, [1, -2])),
    "celu_alpha_0": lambda T: T.celu_(_t(T, _X234), 0.0),
    "selu_long": lambda T: T.selu_(_t(T, [1, -2])),
    "selu_out_of_place_long": lambda T: T.selu(_t(T, [1, -2])),
    "celu_long": lambda T: T.celu_(_t(T, [1, -2])),
    "constant_pad_nd_odd": lambda T: T.constant_pad_nd(_t(T, _X234), [1]),
    "constant_pad_nd_long": lambda T: T.constant_pad_nd(_t(T, _X234), [1] * 8),
    "constant_pad_nd_crop": lambda T: T.constant_pad_nd(_t(T, _X234), [-3, -3]),
    "constant_pad_nd_complex_value": lambda T: T.constant_pad_nd(_t(T, _X234), [1, 1], 2 + 1j),
    # (positional: given by keyword, torch's message names no position)
    **{f"kl_div_reduction_{type(r).__name__}": (lambda T, r=r: T.kl_div(
        _t(T, _P), _t(T, _Q), r)) for r in ("mean", 1.0, True)},
    "hinge_embedding_reduction_float": lambda T: T.hinge_embedding_loss(_t(T, _P), _t(T, _Q),
                                                                        1.0, 1.0),
    "bce_with_logits_reduction_str": lambda T: T.binary_cross_entropy_with_logits(
        _t(T, _P), _t(T, _Q), None, None, "sum"),
    "bce_with_logits_target_shape": lambda T: T.binary_cross_entropy_with_logits(
        _t(T, _P), _t(T, _Q[0])),
    "bce_with_logits_weight_shape": lambda T: T.binary_cross_entropy_with_logits(
        _t(T, _P[0]), _t(T, _Q[0]), _t(T, _Q[:, :1])),
    "bce_with_logits_pos_weight_shape": lambda T: T.binary_cross_entropy_with_logits(
        _t(T, _P[0]), _t(T, _Q), None, _t(T, _Q[0])),
    "bce_with_logits_complex": lambda T: T.binary_cross_entropy_with_logits(
        _t(T, _C234), _t(T, _C234)),
    "kl_div_complex": lambda T: T.kl_div(_t(T, _C234), _t(T, _C234)),
    "margin_ranking_complex": lambda T: T.margin_ranking_loss(_t(T, _C234), _t(T, _C234),
                                                             _t(T, _C234)),
    "triplet_dims": lambda T: T.triplet_margin_loss(_t(T, _P), _t(T, _Q), _t(T, _Q[0])),
    "cosine_embedding_sizes": lambda T: T.cosine_embedding_loss(_t(T, _P), _t(T, _Q),
                                                               _t(T, np.ones(4))),
    "lstm_cell_one_state": lambda T: T.lstm_cell(_t(T, _LSTM[0]), (_t(T, _LSTM[1]),),
                                                 _t(T, _LSTM[2]), _t(T, _LSTM[3])),
    "lstm_cell_tensor_hx": lambda T: T.lstm_cell(_t(T, _LSTM[0]), _t(T, _LSTM[1]),
                                                 _t(T, _LSTM[2]), _t(T, _LSTM[3])),
    "lstm_cell_input_size": lambda T: _lstm_err(T, x=_LSTM[0][:, :3]),
    "lstm_cell_weight_ih": lambda T: _lstm_err(T, wi=_LSTM[2][:16]),
    "lstm_cell_weight_hh": lambda T: _lstm_err(T, wh=_LSTM[3][:16]),
    "lstm_cell_weight_hh_cols": lambda T: _lstm_err(T, wh=_LSTM[3][:, :4]),
    "lstm_cell_batch_h": lambda T: _lstm_err(T, h=_LSTM[1][:2]),
    "lstm_cell_batch_c": lambda T: _lstm_err(T, c=_LSTM[1][:2]),
    "lstm_cell_hidden_size": lambda T: _lstm_err(T, h=_LSTM[1][:, :4]),
    "lstm_cell_input_first": lambda T: _lstm_err(T, x=_LSTM[0][:, :3], wi=_LSTM[2][:16]),
    "lstm_cell_weights_before_states": lambda T: _lstm_err(T, h=_LSTM[1][:2],
                                                           wi=_LSTM[2][:16]),
    "lstm_cell_1d_input": lambda T: _lstm_err(T, x=_LSTM[0][0], h=_LSTM[1][0], c=_LSTM[1][0]),
    "lstm_cell_dtype": lambda T: T.lstm_cell(_t(T, _LSTM[0], T.float32),
                                             (_t(T, _LSTM[1]), _t(T, _LSTM[1])),
                                             _t(T, _LSTM[2]), _t(T, _LSTM[3])),
    "gru_cell_1d_hidden": lambda T: _cell(T, "gru_cell", (_GRU[0], _GRU[1][0]) + _GRU[2:]),
    "gru_cell_weight_ih": lambda T: _cell(T, "gru_cell", _LSTM),
    "gru_cell_bias_dtype": lambda T: T.gru_cell(_t(T, _GRU[0]), _t(T, _GRU[1]), _t(T, _GRU[2]),
                                                _t(T, _GRU[3]), None,
                                                _t(T, _GRU[5], T.float32)),
    "rnn_tanh_cell_hh_dtype": lambda T: T.rnn_tanh_cell(_t(T, _RNN[0]), _t(T, _RNN[1]),
                                                        _t(T, _RNN[2]),
                                                        _t(T, _RNN[3], T.float32)),
    "rnn_relu_cell_complex": lambda T: _cell(T, "rnn_relu_cell", _RNN_C),
    "rnn_relu_cell_batch": lambda T: _cell(T, "rnn_relu_cell", (_RNN[0], _RNN[1][:2])
                                           + _RNN[2:]),
    "conv_tbc_input_2d": lambda T: T.conv_tbc(_t(T, _TBC[0]), _t(T, _TBC_W), _t(T, _TBC_B)),
    "conv_tbc_weight_2d": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W[0]), _t(T, _TBC_B)),
    "conv_tbc_bias_2d": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W), _t(T, _TBC_B[None])),
    "conv_tbc_bias_size": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W), _t(T, _TBC_B[:3])),
    "conv_tbc_channels": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W[:, :2]),
                                              _t(T, _TBC_B)),
    "conv_tbc_too_short": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _r((7, 3, 4))),
                                               _t(T, _TBC_B)),
    "conv_tbc_dtype": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W, T.float32),
                                           _t(T, _TBC_B)),
    "conv_tbc_pad_float": lambda T: T.conv_tbc(_t(T, _TBC), _t(T, _TBC_W), _t(T, _TBC_B), 1.5),
    "native_layer_norm_shape": lambda T: T.native_layer_norm(_t(T, _X234), [5], None, None,
                                                             1e-5),
    "native_layer_norm_complex": lambda T: T.native_layer_norm(_t(T, _C234), [4], None, None,
                                                               1e-5),
    "native_batch_norm_complex": lambda T: T.native_batch_norm(_t(T, _C234), None, None, None,
                                                               None, True, 0.1, 1e-5),
    "native_group_norm_numel": lambda T: T.native_group_norm(_t(T, _X234), None, None, 2, 3, 5,
                                                             3, 1e-5),
    "native_group_norm_groups": lambda T: T.native_group_norm(_t(T, _X234), None, None, 2, 3,
                                                              4, 2, 1e-5),
    "native_group_norm_weight": lambda T: T.native_group_norm(_t(T, _X234), _t(T, _W3[:2]),
                                                              None, 2, 3, 4, 3, 1e-5),
    "native_group_norm_complex": lambda T: T.native_group_norm(_t(T, _C234), None, None, 2, 3,
                                                               4, 3, 1e-5),
    "grid_sampler_align_int": lambda T: T.grid_sampler(_t(T, _IMG), _t(T, _GRID), 0, 0, 1),
    "grid_sampler_dtype": lambda T: T.grid_sampler(_t(T, _IMG), _t(T, _GRID, T.float32), 0, 0,
                                                   False),
    "grid_sampler_batch": lambda T: T.grid_sampler(_t(T, _IMG[0]), _t(T, _GRID), 0, 0, False),
    "grid_sampler_complex": lambda T: T.grid_sampler(_t(T, _r((1, 1, 2, 2), True)),
                                                     _t(T, _GRID), 0, 0,
                                                     False),
    "affine_grid_size_3": lambda T: T.affine_grid_generator(_t(T, _TH2), [2, 1, 3], True),
    "affine_grid_3d_size": lambda T: T.affine_grid_generator(_t(T, _TH2), [2, 1, 1, 4, 5],
                                                             True),
    "affine_grid_batch": lambda T: T.affine_grid_generator(_t(T, _TH2), [3, 1, 3, 4], True),
    "affine_grid_theta_rows": lambda T: T.affine_grid_generator(_t(T, _r((2, 3, 3))),
                                                                [2, 1, 2, 4], True),
    "affine_grid_theta_2d": lambda T: T.affine_grid_generator(_t(T, _TH2[0]), [2, 1, 2, 4],
                                                              True),
    "affine_grid_align_int": lambda T: T.affine_grid_generator(_t(T, _TH2), [2, 1, 2, 4], 0),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_agree_with_torch(name):
    a, b = _run(wgrad, ERRORS[name]), _run(torch, ERRORS[name])
    assert isinstance(b, tuple), "torch raised nothing"
    assert a == b


@pytest.mark.parametrize("call", [
    # torch reads uninitialised memory for an unknown mode: wgrad raises
    lambda: wgrad.grid_sampler(_t(wgrad, _IMG), _t(wgrad, _GRID), 3, 0, False),
    lambda: wgrad.grid_sampler(_t(wgrad, _IMG), _t(wgrad, _GRID), 0, -1, False),
    # torch crashes (evaluation mode without running statistics)
    lambda: wgrad.native_batch_norm(_t(wgrad, _X234), None, None, None, None, False, 0.1, 1e-5),
])
def test_where_torch_is_undefined_wgrad_raises(call):
    with pytest.raises(RuntimeError):
        call()


@pytest.mark.parametrize("call, match", [
    (lambda: wgrad.embedding(_t(wgrad, _EMB), _t(wgrad, [0]), sparse=True), "sparse"),
    (lambda: wgrad.native_group_norm(_t(wgrad, _X234), None, None, 3, 2, 4, 1, 1e-5), "N and C"),
    (lambda: wgrad.affine_grid_generator(_t(wgrad, _TH2, wgrad.int64), [2, 1, 2, 3], False),
     "theta"),
    (lambda: wgrad.rnn_tanh_cell(*(_t(wgrad, v, wgrad.int64) for v in _RNN[:4])), "floating"),
    (lambda: wgrad.avg_pool1d(_t(wgrad, [[1, 2, 4, 7]]), 2), "integers"),
])
def test_unsupported_arguments_raise(call, match):
    with pytest.raises(NotImplementedError, match=match):
        call()


# name -> (fn(T, *inputs), input arrays (complex where torch takes complex), checks: "2"
# gradcheck on the arrays and on their real parts, "1" on the arrays only)
GRADS = {
    "batch_norm": (lambda T, x, w, b: T.batch_norm(x, w, b, None, None, True, 0.1, 1e-5, False),
                   [_X234, _W3, _B3], "1"),
    "batch_norm_eval": (lambda T, x, w: T.batch_norm(x, w, None, T.tensor(_RM), T.tensor(_RV),
                                                      False, 0.1, 1e-5, False),
                        [_X234, _W3], "1"),
    "instance_norm": (lambda T, x, w: T.instance_norm(x, w, None, None, None, True, 0.1, 1e-5,
                                                      False), [_X234, _W3], "1"),
    "embedding": (lambda T, w: T.embedding(w, T.tensor(_IDX)), [_EMB], "1"),
    "max_pool1d": (lambda T, x: T.max_pool1d(x, 3, 2, 1), [_X], "1"),
    "max_pool1d_with_indices": (lambda T, x: T.max_pool1d_with_indices(x, 2)[0], [_X], "1"),
    "avg_pool1d": (lambda T, x: T.avg_pool1d(x, 3, 2, 1, True, False), [_X], "1"),
    "adaptive_max_pool1d": (lambda T, x: T.adaptive_max_pool1d(x, 3)[0], [_X], "1"),
    "shuffles": (lambda T, x, y: (T.channel_shuffle(T.pixel_shuffle(x, 2), 2),
                                  T.pixel_unshuffle(y, 2)), [_c(1, 8, 2, 1), _c(1, 2, 4, 2)], "1"),
    "prelu": (lambda T, x, w: T.prelu(x, w), [_X234, _W3], "1"),
    "prelu_method": (lambda T, x, w: x.prelu(w), [_X234, np.array([0.3])], "1"),
    "threshold": (lambda T, x: T.threshold(x, 0.2, -1.0), [_X234], "1"),
    "threshold_": (lambda T, x: T.threshold_(x * 1, 0.2, 3.0), [_X234], "1"),
    "rrelu_eval": (lambda T, x: T.rrelu(x, 0.1, 0.3), [_X234], "1"),
    "selu_celu_": (lambda T, x: T.selu_(x * 1) + T.celu_(x * 2, 0.7), [_X234], "1"),
    "constant_pad_nd": (lambda T, x: T.constant_pad_nd(x, (1, -1, 2, 0), 0.5), [_c(2, 3)], "2"),
    "bce_with_logits": (lambda T, x, t: T.binary_cross_entropy_with_logits(
        x, t, T.tensor(_Q[:, :1]), T.tensor(_Q[0] * 3), 1), [_P, _Q], "1"),
    "kl_div": (lambda T, x, t: T.kl_div(x, t, 2, log_target=True), [_P, _P * 0.5], "1"),
    "cosine_embedding": (lambda T, a, b: T.cosine_embedding_loss(a, b, T.tensor(_TGT), 0.1, 1),
                         [_P, _Q], "1"),
    "margin_ranking": (lambda T, a, b: T.margin_ranking_loss(a, b, T.tensor(_TGT[:, None]),
                                                             0.3), [_P, _Q], "1"),
    "hinge_embedding": (lambda T, x: T.hinge_embedding_loss(x, T.tensor(np.sign(_Q - 0.5)),
                                                            0.5, 2), [_P], "1"),
    "triplet": (lambda T, a, p, n: T.triplet_margin_loss(a, p, n, 1.5, 2.0, 1e-6, True, 1),
                [_P, _Q, _P * 0.5 + 0.1], "1"),
    "poisson_nll": (lambda T, x, t: T.poisson_nll_loss(x, t, True, True, 1e-8, 1),
                    [_P, _Q * 3], "1"),
    # "n": torch has no double backward (its error is wgrad's: tests/nn/test_ctc.py)
    "ctc": (lambda T, lp: T.ctc_loss(lp.log_softmax(2), T.tensor([[1, 2]]), [3], [2], 0, 2),
            [_LP[:3, :1, :3]], "1n"),
    "lstm_cell": (lambda T, x, h, wi, wh, bi, bh: T.lstm_cell(x, (h, h * 0.5), wi, wh, bi, bh),
                  list(_LSTM_C), "2"),
    "gru_cell": (lambda T, x, h, wi, wh, bi, bh: T.gru_cell(x, h, wi, wh, bi, bh), list(_GRU_C),
                 "1"),
    "rnn_tanh_cell": (lambda T, x, h, wi, wh: T.rnn_tanh_cell(x, h, wi, wh), list(_RNN_C[:4]),
                      "1"),
    "rnn_relu_cell": (lambda T, x, h, wi, wh, bi, bh: T.rnn_relu_cell(x, h, wi, wh, bi, bh),
                      list(_RNN), "1"),
    "conv_tbc": (lambda T, x, w, b: T.conv_tbc(x, w, b, 1), [_TBC, _TBC_W, _TBC_B], "1"),
    "conv_tbc_crop": (lambda T, x, w, b: T.conv_tbc(x, w, b, -1), [_TBC, _TBC_W, _TBC_B], "1"),
    "native_layer_norm": (lambda T, x, w, b: T.native_layer_norm(x, [4], w, b, 1e-5)[0],
                          [_X234, _randn(4), _randn(4)], "1"),
    "native_batch_norm": (lambda T, x, w: T.native_batch_norm(x, w, None, None, None, True, 0.1,
                                                              1e-5)[0], [_X234, _W3], "1"),
    "native_group_norm": (lambda T, x, w, b: T.native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5),
                          [_randn(2, 4, 3), _randn(4), _randn(4)], "1"),
    "grid_sampler": (lambda T, x, g: T.grid_sampler(x, g, 0, 1, False), [_IMG, _GRID * 0.9],
                     "1"),
    "affine_grid_generator": (lambda T, th: T.affine_grid_generator(th, [1, 1, 2, 3], True),
                              [_TH2[:1]], "1"),
}


def _tensors(T, arrays, real=False):
    return [_t(T, a.real if real else a, rg=True) for a in arrays]


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradcheck(name):
    fn, arrays, checks = GRADS[name]
    for real in ((False, True) if "2" in checks else (False,)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_op(lambda *xs: fn(wgrad, *xs), _tensors(wgrad, arrays, real),
                     gradgrad=not real and "n" not in checks, fast_mode=True, atol=1e-6, rtol=1e-4)


@pytest.mark.parametrize("name", sorted(GRADS))
def test_gradients_agree_with_torch(name):
    fn, arrays = GRADS[name][:2]
    assert_grads_agree(*(grads(T, fn, _tensors(T, arrays)) for T in (wgrad, torch)))


def test_embedding_scaled_gradient_is_torchs():
    # scale_grad_by_freq divides each row's gradient by its count, padding_idx's row gets
    # none: not derivatives, so compared with torch's only
    got = []
    for T in (wgrad, torch):
        w = _t(T, _EMB, rg=True)
        T.embedding(w, T.tensor(_IDX), -1, True).pow(2).sum().backward()
        T.embedding(w, T.tensor(_IDX), 3).pow(3).sum().backward()  # no gradient to row 3
        got.append(w.grad.numpy())
    np.testing.assert_allclose(*got, rtol=1e-12)


def test_statistics_outputs_are_differentiable_as_torchs():
    # native_layer_norm/native_batch_norm: out only; native_group_norm: all three
    x = _t(wgrad, _X234, rg=True)
    calls = (lambda T, x: T.native_layer_norm(x, [4], None, None, 1e-5),
             lambda T, x: T.native_batch_norm(x, None, None, None, None, True, 0.1, 1e-5),
             lambda T, x: T.native_group_norm(x, None, None, 2, 3, 4, 3, 1e-5))
    for call in calls:
        want = [t.requires_grad for t in call(torch, _t(torch, _X234, rg=True))]
        assert [t.requires_grad for t in call(wgrad, x)] == want


# -- the random ones: what every draw satisfies, compared with torch's ------------------

_ONES = np.ones((40, 30, 2))
_DROPOUTS = ("dropout", "feature_dropout", "alpha_dropout", "feature_alpha_dropout")


@pytest.mark.parametrize("name", _DROPOUTS)
def test_dropout_draws(name):
    p = 0.3
    outs = {}
    for T in (wgrad, torch):
        x = _t(T, _ONES, rg=True)
        out = getattr(T, name)(x, p, True)
        out.backward(T.ones_like(out))
        outs[T] = out.detach().numpy(), x.grad.numpy()
    (w, wg), (t, tg) = outs[wgrad], outs[torch]
    # the same two values (the kept and the dropped one), in about the same proportions
    np.testing.assert_allclose(np.unique(w), np.unique(t), rtol=1e-12)
    kept = w == w.max()
    assert abs(kept.mean() - (1 - p)) < 0.05
    if name.startswith("feature"):  # one draw per (sample, channel)
        assert (kept == kept[..., :1]).all()
    # the gradient: torch's scale where kept, 0 where dropped
    np.testing.assert_allclose(np.unique(wg), np.unique(tg), rtol=1e-12)
    assert ((wg != 0) == kept).all()


@pytest.mark.parametrize("name", _DROPOUTS)
def test_inplace_dropout_writes_the_input(name):
    x = wgrad.ones(50, 4)
    out = getattr(wgrad, name + "_")(x, 0.5, True)
    assert out is x and x._version == 1
    assert set(np.unique(x.numpy())) == set(np.unique(getattr(wgrad, name)(
        wgrad.ones(50, 4), 0.5, True).numpy()))


def test_rrelu_training_draws():
    lower, upper = 0.1, 0.4
    x = _t(wgrad, -np.abs(_randn(500)) - 0.1, rg=True)
    y = wgrad.rrelu(x, lower, upper, True)
    y.sum().backward()
    slope = (y / x).detach().numpy()
    assert (slope >= lower).all() and (slope <= upper).all() and slope.std() > 0.05
    np.testing.assert_allclose(x.grad.numpy(), slope, rtol=1e-12)  # torch's noise gradient
    pos = wgrad.tensor([1., 2.])
    assert wgrad.rrelu(pos, lower, upper, True).tolist() == [1., 2.]
    # a generator (the numpy Generator wgrad draws from) gives the same draws again
    a = wgrad.rrelu(x.detach(), lower, upper, True, np.random.default_rng(3))
    b = wgrad.rrelu_(x.detach().clone(), lower, upper, True, generator=np.random.default_rng(3))
    assert a.tolist() == b.tolist()


def test_tensor_prelu_is_the_function():
    assert wgrad.Tensor.prelu is wgrad.prelu
    assert wgrad.nn.functional.prelu is wgrad.prelu
