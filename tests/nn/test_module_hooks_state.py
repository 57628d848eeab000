"""Global module hooks, ``always_call`` forward hooks, registration hooks, state dict
hooks, ``_metadata`` versions and extra state: each scenario runs on wgrad and on torch
and must log the same calls, keys, values and errors."""
import importlib
import warnings

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")


def _hooks_module(L):
    return importlib.import_module(L.__name__ + ".nn.modules.module")


def _outcome(fn):
    """What ``fn()`` returned, or the error it raised (type name, message)."""
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return (type(e).__name__, str(e).replace("wgrad.", "torch."))


class _Boom(Exception):
    pass


# -- scenarios: each takes the library and returns a log to compare ------------------------

def s_always_call(L):
    log = []

    class Fails(L.nn.Module):
        def forward(self, x, scale=1):
            log.append("forward")
            raise _Boom("in forward")
    m = Fails()
    m.register_forward_hook(lambda mod, a, out: log.append(("plain", out)))
    m.register_forward_hook(lambda mod, a, out: log.append(("always", out)), always_call=True)
    m.register_forward_hook(lambda mod, a, kw, out: log.append(("always kw", sorted(kw), out)),
                            with_kwargs=True, always_call=True)

    def bad(mod, a, out):
        raise ValueError("hook failed")
    m.register_forward_hook(bad, always_call=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        log.append(_outcome(lambda: m(L.ones(2), scale=2)))
    log.append([str(x.message) for x in w])
    # when forward succeeds, an always_call hook runs once, where it stands in the order
    ok = L.nn.Identity()
    ok.register_forward_hook(lambda mod, a, out: log.append("first"))
    h = ok.register_forward_hook(lambda mod, a, out: log.append("always ok"), always_call=True)
    ok(L.ones(1))
    h.remove()
    ok(L.ones(1))
    # an always_call hook also runs when a later hook raises, after the error's hook
    two = L.nn.Identity()
    two.register_forward_hook(lambda mod, a, out: log.append(("seen", float(out.sum()))))

    def later(mod, a, out):
        raise _Boom("in a hook")
    two.register_forward_hook(later)
    two.register_forward_hook(lambda mod, a, out: log.append(("late always", float(out.sum()))),
                              always_call=True)
    log.append(_outcome(lambda: two(L.ones(3))))
    return log


def s_global_hooks(L):
    M = _hooks_module(L)
    log = []
    handles = [
        M.register_module_forward_pre_hook(lambda m, a: log.append(("gpre", type(m).__name__))),
        M.register_module_forward_hook(lambda m, a, o: log.append(("gfwd", type(m).__name__))),
        M.register_module_forward_hook(lambda m, a, kw, o: log.append(("gfwd kw", kw)),
                                       with_kwargs=True),
        M.register_module_full_backward_pre_hook(
            lambda m, go: log.append(("gbpre", type(m).__name__))),
        M.register_module_full_backward_hook(
            lambda m, gi, go: log.append(("gbwd", type(m).__name__,
                                          [None if g is None else g.shape[-1] for g in gi]))),
    ]
    try:
        lin = L.nn.Linear(3, 2)
        with L.no_grad():
            lin.weight.fill_(0.5)
            lin.bias.fill_(0.0)
        lin.register_forward_pre_hook(lambda m, a: log.append("own pre"))
        lin.register_forward_hook(lambda m, a, o: log.append("own fwd"))
        lin.register_full_backward_pre_hook(lambda m, go: log.append("own bpre"))
        lin.register_full_backward_hook(lambda m, gi, go: log.append("own bwd"))
        x = L.ones(1, 3, requires_grad=True)
        lin(x).sum().backward()
        log.append(x.grad.tolist())
        # a global forward hook's result replaces the output of every module
        h = M.register_module_forward_hook(lambda m, a, o: o * 2)
        log.append(L.nn.Identity()(L.ones(2)).tolist())
        h.remove()
    finally:
        for h in handles:
            h.remove()
    log.append(L.nn.Identity()(L.ones(1)).tolist())  # removed: nothing logged
    return log


def s_global_always_call(L):
    M = _hooks_module(L)
    log = []

    class Fails(L.nn.Module):
        def forward(self, x):
            raise _Boom("no")
    h = M.register_module_forward_hook(lambda m, a, o: log.append(("g always", o)),
                                       always_call=True)
    try:
        log.append(_outcome(lambda: Fails()(L.ones(1))))
    finally:
        h.remove()
    log.append(_outcome(lambda: Fails()(L.ones(1))))
    return log


def s_registration_hooks(L):
    M = _hooks_module(L)
    log = []

    def on_buffer(m, name, b):
        log.append(("buffer", name, None if b is None else b.tolist()))
        return None if b is None else b * 10

    def on_param(m, name, p):
        log.append(("param", name, tuple(p.shape)))

    def on_module(m, name, sub):
        log.append(("module", name, type(sub).__name__))
        return L.nn.Tanh() if isinstance(sub, L.nn.ReLU) else None
    handles = [M.register_module_buffer_registration_hook(on_buffer),
               M.register_module_parameter_registration_hook(on_param),
               M.register_module_module_registration_hook(on_module)]
    try:
        m = L.nn.Module()
        m.register_buffer("b", L.ones(2))
        m.register_buffer("none", None)
        m.register_parameter("p", L.nn.Parameter(L.zeros(3)))
        m.register_parameter("q", None)
        m.act = L.nn.ReLU()
        m.add_module("lin", L.nn.Linear(1, 1))
        m.b = L.ones(2) * 2  # reassigning a buffer registers it again
        log.append((type(m.act).__name__, m.b.tolist(), sorted(dict(m.named_parameters()))))
    finally:
        for h in handles:
            h.remove()
    return log


class _WithExtra:
    """Mixin: extra state that is not a tensor (torch's documented use)."""

    def get_extra_state(self):
        return {"calls": self.calls, "tag": "v1"}

    def set_extra_state(self, state):
        self.calls = state["calls"] + 100


def _extra_model(L, calls=1):
    class Extra(_WithExtra, L.nn.Linear):
        pass
    net = L.nn.Sequential(L.nn.Linear(2, 2), L.nn.BatchNorm1d(2), Extra(2, 1))
    net[2].calls = calls
    return net


def s_state_dict_metadata_and_extra(L):
    net = _extra_model(L, calls=7)
    sd = net.state_dict()
    log = [list(sd), dict(sd._metadata), sd["2._extra_state"]]
    other = _extra_model(L, calls=0)
    log.append(_outcome(lambda: str(other.load_state_dict(sd))))
    log.append(other[2].calls)
    missing = {k: v for k, v in sd.items() if k != "2._extra_state"}
    log.append(_outcome(lambda: other.load_state_dict(missing)))
    log.append(_outcome(lambda: str(other.load_state_dict(missing, strict=False))))
    plain = L.nn.Linear(2, 1)
    extra = {"weight": L.ones(1, 2), "bias": L.ones(1), "_extra_state": 3}
    log.append(_outcome(lambda: plain.load_state_dict(extra)))
    log.append(_outcome(lambda: str(plain.load_state_dict(extra, strict=False))))
    log.append(_outcome(lambda: L.nn.Module().get_extra_state()))
    return log


def s_batchnorm_versions(L):
    bn = L.nn.BatchNorm1d(2)
    sd = {k: v for k, v in bn.state_dict().items() if k != "num_batches_tracked"}
    # no metadata: an old checkpoint, the module keeps its count
    log = [_outcome(lambda: str(L.nn.BatchNorm1d(2).load_state_dict(sd)))]
    old = type(bn.state_dict())(sd)
    old._metadata = {"": {"version": 1}}
    log.append(_outcome(lambda: str(L.nn.BatchNorm1d(2).load_state_dict(old))))
    new = type(bn.state_dict())(sd)
    new._metadata = {"": {"version": 2}}
    log.append(_outcome(lambda: str(L.nn.BatchNorm1d(2).load_state_dict(new))))
    return log


def s_state_dict_hooks(L):
    log = []
    net = L.nn.Sequential(L.nn.Linear(1, 1), L.nn.Linear(1, 1))
    net[0].register_state_dict_pre_hook(lambda m, prefix, keep: log.append(("pre", prefix, keep)))

    def post(m, sd, prefix, meta):
        log.append(("post", prefix, sorted(sd), meta))
        sd[prefix + "added"] = L.zeros(1)
    net[1].register_state_dict_post_hook(post)
    sd = net.state_dict(keep_vars=True)
    log.append(sorted(sd))
    # the public post hook must return None; the private one may replace the root's dict
    net[0].register_state_dict_post_hook(lambda m, sd, p, meta: {})
    log.append(_outcome(lambda: net.state_dict()))
    root = L.nn.Linear(1, 1)
    root._register_state_dict_hook(lambda m, sd, p, meta: {"only": L.ones(1)})
    log.append(list(root.state_dict()))

    def twice(m, sd, p, meta):
        return None
    root.register_state_dict_post_hook(twice)
    log.append(_outcome(lambda: root._register_state_dict_hook(twice)))
    return log


def s_load_state_dict_hooks(L):
    log = []
    net = L.nn.Sequential(L.nn.Linear(1, 1))

    def pre(m, sd, prefix, meta, strict, missing, unexpected, errors):
        log.append(("pre", type(m).__name__, prefix, sorted(sd), meta, strict))
        sd[prefix + "bias"] = L.full((1,), 5.0)  # fill in a key the checkpoint lacks
    net[0].register_load_state_dict_pre_hook(pre)

    def post(m, keys):
        log.append(("post", type(m).__name__, list(keys.missing_keys),
                    list(keys.unexpected_keys)))
        keys.unexpected_keys.clear()  # forgive the extra key
    net.register_load_state_dict_post_hook(post)
    ck = {"0.weight": L.full((1, 1), 2.0), "stray": L.ones(1)}
    log.append(_outcome(lambda: str(net.load_state_dict(ck))))
    log.append((net[0].weight.item(), net[0].bias.item()))
    net.register_load_state_dict_post_hook(lambda m, keys: keys)
    log.append(_outcome(lambda: net.load_state_dict(ck)))
    return log


def s_custom_load_override(L):
    """A module overriding _load_from_state_dict with torch's seven-argument signature
    (renaming an old key), and load_state_dict(assign=True)."""
    class Renamed(L.nn.Linear):
        def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                                  missing_keys, unexpected_keys, error_msgs):
            old = prefix + "w"
            if old in state_dict:
                state_dict[prefix + "weight"] = state_dict.pop(old)
            super()._load_from_state_dict(state_dict, prefix, local_metadata, strict,
                                          missing_keys, unexpected_keys, error_msgs)
    m = L.nn.Sequential(Renamed(2, 1))
    log = [_outcome(lambda: str(m.load_state_dict({"0.w": L.ones(1, 2), "0.bias": L.ones(1)})))]
    log.append(m[0].weight.tolist())
    w = L.full((1, 2), 3.0)
    m.load_state_dict({"0.weight": w, "0.bias": L.zeros(1)}, assign=True)
    log.append((type(m[0].weight).__name__, m[0].weight.requires_grad, m[0].weight.tolist()))
    return log


SCENARIOS = [s_always_call, s_global_hooks, s_global_always_call, s_registration_hooks,
             s_state_dict_metadata_and_extra, s_batchnorm_versions, s_state_dict_hooks,
             s_load_state_dict_hooks, s_custom_load_override]


def _plain(x):
    """Logs made comparable: tensors as nested lists, containers recursively."""
    if isinstance(x, (wgrad.Tensor, torch.Tensor)):
        return ("tensor", np.asarray(x.detach().tolist()).tolist())
    if isinstance(x, dict):
        return {k: _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return type(x)(_plain(v) for v in x)
    return x


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__[2:] for s in SCENARIOS])
def test_same_as_torch(scenario):
    assert _plain(scenario(wgrad)) == _plain(scenario(torch))
