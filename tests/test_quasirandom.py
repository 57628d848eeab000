"""wgrad.quasirandom.SobolEngine against torch.quasirandom.SobolEngine: unscrambled points
bit for bit (every dimension's direction numbers, draws, fast_forward, draw_base2, reset,
float32/float64, out=), attributes, repr and torch's errors; scrambled engines built by
torch's own code from wgrad's random numbers (torch.randint replaced by the draws wgrad
makes) equal wgrad's, and wgrad's scrambled points keep the net properties, seeds and
reset."""
import subprocess
import sys
from unittest import mock

import numpy as np
import pytest

import wgrad

torch = pytest.importorskip("torch")

W = wgrad.quasirandom.SobolEngine
T = torch.quasirandom.SobolEngine


def _same(w, t):
    assert str(w.dtype)[6:] == str(t.dtype)[6:]
    if t.dtype is torch.bfloat16:  # torch's numpy() has no bfloat16
        w, t = w.float(), t.float()
    a, b = w.numpy(), t.numpy()
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def _step(eng, lib, op, arg, dtype):
    """One engine call; the drawn tensor (or None)."""
    dt = None if dtype is None else getattr(lib, dtype)
    if op == "draw":
        return eng.draw(arg, dtype=dt)
    if op == "base2":
        return eng.draw_base2(arg, dtype=dt)
    if op == "ff":
        assert eng.fast_forward(arg) is eng
    else:
        assert eng.reset() is eng
    return None


def _run_both(w, t, ops):
    for op, arg, dtype in ops:
        rw, rt = _step(w, wgrad, op, arg, dtype), _step(t, torch, op, arg, dtype)
        if rt is not None:
            _same(rw, rt)
            assert not rw.requires_grad and rw.grad_fn is None
        _same(w.quasi, t.quasi)
        assert w.num_generated == t.num_generated


SEQUENCES = [  # (dimension, [(op, n or m, dtype)])
    (1, [("draw", 1, None), ("draw", 7, None), ("draw", 8, "float64")]),
    (2, [("draw", 5, "float64"), ("ff", 3, None), ("draw", 1, None), ("draw", 0, None)]),
    (3, [("ff", 1, None), ("draw", 4, None), ("reset", None, None), ("draw", 2, None)]),
    (3, [("ff", 0, None), ("draw", 2, None), ("ff", 0, None), ("draw", 1, None)]),
    (3, [("ff", -1, None), ("draw", 3, None), ("ff", 2, None), ("draw", 2, None)]),
    (3, [("ff", -3, None), ("ff", 4, None), ("draw", 2, "float64")]),
    (7, [("base2", 0, None), ("base2", 0, None), ("base2", 1, None), ("base2", 2, "float64")]),
    (40, [("base2", 5, "float64"), ("reset", None, None), ("draw", 3, None),
          ("ff", 29, None), ("base2", 5, None)]),
    # all of torch's first 1111 dimensions, drawn in several chunks
    (1111, [("draw", 2000, None), ("ff", 48, None), ("base2", 11, "float64")]),
    (21201, [("ff", 1000, None), ("draw", 3, "float64"), ("draw", 2, None)]),
    (5, [("ff", 2 ** 25 + 7, None), ("draw", 300, None)]),  # 30-bit ints rounded to float32
]


@pytest.mark.parametrize("dim,ops", SEQUENCES, ids=[f"{d}-{i}" for i, (d, _) in
                                                     enumerate(SEQUENCES)])
def test_unscrambled_as_torch(dim, ops):
    w, t = W(dim), T(dim)
    _same(w.sobolstate, t.sobolstate)
    _run_both(w, t, ops)


def test_direction_numbers_are_torchs():
    """SciPy's Joe-Kuo table gives torch's sobolstate for all 21201 dimensions."""
    _same(W(21201).sobolstate, T(21201).sobolstate)


def _drawn(eng, n):
    eng.draw(n)
    return eng


