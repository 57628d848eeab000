"""Adafactor, Muon and SparseAdam against torch.optim: trajectories, state, errors."""
import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")
_zeropower = pytest.importorskip("torch.optim._muon")._zeropower_via_newtonschulz

TOL = {"float32": 1e-6, "float64": 1e-12}


def _draw(shapes, dtype, seed):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s).astype(dtype) for s in shapes]


def _run(lib, name, opts, init, targets, steps=8, groups=None):
    """``steps`` steps of ``name`` on sum_k ||p_k - t_k||^4 (maximize: its negative)."""
    ps = [lib.tensor(a, requires_grad=True) for a in init]
    ts = [lib.tensor(t) for t in targets]
    params = ps if groups is None else [dict(g, params=[ps[i] for i in idx])
                                       for idx, g in groups]
    opt = getattr(lib.optim, name)(params, **opts)
    sign = -1.0 if opts.get("maximize") else 1.0
    for _ in range(steps):
        opt.zero_grad()
        (sign * sum(((p - t) ** 2).sum() ** 2 for p, t in zip(ps, ts))).backward()
        opt.step()
    return ps, opt


def _compare(ours, ref, tol):
    (ps, opt), (tps, topt) = ours, ref
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p.detach().numpy(), tp.detach().numpy(), rtol=tol, atol=tol)
    sd, tsd = opt.state_dict(), topt.state_dict()
    assert sd["param_groups"] == tsd["param_groups"]
    assert sorted(sd["state"]) == sorted(tsd["state"])
    for k, ts in tsd["state"].items():
        s = sd["state"][k]
        assert sorted(s) == sorted(ts)
        for key, tv in ts.items():
            v = s[key]
            assert str(v.dtype).split(".")[-1] == str(tv.dtype).split(".")[-1], key
            assert tuple(v.shape) == tuple(tv.shape), key
            np.testing.assert_allclose(v.numpy(), tv.numpy(), rtol=1e-5, atol=tol, err_msg=key)


SHAPES = {"Adafactor": [(4, 3), (5,), (), (2, 3, 4)], "Muon": [(4, 3), (3, 5), (6, 6)]}
ROWS = [
    ("Adafactor", dict()),
    ("Adafactor", dict(lr=0.1, weight_decay=0.1, maximize=True)),
    ("Adafactor", dict(lr=0.05, eps=(1e-3, 1e-2), d=2.0, beta2_decay=-0.5)),
    ("Adafactor", dict(foreach=True, weight_decay=0.01)),
    ("Muon", dict()),
    ("Muon", dict(lr=0.02, nesterov=False, adjust_lr_fn="match_rms_adamw")),
    ("Muon", dict(lr=0.05, momentum=0.5, ns_steps=3, ns_coefficients=(2.0, -1.5, 0.5),
                  weight_decay=0.0, adjust_lr_fn="original")),
]
# every Adafactor row in both precisions; Muon (whose unrolled iteration is slower to
# compile) its defaults in both, the other rows in one each
CASES = ([(n, o, dt) for n, o in ROWS[:5] for dt in ("float32", "float64")] +
         [ROWS[5] + ("float32",), ROWS[6] + ("float64",)])


@pytest.mark.parametrize("name,opts,dtype", CASES,
                         ids=[f"{n}-{dt}-{i}" for i, (n, _, dt) in enumerate(CASES)])
def test_trajectory_and_state_match_torch(name, opts, dtype):
    init = _draw(SHAPES[name], dtype, 0)
    targets = _draw(SHAPES[name], dtype, 1)
    _compare(_run(wgrad, name, opts, init, targets), _run(torch, name, opts, init, targets),
             TOL[dtype])


