"""wgrad.compile: a whole step (forward, backward, .grad accumulation, update, hooks) as
one jitted computation, checked against the same step run eagerly."""
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
import wgrad.fft
from wgrad.jax._compiled_step import CompiledStep, _Spec

N = 8
_rng = np.random.default_rng(0)
X_TRUE = _rng.standard_normal((N, N)) + 1j * _rng.standard_normal((N, N))
X0 = X_TRUE + 0.3 * (_rng.standard_normal((N, N)) + 1j * _rng.standard_normal((N, N)))
FFT2 = {"wgrad.fft": wgrad.fft.fft2, "jax_function": wgrad.jax_function(jnp.fft.fft2)}


def _masks(compiled):
    return [_Spec._make(key).mask for key in compiled._cache]


def _phase_retrieval(lr=0.02, fft2=wgrad.fft.fft2):
    """x minimising sum((|fft2 x|^2 - y)^2) / N^4 by gradient descent (a complex
    parameter, a C->R loss)."""
    x = wgrad.tensor(X0, dtype=wgrad.complex128, requires_grad=True)

    def step(y):
        loss = ((fft2(x).abs() ** 2 - y) ** 2).sum() / N ** 4
        loss.backward()
        with wgrad.no_grad():
            x.data = x.data - lr * x.grad
        x.grad = None
        return loss
    return x, step


