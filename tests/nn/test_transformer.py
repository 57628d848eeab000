"""MultiheadAttention and the Transformer family against torch.nn: the same parameters
(names, shapes, order), outputs, attention weights and gradients (inputs and parameters),
masks of every kind, batch_first, norm_first, is_causal, and torch's errors."""
import warnings

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _pair(name, *args, **kw):
    """The torch module and a wgrad one holding the same parameters."""
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        tm = getattr(torch.nn, name)(*args, **kw, dtype=torch.float64)
        wm = getattr(wgrad.nn, name)(*args, **kw, dtype=wgrad.float64)
    tsd = tm.state_dict()
    assert list(wm.state_dict()) == list(tsd)
    wm.load_state_dict({k: wgrad.tensor(v.numpy()) for k, v in tsd.items()})
    return tm, wm


def _inputs(shapes, seed=1):
    rng = np.random.default_rng(seed)
    arrs = [rng.standard_normal(s) for s in shapes]
    return ([torch.tensor(a, requires_grad=True) for a in arrs],
            [wgrad.tensor(a, requires_grad=True) for a in arrs])


def _mask(kind, shape, seed=2):
    """A bool mask with no fully masked row, or a float one; both libraries' tensors."""
    rng = np.random.default_rng(seed)
    if kind == "bool":
        m = rng.random(shape) < 0.3
        m[..., 0] = False
    else:
        m = rng.standard_normal(shape)
    return torch.tensor(m), wgrad.tensor(m)


def _close(a, b, tol=1e-9):
    np.testing.assert_allclose(b.detach().numpy(), a.detach().numpy(), rtol=tol, atol=tol)


def _check(tm, wm, t_out, w_out, t_in, w_in):
    """Outputs, then the gradients of a weighted sum of the first output."""
    t_out, w_out = (t_out, w_out) if isinstance(t_out, tuple) else ((t_out,), (w_out,))
    for a, b in zip(t_out, w_out):
        assert (a is None) == (b is None)
        if a is not None:
            _close(a, b)
    rng = np.random.default_rng(3)
    g = rng.standard_normal(tuple(t_out[0].shape))
    (t_out[0] * torch.tensor(g)).sum().backward()
    (w_out[0] * wgrad.tensor(g)).sum().backward()
    for a, b in zip(t_in, w_in):
        _close(a.grad, b.grad)
    for (n, a), (_, b) in zip(tm.named_parameters(), wm.named_parameters()):
        assert (a.grad is None) == (b.grad is None), n
        if a.grad is not None:
            _close(a.grad, b.grad)


L, S, N, E = 4, 5, 2, 8

MHA_CASES = [
    # (constructor kwargs, query/key/value shapes, forward kwargs, masks: name -> (kind, shape))
    (dict(), [(L, N, E), (S, N, E), (S, N, E)], dict(average_attn_weights=False),
     {"attn_mask": ("bool", (L, S)), "key_padding_mask": ("bool", (N, S))}),
    (dict(batch_first=True, kdim=3, vdim=6, add_bias_kv=True, add_zero_attn=True),
     [(N, L, E), (N, S, 3), (N, S, 6)], dict(need_weights=False),
     {"attn_mask": ("float", (N * 2, L, S)), "key_padding_mask": ("float", (N, S))}),
    (dict(bias=False), [(L, E), (S, E), (S, E)], dict(), {"attn_mask": ("float", (L, S))}),
    (dict(batch_first=True), [(N, L, E)] * 3, dict(need_weights=False),
     {"key_padding_mask": ("bool", (N, L))}),
]


@pytest.mark.parametrize("ctor,shapes,fwd,masks", MHA_CASES, ids=range(len(MHA_CASES)))
def test_multihead_attention_matches_torch(ctor, shapes, fwd, masks):
    tm, wm = _pair("MultiheadAttention", E, 2, **ctor)
    t_in, w_in = _inputs(shapes)
    if shapes[0] == shapes[1] == shapes[2] and len(set(map(tuple, shapes))) == 1 \
            and "kdim" not in ctor:
        t_in, w_in = t_in[:1] * 3, w_in[:1] * 3  # self-attention: one tensor
    tk, wk = dict(fwd), dict(fwd)
    for name, (kind, shape) in masks.items():
        tk[name], wk[name] = _mask(kind, shape)
    _check(tm, wm, tm(*t_in, **tk), wm(*w_in, **wk), t_in[:len(set(map(id, t_in)))],
           w_in[:len(set(map(id, w_in)))])


