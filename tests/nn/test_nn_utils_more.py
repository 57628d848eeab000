"""nn.utils against torch: the hook-based spectral_norm (u/v updates, eval mode, state dict
versions, removal, errors), parametrizations.spectral_norm and orthogonal (every map, tall,
wide, batched and complex weights, assignment, errors), BatchNorm fusion, skip_init,
stateless.functional_call, the conv weight memory-format converters and nn.init's
deprecated aliases.

Random starts (u, v, an orthogonal completion) come from each library's own generator:
the pairs are built from the same numbers, then torch's state dict (with those buffers)
is copied into wgrad's module."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

LIBS = (torch, wgrad)


def _w(t):
    return wgrad.tensor(t.detach().numpy())


def _np(t):
    return t.detach().numpy()


def _close(a, b, tol=1e-10):
    np.testing.assert_allclose(_np(b), _np(a), rtol=tol, atol=tol)


def _copy_state(tm, wm):
    sd = {k: _w(v) for k, v in tm.state_dict().items()}
    wm.load_state_dict(sd)


def _make(lib, spec):
    kind, *args = spec
    if kind == "Param":  # a module holding one parameter of the given shape
        m = lib.nn.Module()
        m.weight = lib.nn.Parameter(lib.zeros(*args[0], dtype=lib.float64))
        return m
    dtype = getattr(lib, args.pop()) if args and isinstance(args[-1], str) else lib.float64
    return getattr(lib.nn, kind)(*args, dtype=dtype)


def _pair(spec, seed=0):
    tm, wm = _make(torch, spec), _make(wgrad, spec)
    if spec[0] == "Param":
        rng = np.random.default_rng(seed)
        x = rng.standard_normal(tuple(tm.weight.shape))
        if tm.weight.is_complex():
            x = x + 1j * rng.standard_normal(x.shape)
        with torch.no_grad():
            tm.weight.copy_(torch.tensor(x))
    _copy_state(tm, wm)
    return tm, wm


def _input(m, spec, seed=1):
    rng = np.random.default_rng(seed)
    if spec[0] in ("Linear", "LayerNorm"):
        return rng.standard_normal((2, spec[1]))
    if spec[0] in ("Conv1d", "ConvTranspose1d"):
        return rng.standard_normal((2, spec[1], 5))
    return rng.standard_normal((2, spec[1], 4, 4))


def _sgd(*modules):
    with torch.no_grad(), wgrad.no_grad():
        for m in modules:
            for p in m.parameters():
                if p.grad is not None:
                    p -= 0.1 * p.grad
                    p.grad = None


# ------------------------------------------------------------------------------------
# nn.utils.spectral_norm (forward pre-hook)

SN_CASES = [
    (("Linear", 4, 3), {}, 0),
    (("Linear", 4, 3), {"dim": 1, "n_power_iterations": 3}, 1),
    (("Conv2d", 2, 3, 2), {"eps": 1e-3}, 0),
    (("ConvTranspose2d", 2, 3, 2), {}, 1),  # dim defaults to 1 for ConvTranspose
    (("ConvTranspose1d", 2, 3, 2), {"dim": 0}, 0),
]


@pytest.mark.parametrize("spec,kw,dim", SN_CASES)
def test_spectral_norm_hook_matches_torch(spec, kw, dim):
    tm, wm = _pair(spec)
    for m, lib in ((tm, torch), (wm, wgrad)):
        assert lib.nn.utils.spectral_norm(m, **kw) is m
    assert list(wm.state_dict()) == list(tm.state_dict()) == \
        ["bias", "weight_orig", "weight_u", "weight_v"]
    assert [n for n, _ in wm.named_parameters()] == [n for n, _ in tm.named_parameters()]
    assert wm.weight_u.shape == tm.weight_u.shape and wm.weight_v.shape == tm.weight_v.shape
    hook = next(iter(wm._forward_pre_hooks.values()))
    assert (hook.name, hook.dim, hook.eps) == ("weight", dim, kw.get("eps", 1e-12))
    # before any forward, ``weight`` is a plain attribute aliasing weight_orig
    assert "weight" not in wm._parameters and not isinstance(wm.weight, wgrad.nn.Parameter)
    _close(tm.weight, wm.weight, 0)
    _copy_state(tm, wm)  # torch's random u and v
    u_obj = wm.weight_u
    x = _input(tm, spec)
    for _ in range(3):  # training: power iterations, gradients, a step on weight_orig
        outs = [m(lib.tensor(x)) for m, lib in ((tm, torch), (wm, wgrad))]
        _close(outs[0], outs[1])
        for k in ("weight_u", "weight_v", "weight"):
            _close(getattr(tm, k), getattr(wm, k))
        for o in outs:
            (o * o).sum().backward()
        for k in ("weight_orig", "bias"):
            _close(getattr(tm, k).grad, getattr(wm, k).grad, 1e-9)
        assert wm.weight_u.grad is None and not wm.weight_u.requires_grad
        _sgd(tm, wm)
    assert wm.weight_u is u_obj  # updated in place, as torch's
    for m in (tm, wm):
        m.eval()
    u = _np(wm.weight_u).copy()
    _close(tm(torch.tensor(x)), wm(wgrad.tensor(x)))  # eval: stored u and v
    np.testing.assert_array_equal(_np(wm.weight_u), u)
    sd = wm.state_dict()
    assert sd._metadata == tm.state_dict()._metadata == \
        {"": {"version": 1, "spectral_norm": {"weight.version": 1}}}
    for m, lib in ((tm, torch), (wm, wgrad)):
        assert lib.nn.utils.remove_spectral_norm(m) is m
        assert [n for n, _ in m.named_parameters()] == ["bias", "weight"]
        assert isinstance(m.weight, lib.nn.Parameter) and not m._forward_pre_hooks
        assert not m._state_dict_hooks and "weight_u" not in m._buffers
    _close(tm.weight, wm.weight)


def test_spectral_norm_hook_two_forwards_one_backward():
    """The GAN pattern: two training forwards, then one backward through both."""
    tm, wm = _pair(("Linear", 3, 4))
    for m, lib in ((tm, torch), (wm, wgrad)):
        lib.nn.utils.spectral_norm(m, n_power_iterations=2)
    _copy_state(tm, wm)
    x1, x2 = np.ones((2, 3)), np.arange(6.0).reshape(2, 3)
    for m, lib in ((tm, torch), (wm, wgrad)):
        (m(lib.tensor(x1)).sum() - (m(lib.tensor(x2)) ** 2).sum()).backward()
    _close(tm.weight_orig.grad, wm.weight_orig.grad, 1e-9)
    _close(tm.weight_u, wm.weight_u)


def _old_state_dict(tm, lib):
    """torch's version-0 layout: ``weight`` (W_orig / sigma) stored, no v, no metadata."""
    sd = tm.state_dict()
    out = {k: v for k, v in sd.items() if k != "weight_v"}
    out["weight"] = tm.weight.detach()
    return {k: lib.tensor(v.numpy()) if lib is wgrad else v.clone() for k, v in out.items()}


