"""Matrix products of concrete CPU arrays computed by numpy's BLAS (NOTE [Host GEMM])."""
import math
import os

import jax
from jax._src.array import ArrayImpl as _ArrayImpl  # the class of concrete arrays
from jax._src.core import ShapedArray as _ShapedArray
from jax._src.lib import xla_client as _xla_client
import numpy as np

from .._device import cpu_only, unguarded
from .shape import _sum_to_fwd  # the broadcast reduction, over numpy arrays here

# JAX's C++ entry point for host arrays (see _adopter), where this JAX has it
_batched_device_put = getattr(_xla_client, "batched_device_put", None)

# NOTE [Host GEMM]
# On the CPU, XLA's complex GEMM is 1.5-2.5x slower than the BLAS numpy ships (OpenBLAS)
# at the MLP benchmark's 64x256x256 (figures in docs/performance.md, "Host GEMM"). So
# where a complex product's operands are concrete arrays, JAX has one device, a CPU, and
# the product is large enough (m*k*n of at least MIN_WORK), the product and its gradients
# are computed by numpy's matmul over zero-copy views of the operands, into an aligned
# buffer that JAX adopts without a copy. Smaller products and real ones stay XLA's:
# measured in whole steps, a small product is faster in XLA, whose call on the calling
# thread (NOTE [CPU dispatch] in _compile_cache.py) costs less than the host path's
# conversions (a 16^3 forward and backward: 0.14 against 0.22 ms), and real GEMMs tie.
# Under a JAX trace (wgrad.compile, jit, vmap, a lazy segment's computation) the operands
# are tracers and XLA's dot computes the product, so compiled programs do not change. Lazy
# mode takes the host from MIN_WORK_LAZY (a product left in its segment costs no flush).
# Both sum in the operands' precision: the results differ from XLA's in rounding only
# (tests/ops/test_host_gemm.py compares them with torch, XLA and finite differences). JAX
# counts adopting a host array as a host-to-device transfer, but on a CPU-only JAX no data
# moves, so a transfer guard lets it through. WGRAD_HOST_GEMM=0 turns the path off.
MIN_WORK = 1 << 21
MIN_WORK_LAZY = 1 << 22
_KINDS = frozenset(np.dtype(d) for d in (np.complex64, np.complex128))
_STATE = []  # [put] once probed; put is None where the path is off
_AVALS = {}


def _probe():
    put = None
    if os.environ.get("WGRAD_HOST_GEMM", "1") != "0" and cpu_only():
        put = _adopter(jax.devices()[0])
    _STATE[:] = [put]
    return _STATE


def _adopter(device):
    """A function that makes a numpy array a JAX array on ``device``; without a copy where
    the array is 64-byte aligned (JAX's CPU client then keeps it alive and never writes
    it). JAX's public ``device_put`` copies, so its C++ entry point is used where this JAX
    has it."""
    if _batched_device_put is None:
        return jax.device_put
    try:
        sharding = jax.sharding.SingleDeviceSharding(device)

        def put(a):
            key = (a.shape, a.dtype)
            aval = _AVALS.get(key)
            if aval is None:
                if len(_AVALS) > 256:  # NOTE [Bounded caches]
                    _AVALS.clear()
                aval = _AVALS[key] = _ShapedArray(a.shape, a.dtype)
            return unguarded(_batched_device_put, aval, sharding, [a], [device], False)

        probe = _empty((2, 3), np.dtype(np.float32))
        probe[...] = np.arange(6).reshape(2, 3)
        if np.array_equal(np.asarray(put(probe)), probe):
            return put
    except Exception:  # another JAX: fall back to the public, copying call
        pass
    return jax.device_put


def _empty(shape, dtype):
    """An uninitialized C-ordered array whose data is 64-byte aligned (numpy's own
    allocations are 16-byte aligned: a buffer 64 bytes longer, sliced)."""
    n = math.prod(shape) * dtype.itemsize
    buf = np.empty(n + 64, np.uint8)
    off = -buf.__array_interface__["data"][0] % 64
    return buf[off:off + n].view(dtype).reshape(shape)


def _worth(sa, sb, dtype, least):
    """Whether a product of operands of shapes ``sa`` and ``sb`` runs on the host."""
    return dtype in _KINDS and len(sa) >= 2 and len(sb) >= 2 and \
        sa[-2] * sa[-1] * sb[-1] >= least


def _host(*arrays):
    """``put`` where every array is concrete (never a tracer), of a BLAS dtype and not
    empty; else None."""
    put = (_STATE or _probe())[0]
    if put is None:
        return None
    for a in arrays:
        if type(a) is not _ArrayImpl or a.dtype not in _KINDS or a.size == 0:
            return None
    return put


def _product(x, y, conj_x=False, conj_y=False):
    """``op(x) @ op(y)`` over numpy arrays into an aligned buffer, op conjugating where
    asked; the conjugate is taken of the smaller side (NOTE [Which side to conjugate])."""
    out = _empty(np.broadcast_shapes(x.shape[:-2], y.shape[:-2])
                 + (x.shape[-2], y.shape[-1]), np.result_type(x, y))
    if conj_x or conj_y:
        asked = (x.size if conj_x else 0) + (y.size if conj_y else 0)
        other = (0 if conj_x else x.size) + (0 if conj_y else y.size) + out.size
        if other < asked:  # op(x) @ op(y) == conj(op'(x) @ op'(y)), op' the other way
            np.matmul(x if conj_x else np.conjugate(x), y if conj_y else np.conjugate(y),
                      out=out)
            return np.conjugate(out, out=out)
        x = np.conjugate(x) if conj_x else x
        y = np.conjugate(y) if conj_y else y
    return np.matmul(x, y, out=out)