@pytest.mark.parametrize("fft", list(FFT2))
def test_phase_retrieval_compiled_equals_eager_after_10_steps(fft):
    y = wgrad.tensor(np.abs(np.fft.fft2(X_TRUE)) ** 2, dtype=wgrad.float64)
    xe, eager = _phase_retrieval(fft2=FFT2[fft])
    xc, step = _phase_retrieval(fft2=FFT2[fft])
    compiled = wgrad.compile(step)
    losses = []
    for _ in range(10):
        le = eager(y)
        lc = compiled(y)
        losses.append((le.item(), lc.item()))
    np.testing.assert_allclose(xc.detach().numpy(), xe.detach().numpy(), rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_allclose(*zip(*losses), rtol=1e-10)
    assert losses[-1][1] < losses[0][1]
    assert xc.grad is None and xc.requires_grad and xc.is_leaf
    assert isinstance(lc, wgrad.Tensor) and lc.grad_fn is None
    assert len(compiled._cache) == 1


def test_grad_accumulates_across_calls_and_hooks_run():
    def make():
        w = wgrad.tensor([1.0, -2.0], dtype=wgrad.float64, requires_grad=True)
        w.register_hook(lambda g: g * 3)
        seen = []
        w.register_post_accumulate_grad_hook(lambda p: seen.append(1))

        def step(x):
            loss = (w * w * x).sum()
            loss.backward()
            return loss
        return w, step, seen
    we, eager, _ = make()
    wc, step, seen = make()
    compiled = wgrad.compile(step)
    x = wgrad.tensor([0.5, 2.0], dtype=wgrad.float64)
    for _ in range(3):
        eager(x)
        compiled(x)
    expected = 3 * 3 * 2 * np.array([1.0, -2.0]) * np.array([0.5, 2.0])
    np.testing.assert_allclose(we.grad.numpy(), expected)
    np.testing.assert_allclose(wc.grad.numpy(), expected)
    assert seen == [1, 1]  # Python side effects run only while tracing (two traces:
    # the first call had no .grad yet, the next ones carry it as an input)


class _Momentum:
    """A tiny optimizer whose state is created lazily on its first step."""

    def __init__(self, params, lr=0.1, beta=0.9):
        self.params, self.lr, self.beta, self.state = list(params), lr, beta, {}

    def step(self):
        with wgrad.no_grad():
            for p in self.params:
                buf = self.state.get("buf" + str(id(p)))
                if buf is None:
                    buf = self.state["buf" + str(id(p))] = p.grad.clone()
                else:
                    buf.data = buf.data * self.beta + p.grad
                p.data = p.data - self.lr * buf

    def zero_grad(self):
        for p in self.params:
            p.grad = None


def test_optimizer_state_created_while_tracing_is_written_back():
    def make():
        w = wgrad.tensor([[0.5, -1.0], [2.0, 0.1]], dtype=wgrad.float64, requires_grad=True)
        opt = _Momentum([w])

        def step(a, b):
            opt.zero_grad()
            loss = ((w @ a - b) ** 2).sum()
            loss.backward()
            opt.step()
            return loss
        return w, opt, step
    a = wgrad.tensor([1.0, 2.0], dtype=wgrad.float64)
    b = wgrad.tensor([0.0, 1.0], dtype=wgrad.float64)
    we, opt_e, eager = make()
    wc, opt_c, step = make()
    compiled = wgrad.compile(step)
    for _ in range(4):
        eager(a, b)
        compiled(a, b)
    np.testing.assert_allclose(wc.detach().numpy(), we.detach().numpy(), rtol=1e-12)
    (buf_c,), (buf_e,) = opt_c.state.values(), opt_e.state.values()
    assert buf_c.grad_fn is None
    np.testing.assert_allclose(buf_c.numpy(), buf_e.numpy(), rtol=1e-12)


def test_retraces_on_shape_and_dtype_change_and_static_args():
    traces = []
    w = wgrad.tensor(2.0, dtype=wgrad.float64, requires_grad=True)

    def step(x, power):
        traces.append((tuple(x.shape), x.dtype, power))
        loss = ((w * x) ** power).sum()
        loss.backward()
        with wgrad.no_grad():
            w.data = w.data - 0.01 * w.grad
        w.grad = None
        return loss
    compiled = wgrad.compile(step, static_argnums=1)
    x3 = wgrad.tensor([1.0, 2.0, 3.0], dtype=wgrad.float64)
    assert compiled(x3, 2).item() == pytest.approx(4 * 14)
    compiled(wgrad.tensor([3.0, 2.0, 1.0], dtype=wgrad.float64), 2)
    assert len(traces) == 1
    out = compiled(wgrad.tensor([1.0, 1.0], dtype=wgrad.float64), 2)
    assert len(traces) == 2 and out.shape == ()
    compiled(wgrad.tensor([1.0, 1.0], dtype=wgrad.float32), 2)
    assert len(traces) == 3 and traces[-1][1] is wgrad.float32
    compiled(x3, 3)
    assert len(traces) == 4 and traces[-1][2] == 3
    # w took five gradient steps, each computed from its current value
    expected = 2.0
    for x, p in (([1, 2, 3], 2), ([3, 2, 1], 2), ([1, 1], 2), ([1, 1], 2), ([1, 2, 3], 3)):
        expected -= 0.01 * sum(p * expected ** (p - 1) * xi ** p for xi in x)
    assert w.item() == pytest.approx(expected, rel=1e-6)


def test_capture_and_buffers_referenced_elsewhere_are_not_donated():
    w = wgrad.tensor([1.0, 2.0], dtype=wgrad.float64, requires_grad=True)
    params = {"w": w}

    def loss_and_update(p):
        loss = (p["w"] ** 2).sum()
        loss.backward()
        with wgrad.no_grad():
            p["w"].data = p["w"].data * 0.5
        p["w"].grad = None
        return loss
    step = wgrad.compile(lambda: loss_and_update(params), capture=params)
    held = w.jax()  # a second reference: this buffer must survive the call
    assert step().item() == 5.0
    np.testing.assert_array_equal(np.asarray(held), [1.0, 2.0])
    del held
    assert _masks(step) == [(False,)]
    # now w's buffer has one owner and is donated (reading it through numpy would make
    # a second, cached reference, so we read it only afterwards)
    assert step().item() == 1.25
    assert (True,) in _masks(step)
    np.testing.assert_array_equal(w.detach().numpy(), [0.25, 0.5])


def test_python_control_flow_on_traced_values_gets_a_clear_error():
    w = wgrad.tensor([1.0, -1.0], dtype=wgrad.float64, requires_grad=True)

    def step(x):
        loss = (w * x).sum()
        if loss > 0:
            loss = loss * 2
        return loss
    compiled = wgrad.compile(step)
    x = wgrad.tensor([3.0, 1.0], dtype=wgrad.float64)
    with pytest.raises(RuntimeError, match=r"used the value of a traced tensor in Python "
                                           r"\(TracerBoolConversionError\).*wgrad.where.*"
                                           r"static_argnums"):
        compiled(x)
    with pytest.raises(RuntimeError, match="used the value of a traced tensor"):
        wgrad.compile(lambda x: (w * x).sum().item())(x)
    # the tensors were restored: no tracer leaked into w
    np.testing.assert_array_equal(w.detach().numpy(), [1.0, -1.0])
    assert step(x).item() == 4.0


def test_in_place_update_and_grad_zero_match_eager():
    def make():
        params = [wgrad.tensor([1.0, 2.0], dtype=wgrad.float64, requires_grad=True),
                  wgrad.tensor([0.5 - 1j, 2j], dtype=wgrad.complex128, requires_grad=True)]

        def step(x):
            loss = (params[0] ** 2 * x).sum() + (params[1].abs() ** 2 * x).sum()
            loss.backward()
            with wgrad.no_grad():
                for p in params:
                    p -= 0.1 * p.grad
            for p in params:
                p.grad.zero_()
            return loss
        return params, step
    pe, eager = make()
    pc, step = make()
    compiled = wgrad.compile(step)
    x = wgrad.tensor([1.0, 3.0], dtype=wgrad.float64)
    for i in range(4):
        if i == 2:
            grads = [p.grad for p in pc]
        assert compiled(x).item() == pytest.approx(eager(x).item(), rel=1e-12)
    for a, b in zip(pc, pe):
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-12)
        np.testing.assert_array_equal(a.grad.numpy(), np.zeros(2))
        assert a.is_leaf and a.requires_grad
    # .grad stays the same Tensor object across calls, as in eager accumulation
    assert all(p.grad is g for p, g in zip(pc, grads))
    assert len(compiled._cache) == 2  # the first call had no .grad yet


