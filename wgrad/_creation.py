"""Tensor creation: tensor, zeros, ones, full, arange, linspace, eye, random draws."""
import builtins
import contextlib
import math
import operator
import threading

import jax
import jax.numpy as jnp
import jax.scipy.special as jsp
import numpy as np

from . import _dtype as D
from ._device import default_jax_device as _default_jax_device
from ._device import device as _dev
from ._device import cpu_only as _cpu_only, unguarded as _unguarded
from ._tensor import Size, Tensor, _make, _raw_data
from .ops._out import _CPP, no_derivative
from .ops._primitive import Primitive, check_broadcast
from .ops._primitive import _top_level
from .ops import _host_gemm
from .ops._promote import scalar_dtype
from .ops._promote import check_number
from .ops.shape import _new_size, as_strided, check_memory_format

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
           "normal", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
           "randn_like", "randint_like", "manual_seed", "seed", "initial_seed", "Generator",
           "default_generator",
           "get_rng_state", "set_rng_state", "scalar_tensor", "bernoulli", "multinomial",
           "poisson", "binomial", "tril_indices", "triu_indices", "empty_strided",
           "empty_permuted", "frombuffer", "hann_window", "hamming_window", "blackman_window",
           "bartlett_window", "kaiser_window"]


def _finish(data, requires_grad, device=None):
    if device is not None:
        data = jax.device_put(data, _dev(device).jax_device())
    t = _make(data)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _infer_dtype(np_arr, from_python):
    k = np_arr.dtype.kind
    if not from_python:
        return D.from_np(np_arr.dtype)
    if k == "b":
        return D.bool
    if k in "iu":
        return D.default_int()
    if k == "f":
        return D.get_default_dtype()
    if k == "c":
        return D.default_complex()
    raise TypeError(f"Could not infer dtype of {np_arr.dtype}")


def _to_numpy(data):
    if isinstance(data, Tensor):
        return np.asarray(data._data), False
    if isinstance(data, (np.ndarray, np.generic)):
        return np.asarray(data), False
    if isinstance(data, jax.Array):
        return data, False
    if isinstance(data, (list, tuple)):
        flat = [_to_numpy(x)[0] if isinstance(x, (Tensor, list, tuple)) else x for x in data]
        return np.asarray(flat), True
    return np.asarray(data), True


def tensor(data, dtype=None, device=None, requires_grad=False, pin_memory=False):
    """A new leaf tensor holding a copy of ``data`` (nested lists, numbers, arrays).

    Example
    -------
    >>> import wgrad
    >>> wgrad.tensor([1.0, 2.0], requires_grad=True)
    tensor([1., 2.], requires_grad=True)
    """
    arr, from_python = _to_numpy(data)
    if dtype is None:
        if isinstance(arr, jax.Array):
            d = D.from_np(arr.dtype)
        else:
            d = _infer_dtype(arr, from_python)
    else:
        d = D.check_x64(D.as_dtype(dtype))
    if not D.X64_ENABLED and d.name in ("float64", "complex128", "int64") and dtype is None:
        d = {"float64": D.float32, "complex128": D.complex64, "int64": D.int32}[d.name]
    if from_python and d.np.kind in "iu" and type(arr) is np.ndarray:
        _check_range(arr, d)
    return _finish(_from_host(arr, d.np), requires_grad, device)


_HALVES = (np.dtype(np.float16), np.dtype(D.bfloat16.np))


def _from_host(arr, dt, fresh=False):
    """A JAX array of NumPy dtype ``dt`` with the values of ``arr`` (a NumPy or JAX array;
    ``fresh``: a NumPy array nothing else holds, which JAX may take without a copy)."""
    if type(arr) is np.ndarray and np.can_cast(arr.dtype, dt, "same_kind") and _top_level():
        # NOTE [Tensors from host data]
        if arr.dtype == dt:
            host = arr if fresh else np.array(arr)
        else:
            with np.errstate(over="ignore"):  # 1e40 -> inf as torch: silently
                if dt in _HALVES and arr.dtype != np.float32:
                    arr = arr.astype(np.float32)  # torch's (and XLA's) way to a half
                host = arr.astype(dt)
        return _adopt(host)
    with np.errstate(invalid="ignore", over="ignore"):  # as PyTorch: no warning
        return jnp.array(arr, dtype=dt)


def _check_range(arr, d):
    """PyTorch's error for Python numbers out of an integer dtype's range (c10's
    ``overflows``): a float beyond it or NaN, an integer beyond it, where an unsigned dtype
    lets negative integers down to -max wrap (-1 as uint8 is 255)."""
    if arr.size == 0 or arr.dtype.kind not in "biuf":
        return
    info = np.iinfo(d.np)
    if arr.dtype.kind == "f":
        lo = 0 if d.np.kind == "u" else info.min
        bad = bool(np.isnan(arr).any()) or arr.min() < lo or arr.max() > info.max
    else:
        lo = -info.max if d.np.kind == "u" else info.min
        bad = int(arr.min()) < lo or int(arr.max()) > info.max
    if bad:
        raise RuntimeError(f"value cannot be converted to type {d.name} without overflow")


# NOTE [Tensors from host data]
# ``jnp.array`` of a NumPy array copies it by an XLA program (a convert per shape and
# dtype): each new shape compiled, or looked up in the persistent cache, 8-28 ms (2026-11-28,
# warm cache) where a transfer takes 0.1-1.7 ms; the first ``wgrad.tensor`` of a process
# took 44 ms, a hypothesis test drawing shapes paid it per shape. So ``tensor`` makes host
# data a tensor by NumPy's copy, cast where the cast is of the same kind (a float to a
# narrower float or an int to a float, which NumPy and XLA round alike, to nearest even,
# except that torch and XLA make a float16 or bfloat16 from a float32, so a double becomes
# one through a float32 here too (a direct rounding differs where the float32 is a tie); an
# int to a narrower int, which both wrap; a bool to anything), handed to JAX without a
# second copy (``may_alias``: that copy is wgrad's alone, while JAX may alias a caller's
# aligned array). Other casts (a float to an int, complex to real: NaN and out-of-range
# values), JAX arrays and calls under a trace keep ``jnp.array``. Python numbers out of an
# integer dtype's range raise PyTorch's error first (``_check_range``).