@pytest.mark.parametrize("spec", [("Linear", 4, 3), ("Conv2d", 2, 3, 2)])
def test_spectral_norm_loads_version_0_state_dict(spec):
    src = _make(torch, spec)
    torch.nn.utils.spectral_norm(src)
    src(torch.tensor(_input(src, spec)))  # u = normalize(W @ v) holds after a forward
    targets = []
    for lib in LIBS:
        m = _make(lib, spec)
        lib.nn.utils.spectral_norm(m)
        assert m.load_state_dict(_old_state_dict(src, lib)) is not None
        targets.append(m)
    tm, wm = targets
    _close(tm.weight_v, wm.weight_v, 1e-8)
    _close(tm.weight_orig, wm.weight_orig, 0)
    for m in targets:
        m.eval()
    x = _input(tm, spec)
    _close(tm(torch.tensor(x)), wm(wgrad.tensor(x)), 1e-8)


def test_spectral_norm_state_dict_versions_and_missing_keys():
    src = wgrad.nn.utils.spectral_norm(wgrad.nn.Linear(3, 2))
    sd = src.state_dict()
    plain = dict(sd)  # current keys without metadata: taken as current
    missing = []
    for lib in LIBS:
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2))
        conv = (lambda t: t) if lib is wgrad else (lambda t: torch.tensor(t.numpy()))
        m.load_state_dict({k: conv(v) for k, v in plain.items()})
        # version 0 without "weight": torch reports the keys the old layout needs
        bad = {k: conv(v) for k, v in plain.items() if k != "weight_v"}
        with pytest.raises(RuntimeError, match=r'Missing key\(s\) in state_dict: "weight"'):
            m.load_state_dict(bad)
        res = m.load_state_dict(bad, strict=False)
        missing.append((res.missing_keys, res.unexpected_keys))
    assert missing[0] == missing[1] == (["weight", "weight_v"], [])
    np.testing.assert_array_equal(_np(m.weight_v), _np(src.weight_v))