_GLOBAL_W = wgrad.tensor([1.0, 1.0], dtype=wgrad.float64, requires_grad=True)


class _Model:
    def __init__(self):
        self.w = wgrad.tensor([2.0, 0.5], dtype=wgrad.float64, requires_grad=True)


def test_captured_objects_rebound_between_calls_are_seen():
    """Discovery is cached and re-checked by identity: a closure cell, a global, a
    list and an object attribute rebound between calls reach the next call."""
    global _GLOBAL_W
    extra = []
    model = _Model()
    w = wgrad.tensor([1.0, 2.0], dtype=wgrad.float64, requires_grad=True)

    def loss_of(x):
        loss = (w * x).sum() + (_GLOBAL_W * x).sum() + (model.w * x).sum()
        for e in extra:
            loss = loss + (e * x).sum()
        return loss

    def step(x):
        loss = loss_of(x)
        loss.backward()
        with wgrad.no_grad():
            for p in [w, _GLOBAL_W, model.w, *extra]:
                p.data = p.data - 0.5 * p.grad
                p.grad = None
        return loss
    compiled = wgrad.compile(step)
    x = wgrad.tensor([1.0, 2.0], dtype=wgrad.float64)
    compiled(x)
    found = compiled._found
    compiled(x)
    assert compiled._found is found  # nothing changed: no new walk
    np.testing.assert_allclose(w.detach().numpy(), [0.0, 0.0])

    def fresh():
        return wgrad.tensor([3.0, 4.0], dtype=wgrad.float64, requires_grad=True)
    old_global = _GLOBAL_W
    w, _GLOBAL_W, model.w = fresh(), fresh(), fresh()
    extra.append(fresh())
    try:
        assert compiled(x).item() == pytest.approx(4 * 11.0)
        for p in (w, _GLOBAL_W, model.w, extra[0]):
            np.testing.assert_allclose(p.detach().numpy(), [2.5, 3.0])
            assert p.grad is None
        assert compiled._found is not found
        np.testing.assert_allclose(old_global.detach().numpy(), [0.0, -1.0])
    finally:
        _GLOBAL_W = old_global