def test_is_causal_drops_the_mask_without_weights():
    """torch's hint: with is_causal and need_weights=False the mask given is replaced by
    the causal one (so a mask that is not causal is ignored), and a key padding mask
    turns the hint off."""
    tm, wm = _pair("MultiheadAttention", E, 2)
    t_in, w_in = _inputs([(L, N, E)])
    tmask, wmask = _mask("float", (L, L))
    for kw in (dict(need_weights=False), dict(need_weights=True)):
        _close(tm(t_in[0], t_in[0], t_in[0], attn_mask=tmask, is_causal=True, **kw)[0],
               wm(w_in[0], w_in[0], w_in[0], attn_mask=wmask, is_causal=True, **kw)[0])
    with pytest.raises(RuntimeError, match="Need attn_mask if specifying the is_causal hint"):
        wm(w_in[0], w_in[0], w_in[0], is_causal=True)


def test_encoder_layer_and_decoder_layer_match_torch():
    tm, wm = _pair("TransformerEncoderLayer", E, 2, dim_feedforward=16, dropout=0.0,
                   activation="gelu", norm_first=True, batch_first=True)
    t_in, w_in = _inputs([(N, S, E)])
    tk, wk = _mask("bool", (N, S))
    _check(tm, wm, tm(t_in[0], src_key_padding_mask=tk), wm(w_in[0], src_key_padding_mask=wk),
           t_in, w_in)

    tm, wm = _pair("TransformerDecoderLayer", E, 2, dim_feedforward=16, dropout=0.0)
    t_in, w_in = _inputs([(L, N, E), (S, N, E)])
    tcm = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    wcm = wgrad.nn.Transformer.generate_square_subsequent_mask(L, dtype=wgrad.float64)
    _close(tcm, wcm)
    tk, wk = _mask("bool", (N, S))
    _check(tm, wm, tm(*t_in, tgt_mask=tcm, memory_key_padding_mask=tk, tgt_is_causal=True),
           wm(*w_in, tgt_mask=wcm, memory_key_padding_mask=wk, tgt_is_causal=True), t_in, w_in)


def test_transformer_matches_torch():
    tm, wm = _pair("Transformer", d_model=E, nhead=2, num_encoder_layers=2,
                   num_decoder_layers=1, dim_feedforward=16, dropout=0.0)
    t_in, w_in = _inputs([(S, N, E), (L, N, E)])
    tcm = torch.nn.Transformer.generate_square_subsequent_mask(L, dtype=torch.float64)
    wcm = wgrad.nn.Transformer.generate_square_subsequent_mask(L, dtype=wgrad.float64)
    tk, wk = _mask("bool", (N, S))
    _check(tm, wm, tm(*t_in, tgt_mask=tcm, src_key_padding_mask=tk),
           wm(*w_in, tgt_mask=wcm, src_key_padding_mask=wk), t_in, w_in)
    with pytest.raises(RuntimeError, match="the batch number of src and tgt must be equal"):
        wm(w_in[0], w_in[1][:, :1])
    with pytest.raises(RuntimeError, match="feature number of src and tgt must be equal"):
        wm(w_in[0][..., :4], w_in[1][..., :4])


