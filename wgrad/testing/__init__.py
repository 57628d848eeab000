"""Test helpers: hypothesis strategies and gradient assertions for wgrad ops.

``check_op`` is the one assertion every op test uses: gradcheck and gradgradcheck
(numerical Wirtinger Jacobians), the JAX identity ``backward(g) == conj(jax.vjp(f)(conj g))``
(NOTE [Conjugate Wirtinger convention]), and MyGrad-style hygiene: inputs and the incoming
gradient are not mutated, gradients do not alias inputs, the graph is freed afterwards.
"""
import gc
import weakref

import jax
import jax.numpy as jnp
import numpy as np

from .._creation import tensor
from .._tensor import Tensor
from ..autograd import grad as _grad
from ..autograd.gradcheck import _random_like, gradcheck, gradgradcheck
from ._asserts import assert_close, make_tensor

__all__ = ["dtype_cases", "check_op", "assert_jax_identity", "shapes", "broadcastable_pair", "values",
           "tensors", "to_np", "well_separated", "assert_close", "make_tensor"]


def to_np(t):
    return np.asarray(t._data)


def dtype_cases(rows, dtypes_at, dtypes=(np.float64, np.complex128)):
    """``pytest.mark.parametrize`` arguments for an op table whose rows list the dtypes
    they take at index ``dtypes_at``: one case ``(*row, dtype)`` per row and dtype it
    takes, ids ``"<f64|c128>-<row name>"``.

    >>> dtype_cases([("neg", (np.float64,)), ("conj", (np.complex128,))], 1)["ids"]
    ['f64-neg', 'c128-conj']
    """
    cases = [(*row, d) for d in dtypes for row in rows if d in row[dtypes_at]]
    ids = [f"{'c' if np.dtype(c[-1]).kind == 'c' else 'f'}{np.dtype(c[-1]).itemsize * 8}-"
           f"{c[0]}" for c in cases]
    return {"argvalues": cases, "ids": ids}




def assert_jax_identity(wfn, jfn, inputs, rtol=1e-6, atol=1e-8, seed=0):
    """wgrad's gradients for a random grad_output ``g`` equal ``conj(vjp(conj g))`` of
    the JAX function ``jfn`` (same arguments, as jax arrays)."""
    rng = np.random.default_rng(seed)
    diff = [i for i, x in enumerate(inputs) if isinstance(x, Tensor) and x.requires_grad]
    outs = wfn(*inputs)
    outs = outs if isinstance(outs, (tuple, list)) else (outs,)
    dout = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
    gs = [np.asarray(_random_like(rng, tuple(o.shape), o._data.dtype), o._data.dtype)
          for o in dout]
    wg = _grad(dout, [inputs[i] for i in diff], [tensor(g, dtype=o.dtype)
                                                for g, o in zip(gs, dout)],
               allow_unused=True)

    raw = [x._data if isinstance(x, Tensor) else x for x in inputs]

    def f(*d):
        args = list(raw)
        for i, v in zip(diff, d):
            args[i] = v
        r = jfn(*args)
        r = r if isinstance(r, (tuple, list)) else (r,)
        return tuple(v for v, o in zip(r, outs) if isinstance(o, Tensor) and o.requires_grad)

    def reference(primals, cts):  # one compiled computation, not one per JAX primitive
        jouts, vjp = jax.vjp(f, *primals)
        return jouts, vjp(tuple(jnp.conj(c) for c in cts))

    jouts, jg = jax.jit(reference)([raw[i] for i in diff], [jnp.asarray(g) for g in gs])
    for jo, wo in zip(jouts, dout):
        np.testing.assert_allclose(np.asarray(jo), to_np(wo), rtol=rtol, atol=atol,
                                   err_msg="forward differs from the JAX function")
    for k, (a, b) in enumerate(zip(wg, jg)):
        expect = np.conj(np.asarray(b))
        got = np.zeros_like(expect) if a is None else to_np(a)
        np.testing.assert_allclose(got, expect, rtol=rtol, atol=atol,
                                   err_msg=f"gradient of input {diff[k]} != "
                                           f"conj(jax.vjp(conj g))")