def test_spectral_norm_state_dict_round_trip_with_torch():
    tm, wm = _pair(("Linear", 3, 2))
    for m, lib in ((tm, torch), (wm, wgrad)):
        lib.nn.utils.spectral_norm(m)
    sd = wm.state_dict()
    tsd = type(sd)((k, torch.tensor(v.numpy())) for k, v in sd.items())
    tsd._metadata = sd._metadata
    tm.load_state_dict(tsd)
    _close(tm.weight_v, wm.weight_v, 0)


def test_spectral_norm_hook_errors_match_torch():
    for lib in LIBS:
        m = lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2))
        with pytest.raises(RuntimeError, match="Cannot register two spectral_norm hooks on "
                                               "the same parameter weight"):
            lib.nn.utils.spectral_norm(m)
        lib.nn.utils.spectral_norm(m, name="bias")  # another name: allowed
        lib.nn.utils.remove_spectral_norm(m)
        with pytest.raises(ValueError, match="spectral_norm of 'weight' not found in Linear"):
            lib.nn.utils.remove_spectral_norm(m)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, "
                                             "but got n_power_iterations=0"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2), n_power_iterations=0)
        with pytest.raises(ValueError, match="`SpectralNorm` cannot be applied as parameter "
                                             "`bias` is None"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2, bias=False), name="bias")
        with pytest.raises(KeyError, match="nope"):
            lib.nn.utils.spectral_norm(lib.nn.Linear(3, 2), name="nope")
        with pytest.raises(ValueError, match="can't have uninitialized parameters"):
            lib.nn.utils.spectral_norm(lib.nn.LazyLinear(2))


def test_remove_spectral_norm_drops_the_load_hook():
    """torch leaves its load pre-hook behind (it compares the wrapper around it), so a
    strict load of the plain state dict then misses ``weight_orig``; wgrad removes it."""
    m = wgrad.nn.utils.remove_spectral_norm(wgrad.nn.utils.spectral_norm(wgrad.nn.Linear(3,
                                                                                          2)))
    assert not m._load_state_dict_pre_hooks
    m.load_state_dict(wgrad.nn.Linear(3, 2).state_dict())


# ------------------------------------------------------------------------------------
# nn.utils.parametrizations.spectral_norm

PSN_CASES = [
    (("Linear", 4, 3), {}),
    (("Linear", 4, 3), {"n_power_iterations": 3, "dim": 1}),
    (("Conv2d", 2, 3, 2), {"eps": 1e-4}),
    (("ConvTranspose1d", 2, 3, 2), {}),
    (("ConvTranspose1d", 2, 3, 2), {"dim": -1}),
    (("Linear", 3, 2, "complex128"), {}),
    (("LayerNorm", 4), {}),  # a 1-d weight: normalized exactly, no u or v
]


