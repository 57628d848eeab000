"""Lazy mode's disk cache of output avals and executables (NOTE [Lazy disk cache])."""
import json
import os
import pickle
import shutil
import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import wgrad
from wgrad.ops import _lazy_disk
from wgrad.ops._primitive import Primitive

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# a lazy step with every kind of entry: forward segments, a 48-op group's backward called
# directly (the chain), one recorded into a segment (the fft tail), output avals and a
# pass-through check (the slice's OpNode); it prints the counters, the loss, the gradients
_STEP = """
import json, sys
import numpy as np
import jax
import wgrad
jits = []  # jax.jit wrappers the step makes (NOTE [Deferred jit])
_jit = jax.jit
jax.jit = lambda *a, **k: jits.append(_jit(*a, **k)) or jits[-1]
rng = np.random.default_rng(0)
x0 = (rng.standard_normal(16) + 1j * rng.standard_normal(16)).astype(np.complex64)
c0 = (rng.standard_normal(16) + 1j * rng.standard_normal(16)) / 4
c = wgrad.tensor(c0.astype(np.complex64))
x = wgrad.tensor(x0, requires_grad=True)
with wgrad.lazy(enabled=sys.argv[1] == "lazy"):
    y = x
    for _ in range(15):
        y = (y.sin() * c) * 0.5 + c
    z = wgrad.fft.fft(y[2:] * 0.25).abs()  # a view: its OpNode checks for pass-through
    loss = ((z - 1.0) ** 2).sum()
    loss.backward()
unused = sum(j._cache_size() == 0 for j in jits)  # made and never called
print(json.dumps({"stats": wgrad.lazy.stats(), "loss": loss.item(), "unused": unused,
                  "fallbacks": wgrad.ops._lazy_disk._state["fallbacks"],
                  "re": x.grad.real.tolist(), "im": x.grad.imag.tolist()}))
"""


