"""Multi-head attention: ``multi_head_attention_forward`` and the mask helpers that
``nn.MultiheadAttention`` and the Transformer layers share (torch.nn.functional's).

Layout inside: (sequence, batch, embedding), as torch's function; the modules transpose
``batch_first`` inputs around it. With ``need_weights`` the attention weights are computed
explicitly (and returned, averaged over heads by default); without, the product goes
through ``scaled_dot_product_attention``, as in torch, whose ``is_causal`` hint then
replaces the mask (torch drops ``attn_mask`` there and masks causally).
"""
import math
import warnings

from .. import _creation
from .. import _dtype
from .._tensor import Tensor
from ..ops.shape import cat as _ops_cat
from . import functional as F  # (imported by functional, after what is used here)

__all__ = ["multi_head_attention_forward"]


def _none_or_dtype(input):
    if input is None:
        return None
    if isinstance(input, Tensor):
        return input.dtype
    raise RuntimeError("input to _none_or_dtype() must be None or torch.Tensor")


def _canonical_mask(mask, mask_name, other_type, other_name, target_type, check_other=True):
    """A boolean mask as an additive float one (-inf where True) of ``target_type``; a
    float mask as it is; torch's errors and deprecation warning."""
    if mask is None:
        return None
    if mask.dtype is not _dtype.bool and not mask.is_floating_point():
        raise AssertionError(f"only bool and floating types of {mask_name} are supported")
    if check_other and other_type is not None and mask.dtype is not other_type:
        warnings.warn(f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                      "Use same type for both instead.", stacklevel=3)
    if mask.dtype is _dtype.bool:
        mask = _creation.zeros_like(mask, dtype=target_type).masked_fill(mask, float("-inf"))
    return mask


def _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads):
    """Whether the input is batched; torch's AssertionErrors for inconsistent ranks."""
    q = query.dim()
    if q not in (2, 3):
        raise AssertionError("query should be unbatched 2D or batched 3D tensor but received "
                             f"{q}-D query tensor")
    kind = "batched (3-D)" if q == 3 else "unbatched (2-D)"
    if key.dim() != q or value.dim() != q:
        raise AssertionError(f"For {kind} `query`, expected `key` and `value` to be {q}-D but "
                             f"found {key.dim()}-D and {value.dim()}-D tensors respectively")
    if key_padding_mask is not None and key_padding_mask.dim() != q - 1:
        raise AssertionError(f"For {kind} `query`, expected `key_padding_mask` to be `None` or "
                             f"{q - 1}-D but found {key_padding_mask.dim()}-D tensor instead")
    if attn_mask is not None:
        if attn_mask.dim() not in (2, 3):
            raise AssertionError(f"For {kind} `query`, expected `attn_mask` to be `None`, 2-D "
                                 f"or 3-D but found {attn_mask.dim()}-D tensor instead")
        expected = (num_heads, query.shape[0], key.shape[0])
        if q == 2 and attn_mask.dim() == 3 and tuple(attn_mask.shape) != expected:
            raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got "
                                 f"{attn_mask.shape}")
    return q == 3


