"""``assert_close`` and ``make_tensor``, as torch.testing has them."""
import collections.abc
import math
import warnings

import numpy as np

from .. import _creation, _dtype
from .._tensor import Tensor

__all__ = ["assert_close", "make_tensor"]

# torch.testing's default (rtol, atol) per dtype; integers and bool compare exactly
_TOLERANCES = {"float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5),
               "float32": (1.3e-6, 1e-5), "float64": (1e-7, 1e-7),
               "complex64": (1.3e-6, 1e-5), "complex128": (1e-7, 1e-7)}


def _tolerances(*dtypes):
    rtols, atols = zip(*(_TOLERANCES.get(d.name, (0.0, 0.0)) for d in dtypes))
    return max(rtols), max(atols)


def _fmt_index(flat, shape):
    return str(tuple(int(i) for i in np.unravel_index(flat, shape)))


def _item(v):
    """A numpy scalar as the Python number torch's ``.item()`` would print."""
    return v.item()


def _tensor_message(a, e, mismatches, rtol, atol, exact):
    kind = "equal" if exact else "close"
    n, total = int(mismatches.sum()), mismatches.size
    a = a.astype(np.int64) if a.dtype == np.bool_ else a
    e = e.astype(np.int64) if e.dtype == np.bool_ else e
    abs_diff = np.abs(a - e)
    with np.errstate(divide="ignore", invalid="ignore"):
        if abs_diff.dtype.kind in "iu":
            fdt = _dtype.get_default_dtype().np
            rel_diff = abs_diff.astype(fdt) / np.abs(e).astype(fdt)
        else:
            rel_diff = abs_diff / np.abs(e)
        ia, ir = np.argmax(abs_diff.ravel()), np.argmax(rel_diff.ravel())
    abs_tol = "" if exact else f" (up to {atol} allowed)"
    rel_tol = "" if exact else f" (up to {rtol} allowed)"
    return (f"Tensor-likes are not {kind}!\n\n"
            f"Mismatched elements: {n} / {total} ({n / total:.1%})\n"
            f"Greatest absolute difference: {_item(abs_diff.ravel()[ia])} at index "
            f"{_fmt_index(ia, a.shape)}{abs_tol}\n"
            f"Greatest relative difference: {_item(rel_diff.ravel()[ir])} at index "
            f"{_fmt_index(ir, a.shape)}{rel_tol}")


def _scalar_message(a, e, rtol, atol, exact):
    kind = "equal" if exact else "close"
    diff = abs(a - e)
    rel = diff / abs(e) if e != 0 else math.inf
    abs_tol = "" if exact else f" (up to {atol} allowed)"
    rel_tol = "" if exact else f" (up to {rtol} allowed)"
    return (f"Scalars are not {kind}!\n\nExpected {e} but got {a}.\n"
            f"Absolute difference: {diff}{abs_tol}\nRelative difference: {rel}{rel_tol}")


def _close_mask(a, e, rtol, atol, equal_nan):
    with np.errstate(invalid="ignore", over="ignore"):
        close = a == e
        if equal_nan and a.dtype.kind in "fc":
            close |= np.isnan(a) & np.isnan(e)
        if rtol or atol:
            err = np.abs(a - e)
            close |= np.isfinite(err) & (err <= atol + rtol * np.abs(e))
    return close


def _compare(actual, expected, rtol, atol, equal_nan, check_dtype):
    """The failure message for one pair of leaves, or None when they match."""
    if isinstance(actual, Tensor) or isinstance(expected, Tensor):
        if not (isinstance(actual, Tensor) and isinstance(expected, Tensor)):
            return None, TypeError(f"No comparison pair was able to handle inputs of type "
                                   f"{type(actual)} and {type(expected)}.")
        if tuple(actual.shape) != tuple(expected.shape):
            return (f"The values for attribute 'shape' do not match: {actual.shape!r} != "
                    f"{expected.shape!r}."), None
        if check_dtype and actual.dtype != expected.dtype:
            return (f"The values for attribute 'dtype' do not match: {actual.dtype!r} != "
                    f"{expected.dtype!r}."), None
        tol = _tolerances(actual.dtype, expected.dtype)
        a, e = np.asarray(actual._data), np.asarray(expected._data)
        if a.dtype != e.dtype:
            common = np.promote_types(a.dtype, e.dtype)
            a, e = a.astype(common), e.astype(common)
        scalar = a.ndim == 0
    elif isinstance(actual, (bool, int, float, complex)) and \
            isinstance(expected, (bool, int, float, complex)):
        if check_dtype and type(actual) is not type(expected):
            return (f"The values for attribute 'dtype' do not match: "
                    f"{_py_dtype(actual)!r} != {_py_dtype(expected)!r}."), None
        kinds = {type(actual), type(expected)}
        tol = (0.0, 0.0) if kinds <= {bool, int} else _TOLERANCES["float64"]
        a, e = np.asarray(actual), np.asarray(expected)
        scalar = True
    else:
        return None, TypeError(f"No comparison pair was able to handle inputs of type "
                               f"{type(actual)} and {type(expected)}.")
    rtol_, atol_ = tol if rtol is None else (rtol, atol)
    if _close_mask(a, e, rtol_, atol_, equal_nan).all():
        return None, None
    exact = rtol_ == 0 and atol_ == 0
    if scalar:
        return _scalar_message(_item(a), _item(e), rtol_, atol_, exact), None
    return _tensor_message(a, e, ~_close_mask(a, e, rtol_, atol_, equal_nan), rtol_, atol_,
                           exact), None


