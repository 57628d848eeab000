"""Names and legacy surfaces as torch has them: node types (``MulBackward0``), graph
descriptions, ``Variable``, ``InplaceFunction``, once_differentiable's ``Error`` node,
and ``allow_mutation_on_saved_tensors``."""
import copy
import warnings

import numpy as np
import pytest

import wgrad
from wgrad.autograd import Variable
from wgrad.autograd.function import InplaceFunction, once_differentiable

torch = pytest.importorskip("torch")


def graph_desc(fn):
    """The next_functions tree as type names (what torch's tests compare)."""
    if fn is None:
        return "None"
    inner = ", ".join(graph_desc(f) for f, _ in fn.next_functions)
    return f"{type(fn).__name__}({inner})"


def _custom_function_graph(lib, once):
    class MyFunction(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t1, pyscalar, t2):
            ctx.pyscalar = pyscalar
            ctx.save_for_backward(t1, t2)
            return t1 + pyscalar * t2 + t1 * t2

        @staticmethod
        def backward(ctx, g):
            v1, v2 = ctx.saved_tensors
            return g + g * v2, None, g * ctx.pyscalar + g * v1
    if once:
        MyFunction.backward = staticmethod(once_differentiable(MyFunction.backward)) \
            if lib is wgrad else staticmethod(
                torch.autograd.function.once_differentiable(MyFunction.backward))
    x = lib.randn(3, 3, requires_grad=True)
    y = lib.randn(3, 3, requires_grad=True)
    go = lib.ones((), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch: create_graph backward makes a cycle
        MyFunction.apply(x, 2, y).sum().backward(go, create_graph=True)
    return graph_desc(x.grad.grad_fn), graph_desc(y.grad.grad_fn)


@pytest.mark.parametrize("once", [False, True])
def test_graph_description_matches_torch(once):
    assert _custom_function_graph(wgrad, once) == _custom_function_graph(torch, once)


@pytest.mark.parametrize("op", [
    lambda lib, x: x * 2, lambda lib, x: x.sum(), lambda lib, x: x.exp(),
    lambda lib, x: x.view(4),
    lambda lib, x: x.pow(2), lambda lib, x: x @ x,
])
def test_node_type_names_and_reprs(op):
    nodes = []
    for lib in (wgrad, torch):
        y = op(lib, lib.ones(2, 2, requires_grad=True))
        fn = y.grad_fn
        nodes.append((type(fn).__name__, fn.name(), repr(fn).split(" object")[0]))
        assert isinstance(fn, lib.autograd.graph.Node)
    assert nodes[0] == nodes[1]


def _edges_desc(fn):
    """next_functions as names, edges to nothing kept (NOTE [Node edges])."""
    if fn is None:
        return None
    return (fn.name().replace("torch::autograd::", ""),
            tuple(_edges_desc(f) for f, _ in fn.next_functions))


# torch's node per ATen overload: its name and one edge per differentiable tensor argument
_GRAPHS = {
    "radd": lambda L, x, y: 1 + x, "rmul": lambda L, x, y: 2 * x,
    "rsub": lambda L, x, y: 2 - x, "rsub_tensors": lambda L, x, y: L.rsub(x, y, alpha=2),
    "rpow": lambda L, x, y: 2 ** x, "pow_scalar": lambda L, x, y: x.pow(2.5),
    "pow_tensor": lambda L, x, y: x ** y, "clamp": lambda L, x, y: x.clamp(0, 1),
    "clamp_min": lambda L, x, y: x.clamp(min=0.5),
    "clamp_tensor": lambda L, x, y: x.clamp(max=y[0]),
    "clamp_min_method": lambda L, x, y: x.clamp_min(0.5),
    "clamp_max_tensor": lambda L, x, y: L.clamp_max(x, y),
    "where": lambda L, x, y: L.where(x > 0, x, y), "where_number": lambda L, x, y: L.where(
        x > 0, x, 0.0),
    "masked_fill": lambda L, x, y: x.masked_fill(x > 0, 0.0),
    "masked_fill_tensor": lambda L, x, y: x.masked_fill(x > 0, y.sum()),
    "select": lambda L, x, y: x[0], "index": lambda L, x, y: x[[0, 2]],
    "slice_expand": lambda L, x, y: x[:1].expand(3, 2),
    "sum_dim": lambda L, x, y: x.sum(0), "sum_dims": lambda L, x, y: x.sum((0, 1)),
    "sum": lambda L, x, y: x.sum(), "mean_dim": lambda L, x, y: x.mean(0, keepdim=True),
    "prod_dim": lambda L, x, y: x.prod(1), "prod": lambda L, x, y: x.prod(),
    "t": lambda L, x, y: x.t(), "transpose": lambda L, x, y: x.transpose(0, 1),
    "mT": lambda L, x, y: x.mT, "T": lambda L, x, y: x.T, "mm": lambda L, x, y: x @ y.t(),
    "unsqueeze": lambda L, x, y: x.unsqueeze(0),
    "squeeze_dim": lambda L, x, y: x.unsqueeze(0).squeeze(0),
    "squeeze": lambda L, x, y: x.unsqueeze(0).squeeze(),
    "squeeze_dims": lambda L, x, y: x.unsqueeze(0).squeeze((0,)),
    "log1p": lambda L, x, y: y.log1p(), "deg2rad": lambda L, x, y: x.deg2rad(),
    "addmm": lambda L, x, y: L.addmm(x[:, :1], x, y.t()),
    "linear": lambda L, x, y: L.nn.functional.linear(x, y, y[:, 0]),
    "lerp": lambda L, x, y: L.lerp(x, y, 0.3), "lerp_tensor": lambda L, x, y: L.lerp(x, y, y),
    "addcmul": lambda L, x, y: L.addcmul(x, x, y, value=0.5),
    "addcdiv": lambda L, x, y: L.addcdiv(x, x, y),
    "dot": lambda L, x, y: L.dot(x[0], y[1]), "vdot": lambda L, x, y: L.vdot(x[0], y[1]),
    "trace": lambda L, x, y: x.trace(), "outer": lambda L, x, y: L.outer(x[0], y[0]),
    "mse": lambda L, x, y: L.nn.functional.mse_loss(x, y),
    "mse_none": lambda L, x, y: L.nn.functional.mse_loss(x, y.detach(), reduction="none"),
    "stack": lambda L, x, y: L.stack([x, y], 1),
    **{name: (lambda L, x, y, name=name, kw=kw: getattr(L.nn.functional, name)(x, **kw))
       for name, kw in (("gelu", {}), ("silu", {}), ("mish", {}), ("elu", {"alpha": 0.5}),
                        ("selu", {}), ("celu", {}), ("leaky_relu", {}), ("hardtanh", {}),
                        ("relu6", {}))},
    "gelu_tanh": lambda L, x, y: L.nn.functional.gelu(x, approximate="tanh"),
    "hardswish": lambda L, x, y: L.nn.functional.hardswish(x),
    "hardsigmoid": lambda L, x, y: L.nn.functional.hardsigmoid(x),
    "logsigmoid": lambda L, x, y: L.nn.functional.logsigmoid(x),
    "glu": lambda L, x, y: L.nn.functional.glu(x, 1),
    "bce_logits": lambda L, x, y: L.nn.functional.binary_cross_entropy_with_logits(
        x, y.detach().sigmoid()),
    "bce": lambda L, x, y: L.nn.functional.binary_cross_entropy(x.sigmoid(), y.sigmoid()),
    "smooth_l1": lambda L, x, y: L.nn.functional.smooth_l1_loss(x, y, reduction="sum"),
    "huber": lambda L, x, y: L.nn.functional.huber_loss(x, y.detach()),
    "layer_norm": lambda L, x, y: L.nn.functional.layer_norm(x, (2,)),
    "layer_norm_affine": lambda L, x, y: L.nn.functional.layer_norm(x, (2,), y[0], y[1]),
}


@pytest.mark.parametrize("lazy", [False, True])
def test_graphs_have_torchs_nodes_and_edges(lazy):
    got = {}
    for lib in (wgrad, torch):
        with (wgrad.lazy() if lazy and lib is wgrad else wgrad.lazy(False)):
            x = lib.tensor(np.arange(6.0).reshape(3, 2) - 2.5, requires_grad=True)
            y = lib.tensor(np.arange(6.0).reshape(3, 2) * 0.5 + 0.1, requires_grad=True)
            got[lib] = {k: _edges_desc(f(lib, x, y).grad_fn) for k, f in _GRAPHS.items()}
    assert got[wgrad] == got[torch]


def test_hooks_see_one_gradient_per_edge():
    seen = {}
    for lib in (wgrad, torch):
        x = lib.tensor([0.5, 2.0], requires_grad=True)
        out = []
        for y in (x ** 3, 2 - x, x.clamp(0, 1), x[1], 2 * x):
            y.grad_fn.register_hook(lambda gi, go, out=out: out.append(
                [None if g is None else g.tolist() for g in gi]))
            y.sum().backward()
        seen[lib] = out, x.grad.tolist()
    assert seen[wgrad] == seen[torch]


def test_node_classes_are_shared_per_name():
    x = wgrad.ones(2, requires_grad=True)
    assert type((x * 2).grad_fn) is type((x * x).grad_fn)
    assert type((x * 2).grad_fn) is not type((x + 2).grad_fn)


def test_variable_is_a_deprecated_tensor_alias():
    for lib in (wgrad, torch):
        V = lib.autograd.Variable
        x = lib.ones(3, requires_grad=True)
        y = x * 2
        v = V(y)
        assert type(v) is lib.Tensor and isinstance(v, V) and isinstance(lib.ones(1), V)
        assert not v.requires_grad and v.grad_fn is None and v is not y
        w = V(y, requires_grad=True)
        assert w.requires_grad and w.is_leaf
        t = lib.ones(2)
        V(t).add_(1)  # shares data and version counter
        assert t._version == 1 and t.tolist() == [2.0, 2.0]
        assert tuple(V().shape) == (0,)
        assert not isinstance(3, V)
    with pytest.raises(TypeError, match="Variable data has to be a tensor, but got int"):
        Variable(3)
    with pytest.warns(UserWarning, match="volatile was removed"):
        Variable(wgrad.ones(1), volatile=True)


def test_inplace_function():
    assert InplaceFunction(inplace=True).inplace and not InplaceFunction().inplace
    for lib in (wgrad, torch):
        with pytest.raises(RuntimeError):  # no forward: torch's NotImplementedError
            lib.autograd.function.InplaceFunction.apply(lib.ones(2, requires_grad=True))

        class Inplace(lib.autograd.function.InplaceFunction):
            @staticmethod
            def forward(ctx, a, b):
                ctx.mark_dirty(a)
                return a.add_(b), b + 2

            @staticmethod
            def backward(ctx, ga, gb):
                return ga, ga + gb
        x, y = lib.randn(2), lib.randn(2, requires_grad=True)
        q, _ = Inplace.apply(x, y)
        assert q is x and type(q.grad_fn) is Inplace._backward_cls
        q.sum().backward()
        assert y.grad.tolist() == [1.0, 1.0]


def _mutation_counts(lib):
    G = lib.autograd.graph
    seen = []
    with G.allow_mutation_on_saved_tensors() as ctx:
        a = lib.randn(2, 3, requires_grad=True).clone()
        b = a ** 2
        c = a ** 2  # the same tensor at the same version: one handle
        seen.append(len(ctx.tid_to_weakhandle))
        a.sin_()
        seen.append(len(ctx.cloned))
        d = a ** 2
        a.sin_()
        seen.append(len(ctx.cloned))
        del b, c
        seen.append(len(ctx.cloned))
        del d
        seen.append(len(ctx.cloned))
    return seen


def test_allow_mutation_bookkeeping_matches_torch():
    assert _mutation_counts(wgrad) == _mutation_counts(torch)


@pytest.mark.parametrize("lib", [wgrad, torch])
def test_allow_mutation_backward_sees_saved_values(lib):
    G = lib.autograd.graph
    a = lib.tensor([0.5, 1.0, 2.0], dtype=lib.float64, requires_grad=True)

    def fn():
        b = a.clone()
        c = b[:2]
        out = (b ** 2).sum() + (b.exp() * 1).sum()
        c.mul_(10)  # through a view
        b.sin_()
        da, = lib.autograd.grad(out, a, create_graph=True)
        d2a, = lib.autograd.grad(da.sum(), a)
        return da, d2a
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        fn()
    with G.allow_mutation_on_saved_tensors() as ctx:
        da, d2a = fn()
        assert len(ctx.cloned) == 0
    assert lib.allclose(da, 2 * a + a.exp()) and lib.allclose(d2a, 2 + a.exp())


def test_allow_mutation_errors_match_torch():
    msgs = []
    for lib in (wgrad, torch):
        G = lib.autograd.graph
        with G.allow_mutation_on_saved_tensors():
            a = lib.ones(2, requires_grad=True)
            out = (a ** 2).sum()
        with pytest.raises(AssertionError) as e1:
            out.backward()
        with G.allow_mutation_on_saved_tensors():
            with pytest.raises(AssertionError) as e2:
                out.backward()
            with pytest.raises(RuntimeError) as e3:
                with G.allow_mutation_on_saved_tensors():
                    pass
        msgs.append((str(e1.value), str(e2.value), str(e3.value)))
    assert msgs[0] == msgs[1]


# -- torch's errors and warnings for API misuse ----------------------------------------

def _raised(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e)
    return None


def _misuse(lib, case):
    x = lib.ones(1, dtype=lib.float64, requires_grad=True)
    if case == "post_acc_hook_returns":
        x.register_post_accumulate_grad_hook(lambda t: t.grad)
        return lambda: x.sum().backward()
    if case == "grad_empty_inputs":
        return lambda: lib.autograd.grad(2 * x, [], grad_outputs=lib.ones(1))
    if case in ("node_too_many", "node_too_few"):
        y = x ** 2
        return (lambda: y.grad_fn(x.detach(), x.detach())) if case == "node_too_many" \
            else (lambda: y.grad_fn())

    class Both(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            return t.clone()

        @staticmethod
        def backward(ctx, g):
            return g

        @staticmethod
        def vjp(ctx, g):
            return g
    return lambda: Both.apply(x).sum().backward()


@pytest.mark.parametrize("case", ["post_acc_hook_returns", "grad_empty_inputs",
                                  "node_too_many", "node_too_few", "backward_and_vjp"])
def test_misuse_errors_match_torch(case):
    got, want = _raised(_misuse(wgrad, case)), _raised(_misuse(torch, case))
    assert got == want and got is not None


@pytest.mark.parametrize("lib", [wgrad, torch])
def test_vjp_only_function_and_saved_variables_warning(lib):
    class Triple(lib.autograd.Function):
        @staticmethod
        def forward(ctx, t):
            ctx.save_for_backward(t)
            return t.clone()

        @staticmethod
        def vjp(ctx, g):
            ctx.saved_variables
            return g * 3
    x = lib.ones(2, requires_grad=True)
    with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated; use "
                                                "'saved_tensors'"):
        Triple.apply(x).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0]


