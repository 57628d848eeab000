"""The persistent compilation cache (NOTE [Persistent compilation cache])."""
import json
import os
import subprocess
import sys

import jax
import numpy as np
import pytest

from wgrad import _compile_cache
from wgrad.ops import _lazy

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_cache_is_off_in_the_suite():
    # conftest.py sets WGRAD_COMPILE_CACHE=0: no test depends on an earlier run
    assert _compile_cache.cache_dir() is None


@pytest.mark.parametrize("value", ["0", "off", "False", "no"])
def test_opt_out(value):
    assert _compile_cache.configure({"WGRAD_COMPILE_CACHE": value}) is None


def test_user_configuration_wins():
    assert _compile_cache.configure({"JAX_COMPILATION_CACHE_DIR": "/x"}) is None


def test_unwritable_directory_warns_and_stays_off(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    before = jax.config.jax_compilation_cache_dir
    with pytest.warns(RuntimeWarning, match="not writable"):
        assert _compile_cache.configure({"WGRAD_COMPILE_CACHE": str(blocker / "sub")}) is None
    assert jax.config.jax_compilation_cache_dir == before


def test_default_dir_follows_xdg(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _compile_cache.default_dir() == os.path.join(str(tmp_path), "wgrad", "jax")


def test_kernels_land_in_the_directory(tmp_path):
    """A fresh process with the cache on writes its small op kernels there: as wgrad's own
    entries (NOTE [Eager disk cache]; a lazy segment's too, NOTE [Lazy disk cache])."""
    env = dict(os.environ, WGRAD_COMPILE_CACHE=str(tmp_path / "c"), PYTHONPATH=ROOT,
               WGRAD_LAZY="0")
    code = ("import wgrad; from wgrad import _compile_cache as c; "
            "x = wgrad.ones(3, requires_grad=True); (x.sin() * 2).sum().backward(); "
            "print(c.cache_dir())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == str(tmp_path / "c")
    names = [n for n in os.listdir(tmp_path / "c" / "wgrad-lazy") if n.endswith(".exe")]
    assert len(names) >= 4, names  # sin, mul, sum and their backward kernels


def test_shared_mlir_context_one_per_thread():
    """NOTE [Shared MLIR context]: JAX's lowerings get one MLIR context per thread, and the
    kernels they make compute the same values."""
    import threading

    import jax.numpy as jnp
    from jax._src.interpreters import mlir
    assert _compile_cache.share_mlir_context() is True
    assert _compile_cache.share_mlir_context({"WGRAD_SHARED_MLIR_CONTEXT": "0"}) is False
    assert mlir.make_ir_context() is mlir.make_ir_context()
    other = []
    th = threading.Thread(target=lambda: other.append(mlir.make_ir_context()))
    th.start()
    th.join()
    assert other[0] is not mlir.make_ir_context()
    for n in (3, 4):  # two lowerings in the shared context
        x = np.arange(n, dtype=np.float32)
        np.testing.assert_allclose(jax.jit(lambda a: jnp.sin(a) * 2)(x), np.sin(x) * 2,
                                   rtol=1e-6)


def test_cpu_computations_run_on_the_calling_thread():
    # NOTE [CPU dispatch]: set at import, before the CPU backend exists
    from jax._src import xla_bridge
    assert xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value is False
    assert _compile_cache.synchronous_cpu_dispatch({}) is True
    # so backward() does not run the forward first (NOTE [Lazy segments])
    assert _lazy.dispatch_overlaps() is (jax.default_backend() != "cpu")


@pytest.mark.parametrize("env", [{"WGRAD_CPU_ASYNC_DISPATCH": "1"},
                                 {"JAX_CPU_ENABLE_ASYNC_DISPATCH": "true"},
                                 {"JAX_CPU_ENABLE_ASYNC_DISPATCH": "false"}])
def test_cpu_dispatch_opt_outs_leave_jax_alone(env):
    assert _compile_cache.synchronous_cpu_dispatch(env) is False


def test_cpu_dispatch_opt_out_in_a_fresh_process():
    # and with asynchronous dispatch backward() runs the forward first, then the backward
    code = ("import wgrad; from jax._src import xla_bridge as x\n"
            "w = wgrad.ones(3, requires_grad=True)\n"
            "with wgrad.lazy():\n"
            "    (w.sin() * 2).sum().backward()\n"
            "print(x._CPU_ENABLE_ASYNC_DISPATCH.value, wgrad.ops._lazy.dispatch_overlaps(),"
            " wgrad.lazy.stats()['segments'], w.grad.tolist())")
    env = dict(os.environ, WGRAD_CPU_ASYNC_DISPATCH="1", PYTHONPATH=ROOT, WGRAD_LAZY="0")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, check=True).stdout.split(maxsplit=3)
    assert out[:3] == ["True", "True", "2"]
    np.testing.assert_allclose(json.loads(out[3]), 2 * np.cos(np.ones(3)), rtol=1e-6)