def _py_dtype(v):
    return {bool: _dtype.bool, int: _dtype.int64, float: _dtype.float64,
            complex: _dtype.complex128}[type(v)]


def _pairs(actual, expected, path):
    """Leaves of two nested sequences / mappings, with torch's location suffix."""
    if isinstance(actual, collections.abc.Mapping) and \
            isinstance(expected, collections.abc.Mapping):
        if set(actual) != set(expected):
            raise AssertionError(f"The keys of the mappings do not match:\n"
                                 f"Missing keys in the actual mapping: "
                                 f"{sorted(set(expected) - set(actual))}\n"
                                 f"Additional keys in the actual mapping: "
                                 f"{sorted(set(actual) - set(expected))}")
        for k in expected:
            yield from _pairs(actual[k], expected[k], path + [repr(k)])
        return
    seq = (collections.abc.Sequence,)
    if isinstance(actual, seq) and isinstance(expected, seq) and \
            not isinstance(actual, str) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise AssertionError(f"The length of the sequences mismatch: {len(actual)} != "
                                 f"{len(expected)}")
        for i, (a, e) in enumerate(zip(actual, expected)):
            yield from _pairs(a, e, path + [str(i)])
        return
    yield actual, expected, path


def assert_close(actual, expected, *, allow_subclasses=True, rtol=None, atol=None,
                 equal_nan=False, check_device=True, check_dtype=True, check_layout=True,
                 check_stride=False, msg=None):
    """Assert that ``actual`` and ``expected`` (tensors, numbers, or nested sequences and
    mappings of them) are close: ``|actual - expected| <= atol + rtol * |expected|``.

    Without ``rtol``/``atol`` the tolerances are torch's defaults for the dtype (exact for
    integers and bool); shapes and, with ``check_dtype``, dtypes must match. A failure
    raises AssertionError with torch's report (``msg`` replaces it; a callable ``msg``
    receives it).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.testing import assert_close
    >>> assert_close(wgrad.tensor([1.0, 2.0]), wgrad.tensor([1.0, 2.0 + 1e-7]))
    """
    if (rtol is None) != (atol is None):
        raise ValueError(f"Both 'rtol' and 'atol' must be either specified or omitted, but "
                         f"got no {'rtol' if rtol is None else 'atol'}.")
    for a, e, path in _pairs(actual, expected, []):
        message, error = _compare(a, e, rtol, atol, equal_nan, check_dtype)
        if error is not None:
            raise error
        if message is None:
            continue
        if path:
            message += "\n\nThe failure occurred for item " + "".join(f"[{p}]" for p in path)
        if callable(msg):
            message = msg(message)
        elif msg is not None:
            message = msg
        raise AssertionError(message)


def make_tensor(*shape, dtype, device=None, low=None, high=None, requires_grad=False,
                noncontiguous=False, exclude_zero=False, memory_format=None):
    """A random tensor of ``shape`` and ``dtype`` with values in ``[low, high)`` (torch's
    defaults: [-9, 9] for numbers, [0, 9] for unsigned; both parts of a complex number).

    ``exclude_zero`` replaces zeros by 1 (integers) or the dtype's smallest normal number;
    ``noncontiguous`` and ``memory_format`` are accepted (wgrad has no strides).

    Example
    -------
    >>> import wgrad
    >>> from wgrad.testing import make_tensor
    >>> t = make_tensor(2, 3, dtype=wgrad.float64, low=0, high=1)
    >>> tuple(t.shape), bool((t >= 0).all() and (t < 1).all())
    ((2, 3), True)
    """
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    dt = _dtype.as_dtype(dtype)
    npd = dt.np
    if requires_grad and npd.kind not in "fc":
        raise ValueError(f"`requires_grad=True` is not supported for boolean and integral "
                         f"dtypes, but got dtype={dt!r}")
    rng = _creation._rng(None)
    if npd.kind == "b":
        data = rng.integers(0, 2, size=shape).astype(npd)
    else:
        info = np.iinfo(npd) if npd.kind in "iu" else np.finfo(
            np.float32 if dt.name == "bfloat16" else npd.type(0).real.dtype)
        lo = (0 if npd.kind == "u" else -9) if low is None else low
        hi = 10 if high is None and npd.kind in "iu" else (9 if high is None else high)
        if (isinstance(lo, float) and math.isnan(lo)) or \
                (isinstance(hi, float) and math.isnan(hi)):
            raise ValueError(f"`low` and `high` cannot be NaN, but got low={lo} and high={hi}")
        if npd.kind in "fc" and lo == hi:
            warnings.warn("Passing `low==high` to `torch.testing.make_tensor` for floating "
                          "or complex types is deprecated since 2.1 and will be removed in "
                          "2.3. Use `torch.full(...)` instead.", FutureWarning, stacklevel=2)
        elif lo >= hi:
            raise ValueError(f"`low` must be less than `high`, but got {lo} >= {hi}")
        lo, hi = max(lo, info.min), min(hi, info.max)
        if npd.kind in "iu":
            data = rng.integers(lo, hi, size=shape).astype(npd)
        else:
            def draw():
                return rng.uniform(lo, hi, size=shape) if lo != hi else np.full(shape, lo)
            data = draw() + 1j * draw() if npd.kind == "c" else draw()
            data = np.asarray(data).astype(npd)
        if exclude_zero:
            data = np.where(data == 0, 1 if npd.kind in "iu" else info.tiny, data).astype(npd)
    t = _creation.tensor(data, dtype=dt, device=device)
    if requires_grad:
        t.requires_grad_(True)
    return t
