"""The ops behind nn's layers: linear, bilinear, transposed convolutions, embedding,
layer/group/instance/batch/RMS normalisation, normalize, one_hot, cosine_similarity,
pairwise_distance, pdist.

``__all__`` holds what torch also has at top level with the same signature
(``torch.bilinear``, ``torch.conv_transpose1d``...); ``FUNCTIONAL`` the names
``wgrad.nn.functional`` takes from here. All but embedding are composites of existing
primitives (``conv_transpose`` is the convolution primitive with an input dilation, NOTE
[Transposed convolution]), so their gradients need no new formula; embedding is one
primitive (torch's EmbeddingBackward0: a take, its gradient an index_add that skips
``padding_idx``).
"""
import jax
import jax.numpy as jnp
import numpy as np

from .. import _precision
from .. import _dtype as D
from .._tensor import _make
from ._out import _CPP
from ._primitive import Primitive
from .._autograd.grad_mode import no_grad
from .conv import _conv, _tuple
from .elementwise import _real_only, clamp, div, eq, where
from .indexing import index_add
from .linear_algebra import addmm, einsum, matmul
from .reduction import amax, mean, sum, var, vector_norm
from .shape import broadcast_shapes, flip

__all__ = ["bilinear", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "layer_norm",
           "group_norm", "rms_norm", "cosine_similarity", "pairwise_distance", "pdist"]
METHODS = ()
FUNCTIONAL = ("linear", "bilinear", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d",
              "embedding", "layer_norm", "group_norm", "instance_norm", "rms_norm", "batch_norm",
              "normalize", "one_hot", "cosine_similarity", "pairwise_distance", "pdist")


# ======================================================================================
# linear, bilinear
# ======================================================================================

def linear(input, weight, bias=None):
    """``input @ weight.T + bias`` (no conjugation for complex weights, as torch).

    Examples
    --------
    >>> wgrad.nn.functional.linear(wgrad.ones(2, 3), wgrad.ones(4, 3)).shape
    wgrad.Size([2, 4])
    """
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected m1 and m2 to have the same dtype, but got: "
                           f"{_CPP[input.dtype.name]} != {_CPP[weight.dtype.name]}")
    if bias is not None and bias.dtype is not input.dtype:
        raise RuntimeError(f"self and mat2 must have the same dtype, but got "
                           f"{bias.dtype.scalar_name} and {input.dtype.scalar_name}")
    if bias is not None and input.ndim == 2 and weight.ndim == 2:
        return addmm(bias, input, weight.t())  # AddmmBackward0, as torch
    out = matmul(input, weight.t())
    return out if bias is None else out + bias


def bilinear(input1, input2, weight, bias=None):
    """``y_k = x1^T W_k x2 + b_k`` over the last dimension of both inputs.

    Examples
    --------
    >>> wgrad.bilinear(wgrad.ones(2, 3), wgrad.ones(2, 4), wgrad.ones(5, 3, 4)).shape
    wgrad.Size([2, 5])
    """
    names = [("input1", input1), ("input2", input2), ("weight", weight)]
    names += [("bias", bias)] if bias is not None else []
    if any(t.dtype is not input1.dtype for _, t in names):
        raise RuntimeError("All tensors must have the same dtype, got " +
                           ", ".join(f"{n}: {_CPP[t.dtype.name]}" for n, t in names))
    if input1.ndim != input2.ndim:
        raise RuntimeError(f"bilinear(): input dimensions do not match: got {input1.ndim} "
                           f"and {input2.ndim}")
    for i in range(input1.ndim - 1):
        if input1.shape[i] != input2.shape[i]:
            raise RuntimeError(f"bilinear(): input batch dimensions do not match at dim {i}: "
                               f"got {input1.shape[i]} and {input2.shape[i]}")
    if input1.shape[-1] != weight.shape[1]:
        raise RuntimeError(f"bilinear(): input1 size does not match weight size: got "
                           f"{input1.shape[-1]} but expected {weight.shape[1]}")
    if input2.shape[-1] != weight.shape[2]:
        raise RuntimeError(f"bilinear(): input2 size does not match weight size: got "
                           f"{input2.shape[-1]} but expected {weight.shape[2]}")
    if bias is not None and bias.shape[-1] != weight.shape[0]:
        raise RuntimeError(f"bilinear(): bias size does not match weight size: got "
                           f"{bias.shape[-1]} but expected {weight.shape[0]}")
    out = einsum("...i,kij,...j->...k", input1, weight, input2)
    return out if bias is None else out + bias