def test_unchanged_inputs_keep_their_arrays_and_changed_arguments_are_written_back():
    w = wgrad.tensor([1.0, -1.0], dtype=wgrad.float64, requires_grad=True)
    y = wgrad.tensor([2.0, 3.0], dtype=wgrad.float64)
    count = wgrad.tensor(0.0, dtype=wgrad.float64)
    held = y.jax()

    def step(y, count):
        loss = ((w - y) ** 2).sum()
        loss.backward()
        with wgrad.no_grad():
            w.data = w.data - 0.25 * w.grad
            count += 1
        w.grad = None
        return loss
    compiled = wgrad.compile(step)
    for _ in range(2):
        compiled(y, count)
    assert y.jax() is held  # neither donated nor copied: the same array object
    assert count.item() == 2.0
    np.testing.assert_allclose(w.detach().numpy(), [1.75, 2.0])
    # data arguments (no requires_grad) are never donated, even when unreferenced
    assert _masks(compiled) == [(True, False, False)]


def test_new_shapes_retrace_without_static_arguments():
    def make(traces):
        w = wgrad.tensor(1.5, dtype=wgrad.float64, requires_grad=True)

        def step(x):
            traces.append(tuple(x.shape))
            loss = (w * x).sum() ** 2
            loss.backward()
            with wgrad.no_grad():
                w.sub_(0.01 * w.grad)
            w.grad = None
            return loss
        return w, step
    we, eager = make([])
    traces = []
    wc, step = make(traces)
    compiled = wgrad.compile(step)
    xs = [wgrad.tensor(v, dtype=wgrad.float64) for v in
          ([1.0, 2.0], [0.5, -1.0], [1.0, 2.0, 3.0], [2.0, 2.0, 2.0], [1.0, -3.0])]
    for x in xs:
        assert compiled(x).item() == pytest.approx(eager(x).item(), rel=1e-12)
    assert wc.item() == pytest.approx(we.item(), rel=1e-12)
    assert traces == [(2,), (3,)]  # one trace per shape, the last call reused the first


def _count_general_calls(monkeypatch):
    """Count the calls that take CompiledStep's general path (NOTE [Fast path])."""
    calls = []
    general = CompiledStep._inputs

    def inputs(self, *args):
        calls.append(1)
        return general(self, *args)
    monkeypatch.setattr(CompiledStep, "_inputs", inputs)
    return calls


