"""What a call does in wgrad and in torch, in one comparable form (the torch-comparison
tables of tests/ops)."""
import warnings

import numpy as np


def outcome(T, fn):
    """``fn(T)`` with warnings silenced: its results as a list, or ``(exception type name,
    message)`` of what it raised (torch's ``_LinAlgError`` named as wgrad's
    ``LinAlgError``, without torch's "Triggered internally" suffix)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            r = fn(T)
    except Exception as e:  # noqa: BLE001  (the exception is the value compared)
        name = type(e).__name__
        return ("LinAlgError" if name == "_LinAlgError" else name,
                str(e).split(" (Triggered internally at ")[0])
    return list(r) if isinstance(r, (tuple, list)) else [r]


def arrays(T, fn):
    """``fn(T)`` as a flat list of numpy arrays (tuples of results flattened), or ``(exception
    type name, message)`` as :func:`outcome` gives it."""
    r = outcome(T, fn)
    if isinstance(r, tuple):
        return r
    flat = []
    for x in r:
        flat.extend(x if isinstance(x, (tuple, list)) else (x,))
    return [x.detach().resolve_conj().numpy() if hasattr(x, "detach") else np.asarray(x)
            for x in flat]


def assert_arrays_agree(a, b):
    """Two :func:`arrays` results (wgrad's, torch's) hold the same shapes, dtypes and
    values: exact for integers and bools, else to single or double precision."""
    assert not isinstance(b, tuple), b
    assert not isinstance(a, tuple), a
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert x.shape == y.shape and x.dtype == y.dtype, (x, y)
        if x.dtype.kind in "fc":
            single = x.dtype in (np.float16, np.float32, np.complex64)
            np.testing.assert_allclose(x, y, rtol=1e-5 if single else 1e-6,
                                       atol=1e-6 if single else 1e-8)
        else:
            np.testing.assert_array_equal(x, y)


def grads(T, fn, xs, seed=5):
    """The gradients with respect to ``xs`` of the outputs of ``fn(T, *xs)`` that require
    grad, for seeded upstream gradients (complex ones for complex outputs)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = fn(T, *xs)
    rs = [t for t in (r if isinstance(r, (tuple, list)) else (r,)) if t.requires_grad]
    rng = np.random.default_rng(seed)
    gs = [T.tensor(rng.standard_normal(tuple(t.shape)) * (1 + 1j if t.is_complex() else 1),
                   dtype=t.dtype) for t in rs]
    return T.autograd.grad(rs, xs, gs)


def assert_grads_agree(a, b):
    """Two :func:`grads` results (wgrad's, torch's) agree to double precision."""
    assert len(a) == len(b)
    for x, y in zip(a, b):
        np.testing.assert_allclose(x.numpy(), y.resolve_conj().numpy(), rtol=1e-6, atol=1e-8)