@pytest.mark.parametrize("create_graph", [False, True])
def test_materialized_grads_require_grad_under_create_graph(create_graph):
    flags = []
    for lib in (wgrad, torch):
        x, b = lib.tensor(0.5, requires_grad=True), lib.tensor(0.5, requires_grad=True)
        g = lib.autograd.grad(b * 2, (x, b), materialize_grads=True,
                              create_graph=create_graph)[0]
        flags.append((g.item(), g.requires_grad))
    assert flags[0] == flags[1]


def test_failed_backward_frees_its_graph_without_gc():
    import gc
    import weakref

    def run():
        x = wgrad.ones(2, requires_grad=True)
        y = x.exp()
        y.register_hook(lambda g: 1 / 0)
        z = (y * 2).sum()
        ref = weakref.ref(z.grad_fn)
        with pytest.raises(ZeroDivisionError):
            z.backward()
        return ref
    gc.disable()
    try:
        assert run()() is None
    finally:
        gc.enable()


def _callback_counts(lib, depths):
    """Final callbacks queued at reentrant depth 0 and/or 1 (torch's test pattern)."""
    once = lib.autograd.function.once_differentiable
    engine = lib.autograd.Variable._execution_engine
    counts = {"outer": 0, "inner": 0, "chained": 0}

    def bump(k):
        counts[k] += 1
        if k == "outer":  # a callback may queue another one
            engine.queue_callback(lambda: counts.__setitem__("chained", counts["chained"] + 1))

    class Inner(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            return i

        @staticmethod
        @once
        def backward(ctx, g):
            if 1 in depths:
                engine.queue_callback(lambda: bump("inner"))
            return g

    class Outer(lib.autograd.Function):
        @staticmethod
        def forward(ctx, i):
            return i

        @staticmethod
        @once
        def backward(ctx, g):
            if 0 in depths:
                engine.queue_callback(lambda: bump("outer"))
            t = g.detach().requires_grad_()
            with lib.enable_grad():
                Inner.apply(t).sum().backward()
            return g
    Outer.apply(lib.ones(2, requires_grad=True)).sum().backward()
    return counts


@pytest.mark.parametrize("depths", [(0,), (1,), (0, 1)])
def test_final_callbacks_match_torch(depths):
    assert _callback_counts(wgrad, depths) == _callback_counts(torch, depths)
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during "
                                           "backward pass."):
        Variable._execution_engine.queue_callback(lambda: None)