@pytest.mark.parametrize("spec,kw", PSN_CASES)
def test_parametrized_spectral_norm_matches_torch(spec, kw):
    tm, wm = _pair(spec)
    P = [lib.nn.utils.parametrizations for lib in LIBS]
    assert P[0].spectral_norm(tm, **kw) is tm and P[1].spectral_norm(wm, **kw) is wm
    assert repr(wm) == repr(tm) and type(wm).__name__ == type(tm).__name__
    assert list(wm.state_dict()) == list(tm.state_dict())
    tsn, wsn = tm.parametrizations.weight[0], wm.parametrizations.weight[0]
    assert wsn.dim == tsn.dim and wsn.eps == tsn.eps
    matrix = tm.parametrizations.weight.original.ndim > 1
    if matrix:  # 15 + 1 power iterations from each library's random start
        assert wsn._u.shape == tsn._u.shape and wsn._v.shape == tsn._v.shape
    _copy_state(tm, wm)
    x = _input(tm, spec)
    if tm.parametrizations.weight.original.is_complex():
        x = x + 0.5j
    for _ in range(2):
        outs = [m(lib.tensor(x)) for m, lib in ((tm, torch), (wm, wgrad))]
        _close(outs[0], outs[1])
        if matrix:
            _close(tsn._u, wsn._u)
            _close(tsn._v, wsn._v)
        for o in outs:
            (o.abs() ** 2).sum().backward()
        _close(tm.parametrizations.weight.original.grad,
               wm.parametrizations.weight.original.grad, 1e-9)
        _sgd(tm, wm)
    for m in (tm, wm):
        m.eval()
    _close(tm.weight, wm.weight)  # eval: no power iteration on reading
    for m, lib in ((tm, torch), (wm, wgrad)):
        lib.nn.utils.parametrize.remove_parametrizations(m, "weight")
    _close(tm.weight, wm.weight)
    assert list(wm.state_dict()) == list(tm.state_dict())


def test_parametrized_spectral_norm_errors_match_torch():
    for lib in LIBS:
        sn = lib.nn.utils.parametrizations.spectral_norm
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in "
                                             r"range of \[-2, 1\] but got 2\)"):
            sn(lib.nn.Linear(3, 2), dim=2)
        with pytest.raises(ValueError, match="Expected n_power_iterations to be positive, "
                                             "but got n_power_iterations=-1"):
            sn(lib.nn.Linear(3, 2), n_power_iterations=-1)
        with pytest.raises(ValueError, match="Module 'Linear.*' has no parameter or buffer "
                                             "with name 'w'"):
            sn(lib.nn.Linear(3, 2), name="w")


# ------------------------------------------------------------------------------------
# nn.utils.parametrizations.orthogonal

ORTH_CASES = [
    (("Linear", 3, 3), {}),
    (("Linear", 3, 3), {"orthogonal_map": "cayley"}),
    (("Linear", 3, 3), {"orthogonal_map": "householder"}),
    (("Linear", 3, 3), {"use_trivialization": False}),
    (("Linear", 3, 5), {}),  # tall: householder by default, base completed at random
    (("Linear", 5, 3), {"orthogonal_map": "matrix_exp"}),  # wide
    (("Linear", 3, 5), {"orthogonal_map": "householder", "use_trivialization": False}),
    (("Linear", 5, 3), {"use_trivialization": False}),
    (("Linear", 3, 3, "complex128"), {"orthogonal_map": "cayley"}),
    (("Param", (2, 4, 3)), {}),  # a batch of tall matrices
]


def _orth_input(tm, spec):
    rng = np.random.default_rng(1)
    if spec[0] == "Param":
        return None
    x = rng.standard_normal((2, spec[1]))
    return x + 0.25j if tm.weight.is_complex() else x


def _orth_loss(m, lib, x):
    if x is None:
        return (m.weight * lib.arange(m.weight.numel(), dtype=m.weight.dtype)
                .reshape(m.weight.shape)).sum()
    return (m(lib.tensor(x)).abs() ** 2).sum()


