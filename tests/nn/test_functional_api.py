"""wgrad.nn.functional beyond values and gradients: torch's error messages and warnings,
dropout, batch_norm's running statistics, in-place activations, embedding's max_norm,
the top-level functions and Tensor methods torch has."""
import importlib
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.testing import to_np

torch = pytest.importorskip("torch")

F = wgrad.nn.functional


def _f64(m, *shape):
    return m.ones(*shape, dtype=m.float64)


def _idx(m, values):
    return m.tensor(values)


# each entry is called with m = torch, then m = wgrad: both must raise the same exception
# type with the same message
ERRORS = {
    "linear_shapes": lambda m: m.nn.functional.linear(_f64(m, 3, 4), _f64(m, 2, 5)),
    "bilinear_input2": lambda m: m.nn.functional.bilinear(
        _f64(m, 3, 4), _f64(m, 3, 3), _f64(m, 2, 4, 4)),
    "bilinear_batch": lambda m: m.nn.functional.bilinear(
        _f64(m, 3, 4), _f64(m, 2, 4), _f64(m, 2, 4, 4)),
    "bilinear_bias": lambda m: m.nn.functional.bilinear(
        _f64(m, 3, 4), _f64(m, 3, 4), _f64(m, 2, 4, 4), _f64(m, 3)),
    "conv_t_dims": lambda m: m.nn.functional.conv_transpose1d(_f64(m, 5), _f64(m, 4, 3, 2)),
    "conv_t_channels": lambda m: m.nn.functional.conv_transpose1d(
        _f64(m, 1, 3, 5), _f64(m, 4, 3, 2)),
    "conv_t_output_padding": lambda m: m.nn.functional.conv_transpose1d(
        _f64(m, 1, 4, 5), _f64(m, 4, 3, 2), stride=2, output_padding=2),
    "conv_t_output_padding_2d": lambda m: m.nn.functional.conv_transpose2d(
        _f64(m, 1, 4, 5, 5), _f64(m, 4, 3, 2, 2), output_padding=(1, 0)),
    "conv_t_too_small": lambda m: m.nn.functional.conv_transpose1d(
        _f64(m, 1, 4, 5), _f64(m, 4, 3, 2), padding=3),
    "conv_t_groups": lambda m: m.nn.functional.conv_transpose1d(
        _f64(m, 1, 4, 5), _f64(m, 4, 3, 2), groups=3),
    "conv_t_bias": lambda m: m.nn.functional.conv_transpose1d(
        _f64(m, 1, 4, 5), _f64(m, 4, 3, 2), _f64(m, 2)),
    "conv_t_stride_len": lambda m: m.nn.functional.conv_transpose2d(
        _f64(m, 1, 4, 5, 5), _f64(m, 4, 3, 2, 2), stride=(1, 2, 3)),
    "embedding_range": lambda m: m.nn.functional.embedding(_idx(m, [5]), _f64(m, 5, 2)),
    "embedding_padding_idx": lambda m: m.nn.functional.embedding(
        _idx(m, [1]), _f64(m, 5, 2), padding_idx=5),
    "embedding_float": lambda m: m.nn.functional.embedding(m.tensor([1.]), _f64(m, 5, 2)),
    "embedding_weight_1d": lambda m: m.nn.functional.embedding(_idx(m, [1]), _f64(m, 5)),
    "dropout_p": lambda m: m.nn.functional.dropout(_f64(m, 3), 1.5),
    "dropout_complex": lambda m: m.nn.functional.dropout(m.ones(3, dtype=m.complex128)),
    "layer_norm_shape": lambda m: m.nn.functional.layer_norm(_f64(m, 3, 4), (5,)),
    "layer_norm_shape_2": lambda m: m.nn.functional.layer_norm(_f64(m, 3, 4), (3, 3)),
    "layer_norm_complex": lambda m: m.nn.functional.layer_norm(
        m.ones(3, 4, dtype=m.complex128), (4,)),
    "batch_norm_one_value": lambda m: m.nn.functional.batch_norm(
        _f64(m, 1, 4), None, None, training=True),
    "batch_norm_eval_no_stats": lambda m: m.nn.functional.batch_norm(_f64(m, 3, 4), None,
                                                                      None),
    "batch_norm_stats_size": lambda m: m.nn.functional.batch_norm(
        _f64(m, 3, 4), _f64(m, 3), _f64(m, 3)),
    "gelu_approximate": lambda m: m.nn.functional.gelu(_f64(m, 3), approximate="foo"),
    "softmax_long": lambda m: m.nn.functional.softmax(m.tensor([1, 2]), 0),
    "softmax_complex": lambda m: m.nn.functional.softmax(m.ones(2, dtype=m.complex128), 0),
    "elu_complex": lambda m: m.nn.functional.elu(m.ones(2, dtype=m.complex128)),
    "gelu_complex": lambda m: m.nn.functional.gelu(m.ones(2, dtype=m.complex64)),
    "mish_complex": lambda m: m.nn.functional.mish(m.ones(2, dtype=m.complex128)),
    "leaky_relu_complex": lambda m: m.nn.functional.leaky_relu(m.ones(2, dtype=m.complex128)),
    "smooth_l1_beta": lambda m: m.nn.functional.smooth_l1_loss(_f64(m, 3), _f64(m, 3),
                                                               beta=-1),
    "huber_delta": lambda m: m.nn.functional.huber_loss(_f64(m, 3), _f64(m, 3), delta=0),
    "reduction": lambda m: m.nn.functional.mse_loss(_f64(m, 3), _f64(m, 3), reduction="x"),
    "mse_weight_size": lambda m: m.nn.functional.mse_loss(_f64(m, 3), _f64(m, 3),
                                                          weight=_f64(m, 1)),
    "mse_complex": lambda m: m.nn.functional.mse_loss(m.ones(2, dtype=m.complex128),
                                                      m.ones(2, dtype=m.complex128)),
    "one_hot_dtype": lambda m: m.nn.functional.one_hot(m.tensor([1.])),
    "one_hot_negative": lambda m: m.nn.functional.one_hot(_idx(m, [-1])),
    "one_hot_classes": lambda m: m.nn.functional.one_hot(_idx(m, [3]), 2),
    "one_hot_empty": lambda m: m.nn.functional.one_hot(m.tensor([], dtype=m.int64)),
    "cosine_complex": lambda m: m.nn.functional.cosine_similarity(
        m.ones(2, 2, dtype=m.complex128), m.ones(2, 2, dtype=m.complex128)),
    "ce_batch": lambda m: m.nn.functional.cross_entropy(_f64(m, 3, 4), _idx(m, [0, 1])),
    "ce_multi_target": lambda m: m.nn.functional.cross_entropy(_f64(m, 3, 4), _f64(m, 3, 5)),
    "ce_out_of_bounds": lambda m: m.nn.functional.cross_entropy(_f64(m, 3, 4),
                                                                _idx(m, [0, 1, 7])),
    "ce_float_target": lambda m: m.nn.functional.cross_entropy(_f64(m, 3, 4), _f64(m, 3)),
    "ce_prob_long_target": lambda m: m.nn.functional.cross_entropy(
        _f64(m, 3, 4), m.ones(3, 4, dtype=m.int64)),
    "ce_weight": lambda m: m.nn.functional.cross_entropy(_f64(m, 3, 4), _idx(m, [0, 1, 2]),
                                                         weight=_f64(m, 3)),
    "ce_nd_target": lambda m: m.nn.functional.cross_entropy(_f64(m, 3, 4, 2),
                                                            _idx(m, [0, 1, 2])),
    "ce_label_smoothing": lambda m: m.nn.functional.cross_entropy(
        _f64(m, 3, 4), _idx(m, [0, 1, 2]), label_smoothing=1.5),
    "ce_complex": lambda m: m.nn.functional.cross_entropy(
        m.ones(3, 4, dtype=m.complex128), _idx(m, [0, 1, 2])),
    "nll_1d": lambda m: m.nn.functional.nll_loss(_f64(m, 3), _idx(m, [0, 1])),
    "nll_nd_target": lambda m: m.nn.functional.nll_loss(_f64(m, 3, 4, 5),
                                                        m.zeros(3, 6, dtype=m.int64)),
    "bce_size": lambda m: m.nn.functional.binary_cross_entropy(_f64(m, 3), _f64(m, 2)),
    "bce_range": lambda m: m.nn.functional.binary_cross_entropy(_f64(m, 3) * 2, _f64(m, 3)),
    "bce_logits_size": lambda m: m.nn.functional.binary_cross_entropy_with_logits(
        _f64(m, 3), _f64(m, 2)),
    "group_norm_groups": lambda m: m.nn.functional.group_norm(_f64(m, 2, 6, 3), 4),
    "instance_norm_one_element": lambda m: m.nn.functional.instance_norm(_f64(m, 2, 3, 1)),
    "softshrink_lambda": lambda m: m.nn.functional.softshrink(m.ones(3), -1.0),
    "hardshrink_complex": lambda m: m.nn.functional.hardshrink(m.ones(2, dtype=m.complex64)),
    "pdist_dims": lambda m: m.nn.functional.pdist(_f64(m, 3)),
    "pdist_complex": lambda m: m.nn.functional.pdist(m.ones(3, 2, dtype=m.complex128)),
    "rms_norm_shape": lambda m: m.nn.functional.rms_norm(_f64(m, 2, 6, 3), (4,)),
    "sdpa_mask_and_causal": lambda m: m.nn.functional.scaled_dot_product_attention(
        _f64(m, 2, 3, 4), _f64(m, 2, 5, 4), _f64(m, 2, 5, 6),
        attn_mask=m.ones(3, 5, dtype=m.bool), is_causal=True),
    "gaussian_nll_negative_var": lambda m: m.nn.functional.gaussian_nll_loss(
        _f64(m, 3, 4), _f64(m, 3, 4), -_f64(m, 3, 4)),
    "gaussian_nll_var_size": lambda m: m.nn.functional.gaussian_nll_loss(
        _f64(m, 3, 4), _f64(m, 3, 4), _f64(m, 3, 2)),
    "linear_dtypes": lambda m: m.nn.functional.linear(m.ones(2, 3), _f64(m, 4, 3)),
    "linear_complex_real": lambda m: m.nn.functional.linear(
        m.ones(2, 3, dtype=m.complex128), _f64(m, 4, 3)),
    "linear_bias_dtype": lambda m: m.nn.functional.linear(m.ones(2, 3), m.ones(4, 3),
                                                          _f64(m, 4)),
    "conv_t_dtypes": lambda m: m.nn.functional.conv_transpose1d(_f64(m, 1, 2, 3),
                                                                m.ones(2, 1, 2)),
    "layer_norm_weight_f64": lambda m: m.nn.functional.layer_norm(m.ones(2, 3), (3,),
                                                                  _f64(m, 3)),
    "layer_norm_weight_f32": lambda m: m.nn.functional.layer_norm(_f64(m, 2, 3), (3,),
                                                                  m.ones(3)),
    "nll_weight_dtype": lambda m: m.nn.functional.nll_loss(m.ones(2, 3), _idx(m, [0, 1]),
                                                           weight=_f64(m, 3)),
    "bce_target_dtype": lambda m: m.nn.functional.binary_cross_entropy(_f64(m, 3) * 0.5,
                                                                       m.ones(3)),
    "kl_div_complex": lambda m: m.nn.functional.kl_div(
        m.ones(2, dtype=m.complex128), m.ones(2, dtype=m.complex128), reduction="sum"),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_error_matches_torch(name):
    call = ERRORS[name]
    with pytest.raises(Exception) as expected:
        call(torch)
    with pytest.raises(Exception) as got:
        call(wgrad)
    assert type(got.value) is type(expected.value)
    assert str(got.value) == str(expected.value)


def _messages(call, m):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        call(m)
    return [(x.category, str(x.message)) for x in w]


WARNINGS = {
    "softmax_implicit_dim": lambda m: m.nn.functional.softmax(_f64(m, 3, 4)),
    "log_softmax_implicit_dim": lambda m: m.nn.functional.log_softmax(_f64(m, 2, 3, 4)),
    "softmin_implicit_dim": lambda m: m.nn.functional.softmin(_f64(m, 4)),
    "target_size": lambda m: m.nn.functional.mse_loss(_f64(m, 3, 4), _f64(m, 3, 1)),
    "kl_div_mean": lambda m: m.nn.functional.kl_div(_f64(m, 3), _f64(m, 3)),
    "legacy_reduction": lambda m: m.nn.functional.l1_loss(_f64(m, 3), _f64(m, 3),
                                                          size_average=False),
    "legacy_reduce": lambda m: m.nn.functional.nll_loss(_f64(m, 3, 4), _idx(m, [0, 1, 2]),
                                                        reduce=False),
}


@pytest.mark.parametrize("name", sorted(WARNINGS))
def test_warning_matches_torch(name):
    expected = _messages(WARNINGS[name], torch)
    assert expected
    assert _messages(WARNINGS[name], wgrad) == expected


def test_implicit_softmax_dim_follows_torch():
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for arr in (x[0, 0], x[0], x):
            np.testing.assert_allclose(
                to_np(F.softmax(wgrad.tensor(arr))),
                torch.nn.functional.softmax(torch.tensor(arr)).numpy(), atol=1e-12)


def test_legacy_reduction_values():
    rng = np.random.default_rng(3)
    x, t = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw in (dict(size_average=False), dict(reduce=False), dict(size_average=True)):
            np.testing.assert_allclose(
                to_np(F.mse_loss(wgrad.tensor(x), wgrad.tensor(t), **kw)),
                torch.nn.functional.mse_loss(torch.tensor(x), torch.tensor(t), **kw).numpy())


# ======================================================================================
# softmax's dtype, top-level functions and Tensor methods
# ======================================================================================

def test_softmax_dtype_argument():
    x32 = wgrad.tensor([[1.0, 2.0, 3.0]], requires_grad=True)
    y = F.softmax(x32, 1, dtype=wgrad.float64)
    assert y.dtype is wgrad.float64
    y.sum().backward()
    assert x32.grad.dtype is wgrad.float32
    t = torch.nn.functional.log_softmax(torch.tensor([[1.0, 2.0, 3.0]]), 1, dtype=torch.float64)
    np.testing.assert_allclose(to_np(F.log_softmax(x32, 1, dtype=wgrad.float64)), t.numpy())


TOP_LEVEL = ("softmax", "log_softmax", "selu", "celu", "hardshrink", "bilinear",
             "conv_transpose1d", "conv_transpose2d", "layer_norm", "group_norm", "rms_norm",
             "cosine_similarity", "pairwise_distance", "pdist")
FUNCTIONAL_ONLY = ("gelu", "silu", "mish", "elu", "leaky_relu", "hardtanh", "softmin",
                   "linear", "one_hot", "normalize", "mse_loss", "cross_entropy",
                   "nll_loss", "binary_cross_entropy", "huber_loss", "softshrink",
                   "scaled_dot_product_attention", "gaussian_nll_loss")


def test_top_level_functions_are_torchs():
    for name in TOP_LEVEL:
        assert hasattr(torch, name) and hasattr(wgrad, name), name
    for name in FUNCTIONAL_ONLY:
        assert not hasattr(torch, name) and not hasattr(wgrad, name), name
    x = np.random.default_rng(4).standard_normal((2, 3))
    for name in ("softmax", "log_softmax"):
        np.testing.assert_allclose(to_np(getattr(wgrad, name)(wgrad.tensor(x), 1)),
                                   getattr(torch, name)(torch.tensor(x), 1).numpy())
        np.testing.assert_allclose(to_np(getattr(wgrad.tensor(x), name)(dim=0)),
                                   getattr(torch.tensor(x), name)(dim=0).numpy())
    for name in ("selu", "celu"):
        np.testing.assert_allclose(to_np(getattr(wgrad, name)(wgrad.tensor(x))),
                                   getattr(torch, name)(torch.tensor(x)).numpy())


def test_tensor_methods():
    for name in ("softmax", "log_softmax", "hardshrink"):
        assert hasattr(torch.Tensor, name) and hasattr(wgrad.Tensor, name)
    for name in ("selu", "celu", "gelu", "cross_entropy", "bilinear", "layer_norm"):
        assert not hasattr(torch.Tensor, name) and not hasattr(wgrad.Tensor, name), name
    x = wgrad.tensor([[0.0, 1.0]], requires_grad=True)
    assert x.softmax(1).grad_fn.name() == "SoftmaxBackward0"
    assert x.log_softmax(1).grad_fn.name() == "LogSoftmaxBackward0"


def test_node_names_are_torchs():
    x = np.random.default_rng(9).standard_normal((3, 4))
    calls = [lambda m, x: m.nn.functional.softmax(x, 1),
             lambda m, x: m.nn.functional.log_softmax(x, 0),
             lambda m, x: m.nn.functional.cross_entropy(x, m.tensor([0, 2, 1])),
             lambda m, x: m.nn.functional.nll_loss(x, m.tensor([0, 2, 1]), reduction="none"),
             lambda m, x: m.nn.functional.embedding(m.tensor([[0, 2], [1, 1]]), x)]
    for call in calls:
        want = call(torch, torch.tensor(x, requires_grad=True)).grad_fn.name()
        assert call(wgrad, wgrad.tensor(x, requires_grad=True)).grad_fn.name() == want


# ======================================================================================
# In-place activations
# ======================================================================================

@pytest.mark.parametrize("name, kw", [("relu", {}), ("leaky_relu", {"negative_slope": 0.1}),
                                      ("elu", {}), ("hardtanh", {}), ("silu", {}),
                                      ("selu", {}), ("relu6", {})])
def test_inplace_activation(name, kw):
    x = np.random.default_rng(5).uniform(-2, 2, (2, 3))
    outs = []
    for m in (torch, wgrad):
        leaf = m.tensor(x, requires_grad=True)
        h = leaf * 2
        v = h._version
        y = getattr(m.nn.functional, name)(h, inplace=True, **kw)
        assert y is h and h._version > v
        (y * y).sum().backward()
        outs.append((y.detach().numpy() if m is torch else to_np(y.detach()),
                     leaf.grad.numpy() if m is torch else to_np(leaf.grad)))
    np.testing.assert_allclose(outs[1][0], outs[0][0], atol=1e-12)
    np.testing.assert_allclose(outs[1][1], outs[0][1], atol=1e-12)


def test_inplace_on_leaf_raises_torchs_error():
    for m in (torch, wgrad):
        with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being "
                                               "used in an in-place operation."):
            m.nn.functional.elu(m.ones(2, requires_grad=True), inplace=True)