@pytest.mark.parametrize("materialize", [True, False])
def test_materialize_non_diff_grads_matches_torch(materialize):
    seen = []
    for lib in (wgrad, torch):
        class Func(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                o0, o1 = x.clone(), x.clone()
                ctx.mark_non_differentiable(o1)
                ctx._materialize_non_diff_grads = materialize
                return o0, o1

            @staticmethod
            def backward(ctx, g0, g1):
                seen.append(None if g1 is None else g1.tolist())
                return g0
        Func.apply(lib.tensor(1.0, requires_grad=True))[0].backward()
    assert seen[0] == seen[1] == (0.0 if materialize else None)


def test_int_dtype_alias():
    assert wgrad.int is wgrad.int32 and repr(wgrad.int) == "wgrad.int32"
    assert wgrad.zeros(2, dtype=wgrad.int).dtype == wgrad.int32


def test_backward_with_create_graph_warns_and_grad_does_not():
    x = wgrad.ones(2, dtype=wgrad.float64, requires_grad=True)
    y = x * x
    with pytest.warns(UserWarning, match="Using backward\\(\\) with create_graph=True will "
                                         "create a reference cycle"):
        y.backward(wgrad.ones_like(y), create_graph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        wgrad.autograd.grad(y, x, wgrad.ones_like(y), create_graph=True)


@pytest.mark.parametrize("lib", [wgrad, torch])
def test_decorating_a_class_is_deprecated(lib):
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        @lib.no_grad()
        class Foo:
            def __init__(self):
                self.inside = lib.is_grad_enabled()

            def method(self):
                return lib.is_grad_enabled()
    foo = Foo()
    assert (foo.inside, foo.method()) == (False, True)


def test_saved_tensor_type_is_public_but_not_constructible():
    for lib in (wgrad, torch):
        y = lib.ones(2, requires_grad=True).exp()
        assert isinstance(y.grad_fn._raw_saved_result, lib.autograd.SavedTensor)
        assert not isinstance(y, lib.autograd.SavedTensor)
        with pytest.raises(RuntimeError, match="Trying to create a SavedTensor object from "
                                               "Python is forbidden."):
            lib.autograd.SavedTensor()


def _hook_counts(lib):
    a = lib.tensor(1.0, requires_grad=True)
    b = a * 2
    c = b * 2
    cnt = {"tensor": 0, "pre": 0, "post": 0}

    def bump(k, ret=None):
        cnt[k] += 1
        return ret
    a.register_hook(lambda g: bump("tensor"))
    b.register_hook(lambda g: bump("tensor", g * 10))
    for node in (b.grad_fn, b.grad_fn.next_functions[0][0]):
        node.register_hook(lambda gi, go: bump("post"))
        node.register_prehook(lambda g: bump("pre"))
    seen = []
    for inputs in ((b,), (a, b)):
        cnt.update(tensor=0, pre=0, post=0)
        grads = lib.autograd.grad(c, inputs=inputs, retain_graph=True)
        seen.append(([g.item() for g in grads], dict(cnt)))
    return seen


def test_captured_gradients_and_hook_counts_match_torch():
    # a node that grad() both captures and runs calls its tensor hooks once
    assert _hook_counts(wgrad) == _hook_counts(torch)


def _retained_after_inplace(lib):
    out = []
    a = lib.tensor([1.0], requires_grad=True).clone()
    a.retain_grad()
    a.mul_(2)
    a.mul_(2)
    a.sum().backward()
    out.append(a.grad.tolist())
    x = lib.tensor([1.0], requires_grad=True).clone()
    x.retain_grad()
    xv = x[:]
    xv *= 2
    x *= 2
    x.sum().backward()
    out.append(x.grad.tolist())
    base = lib.tensor([1.0], requires_grad=True).clone()
    view, view2 = base[:], base[:]
    view.retain_grad()
    view2.retain_grad()
    view.mul_(2)
    (view + view2).sum().backward()
    out.append((view.grad.tolist(), view2.grad.tolist()))
    return out


def test_retain_grad_follows_inplace_history():
    assert _retained_after_inplace(wgrad) == _retained_after_inplace(torch)


def test_materialize_grads_refuses_an_unused_gradient_edge():
    msgs = []
    for lib in (wgrad, torch):
        GE = lib.autograd.graph.GradientEdge
        x = lib.rand(2, requires_grad=True).clone()
        y = lib.rand(2, requires_grad=True).clone()
        out = x.clone().sum()
        gx, gy = lib.autograd.grad(out, (GE(x.grad_fn, 0), y), retain_graph=True,
                                   allow_unused=True, materialize_grads=True)
        assert gx.tolist() == [1.0, 1.0] and gy.tolist() == [0.0, 0.0]
        with pytest.raises(RuntimeError) as e:
            lib.autograd.grad(out, (x, GE(y.grad_fn, 0)), allow_unused=True,
                              materialize_grads=True)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


def test_set_data_of_a_tensor_requiring_grad():
    msgs = []
    for lib in (wgrad, torch):
        a = lib.tensor(1.0, requires_grad=True)
        a.data = lib.tensor(2.0)
        assert a.item() == 2.0 and a.requires_grad
        with pytest.raises(RuntimeError) as e:
            a.data = lib.tensor(3, dtype=lib.int64)
        msgs.append(str(e.value))
    assert msgs[0] == msgs[1]


@pytest.mark.parametrize("stmt", ["del x.grad", "del x.data", "x.data = None",
                                  "del x.requires_grad", "del x._grad_fn",
                                  "del x._backward_hooks", "del x.foo"])
def test_attribute_deletion_matches_torch(stmt):
    outcomes = []
    for lib in (wgrad, torch):
        x = lib.ones(2, requires_grad=True)
        (x * 2).sum().backward()
        try:
            exec(stmt)
            outcomes.append(("ok", x.grad))
        except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
            outcomes.append((type(e).__name__, str(e).replace("wgrad._tensor.", "")))
    assert outcomes[0] == outcomes[1]


def _edge_grad_errors(lib):
    x = lib.tensor([1.0, 2.0], requires_grad=True)
    msgs = []
    for go, reduce in ((None, False), (None, True), (lib.ones(4), True),
                       (lib.ones((), dtype=lib.complex64), True)):
        tmp = x.sin() if not reduce else x.sin().sum()
        edge = lib.autograd.graph.get_gradient_edge(tmp)
        try:
            g, = lib.autograd.grad(edge, (x,), grad_outputs=go)
            msgs.append(g.tolist())
        except RuntimeError as e:
            msgs.append(str(e).replace("torch.", "wgrad."))
    try:
        lib.autograd.grad(x * 2, (x,), (lib.ones(2),), is_grads_batched=True)
    except RuntimeError as e:
        msgs.append(str(e).replace("torch.", "wgrad."))
    return msgs


def test_gradient_edge_outputs_and_batched_grad_errors_match_torch():
    w, t = _edge_grad_errors(wgrad), _edge_grad_errors(torch)
    assert len(w) == len(t) == 5
    for a, b in zip(w, t):
        if isinstance(b, list):
            assert a == pytest.approx(b)
        else:
            assert a == b


def test_index_backward_frees_its_indices():
    for lib in (wgrad, torch):
        b = lib.randn(3, requires_grad=True, dtype=lib.float64)
        c = lib.zeros(3, dtype=lib.float64)
        c[[1, 2]] = b[[1, 1]]
        c.backward(lib.ones(3, dtype=lib.float64))
        with pytest.raises(RuntimeError, match="Specify retain_graph=True"):
            c.backward(lib.ones(3, dtype=lib.float64))


def _stolen(lib):
    class Twice(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            return a + b

        @staticmethod
        def backward(ctx, g):
            Twice.seen = g.data_ptr()
            return g, g

    a, b = (lib.ones(2, requires_grad=True) for _ in range(2))
    Twice.apply(a, b)[1].backward()
    kept = [a.grad.data_ptr() == Twice.seen, b.grad.data_ptr() == Twice.seen]
    x, g = lib.ones(2, requires_grad=True), lib.ones(2)
    x.backward(g)
    t = lib.ones(3, requires_grad=True)

    def post(t):
        t.grad.add_(0.5)
    t.register_post_accumulate_grad_hook(post)
    t.register_hook(lambda g: g - 2)
    acc = t.view_as(t).grad_fn.next_functions[0][0]
    acc.register_hook(lambda gi, go: setattr(t, "grad", go[0] * 10))
    t.sum().backward()
    return sorted(kept), x.grad is g, t.grad.tolist()


def test_accumulate_grad_keeps_the_incoming_tensor_as_torch():
    """NOTE [Stolen gradients]."""
    assert _stolen(wgrad) == _stolen(torch)


def test_copy_into_bfloat16_records_history():
    x = wgrad.randn(3, requires_grad=True)
    for dt in (wgrad.float16, wgrad.bfloat16):
        y = wgrad.empty(3, dtype=dt)
        y.copy_(x)
        assert y.requires_grad and x.to(dt).requires_grad


def _saved_original_checks(lib):
    out = []
    a = lib.tensor(1.0, requires_grad=True).clone()
    b = a.sin()
    a.detach_()
    with pytest.raises(RuntimeError) as e:
        b.backward()
    out.append(str(e.value))
    seen = []
    x = lib.randn(2, requires_grad=True)
    with lib.autograd.graph.saved_tensors_hooks(
            lambda t: seen.append(lib.is_grad_enabled()) or t, lambda t: t):
        y = x * x

    def inplace_double(t):
        t *= 2
        return t
    with pytest.raises(RuntimeError) as e:
        (x * x).grad_fn._raw_saved_self.register_hooks(inplace_double, lambda t: t / 2)
    out.append(str(e.value))
    return out, seen, y.requires_grad


def test_saved_original_detached_in_place_and_pack_hooks_without_grad_mode():
    assert _saved_original_checks(wgrad) == _saved_original_checks(torch)


def _mark_dirty_checks(lib):
    class NotAnInput(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a):
            c = 3 * a
            c.add_(1)
            ctx.mark_dirty(c)
            return c

        @staticmethod
        def backward(ctx, g):
            return 3 * g

    class TwoOut(lib.autograd.Function):
        @staticmethod
        def forward(ctx, a, b):
            a.add_(b)
            ctx.mark_dirty(a)
            return a, a + b

        @staticmethod
        def backward(ctx, ga, gab):
            return ga + gab, ga + gab

    a, b = lib.ones(2, requires_grad=True), lib.ones(2, requires_grad=True)
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        NotAnInput.apply(a.clone())
        v = lib.autograd.torch.zeros(1).volatile
    with pytest.raises(RuntimeError) as e:
        TwoOut.apply(a.clone().view_as(a), b)
    return [str(m.message).split(" (Triggered")[0] for m in w], v, str(e.value)


def test_mark_dirty_checks_and_volatile_as_torch():
    assert _mark_dirty_checks(wgrad) == _mark_dirty_checks(torch)


def test_retained_grad_of_a_captured_input_sees_its_gradient():
    # grad(w, y) with y.retain_grad(): torch fills y.grad too, and again for later calls
    got = []
    for lib in (wgrad, torch):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = x * 2
        y.retain_grad()
        w = (y * y).sum()
        lib.autograd.grad(w, y, retain_graph=True)
        first = y.grad.tolist()
        lib.autograd.grad(w, x, retain_graph=True)
        got.append((first, y.grad.tolist()))
    assert got[0] == got[1]


def test_deepcopy_follows_torch():
    # leaves only; requires_grad and .grad (deep-copied) come along; memo keeps aliasing
    seen = {}
    for lib in (wgrad, torch):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        (x * x).sum().backward()
        c, c2 = copy.deepcopy([x, x])
        with lib.no_grad():
            c.add_(1.0)
        with pytest.raises(RuntimeError) as err:
            copy.deepcopy(x * 2)
        seen[lib] = (c is c2, c.requires_grad, c.is_leaf, c.grad is x.grad,
                     c.grad.tolist(), x.tolist(), c.tolist(), str(err.value))
    assert seen[wgrad] == seen[torch]


def test_scalar_divided_by_tensor_is_torchs_reciprocal_times_scalar():
    """torch computes ``s / x`` as ``x.reciprocal() * s``: the same bits (3 / x and
    3 * (1 / x) differ in the last place for some x) and the same graph."""
    a = np.array([3.0, 7.0, 0.3, 11.0, 13.0, 1e-3, 0.0, -2.5], np.float32)
    got = []
    for lib in (wgrad, torch):
        x = lib.tensor(a, requires_grad=True)
        y = 3 / x
        y.sum().backward()
        got.append((type(y.grad_fn).__name__, y.detach().numpy(), x.grad.numpy(),
                    (2 / lib.arange(1, 4)).dtype.is_floating_point))
    assert got[0][0] == got[1][0] == "MulBackward0" and got[0][3] and got[1][3]
    np.testing.assert_array_equal(got[0][1], got[1][1])
    np.testing.assert_array_equal(got[0][2], got[1][2])