def as_tensor(data, dtype=None, device=None):
    """Like ``tensor`` but shares ``data`` when it already is a Tensor of that dtype."""
    if isinstance(data, Tensor) and (dtype is None or D.as_dtype(dtype) is data.dtype) \
            and device is None:
        return data
    if isinstance(data, jax.Array) and dtype is None and device is None:
        return _make(data)
    return tensor(data, dtype=dtype, device=device)


asarray = as_tensor


def from_numpy(ndarray):
    return tensor(np.asarray(ndarray), dtype=D.from_np(ndarray.dtype))


def scalar_tensor(s, dtype=None, device=None, requires_grad=False):
    return tensor(s, dtype=dtype or D.get_default_dtype(), device=device,
                  requires_grad=requires_grad)


def _dt(dtype, default=None):
    if dtype is None:
        return default or D.get_default_dtype()
    return D.check_x64(D.as_dtype(dtype))


# A filled array is made by a jitted program without arguments, cached per (shape, dtype,
# value, device): the value is a constant of the program, so making one transfers nothing
# from the host (NOTE [Python scalars as device constants] in ops/_primitive.py) and lands
# on its device directly.
_FILLERS = {}
_FILLERS_MAX = 512


def _made(make, args, requires_grad, device):
    """``make(*args)`` by a cached jitted program without arguments."""
    jdev = None if device is None else _dev(device).jax_device()
    key = (make, tuple(map(repr, args)), jdev)  # repr: 0, 0.0, -0.0, False, nan apart
    f = _FILLERS.get(key)
    if f is None:
        if len(_FILLERS) >= _FILLERS_MAX:
            _FILLERS.clear()
        out = None if jdev is None else jax.sharding.SingleDeviceSharding(jdev)
        f = _FILLERS[key] = jax.jit(lambda: make(*args), out_shardings=out)
    return _finish(f(), requires_grad)


# NOTE [Fillers on the host]
# On a CPU-only JAX the filler program above costs a compile per new shape (a new
# ``zeros`` shape 29 ms in a warm-cache process, 2026-11-28) to save a transfer that does
# not exist: JAX adopts an aligned host buffer without a copy (NOTE [Host GEMM]). So there,
# outside any trace (inside one the filler is part of the traced program) and for up to
# HOST_FILL_MAX bytes (above, XLA's fill uses both cores), ``zeros``/``ones``/``full``
# (and the ``*_like`` ones), ``eye`` and optimizers' state (``filled_like``) fill an
# aligned NumPy buffer and hand it to JAX. The value must be exact in the dtype's kind (a
# float or an integer for floating and complex dtypes, a complex number for complex ones,
# an integer within range for integer ones, 0 or 1 for bool): anything else (and
# bfloat16) keeps the program. A device given is the only one there is, or not a CPU's.
HOST_FILL_MAX = 1 << 22


def _host_filled(shape, value, dtype):
    """``jnp.full(shape, value, dtype)`` made on the host, or None where it is not
    (NOTE [Fillers on the host])."""
    dt = np.dtype(dtype)
    k = dt.kind
    t = type(value)
    if k in "fc":
        ok = t in (int, float, bool) or (t is complex and k == "c")
    elif k in "iu":
        info = np.iinfo(dt)
        ok = t in (int, bool) and info.min <= value <= info.max
    else:
        ok = k == "b" and t in (int, bool) and value in (0, 1)
    return _host_made(shape, dt, lambda a: a.fill(value)) if ok else None


def _host_made(shape, dt, fill):
    """An array of ``shape`` and NumPy dtype ``dt`` that ``fill(buffer)`` writes, made on
    the host and adopted by JAX; None where that is not done (NOTE [Fillers on the
    host])."""
    if not _cpu_only() or not _top_level() or \
            math.prod(shape) * dt.itemsize > HOST_FILL_MAX:
        return None
    a = _host_gemm._empty(tuple(shape), dt)
    with np.errstate(over="ignore"):  # 1e40 as float32 is inf, as in PyTorch
        fill(a)
    return _unguarded(_adopt, a)


def _on_host(device):
    """Whether a new tensor for ``device`` can be made on the host."""
    return device is None or _cpu_only() and \
        _dev(device).jax_device() == _default_jax_device()


def _adopt(a):
    """A host array of wgrad's own as a JAX array, without a copy where JAX can alias it."""
    return jax.device_put(a, may_alias=True)


def _filled(shape, value, dtype, requires_grad, device):
    if _on_host(device):
        host = _host_filled(shape, value, dtype)
        if host is not None:
            return _finish(host, requires_grad)
    return _made(jnp.full, (shape, value, dtype), requires_grad, device)


def filled(value, dtype):
    """A 0-dim ``jnp.full((), value, dtype)`` for wgrad's own state (optimizers' steps),
    made on the host where it can be (NOTE [Fillers on the host])."""
    host = _host_filled((), value, dtype)
    return jnp.full((), value, dtype) if host is None else host