# ======================================================================================
# dropout
# ======================================================================================

def test_dropout_statistics_and_gradient():
    wgrad.manual_seed(0)
    x = wgrad.ones(4000, dtype=wgrad.float64, requires_grad=True)
    y = F.dropout(x, 0.25)
    kept = to_np(y) != 0
    assert 0.72 < kept.mean() < 0.78
    np.testing.assert_allclose(to_np(y)[kept], 1 / 0.75)
    y.sum().backward()
    np.testing.assert_allclose(to_np(x.grad), to_np(y.detach()))
    wgrad.manual_seed(0)
    np.testing.assert_array_equal(to_np(F.dropout(x, 0.25)), to_np(y))


def test_dropout_identity_zero_and_inplace():
    x = wgrad.ones(5)
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x
    np.testing.assert_array_equal(to_np(F.dropout(x, 1.0)), np.zeros(5))
    h = wgrad.ones(5, requires_grad=True) * 1
    y = F.dropout(h, 0.5, inplace=True)
    assert y is h
    assert set(np.unique(to_np(h.detach()))) <= {0.0, 2.0}


# ======================================================================================
# batch_norm's running statistics, embedding's max_norm, bce at the ends of [0, 1]
# ======================================================================================

def test_batch_norm_running_stats_match_torch():
    rng = np.random.default_rng(6)
    xs = [rng.standard_normal((4, 3, 2)) for _ in range(2)]
    stats = {}
    for m in (torch, wgrad):
        rm, rv = m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)
        w = m.tensor(rng.standard_normal(3) * 0 + 1.5, requires_grad=True)
        for x in xs:
            out = m.nn.functional.batch_norm(m.tensor(x), rm, rv, w, None, True, 0.3)
        out.sum().backward()
        ev = m.nn.functional.batch_norm(m.tensor(xs[0]), rm, rv, training=False)
        conv = (lambda t: t.detach().numpy()) if m is torch else (lambda t: to_np(t.detach()))
        stats[m.__name__] = [conv(t) for t in (rm, rv, out, w.grad, ev)]
    for a, b in zip(stats["wgrad"], stats["torch"]):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_instance_norm_running_stats_match_torch():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 3, 5))
    res = []
    for m in (torch, wgrad):
        rm, rv = m.zeros(3, dtype=m.float64), m.ones(3, dtype=m.float64)
        out = m.nn.functional.instance_norm(m.tensor(x), rm, rv, momentum=0.4)
        conv = (lambda t: t.numpy()) if m is torch else to_np
        res.append([conv(t) for t in (rm, rv, out)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, atol=1e-12)


def test_embedding_max_norm_matches_torch():
    rng = np.random.default_rng(7)
    w0 = rng.standard_normal((5, 3)) * 2
    idx = [[0, 2], [2, 4]]
    res = []
    for m in (torch, wgrad):
        w = m.tensor(w0, requires_grad=True)
        out = m.nn.functional.embedding(m.tensor(idx), w, max_norm=1.5, norm_type=3)
        out.sum().backward()
        conv = (lambda t: t.detach().numpy()) if m is torch else (lambda t: to_np(t.detach()))
        res.append([conv(out), conv(w), conv(w.grad)])
    for a, b in zip(*res):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_binary_cross_entropy_at_zero_and_one():
    x, t = np.array([0.0, 1.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0, 0.3])
    wx, tx = wgrad.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    wl = F.binary_cross_entropy(wx, wgrad.tensor(t), reduction="sum")
    tl = torch.nn.functional.binary_cross_entropy(tx, torch.tensor(t), reduction="sum")
    np.testing.assert_allclose(to_np(wl.detach()), tl.item())
    wl.backward()
    tl.backward()
    np.testing.assert_allclose(to_np(wx.grad), tx.grad.numpy())


def test_cross_entropy_all_ignored_is_nan_as_torch():
    x = np.zeros((2, 3))
    for m in (torch, wgrad):
        v = m.nn.functional.cross_entropy(m.tensor(x), m.tensor([-100, -100]))
        assert np.isnan(float(v))


def test_one_hot_matches_torch():
    idx = [[0, 3], [2, 1]]
    for n in (-1, 6):
        got = F.one_hot(wgrad.tensor(idx), n)
        want = torch.nn.functional.one_hot(torch.tensor(idx), n)
        assert got.dtype is wgrad.int64
        np.testing.assert_array_equal(to_np(got), want.numpy())


def test_underscore_variants_are_inplace():
    for name in ("relu_", "leaky_relu_", "elu_", "selu_", "celu_", "hardtanh_"):
        assert hasattr(torch.nn.functional, name)
        h = wgrad.tensor([-1.5, 0.5, 2.0], requires_grad=True) * 1
        want = getattr(torch.nn.functional, name)(torch.tensor([-1.5, 0.5, 2.0]))
        assert getattr(F, name)(h) is h
        np.testing.assert_allclose(to_np(h.detach()), want.numpy(), rtol=1e-6)


def test_families_functional_lists_are_exported():
    for name in ("activation", "layer", "loss"):
        family = importlib.import_module(f"wgrad.ops.{name}")
        assert set(family.FUNCTIONAL) <= set(F.__all__), name
        assert set(family.METHODS) <= set(family.__all__), name
        for method in family.METHODS:
            assert hasattr(torch.Tensor, method) and hasattr(wgrad.Tensor, method)


def test_dropout_while_tracing_warns():
    x = wgrad.ones(4, requires_grad=True)

    @wgrad.compile
    def step():
        return F.dropout(x, 0.5).sum()

    with pytest.warns(UserWarning, match="the mask is drawn once, at trace time"):
        step()