class Host:
    """How a product Primitive computes on the host: ``forward(arrays, attrs)`` and
    ``backward(needs, in_meta, attrs, grads, names, saved_vals)`` give arrays, or None
    where XLA is to compute; ``in_lazy(metas)`` says whether a lazy call or node whose
    inputs have these (shape, dtype) pairs leaves its segment for the host.
    ``operands`` index the product's two operands among the inputs."""

    operands = (0, 1)

    def in_lazy(self, metas):
        if (_STATE or _probe())[0] is None:
            return False
        (sa, da), (sb, _) = metas[self.operands[0]], metas[self.operands[1]]
        return _worth(sa, sb, da, MIN_WORK_LAZY)

    def _forward_put(self, arrays, attrs):
        """``put`` where numpy computes this call's product; else None."""
        dtype = attrs["dtype"]
        a, b = arrays[self.operands[0]], arrays[self.operands[1]]
        if not _worth(a.shape, b.shape, dtype, MIN_WORK) or \
                any(x.dtype != dtype for x in arrays):
            return None
        return _host(*arrays)

    def _backward_operands(self, needs, in_meta, attrs, grads, names, saved_vals):
        """``put``, the gradient as a numpy array, whether the product's second operand
        is a matrix that the first one's batch was broadcast to, and the saved values by
        name; or None."""
        dtype = attrs["dtype"]
        i, j = self.operands
        sa, sb = in_meta[i][0], in_meta[j][0]
        if not _worth(sa, sb, dtype, MIN_WORK):
            return None
        g = grads[0]
        put = _host(g)
        if put is None or g.dtype != dtype:
            return None
        fold = len(sa) > 2 and len(sb) == 2
        if sa[:-2] != sb[:-2] and not fold or in_meta[i][1] != dtype \
                or in_meta[j][1] != dtype:
            return None  # batch dimensions broadcast otherwise, a promotion: XLA's kernel
        saved = dict(zip(names, saved_vals))
        for n in (self._names[i] if needs[j] else None, self._names[j] if needs[i] else None):
            if n is not None and _host(saved[n]) is None:
                return None
        return put, np.asarray(g), fold, saved

    def _products(self, needs, gn, fold, saved, alpha=1):
        """``grad @ b^H`` and ``a^H @ grad`` (times conj(alpha)) where needed; with
        ``fold``, ``b``'s gradient sums over ``a``'s batch: one product of the rows of
        ``a`` and ``grad`` folded together."""
        i, j = self.operands
        cplx = gn.dtype.kind == "c"
        out = []
        if needs[i]:
            out.append(_product(gn, np.swapaxes(np.asarray(saved[self._names[j]]), -1, -2),
                                conj_y=cplx))
        else:
            out.append(None)
        if needs[j]:
            a = np.asarray(saved[self._names[i]])
            if fold:
                a, gn = a.reshape(-1, a.shape[-1]), gn.reshape(-1, gn.shape[-1])
            out.append(_product(np.swapaxes(a, -1, -2), gn, conj_x=cplx))
        else:
            out.append(None)
        if alpha != 1:
            c = alpha.conjugate()  # a Python number: the result keeps its dtype
            for o in out:
                if o is not None:
                    np.multiply(o, c, out=o)
        return out


class _Matmul(Host):
    _names = ("self", "other")

    def forward(self, arrays, attrs):
        put = self._forward_put(arrays, attrs)
        if put is None:
            return None
        a, b = arrays
        return put(_product(np.asarray(a), np.asarray(b)))

    def backward(self, needs, in_meta, attrs, grads, names, saved_vals):
        ops = self._backward_operands(needs, in_meta, attrs, grads, names, saved_vals)
        if ops is None:
            return None
        put, gn, fold, saved = ops
        return [put(o) if o is not None else None
                for o in self._products(needs, gn, fold, saved)]


class _Addmm(Host):
    """``beta * self + alpha * (mat1 @ mat2)``; ``self`` ignored where ``beta == 0``."""
    operands = (1, 2)
    _names = ("self", "mat1", "mat2")

    def forward(self, arrays, attrs):
        put = self._forward_put(arrays, attrs)
        if put is None:
            return None
        s, a, b = arrays
        beta, alpha = attrs["beta"], attrs["alpha"]
        out = _product(np.asarray(a), np.asarray(b))
        if alpha != 1:
            np.multiply(out, alpha, out=out)
        if beta != 0:
            sv = np.asarray(s)
            np.add(out, sv if beta == 1 else sv * beta, out=out)
        return put(out)

    def backward(self, needs, in_meta, attrs, grads, names, saved_vals):
        ops = self._backward_operands(needs, in_meta, attrs, grads, names, saved_vals)
        if ops is None or in_meta[0][1] != attrs["dtype"]:
            return None
        put, gn, fold, saved = ops
        g_self = None
        if needs[0]:
            beta = attrs["beta"]
            if beta == 1 and in_meta[0][0] == gn.shape:
                g_self = grads[0]  # handed on as it is, a JAX array already
            else:
                r = _sum_to_fwd(gn if beta == 1 else gn * beta.conjugate(),
                                shape=in_meta[0][0])
                g_self = put(np.ascontiguousarray(r))
        prods = self._products(needs, gn, fold, saved, attrs["alpha"])
        return [g_self] + [put(o) if o is not None else None for o in prods]


MATMUL = _Matmul()
ADDMM = _Addmm()