def _assert_orthogonal(w):
    w = _np(w)
    n, k = w.shape[-2:]
    g = np.conj(np.swapaxes(w, -1, -2)) @ w if n >= k else w @ np.conj(np.swapaxes(w, -1, -2))
    np.testing.assert_allclose(g, np.broadcast_to(np.eye(min(n, k)), g.shape), atol=1e-12)


@pytest.mark.parametrize("spec,kw", ORTH_CASES)
def test_orthogonal_matches_torch(spec, kw):
    tm, wm = _pair(spec)
    P = [lib.nn.utils.parametrizations for lib in LIBS]
    assert P[0].orthogonal(tm, **kw) is tm and P[1].orthogonal(wm, **kw) is wm
    assert repr(wm) == repr(tm)
    assert list(wm.state_dict()) == list(tm.state_dict())
    to, wo = tm.parametrizations.weight[0], wm.parametrizations.weight[0]
    assert wo.orthogonal_map.name == to.orthogonal_map.name
    assert hasattr(wo, "base") == hasattr(to, "base")
    square = tm.weight.shape[-1] == tm.weight.shape[-2]
    if square or not hasattr(to, "base"):  # no random completion: equal as registered
        _close(tm.weight, wm.weight)
        _close(tm.parametrizations.weight.original, wm.parametrizations.weight.original)
    _copy_state(tm, wm)  # torch's base (its random completion for a tall matrix)
    x = _orth_input(tm, spec)
    for _ in range(2):
        _close(tm.weight, wm.weight)
        if kw.get("use_trivialization", True) or kw.get("orthogonal_map") == "householder" \
                or tm.weight.shape[-1] != tm.weight.shape[-2]:
            _assert_orthogonal(wm.weight)
        losses = [_orth_loss(m, lib, x) for m, lib in ((tm, torch), (wm, wgrad))]
        _close(losses[0], losses[1])
        for loss in losses:
            loss.backward()
        _close(tm.parametrizations.weight.original.grad,
               wm.parametrizations.weight.original.grad, 1e-8)
        _sgd(tm, wm)


@pytest.mark.parametrize("spec,kw", [
    (("Linear", 3, 3), {}),
    (("Linear", 3, 3), {"orthogonal_map": "cayley"}),
    (("Linear", 3, 5), {"orthogonal_map": "householder", "use_trivialization": False}),
    (("Linear", 5, 3), {}),
])
def test_orthogonal_assignment_matches_torch(spec, kw):
    tm, wm = _pair(spec)
    for m, lib in ((tm, torch), (wm, wgrad)):
        lib.nn.utils.parametrizations.orthogonal(m, **kw)
    _copy_state(tm, wm)
    rng = np.random.default_rng(3)
    q = np.linalg.qr(rng.standard_normal(tuple(tm.weight.shape)[::-1]))[0].T \
        if tm.weight.shape[0] < tm.weight.shape[1] else \
        np.linalg.qr(rng.standard_normal(tuple(tm.weight.shape)))[0]
    for value in (q, rng.standard_normal(tuple(tm.weight.shape))):  # orthogonal or not
        for m, lib in ((tm, torch), (wm, wgrad)):
            m.weight = lib.tensor(value)
        _close(tm.weight, wm.weight, 1e-9)
        _assert_orthogonal(wm.weight)
    if tm.weight.shape[0] == tm.weight.shape[1]:
        _close(tm.parametrizations.weight[0].base, wm.parametrizations.weight[0].base, 1e-9)


