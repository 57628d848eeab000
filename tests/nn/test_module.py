"""nn.Module, Parameter and the containers against torch: registration, iteration,
state_dict / load_state_dict (and torch's messages), conversion, hooks, reprs."""
import copy
import pickle
import warnings
from collections import OrderedDict

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")
LIBS = pytest.mark.parametrize("L", [wgrad, torch], ids=["wgrad", "torch"])


def _np(t):
    return np.asarray(t.detach()) if isinstance(t, wgrad.Tensor) else t.detach().numpy()


def _err(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return type(e), str(e)
    return None


def _same_error(fw, ft):
    ew, et = _err(fw), _err(ft)
    if ew is not None:  # wgrad prints its dtypes as wgrad.float32
        ew = (ew[0], ew[1].replace("wgrad.", "torch."))
    assert et is not None and ew == et, (ew, et)


def _net(L):
    """A nested model with a shared module, buffers and a None parameter."""
    class Net(L.nn.Module):
        def __init__(self):
            super().__init__()
            self.body = L.nn.Sequential(L.nn.Linear(3, 4), L.nn.Tanh(),
                                        L.nn.Sequential(L.nn.Conv1d(1, 2, 3)))
            self.shared = self.body[0]
            self.head = L.nn.ModuleDict({"out": L.nn.Linear(4, 2, bias=False)})
            self.blocks = L.nn.ModuleList([L.nn.ReLU(), L.nn.ReLU(), L.nn.LayerNorm(2)])
            self.scale = L.nn.Parameter(L.ones(2))
            self.register_parameter("unused", None)
            self.register_buffer("count", L.zeros(1))
            self.register_buffer("scratch", L.zeros(2), persistent=False)
            self.bn = L.nn.BatchNorm1d(2)

        def forward(self, x):
            return self.head["out"](self.body[1](self.body[0](x))) * self.scale
    return Net()


# -- Parameter ---------------------------------------------------------------------------

def test_parameter_basics(on_the_cpu):
    x = wgrad.tensor([1.0, 2.0])
    p = wgrad.nn.Parameter(x)
    assert isinstance(p, wgrad.Tensor) and p.is_leaf and p.requires_grad
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))
    assert repr(wgrad.nn.Parameter(x, requires_grad=False)) == \
        repr(torch.nn.Parameter(torch.tensor([1.0, 2.0]), requires_grad=False))
    assert repr(wgrad.nn.Parameter()) == repr(torch.nn.Parameter())
    with wgrad.no_grad():
        x.mul_(3)  # shares the data of the tensor it wraps
    np.testing.assert_array_equal(_np(p), [3.0, 6.0])
    assert type(p * 2) is wgrad.Tensor and type(p.detach()) is wgrad.Tensor
    _same_error(lambda: wgrad.nn.Parameter(wgrad.tensor([1, 2])),
                lambda: torch.nn.Parameter(torch.tensor([1, 2])))


@pytest.mark.parametrize("clone", [copy.deepcopy, lambda p: pickle.loads(pickle.dumps(p))],
                         ids=["deepcopy", "pickle"])
def test_parameter_copy(clone):
    p = wgrad.nn.Parameter(wgrad.tensor([1 + 2j, 3j]), requires_grad=False)
    q = clone(p)
    assert type(q) is wgrad.nn.Parameter and q is not p and not q.requires_grad
    assert q.dtype is wgrad.complex64
    np.testing.assert_array_equal(_np(q), _np(p))
    m = wgrad.nn.Linear(2, 2)
    m2 = clone(m)
    assert m2.weight is not m.weight and isinstance(m2.weight, wgrad.nn.Parameter)
    np.testing.assert_array_equal(_np(m2.weight), _np(m.weight))
    assert m2.weight.requires_grad


# -- registration and iteration ------------------------------------------------------------

