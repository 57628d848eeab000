"""Window functions, stft/istft, index_fill and the view scatters (slice/select/diagonal),
the in-place tril_/triu_/scatter_reduce_/fill_diagonal_/index_fill_, unravel_index and the
runtime settings, each against torch: values and dtypes, errors, gradients."""
import warnings

import jax
import numpy as np
import pytest

import wgrad
from _outcome import outcome
from wgrad.testing import assert_jax_identity, check_op

torch = pytest.importorskip("torch")

_RNG = np.random.default_rng(11)
_X1 = _RNG.standard_normal(32)
_X2 = _RNG.standard_normal((2, 30))
_XC = _RNG.standard_normal(32) + 1j * _RNG.standard_normal(32)
_S = _RNG.standard_normal((5, 9)) + 1j * _RNG.standard_normal((5, 9))  # n_fft=8 one-sided
_S2 = _RNG.standard_normal((2, 8, 7)) + 1j * _RNG.standard_normal((2, 8, 7))  # two-sided
_M = _RNG.standard_normal((3, 4))
_M3 = _RNG.standard_normal((3, 3, 3))
_TALL = _RNG.standard_normal((7, 2))
_WINDOWS = ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
            "kaiser_window")


def _t(T, a, dtype=None, rg=False):
    return T.tensor(a, dtype=dtype or (T.complex128 if np.iscomplexobj(a) else T.float64),
                    requires_grad=rg)


def _run(T, fn):
    """``fn(T)`` as numpy arrays, or ``(type, message)`` of what it raised."""
    r = outcome(T, fn)
    return r if isinstance(r, tuple) else [
        (x.detach().numpy(), str(x.dtype).rsplit(".", 1)[-1]) if hasattr(x, "detach")
        else (np.asarray(x), "") for x in r]


def _window(T, kind, n, dtype):
    return None if kind is None else (T.ones(n, dtype=dtype) if kind == "ones" else
                                      getattr(T, kind + "_window")(n, dtype=dtype))


def _stft(x, n_fft, hop, win, kind, center, mode, normalized, onesided, dtype=None):
    def fn(T):
        d = dtype or T.float64
        return T.stft(_t(T, x, dtype=d if not np.iscomplexobj(x) else None), n_fft, hop, win,
                      _window(T, kind, win or n_fft, d), center, mode, normalized, onesided,
                      return_complex=True)
    return fn


# (n_fft, hop_length, win_length, window, center, pad_mode, normalized, onesided)
_STFT_GRID = [
    (8, None, None, "hann", True, "reflect", False, None),
    (8, 3, None, "hann", True, "constant", True, None),
    (8, 2, 5, "hamming", True, "replicate", False, False),
    (8, 4, 6, None, False, "reflect", False, None),
    (7, 2, None, "blackman", True, "circular", True, True),
    (16, 5, 9, "kaiser", False, "reflect", True, False),
    (6, 1, 6, "ones", False, "reflect", False, None),
    (9, 4, 4, "bartlett", True, "reflect", False, True),
]

