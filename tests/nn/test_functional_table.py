"""wgrad.nn.functional against torch.nn.functional, one table: each row is called the same
way on both (``import wgrad as torch``), on the same inputs, and compared in values and
gradients (for a random incoming gradient); then gradcheck + gradgradcheck on float64,
and on complex128 where torch accepts complex input (wgrad.testing.check_op, with the
JAX identity where jax.nn has the function)."""
import zlib

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op, to_np

F = wgrad.nn.functional


class U:
    """A uniform input in [lo, hi) (differentiable unless ``diff=False``)."""

    def __init__(self, shape, lo=-2.0, hi=2.0, diff=True):
        self.shape, self.lo, self.hi, self.diff = shape, lo, hi, diff

    def make(self, rng, dtype):
        v = rng.uniform(self.lo, self.hi, self.shape)
        if np.dtype(dtype).kind == "c":
            v = v + 1j * rng.uniform(self.lo, self.hi, self.shape)
        return v.astype(dtype)


class P(U):
    """Probabilities along dim 1 (positive, each row summing to 1), always real."""

    def make(self, rng, dtype):
        v = rng.uniform(0.1, 1.0, self.shape)
        return v / v.sum(1, keepdims=True)


class Const:
    """A fixed, non-differentiable array (class indices, a weight vector...)."""

    diff = False

    def __init__(self, value, dtype=None):
        self.value, self.dtype = np.asarray(value), dtype

    def make(self, rng, dtype):
        return self.value if self.dtype is None else self.value.astype(self.dtype)


def N(*shape):
    return U(shape)


class Row:
    """``complex``: torch accepts complex128 input (``"values"``: torch computes the values
    but has no complex autograd formula, so only wgrad's gradcheck checks gradients).
    ``gradgrad``: gradgradcheck too, for the rows whose backward is a new primitive
    formula or a new use of one (composites of tested ops need no second look)."""

    def __init__(self, id, call, *inputs, complex=False, jfn=None, gradgrad=False,
                 gradcheck=True):
        self.id, self.call, self.inputs = id, call, inputs
        self.complex, self.jfn, self.gradgrad = complex, jfn, gradgrad
        self.gradcheck = gradcheck

    def arrays(self, dtype):
        rng = np.random.default_rng(zlib.crc32(self.id.encode()))
        return [s.make(rng, dtype) for s in self.inputs]


def _jax_layer_norm(x, k, eps):
    """JAX's reference for layer_norm over the last ``k`` dims (no affine)."""
    axes = tuple(range(x.ndim - k, x.ndim))
    mu = x.mean(axes, keepdims=True)
    return (x - mu) / jnp.sqrt(x.var(axes, keepdims=True) + eps)


IDX = Const([0, 3, 1])          # class indices for (3, 4) scores; 3 is also an ignore_index
W4 = Const([0.3, 1.0, 0.6, 2.0], "float64")