def test_orthogonal_errors_match_torch():
    for lib in LIBS:
        orth = lib.nn.utils.parametrizations.orthogonal
        with pytest.raises(ValueError, match="The householder parametrization does not "
                                             "support complex tensors."):
            orth(lib.nn.Linear(3, 3, dtype=lib.complex64), orthogonal_map="householder")
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                                             "tensor of 1 dimensions."):
            orth(lib.nn.Linear(3, 3), name="bias")
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                                             '"cayley", "householder". Got: qr'):
            orth(lib.nn.Linear(3, 3), orthogonal_map="qr")
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'w'"):
            orth(lib.nn.Linear(3, 3), name="w")
        m = orth(lib.nn.Linear(3, 3), use_trivialization=False)
        with pytest.raises(NotImplementedError, match="It is not possible to assign to the "
                                                      "matrix exponential or the Cayley "
                                                      "parametrizations when "
                                                      "use_trivialization=False."):
            m.weight = lib.eye(3)
        m = orth(lib.nn.Linear(3, 3))
        with pytest.raises(ValueError, match=r"Expected a matrix or batch of matrices of "
                                             r"shape torch.Size\(\[3, 3\]\). Got a tensor of "
                                             r"shape torch.Size\(\[2, 3\]\)."):
            m.weight = lib.zeros(2, 3)


# ------------------------------------------------------------------------------------
# fusion

def _bn(lib, kind, n, affine=True, seed=0):
    rng = np.random.default_rng(seed)
    bn = getattr(lib.nn, kind)(n, affine=affine, eps=1e-3)
    with torch.no_grad(), wgrad.no_grad():
        bn.running_mean.copy_(lib.tensor(rng.standard_normal(n), dtype=lib.float32))
        bn.running_var.copy_(lib.tensor(rng.uniform(0.5, 2, n), dtype=lib.float32))
        if affine:
            bn.weight.copy_(lib.tensor(rng.standard_normal(n), dtype=lib.float32))
            bn.bias.copy_(lib.tensor(rng.standard_normal(n), dtype=lib.float32))
    return bn.eval()


@pytest.mark.parametrize("conv,bn,transpose,x_shape", [
    (("Conv2d", 2, 3, 2), ("BatchNorm2d", 3, True), False, (2, 2, 4, 4)),
    (("Conv1d", 2, 3, 2, "float32"), ("BatchNorm1d", 3, False), False, (2, 2, 5)),
    (("ConvTranspose2d", 2, 3, 2), ("BatchNorm2d", 3, True), True, (2, 2, 3, 3)),
    (("Conv3d", 1, 2, 1), ("BatchNorm3d", 2, True), False, (1, 1, 2, 2, 2)),
])
def test_fuse_conv_bn_eval_matches_torch(conv, bn, transpose, x_shape):
    x = np.random.default_rng(2).standard_normal(x_shape)
    outs, convs = [], []
    for lib in LIBS:
        c = _make(lib, conv).eval()
        if convs:  # torch's numbers
            _copy_state(convs[0], c)
        convs.append(c)
        b = _bn(lib, bn[0], bn[1], bn[2])
        fused = lib.nn.utils.fuse_conv_bn_eval(c, b, transpose=transpose)
        assert type(fused) is type(c) and fused is not c
        assert isinstance(fused.weight, lib.nn.Parameter) and fused.weight.dtype == c.weight.dtype
        assert fused.bias.dtype == c.weight.dtype and fused.bias.requires_grad
        xt = lib.tensor(x, dtype=c.weight.dtype)
        ref = b(c(xt).to(lib.float32)).to(c.weight.dtype)
        _close(ref, fused(xt), 1e-5)
        outs.append(fused)
    _close(outs[0].weight, outs[1].weight, 1e-12)
    _close(outs[0].bias, outs[1].bias, 1e-12)


