"""Run one call the same way on torch and on wgrad (``import wgrad as torch``) and compare
outputs and input gradients for a random incoming gradient."""
import numpy as np

import wgrad
from wgrad.testing import to_np


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") and not isinstance(t, wgrad.Tensor) \
        else to_np(t)


def run(lib, call, arrays, seed=0):
    xs = [lib.tensor(a, requires_grad=np.asarray(a).dtype.kind in "fc") for a in arrays]
    out = call(lib, *xs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    rng = np.random.default_rng(seed)
    loss = None
    for o in outs:
        if o.dtype.is_floating_point or o.dtype.is_complex:
            g = rng.standard_normal(tuple(o.shape))
            term = (o * lib.tensor(g, dtype=o.dtype)).real.sum() if o.dtype.is_complex \
                else (o * lib.tensor(g, dtype=o.dtype)).sum()
            loss = term if loss is None else loss + term
    grads = []
    if loss is not None and loss.requires_grad:
        loss.backward()
        grads = [None if x.grad is None else _np(x.grad) for x in xs]
    return [_np(o) for o in outs], grads


def compare(call, arrays, rtol=1e-7, atol=1e-9, grad=True):
    torch = __import__("torch")
    ow, gw = run(wgrad, call, arrays)
    ot, gt = run(torch, call, arrays)
    assert len(ow) == len(ot)
    for a, b in zip(ow, ot):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
    if grad:
        for a, b in zip(gw, gt):
            if b is None:
                continue
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol)