def filled_like(a, value):
    """``jnp.full_like(a, value)`` for wgrad's own state arrays (optimizers'), made on the
    host where it can be (NOTE [Fillers on the host])."""
    if type(a) is _host_gemm._ArrayImpl:
        host = _host_filled(a.shape, value, a.dtype)
        if host is not None:
            return host
    return jnp.full_like(a, value)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype)
    return _filled(_new_size(size, d.itemsize, "zeros"), 0, d.np, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype)
    return _filled(_new_size(size, d.itemsize, "ones"), 1, d.np, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None):
    d = _dt(dtype)
    size = _new_size(size, d.itemsize, "empty")
    check_memory_format("empty", len(size), memory_format)
    return _filled(size, 0, d.np, requires_grad, device)


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad=False, pin_memory=False):
    """An uninitialized tensor (zeros here) of ``size`` whose dims lie in memory in the
    order ``physical_layout`` (outermost first): a permuted view of a row-major storage, so
    ``stride()`` and ``is_contiguous()`` are torch's.

    Example
    -------
    >>> wgrad.empty_permuted((2, 3, 4), (0, 2, 1)).stride()
    (12, 1, 3)
    """
    size, perm = tuple(size), tuple(physical_layout)
    if len(size) != len(perm):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(perm)}")
    if len(set(perm)) != len(perm):
        raise RuntimeError("Duplicate dim not allowed")
    stored = empty(*[size[p] for p in perm], dtype=dtype, device=device)
    out = stored.permute(*[perm.index(i) for i in range(len(perm))])
    return out.requires_grad_() if requires_grad else out