@pytest.mark.parametrize("name,opts,shapes,dtypes", [
    # eps[0] None: the machine epsilon of the group's first parameter, for all of them
    ("Adafactor", dict(lr=0.1), [(3, 2), (4,), (2, 2)], ["float64", "float32", "float32"]),
    ("Muon", dict(lr=0.03), [(3, 2), (2, 4), (4, 4)], ["float32", "float64", "float32"]),
])
def test_param_groups_match_torch(name, opts, shapes, dtypes):
    init = [a.astype(dt) for a, dt in zip(_draw(shapes, "float64", 2), dtypes)]
    targets = [a.astype(dt) for a, dt in zip(_draw(shapes, "float64", 3), dtypes)]
    groups = [([0, 1], {}), ([2], {"lr": opts["lr"] / 2, "weight_decay": 0.2})]
    _compare(_run(wgrad, name, opts, init, targets, groups=groups),
             _run(torch, name, opts, init, targets, groups=groups), 1e-6)


def test_tensor_lr_matches_torch():
    init, targets = _draw([(3, 4), (4,)], "float32", 4), _draw([(3, 4), (4,)], "float32", 5)
    out = [_run(lib, "Adafactor", dict(lr=lib.tensor(0.05)), init, targets)
           for lib in (wgrad, torch)]
    for a, b in zip(out[0][0], out[1][0]):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
    out = [_run(lib, "Muon", dict(lr=lib.tensor(0.05)), init[:1], targets[:1])
           for lib in (wgrad, torch)]
    np.testing.assert_allclose(out[0][0][0].detach().numpy(), out[1][0][0].detach().numpy(),
                               rtol=1e-6)


@pytest.mark.parametrize("shape,dtype", [((4, 3), "float32"), ((3, 7), "float64"),
                                         ((16, 16), "float32"), ((40, 24), "float32")])
def test_newton_schulz_is_torchs_bit_for_bit(shape, dtype):
    """Small matrices: the bfloat16 iteration equals torch's exactly (NOTE [Muon in
    bfloat16]), seen through one Muon step from zero momentum, no weight decay, lr 1:
    p_new = p - ratio * NS(g) (dividing by the ratio rounds in the parameter's dtype; a
    bfloat16 value one ulp off would be 4e-3 away)."""
    g = _draw([shape], dtype, 6)[0]
    ref = _zeropower(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5, 1e-7).float().numpy()
    w = wgrad.zeros(shape, dtype=getattr(wgrad, dtype), requires_grad=True)
    opt = wgrad.optim.Muon([w], lr=1.0, weight_decay=0.0, momentum=0.0,
                           adjust_lr_fn="original")
    w.grad = wgrad.tensor(g)
    opt.step()
    ratio = max(1, shape[0] / shape[1]) ** 0.5
    np.testing.assert_allclose(-w.detach().numpy() / ratio, ref, rtol=1e-6, atol=0)


def test_state_dict_roundtrip_continues_as_torch():
    init, targets = _draw(SHAPES["Adafactor"], "float64", 7), _draw(SHAPES["Adafactor"],
                                                                    "float64", 8)
    for name in ("Adafactor", "Muon"):
        ini, tg = (init, targets) if name == "Adafactor" else (init[:1], targets[:1])
        res = []
        for lib in (wgrad, torch):
            ps, opt = _run(lib, name, dict(lr=0.05), ini, tg, steps=3)
            sd = opt.state_dict()
            opt2 = getattr(lib.optim, name)(ps, lr=0.5)
            opt2.load_state_dict(sd)
            assert opt2.param_groups[0]["lr"] == 0.05
            for _ in range(3):
                opt2.zero_grad()
                sum(((p - lib.tensor(t)) ** 2).sum() ** 2 for p, t in zip(ps, tg)).backward()
                opt2.step()
            res.append([p.detach().numpy() for p in ps])
        for a, b in zip(*res):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


def test_defaults_and_repr_match_torch():
    for name in ("Adafactor", "Muon", "SparseAdam"):
        opts = [getattr(lib.optim, name)([lib.zeros(2, 3, requires_grad=True)])
                for lib in (wgrad, torch)]
        assert opts[0].defaults == opts[1].defaults
        assert repr(opts[0]) == repr(opts[1])
        assert opts[0].state_dict() == opts[1].state_dict()


