"""isclose / allclose / equal against torch: tolerances, nan and inf, complex, integer and
bool inputs, broadcasting, and torch's errors."""
import math

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

NAN, INF = math.nan, math.inf
PAIRS = [
    ("float32", [1.0, NAN, INF, -INF, 1e-9, 1.0], [1.00001, NAN, INF, INF, 0.0, 1.0000099]),
    ("float64", [1.0, NAN, 2.0], [1.00001, NAN, 2.0 + 1e-7]),
    ("complex128", [1 + 1j, complex(NAN, 1), 2j], [1 + 1.000001j, complex(1, NAN), 2.00003j]),
    ("int64", [1, 2, 100000], [1, 3, 100001]),
    ("bool", [True, False], [True, True]),
]
TOLS = [{}, {"rtol": 0.5}, {"atol": 1.0, "rtol": 0.0}, {"rtol": 0.0, "atol": 0.0},
        {"equal_nan": True}]


def _call(lib, fn, dt, a, b, kw):
    d = getattr(lib, dt)
    return getattr(lib, fn)(lib.tensor(a, dtype=d), lib.tensor(b, dtype=d), **kw)


@pytest.mark.parametrize("dt,a,b", PAIRS)
@pytest.mark.parametrize("kw", TOLS)
def test_isclose_allclose_match_torch(dt, a, b, kw):
    got = _call(wgrad, "isclose", dt, a, b, kw)
    want = _call(torch, "isclose", dt, a, b, kw)
    assert got.dtype == wgrad.bool
    np.testing.assert_array_equal(np.asarray(got._data), want.numpy())
    if dt not in ("int64", "bool"):  # torch's allclose refuses these without tolerances
        assert _call(wgrad, "allclose", dt, a, b, kw) == _call(torch, "allclose", dt, a, b, kw)


def test_equal_and_broadcast():
    for lib in (wgrad, torch):
        assert lib.equal(lib.ones(2), lib.ones(2))
        assert not lib.equal(lib.ones(2), lib.ones(3))
        assert lib.equal(lib.ones(2), lib.ones(2, dtype=lib.int64))
        assert not lib.equal(lib.tensor([NAN]), lib.tensor([NAN]))
        assert lib.allclose(lib.ones(2, 3), lib.ones(3))
        assert lib.ones(2).allclose(lib.ones(2) + 1e-9)
        assert lib.ones(2).isclose(lib.ones(2)).all()


def _err(f):
    try:
        f()
    except Exception as e:  # noqa: BLE001 - comparing whatever each library raises
        return type(e).__name__, str(e)
    return None


@pytest.mark.parametrize("case", [
    lambda lib: lib.isclose(lib.ones(2), lib.ones(2, dtype=lib.float64)),
    lambda lib: lib.isclose(lib.ones(2), lib.ones(2), rtol=-1),
    lambda lib: lib.isclose(lib.ones(2), lib.ones(2), atol=-1),
    lambda lib: lib.allclose(lib.ones(2), lib.ones(3)),
    lambda lib: lib.isclose(lib.ones(2), 2.0),
    lambda lib: lib.equal(lib.ones(2), [1.0, 1.0]),
])
def test_errors_match_torch(case):
    got, want = _err(lambda: case(wgrad)), _err(lambda: case(torch))
    assert got == want and got is not None