def empty_strided(size, stride, *, dtype=None, layout=None, device=None, requires_grad=False,
                  pin_memory=False):
    """A tensor of ``size`` with the given strides (zeros, where torch leaves memory
    uninitialized): a row-major layout is a new tensor, another one a view of a storage
    of the size it needs, whose ``stride()`` is the one asked for.

    Example
    -------
    >>> wgrad.empty_strided((2, 3), (1, 2)).stride()
    (1, 2)
    """
    if not isinstance(size, (tuple, list)):
        raise TypeError(f"empty_strided(): argument 'size' (position 1) must be tuple of "
                        f"ints, not {type(size).__name__}")
    d = _dt(dtype)
    shape, stride = _new_size((tuple(size),), d.itemsize), tuple(int(s) for s in stride)
    if len(shape) != len(stride):
        raise RuntimeError(f"dimensionality of sizes ({len(shape)}) must match dimensionality "
                           f"of strides ({len(stride)})")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"Storage size calculation overflowed with sizes={list(shape)} and "
                           f"strides={list(stride)}")
    rowmajor = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(len(shape))]
    if 0 in shape or all(a == b for a, b, n in zip(stride, rowmajor, shape) if n != 1):
        t = empty(shape, dtype=d, device=device)
    else:
        n = 1 + builtins.sum((k - 1) * s for k, s in zip(shape, stride))
        t = as_strided(empty(n, dtype=d, device=device), shape, stride)
    if 0 not in shape and t.stride() != stride:
        # strides of dims of size 1 are read off the layout (NOTE [Strides without strides])
        raise NotImplementedError(f"empty_strided: wgrad cannot give a tensor of sizes "
                                  f"{list(shape)} the strides {list(stride)} (those of its "
                                  f"dims of size 1 follow the others)")
    return t.requires_grad_() if requires_grad else t


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D tensor of the elements of ``buffer`` (an object with the buffer protocol) from
    byte ``offset``: ``count`` of them, or all (-1). A copy: torch's tensor shares the
    buffer's memory, wgrad's does not see later changes of it (docs/differences.md).

    Example
    -------
    >>> wgrad.frombuffer(bytearray([1, 2, 3]), dtype=wgrad.uint8, offset=1)
    tensor([2, 3], dtype=wgrad.uint8)
    """
    try:
        nbytes = memoryview(buffer).nbytes
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    d = _dt(dtype)
    size = d.itemsize
    if nbytes == 0 or count == 0:
        raise ValueError(f"both buffer length ({nbytes}) and count ({count}) must not be 0")
    if not 0 <= offset < nbytes:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({nbytes} bytes) minus 1")
    if count < 0:
        if (nbytes - offset) % size:
            raise ValueError(f"buffer length ({nbytes - offset} bytes) after offset "
                             f"({offset} bytes) must be a multiple of element size ({size})")
        count = (nbytes - offset) // size
    elif offset + count * size > nbytes:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({nbytes} bytes)")
    a = np.frombuffer(buffer, dtype=d.np, count=count, offset=offset)
    return _finish(jnp.array(a), requires_grad)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = scalar_dtype(fill_value)
    d = _dt(dtype)
    shape = _new_size((size,), d.itemsize, "full")
    if isinstance(fill_value, (int, float, complex)):
        check_number(d, fill_value, reduced_unchecked=math.prod(shape) == 1)
        if isinstance(fill_value, complex) and not d.is_complex:
            fill_value = fill_value.real  # its imaginary part is 0 (checked)
        return _filled(shape, fill_value, d.np, requires_grad, device)
    return _finish(jnp.full(shape, fill_value, d.np), requires_grad, device)


def arange(start, end=None, step=1, *, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    vals = [v.item() if isinstance(v, Tensor) else v for v in (start, end, step)]
    if not builtins.all(math.isfinite(abs(v)) for v in vals[:2]):
        raise RuntimeError(f"unsupported range: {_num(vals[0])} -> {_num(vals[1])}")
    if vals[2] == 0:
        raise RuntimeError("step must be nonzero")
    if (vals[2] > 0 and vals[1] < vals[0]) or (vals[2] < 0 and vals[1] > vals[0]):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    if dtype is None:
        is_int = all(isinstance(v, (int, np.integer)) for v in vals)
        dtype = D.default_int() if is_int else D.get_default_dtype()
    d = _dt(dtype)
    n = builtins.max(0, math.ceil((vals[1] - vals[0]) / vals[2]))
    _new_size((n,), d.itemsize)
    data = (vals[0] + vals[2] * np.arange(n, dtype=np.float64)).astype(d.np) \
        if not d.is_complex else np.arange(n) * vals[2] + vals[0]
    return _finish(jnp.asarray(data, d.np), requires_grad, device)


def _num(v):
    """A number as torch prints it in range errors (``nan``, ``inf``, ``0``)."""
    return int(v) if isinstance(v, float) and v.is_integer() else v


def _steps(steps, itemsize):
    steps = int(steps)
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    _new_size((steps,), itemsize)
    return steps


def linspace(start, end, steps, *, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype, D.default_complex() if builtins.any(
        isinstance(v, complex) for v in (start, end)) else None)
    n = _steps(steps, d.itemsize)
    dt = np.dtype(d.np)
    if (dt.kind in "iu" or dt in (np.float32, np.float64)) and builtins.all(
            type(v) in (int, float) for v in (start, end)):  # NOTE [linspace's values]
        host = _linspace_host(start, end, n, dt)
        data = _unguarded(_adopt, host) if _on_host(device) else \
            jax.device_put(host, _dev(device).jax_device())
        return _finish(data, requires_grad)
    if d.np.kind in "iub":  # torch: computed in floating point, truncated toward zero
        return _finish(jnp.linspace(start, end, n).astype(d.np), requires_grad, device)
    return _finish(jnp.linspace(start, end, n, dtype=d.np), requires_grad, device)


# NOTE [linspace's values]
# torch's CPU linspace computes element i as start + step * i below steps // 2 and as
# end - step * (steps - 1 - i) from there, step = (end - start) / (steps - 1) in the dtype
# (in double for integer dtypes, then truncated), and its compiler fuses each product and
# sum into one FMA. jnp.linspace's formula differs (a third of float32 elements 1 ulp
# apart), so for float32, float64 and the integer dtypes the values are made on the host by
# that formula with the FMA emulated exactly: the product split error-free (Dekker) and
# the sum rounded once (TwoSum; for float32 the double sum's tie with a float32 midpoint
# broken by its error). tests/test_creation_values.py compares random ranges with torch
# bit for bit. float16, bfloat16 and complex dtypes (whose Half and c10::complex
# arithmetic we have not modelled exactly) keep jnp's values.
_LINSPACE_CHUNK = 1 << 20


def _linspace_host(start, end, n, dt):
    out = np.empty(n, dt)
    if n == 1:
        out[0] = start
    if n <= 1:
        return out
    if dt == np.float32:
        s, e = np.float32(start), np.float32(end)
        step = np.float64((e - s) / np.float32(n - 1))
        s, e, fma = np.float64(s), np.float64(e), _fma32
    else:  # float64, and integers in double
        s, e = (float(int(v)) if dt.kind in "iu" else float(v) for v in (start, end))
        step, fma = (e - s) / (n - 1), _fma64
    half = n // 2
    for a in range(0, n, _LINSPACE_CHUNK):
        i = np.arange(a, min(a + _LINSPACE_CHUNK, n), dtype=np.float64)
        j = (n - 1) - i
        if dt == np.float32:  # torch's index as a float32 (rounded past 2^24)
            i, j = (v.astype(np.float32).astype(np.float64) for v in (i, j))
        lo = fma(step, i, s)
        hi = fma(-step, j, e)
        out[a:a + lo.size] = np.where(np.arange(a, a + lo.size) < half, lo, hi)
    return out


def _two_product(a, b):
    """``(p, err)`` with ``p + err == a * b`` exactly (Dekker's product, float64)."""
    p = a * b
    ah = a * 134217729.0  # Veltkamp's split by 2^27 + 1
    ah = ah - (ah - a)
    al = a - ah
    bh = b * 134217729.0
    bh = bh - (bh - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


def _two_sum(a, b):
    """``(s, err)`` with ``s + err == a + b`` exactly."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _fma64(a, b, c):
    """``a * b + c`` rounded once, for float64 arrays."""
    p, pe = _two_product(a, b)
    s, se = _two_sum(c, p)
    return s + (se + pe)


def _fma32(a, b, c):
    """``a * b + c`` rounded once to float32, for float32 values held as float64 (their
    product is exact in double)."""
    s, err = _two_sum(c, a * b)
    # a double exactly halfway between two floats rounds by its error, not to even
    tie = (s.view(np.uint64) & np.uint64(0x1FFFFFFF)) == np.uint64(0x10000000)
    s = np.where(tie & (err != 0), np.nextafter(s, np.copysign(np.inf, err)), s)
    return s.astype(np.float32)


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype)
    return _finish(jnp.logspace(start, end, _steps(steps, d.itemsize), base=base, dtype=d.np),
                   requires_grad, device)


def eye(n, m=None, *, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype)
    if n < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {n}")
    if m is not None and m < 0:
        raise RuntimeError(f"m must be greater or equal to 0, got {m}")
    shape = _new_size((n, n if m is None else m), d.itemsize)
    if _on_host(device) and np.dtype(d.np).kind in "fciub":
        host = _host_made(shape, np.dtype(d.np), _eye_fill)
        if host is not None:
            return _finish(host, requires_grad)
    return _made(jnp.eye, (n, m, 0, d.np), requires_grad, device)


def _eye_fill(a):
    a.fill(0)
    np.fill_diagonal(a, 1)


def _tri_indices(name, np_fn, row, col, offset, dtype, device, requires_grad):
    d = _dt(dtype, D.default_int())
    if d not in (D.int32, D.int64):
        raise NotImplementedError(f"\"{name}\" not implemented for '{d.scalar_name}'")
    if row < 0:
        raise RuntimeError(f"row must be non-negative, got{row}")
    if col < 0:
        raise RuntimeError(f"col must be non-negative, got{col}")
    if requires_grad:  # torch's factory check, before making the (integer) tensor
        raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                           "gradients")
    return _finish(jnp.asarray(np.stack(np_fn(row, offset, col)).reshape(2, -1), d.np),
                   False, device)


def tril_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The (row, column) indices of the lower triangle of a ``row`` x ``col`` matrix, as a
    2 x N tensor in row-major order; ``offset`` shifts the diagonal as in ``tril``.

    Example
    -------
    >>> wgrad.tril_indices(2, 2)
    tensor([[0, 1, 1],
            [0, 0, 1]])
    """
    return _tri_indices("tril_indices", np.tril_indices, row, col, offset, dtype, device,
                        requires_grad)


def triu_indices(row, col, offset=0, *, dtype=None, device=None, layout=None,
                 requires_grad=False):
    """The (row, column) indices of the upper triangle of a ``row`` x ``col`` matrix, as a
    2 x N tensor in row-major order; ``offset`` shifts the diagonal as in ``triu``.

    Example
    -------
    >>> wgrad.triu_indices(2, 2)
    tensor([[0, 0, 1],
            [0, 1, 1]])
    """
    return _tri_indices("triu_indices", np.triu_indices, row, col, offset, dtype, device,
                        requires_grad)


# -- windows ---------------------------------------------------------------------------
# Each window is computed in its own dtype by torch's steps (arange, scale, cos, ...), so
# float32 windows round as torch's do; a periodic window is the symmetric window of
# length + 1 without its last point.

def _window(name, window_length, dtype, requires_grad, device, make, *args):
    if isinstance(window_length, bool) or not hasattr(window_length, "__index__"):
        raise TypeError(f"{name}(): argument 'window_length' (position 1) must be int, not "
                        f"{type(window_length).__name__}")
    n = operator.index(window_length)
    d = _dt(dtype)
    if not (d.is_floating_point or d.is_complex):
        raise RuntimeError(
            f"{name} expects floating point dtypes, got: TensorOptions(dtype={_CPP[d.name]}, "
            f"device=cpu, layout=Strided (default), requires_grad=false (default), "
            f"pinned_memory=false, memory_format=(nullopt))")
    if n < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={n}")
    if n <= 1:
        return _filled((n,), 1, d.np, requires_grad, device)
    if d.is_complex:  # torch's arange has no complex kernel
        raise NotImplementedError(f"\"arange_cpu\" not implemented for '{d.scalar_name}'")
    return _made(make, (n, *args, d.np), requires_grad, device)


def _symmetric_length(n, periodic):
    return n + 1 if periodic else n


def _cosine_window(n, periodic, alpha, beta, dt):
    m = _symmetric_length(n, periodic)
    w = jnp.cos(jnp.arange(m, dtype=dt) * (2 * math.pi / (m - 1))) * (-beta) + alpha
    return w[:n]


def _blackman(n, periodic, dt):
    m = _symmetric_length(n, periodic)
    w = jnp.arange(m, dtype=dt) * (math.pi / (m - 1))
    return (jnp.cos(w * 4) * 0.08 - jnp.cos(w * 2) * 0.5 + 0.42)[:n]


def _bartlett(n, periodic, dt):
    m = _symmetric_length(n, periodic)
    w = jnp.arange(m, dtype=dt) * (2 / (m - 1))
    return jnp.where(jnp.arange(m) > (m - 1) // 2, 2 - w, w)[:n]


def _kaiser(n, periodic, beta, dt):
    m = _symmetric_length(n, periodic)
    a = (m - 1) / 2
    # the window's dtype for float32/64, float32 for the half types (torch's opmath)
    ct = jnp.promote_types(dt, jnp.float32)
    r = (jnp.arange(m, dtype=ct) - a) / a
    w = jsp.i0(beta * jnp.sqrt(jnp.abs(1 - r * r))) / jsp.i0(jnp.asarray(beta, ct))
    return w[:n].astype(dt)


def hann_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                pin_memory=False, requires_grad=False):
    """The Hann window ``sin(pi n / (N - 1))**2``, ``N = window_length`` (``+ 1`` when
    ``periodic``, the last point dropped: the form ``stft`` wants).

    Example
    -------
    >>> wgrad.hann_window(4)
    tensor([0.0000, 0.5000, 1.0000, 0.5000])
    """
    return _window("hann_window", window_length, dtype, requires_grad, device,
                   _cosine_window, bool(periodic), 0.5, 0.5)


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   layout=None, device=None, pin_memory=False, requires_grad=False):
    """The generalized Hamming window ``alpha - beta cos(2 pi n / (N - 1))``
    (``N`` as in :func:`hann_window`).

    Example
    -------
    >>> wgrad.hamming_window(3, periodic=False, dtype=wgrad.float64)
    tensor([0.0800, 1.0000, 0.0800], dtype=wgrad.float64)
    """
    return _window("hamming_window", window_length, dtype, requires_grad, device,
                   _cosine_window, bool(periodic), float(alpha), float(beta))


def blackman_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The Blackman window ``0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))``
    (``N`` as in :func:`hann_window`).

    Example
    -------
    >>> wgrad.blackman_window(5, periodic=False)[1:4]
    tensor([0.3400, 1.0000, 0.3400])
    """
    return _window("blackman_window", window_length, dtype, requires_grad, device,
                   _blackman, bool(periodic))


def bartlett_window(window_length, periodic=True, *, dtype=None, layout=None, device=None,
                    pin_memory=False, requires_grad=False):
    """The triangular (Bartlett) window ``1 - |2 n / (N - 1) - 1|`` (``N`` as in
    :func:`hann_window`).

    Example
    -------
    >>> wgrad.bartlett_window(5, periodic=False)
    tensor([0.0000, 0.5000, 1.0000, 0.5000, 0.0000])
    """
    return _window("bartlett_window", window_length, dtype, requires_grad, device,
                   _bartlett, bool(periodic))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, layout=None,
                  device=None, pin_memory=False, requires_grad=False):
    """The Kaiser window ``I0(beta sqrt(1 - ((n - N/2) / (N/2))**2)) / I0(beta)`` with
    ``N = window_length - 1`` (``window_length`` when ``periodic``).

    Example
    -------
    >>> wgrad.kaiser_window(3, periodic=False, beta=0.)
    tensor([1., 1., 1.])
    """
    return _window("kaiser_window", window_length, dtype, requires_grad, device,
                   _kaiser, bool(periodic), float(beta))


# -- random ----------------------------------------------------------------------------
# NOTE [Random numbers]
# wgrad draws on the host from one numpy PCG64 generator (torch's global generator
# equivalent; not torch's stream): cheap for the small draws of notebooks and tests, and
# reproducible with manual_seed. Complex normals have E|z|^2 = 1 (real and imaginary
# parts each N(0, 1/2)), as torch draws them.

class Generator(np.random.Generator):
    """torch.Generator: a numpy PCG64 generator (NOTE [Random numbers]) with torch's
    methods; every ``generator=`` argument takes one (or any numpy Generator).

    Example
    -------
    >>> g = wgrad.Generator().manual_seed(42)
    >>> wgrad.randperm(4, generator=g).shape
    wgrad.Size([4])
    """

    def __init__(self, device="cpu"):
        super().__init__(np.random.PCG64(67280421310721))  # torch's default seed
        self._seed = 67280421310721
        self.device = _dev(device)

    def manual_seed(self, seed):
        """Seed with a Python int, as torch's: a negative one wraps modulo 2**64."""
        if isinstance(seed, np.integer):
            raise TypeError("an integer is required")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise RuntimeError(f"manual_seed expected a long, but got {type(seed).__name__}")
        if not -2 ** 63 <= seed < 2 ** 64:
            raise ValueError("Overflow when unpacking long long")
        self._seed = seed % 2 ** 64
        self.bit_generator.state = np.random.PCG64(self._seed).state
        return self

    def seed(self):
        s = int(np.random.SeedSequence().entropy % (2 ** 63))
        self.manual_seed(s)
        return s

    def initial_seed(self):
        return self._seed

    def get_state(self):
        return self.bit_generator.state

    def set_state(self, new_state):
        self.bit_generator.state = new_state
        return self