def test_tree_matches_torch():
    w, t = _net(wgrad), _net(torch)
    assert repr(w) == repr(t)
    for method in ("named_parameters", "named_buffers", "named_modules", "named_children"):
        assert [n for n, _ in getattr(w, method)()] == [n for n, _ in getattr(t, method)()]
    assert [n for n, _ in w.named_parameters(prefix="m", recurse=False)] == \
        [n for n, _ in t.named_parameters(prefix="m", recurse=False)]
    assert [n for n, _ in w.named_parameters(remove_duplicate=False)] == \
        [n for n, _ in t.named_parameters(remove_duplicate=False)]
    assert len(list(w.parameters())) == len(list(t.parameters()))
    assert sum(p.numel() for p in w.parameters()) == sum(p.numel() for p in t.parameters())
    assert list(w.state_dict()) == list(t.state_dict())
    assert list(w.state_dict(prefix="x.")) == list(t.state_dict(prefix="x."))
    assert isinstance(w.state_dict(), OrderedDict)
    sd = w.state_dict()
    assert not sd["scale"].requires_grad and type(sd["scale"]) is wgrad.Tensor
    assert w.state_dict(keep_vars=True)["scale"] is w.scale


def test_attribute_errors_match_torch():
    w, t = wgrad.nn.Linear(2, 3), torch.nn.Linear(2, 3)
    cases = [
        lambda L, m: m.x,
        lambda L, m: m.register_buffer("a", 3),
        lambda L, m: m.register_buffer(3, None),
        lambda L, m: m.register_buffer("a.b", None),
        lambda L, m: m.register_buffer("", None),
        lambda L, m: m.register_buffer("weight", None),
        lambda L, m: m.register_parameter("a", L.ones(1)),
        lambda L, m: m.register_parameter("a.b", None),
        lambda L, m: m.register_parameter(1, None),
        lambda L, m: m.add_module("a", 3),
        lambda L, m: m.add_module("a.b", None),
        lambda L, m: m.add_module("", None),
        lambda L, m: m.add_module("weight", None),
        lambda L, m: setattr(m, "weight", L.ones(3, 2)),
        lambda L, m: m.get_submodule("a"),
        lambda L, m: m.get_submodule("weight"),
        lambda L, m: m.get_parameter("a.b"),
        lambda L, m: m.get_buffer("weight"),
        lambda L, m: L.nn.Sequential(L.nn.Linear(1, 1)).get_parameter("1.weight"),
        lambda L, m: L.nn.Module()(1),
        lambda L, m: m.to(L.int32),
        lambda L, m: m.train("yes"),
        lambda L, m: L.nn.Module.register_buffer(object.__new__(L.nn.Module), "a", None),
    ]
    for case in cases:
        _same_error(lambda: case(wgrad, w), lambda: case(torch, t))


def test_setattr_rules():
    m = wgrad.nn.Module()
    m.sub = wgrad.nn.Linear(1, 1)
    m.p = wgrad.nn.Parameter(wgrad.ones(1))
    m.b = wgrad.nn.Buffer(wgrad.ones(1), persistent=False)
    assert list(m._modules) == ["sub"] and list(m._parameters) == ["p"]
    assert list(m._buffers) == ["b"] and list(m.state_dict()) == ["p", "sub.weight", "sub.bias"]
    m.p = None
    m.sub = None
    assert m.p is None and m.sub is None
    m.b = wgrad.zeros(2)  # stays a (non-persistent) buffer
    assert "b" in m._buffers and "b" not in m.state_dict()
    del m.b, m.p, m.sub
    assert not m._buffers and not m._parameters and not m._modules
    with pytest.raises(AttributeError, match="'Module' object has no attribute 'b'"):
        m.b
    m.sub = wgrad.nn.Linear(1, 1)
    m.sub = wgrad.nn.Parameter(wgrad.ones(1))  # replaces the module
    assert "sub" not in m._modules and "sub" in m._parameters


# -- state dicts -------------------------------------------------------------------------