CASES = {
    # windows: float32 and float64, periodic and symmetric, torch's special lengths
    **{f"{w}_{n}_{p}_{d}": (lambda w, n, p, d: lambda T: getattr(T, w)(
        n, p, dtype=getattr(T, d)))(w, n, p, d)
       for w in _WINDOWS for n, p, d in ((0, False, "float64"), (1, True, "float32"),
                                         (2, False, "float32"), (7, True, "float32"),
                                         (7, False, "float64"), (8, True, "float64"))},
    "hamming_alpha_beta": lambda T: T.hamming_window(6, False, 0.6, 0.3, dtype=T.float64),
    "kaiser_beta": lambda T: T.kaiser_window(9, True, 5.5),
    "window_default_dtype_grad": lambda T: T.hann_window(5, requires_grad=True),
    # stft over the grid, each row on one of a 1-D, a batched 2-D, a complex (two-sided)
    # and a float32 signal
    **{f"stft_{i}_1d": _stft(_X1, *_STFT_GRID[i]) for i in (0, 4)},
    **{f"stft_{i}_2d": _stft(_X2, *_STFT_GRID[i]) for i in (1, 5)},
    **{f"stft_{i}_complex": _stft(_XC, *_STFT_GRID[i][:-1], _STFT_GRID[i][-1] and None)
       for i in (2, 6)},
    **{f"stft_{i}_float32": (lambda g: lambda T: _stft(_X1, *g, dtype=T.float32)(T))(
        _STFT_GRID[i]) for i in (3, 7)},
    "stft_real_output_method": lambda T: _t(T, _X2).stft(
        8, 2, window=T.hann_window(8, dtype=T.float64), return_complex=False),
    "stft_aligned": lambda T: T.stft(_t(T, _X2), 8, 3, 4, T.hann_window(4, dtype=T.float64),
                                     False, return_complex=True, align_to_window=True),
    "stft_aligned_odd": lambda T: T.stft(_t(T, _X1), 8, 2, 5, center=False,
                                         return_complex=True, align_to_window=True),
    "stft_float32_float64_window": lambda T: T.stft(
        _t(T, _X1, T.float32), 8, window=T.hann_window(8, dtype=T.float64),
        return_complex=True),
    "stft_real_complex_window": lambda T: T.stft(
        _t(T, _X1), 8, window=T.hann_window(8, dtype=T.float64).to(T.complex128)),
    # istft: one- and two-sided, real and complex output, length, batches
    "istft_onesided": lambda T: T.istft(_t(T, _S), 8, 2, window=T.hann_window(
        8, dtype=T.float64)),
    "istft_length_pads": lambda T: T.istft(_t(T, _S), 8, 2, window=T.hann_window(
        8, dtype=T.float64), length=30),
    "istft_not_centered": lambda T: T.istft(_t(T, _S), 8, 3, center=False, normalized=True,
                                            window=T.hamming_window(8, dtype=T.float64),
                                            length=14),
    "istft_win_length": lambda T: T.istft(_t(T, _S), 8, 2, 6, T.hann_window(
        6, dtype=T.float64)),
    "istft_two_sided_real_method": lambda T: _t(T, _S2).istft(8, 2, window=T.hann_window(
        8, dtype=T.float64), onesided=False),
    "istft_two_sided_complex": lambda T: T.istft(_t(T, _S2), 8, 2, window=T.hann_window(
        8, dtype=T.float64), return_complex=True),
    "istft_complex64_window": lambda T: T.istft(_t(T, _S, T.complex64), 8, 2,
                                                        window=T.hann_window(
                                                            8, dtype=T.float64)),
    "istft_no_window": lambda T: T.istft(_t(T, _S), 8, 2),
    "stft_istft_roundtrip": lambda T: T.istft(T.stft(
        _t(T, _X2), 8, 2, window=T.hann_window(8, dtype=T.float64), return_complex=True),
        8, 2, window=T.hann_window(8, dtype=T.float64), length=30),
    # index_fill
    "index_fill_dim1": lambda T: T.index_fill(_t(T, _M), 1, T.tensor([0, 2, -1]), -1.5),
    "index_fill_repeated_scalar_index": lambda T: _t(T, _M).index_fill(
        0, T.tensor(1), T.tensor(2.)),
    "index_fill_long_float_value": lambda T: T.index_fill(T.arange(6).reshape(2, 3), 1,
                                                          T.tensor([1]), 5.7),
    "index_fill_bool": lambda T: T.index_fill(T.zeros(2, 2, dtype=T.bool), 0,
                                              T.tensor([1]), 2),
    "index_fill_complex": lambda T: T.index_fill(_t(T, _M * 1j), 1, T.tensor([3]), 1 - 2j),
    "index_fill_float64_value": lambda T: T.index_fill(T.ones(2, 2), 0, T.tensor([0]),
                                                       T.tensor(0.1, dtype=T.float64)),
    "index_fill_zero_dim": lambda T: T.index_fill(T.tensor(3.), 0, T.tensor([0]), 1.),
    "index_fill_empty_index": lambda T: T.index_fill(_t(T, _M), 0,
                                                     T.tensor([], dtype=T.int64), 1.),
    # the view scatters
    "diagonal_scatter": lambda T: T.diagonal_scatter(_t(T, _M), T.ones(3, dtype=T.float64)),
    "diagonal_scatter_offset": lambda T: T.diagonal_scatter(_t(T, _M), T.ones(
        3, dtype=T.float64), 1),
    "diagonal_scatter_negative": lambda T: _t(T, _M).diagonal_scatter(
        T.ones(2, dtype=T.float64), -1),
    "diagonal_scatter_3d": lambda T: T.diagonal_scatter(_t(T, _M3), T.zeros(
        3, 2, dtype=T.float64), 1, 2, 0),
    "diagonal_scatter_cast": lambda T: T.diagonal_scatter(T.zeros(2, 2), _t(T, [1.1, 2.2])),
    "select_scatter": lambda T: T.select_scatter(_t(T, _M), T.ones(4, dtype=T.float64),
                                                 0, -1),
    "select_scatter_dim1": lambda T: _t(T, _M3).select_scatter(
        T.zeros(3, 3, dtype=T.float64), 1, 2),
    "slice_scatter_step": lambda T: T.slice_scatter(_t(T, _M), T.zeros(
        3, 2, dtype=T.float64), 1, step=2),
    "slice_scatter_negative": lambda T: T.slice_scatter(_t(T, _M), T.zeros(
        3, 2, dtype=T.float64), -1, -2, 100),
    "slice_scatter_empty": lambda T: T.slice_scatter(_t(T, _M), T.zeros(
        0, 4, dtype=T.float64), 0, 10, 20),
    "slice_scatter_method": lambda T: _t(T, _M3).slice_scatter(T.ones(
        3, 3, 1, dtype=T.float64), 2, 1, 2),
    "slice_scatter_out": lambda T: T.slice_scatter(_t(T, _M), T.zeros(3, 2, dtype=T.float64),
                                                   1, 0, 2, out=T.empty(0, dtype=T.float64)),
    # in-place variants
    "tril_": lambda T: _t(T, _M).tril_(-1),
    "triu_": lambda T: _t(T, _M3).triu_(1),
    "scatter_reduce_": lambda T: _t(T, _M).scatter_reduce_(
        0, T.tensor([[0, 1, 0, 2]]), T.ones(1, 4, dtype=T.float64), "amax",
        include_self=False),
    "index_fill_": lambda T: _t(T, _M).index_fill_(1, T.tensor([1]), 7),
    "fill_diagonal_": lambda T: _t(T, _M).fill_diagonal_(2.),
    "fill_diagonal_tall_wrap": lambda T: T.zeros(7, 2).fill_diagonal_(3, wrap=True),
    "fill_diagonal_tall_nowrap": lambda T: T.zeros(7, 2).fill_diagonal_(3),
    "fill_diagonal_cube": lambda T: _t(T, _M3).fill_diagonal_(0.),
    "fill_diagonal_long": lambda T: T.zeros(2, 3, dtype=T.int64).fill_diagonal_(1.7),
    "fill_diagonal_tensor_value": lambda T: T.zeros(2, 2).fill_diagonal_(T.tensor(4.)),
    # unravel_index
    "unravel_index": lambda T: T.unravel_index(T.tensor([[4, 1], [0, 5]]), (3, 2)),
    "unravel_index_int": lambda T: T.unravel_index(T.tensor([4, 11]), 6),
    "unravel_index_negative_int32": lambda T: T.unravel_index(
        T.tensor([-1, -7, 6], dtype=T.int32), (3, 2)),
    "unravel_index_empty_shape": lambda T: T.unravel_index(T.tensor(0), ()),
    "unravel_index_size": lambda T: T.unravel_index(T.tensor(1234), T.Size([10, 10, 10, 10])),
}

