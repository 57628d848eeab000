"""Doctests (``--doctest-modules`` over wgrad/, see pyproject.toml) see ``wgrad`` as a
global, as a reader of a docstring example would assume."""
import os
import subprocess
import sys

# No test depends on the persistent compilation cache (NOTE [Persistent compilation
# cache]): it is off for the suite, set before wgrad is imported. Measured on
# tests/autograd/test_api.py and tests/ops/test_reduction.py, a cold cache in a temporary
# directory costs the same CPU time (53-55 s) as none, and a warm one would let
# compile-count tests depend on earlier runs.
os.environ.setdefault("WGRAD_COMPILE_CACHE", "0")

# XLA's CPU backend compiles at LLVM optimization level 0 in the suite, and with its older
# elemental emitters instead of the MLIR fusion emitters: nearly every test meets new
# shapes, so compiling kernels is most of its time (tests/ops/test_elementwise.py's
# test_unary: 918 compiles, 23.5 of its 34 s at level 0 with the fusion emitters, 12 s
# without), and running them is not. Neither uses fast-math; the emitters may round a few
# kernels differently in the last bits, and the whole suite passes with these flags and at
# XLA's defaults alike (docs/performance.md, "Measurements behind choices in the code").
# Set WGRAD_TEST_XLA_OPT=1 to test with XLA's defaults, as users' kernels compile.
_FAST_COMPILE = ("--xla_backend_optimization_level=0 --xla_llvm_disable_expensive_passes=true",
                 "--xla_cpu_use_fusion_emitters=false")


def _known_to_xla(flags):
    """Whether this jaxlib accepts ``flags`` (XLA aborts the process on an unknown one, and
    its flags come and go between releases): tried once, in a child process."""
    probe = "import jax; jax.devices('cpu')"
    env = dict(os.environ, XLA_FLAGS=flags, JAX_PLATFORMS="cpu")
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True,
                          timeout=120).returncode == 0


if os.environ.get("WGRAD_TEST_XLA_OPT", "0") == "0" and \
        "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    # set in the pytest process before its xdist workers start: they inherit it
    _flags = " ".join(_FAST_COMPILE)
    if not _known_to_xla(_flags):
        _flags = _FAST_COMPILE[0]
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " " + _flags).strip()

import pytest  # noqa: E402

import wgrad  # noqa: E402


@pytest.fixture(autouse=True)
def _wgrad_in_doctests(doctest_namespace):
    doctest_namespace["wgrad"] = wgrad
