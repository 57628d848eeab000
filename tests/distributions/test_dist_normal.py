"""wgrad.distributions' base class and Normal against torch's (tests/distributions/
_dist_harness.py compares each method)."""
import numpy as np
import pytest

from _dist_harness import check

R = np.random.default_rng(0)
LOC, SCALE = R.standard_normal(3), R.uniform(0.5, 2, 3)
VALUES = [R.standard_normal(3), np.array([0.1, 0.5, 0.9])]

CASES = {
    "normal": (lambda T, m, s: T.distributions.Normal(m, s), (LOC, SCALE)),
    "normal-f32": (lambda T, m, s: T.distributions.Normal(m, s),
                   (LOC.astype(np.float32), SCALE.astype(np.float32))),
    "normal-numbers": (lambda T: T.distributions.Normal(0.5, 2.0), ()),
    "normal-bad-scale": (lambda T, m: T.distributions.Normal(m, -1.0), (LOC,)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_against_torch(name):
    make, params = CASES[name]
    f32 = "f32" in name
    check(make, params, [v.astype(np.float32) if f32 else v for v in VALUES],
          rtol=2e-5 if f32 else 1e-7, name=name)