def _in_projection(q, k, v, w, b, use_separate, w_q, w_k, w_v, e):
    if use_separate:
        if w_q is None:
            raise AssertionError("use_separate_proj_weight is True but q_proj_weight is None")
        if w_k is None:
            raise AssertionError("use_separate_proj_weight is True but k_proj_weight is None")
        if w_v is None:
            raise AssertionError("use_separate_proj_weight is True but v_proj_weight is None")
        ws = (w_q, w_k, w_v)
    else:
        if w is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        ws = (w[:e], w[e:2 * e], w[2 * e:])
    bs = (None, None, None) if b is None else (b[:e], b[e:2 * e], b[2 * e:])
    return tuple(F.linear(x, wi, bi) for x, wi, bi in zip((q, k, v), ws, bs))


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """torch.nn.functional.multi_head_attention_forward: inputs ``(L, N, E)`` (or unbatched
    ``(L, E)``); returns the output and the attention weights (``None`` unless
    ``need_weights``; averaged over heads when ``average_attn_weights``).

    Example
    -------
    >>> import wgrad
    >>> import wgrad.nn.functional as F
    >>> mha = wgrad.nn.MultiheadAttention(8, 2)
    >>> x = wgrad.ones(5, 3, 8)
    >>> out, w = F.multi_head_attention_forward(
    ...     x, x, x, 8, 2, mha.in_proj_weight, mha.in_proj_bias, None, None, False, 0.0,
    ...     mha.out_proj.weight, mha.out_proj.bias, need_weights=False)
    >>> tuple(out.shape), w
    ((5, 3, 8), None)
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.shape[0]
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask",
                                       _none_or_dtype(attn_mask), "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the "
                           "Transformer module method `generate_square_subsequent_mask` to "
                           "create this mask.")
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None  # scaled_dot_product_attention masks causally (torch's hint)
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype,
                                    check_other=False)
        if key_padding_mask is not None:
            is_causal = False  # the merged mask is no longer causal
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, "
                             f"but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if key.shape[:2] != value.shape[:2]:
            raise AssertionError(f"key's sequence and batch dims {key.shape[:2]} do not "
                                 f"match value's {value.shape[:2]}")
    elif tuple(key.shape) != tuple(value.shape):
        raise AssertionError(f"key shape {key.shape} does not match value shape "
                             f"{value.shape}")
    q, k, v = _in_projection(query, key, value, in_proj_weight, in_proj_bias,
                             use_separate_proj_weight, q_proj_weight, k_proj_weight,
                             v_proj_weight, embed_dim)
    if attn_mask is not None:
        if attn_mask.dim() == 2:
            if tuple(attn_mask.shape) != (tgt_len, src_len):
                raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(tgt_len, src_len)}.")
            attn_mask = attn_mask.unsqueeze(0)
        elif attn_mask.dim() == 3:
            if tuple(attn_mask.shape) != (bsz * num_heads, tgt_len, src_len):
                raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but "
                                   f"should be {(bsz * num_heads, tgt_len, src_len)}.")
        else:
            raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
    if bias_k is not None and bias_v is not None:
        if static_k is not None:
            raise AssertionError("bias cannot be added to static key.")
        if static_v is not None:
            raise AssertionError("bias cannot be added to static value.")
        k = _ops_cat([k, bias_k.repeat(1, bsz, 1)])
        v = _ops_cat([v, bias_v.repeat(1, bsz, 1)])
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    elif bias_k is not None or bias_v is not None:
        raise AssertionError("bias_k is set but bias_v is None" if bias_k is not None
                             else "bias_v is set but bias_k is None")
    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    k = _static_or(static_k, k, bsz, num_heads, head_dim, "k")
    v = _static_or(static_v, v, bsz, num_heads, head_dim, "v")
    if add_zero_attn:
        zeros = _creation.zeros(bsz * num_heads, 1, head_dim, dtype=k.dtype)
        k = _ops_cat([k, zeros], dim=1)
        v = _ops_cat([v, zeros.to(v.dtype)], dim=1)
        if attn_mask is not None:
            attn_mask = F.pad(attn_mask, (0, 1))
        if key_padding_mask is not None:
            key_padding_mask = F.pad(key_padding_mask, (0, 1))
    src_len = k.shape[1]
    if key_padding_mask is not None:
        for i, n in enumerate((bsz, src_len)):
            if key_padding_mask.shape[i] != n:
                raise AssertionError(f"Expected key_padded_mask.shape[{i}] to be {n}, but got "
                                     f"{key_padding_mask.shape[i]}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(
            bsz, num_heads, 1, src_len).reshape(bsz * num_heads, 1, src_len)
        attn_mask = kpm if attn_mask is None else attn_mask + kpm
    if not training:
        dropout_p = 0.0
    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(head_dim))
        scores = q_scaled @ k.transpose(-2, -1)
        if attn_mask is not None:
            scores = attn_mask + scores
        weights = F.softmax(scores, dim=-1)
        if dropout_p > 0.0:
            weights = F.dropout(weights, p=dropout_p)
        out = (weights @ v).transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(dim=1)
        if not is_batched:
            out, weights = out.squeeze(1), weights.squeeze(0)
        return out, weights
    if attn_mask is not None:
        if attn_mask.shape[0] == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = F.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, embed_dim)
    if not is_batched:
        out = out.squeeze(1)
    return out, None


def _static_or(static, x, bsz, num_heads, head_dim, name):
    """``x`` as (batch * heads, S, head_dim), or the given static one (checked)."""
    if static is None:
        return x.reshape(x.shape[0], bsz * num_heads, head_dim).transpose(0, 1)
    if static.shape[0] != bsz * num_heads:
        raise AssertionError(f"expecting static_{name}.size(0) of {bsz * num_heads}, but got "
                             f"{static.shape[0]}")
    if static.shape[2] != head_dim:
        raise AssertionError(f"expecting static_{name}.size(2) of {head_dim}, but got "
                             f"{static.shape[2]}")
    return static