default_generator = Generator()
default_generator.manual_seed(0)
_gen = {"rng": default_generator}
_lock = threading.Lock()


def manual_seed(seed):
    """Seed the global generator; returns it (as torch.manual_seed does: ``int(seed)``
    first, so a float or a bool seeds too)."""
    seed = int(seed)
    with _lock:
        return default_generator.manual_seed(seed)


def seed():
    with _lock:
        return default_generator.seed()


def initial_seed():
    return default_generator.initial_seed()


def get_rng_state():
    return _gen["rng"].bit_generator.state


def set_rng_state(state):
    _gen["rng"].bit_generator.state = state


@contextlib.contextmanager
def _host_memory(shape, d):
    """numpy's MemoryError for a draw too big for the host, as torch's RuntimeError."""
    try:
        yield
    except MemoryError:
        n = d.itemsize
        for s in shape:
            n *= s
        raise RuntimeError(f"DefaultCPUAllocator: can't allocate memory: you tried to "
                           f"allocate {n} bytes.") from None


def _rng(generator):
    return generator if generator is not None else _gen["rng"]


def _random(draw, complex_scale, size, generator, dtype, device, requires_grad):
    """``draw(rng, shape)`` for a real dtype; for a complex one real and imaginary parts
    are drawn in turn and scaled by ``complex_scale``."""
    d = _dt(dtype)
    shape = _new_size(size, d.itemsize)
    with _lock, _host_memory(shape, d):
        r = _rng(generator)
        if d.is_complex:
            a = draw(r, shape) + 1j * draw(r, shape)
            if complex_scale != 1:
                a = a * complex_scale
        else:
            a = draw(r, shape)
    return _finish(_from_host(a, d.np, fresh=True), requires_grad, device)