def test_fuse_weights_functions_match_torch():
    rng = np.random.default_rng(4)
    cw, cb = rng.standard_normal((3, 2, 2)), rng.standard_normal(3)
    rm, rv, bw, bb = (rng.standard_normal(3), rng.uniform(1, 2, 3), rng.standard_normal(3),
                      rng.standard_normal(3))
    cwt = rng.standard_normal((2, 3, 2))  # a transposed conv's weight: (in, out, k)
    for args in ((cw, None, rm, rv, 1e-5, None, None), (cwt, cb, rm, rv, 0.1, bw, bb, True)):
        res = []
        for lib in LIBS:
            a = [lib.tensor(v) if isinstance(v, np.ndarray) else v for v in args]
            a[0] = a[0].requires_grad_(False)
            res.append(lib.nn.utils.fuse_conv_bn_weights(*a))
        for t, w in zip(*res):
            _close(t, w, 1e-12)
            assert isinstance(w, wgrad.nn.Parameter) and w.requires_grad == t.requires_grad
    lw = rng.standard_normal((3, 4)).astype(np.float32)
    res = []
    for lib in LIBS:
        res.append(lib.nn.utils.fusion.fuse_linear_bn_weights(
            lib.tensor(lw), None, lib.tensor(rm), lib.tensor(rv), 1e-5, lib.tensor(bw),
            lib.tensor(bb)))
    for t, w in zip(*res):
        assert str(w.dtype)[6:] == str(t.dtype)[6:]
        _close(t, w, 1e-6)


@pytest.mark.parametrize("out,nf", [(3, 3), (3, 1)])
def test_fuse_linear_bn_eval_matches_torch(out, nf):
    x = np.random.default_rng(2).standard_normal((4, 2)).astype(np.float32)
    fused, linears = [], []
    for lib in LIBS:
        lin = lib.nn.Linear(2, out).eval()
        if linears:  # torch's numbers
            _copy_state(linears[0], lin)
        linears.append(lin)
        b = _bn(lib, "BatchNorm1d", nf)
        f = lib.nn.utils.fuse_linear_bn_eval(lin, b)
        if nf == out:
            _close(b(lin(lib.tensor(x))), f(lib.tensor(x)), 1e-5)
        fused.append(f)
    _close(fused[0].weight, fused[1].weight, 1e-6)
    _close(fused[0].bias, fused[1].bias, 1e-6)


def test_fusion_errors_match_torch():
    for lib in LIBS:
        U = lib.nn.utils
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            U.fuse_conv_bn_eval(lib.nn.Conv2d(2, 3, 1), lib.nn.BatchNorm2d(3).eval())
        with pytest.raises(AssertionError, match="Fusion only for eval!"):
            U.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(3))
        with pytest.raises(AssertionError, match="To fuse, linear.out_features == "
                                                 "bn.num_features or bn.num_features == 1, "
                                                 "got linear.out_features=3 and "
                                                 "bn.num_features=2"):
            U.fuse_linear_bn_eval(lib.nn.Linear(2, 3).eval(), lib.nn.BatchNorm1d(2).eval())
        with pytest.raises(AssertionError, match="bn.running_mean and bn.running_var must "
                                                 "not be None"):
            U.fuse_conv_bn_eval(lib.nn.Conv2d(2, 3, 1).eval(),
                                lib.nn.BatchNorm2d(3, track_running_stats=False).eval())


# ------------------------------------------------------------------------------------
# skip_init, stateless, memory formats, nn.init aliases

def test_skip_init_matches_torch():
    class NoDevice(wgrad.nn.Module):
        def __init__(self, n):
            super().__init__()

    for lib in LIBS:
        lib.manual_seed(0)
        m = lib.nn.utils.skip_init(lib.nn.Linear, 3, out_features=2, bias=True,
                                   dtype=lib.float64)
        assert type(m) is lib.nn.Linear and m.weight.dtype == lib.float64
        assert tuple(m.weight.shape) == (2, 3) and m.weight.requires_grad
        assert isinstance(m.weight, lib.nn.Parameter) and m.weight.device.type == "cpu"
        a = lib.randn(3)
        lib.manual_seed(0)
        np.testing.assert_array_equal(_np(a), _np(lib.randn(3)))  # no numbers drawn
        bn = lib.nn.utils.skip_init(lib.nn.BatchNorm1d, 4, device="cpu")
        assert [n for n, _ in bn.named_buffers()] == \
            ["running_mean", "running_var", "num_batches_tracked"]
        with pytest.raises(RuntimeError, match="Expected a Module; got <class 'int'>"):
            lib.nn.utils.skip_init(int)
        with pytest.raises(RuntimeError, match="Module must support a 'device' arg to skip "
                                               "initialization"):
            lib.nn.utils.skip_init(NoDevice if lib is wgrad else lib.nn.Identity, 1)