# ======================================================================================
# Transposed convolutions
# ======================================================================================

# NOTE [Transposed convolution]
# conv_transpose is the adjoint (without conjugation) of the convolution with the same
# weight: a convolution of the input dilated by ``stride`` (lhs_dilation) with the
# spatially flipped kernel whose in/out channel axes are swapped per group, padded by
# ``dilation * (k - 1) - padding`` before and that plus ``output_padding`` after
# (negative padding crops). Written with the convolution primitive, its gradients are
# convolutions again (NOTE [Convolution backward as convolutions]).

def _conv_transpose(name, nsp, input, weight, bias, stride, padding, output_padding,
                    groups, dilation):
    if input.ndim not in (nsp + 1, nsp + 2):
        raise RuntimeError(f"Expected {nsp + 1}D (unbatched) or {nsp + 2}D (batched) input to "
                           f"{name}, but got input of size: {list(input.shape)}")
    unbatched = input.ndim == nsp + 1
    if unbatched:
        input = input.unsqueeze(0)
    stride = _tuple(stride, nsp, "stride")
    dilation = _tuple(dilation, nsp, "dilation")
    padding = _tuple(padding, nsp, "padding")
    output_padding = _tuple(output_padding, nsp, "output_padding")
    if input.dtype is not weight.dtype:
        raise RuntimeError(f"expected scalar type {input.dtype.scalar_name} but found "
                           f"{weight.dtype.scalar_name}")
    ws = list(weight.shape)
    if ws[0] % groups:
        raise RuntimeError(f"Given groups={groups}, expected weight to be divisible by "
                           f"{groups} at dimension 0, but got weight of size [{ws}] instead")
    if input.shape[1] != ws[0]:
        raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected "
                           f"input{list(input.shape)} to have {ws[0]} channels, but got "
                           f"{input.shape[1]} channels instead")
    c_out = ws[1] * groups
    if bias is not None and (bias.ndim != 1 or bias.shape[0] != c_out):
        raise RuntimeError(f"Given transposed=1, weight of size {ws}, expected bias to be "
                           f"1-dimensional with {c_out} elements, but got bias of size "
                           f"{list(bias.shape)} instead")
    if any(op >= s and op >= d for op, s, d in zip(output_padding, stride, dilation)):
        names = ("height", "width")
        op2, s2, d2 = ((0,) + output_padding, (1,) + stride, (1,) + dilation) if nsp == 1 \
            else (output_padding, stride, dilation)
        raise RuntimeError(
            "output padding must be smaller than either stride or dilation, but got "
            + " ".join(f"output_padding_{n}: {v}" for n, v in zip(names, op2)) + " "
            + " ".join(f"stride_{n}: {v}" for n, v in zip(names, s2)) + " "
            + " ".join(f"dilation_{n}: {v}" for n, v in zip(names, d2)))
    k = ws[2:]
    size_in = list(input.shape[2:])
    size_out = [(i - 1) * s - 2 * p + d * (kk - 1) + op + 1 for i, s, p, d, kk, op in
                zip(size_in, stride, padding, dilation, k, output_padding)]
    if any(o <= 0 for o in size_out):
        sin, sout = ([1] + size_in, [1] + size_out) if nsp == 1 else (size_in, size_out)
        raise RuntimeError(f"Given input size per channel: ({' x '.join(map(str, sin))}). "
                           f"Calculated output size per channel: "
                           f"({' x '.join(map(str, sout))}). Output size is too small")
    spatial = tuple(range(2, nsp + 2))
    if groups == 1:
        rhs, rhs_spec = weight, (1, 0) + spatial  # (in, out, k...) read as O=1, I=0
    else:  # (g * in/g, out/g, k...) -> (g * out/g, in/g, k...)
        cin_g = ws[0] // groups
        rhs = weight.reshape((groups, cin_g, ws[1]) + tuple(k)).transpose(1, 2)
        rhs, rhs_spec = rhs.reshape((c_out, cin_g) + tuple(k)), (0, 1) + spatial
    rhs = flip(rhs, spatial)
    pad = tuple((d * (kk - 1) - p, d * (kk - 1) - p + op) for d, kk, p, op in
                zip(dilation, k, padding, output_padding))
    dtype = D.promote_types(input.dtype, weight.dtype)
    spec = (0, 1) + spatial
    out = _conv(input, rhs, strides=(1,) * nsp, padding=pad, lhs_dil=stride,
                rhs_dil=dilation, dn=(spec, rhs_spec, spec), fgc=int(groups), bgc=1,
                dtype=dtype.np, precision=_precision.conv_precision())
    if bias is not None:
        out = out + bias.reshape((1, -1) + (1,) * nsp)
    return out.squeeze(0) if unbatched else out


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """1-D transposed convolution over ``(N, C_in, L)`` or ``(C_in, L)``; ``weight`` is
    ``(C_in, C_out / groups, k)``. Complex inputs and weights, as torch.

    Examples
    --------
    >>> x = wgrad.ones(1, 2, 3, dtype=wgrad.complex128)
    >>> wgrad.conv_transpose1d(x, wgrad.ones(2, 1, 2, dtype=wgrad.complex128), stride=2).shape
    wgrad.Size([1, 1, 6])
    """
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """2-D transposed convolution over ``(N, C_in, H, W)`` or ``(C_in, H, W)``; ``weight``
    is ``(C_in, C_out / groups, kH, kW)``.

    Examples
    --------
    >>> x = wgrad.ones(1, 2, 3, 3)
    >>> wgrad.conv_transpose2d(x, wgrad.ones(2, 4, 2, 2), padding=1).shape
    wgrad.Size([1, 4, 2, 2])
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """3-D transposed convolution over ``(N, C_in, D, H, W)`` or ``(C_in, D, H, W)``;
    ``weight`` is ``(C_in, C_out / groups, kD, kH, kW)``.

    Examples
    --------
    >>> x = wgrad.ones(1, 2, 2, 3, 3)
    >>> wgrad.conv_transpose3d(x, wgrad.ones(2, 4, 2, 2, 2), stride=2).shape
    wgrad.Size([1, 4, 4, 6, 6])
    """
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


# ======================================================================================
# embedding
# ======================================================================================

def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of ``weight`` at the integer ``input``; the row ``padding_idx`` gets no
    gradient. ``max_norm`` renormalises the looked-up rows of ``weight`` in place (under
    no_grad) to at most that ``norm_type``-norm, as torch.

    Examples
    --------
    >>> w = wgrad.eye(3)
    >>> wgrad.nn.functional.embedding(wgrad.tensor([2, 0]), w)
    tensor([[0., 0., 1.],
            [1., 0., 0.]])
    """
    if input.dtype not in (D.int64, D.int32):
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got "
                           f"torch.{input.dtype.scalar_name}Tensor instead (while checking "
                           f"arguments for embedding)")
    if weight.ndim != 2:
        raise RuntimeError("'weight' must be 2-D")
    n = weight.shape[0]
    if padding_idx is not None:
        if padding_idx > 0:
            assert padding_idx < n, "Padding_idx must be within num_embeddings"
        elif padding_idx < 0:
            assert padding_idx >= -n, "Padding_idx must be within num_embeddings"
            padding_idx = n + padding_idx
    if sparse:
        raise NotImplementedError("embedding: sparse=True is not supported by wgrad (its "
                                  "gradients are dense)")
    if _concrete(input) and input.numel():  # one read of the indices on the host
        a = np.asarray(input._data)
        if a.max() >= n or a.min() < 0:
            raise IndexError("index out of range in self")
    if max_norm is not None:
        _embedding_renorm(weight, input, max_norm, norm_type)
    scale = None
    if scale_grad_by_freq:  # each row's gradient divided by its count in ``input``
        scale = _make(jnp.zeros(n, weight._data.real.dtype).at[input._data.reshape(-1)].add(1))
    return _embedding(weight, input, scale, padding_idx=padding_idx)