def rand(*size, generator=None, dtype=None, device=None, requires_grad=False):
    return _random(np.random.Generator.random, 1, size, generator, dtype, device,
                   requires_grad)


def randn(*size, generator=None, dtype=None, device=None, requires_grad=False):
    # a complex draw has unit variance: each part has variance 1/2
    return _random(np.random.Generator.standard_normal, math.sqrt(0.5), size, generator,
                   dtype, device, requires_grad)


# torch's normal and bernoulli are not reparameterized: their tensor arguments get a zero
# gradient (NormalBackward1-3, BernoulliBackward0), not the draw's derivative
def _normal_name(akey, in_meta):
    return f"NormalBackward{(in_meta[1] is not None) + 2 * (in_meta[2] is not None)}"


_normal_node = Primitive(
    "normal", lambda draw, mean, std: draw, node_name_of=_normal_name, scalar_overload=True,
    mean=lambda grad, mean: zeros_like(mean), std=lambda grad, std: zeros_like(std))
_bernoulli_node = Primitive("bernoulli", lambda draw, self: draw,
                            node_name="BernoulliBackward0",
                            self=lambda grad, self: zeros_like(self))


def normal(mean=0.0, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    if isinstance(std, Tensor):
        if bool((std._data < 0).any()):
            raise RuntimeError("normal expects all elements of std >= 0.0")
        if size is None:
            size = tuple(std.shape) if not isinstance(mean, Tensor) else tuple(
                np.broadcast_shapes(tuple(mean.shape), tuple(std.shape)))
    elif std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {_num(float(std))}")
    if size is None and isinstance(mean, Tensor):
        size = tuple(mean.shape)
    draw = randn(*(size or ()), generator=generator, dtype=dtype, device=device)
    m = mean.detach() if isinstance(mean, Tensor) else mean
    out = draw * (std.detach() if isinstance(std, Tensor) else std) + m
    if any(isinstance(a, Tensor) and a.requires_grad for a in (mean, std)):
        out = _normal_node(out, mean, std)
    return out.requires_grad_() if requires_grad else out


def randint(low, high=None, size=None, *, generator=None, dtype=None, device=None,
            requires_grad=False):
    if high is None or (size is None and isinstance(high, (tuple, list))):
        low, high, size = 0, low, size if high is None else high  # randint(high, size)
    d = _dt(dtype, D.default_int())
    shape = _new_size((size,), d.itemsize)
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got "
                           f"from={low} >= to={high}")
    with _lock, _host_memory(shape, d):
        a = _rng(generator).integers(low, high, size=shape)
    return _finish(jnp.asarray(a, d.np), requires_grad, device)


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype, D.default_int())
    _new_size((n,), d.itemsize)
    with _lock, _host_memory((n,), d):
        a = _rng(generator).permutation(n)
    return _finish(jnp.asarray(a, d.np), requires_grad, device)