def test_stateless_functional_call_warns_and_calls():
    msgs = []
    for lib in LIBS:
        lin = lib.nn.Linear(2, 1)
        w = lib.ones(1, 2)
        with pytest.warns(FutureWarning) as rec:
            out = lib.nn.utils.stateless.functional_call(lin, {"weight": w, "bias": lib.zeros(1)},
                                                         lib.tensor([[1.0, 2.0]]))
        msgs.append(str(rec[0].message))
        assert rec[0].filename == __file__
        assert out.tolist() == [[3.0]] and lin.weight is not w
        with pytest.warns(FutureWarning), pytest.raises(RuntimeError,
                                                         match="Missing key\\(s\\): 'bias'"):
            lib.nn.utils.stateless.functional_call(lin, {"weight": w}, (lib.ones(1, 2),),
                                                   strict=True)
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("fn,kind", [("convert_conv2d_weight_memory_format", "2"),
                                     ("convert_conv3d_weight_memory_format", "3")])
@pytest.mark.parametrize("fmt", ["channels_last", "channels_last_3d", "contiguous_format",
                                 "preserve_format", None, "str"])
def test_convert_conv_weight_memory_format_matches_torch(fn, kind, fmt):
    results = []
    for lib in LIBS:
        convs = [getattr(lib.nn, f"{c}{kind}d")(2, 2, 1) for c in ("Conv", "ConvTranspose")]
        m = lib.nn.Sequential(lib.nn.Linear(2, 2), lib.nn.Sequential(*convs))
        w = m[1][0].weight
        before = _np(w).copy()
        f = getattr(lib, fmt) if fmt not in (None, "str") else fmt
        try:
            out = getattr(lib.nn.utils, fn)(m, f)
        except (RuntimeError, TypeError) as e:
            results.append((type(e), str(e)))
            continue
        assert out is m and m[1][0].weight is w
        np.testing.assert_array_equal(_np(m[1][0].weight), before)
        results.append("ok")
    assert results[0] == results[1]


INIT_ALIASES = [("uniform", ((3, 4),), {"a": -1.0}), ("normal", ((3, 4),), {"std": 2.0}),
                ("constant", ((3,),), {"val": 0.5}), ("eye", ((2, 3),), {}),
                ("dirac", ((2, 2, 3),), {}), ("xavier_uniform", ((3, 4),), {"gain": 2.0}),
                ("xavier_normal", ((3, 4),), {}), ("kaiming_uniform", ((3, 4),), {"a": 1}),
                ("kaiming_normal", ((3, 4),), {"mode": "fan_out"}),
                ("orthogonal", ((3, 4),), {}), ("sparse", ((4, 3),), {"sparsity": 0.5})]


@pytest.mark.parametrize("name,shape,kw", INIT_ALIASES)
def test_init_deprecated_aliases(name, shape, kw):
    msgs = []
    for lib in LIBS:
        alias = getattr(lib.nn.init, name)
        assert alias.__name__ == name and name in lib.nn.init.__all__
        lib.manual_seed(0)
        with pytest.warns(FutureWarning) as rec:
            t = alias(lib.empty(*shape[0]), **kw)
        assert rec[0].filename == __file__
        msgs.append(str(rec[0].message))
        lib.manual_seed(0)
        np.testing.assert_array_equal(_np(t), _np(getattr(lib.nn.init, name + "_")(
            lib.empty(*shape[0]), **kw)))
    assert msgs[0] == msgs[1] == f"`nn.init.{name}` is now deprecated in favor of " \
                                 f"`nn.init.{name}_`."