def _embedding_backward(grad, indices, scale, weight_shape, padding_idx):
    # the rows' gradients summed into the table; padding_idx's row gets none
    g = grad.reshape((-1, weight_shape[1]))
    idx = indices.reshape(-1)
    if padding_idx is not None:
        g = where((idx == padding_idx).unsqueeze(1), 0.0, g)
    if scale is not None:
        g = g / scale[idx].unsqueeze(1)
    table = _make(jnp.zeros(weight_shape, g._data.dtype))
    return index_add(table, 0, idx, g)


_embedding = Primitive(
    "embedding", lambda weight, indices, scale, *, padding_idx: jnp.take(weight, indices, 0),
    weight=_embedding_backward)


def _concrete(*tensors):
    """False while tracing (``wgrad.compile``): values cannot be read on the host then, so
    the checks that read them are skipped."""
    return not any(isinstance(t._data, jax.core.Tracer) for t in tensors)


def _embedding_renorm(weight, input, max_norm, norm_type):
    with no_grad():
        rows = input.reshape(-1)
        norms = vector_norm(weight[rows], norm_type, dim=1)
        scale = where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).to(weight.dtype)
        weight[rows] = weight[rows] * scale.unsqueeze(1)


# ======================================================================================
# Normalisation
# ======================================================================================