ERRORS = {
    # windows
    **{f"{w}_negative": (lambda w: lambda T: getattr(T, w)(-1))(w) for w in _WINDOWS},
    **{f"{w}_long": (lambda w: lambda T: getattr(T, w)(3, dtype=T.int64))(w)
       for w in _WINDOWS},
    "hann_window_float_length": lambda T: T.hann_window(3.),
    "hann_window_bool_length": lambda T: T.hann_window(True),
    "hann_window_bool_dtype": lambda T: T.hann_window(-1, dtype=T.bool),
    "blackman_window_complex": lambda T: T.blackman_window(4, dtype=T.complex64),
    # stft
    "stft_no_return_complex": lambda T: T.stft(_t(T, _X1), 8),
    "stft_reflect_too_wide": lambda T: T.stft(_t(T, _X1), 70, return_complex=True),
    "stft_n_fft_not_centered": lambda T: T.stft(_t(T, _X1), 33, center=False,
                                                return_complex=True),
    "stft_n_fft_zero": lambda T: T.stft(_t(T, _X1), 0, return_complex=True),
    "stft_hop_zero": lambda T: T.stft(_t(T, _X1), 8, 0, return_complex=True),
    "stft_win_length": lambda T: T.stft(_t(T, _X1), 8, win_length=9, return_complex=True),
    "stft_window_size": lambda T: T.stft(_t(T, _X1), 8, window=T.ones(5, dtype=T.float64),
                                         return_complex=True),
    "stft_window_2d": lambda T: T.stft(_t(T, _X1), 8, window=T.ones(2, 4),
                                       return_complex=True),
    "stft_3d": lambda T: T.stft(_t(T, _M3), 2, return_complex=True),
    "stft_4d": lambda T: T.stft(_t(T, _M3)[None], 2, return_complex=True),
    "stft_long": lambda T: T.stft(T.arange(20), 8, return_complex=True),
    "stft_complex_onesided": lambda T: T.stft(_t(T, _XC), 8, onesided=True),
    "stft_align_center": lambda T: T.stft(_t(T, _X1), 8, return_complex=True,
                                          align_to_window=False),
    "stft_align_overrun": lambda T: T.stft(_t(T, _X2), 8, 5, 5, center=False,
                                           return_complex=True, align_to_window=True),
    "stft_align_n_fft": lambda T: T.stft(_t(T, _X1[:7]), 8, 1, 4, center=False,
                                         return_complex=True, align_to_window=True),
    "stft_pad_mode": lambda T: T.stft(_t(T, _X1), 8, pad_mode="bogus", return_complex=True),
    "stft_reflect_too_short": lambda T: T.stft(_t(T, _X1[:3]), 8, return_complex=True),
    "stft_half": lambda T: T.stft(T.ones(20, dtype=T.float16), 8, return_complex=True),
    # istft
    "istft_real": lambda T: T.istft(_t(T, _S.real), 8),
    "istft_1d": lambda T: T.istft(_t(T, _S[0]), 8),
    "istft_0d": lambda T: T.istft(_t(T, _S[0, 0]), 8),
    "istft_4d": lambda T: T.istft(_t(T, _S2)[None], 8),
    "istft_empty": lambda T: T.istft(_t(T, _S)[:, :0], 8),
    "istft_bins_onesided": lambda T: T.istft(_t(T, _S), 10),
    "istft_bins_two_sided": lambda T: T.istft(_t(T, _S), 8, onesided=False),
    "istft_hop": lambda T: T.istft(_t(T, _S), 8, 9),
    "istft_win_length": lambda T: T.istft(_t(T, _S), 8, 2, 9),
    "istft_window_size": lambda T: T.istft(_t(T, _S), 8, 2, window=T.ones(5)),
    "istft_zero_envelope": lambda T: T.istft(_t(T, _S), 8, 2, window=T.zeros(8)),
    "istft_hann_not_centered": lambda T: T.istft(_t(T, _S), 8, 2, center=False,
                                                 window=T.hann_window(8)),
    "istft_complex_window_real": lambda T: T.istft(_t(T, _S2), 8, 2, window=T.ones(
        8, dtype=T.complex128)),
    "istft_onesided_complex": lambda T: T.istft(_t(T, _S), 8, 2, return_complex=True),
    "istft_zero_length": lambda T: T.istft(_t(T, _S), 8, 2, window=T.ones(8), length=0),
    # index_fill
    "index_fill_value_1d": lambda T: T.index_fill(_t(T, _M), 0, T.tensor([0.]),
                                                  T.tensor([1.])),
    "index_fill_int32_index": lambda T: T.index_fill(_t(T, _M), 0, T.tensor(
        [0], dtype=T.int32), 1 + 1j),
    "index_fill_complex_value": lambda T: T.index_fill(_t(T, _M), 0, T.tensor([[7]]), 1j),
    "index_fill_dim": lambda T: T.index_fill(_t(T, _M), 3, T.tensor([[0]]), 1.),
    "index_fill_2d_index": lambda T: T.index_fill(_t(T, _M), 0, T.tensor([[0]]), 1.),
    "index_fill_bounds": lambda T: T.index_fill(_t(T, _M), 0, T.tensor([1, -9, 7]), 1.),
    # scatters
    "diagonal_scatter_size": lambda T: T.diagonal_scatter(_t(T, _M), T.ones(4)),
    "diagonal_scatter_same_dims": lambda T: T.diagonal_scatter(_t(T, _M), T.ones(3), 0,
                                                               1, -1),
    "select_scatter_index": lambda T: T.select_scatter(_t(T, _M), T.ones(3), 1, 4),
    "select_scatter_0d": lambda T: T.select_scatter(T.tensor(1.), T.tensor(2.), 0, 0),
    "select_scatter_size": lambda T: T.select_scatter(_t(T, _M), T.ones(1), 0, 0),
    "slice_scatter_step": lambda T: T.slice_scatter(_t(T, _M), T.ones(3, 2), 1, step=0),
    "slice_scatter_size": lambda T: T.slice_scatter(_t(T, _M), T.ones(3, 3), 1, 1, 2),
    "slice_scatter_dim": lambda T: T.slice_scatter(_t(T, _M), T.ones(3, 4), 2),
    "slice_scatter_out_dtype": lambda T: T.slice_scatter(_t(T, _M), T.ones(1, 4), 0, 0, 1,
                                                         out=T.empty(0)),
    "slice_scatter_out_backward": lambda T: T.slice_scatter(
        _t(T, _M, rg=True), T.ones(1, 4), 0, 0, 1, out=T.empty(0)).sum().backward(),
    "slice_scatter_complex_grad": lambda T: T.slice_scatter(
        _t(T, _M * 1j), _t(T, _M[:1] * 1j, rg=True), 0, 0, 1),
    "select_scatter_complex_grad": lambda T: T.select_scatter(
        _t(T, _M * 1j, rg=True), _t(T, _M[0] * 1j), 0, 0),
    # in place
    "tril__1d": lambda T: T.ones(3).tril_(),
    "fill_diagonal__1d": lambda T: T.ones(3).fill_diagonal_(1.),
    "fill_diagonal__unequal": lambda T: T.ones(2, 2, 3).fill_diagonal_(1.),
    "fill_diagonal__complex": lambda T: T.ones(2, 2).fill_diagonal_(1j),
    "fill_diagonal__leaf": lambda T: _t(T, _M, rg=True).fill_diagonal_(1.),
    # unravel_index
    "unravel_index_float": lambda T: T.unravel_index(T.tensor([1.]), (3, 2)),
    "unravel_index_bool": lambda T: T.unravel_index(T.tensor([True]), (3, 2)),
    "unravel_index_negative_shape": lambda T: T.unravel_index(T.tensor([1]), (3, -2)),
    "unravel_index_float_shape": lambda T: T.unravel_index(T.tensor([1]), (3., 2)),
    "unravel_index_zero": lambda T: T.unravel_index(T.tensor([0]), (3, 0)),
    "unravel_index_list": lambda T: T.unravel_index([1], (3, 2)),
    # runtime settings
    "set_num_threads_zero": lambda T: T.set_num_threads(0),
    "set_num_threads_float": lambda T: T.set_num_threads(2.),
    "set_num_interop_threads_negative": lambda T: T.set_num_interop_threads(-1),
    "anomaly_int": lambda T: T.set_anomaly_enabled(1),
    "anomaly_check_nan_int": lambda T: T.set_anomaly_enabled(False, 0),
    "is_inference_int": lambda T: T.is_inference(3),
    "detach_int": lambda T: T.detach(3),
}