def test_encoder_inference_pads_with_zeros_as_torch():
    """In evaluation without gradients, a batch_first encoder with a left-aligned padding
    mask runs on nested tensors in torch: zeros at the padded positions (before the final
    norm); with a mask that is not left aligned it does not."""
    tl = torch.nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=True,
                                          dtype=torch.float64)
    wl = wgrad.nn.TransformerEncoderLayer(E, 2, 16, dropout=0.0, batch_first=True,
                                          dtype=wgrad.float64)
    tm, wm = torch.nn.TransformerEncoder(tl, 2), wgrad.nn.TransformerEncoder(wl, 2)
    wm.load_state_dict({k: wgrad.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    tm.eval()
    wm.eval()
    x = np.random.default_rng(4).standard_normal((N, S, E))
    for pad in ([[0, 0, 0, 1, 1], [0, 0, 0, 0, 0]], [[0, 1, 0, 0, 0], [0, 0, 0, 0, 1]]):
        pad = np.array(pad, bool)
        with torch.no_grad(), wgrad.no_grad():
            a = tm(torch.tensor(x), src_key_padding_mask=torch.tensor(pad))
            b = wm(wgrad.tensor(x), src_key_padding_mask=wgrad.tensor(pad))
        _close(a, b)


def test_errors_and_warnings_match_torch():
    with pytest.raises(AssertionError, match="embed_dim must be divisible by num_heads"):
        wgrad.nn.MultiheadAttention(6, 4)
    with pytest.raises(ValueError, match="embed_dim and num_heads must be greater than 0"):
        wgrad.nn.MultiheadAttention(0, 2)
    with pytest.raises(RuntimeError, match="activation should be relu/gelu, not tanh"):
        wgrad.nn.TransformerEncoderLayer(8, 2, activation="tanh")
    layer = wgrad.nn.TransformerEncoderLayer(8, 2, dim_feedforward=16)
    with pytest.warns(UserWarning, match="batch_first was not True"):
        wgrad.nn.TransformerEncoder(layer, 1)
    m = wgrad.nn.MultiheadAttention(8, 2)
    x = wgrad.ones(4, 2, 8)
    with pytest.raises(RuntimeError, match=r"The shape of the 2D attn_mask is .*, but should "
                                           r"be \(4, 4\)"):
        m(x, x, x, attn_mask=wgrad.zeros(3, 4))
    with pytest.raises(AssertionError, match="only bool and floating types of attn_mask"):
        m(x, x, x, attn_mask=wgrad.zeros(4, 4, dtype=wgrad.int64))
    with pytest.raises(AssertionError, match=r"Expected key_padded_mask.shape\[0\] to be 2, "
                                             "but got 3"):
        m(x, x, x, key_padding_mask=wgrad.zeros(3, 4).bool())
    with pytest.raises(AssertionError, match="expected `key` and `value` to be 3-D"):
        m(x, x[0], x[0])
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                                         "attn_mask is deprecated"):
        m(x, x, x, attn_mask=wgrad.zeros(4, 4), key_padding_mask=wgrad.zeros(2, 4).bool())


def test_rank_errors_match_torch():
    msgs = []
    for lib in (torch, wgrad):
        m = lib.nn.MultiheadAttention(4, 2)
        x3, x2 = lib.ones(3, 1, 4), lib.ones(3, 4)
        got = []
        for args, kw in [((x2, x3, x3), {}),
                         ((x2, x2, x2), dict(key_padding_mask=lib.zeros(1, 3).bool())),
                         ((x2, x2, x2), dict(attn_mask=lib.zeros(3, 3, 3))),
                         ((lib.ones(1, 1, 1, 4),) * 3, {}),
                         ((x3, x3, x3), dict(attn_mask=lib.zeros(3)))]:
            with pytest.raises(AssertionError) as e:
                m(*args, **kw)
            got.append(str(e.value).replace(f"{lib.__name__}.Size", "Size"))
        F = lib.nn.functional
        w, b = m.in_proj_weight, m.in_proj_bias
        ow, ob = m.out_proj.weight, m.out_proj.bias
        for call in (
                lambda: F.multi_head_attention_forward(x3, x3, x3, 4, 2, None, b, None, None,
                                                       False, 0.0, ow, ob),
                lambda: F.multi_head_attention_forward(x3, x3, x3, 4, 2, w, b,
                                                       lib.zeros(1, 1, 4), None, False, 0.0,
                                                       ow, ob),
                lambda: F.multi_head_attention_forward(
                    x3, x3, lib.ones(2, 1, 4), 4, 2, None, b, None, None, False, 0.0, ow, ob,
                    use_separate_proj_weight=True, q_proj_weight=w[:4], k_proj_weight=w[4:8],
                    v_proj_weight=w[8:])):
            with pytest.raises(AssertionError) as e:
                call()
            got.append(str(e.value).replace(f"{lib.__name__}.Size", "Size"))
        msgs.append(got)
    assert msgs[0] == msgs[1]
