"""Doctests (``--doctest-modules`` over wgrad/, see pyproject.toml) see ``wgrad`` as a
global, as a reader of a docstring example would assume."""
import os

# No test depends on the persistent compilation cache (NOTE [Persistent compilation
# cache]): it is off for the suite, set before wgrad is imported. Measured on
# tests/autograd/test_api.py and tests/ops/test_reduction.py, a cold cache in a temporary
# directory costs the same CPU time (53-55 s) as none, and a warm one would let
# compile-count tests depend on earlier runs.
os.environ.setdefault("WGRAD_COMPILE_CACHE", "0")

# XLA's CPU backend compiles at LLVM optimization level 0 in the suite: nearly every test
# meets new shapes, so compiling kernels is most of its time (~60% of
# tests/ops/test_added_toplevel.py, profiled), and running them is not. Values do not
# depend on it (XLA uses no fast-math at any level). Measured on that file, twice each,
# interleaved: 61.5-63.7 s at the default, 49.7-54.0 s with these flags. Set
# WGRAD_TEST_XLA_OPT=1 to test at XLA's default level.
if os.environ.get("WGRAD_TEST_XLA_OPT", "0") == "0" and \
        "xla_backend_optimization_level" not in os.environ.get("XLA_FLAGS", ""):
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                               " --xla_backend_optimization_level=0"
                               " --xla_llvm_disable_expensive_passes=true").strip()

import pytest  # noqa: E402

import wgrad  # noqa: E402


@pytest.fixture(autouse=True)
def _wgrad_in_doctests(doctest_namespace):
    doctest_namespace["wgrad"] = wgrad