def _tol(dtype, name):
    """float32's tolerance for a 32-bit result or a case computed in 32 bits."""
    single = dtype in ("float32", "complex64") or "32" in name or "complex64" in name
    return (1e-5, 1e-6) if single else (1e-10, 1e-12)


@pytest.mark.parametrize("name", sorted(CASES))
def test_values_match_torch(name):
    a, b = _run(wgrad, CASES[name]), _run(torch, CASES[name])
    assert not isinstance(b, tuple), b  # a value case
    assert not isinstance(a, tuple), a
    assert len(a) == len(b)
    for (x, dx), (y, dy) in zip(a, b):
        assert x.shape == y.shape and dx == dy, (x.shape, y.shape, dx, dy)
        np.testing.assert_allclose(x, y, *_tol(dy, name))


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    a, b = _run(wgrad, ERRORS[name]), _run(torch, ERRORS[name])
    assert isinstance(b, tuple), "torch raised nothing"
    b = (b[0], b[1].split(" (Triggered internally")[0])
    assert a == b


def test_warnings_are_torchs():
    # torch 2.13's (TORCH_WARN_ONCE: a torch process says each once, so they are not
    # collected from torch here)
    expected = [
        "A window was not provided. A rectangular window will be applied,which is known to "
        "cause spectral leakage. Other windows such as torch.hann_window or "
        "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
        "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
        "device=<device>)`.",
        "stft with return_complex=False is deprecated. In a future pytorch release, stft will "
        "return complex tensors for all inputs, and return_complex=False will raise an "
        "error.\nNote: you can still call torch.view_as_real on the complex output to recover "
        "the old return format.",
        "A window was not provided. A rectangular window will be applied.Please provide the "
        "same window used by stft to make the inversion lossless.To suppress this warning and "
        "use a rectangular window, explicitly set `window=torch.ones(n_fft, device=<device>)`.",
        "The length of signal is shorter than the length parameter. Result is being padded "
        "with zeros in the tail. Please check your center and hop_length settings."]
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        s = wgrad.stft(_t(wgrad, _X1), 8, return_complex=False)
        wgrad.istft(wgrad.view_as_complex(s), 8, length=40)
    assert [str(m.message) for m in w] == expected
    assert all(m.category is UserWarning and m.filename == __file__ for m in w)