def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    """Normalise over the last ``len(normalized_shape)`` dims (biased variance), then
    ``* weight + bias``.

    Examples
    --------
    >>> wgrad.layer_norm(wgrad.tensor([[1., 3.]]), (2,))
    tensor([[-1.0000,  1.0000]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    for p in (weight, bias):
        if p is not None and p.dtype is not input.dtype:
            if input.dtype is D.float64:
                raise RuntimeError("mixed dtype (CPU): all inputs must share same datatype.")
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{input.dtype.scalar_name}")
    shp = [int(s) for s in normalized_shape]
    k = len(shp)
    if k == 0 or input.ndim < k or list(input.shape[input.ndim - k:]) != shp:
        raise RuntimeError(f"Given normalized_shape={shp}, expected input with shape "
                           f"[*{''.join(', ' + str(s) for s in shp)}], but got input of "
                           f"size{list(input.shape)}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and list(p.shape) != shp:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, "
                               f"but got {name} of shape {list(p.shape)} and "
                               f"normalized_shape = {shp}")
    _real_only("LayerNormKernelImpl", input)
    return _layer_norm(input, weight, bias, dims=tuple(range(input.ndim - k, input.ndim)),
                       eps=float(eps))


def _layer_norm_fwd(self, weight, bias, *, dims, eps):
    mu = jnp.mean(self, axis=dims, keepdims=True)
    out = (self - mu) * jax.lax.rsqrt(jnp.var(self, axis=dims, keepdims=True) + eps)
    if weight is not None:
        out = out * weight
    return out if bias is None else out + bias


def _ln_xhat(self, dims, eps):
    """``(x - mean) * rstd`` over ``dims``, and rstd, as tensor ops (differentiable)."""
    rstd = (var(self, dims, keepdim=True, correction=0) + eps).rsqrt()
    return (self - mean(self, dims, keepdim=True)) * rstd, rstd


def _layer_norm_input(grad, self, weight, dims, eps):
    xhat, rstd = _ln_xhat(self, dims, eps)
    g = grad if weight is None else grad * weight
    return rstd * (g - mean(g, dims, keepdim=True) - xhat * mean(g * xhat, dims, keepdim=True))


def _over_batch(t, dims):
    """``t`` summed over the dims in front of the normalized ones (weight's shape)."""
    lead = tuple(range(t.ndim - len(dims)))
    return sum(t, lead) if lead else t


# torch's NativeLayerNormBackward0: one node, edges (input, weight, bias)
_layer_norm = Primitive(
    "native_layer_norm", _layer_norm_fwd,
    self=_layer_norm_input,
    weight=lambda grad, self, dims, eps: _over_batch(grad * _ln_xhat(self, dims, eps)[0],
                                                     dims),
    bias=lambda grad, dims: _over_batch(grad, dims))


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """Normalise each of ``num_groups`` groups of channels per sample (biased variance),
    then a per-channel ``* weight + bias``.

    Examples
    --------
    >>> wgrad.group_norm(wgrad.tensor([[[1.], [3.]]]), 1)
    tensor([[[-1.0000],
             [ 1.0000]]])
    """
    n, c = input.shape[0], input.shape[1]
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(input.shape)} and "
                           f"num_groups={num_groups}")
    _real_only("GroupNormKernelImpl", input)
    return _group_norm(input, num_groups, weight, bias, eps)[0]