ROWS = [
    # -- activations (values spread over the kinks and branches) --------------------
    Row("relu", lambda F, x: F.relu(x), N(3, 4)),
    Row("relu6", lambda F, x: F.relu6(x), U((3, 4), -3, 9)),
    Row("leaky_relu", lambda F, x: F.leaky_relu(x, 0.2), N(3, 4),
        jfn=lambda x: jax.nn.leaky_relu(x, 0.2), gradgrad=True),
    Row("elu", lambda F, x: F.elu(x, 0.7), U((3, 4), -3, 30), jfn=lambda x: jax.nn.elu(x, 0.7),
        gradgrad=True),
    Row("selu", lambda F, x: F.selu(x), N(3, 4), jfn=jax.nn.selu, gradgrad=True),
    Row("celu", lambda F, x: F.celu(x, 0.5), N(3, 4), jfn=lambda x: jax.nn.celu(x, 0.5),
        gradgrad=True),
    Row("gelu", lambda F, x: F.gelu(x), N(3, 4), jfn=lambda x: jax.nn.gelu(x, False),
        gradgrad=True),
    Row("gelu_tanh", lambda F, x: F.gelu(x, approximate="tanh"), N(3, 4),
        jfn=lambda x: jax.nn.gelu(x, True), gradgrad=True),
    Row("silu", lambda F, x: F.silu(x), N(3, 4), complex="values", jfn=jax.nn.silu,
        gradgrad=True),
    Row("mish", lambda F, x: F.mish(x), N(3, 4), gradgrad=True,
        jfn=lambda x: x * jnp.tanh(jax.nn.softplus(x))),
    Row("softplus", lambda F, x: F.softplus(x, beta=2, threshold=1), N(3, 4)),
    Row("sigmoid", lambda F, x: F.sigmoid(x), N(3, 4), complex=True),
    Row("tanh", lambda F, x: F.tanh(x), N(3, 4), complex=True),
    Row("hardtanh", lambda F, x: F.hardtanh(x, -0.5, 0.8), N(3, 4), gradgrad=True,
        jfn=lambda x: jnp.clip(x, -0.5, 0.8)),
    Row("softmax", lambda F, x: F.softmax(x, 1), N(3, 4),
        jfn=lambda x: jax.nn.softmax(x, axis=1), gradgrad=True),
    Row("log_softmax", lambda F, x: F.log_softmax(x, dim=0), N(3, 4),
        jfn=lambda x: jax.nn.log_softmax(x, axis=0), gradgrad=True),
    Row("softmin", lambda F, x: F.softmin(x, -1), N(3, 4)),
    Row("softmax_3d", lambda F, x: F.log_softmax(x, -2), N(2, 3, 4)),
    Row("hardshrink", lambda F, x: F.hardshrink(x, 0.6), N(3, 4)),
    Row("softshrink", lambda F, x: F.softshrink(x), N(3, 4)),
    # -- layers ------------------------------------------------------------------------
    Row("linear", lambda F, x, w, b: F.linear(x, w, b), N(3, 4), N(2, 4), N(2), complex=True,
        jfn=lambda x, w, b: x @ w.T + b),
    Row("linear_nobias_1d", lambda F, x, w: F.linear(x, w), N(4), N(2, 4), complex=True),
    Row("bilinear", lambda F, a, b, w, c: F.bilinear(a, b, w, c), N(3, 4), N(3, 2),
        N(5, 4, 2), N(5), complex="values"),
    Row("conv_transpose1d", lambda F, x, w, b: F.conv_transpose1d(
        x, w, b, stride=2, padding=1, output_padding=1), N(2, 4, 5), N(4, 3, 2), N(3),
        complex=True, gradgrad=True),
    Row("conv_transpose1d_groups", lambda F, x, w: F.conv_transpose1d(
        x, w, stride=2, padding=2, groups=2, dilation=2), N(4, 5), N(4, 1, 3), complex=True),
    Row("conv_transpose2d", lambda F, x, w: F.conv_transpose2d(
        x, w, stride=(2, 1), padding=(1, 0), output_padding=(1, 0), groups=2,
        dilation=(1, 2)), N(1, 4, 3, 3), N(4, 2, 2, 3), complex=True),
    Row("conv_transpose2d_crop", lambda F, x, w: F.conv_transpose2d(x, w, padding=2),
        N(1, 2, 4, 4), N(2, 3, 2, 2)),
    Row("embedding", lambda F, i, w: F.embedding(i, w), Const([[0, 1, 4], [1, 2, 1]]),
        N(5, 4), complex="values", gradgrad=True),
    # padding_idx's row gets no gradient by design, so no numerical Jacobian agrees
    Row("embedding_padding_idx", lambda F, i, w: F.embedding(i, w, padding_idx=-4),
        Const([[0, 1, 4], [1, 2, 1]]), N(5, 4), gradcheck=False),
    Row("embedding_scale_grad_by_freq", lambda F, i, w: F.embedding(
        i, w, padding_idx=4, scale_grad_by_freq=True), Const([[0, 2, 2], [2, 4, 0]]), N(5, 3),
        gradcheck=False),
    Row("layer_norm", lambda F, x, w, b: F.layer_norm(x, (4,), w, b), N(3, 4), N(4), N(4),
        gradgrad=True, jfn=lambda x, w, b: _jax_layer_norm(x, 1, 1e-5) * w + b),
    Row("layer_norm_2d", lambda F, x: F.layer_norm(x, [3, 4], eps=1e-3), N(2, 3, 4),
        gradgrad=True, jfn=lambda x: _jax_layer_norm(x, 2, 1e-3)),
    Row("layer_norm_whole", lambda F, x, w: F.layer_norm(x, [3, 4], w), N(3, 4), N(3, 4)),
    Row("batch_norm_train", lambda F, x, w, b: F.batch_norm(x, None, None, w, b, True),
        N(3, 4), N(4), N(4)),
    Row("batch_norm_train_3d", lambda F, x: F.batch_norm(x, None, None, training=True),
        N(2, 3, 4)),
    Row("batch_norm_eval", lambda F, x, m, v: F.batch_norm(x, m, v, eps=0.1), N(2, 3, 4),
        Const([0.1, -0.2, 0.3], "float64"), Const([0.5, 1.5, 2.0], "float64")),
    Row("group_norm", lambda F, x, w, b: F.group_norm(x, 2, w, b), N(2, 4, 3), N(4), N(4)),
    Row("instance_norm", lambda F, x, w: F.instance_norm(x, weight=w), N(2, 3, 4), N(3)),
    Row("instance_norm_eval", lambda F, x, m, v: F.instance_norm(x, m, v, use_input_stats=False),
        N(2, 3, 4), Const([0.1, -0.2, 0.3], "float64"), Const([0.5, 1.5, 2.0], "float64")),
    Row("rms_norm", lambda F, x, w: F.rms_norm(x, (4,), w), N(3, 4), N(4), complex=True),
    Row("rms_norm_default_eps", lambda F, x: F.rms_norm(x, [3, 4]), N(2, 3, 4)),
    Row("pdist", lambda F, x: F.pdist(x), N(3, 4)),
    Row("pdist_p1", lambda F, x: F.pdist(x, 1.0), N(3, 4)),
    Row("sdpa", lambda F, q, k, v, m: F.scaled_dot_product_attention(q, k, v, m, scale=0.3),
        N(2, 3, 4), N(2, 5, 4), N(2, 5, 2), N(3, 5)),
    Row("sdpa_causal_bool", lambda F, q, k, v: F.scaled_dot_product_attention(
        q, k, v, is_causal=True), N(1, 2, 3, 4), N(1, 2, 3, 4), N(1, 2, 3, 2)),
    Row("sdpa_gqa", lambda F, q, k, v, m: F.scaled_dot_product_attention(
        q, k, v, m, enable_gqa=True), N(4, 3, 2), N(2, 5, 2), N(2, 5, 2),
        Const([[True, False, True, True, True]] * 3)),
    Row("normalize", lambda F, x: F.normalize(x, p=3, dim=0), N(3, 4), complex=True),
    Row("cosine_similarity", lambda F, a, b: F.cosine_similarity(a, b), N(3, 4), N(1, 4)),
    Row("pairwise_distance", lambda F, a, b: F.pairwise_distance(a, b, keepdim=True),
        N(3, 4), N(3, 4), complex=True),
    Row("pairwise_distance_p1", lambda F, a, b: F.pairwise_distance(a, b, p=1), N(3, 4),
        N(3, 4)),
    # -- losses ------------------------------------------------------------------------
    Row("mse_loss", lambda F, x, t: F.mse_loss(x, t), N(3, 4), N(3, 4), gradgrad=True,
        jfn=lambda x, t: jnp.mean((x - t) ** 2)),
    Row("mse_loss_weight", lambda F, x, t, w: F.mse_loss(x, t, reduction="mean", weight=w),
        N(3, 4), N(3, 4), U((3, 4), 0.1, 1.0, diff=False)),
    Row("l1_loss", lambda F, x, t: F.l1_loss(x, t, reduction="sum"), N(3, 4), N(3, 4),
        complex=True),
    Row("l1_loss_weight", lambda F, x, t, w: F.l1_loss(x, t, weight=w), N(3, 4), N(3, 4),
        U((3, 4), 0.1, 1.0, diff=False)),
    Row("smooth_l1_loss", lambda F, x, t: F.smooth_l1_loss(x, t, reduction="none", beta=0.5),
        N(3, 4), N(3, 4), gradgrad=True, jfn=lambda x, t: jnp.where(
            jnp.abs(x - t) < 0.5, (x - t) ** 2, jnp.abs(x - t) - 0.25)),
    Row("smooth_l1_loss_mean", lambda F, x, t: F.smooth_l1_loss(x, t), N(3, 4), N(4)),
    Row("huber_loss", lambda F, x, t: F.huber_loss(x, t, delta=0.7), N(3, 4), N(3, 4),
        gradgrad=True, jfn=lambda x, t: jnp.mean(jnp.where(
            jnp.abs(x - t) < 0.7, 0.5 * (x - t) ** 2, 0.7 * (jnp.abs(x - t) - 0.35)))),
    Row("huber_loss_weight", lambda F, x, t, w: F.huber_loss(x, t, weight=w), N(3, 4),
        N(3, 4), U((3, 4), 0.1, 1.0, diff=False)),
    Row("cross_entropy", lambda F, x, t: F.cross_entropy(x, t), N(3, 4), IDX),
    Row("cross_entropy_full", lambda F, x, t, w: F.cross_entropy(
        x, t, w, ignore_index=3, label_smoothing=0.2), N(3, 4), IDX, W4, gradgrad=True),
    Row("cross_entropy_none", lambda F, x, t, w: F.cross_entropy(
        x, t, w, ignore_index=3, reduction="none", label_smoothing=0.1), N(3, 4), IDX, W4),
    Row("cross_entropy_sum_nd", lambda F, x, t: F.cross_entropy(
        x, t, reduction="sum", label_smoothing=0.3), N(2, 4, 3),
        Const([[0, 1, 3], [2, 2, 0]])),
    Row("cross_entropy_1d", lambda F, x, t: F.cross_entropy(x, t), N(4), Const(2)),
    Row("cross_entropy_probs", lambda F, x, t, w: F.cross_entropy(
        x, t, w, label_smoothing=0.25), N(3, 4), P((3, 4)), W4),
    Row("cross_entropy_probs_nd", lambda F, x, t: F.cross_entropy(x, t, reduction="none"),
        N(2, 4, 3), P((2, 4, 3))),
    Row("nll_loss", lambda F, x, t, w: F.nll_loss(x, t, w), N(3, 4), IDX, W4, gradgrad=True),
    Row("nll_loss_ignore_sum", lambda F, x, t: F.nll_loss(
        x, t, ignore_index=1, reduction="sum"), N(3, 4), IDX),
    Row("binary_cross_entropy", lambda F, x, t, w: F.binary_cross_entropy(x, t, w),
        U((3, 4), 0.05, 0.95), U((3, 4), 0, 1), U((3, 4), 0.1, 1, diff=False),
        gradgrad=True),
    Row("bce_with_logits", lambda F, x, t, w, p: F.binary_cross_entropy_with_logits(
        x, t, w, reduction="sum", pos_weight=p), N(3, 4), U((3, 4), 0, 1),
        U((3, 4), 0.1, 1, diff=False), W4, gradgrad=True,
        jfn=lambda x, t, w, p: jnp.sum(w * ((1 - t) * x + (1 + (p - 1) * t)
                                            * jax.nn.softplus(-x)))),
    Row("bce_with_logits_plain", lambda F, x, t: F.binary_cross_entropy_with_logits(x, t),
        U((3, 4), -40, 40), U((3, 4), 0, 1)),
    Row("kl_div", lambda F, x, t: F.kl_div(x, t, reduction="batchmean"), N(3, 4), P((3, 4))),
    Row("poisson_nll_loss", lambda F, x, t: F.poisson_nll_loss(x, t, full=True), N(3, 4),
        U((3, 4), 0, 3)),
    Row("poisson_nll_loss_rate", lambda F, x, t: F.poisson_nll_loss(
        x, t, log_input=False, reduction="sum"), U((3, 4), 0.1, 2), U((3, 4), 0, 3)),
    Row("gaussian_nll_loss", lambda F, x, t, v: F.gaussian_nll_loss(x, t, v, full=True),
        N(3, 4), N(3, 4), U((3, 4), 0.1, 2)),
    Row("gaussian_nll_loss_per_sample", lambda F, x, t, v: F.gaussian_nll_loss(
        x, t, v, reduction="none"), N(3, 4), N(3, 4), U((3, 1), 0.1, 2)),
    Row("margin_ranking_loss", lambda F, a, b, y: F.margin_ranking_loss(a, b, y, 0.3),
        N(4), N(4), Const([1.0, -1.0, 1.0, -1.0])),
    Row("hinge_embedding_loss", lambda F, x, y: F.hinge_embedding_loss(x, y, 0.5), N(3, 4),
        Const([[1.0, -1.0, 1.0, -1.0]] * 3)),
    Row("soft_margin_loss", lambda F, x, y: F.soft_margin_loss(x, y), N(3, 4),
        Const([[1.0, -1.0, 1.0, -1.0]] * 3)),
    Row("multilabel_soft_margin_loss", lambda F, x, y, w: F.multilabel_soft_margin_loss(
        x, y, w), N(3, 4), Const([[1.0, 0.0, 1.0, 0.0]] * 3), W4),
    Row("cosine_embedding_loss", lambda F, a, b, y: F.cosine_embedding_loss(a, b, y, 0.1),
        N(3, 4), N(3, 4), Const([1.0, -1.0, -1.0])),
    Row("triplet_margin_loss", lambda F, a, p, n: F.triplet_margin_loss(a, p, n, swap=True),
        N(3, 4), N(3, 4), N(3, 4)),
    Row("kl_div_log_target", lambda F, x, t: F.kl_div(
        x, t, reduction="none", log_target=True), N(3, 4), N(3, 4)),
]