def test_window_requires_grad_and_device():
    w = wgrad.kaiser_window(4, requires_grad=True, device="cpu")
    assert w.requires_grad and w.is_leaf and w.dtype is wgrad.float32


# -- gradients ----------------------------------------------------------------------------

def _win(n):
    """A window without zeros (istft's envelope stays away from 0), as numpy."""
    return 0.6 - 0.4 * np.cos(2 * np.pi * np.arange(n) / n)


def _hann64(T, n=8):
    return _t(T, _win(n))


# (name, fn(T, *inputs), inputs as numpy arrays, complex128 as well where torch takes it)
GRADS = [
    ("stft", lambda T, x: T.stft(x, 8, 3, window=_hann64(T), return_complex=True), [_X1]),
    ("stft_batched_window", lambda T, x, w: T.stft(
        x, 8, 2, 6, w, pad_mode="constant", normalized=True, return_complex=True),
     [_X2[:, :12], _win(6)]),
    ("stft_complex", lambda T, x: T.stft(x, 6, 2, window=_hann64(T, 6)), [_XC[:12]]),
    ("stft_real_output_aligned", lambda T, x: T.stft(
        x, 8, 2, 4, center=False, return_complex=False, align_to_window=True), [_X1[:14]]),
    ("istft", lambda T, s, w: T.istft(s, 8, 2, window=w, length=12), [_S, _win(8)]),
    ("istft_complex", lambda T, s: T.istft(s, 8, 2, window=_hann64(T),
                                           return_complex=True, normalized=True),
     [_S2[0]]),
    ("index_fill", lambda T, x, v: T.index_fill(x, 1, T.tensor([0, 2, 2]), v),
     [_M, np.array(0.5)]),
    ("diagonal_scatter", lambda T, x, s: T.diagonal_scatter(x, s, 1, 1, 0),
     [_M3, _M3[0, :, :2]]),
    ("select_scatter", lambda T, x, s: T.select_scatter(x, s, 1, -2), [_M, _M[:, 0]]),
    ("slice_scatter", lambda T, x, s: T.slice_scatter(x, s, 1, 1, None, 2), [_M, _M[:, :2]]),
    ("tril_triu_", lambda T, x: (x * 1).tril_(1).triu_(), [_M]),
    ("fill_diagonal_", lambda T, x: (x * 1).fill_diagonal_(2., wrap=True), [_TALL]),
    ("index_fill_", lambda T, x: (x * 1).index_fill_(0, T.tensor([1]), -1.), [_M]),
    ("scatter_reduce_", lambda T, x, s: (x * 1).scatter_reduce_(
        0, T.tensor([[0, 2, 0, 1]]), s, "sum"), [_M, _M[:1]]),
]
# torch: real inputs only (no complex formulas)
_REAL_ONLY = {"stft_real_output_aligned", "scatter_reduce_", "select_scatter", "slice_scatter"}
_COMPLEX_ALREADY = {"stft_complex", "istft", "istft_complex"}  # the complex run is the same
# complex inputs of these take the path of a case with a complex run (stft_batched_window,
# index_fill), so a real run suffices
_REAL_SUFFICES = {"stft", "tril_triu_", "fill_diagonal_", "index_fill_"}


