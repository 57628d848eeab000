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
from ._device import device as _dev
from ._tensor import Size, Tensor, _make, _raw_data
from .ops._out import _CPP
from .ops._primitive import Primitive
from .ops._promote import scalar_dtype
from .ops.shape import _new_size

__all__ = ["tensor", "as_tensor", "asarray", "from_numpy", "zeros", "ones", "full", "empty",
           "arange", "linspace", "logspace", "eye", "rand", "randn", "randint", "randperm",
           "normal", "zeros_like", "ones_like", "full_like", "empty_like", "rand_like",
           "randn_like", "randint_like", "manual_seed", "seed", "initial_seed",
           "get_rng_state", "set_rng_state", "scalar_tensor", "bernoulli", "tril_indices",
           "triu_indices", "hann_window", "hamming_window", "blackman_window",
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
    out = jnp.array(arr, dtype=d.np)
    return _finish(out, requires_grad, device)


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


def _filled(shape, value, dtype, requires_grad, device):
    return _made(jnp.full, (shape, value, dtype), requires_grad, device)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype)
    return _filled(_new_size(size, d.itemsize, "zeros"), 0, d.np, requires_grad, device)


def ones(*size, dtype=None, device=None, requires_grad=False):
    d = _dt(dtype)
    return _filled(_new_size(size, d.itemsize, "ones"), 1, d.np, requires_grad, device)


def empty(*size, dtype=None, device=None, requires_grad=False, memory_format=None):
    d = _dt(dtype)
    return _finish(jnp.zeros(_new_size(size, d.itemsize, "empty"), d.np), requires_grad,
                   device)


def full(size, fill_value, *, dtype=None, device=None, requires_grad=False):
    if dtype is None:
        dtype = scalar_dtype(fill_value)
    d = _dt(dtype)
    shape = _new_size((size,), d.itemsize, "full")
    if isinstance(fill_value, (int, float, complex)):
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
    if d.np.kind in "iub":  # torch: computed in floating point, truncated toward zero
        return _finish(jnp.linspace(start, end, n).astype(d.np), requires_grad, device)
    return _finish(jnp.linspace(start, end, n, dtype=d.np), requires_grad, device)


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
    _new_size((n, n if m is None else m), d.itemsize)
    return _made(jnp.eye, (n, m, 0, d.np), requires_grad, device)


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

_gen = {"seed": 0, "rng": np.random.Generator(np.random.PCG64(0))}
_lock = threading.Lock()


def manual_seed(seed):
    """Seed the global generator; returns it (as torch.manual_seed does)."""
    with _lock:
        _gen["seed"] = int(seed)
        _gen["rng"] = np.random.Generator(np.random.PCG64(int(seed)))
    return _gen["rng"]


def seed():
    s = int(np.random.SeedSequence().entropy % (2 ** 63))
    manual_seed(s)
    return s


def initial_seed():
    return _gen["seed"]


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
    return _finish(jnp.asarray(a, d.np), requires_grad, device)


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
    if d is None or d == jax.devices()[0]:
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


def new(self, *args, device=None):
    """Torch's legacy constructor: ``x.new(*sizes)`` an uninitialized tensor (zeros here),
    ``x.new(data)`` a tensor of ``data``; both with ``x``'s dtype."""
    if len(args) == 1 and not isinstance(args[0], (int, Size)):
        return tensor(args[0], dtype=self.dtype, device=_same_device(self, device))
    return empty(*(args or (0,)), dtype=self.dtype, device=_same_device(self, device))


METHODS = ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor", "bernoulli", "new")


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


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    """``tensor(data)`` with this tensor's dtype and device unless given."""
    return tensor(data, dtype=dtype or self.dtype, device=_same_device(self, device),
                  requires_grad=requires_grad)


def randint_like(input, low, high=None, *, dtype=None, device=None, requires_grad=False):
    return randint(low, high, tuple(input.shape), dtype=dtype or input.dtype, device=device)