CASES = [(r, "float64") for r in ROWS] + [(r, "complex128") for r in ROWS if r.complex]


def _ids(case):
    return f"{case[0].id}-{case[1]}"


def _torch_grad_compare(torch, row, dtype):
    arrs = row.arrays(dtype)
    grads = not (dtype == "complex128" and row.complex == "values")
    wt, tt = [], []
    for spec, a in zip(row.inputs, arrs):
        diff = grads and spec.diff and a.dtype.kind in "fc"
        wt.append(wgrad.tensor(a, requires_grad=diff))
        tt.append(torch.tensor(a, requires_grad=diff))
    wo, to = row.call(F, *wt), row.call(torch.nn.functional, *tt)
    np.testing.assert_allclose(to_np(wo.detach()), to.detach().numpy(), rtol=1e-7,
                               atol=1e-10)
    assert wo.dtype.name == str(to.dtype).split(".")[1]
    if not grads:
        return
    g = np.random.default_rng(1).standard_normal(tuple(to.shape))
    if to.is_complex():
        g = g + 1j * np.random.default_rng(2).standard_normal(tuple(to.shape))
    wo.backward(wgrad.tensor(g, dtype=wo.dtype))
    to.backward(torch.tensor(g, dtype=to.dtype))
    for i, (w, t) in enumerate(zip(wt, tt)):
        if t.requires_grad:
            np.testing.assert_allclose(to_np(w.grad), t.grad.numpy(), rtol=1e-7, atol=1e-10,
                                       err_msg=f"gradient of input {i}")


@pytest.mark.parametrize("case", CASES, ids=_ids)
def test_equals_torch(case):
    torch = pytest.importorskip("torch")
    _torch_grad_compare(torch, *case)


@pytest.mark.parametrize("case", [c for c in CASES if c[0].gradcheck], ids=_ids)
def test_gradcheck(case):
    row, dtype = case
    ins = []
    for spec, a in zip(row.inputs, row.arrays(dtype)):
        ins.append(wgrad.tensor(a, requires_grad=spec.diff and a.dtype.kind in "fc"))
    check_op(lambda *xs: row.call(F, *xs), ins, row.jfn, gradgrad=row.gradgrad)