ERRORS = {
    "dim0": lambda S, L: S(0),
    "dim_big": lambda S, L: S(21202),
    "dim_float": lambda S, L: S(2.5),
    "dim_bool": lambda S, L: S(True),
    "dim_str": lambda S, L: S("3"),
    "draw0_first": lambda S, L: S(3).draw(0),
    "draw_negative": lambda S, L: S(3).draw(-1),
    "draw_negative_later": lambda S, L: _drawn(S(3), 2).draw(-2),
    "draw_float": lambda S, L: S(3).draw(2.5),
    "draw_bool_later": lambda S, L: _drawn(S(3), 1).draw(True),
    "ff_float": lambda S, L: S(3).fast_forward(2.5),
    "ff_bool_later": lambda S, L: _drawn(S(3), 1).fast_forward(True),
    "half": lambda S, L: S(3).draw(2, dtype=L.float16),
    "bfloat16": lambda S, L: S(3).draw(2, dtype=L.bfloat16),
    "long": lambda S, L: S(3).draw(2, dtype=L.int64),
    "complex": lambda S, L: S(3).draw(2, dtype=L.complex64),
    "half_later": lambda S, L: _drawn(S(3), 1).draw(1, dtype=L.float16),
    "negative_before_dtype": lambda S, L: S(3).draw(-1, dtype=L.float16),
    "base2_unbalanced": lambda S, L: _drawn(S(3), 1).draw_base2(1),
    "base2_unbalanced_3": lambda S, L: _drawn(S(3), 3).draw_base2(2),
    "base2_negative": lambda S, L: S(3).draw_base2(-1),
    "base2_float": lambda S, L: S(3).draw_base2(1.5),
    "seed_float": lambda S, L: S(3, scramble=True, seed=1.5),
    "seed_bool": lambda S, L: S(3, scramble=True, seed=True),
    "seed_numpy": lambda S, L: S(3, scramble=True, seed=np.int64(3)),
    "seed_big": lambda S, L: S(3, scramble=True, seed=2 ** 64),
    "seed_small": lambda S, L: S(3, scramble=True, seed=-2 ** 63 - 1),
    "out_requires_grad": lambda S, L: S(2).draw(3, out=L.empty(5, requires_grad=True)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_as_torch(name):
    got = []
    for S, L in ((W, wgrad), (T, torch)):
        with pytest.raises(Exception) as info:
            ERRORS[name](S, L)
        got.append((type(info.value), str(info.value)))
    assert got[0] == got[1]


ACCEPTED = {  # calls both accept: the results compared
    "first_bool": lambda S, L: S(3).draw(True),
    "numpy_n": lambda S, L: S(3).draw(np.int64(3)),
    "numpy_dim": lambda S, L: S(np.int64(3)).draw(2),
    "ff_bool_first": lambda S, L: S(3).fast_forward(True).draw(2),
    "first_half": lambda S, L: S(3).draw(1, dtype=L.float16),
    "first_long": lambda S, L: S(3).draw(1, dtype=L.int64),
    "unscrambled_float_seed": lambda S, L: S(3, seed=1.5).draw(2),
    "base2_after_draw": lambda S, L: _drawn(S(3), 2).draw_base2(1),
    "empty_later": lambda S, L: _drawn(S(3), 2).draw(0),
    "out_empty": lambda S, L: S(2).draw(3, out=L.empty(0)),
    "out_double": lambda S, L: S(2).draw(3, out=L.empty(5, dtype=L.float64)),
    "out_base2": lambda S, L: S(2).draw_base2(2, out=L.zeros(4, 2)),
}


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_accepted_as_torch(name):
    _same(ACCEPTED[name](W, wgrad), ACCEPTED[name](T, torch))


def test_out_is_returned():
    for S, L in ((W, wgrad), (T, torch)):
        out = L.empty(0)
        assert S(2).draw(3, out=out) is out


def test_state_tensors_as_torch():
    """draw gives a new quasi; fast_forward and reset change it in place (reset as a
    copy_, which counts a version); draw(1) of the first point returns _first_point."""
    got = []
    for S in (W, T):
        e = S(2)
        first = e.draw()
        out = [first is e._first_point]
        q = e.quasi
        e.draw(3)
        out += [e.quasi is q]
        q = e.quasi
        e.fast_forward(3)
        out += [e.quasi is q, q._version]
        e.reset()
        out += [e.quasi is q, q._version, e.shift is not q]
        got.append(out)
    assert got[0] == got[1]


@pytest.mark.parametrize("kw", [{"dimension": 4}, {"dimension": 4, "seed": 2},
                                {"dimension": 3, "scramble": True, "seed": 3},
                                {"dimension": 1, "scramble": False, "seed": 0}])
def test_repr_and_attributes(kw):
    w, t = W(**kw), T(**kw)
    assert repr(w) == repr(t)
    assert sorted(vars(w)) == sorted(vars(t))
    for name in ("dimension", "scramble", "seed", "num_generated", "MAXBIT", "MAXDIM"):
        assert getattr(w, name) == getattr(t, name), name
    for name in ("sobolstate", "shift", "quasi", "_first_point"):
        a, b = getattr(w, name), getattr(t, name)
        assert (a.dtype, tuple(a.shape)) == (getattr(wgrad, str(b.dtype)[6:]), tuple(b.shape))


def _torch_from_draws(draws, *a, **kw):
    """torch's engine, its torch.randint calls answered by ``draws`` (numpy arrays)."""
    queue = [torch.from_numpy(np.array(d)) for d in draws]
    with mock.patch.object(torch, "randint", lambda *_, **__: queue.pop(0)):
        t = T(*a, **kw)
    assert not queue
    return t


def _wgrad_draws(dim, seed):
    g = wgrad.Generator().manual_seed(seed)
    return [wgrad.randint(2, (dim, 30), generator=g).numpy(),
            wgrad.randint(2, (dim, 30, 30), generator=g).numpy()]


SCRAMBLED = [  # (dimension, seed, (init default dtype, draw dtype))
    (1, 0, ("float32", None)), (5, 7, ("float32", "float64")),
    (64, 123, ("float64", None)), (300, 2 ** 40, ("float64", "float32")),
    (16, 9, ("float16", "float64")), (16, 10, ("bfloat16", None)),  # the first point: inf
]


@pytest.mark.parametrize("dim,seed,dtypes", SCRAMBLED)
def test_scrambled_is_torchs_algorithm(dim, seed, dtypes):
    """torch's code given wgrad's random bits builds wgrad's engine: scrambled direction
    numbers, shift, first point (in the default dtype at creation) and every draw."""
    init, dt = dtypes
    try:
        torch.set_default_dtype(getattr(torch, init))
        wgrad.set_default_dtype(getattr(wgrad, init))
        w = W(dim, scramble=True, seed=seed)
        t = _torch_from_draws(_wgrad_draws(dim, seed), dim, scramble=True, seed=seed)
    finally:
        torch.set_default_dtype(torch.float32)
        wgrad.set_default_dtype(wgrad.float32)
    for name in ("sobolstate", "shift", "quasi", "_first_point"):
        _same(getattr(w, name), getattr(t, name))
    _run_both(w, t, [("draw", 1, dt), ("draw", 9, dt), ("ff", 6, None), ("base2", 4, dt),
                     ("reset", None, None), ("draw", 32, dt), ("base2", 5, dt)])


def test_scrambled_with_the_global_generator():
    wgrad.manual_seed(5)
    w = W(4, scramble=True)
    wgrad.manual_seed(5)
    draws = [wgrad.randint(2, (4, 30)).numpy(), wgrad.randint(2, (4, 30, 30)).numpy()]
    _run_both(w, _torch_from_draws(draws, 4, scramble=True), [("draw", 16, "float64")])


def test_float32_rounds_as_torch_near_one():
    """Shift bits all ones: 2**30 - 1 and its neighbours round to 1.0 in float32."""
    draws = [np.ones((3, 30), np.int64), np.tril(np.ones((3, 30, 30), np.int64))]
    t = _torch_from_draws(draws, 3, scramble=True, seed=1)
    with mock.patch.object(wgrad.quasirandom, "randint",
                           lambda *_, **__: wgrad.tensor(draws.pop(0))):
        w = W(3, scramble=True, seed=1)
    assert t.draw(1).max() == 1.0
    t.reset()
    _run_both(w, t, [("draw", 5, None), ("reset", None, None), ("draw", 5, "float64")])


def _scrambled_points(seed, m, dim=6):
    return W(dim, scramble=True, seed=seed).draw_base2(m, dtype=wgrad.float64).numpy()


@pytest.mark.parametrize("seed,m", [(0, 0), (1, 3), (2, 7), (3, 10)])
def test_scrambled_nets(seed, m):
    """Scrambling keeps Sobol's nets: 2**m points put one in each dyadic interval of
    length 2**-m of every coordinate, and the first two coordinates form a (0, m, 2)-net
    (one point in each dyadic box of area 2**-m); so do the next 2**m points."""
    eng = W(6, scramble=True, seed=seed)
    for _ in range(2):
        x = eng.draw_base2(m, dtype=wgrad.float64).numpy()
        assert ((x >= 0) & (x < 1)).all()
        cells = np.floor(x * 2 ** m).astype(np.int64)
        for c in cells.T:
            np.testing.assert_array_equal(np.sort(c), np.arange(2 ** m))
        for k in range(m + 1):
            boxes = np.floor(x[:, 0] * 2 ** k) * 2 ** (m - k) + np.floor(x[:, 1] * 2 ** (m - k))
            assert len(np.unique(boxes)) == 2 ** m


def test_scrambled_seeds_and_reset():
    a, b, c = (W(5, scramble=True, seed=s) for s in (3, 3, 4))
    xa, xb, xc = a.draw(32), b.draw(32), c.draw(32)
    _same(xa, xb)
    assert not np.array_equal(xa.numpy(), xc.numpy())
    _same(a.reset().draw(32), xa)
    _same(a.reset().fast_forward(7).draw(25), xa[7:])
    assert (xa[1:] != 0).all()  # the shift moves the origin
    for seed in (-1, 2 ** 64 - 1, -2 ** 63):  # torch's seed range; negative ones wrap
        np.testing.assert_array_equal(W(2, scramble=True, seed=seed).draw(4).numpy(),
                                      W(2, scramble=True, seed=seed % 2 ** 64).draw(4).numpy())


def test_the_last_points_as_torch():
    """The last points of the sequence (torch's engine set to wgrad's state after the
    fast_forward, which torch takes a billion steps for)."""
    w, t = W(3), T(3)
    w.fast_forward(2 ** 30 - 3)
    t.quasi, t.num_generated = torch.from_numpy(w.quasi.numpy().copy()), w.num_generated
    _run_both(w, t, [("draw", 1, None), ("draw", 2, "float64")])


@pytest.mark.parametrize("start,n", [(2 ** 30 - 1, 2), (2 ** 30, 1), (0, 2 ** 30 + 1),
                                     (5, 2 ** 31)])
def test_past_the_sequence_raises(start, n):
    """torch reads past its direction numbers after 2**30 points; wgrad raises."""
    eng = W(2)
    if start:
        eng.fast_forward(start)
    with pytest.raises(RuntimeError, match=r"2\*\*30 points"):
        eng.draw(n) if n < 2 ** 30 else eng.fast_forward(n)
    assert eng.num_generated == start


def test_import_is_cheap():
    """``import wgrad`` reads no direction numbers and the first engine imports no
    scipy.stats."""
    code = ("import sys, wgrad; q = wgrad.quasirandom; assert not q._TABLE; "
            "q.SobolEngine(2); assert q._TABLE; assert 'scipy.stats' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