def test_state_dict_round_trip_to_torch():
    w, t = _net(wgrad), _net(torch)
    t.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in w.state_dict().items()})
    w2 = _net(wgrad)
    res = w2.load_state_dict({k: wgrad.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert repr(res) == "<All keys matched successfully>"
    for (n, a), (_, b) in zip(w.state_dict().items(), w2.state_dict().items()):
        np.testing.assert_array_equal(_np(a), _np(b), err_msg=n)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(_np(w(wgrad.tensor(x))), _np(t(torch.tensor(x))), rtol=1e-6,
                               atol=1e-6)  # float32 sums: an entry near 0 has no relative digits


def test_load_state_dict_keeps_parameter_identity():
    m = wgrad.nn.Linear(2, 2)
    w = m.weight
    m.load_state_dict({"weight": wgrad.ones(2, 2), "bias": wgrad.zeros(2)})
    assert m.weight is w and m.weight.requires_grad
    np.testing.assert_array_equal(_np(w), np.ones((2, 2)))
    m.load_state_dict({"weight": wgrad.zeros(2, 2), "bias": wgrad.zeros(2)}, assign=True)
    assert m.weight is not w and isinstance(m.weight, wgrad.nn.Parameter)


@pytest.mark.parametrize("sd,strict", [
    ({"weight": np.ones((2, 2)), "bias": np.ones(3), "x": np.ones(1)}, True),
    ({"weight": np.ones((2, 2))}, True),
    ({"weight": np.ones((3, 2)), "x": np.ones(1)}, True),
    ({"weight": 1, "bias": np.ones(3)}, True),
    ({"weight": np.ones((2, 2)), "x": np.ones(1)}, False),
    ("list", True),
])
def test_load_state_dict_messages(sd, strict):
    def conv(L):
        if sd == "list":
            return [1]
        return {k: L.tensor(v, dtype=L.float32) if isinstance(v, np.ndarray) else v
                for k, v in sd.items()}
    w, t = wgrad.nn.Linear(2, 3), torch.nn.Linear(2, 3)
    _same_error(lambda: w.load_state_dict(conv(wgrad), strict=strict),
                lambda: t.load_state_dict(conv(torch), strict=strict))


def test_load_state_dict_non_strict_result():
    w, t = _net(wgrad), _net(torch)
    sd = {"scale": np.ones(2), "junk.a": np.ones(1), "body.0.weight": np.ones((4, 3))}
    rw = w.load_state_dict({k: wgrad.tensor(v, dtype=wgrad.float32) for k, v in sd.items()},
                           strict=False)
    rt = t.load_state_dict({k: torch.tensor(v, dtype=torch.float32) for k, v in sd.items()},
                           strict=False)
    assert rw.missing_keys == rt.missing_keys and rw.unexpected_keys == rt.unexpected_keys
    assert repr(rw) == repr(rt)


# -- modes and conversion ------------------------------------------------------------------

def test_train_eval_zero_grad_requires_grad_apply():
    m = _net(wgrad)
    assert m.training and m.bn.training
    m.eval()
    assert not m.training and not m.bn.training and not m.body[2][0].training
    m.train()
    assert m.body[2][0].training
    m(wgrad.ones(2, 3)).sum().backward()
    assert m.scale.grad is not None
    m.zero_grad(set_to_none=False)
    np.testing.assert_array_equal(_np(m.scale.grad), [0.0, 0.0])
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    seen = []
    m.apply(lambda mod: seen.append(type(mod).__name__))
    assert seen[-1] == "Net" and seen[0] == "Linear"


def test_to_keeps_parameter_identity():
    m = wgrad.nn.Linear(2, 2)
    m.register_buffer("steps", wgrad.tensor(3))
    w = m.weight
    m(wgrad.ones(1, 2)).sum().backward()
    assert m.double() is m
    assert m.weight is w and w.dtype is wgrad.float64 and w.grad.dtype is wgrad.float64
    assert m.steps.dtype is wgrad.int64
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # complex modules are first-class: no torch warning
        m.to(wgrad.cfloat)
    assert m.weight is w and w.dtype is wgrad.complex64 and m.steps.dtype is wgrad.int64
    m.float()  # torch: float() leaves complex tensors alone
    assert w.dtype is wgrad.complex64
    m.cdouble()
    assert w.dtype is wgrad.complex128 and w.requires_grad and w.is_leaf
    m2 = wgrad.nn.Linear(2, 2).cfloat()
    assert m2.weight.dtype is wgrad.complex64
    assert m2.to("cpu", dtype=wgrad.complex128).bias.dtype is wgrad.complex128
    out = m2(wgrad.ones(1, 2, dtype=wgrad.complex128))
    out.abs().sum().backward()
    assert m2.weight.grad.dtype is wgrad.complex128


# -- hooks -------------------------------------------------------------------------------

@LIBS
def test_forward_hooks(L):
    m = L.nn.Linear(2, 2)
    calls = []
    h1 = m.register_forward_pre_hook(lambda mod, args: (args[0] * 2,))
    h2 = m.register_forward_hook(lambda mod, args, out: calls.append("post") or out + 1)
    m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, kwargs), with_kwargs=True)
    x = L.ones(1, 2)
    with L.no_grad():
        ref = L.nn.functional.linear(x * 2, m.weight, m.bias) + 1
        out = m(x)
    assert calls == ["first", "post"]
    np.testing.assert_allclose(_np(out), _np(ref))
    h1.remove()
    h2.remove()
    with L.no_grad():
        np.testing.assert_allclose(_np(m(x)), _np(L.nn.functional.linear(x, m.weight,
                                                                            m.bias)))


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("input_grad", [True, False])
def test_full_backward_hook_matches_torch(dtype, input_grad):
    rng = np.random.default_rng(3)
    a = rng.standard_normal((3, 2)) + (1j * rng.standard_normal((3, 2))
                                       if dtype == "complex128" else 0)
    g = rng.standard_normal((3, 4)) + (1j * rng.standard_normal((3, 4))
                                       if dtype == "complex128" else 0)
    results = {}
    for L in (wgrad, torch):
        m = L.nn.Linear(2, 4, dtype=getattr(L, dtype))
        with L.no_grad():
            m.weight.copy_(L.tensor(np.arange(8).reshape(4, 2) / 7, dtype=getattr(L, dtype)))
        seen = []

        def hook(mod, gin, gout):
            seen.append(("full", [None if t is None else _np(t) for t in gin],
                         [_np(t) for t in gout]))
            if gin[0] is not None:
                return (gin[0] * 2,)

        def pre(mod, gout):
            seen.append(("pre", [_np(t) for t in gout]))
        m.register_full_backward_hook(hook)
        m.register_full_backward_pre_hook(pre)
        x = L.tensor(a, dtype=getattr(L, dtype), requires_grad=input_grad)
        out = m(x)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out.backward(L.tensor(g, dtype=getattr(L, dtype)))
        assert any("Full backward hook is firing" in str(c.message) for c in caught) == \
            (not input_grad)
        results[L.__name__] = (seen, None if x.grad is None else _np(x.grad),
                               _np(m.weight.grad))
    (sw, xw, ww), (st, xt, wt) = results["wgrad"], results["torch"]
    assert [s[0] for s in sw] == [s[0] for s in st]
    for a_, b_ in zip(sw, st):
        for u, v in zip(a_[1:], b_[1:]):
            for p, q in zip(u, v):
                assert (p is None) == (q is None)
                if p is not None:
                    np.testing.assert_allclose(p, q, rtol=1e-12)
    assert (xw is None) == (xt is None)
    if xw is not None:
        np.testing.assert_allclose(xw, xt, rtol=1e-12)
    np.testing.assert_allclose(ww, wt, rtol=1e-12)