def _inputs(T, arrays, complex_):
    out = []
    for a in arrays:
        a = np.asarray(a)
        if complex_ and not np.iscomplexobj(a):
            a = a + 0.5j * np.cos(a)
        out.append(_t(T, a, rg=True))
    return out


def _cases(keep):
    """GRADS x (float64, complex128), the pairs ``keep(name, complex_)`` selects."""
    return [pytest.param(name, fn, arrays, c, id=f"{'complex128' if c else 'float64'}-{name}")
            for name, fn, arrays in GRADS for c in (False, True) if keep(name, c)]


@pytest.mark.parametrize("name,fn,arrays,complex_", _cases(
    lambda name, c: not c or name not in _REAL_ONLY | _COMPLEX_ALREADY | _REAL_SUFFICES))
def test_gradcheck(name, fn, arrays, complex_):
    # stft/istft are compositions of ops whose second derivatives are tested elsewhere
    check_op(lambda *xs: fn(wgrad, *xs), _inputs(wgrad, arrays, complex_), fast_mode=True,
             gradgrad="stft" not in name)


@pytest.mark.parametrize("name,fn,arrays,complex_", _cases(
    lambda name, c: name not in _REAL_ONLY | _COMPLEX_ALREADY if c
    else name in _REAL_ONLY | _COMPLEX_ALREADY | {"stft", "stft_batched_window"}))