def _same_device(input, device):
    """``device`` if given, else ``input``'s JAX device when it is not the default one."""
    if device is not None:
        return device
    try:
        devs = _raw_data(input).devices()  # a pending one is not forced (NOTE [Lazy segments])
    except Exception:  # a tracer
        return None
    d = next(iter(devs)) if len(devs) == 1 else None
    if d is None or d == _default_jax_device():
        return None
    return _dev.of_jax(d)


def _spread_sharding(data):
    """The sharding of ``data`` when it spans several devices, else None (a tracer too)."""
    sh = getattr(data, "sharding", None)
    if sh is None or type(sh) is jax.sharding.SingleDeviceSharding or len(sh.device_set) == 1:
        return None
    return sh


def _like(fn):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None,
             **kw):
        check_memory_format(like.__name__, input.ndim, memory_format)
        t = fn(tuple(input.shape), dtype=dtype or input.dtype,
               device=_same_device(input, device), requires_grad=requires_grad, **kw)
        # raw: a pending input is not forced (it has no sharding: segments run on the
        # default device, NOTE [Lazy segments])
        sh = None if device is not None else _spread_sharding(_raw_data(input))
        if sh is not None:  # sharded over several devices: the result is laid out the same
            t._data = jax.device_put(t._data, sh)
        return t
    like.__name__ = fn.__name__ + "_like"
    return like


zeros_like = _like(zeros)
ones_like = _like(ones)
empty_like = _like(empty)
rand_like = _like(rand)
randn_like = _like(randn)


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    check_memory_format("full_like", input.ndim, memory_format)
    return full(tuple(input.shape), fill_value, dtype=dtype or input.dtype,
                device=_same_device(input, device), requires_grad=requires_grad)


# Tensor methods (NOTE [Tensor methods]), bound by ops/__init__.py: a new tensor with
# ``self``'s dtype and device unless given
def bernoulli(input, p=None, *, generator=None):
    """Draws of 1 with probability ``input`` (elementwise) or ``p``, else 0, in
    ``input``'s dtype; no gradient, as torch.

    Example
    -------
    >>> wgrad.bernoulli(wgrad.tensor([0., 1.]))
    tensor([0., 1.])
    """
    probs = input._data if p is None else p
    if p is None and bool(((probs < 0) | (probs > 1)).any()):
        raise RuntimeError("Expected p_in >= 0 && p_in <= 1 to be true, but got false.")
    u = _random(np.random.Generator.random, 1, tuple(input.shape), generator,
                input.dtype if input.dtype.is_floating_point else None, None, False)
    out = _make((u._data < probs).astype(input._data.dtype))
    return _bernoulli_node(out, input) if p is None and input.requires_grad else out


def _check_bool_arg(fn, name, value):
    if not isinstance(value, bool):
        raise TypeError(f"{fn}(): argument '{name}' must be bool, not {type(value).__name__}")


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """``num_samples`` category indices per row of ``input`` (unnormalized probabilities,
    1-D or one distribution per row), with or without ``replacement``; int64, no gradient.

    Example
    -------
    >>> wgrad.multinomial(wgrad.tensor([0., 1., 0.]), 2, replacement=True)
    tensor([1, 1])
    """
    if isinstance(num_samples, bool) or not isinstance(num_samples, (int, np.integer)):
        raise TypeError(f"multinomial(): argument 'num_samples' (position 2) must be int, not "
                        f"{type(num_samples).__name__}")
    _check_bool_arg("multinomial", "replacement", replacement)
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.is_floating_point():
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{input.dtype.scalar_name}")
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    k = input.shape[-1]
    if not replacement and num_samples > k:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    p = np.asarray(input.detach()._data, dtype=np.float64).reshape(-1, k)
    if not (np.isfinite(p).all() and (p >= 0).all()):
        raise RuntimeError("probability tensor contains either `inf`, `nan` or element < 0")
    total = p.sum(axis=1, keepdims=True)
    if (total <= 0).any() or k == 0:
        raise RuntimeError("invalid multinomial distribution (sum of probabilities <= 0)")
    shape = (p.shape[0], num_samples)
    with _lock, _host_memory(shape, D.int64):
        rng = _rng(generator)
        if replacement:  # the first category whose cumulative weight exceeds u
            cdf = np.cumsum(p, axis=1)
            u = rng.random(shape) * total
            idx = np.stack([np.searchsorted(c, r, side="right") for c, r in zip(cdf, u)])
            # u may round up to the total: the last category of positive weight
            last = k - 1 - np.argmax(p[:, ::-1] > 0, axis=1)
            idx = np.minimum(idx, last[:, None])
        else:  # the largest p / Exp(1) keys: draws in turn, each in proportion to p
            keys = p / rng.exponential(size=p.shape)
            idx = np.argsort(-keys, axis=1, kind="stable")[:, :num_samples]
    return _finish(jnp.asarray(idx.reshape(tuple(input.shape[:-1]) + (num_samples,)),
                               jnp.int64), False, _same_device(input, None))


