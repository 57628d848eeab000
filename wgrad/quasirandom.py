"""``wgrad.quasirandom``: torch.quasirandom's ``SobolEngine``, (scrambled) Sobol sequences.

The state is torch's: ``sobolstate`` (the direction numbers of each dimension as 30-bit
integers, Joe and Kuo's D(6) table up to 21201 dimensions), ``quasi`` (the last point as
integers) and ``shift``; each point XORs into ``quasi`` the direction number of the
rightmost zero bit of its index (Gray-code order) and is ``quasi * 2**-30``, so unscrambled
sequences are torch's, bit for bit. The direction numbers are SciPy's copy of the same
table (``scipy/stats/_sobol_direction_numbers.npz``, JAX depends on SciPy), read on the
first engine. Scrambling (a random lower-triangular binary matrix per dimension and a
random digital shift, torch's algorithm) draws from wgrad's generator, so scrambled points
are not torch's numbers (docs/differences.md).

Example
-------
>>> wgrad.quasirandom.SobolEngine(2).draw(4)
tensor([[0.0000, 0.0000],
        [0.5000, 0.5000],
        [0.7500, 0.2500],
        [0.2500, 0.7500]])
"""
import importlib.util
import os
import threading

import numpy as np

from . import _dtype as D
from ._creation import Generator, randint, tensor
from .autograd.graph import increment_version

__all__ = ["SobolEngine"]

_MAXBIT = 30
_MAXDIM = 21201
_TABLE = {}
_TABLE_LOCK = threading.Lock()


def _direction_numbers():
    """SciPy's Joe-Kuo table ``(poly, vinit)``, loaded once (without importing SciPy)."""
    with _TABLE_LOCK:
        if not _TABLE:
            spec = importlib.util.find_spec("scipy")
            paths = list(spec.submodule_search_locations or []) if spec else []
            files = [os.path.join(p, "stats", "_sobol_direction_numbers.npz") for p in paths]
            found = [f for f in files if os.path.isfile(f)]
            if not found:
                raise RuntimeError("SobolEngine reads Joe and Kuo's direction numbers from "
                                   "SciPy (scipy/stats/_sobol_direction_numbers.npz), which "
                                   "was not found: install scipy")
            with np.load(found[0]) as z:
                _TABLE["poly"] = np.asarray(z["poly"], np.int64)
                _TABLE["vinit"] = np.asarray(z["vinit"], np.int64)
        return _TABLE["poly"], _TABLE["vinit"]


def _initial_state(dimension):
    """torch's ``_sobol_engine_initialize_state_``: Bratley and Fox's recurrence from the
    primitive polynomial ``poly[d]`` of degree ``m`` and its ``m`` initial numbers, each
    column then scaled by ``2**(MAXBIT-1-j)``; row 0 is all ones.

    Example
    -------
    >>> from wgrad.quasirandom import _initial_state
    >>> _initial_state(2)[:, :3].tolist()
    [[536870912, 268435456, 134217728], [536870912, 805306368, 671088640]]
    """
    poly, vinit = _direction_numbers()
    p = poly[:dimension]
    m = np.frexp(p.astype(np.float64))[1].astype(np.int64) - 1  # bit_length(p) - 1
    v = np.zeros((dimension, _MAXBIT), np.int64)
    deg = vinit.shape[1]
    v[:, :deg] = np.where(np.arange(deg) < m[:, None], vinit[:dimension], 0)
    v[0] = 1
    rows = np.arange(dimension)
    for j in range(1, _MAXBIT):
        act = (m <= j) & (rows > 0)
        if not act.any():
            continue
        a, ma, pa = rows[act], m[act], p[act]
        newv = v[a, j - ma]
        for k in range(int(ma.max())):
            take = (k < ma) & (((pa >> np.maximum(ma - 1 - k, 0)) & 1) == 1)
            newv ^= np.where(take, v[a, j - k - 1] << (k + 1), 0)
        v[a, j] = newv
    return v << np.arange(_MAXBIT - 1, -1, -1)


def _scrambled(sobolstate, ltm):
    """torch's ``_sobol_engine_scramble_``: each direction number (bits most significant
    first) times the dimension's lower-triangular binary matrix ``ltm`` (its diagonal
    taken as ones) over GF(2)."""
    k = np.arange(_MAXBIT)
    weights = np.where(k < k[:, None], np.int64(1) << (_MAXBIT - 1 - k), 0)
    rows = np.einsum("dpk,pk->dp", ltm, weights) + (np.int64(1) << (_MAXBIT - 1 - k))
    out = np.zeros_like(sobolstate)
    for p in range(_MAXBIT):
        parity = np.bitwise_count(rows[:, p:p + 1] & sobolstate) & 1
        out |= parity.astype(np.int64) << (_MAXBIT - 1 - p)
    return out