def check_op(wfn, inputs, jfn=None, *, grad=True, gradgrad=True, fast_mode=False,
             atol=1e-5, rtol=1e-3):
    """gradcheck (+ gradgradcheck) ``wfn`` at ``inputs``, the JAX identity when ``jfn``
    is given, and hygiene: no mutation of inputs or of the incoming gradient, no aliasing
    of gradients with inputs, and the graph freed after backward."""
    inputs = tuple(inputs)
    before = [to_np(x).copy() if isinstance(x, Tensor) else None for x in inputs]
    if grad:
        assert gradcheck(wfn, inputs, atol=atol, rtol=rtol, fast_mode=fast_mode)
    if gradgrad:
        assert gradgradcheck(wfn, inputs, atol=atol, rtol=rtol, fast_mode=fast_mode)
    if jfn is not None:
        assert_jax_identity(wfn, jfn, inputs)
    for x, b in zip(inputs, before):
        if b is not None:
            np.testing.assert_array_equal(to_np(x), b, err_msg="an input was mutated")
    _check_hygiene(wfn, inputs)


def _check_hygiene(wfn, inputs):
    diff = [x for x in inputs if isinstance(x, Tensor) and x.requires_grad]
    out = wfn(*inputs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    outs = [o for o in outs if isinstance(o, Tensor) and o.requires_grad]
    if not outs:
        return
    node_ref = weakref.ref(outs[0].grad_fn) if outs[0].grad_fn is not None else None
    gos = [tensor(np.ones(tuple(o.shape)), dtype=o.dtype) for o in outs]
    g_before = [to_np(g).copy() for g in gos]
    gs = _grad(outs, diff, gos, allow_unused=True)
    for g, b in zip(gos, g_before):
        np.testing.assert_array_equal(to_np(g), b, err_msg="the incoming gradient was mutated")
    for g, x in zip(gs, diff):
        assert g is None or g is not x, "a gradient aliases its input"
    del out, outs, gos, gs
    if node_ref is not None:
        if node_ref() is not None:  # refcounting frees an acyclic graph; a full collection
            gc.collect()            # costs ~0.3 s in a long test process, so only if needed
        assert node_ref() is None, "the graph was not freed after backward"


# -- hypothesis strategies ---------------------------------------------------------------
# hypothesis is an optional dependency: the strategies import it when called

def shapes(min_dims=0, max_dims=3, min_side=1, max_side=3):
    from hypothesis.extra import numpy as hnp
    return hnp.array_shapes(min_dims=min_dims, max_dims=max_dims, min_side=min_side,
                            max_side=max_side)


def broadcastable_pair(max_dims=3, max_side=3):
    """Two shapes that broadcast together (0-d included)."""
    from hypothesis.extra import numpy as hnp
    return hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=max_dims,
                                             max_side=max_side).map(lambda r: r.input_shapes)


def values(dtype, shape, low=-2.0, high=2.0, avoid=None):
    """Arrays of ``dtype`` (real or complex) with elements in [low, high] (real and
    imaginary parts), kept at least 0.1 away from ``avoid`` points if given. No nonzero
    part is smaller than 1e-30 in magnitude (such a value reads as 0): a finite-difference
    step cannot resolve it, and products of a few of them underflow to zero."""
    from hypothesis import strategies as st
    from hypothesis.extra import numpy as hnp
    real = np.dtype(dtype).kind != "c"
    elems = st.floats(low, high, allow_nan=False, allow_infinity=False, width=64).map(
        lambda v: 0.0 if abs(v) < 1e-30 else v)
    part = hnp.arrays(np.float64, shape, elements=elems)
    if real:
        arr = part
    else:
        arr = st.tuples(part, part).map(lambda ab: ab[0] + 1j * ab[1])
    if avoid is not None:
        pts = np.atleast_1d(avoid)
        arr = arr.filter(lambda a: np.all(np.min(np.abs(np.asarray(a)[..., None] - pts),
                                                 axis=-1, initial=np.inf) > 0.1))
    return arr.map(lambda a: np.asarray(a, dtype))


def well_separated(a, gap=0.1, key=None):
    """True when the elements of ``a`` (or of ``key(a)``) lie more than ``gap`` apart, so
    that order statistics (sort, max, median, ...) keep their order under gradcheck's
    finite-difference steps: a filter for :func:`values`."""
    a = np.asarray(a)
    v = np.sort(np.ravel(a if key is None else key(a)))
    return v.size < 2 or np.min(np.abs(np.diff(v))) > gap


def tensors(dtype, shape, requires_grad=True, **kw):
    return values(dtype, shape, **kw).map(
        lambda a: tensor(a, dtype=np.dtype(dtype), requires_grad=requires_grad))
