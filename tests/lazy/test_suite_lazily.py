"""A part of the suite again with ``WGRAD_LAZY=1`` (issue #24), in one subprocess,
so that CI checks lazy mode on every run within its time budget.

The whole suite passes lazily (``WGRAD_LAZY=1 python -m pytest -q -n 2``, docs/performance.md);
this subset is what fits CI's time: custom Functions, gradcheck (bit-for-bit
reentrancy over fused segments), the torch comparisons, the autograd API (hooks),
indexing against torch (views and writes through them), optimizer trajectories and the
attention layers against torch.
tests/lazy/test_lazy.py checks lazy mode's own semantics in every run.
"""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

SUBSET = [
    "tests/autograd/test_function.py",
    "tests/autograd/test_gradcheck.py",
    "tests/test_torch_compat.py",
    "tests/autograd/test_api.py",
    "tests/ops/test_indexing.py",
    "tests/optim/test_algorithms.py",
    "tests/nn/test_transformer.py",
]


def test_the_subset_passes_with_wgrad_lazy():
    env = {**os.environ, "WGRAD_LAZY": "1"}
    env.pop("PYTEST_XDIST_WORKER", None)
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "-p", "no:xdist", *SUBSET], cwd=ROOT, env=env, capture_output=True,
                       text=True, timeout=900)
    assert r.returncode == 0, r.stdout[-8000:] + r.stderr[-2000:]
    assert " passed" in r.stdout.splitlines()[-1]