_poisson_node = Primitive("poisson", lambda draw, self: draw,
                          self=lambda grad, self: zeros_like(self))


def poisson(input, generator=None):
    """A draw of the Poisson distribution of rate ``input`` (elementwise), in ``input``'s
    dtype; zero gradient to the rate, as torch.

    Example
    -------
    >>> wgrad.poisson(wgrad.tensor([0., 0.]))
    tensor([0., 0.])
    """
    if not isinstance(input, Tensor):
        raise TypeError(f"poisson(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    d = input.dtype
    if not d.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for \'{d.scalar_name}\'')
    lam = np.asarray(input.detach()._data, dtype=np.float64)
    if not (lam >= 0).all():
        raise RuntimeError("invalid Poisson rate, expected rate to be non-negative")
    with _lock, _host_memory(lam.shape, d):
        try:
            a = _rng(generator).poisson(lam)
        except ValueError as e:  # an infinite or huge rate: torch's draw is meaningless
            raise NotImplementedError(f"poisson(): wgrad cannot draw with such a rate ({e})") \
                from None
    out = _finish(jnp.asarray(a, d.np), False, _same_device(input, None))
    return _poisson_node(out, input) if input.requires_grad else out


def binomial(count, prob, generator=None):
    """A draw of the binomial distribution of ``count`` trials of success probability
    ``prob`` (broadcast together, both of one floating dtype); no derivative, as torch.

    Example
    -------
    >>> wgrad.binomial(wgrad.tensor([3., 5.]), wgrad.tensor([1., 0.]))
    tensor([3., 0.])
    """
    for name, pos, t in (("count", 1, count), ("prob", 2, prob)):
        if not isinstance(t, Tensor):
            raise TypeError(f"binomial(): argument '{name}' (position {pos}) must be Tensor, "
                            f"not {type(t).__name__}")
    for name, t in (("count", count), ("prob", prob)):
        if not t.is_floating_point():
            raise ValueError(f"binomial only supports floating-point dtypes for {name}, got: "
                             f"{t.dtype.scalar_name}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {prob.dtype.scalar_name} but expected "
                           f"{count.dtype.scalar_name}")
    d = count.dtype
    if d not in (D.float32, D.float64):
        raise NotImplementedError(f'"binomial_cpu" not implemented for \'{d.scalar_name}\'')
    check_broadcast(count.shape, prob.shape)
    shape = np.broadcast_shapes(tuple(count.shape), tuple(prob.shape))
    n = np.broadcast_to(np.asarray(count.detach()._data, np.float64), shape)
    p = np.broadcast_to(np.asarray(prob.detach()._data, np.float64), shape)
    nan = np.isnan(p)
    ok = (n >= 0) & np.isfinite(n) & (n == np.floor(n)) & (nan | ((p >= 0) & (p <= 1)))
    if not ok.all():
        raise NotImplementedError("binomial(): wgrad draws for counts that are finite whole "
                                  "numbers >= 0 and probabilities in [0, 1] only (torch's "
                                  "result outside them is no binomial draw, or never comes)")
    with _lock, _host_memory(shape, d):
        a = _rng(generator).binomial(n.astype(np.int64), np.where(nan, 0, p))
    # torch: a NaN probability gives NaN, but 0 successes of 0 trials
    out = _finish(jnp.asarray(np.where(nan & (n > 0), np.nan, a), d.np), False,
                  _same_device(count, None))
    return no_derivative("binomial", (out,), (count, prob))[0]


def new(self, *args, device=None):
    """Torch's legacy constructor: ``x.new(*sizes)`` an uninitialized tensor (zeros here),
    ``x.new(data)`` a tensor of ``data``; both with ``x``'s dtype."""
    if len(args) == 1 and not isinstance(args[0], (int, Size)):
        return tensor(args[0], dtype=self.dtype, device=_same_device(self, device))
    return empty(*(args or (0,)), dtype=self.dtype, device=_same_device(self, device))


METHODS = ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "bernoulli", "new",
           "new_empty_strided", "multinomial")


def _new(fn):
    def new(self, *size, dtype=None, device=None, requires_grad=False, **kw):
        _new_size(size, _dt(dtype or self.dtype).itemsize)  # torch's generic message
        return fn(*size, dtype=dtype or self.dtype, device=_same_device(self, device),
                  requires_grad=requires_grad, **kw)
    new.__name__ = "new_" + fn.__name__
    new.__doc__ = (f"``{fn.__name__}(size)`` with this tensor's dtype and device unless "
                   f"given.")
    return new


new_zeros = _new(zeros)
new_ones = _new(ones)
new_empty = _new(empty)


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    """``full(size, fill_value)`` with this tensor's dtype and device unless given."""
    return full(size, fill_value, dtype=dtype or self.dtype,
                device=_same_device(self, device), requires_grad=requires_grad)


def new_empty_strided(self, size, stride, *, dtype=None, layout=None, device=None,
                      requires_grad=False, pin_memory=False):
    """``empty_strided(size, stride)`` with this tensor's dtype and device unless given.

    Example
    -------
    >>> wgrad.ones(1, dtype=wgrad.float64).new_empty_strided((2,), (1,)).dtype
    wgrad.float64
    """
    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=_same_device(self, device), requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """``tensor(data)`` with this tensor's dtype and device unless given."""
    return tensor(data, dtype=dtype or self.dtype, device=_same_device(self, device),
                  requires_grad=requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None, requires_grad=False):
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device)