def test_backward_hook_packing_matches_torch():
    """grad_input: zeros for tensor inputs without a gradient, None for other arguments;
    grad_output: None for outputs that do not require grad."""
    logs = []
    for L in (wgrad, torch):
        class M(L.nn.Module):
            def forward(self, x, y, z, w, k=2):
                return x * k, L.ones(2), 3, (x * 0).detach()

        def fmt(gs):
            return [None if g is None else np.asarray(g.detach()).tolist() for g in gs]
        m, log = M(), []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((fmt(gi), fmt(go))))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", fmt(go))))
        x, y = L.ones(2, requires_grad=True), L.ones(2, requires_grad=True)
        m(x, y, L.ones(3), 5, k=3)[0].sum().backward()
        logs.append(log)
    assert logs[0] == logs[1]


# -- containers --------------------------------------------------------------------------

def test_container_reprs_match_torch(on_the_cpu):
    def build(L):
        return [
            L.nn.ModuleList([L.nn.ReLU(), L.nn.ReLU(), L.nn.Linear(1, 1), L.nn.Linear(1, 1),
                             L.nn.Linear(1, 1), L.nn.Tanh()]),
            L.nn.ModuleList(),
            L.nn.Sequential(),
            L.nn.Sequential(OrderedDict([("a", L.nn.ReLU()), ("b", L.nn.Tanh())])),
            L.nn.ModuleDict({"b": L.nn.ReLU(), "a": L.nn.Flatten()}),
            L.nn.ParameterList(),
            L.nn.ParameterDict({"b": L.ones(3), "a": L.nn.Parameter(L.ones(2))}),
        ]
    for w, t in zip(build(wgrad), build(torch)):
        assert repr(w) == repr(t)