def _int_arg(op, n):
    """torch's argument parser for ``int64_t n`` (position 2 of the Sobol ops)."""
    if isinstance(n, bool) or not hasattr(type(n), "__index__"):
        raise TypeError(f"{op}(): argument 'n' (position 2) must be int, not "
                        f"{type(n).__name__}")
    return n.__index__()


def _check_period(start, n):
    """torch reads past a dimension's 30 direction numbers at an index with 30 trailing
    ones (the point after the first 2**30); wgrad raises instead."""
    first = max(start, 0)
    stop = start + n
    full = (1 << _MAXBIT) - 1
    bad = first + ((full - first) % (1 << _MAXBIT))  # first index >= first with 30 ones
    if bad < stop:
        raise RuntimeError(f"SobolEngine: a Sobol sequence has 2**{_MAXBIT} points; drawing "
                           f"or skipping past them is not supported (torch reads beyond its "
                           f"direction numbers there)")


def _steps(start, n):
    """The direction-number column each of the indices ``start..start+n-1`` XORs in:
    its rightmost zero bit (0 for a negative index, as torch's C loop)."""
    x = start + np.arange(n, dtype=np.int64)
    y = ~x
    low = (y & -y).astype(np.float64)
    return np.where(x < 0, 0, np.frexp(low)[1] - 1)


def _gray_xor(vt, a, b):
    """XOR of the direction numbers of the indices ``a <= x < b`` (``vt``: MAXBIT rows),
    by Gray codes: those of ``0 <= x < N`` XOR to the numbers of ``N ^ (N >> 1)``'s bits."""
    acc = np.zeros(vt.shape[1], np.int64)
    neg = max(0, min(0, b) - a)  # negative indices: column 0 each
    if neg % 2:
        acc ^= vt[0]
    a = max(a, 0)
    if b > a:
        bits = (a ^ (a >> 1)) ^ (b ^ (b >> 1))
        for j in range(_MAXBIT):
            if (bits >> j) & 1:
                acc ^= vt[j]
    return acc