def test_gradient_matches_torch(name, fn, arrays, complex_):

    def grads(T):
        xs = _inputs(T, arrays, complex_)
        out = fn(T, *xs)
        w = np.cos(np.arange(out.numel())).reshape(tuple(out.shape))
        if out.is_complex():
            w = w + 1j * np.sin(np.arange(out.numel())).reshape(w.shape)
        loss = (out * _t(T, w)).real.sum() if out.is_complex() else (out * _t(T, w)).sum()
        return [g.numpy() for g in T.autograd.grad(loss, xs)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a, b = grads(wgrad), grads(torch)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


# -- runtime settings ---------------------------------------------------------------------

@pytest.fixture
def _restore_settings():
    state = (wgrad.get_num_threads(), wgrad.get_num_interop_threads(),
             wgrad.are_deterministic_algorithms_enabled(),
             wgrad.is_deterministic_algorithms_warn_only_enabled(),
             wgrad.is_anomaly_enabled(), wgrad.is_anomaly_check_nan_enabled())
    yield
    wgrad.set_num_threads(state[0])
    wgrad.set_num_interop_threads(state[1])
    wgrad.use_deterministic_algorithms(state[2], warn_only=state[3])
    wgrad.set_anomaly_enabled(state[4], state[5])


def test_runtime_settings(_restore_settings):
    assert wgrad.get_num_threads() >= 1 and wgrad.get_num_interop_threads() >= 1
    wgrad.set_num_threads(3)
    wgrad.set_num_interop_threads(5)
    assert (wgrad.get_num_threads(), wgrad.get_num_interop_threads()) == (3, 5)
    assert not wgrad.are_deterministic_algorithms_enabled()
    wgrad.use_deterministic_algorithms(True, warn_only=True)
    assert wgrad.are_deterministic_algorithms_enabled()
    assert wgrad.is_deterministic_algorithms_warn_only_enabled()
    wgrad.use_deterministic_algorithms(False)
    assert not wgrad.is_deterministic_algorithms_warn_only_enabled()
    # torch's messages (not collected from torch: its first call costs seconds of imports)
    with pytest.raises(TypeError, match=r"^_set_deterministic_algorithms\(\): argument 'mode' "
                                        r"\(position 1\) must be bool, not int$"):
        wgrad.use_deterministic_algorithms(1)
    with pytest.raises(TypeError, match=r"^_set_deterministic_algorithms\(\): argument "
                                        r"'warn_only' must be bool, not int$"):
        wgrad.use_deterministic_algorithms(False, warn_only=1)
    wgrad.set_anomaly_enabled(True, False)
    assert wgrad.is_anomaly_enabled() and not wgrad.is_anomaly_check_nan_enabled()
    assert wgrad.autograd.is_anomaly_enabled()
    wgrad.set_anomaly_enabled(False)  # check_nan back to its default, as torch
    assert not wgrad.is_anomaly_enabled() and wgrad.is_anomaly_check_nan_enabled()


def test_deterministic_mode_on_a_gpu_needs_xlas_flag(_restore_settings, monkeypatch):
    """XLA's GPU atomics are deterministic only under a start-up flag: without it,
    asking for deterministic algorithms raises (warns with warn_only), never pretends."""
    monkeypatch.setattr(jax, "default_backend", lambda: "gpu")
    monkeypatch.setenv("XLA_FLAGS", "")
    with pytest.raises(RuntimeError, match="xla_gpu_deterministic_ops=true"):
        wgrad.use_deterministic_algorithms(True)
    assert not wgrad.are_deterministic_algorithms_enabled()
    with pytest.warns(UserWarning, match="xla_gpu_deterministic_ops=true"):
        wgrad.use_deterministic_algorithms(True, warn_only=True)
    assert wgrad.are_deterministic_algorithms_enabled()
    monkeypatch.setenv("XLA_FLAGS", "--xla_gpu_deterministic_ops=true")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wgrad.use_deterministic_algorithms(True)


def test_is_inference_detach_vmap():
    with wgrad.inference_mode():
        x = wgrad.ones(2)
    assert wgrad.is_inference(x) and not wgrad.is_inference(wgrad.ones(2))
    y = wgrad.ones(2, requires_grad=True)
    d = wgrad.detach(y)
    assert not d.requires_grad and d._version == y._version
    assert wgrad.vmap is wgrad.func.vmap
    assert wgrad.vmap(lambda v: v * 2)(wgrad.ones(3, 2)).tolist() == [[2., 2.]] * 3


def test_diagonal_scatter_jax_identity():
    """The new primitive against backward(g) == conj(jax.vjp(conj g)), complex128."""
    rng = np.random.default_rng(4)
    x = wgrad.tensor(rng.standard_normal((3, 4)) + 1j * rng.standard_normal((3, 4)),
                     requires_grad=True)
    s = wgrad.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    rows = np.arange(3)
    assert_jax_identity(lambda a, b: wgrad.diagonal_scatter(a, b, 1),
                        lambda a, b: a.at[rows, rows + 1].set(b), [x, s])
