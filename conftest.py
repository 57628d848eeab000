"""Doctests (``--doctest-modules`` over wgrad/, see pyproject.toml) see ``wgrad`` as a
global, as a reader of a docstring example would assume."""
import os

# No test depends on the persistent compilation cache (NOTE [Persistent compilation
# cache]): it is off for the suite, set before wgrad is imported. Measured on
# tests/autograd/test_api.py and tests/ops/test_reduction.py, a cold cache in a temporary
# directory costs the same CPU time (53-55 s) as none, and a warm one would let
# compile-count tests depend on earlier runs.
os.environ.setdefault("WGRAD_COMPILE_CACHE", "0")

import pytest  # noqa: E402

import wgrad  # noqa: E402


@pytest.fixture(autouse=True)
def _wgrad_in_doctests(doctest_namespace):
    doctest_namespace["wgrad"] = wgrad