def _draw(quasi, n, sobolstate, num_generated, dt):
    """torch's ``_sobol_engine_draw``: ``n`` points after ``quasi`` as ``dt`` values in
    [0, 1] (integer / 2**30) and the new ``quasi``."""
    dimension = sobolstate.shape[0]
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: "
                           f"[{n}, {dimension}]")
    if dt not in (D.float32, D.float64):
        raise NotImplementedError(f'"_sobol_engine_draw" not implemented for '
                                  f"'{dt.scalar_name}'")
    _check_period(num_generated, n)
    vt = np.ascontiguousarray(sobolstate.T)
    out = np.empty((n, dimension), dt.np)
    q = np.array(quasi, np.int64)
    chunk = max(1, (1 << 20) // max(dimension, 1))
    for i0 in range(0, n, chunk):
        i1 = min(n, i0 + chunk)
        walk = vt[_steps(num_generated + i0, i1 - i0)]
        walk[0] ^= q
        np.bitwise_xor.accumulate(walk, axis=0, out=walk)
        q = walk[-1].copy()
        out[i0:i1] = walk  # int64 -> float rounds to nearest, as torch's cast
    out *= dt.np.type(2.0 ** -_MAXBIT)
    return out, q


def _scaled(q, d):
    """torch's ``q / 2**MAXBIT`` of int64 ``q`` in the floating dtype ``d``: the integers
    cast to ``d`` (a half through float32, as c10 does), divided in float32 at least."""
    if d is D.float64:
        return q.astype(np.float64) * 2.0 ** -_MAXBIT
    with np.errstate(over="ignore"):  # a float16 overflows to inf, as torch's
        x = q.astype(np.float32).astype(d.np).astype(np.float32)
    return (x * np.float32(2.0 ** -_MAXBIT)).astype(d.np)


class SobolEngine:
    """torch.quasirandom.SobolEngine: draws (scrambled) Sobol sequences of ``dimension``
    (1 to 21201) coordinates in [0, 1) (float32 rounds the last 32 of 2**30 values up to
    1.0, as torch's).

    Parameters
    ----------
    dimension : int
        The number of coordinates of each point.
    scramble : bool
        Scramble the sequence (a random linear matrix scramble and digital shift, torch's
        algorithm) with wgrad's random numbers: not torch's points (docs/differences.md).
    seed : int, optional
        Seed of the scrambling's generator; the global generator when None.

    Example
    -------
    >>> eng = wgrad.quasirandom.SobolEngine(dimension=3)
    >>> eng.draw(3)
    tensor([[0.0000, 0.0000, 0.0000],
            [0.5000, 0.5000, 0.5000],
            [0.7500, 0.2500, 0.2500]])
    >>> eng.fast_forward(1).draw(1, dtype=wgrad.float64)
    tensor([[0.3750, 0.3750, 0.6250]], dtype=wgrad.float64)
    >>> eng
    SobolEngine(dimension=3)
    """

    MAXBIT = _MAXBIT
    MAXDIM = _MAXDIM

    def __init__(self, dimension, scramble=False, seed=None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        if isinstance(dimension, bool) or not hasattr(type(dimension), "__index__"):
            # torch's error from its torch.zeros(dimension, MAXBIT)
            raise TypeError("zeros() takes 1 positional argument but 2 were given")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _initial_state(dimension.__index__())
        if not self.scramble:
            shift = np.zeros(state.shape[0], np.int64)
        else:
            state, shift = self._scramble(state)
        self.sobolstate = tensor(state, dtype=D.int64)
        self.shift = tensor(shift, dtype=D.int64)
        self.quasi = tensor(shift, dtype=D.int64)
        d = D.get_default_dtype()
        self._first_point = tensor(_scaled(shift, d).reshape(1, -1), dtype=d)
        self.num_generated = 0

    def _scramble(self, state):
        """torch's scrambling, with wgrad's generator: a random digital shift and a random
        lower-triangular binary matrix per dimension."""
        g = None if self.seed is None else Generator().manual_seed(self.seed)
        d = state.shape[0]
        shift_bits = randint(2, (d, self.MAXBIT), generator=g).numpy()
        shift = shift_bits @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64))
        ltm = randint(2, (d, self.MAXBIT, self.MAXBIT), generator=g).numpy()
        return _scrambled(state, ltm), shift

    def _kernel(self, n, num_generated, dtype):
        n = _int_arg("_sobol_engine_draw", n)
        result, q = _draw(self.quasi.numpy(), n, self.sobolstate.numpy(), num_generated,
                          D.as_dtype(dtype))
        return result, tensor(q, dtype=D.int64)

    def draw(self, n=1, out=None, dtype=None):
        """The next ``n`` points, a ``(n, dimension)`` tensor of ``dtype`` (the default
        dtype when None; float32 or float64 unless a single first point).

        Example
        -------
        >>> wgrad.quasirandom.SobolEngine(1).draw(2, dtype=wgrad.float64)
        tensor([[0.0000],
                [0.5000]], dtype=wgrad.float64)
        """
        if dtype is None:
            dtype = D.get_default_dtype()
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                rest, self.quasi = self._kernel(n - 1, self.num_generated, dtype)
                first = self._first_point.numpy().astype(rest.dtype)
                result = tensor(np.concatenate((first, rest)), dtype=dtype)
        else:
            rest, self.quasi = self._kernel(n, self.num_generated - 1, dtype)
            result = tensor(rest, dtype=dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def draw_base2(self, m, out=None, dtype=None):
        """The next ``2**m`` points; the total drawn must stay a power of 2 (the balance
        of Sobol' points).

        Example
        -------
        >>> eng = wgrad.quasirandom.SobolEngine(2)
        >>> eng.draw_base2(1).shape, eng.draw_base2(1).shape
        (wgrad.Size([2, 2]), wgrad.Size([2, 2]))
        """
        n = 2 ** m
        total_n = self.num_generated + n
        if not (total_n & (total_n - 1) == 0):
            raise ValueError(
                "The balance properties of Sobol' points require "
                f"n to be a power of 2. {self.num_generated} points have been "
                f"previously generated, then: n={self.num_generated}+2**{m}={total_n}. "
                "If you still want to do this, please use "
                "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point; returns the engine.

        Example
        -------
        >>> eng = wgrad.quasirandom.SobolEngine(1)
        >>> _ = eng.draw(3)
        >>> eng.reset().num_generated
        0
        """
        self.quasi.data = tensor(self.shift.numpy(), dtype=D.int64)
        increment_version(self.quasi)  # as torch's quasi.copy_(shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n):
        """Skip ``n`` points (as drawing them); returns the engine.

        Example
        -------
        >>> wgrad.quasirandom.SobolEngine(1).fast_forward(2).draw(1)
        tensor([[0.7500]])
        """
        if self.num_generated == 0:
            steps, start = _int_arg("_sobol_engine_ff_", n - 1), self.num_generated
        else:
            steps, start = _int_arg("_sobol_engine_ff_", n), self.num_generated - 1
        if steps > 0:
            _check_period(start, steps)
            vt = np.ascontiguousarray(self.sobolstate.numpy().T)
            q = self.quasi.numpy() ^ _gray_xor(vt, start, start + steps)
            self.quasi.data = tensor(q, dtype=D.int64)  # in place, as torch's op
        self.num_generated += n
        return self

    def __repr__(self):
        fmt_string = [f"dimension={self.dimension}"]
        if self.scramble:
            fmt_string += ["scramble=True"]
        if self.seed is not None:
            fmt_string += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fmt_string) + ")"