@pytest.mark.parametrize("donate", [True, False])
def test_fast_path_agrees_with_eager_call_by_call(monkeypatch, donate):
    # every fact the fast path checks changes at some call: the arguments' identities, a
    # repeated argument, a captured tensor passed as an argument, an argument that
    # requires grad (and then has a .grad), a .grad set by the user, a buffer held
    # elsewhere (not to be donated)
    general = _count_general_calls(monkeypatch)

    def make():
        w = wgrad.tensor([0.5, -1.0], dtype=wgrad.float64, requires_grad=True)
        xs = {"x1": wgrad.tensor([1.0, 2.0], dtype=wgrad.float64),
              "x2": wgrad.tensor([-3.0, 0.5], dtype=wgrad.float64),
              "xr": wgrad.tensor([0.25, 1.5], dtype=wgrad.float64, requires_grad=True),
              "xs": wgrad.tensor([2.0, -0.5], dtype=wgrad.float64, requires_grad=True),
              "w": w}

        def step(*args):
            loss = sum(((w * x) ** 2).sum() for x in args)
            loss.backward()
            with wgrad.no_grad():
                w.sub_(0.1 * w.grad)
            w.grad = None
            return loss
        return w, xs, step
    we, xe, eager = make()
    wc, xc, step = make()
    compiled = wgrad.compile(step, donate=donate)
    calls = [("x1",), ("x2",), ("x2",), ("x1", "x1"), ("x1", "x2"), ("x2", "x1"),
             ("x2", "x1"), ("w",), ("w",), ("xr",), ("xr",), ("xr",), ("x1",), ("x1",),
             ("x1",), ("x2",), ("x2",), ("xr", "xs"), ("xr", "xs"), ("xr", "xr"),
             ("xr", "xr")]
    for i, names in enumerate(calls):
        held = None
        if i == 12:  # the user sets a .grad: the backward accumulates into it
            we.grad = wgrad.ones_like(we)
            wc.grad = wgrad.ones_like(wc)
        if i == 14:  # a second reference to w's buffer: it must survive the call
            held, before = wc.jax(), np.asarray(wc.jax()).copy()
        loss_e = eager(*(xe[n] for n in names))
        loss_c = compiled(*(xc[n] for n in names))
        assert loss_c.item() == pytest.approx(loss_e.item(), rel=1e-12), (i, names)
        np.testing.assert_allclose(wc.detach().numpy(), we.detach().numpy(), rtol=1e-12)
        if held is not None:
            np.testing.assert_array_equal(np.asarray(held), before)
        assert wc.grad is None
        for n in ("xr", "xs"):
            ge, gc = xe[n].grad, xc[n].grad
            assert (ge is None) == (gc is None), (i, names, n)
            if gc is not None:
                np.testing.assert_allclose(gc.numpy(), ge.numpy(), rtol=1e-12)
    assert xc["x1"].grad is None
    # the repeated calls took the fast path
    assert len(general) <= len(calls) - 5, len(general)


def test_fast_path_never_donates_a_buffer_held_elsewhere(monkeypatch):
    general = _count_general_calls(monkeypatch)
    w = wgrad.tensor([1.0, 2.0], dtype=wgrad.float64, requires_grad=True)

    @wgrad.compile
    def step():
        loss = (w ** 2).sum()
        loss.backward()
        with wgrad.no_grad():
            w.data = w.data * 0.5
        w.grad = None
        return loss
    step()
    step()
    assert len(general) == 1 and (True,) in _masks(step)  # the second call: fast, donating
    held = w.jax()
    assert step().item() == pytest.approx(0.3125)
    np.testing.assert_array_equal(np.asarray(held), [0.25, 0.5])
    assert len(general) == 2  # the held buffer sent the call to the general path


def test_hooks_and_requires_grad_changed_between_calls_are_traced_again():
    w = wgrad.tensor([1.0, 2.0], dtype=wgrad.float64, requires_grad=True)
    x = wgrad.tensor([1.0, -1.0], dtype=wgrad.float64)

    @wgrad.compile
    def step(x):
        loss = (w ** 2).sum() + (x ** 2).sum()
        loss.backward()
        with wgrad.no_grad():
            w.data = w.data - 0.125 * w.grad
        w.grad = None
        return loss

    class Doubler:  # a callable object that is not hashable (it defines __eq__)
        def __call__(self, g):
            return g * 2

        def __eq__(self, other):
            return isinstance(other, Doubler)

    expected = np.array([1.0, 2.0])
    for factor in (0.75, 0.75, 0.5, 0.75):  # the hook doubles the gradient at the third
        if factor == 0.5:
            handle = w.register_hook(Doubler())
        step(x)
        if factor == 0.5:
            handle.remove()
        expected *= factor
        np.testing.assert_allclose(w.detach().numpy(), expected, rtol=1e-12)
    # an argument that now requires grad gets its .grad, though nothing else changed
    x.requires_grad_()
    step(x)
    np.testing.assert_allclose(x.grad.numpy(), [2.0, -2.0])