def _raises_as_torch(make):
    """``make(lib)`` raises the same exception type and message with wgrad and torch."""
    errs = []
    for lib in (wgrad, torch):
        with pytest.raises(Exception) as info:
            make(lib)
        errs.append(info.value)
    assert type(errs[0]) is type(errs[1])
    assert str(errs[0]).replace("wgrad.", "torch.") == str(errs[1])


def _p(lib, *shape, dtype="float32"):
    return lib.zeros(*shape, dtype=getattr(lib, dtype), requires_grad=True)


CTOR_ERRORS = [
    ("Adafactor", dict(lr=-1.0)), ("Adafactor", dict(beta2_decay=0.5)),
    ("Adafactor", dict(eps=(-1.0, 1e-3))), ("Adafactor", dict(eps=(None, -1.0))),
    ("Adafactor", dict(d=0.5)), ("Adafactor", dict(weight_decay=-0.1)),
    ("Adafactor", dict(capturable=True)), ("Adafactor", dict(differentiable=True)),
    ("Muon", dict(lr=-1.0)), ("Muon", dict(momentum=-0.5)),
    ("Muon", dict(weight_decay=-1.0)), ("Muon", dict(adjust_lr_fn="sqrt")),
    ("Muon", dict(foreach=True)), ("Muon", dict(maximize=True)),
    ("SparseAdam", dict(lr=0.0)), ("SparseAdam", dict(eps=0.0)),
    ("SparseAdam", dict(betas=(1.0, 0.9))), ("SparseAdam", dict(betas=(0.9, -0.1))),
    ("SparseAdam", dict(foreach=False)),
]


@pytest.mark.parametrize("name,opts", CTOR_ERRORS,
                         ids=[f"{n}-{sorted(o)[0]}" for n, o in CTOR_ERRORS])
def test_constructor_errors_match_torch(name, opts):
    _raises_as_torch(lambda lib: getattr(lib.optim, name)([_p(lib, 2, 2)], **opts))


def _step(name, shapes, dtype="float32", **opts):
    def make(lib):
        ps = [_p(lib, *s, dtype=dtype) for s in shapes]
        opt = getattr(lib.optim, name)(ps, **opts)
        sum((p * p).abs().sum() for p in ps).backward()
        opt.step()
    return make


def _muon_added_vector(lib):
    opt = lib.optim.Muon([_p(lib, 2, 2)])
    v = _p(lib, 3)
    opt.add_param_group({"params": [v]})
    (v * v).sum().backward()
    opt.step()


STEP_ERRORS = {
    "adafactor-complex": _step("Adafactor", [(2, 2)], "complex64"),
    "adafactor-empty": _step("Adafactor", [(0, 3)]),
    "muon-complex": _step("Muon", [(2, 2)], "complex64"),
    "muon-1d": lambda lib: lib.optim.Muon([_p(lib, 3)]),
    "muon-3d-second": lambda lib: lib.optim.Muon([_p(lib, 2, 2), _p(lib, 1, 2, 2)]),
    "muon-added-1d": _muon_added_vector,
    "muon-ns-steps": _step("Muon", [(2, 2)], ns_steps=100),
    "muon-coefficients": _step("Muon", [(2, 2)], ns_coefficients=(1.0, 2.0)),
    "sparse-adam-complex": lambda lib: lib.optim.SparseAdam(
        [{"params": [_p(lib, 2)]}, {"params": [_p(lib, 3), _p(lib, 2, dtype="complex64")]}]),
    "sparse-adam-dense-grad": _step("SparseAdam", [(2, 2)]),
}


@pytest.mark.parametrize("case", sorted(STEP_ERRORS))
def test_step_errors_match_torch(case):
    _raises_as_torch(STEP_ERRORS[case])


def test_sparse_adam_without_gradients_steps_as_torch():
    for lib in (wgrad, torch):
        w = _p(lib, 3)
        opt = lib.optim.SparseAdam([w])
        assert opt.step(lambda: 7.0) == 7.0
        assert len(opt.state) == 0