def _group_norm(input, num_groups, weight, bias, eps):
    """``(out, mean, rstd)``, the statistics per sample and group ``(N, num_groups, 1)``
    (torch's native_group_norm returns all three, differentiable)."""
    g = input.reshape((input.shape[0], num_groups, -1))
    mu = mean(g, 2, keepdim=True)
    rstd = (var(g, 2, keepdim=True, correction=0) + eps).rsqrt()
    out = ((g - mu) * rstd).reshape(tuple(input.shape))
    if weight is not None:
        out = out * _channel(weight, input.ndim)
    if bias is not None:
        out = out + _channel(bias, input.ndim)
    return out, mu, rstd


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Normalise each channel of each sample over its spatial dims; with running
    statistics, updated in place (under no_grad) by the batch mean of the per-sample
    statistics (unbiased variance), as torch. ``use_input_stats=False`` uses them.

    Examples
    --------
    >>> wgrad.nn.functional.instance_norm(wgrad.tensor([[[1., 3.]]]))
    tensor([[[-1.0000,  1.0000]]])
    """
    if use_input_stats:
        sp = input.numel() // (input.shape[0] * input.shape[1]) if input.numel() else 0
        if sp == 1:
            raise ValueError(f"Expected more than 1 spatial element when training, got input "
                             f"size torch.Size({list(input.shape)})")
    return _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                          momentum, eps)


def _instance_norm(input, running_mean, running_var, weight, bias, use_input_stats, momentum,
                   eps):
    """:func:`instance_norm` without the functional form's check of the spatial size
    (torch.instance_norm has none)."""
    if not use_input_stats and (running_mean is None or running_var is None):
        raise RuntimeError("Expected running_mean and running_var to be defined when "
                           "use_input_stats is false")
    dims = tuple(range(2, input.ndim))
    _real_only("batch_norm", input)
    if use_input_stats:
        sp = input.numel() // (input.shape[0] * input.shape[1]) if input.numel() else 0
        mu = mean(input, dims, keepdim=True)
        v = var(input, dims, keepdim=True, correction=0)
        with no_grad():
            if running_mean is not None:
                m = mean(mu.detach().reshape(tuple(input.shape[:2])), 0)
                running_mean.copy_((1 - momentum) * running_mean + momentum * m)
            if running_var is not None:
                u = mean(v.detach().reshape(tuple(input.shape[:2])), 0) * (sp / max(sp - 1, 1))
                running_var.copy_((1 - momentum) * running_var + momentum * u)
    else:
        mu, v = _channel(running_mean, input.ndim), _channel(running_var, input.ndim)
    return _normalized(input, mu, v, eps, weight, bias)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """``x / sqrt(mean(x^2) + eps) * weight`` over the last ``len(normalized_shape)`` dims;
    ``eps`` defaults to the dtype's machine epsilon, as torch. For complex input torch
    takes the mean of ``z^2`` (not of ``|z|^2``), and so does wgrad.

    Examples
    --------
    >>> wgrad.rms_norm(wgrad.tensor([[3., 4.]]), (2,), eps=0.0)
    tensor([[0.8485, 1.1314]])
    """
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    shp = [int(s) for s in normalized_shape]
    k = len(shp)
    if input.ndim < k or list(input.shape[input.ndim - k:]) != shp:
        raise RuntimeError(f"Given normalized_shape={shp}, expected input with shape "
                           f"[*{', '.join(map(str, shp))}], but got input of "
                           f"size{list(input.shape)}")
    if eps is None:
        eps = float(jnp.finfo(input._data.real.dtype).eps)
    dims = tuple(range(input.ndim - k, input.ndim))
    # complex input: torch's mean of z^2 (not of |z|^2), so the same here
    out = input * (mean(input * input, dims, keepdim=True) + eps).rsqrt()
    return out if weight is None else out * weight


def _channel(t, ndim):
    return t.reshape((1, -1) + (1,) * (ndim - 2))


def _normalized(input, mu, v, eps, weight, bias):
    """``(input - mu) / sqrt(v + eps)``, then the per-channel affine map if given."""
    out = (input - mu) * (v + eps).rsqrt()
    if weight is not None:
        out = out * _channel(weight, input.ndim)
    if bias is not None:
        out = out + _channel(bias, input.ndim)
    return out


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """Normalise each channel (dim 1) by the batch statistics (``training``) or by the
    running ones. In training, ``running_mean``/``running_var`` (when given) are updated
    in place under no_grad: ``(1 - momentum) * running + momentum * batch``, the batch
    variance unbiased there (biased in the normalisation), as torch.

    Examples
    --------
    >>> x = wgrad.tensor([[1.], [3.]])
    >>> wgrad.nn.functional.batch_norm(x, None, None, training=True)
    tensor([[-1.0000],
            [ 1.0000]])
    """
    if input.ndim < 2:
        raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")
    c = input.shape[1]
    if training and c and input.numel() // c == 1:
        raise ValueError(f"Expected more than 1 value per channel when training, got "
                         f"input size torch.Size({list(input.shape)})")
    return _batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps)[0]


def _batch_norm(input, running_mean, running_var, weight, bias, training, momentum, eps):
    """``(out, mean, var)`` (the statistics used, shaped to broadcast over ``input``):
    :func:`batch_norm` without the functional form's check of the batch size
    (torch.batch_norm and native_batch_norm have none)."""
    c = input.shape[1]
    n = input.numel() // c if c else 0
    if not training and running_mean is None:
        raise RuntimeError("running_mean must be defined in evaluation mode")
    if not training and running_var is None:
        raise RuntimeError("running_var must be defined in evaluation mode")
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.numel() != c:
            raise RuntimeError(f"{name} should contain {c} elements not {t.numel()}")
    _real_only("batch_norm", input)
    dims = (0,) + tuple(range(2, input.ndim))
    if training:
        mu = mean(input, dims, keepdim=True)
        v = var(input, dims, keepdim=True, correction=0)
        if running_mean is not None or running_var is not None:
            with no_grad():
                if running_mean is not None:
                    new = (1 - momentum) * running_mean + momentum * mu.detach().reshape(-1)
                    running_mean.copy_(new)
                if running_var is not None:
                    unbiased = v.detach().reshape(-1) * (n / max(n - 1, 1))
                    running_var.copy_((1 - momentum) * running_var + momentum * unbiased)
    else:
        mu, v = _channel(running_mean, input.ndim), _channel(running_var, input.ndim)
    return _normalized(input, mu, v, eps, weight, bias), mu, v


def normalize(input, p=2.0, dim=1, eps=1e-12, out=None):
    """``input / max(||input||_p, eps)`` along ``dim`` (complex input: ``|z|`` norms).

    Examples
    --------
    >>> wgrad.nn.functional.normalize(wgrad.tensor([[3., 4.]]))
    tensor([[0.6000, 0.8000]])
    """
    norm = vector_norm(input, p, dim, keepdim=True)
    if out is not None:  # torch's: div's out= (its rules and errors)
        return div(input, clamp(norm, min=eps).expand_as(input), out=out)
    return input / clamp(norm, min=eps).expand_as(input)


def one_hot(tensor, num_classes=-1):
    """``int64`` one-hot encoding with ``num_classes`` (``max + 1`` when -1) in a new last
    dimension. Not differentiable.

    Examples
    --------
    >>> wgrad.nn.functional.one_hot(wgrad.tensor([0, 2]), 3)
    tensor([[1, 0, 0],
            [0, 0, 1]])
    """
    if tensor.dtype is not D.int64:
        raise RuntimeError("one_hot is only applicable to index tensor of type LongTensor.")
    if tensor.numel() == 0:
        if num_classes == -1:
            raise RuntimeError("Can not infer total number of classes from empty tensor.")
    else:
        if int(tensor.min()) < 0:
            raise RuntimeError("Class values must be non-negative.")
        top = int(amax(tensor))
        if num_classes == -1:
            num_classes = top + 1
        elif top >= num_classes:
            raise RuntimeError("Class values must be smaller than num_classes.")
    classes = _make(jax.device_put(np.arange(num_classes, dtype=np.int64)))
    return eq(tensor.unsqueeze(-1), classes).to(D.int64)


# ======================================================================================
# Similarities and distances
# ======================================================================================

def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """``<x1, x2> / (max(||x1||, eps) * max(||x2||, eps))`` along ``dim``, after
    broadcasting; each input is divided by its own (clamped) norm first, as torch.

    Examples
    --------
    >>> wgrad.cosine_similarity(wgrad.tensor([[1., 0.]]), wgrad.tensor([[1., 1.]]))
    tensor([0.7071])
    """
    for t in (x1, x2):
        if not t.dtype.is_floating_point:
            kind = (D.promote_types(x1.dtype, x2.dtype)).scalar_name
            raise RuntimeError(f"expected common dtype to be floating point, yet common "
                               f"dtype is {kind}")
    shape = broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = x1.broadcast_to(shape), x2.broadcast_to(shape)
    n1 = clamp(vector_norm(x1, 2, dim, keepdim=True), min=eps)
    n2 = clamp(vector_norm(x2, 2, dim, keepdim=True), min=eps)
    return sum((x1 / n1) * (x2 / n2), dim)


def pdist(input, p=2):
    """The ``p``-norm distances between the rows of a 2-D ``input``, pairs ``i < j`` in
    row-major order (the condensed upper triangle).

    Examples
    --------
    >>> wgrad.pdist(wgrad.tensor([[0., 0.], [3., 4.], [0., 1.]]))
    tensor([5.0000, 1.0000, 4.2426])
    """
    if input.ndim != 2:
        raise RuntimeError(f"pdist only supports 2D tensors, got: {input.ndim}D")
    if not input.dtype.is_floating_point:
        raise RuntimeError("pdist only supports floating-point dtypes")
    n = input.shape[0]
    i, j = jnp.triu_indices(n, 1)
    d = input[_make(i)] - input[_make(j)]
    return vector_norm(d, p, -1)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """``||x1 - x2 + eps||_p`` over the last dimension (complex inputs: ``|z|`` norms).

    Examples
    --------
    >>> wgrad.pairwise_distance(wgrad.tensor([[0., 0.]]), wgrad.tensor([[3., 4.]]), eps=0)
    tensor([5.])
    """
    d = x1 - x2 + eps
    return vector_norm(d, p, -1 if d.ndim else None, keepdim=keepdim)

