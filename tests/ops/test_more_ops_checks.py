"""The ops added with tests/ops/test_more_*.py through the op-table checks: gradcheck,
gradgradcheck and the identity with conj(jax.vjp(conj g)) of a JAX reference, on
complex128 where torch takes complex inputs and float64 where it does not."""
import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np
import pytest

import wgrad
from wgrad.testing import check_op

W = wgrad


def _t(shape, dtype, lo=-1.0, hi=1.0, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.uniform(lo, hi, shape)
    if dtype == np.complex128:
        a = a + 1j * rng.uniform(lo, hi, shape)
    return W.tensor(a.astype(dtype), requires_grad=True)


C, R = np.complex128, np.float64
# (id, wgrad fn, JAX fn, input shapes as (shape, lo, hi), dtypes)
CASES = [
    # one-node forms of torch's composites (NOTE [Node edges] in ops/_primitive.py)
    ("lerp", lambda a, b: W.lerp(a, b, 0.7), lambda a, b: a + 0.7 * (b - a),
     [((3,), -1, 1)] * 2, (R, C)),
    ("lerp_tensor", W.lerp, lambda a, b, w: a + w * (b - a), [((3,), -1, 1)] * 3, (R, C)),
    ("addcmul", lambda i, a, b: W.addcmul(i, a, b, value=0.5), lambda i, a, b: i + 0.5 * a * b,
     [((3,), -1, 1)] * 3, (R, C)),
    ("addcdiv", lambda i, a, b: W.addcdiv(i, a, b, value=2), lambda i, a, b: i + 2 * a / b,
     [((3,), -1, 1), ((3,), -1, 1), ((3,), 1, 2)], (R, C)),
    ("dot", W.dot, jnp.dot, [((3,), -1, 1)] * 2, (R, C)),
    ("vdot", W.vdot, jnp.vdot, [((3,), -1, 1)] * 2, (C,)),
    ("mv", W.mv, jnp.matmul, [((2, 3), -1, 1), ((3,), -1, 1)], (C,)),
    ("trace", W.trace, jnp.trace, [((2, 3), -1, 1)], (C,)),
    ("stack", lambda a, b: W.stack([a, b], 1), lambda a, b: jnp.stack([a, b], 1),
     [((2, 2), -1, 1)] * 2, (C,)),
    ("rsub", lambda a, b: W.rsub(a, b, alpha=2), lambda a, b: b - 2 * a, [((3,), -1, 1)] * 2,
     (C,)),
    ("mse_loss", W.nn.functional.mse_loss, lambda a, b: jnp.mean((a - b) ** 2),
     [((2, 3), -1, 1), ((3,), -1, 1)], (R,)),
    ("sinc", W.sinc, jnp.sinc, [((3,), 0.2, 1.5)], (R, C)),
    ("float_power", W.float_power, jnp.power, [((3,), 0.5, 1.5), ((3,), 0.5, 1.5)], (R, C)),
    ("logcumsumexp", lambda x: W.logcumsumexp(x, 1),
     lambda x: jnp.log(jnp.cumsum(jnp.exp(x), 1)), [((2, 3), -1, 1)], (R, C)),
    ("addmm", lambda i, a, b: W.addmm(i, a, b, beta=0.5, alpha=2.0),
     lambda i, a, b: 0.5 * i + 2.0 * (a @ b), [((2, 2), -1, 1)] * 3, (R, C)),
    ("addmv", W.addmv, lambda i, a, v: i + a @ v, [((2,), -1, 1), ((2, 3), -1, 1),
                                                   ((3,), -1, 1)], (R, C)),
    ("baddbmm", W.baddbmm, lambda i, a, b: i + a @ b, [((2, 2, 2), -1, 1)] * 3, (R, C)),
    ("addbmm", W.addbmm, lambda i, a, b: i + (a @ b).sum(0),
     [((2, 2), -1, 1), ((2, 2, 3), -1, 1), ((2, 3, 2), -1, 1)], (R, C)),
    ("dist", W.dist, lambda a, b: jnp.sqrt(jnp.sum(jnp.abs(a - b) ** 2)),
     [((3,), -1, 1), ((3,), 1, 2)], (R, C)),
    ("cross", lambda a, b: W.cross(a, b, dim=1), lambda a, b: jnp.cross(a, b, axis=1),
     [((2, 3), -1, 1)] * 2, (R, C)),
    ("meshgrid", lambda a, b: W.stack(W.meshgrid(a, b, indexing="xy")),
     lambda a, b: jnp.stack(jnp.meshgrid(a, b, indexing="xy")), [((2,), -1, 1),
                                                                  ((3,), -1, 1)], (C,)),
    ("rot90", lambda x: W.rot90(x, 1, (0, 1)), lambda x: jnp.rot90(x, 1, (0, 1)),
     [((2, 3), -1, 1)], (C,)),
    ("block_diag", W.block_diag, jax.scipy.linalg.block_diag, [((2, 2), -1, 1),
                                                               ((1, 3), -1, 1)], (C,)),
    ("diagflat", W.diagflat, jnp.diagflat, [((3,), -1, 1)], (C,)),
    ("tensor_split", lambda x: W.tensor_split(x, 2, 1)[1],
     lambda x: jnp.array_split(x, 2, 1)[1], [((2, 3), -1, 1)], (C,)),
    ("dstack", lambda a, b: W.dstack([a, b]), lambda a, b: jnp.dstack([a, b]),
     [((2, 2), -1, 1)] * 2, (C,)),
    ("cartesian_prod", W.cartesian_prod,
     lambda a, b: jnp.stack([g.reshape(-1) for g in jnp.meshgrid(a, b, indexing="ij")], 1),
     [((2,), -1, 1), ((3,), -1, 1)], (C,)),
    ("lgamma", W.lgamma, jsp.gammaln, [((3,), 0.5, 2.5)], (R,)),
    ("digamma", W.digamma, jsp.digamma, [((3,), 0.5, 2.5)], (R,)),
    ("polygamma", lambda x: W.polygamma(1, x), lambda x: jsp.polygamma(1, x),
     [((3,), 0.5, 2.5)], (R,)),
    ("erfinv", W.erfinv, jsp.erfinv, [((3,), -0.8, 0.8)], (R,)),
    ("erfc", W.erfc, jsp.erfc, [((3,), -1, 1)], (R,)),
    ("xlogy", W.xlogy, jsp.xlogy, [((3,), -1, 1), ((3,), 0.5, 2)], (R,)),
    ("fmod", W.fmod, jnp.fmod, [((3,), 2, 3), ((3,), 0.7, 0.9)], (R,)),
    ("logit", W.logit, jsp.logit, [((3,), 0.2, 0.8)], (R,)),
    ("copysign", W.copysign, jnp.copysign, [((3,), 0.2, 1), ((3,), -1, -0.2)], (R,)),
    ("logaddexp2", W.logaddexp2, jnp.logaddexp2, [((3,), -1, 1)] * 2, (R,)),
    ("nanmean", lambda x: W.nanmean(x, 1), lambda x: jnp.nanmean(x, 1), [((2, 3), -1, 1)],
     (R,)),
    ("cummax", lambda x: W.cummax(x, 1).values, lambda x: jax.lax.cummax(x, axis=1),
     [((2, 3), -1, 1)], (R,)),
    ("cdist", W.cdist,
     lambda a, b: jnp.sqrt(jnp.sum((a[:, None] - b[None]) ** 2, -1)),
     [((2, 3), -1, 0), ((2, 3), 0.2, 1)], (R,)),
    # added or changed with the OpInfo findings (tests/ops/test_opinfo_findings.py)
    ("fmax", W.fmax, jnp.fmax, [((3,), -1, 1), ((3,), -1, 1)], (R,)),
    ("fmin", W.fmin, jnp.fmin, [((3,), -1, 1), ((3,), -1, 1)], (R,)),
    ("logaddexp", W.logaddexp, lambda a, b: jnp.log(jnp.exp(a) + jnp.exp(b)),
     [((3,), -1, 1)] * 2, (R, C)),
    ("complex_broadcast", W.complex, lambda a, b: a + 1j * b,
     [((2, 1), -1, 1), ((3,), -1, 1)], (R,)),
    ("pinv_rtol", lambda a: W.linalg.pinv(a, rtol=1e-3), jnp.linalg.pinv,
     [((3, 2), -1, 1)], (R, C)),
    # the reference by the recurrence psi1(x) = psi1(x + 1) + 1 / x^2, not JAX's series
    ("polygamma_negative", lambda x: W.polygamma(1, x),
     lambda x: jsp.polygamma(1, x + 10) + sum(1 / (x + k) ** 2 for k in range(10)),
     [((3,), -9.8, -9.2)], (R,)),
    ("clamp_tensor_bounds", W.clamp, jnp.clip,
     [((4,), -1, 1), ((4,), -0.5, 0), ((4,), 0, 0.5)], (R,)),
]


PARAMS = [pytest.param(wfn, jfn, specs, dt, id=f"{name}-{'c128' if dt is C else 'f64'}")
          for name, wfn, jfn, specs, dtypes in CASES for dt in dtypes]


@pytest.mark.parametrize("wfn,jfn,specs,dtype", PARAMS)
def test_gradcheck_gradgradcheck_and_jax_identity(wfn, jfn, specs, dtype):
    xs = [_t(s, dtype, lo, hi, seed=i) for i, (s, lo, hi) in enumerate(specs)]
    check_op(wfn, xs, jfn, fast_mode=True)