@LIBS
def test_sequential_ops(L):
    s = L.nn.Sequential(L.nn.ReLU(), L.nn.Tanh(), L.nn.Sigmoid())
    assert len(s) == 3 and isinstance(s[-1], L.nn.Sigmoid)
    sl = s[1:]
    assert type(sl) is L.nn.Sequential and list(sl._modules) == ["1", "2"]
    assert [type(m).__name__ for m in s] == ["ReLU", "Tanh", "Sigmoid"]
    del s[0]
    assert list(s._modules) == ["0", "1"]
    s.insert(0, L.nn.ELU())
    s.append(L.nn.ReLU())
    s.extend([L.nn.Identity()])
    assert [type(m).__name__ for m in s] == ["ELU", "Tanh", "Sigmoid", "ReLU", "Identity"]
    s[1] = L.nn.Softplus()
    assert isinstance(s[1], L.nn.Softplus)
    with pytest.raises(IndexError, match="index 9 is out of range"):
        s[9]
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        s.append(3)
    x = L.tensor([[-1.0, 0.5]])
    ref = x
    for m in s:
        ref = m(ref)
    np.testing.assert_allclose(_np(s(x)), _np(ref))


@LIBS
def test_list_and_dict_containers(L):
    ml = L.nn.ModuleList([L.nn.ReLU()])
    ml += [L.nn.Tanh()]
    ml.insert(1, L.nn.ELU())
    assert [type(m).__name__ for m in ml] == ["ReLU", "ELU", "Tanh"]
    assert type(ml[1:]) is L.nn.ModuleList and len(ml[1:]) == 2
    del ml[0]
    assert list(ml._modules) == ["0", "1"]
    with pytest.raises(IndexError, match="index 5 is out of range"):
        ml[5]
    md = L.nn.ModuleDict({"a": L.nn.ReLU()})
    md["b"] = L.nn.Tanh()
    assert list(md.keys()) == ["a", "b"] and "a" in md and len(md) == 2
    assert isinstance(md.pop("a"), L.nn.ReLU) and list(md) == ["b"]
    pl = L.nn.ParameterList([L.ones(2)])
    pl.append(L.nn.Parameter(L.zeros(1), requires_grad=False))
    assert type(pl[0]) is L.nn.Parameter and pl[0].requires_grad and not pl[1].requires_grad
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pd = L.nn.ParameterDict({"x": L.ones(2)})
    pd["y"] = L.zeros(1)
    assert type(pd["x"]) is L.nn.Parameter and list(pd.keys()) == ["x", "y"]
    assert [n for n, _ in pd.named_parameters()] == ["x", "y"]


def test_buffer_class():
    for L in (wgrad, torch):
        m = L.nn.Module()
        m.a = L.nn.Buffer(L.ones(2))
        m.b = L.nn.Buffer(L.ones(1), persistent=False)
        assert list(m.state_dict()) == ["a"] and [n for n, _ in m.named_buffers()] == ["a",
                                                                                      "b"]
        assert not isinstance(L.ones(1), L.nn.Buffer)


def test_no_warnings_on_plain_call():
    m = wgrad.nn.Sequential(wgrad.nn.Linear(2, 2), wgrad.nn.ReLU())
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        m(wgrad.ones(1, 2)).sum().backward()