def _run(cache, mode="lazy", **env):
    e = dict(os.environ, PYTHONPATH=ROOT, WGRAD_COMPILE_CACHE=str(cache), WGRAD_LAZY="0",
             **env)
    out = subprocess.run([sys.executable, "-c", _STEP, mode], env=e, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    got = json.loads(out.stdout.strip().splitlines()[-1])
    assert got["fallbacks"] == 0  # every loaded executable ran
    return got


def test_a_later_process_loads_what_an_earlier_one_compiled(tmp_path):
    eager = _run(0, "eager")
    first = _run(tmp_path)  # nothing on disk: compiles and writes its entries
    lazy_dir = tmp_path / "wgrad-lazy"
    kinds = {n.rsplit(".", 1)[1] for n in os.listdir(lazy_dir)}
    # next: what to prefetch; facts: the avals and pass-through facts in one entry
    assert kinds == {"aval", "exe", "ident", "next", "facts"}, kinds
    assert first["stats"]["loaded"] == 0 and first["stats"]["compiles"] >= 2
    for n in os.listdir(lazy_dir):  # a later first step reads its facts from one entry
        if n.endswith((".aval", ".ident")):
            os.remove(lazy_dir / n)
    second = _run(tmp_path)
    assert not [n for n in os.listdir(lazy_dir) if n.endswith((".aval", ".ident"))]
    assert second["stats"]["loaded"] == second["stats"]["compiles"] >= 2
    assert first["unused"] > 0 and second["unused"] == 0  # NOTE [Deferred jit]
    assert second["loss"] == first["loss"]  # the same programs, bit for bit
    assert second["re"] == first["re"] and second["im"] == first["im"]
    np.testing.assert_allclose(second["re"], eager["re"], rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(second["im"], eager["im"], rtol=1e-4, atol=1e-5)
    # JAX's persistent cache warm, wgrad's lazy entries gone: an executable JAX serves
    # from its cache cannot be serialized again, so the new entries are compiled past
    # it; the next process must run them (JAX 0.10.2 raised "Function ... not found")
    shutil.rmtree(lazy_dir)
    assert _run(tmp_path)["stats"]["loaded"] == 0
    # a list of what to prefetch that names more than a process needed is cut back to
    # what it needed, so that later first steps do not load executables nobody uses
    (nxt,) = [lazy_dir / n for n in os.listdir(lazy_dir) if n.endswith(".next")]
    with open(nxt, "rb") as f:
        (needed,) = pickle.load(f)
    with open(nxt, "wb") as f:
        pickle.dump((needed + ["0" * 64 + ".exe"],), f)
    third = _run(tmp_path)
    assert third["stats"]["loaded"] >= 2
    with open(nxt, "rb") as f:
        assert pickle.load(f) == (needed,)
    assert third["re"] == first["re"] and third["im"] == first["im"]
    # another setting (here XLA_FLAGS) makes another fingerprint: nothing is loaded
    other = _run(tmp_path, XLA_FLAGS="--xla_cpu_enable_fast_min_max=false")
    assert other["stats"]["loaded"] == 0
    np.testing.assert_allclose(other["re"], eager["re"], rtol=1e-4, atol=1e-5)


# an eager training step (NOTE [Eager disk cache]): forwards and kernels (a host GEMM
# among them), a gradient accumulated (w1 twice), Adam's update with a float lr (a Python
# scalar argument) and its state; then a LAPACK custom call (inv), kept too (jaxlib's
# LAPACK set up before it is loaded), and host checks (quantile's q, equal, allclose). It
# prints how many functions JAX traced during the steps and in all, loads, the results.
_EAGER = """
import json
import numpy as np
import jax, jax.monitoring
import wgrad
traces = []
jax.monitoring.register_event_duration_secs_listener(
    lambda name, dur, **kw: traces.append(1) if name.endswith("jaxpr_trace_duration") else 0)
rng = np.random.default_rng(0)
def c(*s):
    return (rng.standard_normal(s) + 1j * rng.standard_normal(s)).astype(np.complex64)
x, t = wgrad.tensor(c(8, 16)), wgrad.tensor(c(8, 4))
w1 = wgrad.nn.Parameter(wgrad.tensor(c(16, 16) / 4))
w2 = wgrad.nn.Parameter(wgrad.tensor(c(16, 4) / 4))
opt = wgrad.optim.Adam([w1, w2], lr=1e-2)
before = len(traces)
for _ in range(2):
    opt.zero_grad()
    y = wgrad.fft.fft((x @ w1).tanh() @ w2, dim=0)
    loss = ((y.abs() - t.abs()) ** 2).mean() + (w1 * 0.5).sum().real
    loss.backward()
    opt.step()
traced = len(traces) - before
m = (wgrad.tensor(c(3, 3)) + 3 * wgrad.eye(3)).requires_grad_()
wgrad.linalg.inv(m).abs().sum().backward()
q = wgrad.quantile(w2.detach().abs(), wgrad.tensor([0.25, 0.5]))  # host checks: kept too
assert wgrad.equal(m, m) and wgrad.allclose(q, q)
# a convolution (its attributes hold a jax.lax.Precision) and ops nn lifts from JAX
# functions (a recurrent layer, adaptive pooling's taps): their forwards, backward kernels
# (the lifted vjp) and output shapes kept too
img = wgrad.tensor(rng.standard_normal((2, 3, 6, 6)).astype(np.float32))
conv, gru = wgrad.nn.Conv2d(3, 4, 3, padding=1), wgrad.nn.GRU(4, 4)
h = wgrad.nn.functional.adaptive_avg_pool2d(conv(img), 2).flatten(2).permute(2, 0, 1)
gru(h)[0].sum().backward()
assert wgrad.arange(12.).reshape(3, 4).t().reshape(12).shape == (12,)  # a view's element ids
a = w2.detach().abs()  # argsorts with their slices (and median's NaN rule) kept
assert a.topk(2, dim=0).values.shape == (2, 4) and a.median(dim=0).values.shape == (4,)
v = wgrad.arange(6.).reshape(2, 3)  # index arrays put from the host, bounds read there
assert wgrad.index_select(v, 1, wgrad.tensor([2, 0])).shape == (2, 2) and v[v > 2].shape == (3,)
assert wgrad.nn.functional.pad(img, (1, 1, 1, 1), mode="reflect").shape == (2, 3, 8, 8)
assert wgrad.nn.functional.one_hot(wgrad.tensor([0, 2]), 3).shape == (2, 3)
assert wgrad.masked_select(v, v > 2).shape == (3,) and wgrad.histc(v, bins=4).shape == (4,)
assert wgrad.nanmedian(v, 1).values.shape == (2,) and wgrad.linspace(0, 1, 9).shape == (9,)
assert wgrad.linalg.lstsq(wgrad.randn(5, 3), wgrad.randn(5, 2), driver="gelsd").rank == 3
traced_all = len(traces) - before
with jax.disable_jit():  # the dispatcher runs the function itself, as jax.jit's
    m.grad = m.grad * 2
out = [np.asarray(v).view(np.float32).ravel().tolist() for v in (w1.detach(), w2.detach(), m.grad)]
print(json.dumps({"traced": traced, "traced_all": traced_all,
                  "loads": wgrad.ops._lazy_disk._state["loads"],
                  "fallbacks": wgrad.ops._lazy_disk._state["fallbacks"], "out": out}))
"""


def test_eager_executables_are_loaded_without_tracing(tmp_path):
    def run(cache):
        e = dict(os.environ, PYTHONPATH=ROOT, WGRAD_COMPILE_CACHE=str(cache), WGRAD_LAZY="0")
        r = subprocess.run([sys.executable, "-c", _EAGER], env=e, capture_output=True,
                           text=True, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
        return json.loads(r.stdout.strip().splitlines()[-1])
    off, cold, warm = run(0), run(tmp_path), run(tmp_path)
    assert off["traced"] > 20 and cold["traced"] == off["traced"]  # each op's first call
    assert cold["loads"] == 0 and warm["loads"] > 20 and warm["traced_all"] == 0
    assert cold["fallbacks"] == warm["fallbacks"] == 0
    assert warm["out"] == cold["out"]  # the same programs, bit for bit
    for a, b in zip(warm["out"], off["out"]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    entries = []
    for n in os.listdir(tmp_path / "wgrad-lazy"):
        if n.endswith(".exe"):
            with open(tmp_path / "wgrad-lazy" / n, "rb") as f:
                entries.append(pickle.load(f))
    assert ("lapack",) in [e[3:] for e in entries]  # inv's forward (LAPACK's getrf)


def test_an_eager_dispatcher_keeps_its_executables_per_setting(tmp_path, monkeypatch):
    # NOTE [Eager disk cache] in this process: a changed matmul precision misses JAX's
    # dispatcher, and our table of handlers must miss too (the old program is not served)
    monkeypatch.setitem(_lazy_disk._state, "dir", str(tmp_path))
    traced = []

    def f(a, b):
        traced.append(1)
        return a @ b
    d = _lazy_disk.DeferredJit(f)
    d._wg_src = ("f", "a test's product", ())
    a = jnp.ones((3, 3), jnp.float32)
    prev = wgrad.get_float32_matmul_precision()
    try:
        np.testing.assert_array_equal(d(a, a), 3 * np.ones((3, 3)))
        d(a, a + 1)
        assert len(traced) == 1 and d._cache_size() == 1  # kept by JAX's dispatcher
        wgrad.set_float32_matmul_precision("high" if prev == "highest" else "highest")
        np.testing.assert_array_equal(d(a, a), 3 * np.ones((3, 3)))
        assert len(traced) == 2  # compiled for the new setting, not the old one served
    finally:
        wgrad.set_float32_matmul_precision(prev)
    assert len([n for n in os.listdir(tmp_path) if n.endswith(".exe")]) == 2


def test_unreadable_entries_are_compiled_again(tmp_path):
    first = _run(tmp_path)
    for name in os.listdir(tmp_path / "wgrad-lazy"):
        (tmp_path / "wgrad-lazy" / name).write_bytes(b"not a pickle")
    again = _run(tmp_path)
    assert again["stats"]["loaded"] == 0
    assert again["re"] == first["re"] and again["loss"] == first["loss"]


def test_keys_are_exact_text_of_plain_values():
    t = _lazy_disk._text
    distinct = [1, 1.0, True, 0.0, -0.0, 0.1, 0.1 + 1e-17 * 3, 1 + 0j, "1", b"1", None,
                (1,), [1], np.dtype(np.float32), np.dtype(np.complex64), np.float32(1),
                slice(1, None), Ellipsis, {"a": 1}, jax.tree_util.tree_structure((0, 0)),
                jax.lax.Precision.DEFAULT, jax.lax.Precision.HIGHEST]
    texts = [t(v) for v in distinct]
    assert len(set(texts)) == len(texts), texts
    assert t((1, 2.5, np.dtype(np.float64))) == t((1, 2.5, np.dtype(np.float64)))
    for v in (object(), lambda: 0, jnp.ones(2), wgrad.ones(2)):
        with pytest.raises(_lazy_disk._Unkeyed):
            t(v)


def test_primitives_get_the_same_places_in_every_process(monkeypatch):
    """A primitive's place (NOTE [Lazy disk cache]) depends on wgrad's source only: a
    fresh process numbers every primitive made at import alike, and no two share one; an
    op lifted from one of wgrad's JAX functions (adaptive pooling's taps) when it is first
    used gets the same place in every process too."""
    import gc

    def disks():
        return [o._disk for o in gc.get_objects() if isinstance(o, Primitive)]
    places = sorted(repr(d) for d in disks() if d is not None and d[0] != "lift")
    assert len(places) == len(set(places)) and len(places) > 250
    # the cache off (here and there): a process that loads an op's backward kernel never
    # makes its vjp op (built when the kernel's function is traced)
    monkeypatch.setitem(_lazy_disk._state, "dir", None)
    pool = ("x = wgrad.ones(1, 2, 5, requires_grad=True)\n"
            "wgrad.nn.functional.adaptive_avg_pool1d(x, 3).sum().backward()\n")
    code = ("import gc, json, wgrad\nfrom wgrad.ops._primitive import Primitive\n"
            "def disks():\n"
            "    return [o._disk for o in gc.get_objects() if isinstance(o, Primitive)]\n"
            "at_import = disks()\n" + pool +
            "print(json.dumps([[repr(d) for d in at_import if d is not None],\n"
            "    [repr(d) for d in disks() if d is not None and d[0] == 'lift']]))")
    out = json.loads(subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
        env=dict(os.environ, PYTHONPATH=ROOT, WGRAD_COMPILE_CACHE="0"), check=True).stdout)
    assert sorted(out[0]) == places
    exec(pool, {"wgrad": wgrad})  # the same ops here: the same places
    assert len(out[1]) >= 2  # the op and its vjp
    assert set(out[1]) <= {repr(d) for d in disks() if d is not None and d[0] == "lift"}
    late = Primitive("late_op", lambda x: x)  # made after import: no place, not kept
    assert late._disk is None
    with pytest.raises(_lazy_disk._Unkeyed):
        _lazy_disk._text(late)


def test_a_loaded_executable_that_fails_hands_over_to_the_jitted_function():
    def broken(*args):
        raise RuntimeError("Function fusion not found")
    f = jax.jit(lambda a: a * 2)
    before = _lazy_disk._state["fallbacks"]
    loaded = _lazy_disk._Loaded(broken, f, "absent.exe")
    np.testing.assert_array_equal(loaded(jnp.arange(3.0)), [0.0, 2.0, 4.0])
    assert loaded.exe is None  # for good
    assert _lazy_disk._state["fallbacks"] == before + 1


def test_a_deferred_jit_is_made_at_its_first_use():
    traced = []

    def f(a):
        traced.append(1)
        return a * 2
    d = _lazy_disk.DeferredJit(f)
    d._wg_src = ("a key",)
    with pytest.raises(AttributeError):  # reading a key never builds it
        d._disk
    assert d._jitted is None and d._cache_size() == 0
    assert jax.eval_shape(d, jnp.ones(3)).shape == (3,)
    assert d._jitted is not None
    np.testing.assert_array_equal(d(jnp.arange(3.0)), [0.0, 2.0, 4.0])
    n = len(traced)
    d(jnp.arange(3.0) + 1)
    # kept: not traced again (JAX's dispatcher cache is one LRU of 8192 entries for every
    # jitted function: late in a long pytest worker it was seen empty right after the call)
    assert len(traced) == n and d._cache_size() <= 1
    assert "multiply" in d.lower(jnp.arange(3.0)).as_text()
    assert d._wg_src == ("a key",)


def test_off_in_the_suite():
    # conftest.py turns the persistent cache off, and this cache with it
    assert _lazy_disk.directory() is None


def test_executables_calling_lapack_are_loaded_after_its_set_up(tmp_path):
    """LAPACK's custom calls point into jaxlib state set up when a process lowers them:
    an executable with one, loaded by a process that never lowered it, crashed when run
    (eigh, JAX 0.10.2). Its entry says so, and jaxlib's LAPACK is set up before the load:
    the second process loads the eigh forward and the backward without tracing."""
    code = ("import json, wgrad\n"
            "a = wgrad.tensor([[2.0, 1.0], [1.0, 3.0]], dtype=wgrad.float64,"
            " requires_grad=True)\n"
            "with wgrad.lazy():\n"
            "    vals, vecs = wgrad.linalg.eigh(a * 2)\n"
            "    (vals * 3).sum().backward()\n"
            "print(json.dumps([a.grad.tolist(), wgrad.lazy.stats()['loaded']]))")
    env = dict(os.environ, PYTHONPATH=ROOT, WGRAD_COMPILE_CACHE=str(tmp_path),
               WGRAD_LAZY="0")
    runs = [subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                           text=True, timeout=300) for _ in range(2)]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr[-2000:]
    (g1, loaded1), (g2, loaded2) = (json.loads(r.stdout) for r in runs)
    assert g1 == g2
    np.testing.assert_allclose(g2, 6 * np.eye(2), atol=1e-12)
    assert (loaded1, loaded2) == (0, 2)  # eigh's segment (syevd) and the backward's


def test_an_executable_with_a_python_callback_is_not_kept(tmp_path, monkeypatch):
    # its target is the writing process's callback: the entry says to use the jitted
    # function (JAX's own path); a LAPACK call's entry is kept, marked for its set-up
    monkeypatch.setitem(_lazy_disk._state, "dir", str(tmp_path))
    a = jnp.arange(4.0).reshape(2, 2) + 3 * jnp.eye(2)

    def back(x):
        return jax.pure_callback(lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(
            x.shape, x.dtype), x)
    for src, f, tail in [("callback", back, None), ("lapack", jnp.linalg.inv, ("lapack",)),
                         ("plain", jnp.sin, ())]:
        call, loaded = _lazy_disk.compiled(("a test's", src), jax.jit(f), [a])
        np.testing.assert_allclose(call(a), f(a), rtol=1e-12)
        assert not loaded
        name = _lazy_disk._digest("exe", (("a test's", src), [(a.shape, a.dtype, False)]))
        with open(tmp_path / name, "rb") as fh:
            entry = pickle.load(fh)
        assert entry == _lazy_disk._NOT_KEPT if tail is None else entry[3:] == tail
    with pytest.raises(ValueError, match="another wgrad"):
        _lazy_disk._load(entry[:3] + ("cuda",))


def test_the_folder_is_trimmed_to_its_least_recently_used_entries(tmp_path):
    for i in range(8):
        p = tmp_path / f"e{i}.exe"
        p.write_bytes(b"x" * 100)
        os.utime(p, ns=(i * 10 ** 9, i * 10 ** 9))  # e0 the oldest
    _lazy_disk._trim(str(tmp_path), 1000)  # 800 bytes: under the limit, kept
    assert len(os.listdir(tmp_path)) == 8
    _lazy_disk._trim(str(tmp_path), 600)  # over: down to 3/4 of it, oldest first
    assert sorted(os.listdir(tmp_path)) == [f"e{i}.exe" for i in range(4, 8)]


def test_the_source_stamp_is_the_imported_codes(monkeypatch):
    # wgrad's files are stamped at the end of import where the cache is on: a file edited
    # later (the process still runs the code it imported) does not rename its programs
    monkeypatch.setattr(_lazy_disk._compile_cache, "cache_dir", lambda: "/nonexistent")
    monkeypatch.setitem(_lazy_disk._state, "src", None)
    monkeypatch.setitem(_lazy_disk._state, "sealed", True)
    _lazy_disk.seal()
    assert _lazy_disk._state["src"] == _lazy_disk._source_stamp()

    def digest():
        _lazy_disk._state["stamp"] = None  # recomputed from the parts below
        _lazy_disk._state["config"] = (None, "")
        return _lazy_disk._fingerprint().hexdigest()
    monkeypatch.setitem(_lazy_disk._state, "stamp", None)
    monkeypatch.setitem(_lazy_disk._state, "config", (None, ""))
    imported = digest()
    monkeypatch.setattr(_lazy_disk, "_source_stamp", lambda: "an edited file")
    assert digest() == imported
    monkeypatch.setitem(_lazy_disk._state, "src", None)  # stamped when first needed instead
    assert digest() != imported
