"""Primitive: a differentiable op declared as a forward plus one formula per input.

# NOTE [One formula, two uses]
# A formula is written with wgrad ops on Tensors (``grad * other.conj()``). When the
# engine runs without create_graph, a node's formulas, plus the post-processing of
# NOTE [Gradient post-processing], are traced once into a jitted kernel keyed by
# (op, static attributes, which inputs need grad, input shapes/dtypes): one XLA call per
# node. With create_graph the same formulas run eagerly with grad mode on, so the
# gradient is itself recorded and can be differentiated again.

# NOTE [Conjugate Wirtinger convention]
# A formula receives ``grad`` = dL/ds* for its output s and returns, per input z,
#     dL/dz* = conj(grad) * ds/dz* + grad * conj(ds/dz)
# so a holomorphic op returns ``grad * f'(z).conj()``. This is PyTorch's value and the
# conjugate of what jax.vjp computes: backward(g) == conj(jax.vjp(f)(conj(g))).

# NOTE [Holomorphic formulas]
# For a holomorphic op (ds/dz* = 0) the convention above leaves ``grad * f'(z).conj()``.
# Such a formula is declared by its derivative alone (sin's is
# ``holomorphic(lambda self: self.cos())``) and the helper applies the conjugate: the one
# place where it is written, so a formula cannot drop it. With ``divide=True`` the lambda
# gives h(z) = 1 / f'(z) and the formula is ``grad / h(z).conj()``: one division rather
# than a reciprocal and a product (log's is ``holomorphic(lambda self: self,
# divide=True)``). The formula keeps the derivative's parameter names (plus ``grad``), so
# the node saves exactly what the derivative names. Non-holomorphic ops (abs, angle, sgn,
# real, imag, polar, ...) write both Wirtinger terms explicitly, and so do formulas whose
# zero must not depend on ``grad`` (pow's exponent-0 case).

# NOTE [Gradient post-processing]
# Done once per input, never in formulas: sum broadcast dimensions back to the input's
# shape, keep the real part for a real input (the R->C rule), cast to the input dtype.
"""
import functools
import inspect

import jax
import jax.extend.core as _jex_core
import jax.numpy as jnp

from .._tensor import Tensor, _make
from .._autograd import anomaly_mode as _anomaly
from .._autograd.forward_ad import get_tangent as _get_tangent
from .._autograd.forward_ad import set_tangent as _set_tangent
from .._autograd.forward_ad import state as _fw
from .._autograd.grad_mode import _state
from .._autograd.graph import Node, _hooks_tls, edges_needed
from .._autograd.saved import SavedTensor, release_saved
from ._views import mark_view as _mark_view  # NOTE [Views]
from . import _lazy  # NOTE [Lazy segments]
from ._lazy import raw as _lazy_raw
from . import _lazy_graph  # NOTE [Lazy backward groups]
from . import _lazy_disk  # NOTE [Lazy disk cache]
from ._promote import result_type as _result_type
from .._autograd.lazy_mode import state as _lazy_state

__all__ = ["Primitive", "OpNode", "primitive", "holomorphic", "device_constant",
           "check_broadcast"]

_DIFF_KINDS = ("f", "c", "V")  # "V": bfloat16 and the other ml_dtypes floats
_VARIADIC, _RESULT, _RESULTS = -1, -2, -3  # NOTE [Recording cost]: where a saved value is
_ERR_INFERENCE = ("Inference tensors cannot be saved for backward. Please do not use Tensors "
                  "created in inference mode in computation tracked by autograd. To work "
                  "around this, you can make a clone to get a normal tensor and use it in "
                  "autograd, or use `torch.no_grad()` instead of `torch.inference_mode()`.")


class Primitive:
    """A differentiable op: ``fwd`` over jax arrays and one formula per input.

    ``fwd``'s positional parameters are the inputs (Tensors or Python scalars; a
    ``*args`` parameter takes a variable number of tensors); its keyword-only parameters
    are static attributes. A formula's parameters name what it needs: ``grad`` (``grads``
    for several outputs), ``result`` (``results``), inputs, attributes, and
    ``<input>_shape`` / ``<input>_dtype``. The node saves exactly the inputs and results
    that the formulas of the inputs needing grad name.
    """

    # False where the backward kernel checks values on the host (NOTE [Lazy segments]:
    # such a node runs eagerly, so its check sees concrete gradients)
    lazy_backward = True

    # the first parameter is not called ``self``: formulas for an input ``self`` arrive
    # as keyword arguments
    def __init__(prim, name, fwd, *, nout=1, jit=True, node_name=None, node_name_of=None,
                 nondiff_outputs=(), view=False, jvp=None, scalar_overload=False,
                 host=None, **formulas):
        prim.name = name
        prim.node_name = node_name or _camel(name) + "Backward0"
        prim.node_cls = _node_class(prim.node_name)
        # NOTE [Node names per call]: None, or (attribute key, first input's shape) -> name
        prim.node_name_of = node_name_of
        prim.fwd = fwd
        prim.nout = nout
        prim.jit = jit
        prim.nondiff_outputs = frozenset(nondiff_outputs)
        # NOTE [Views] in ops/_views.py: True, or a predicate over the attributes
        prim.view = view
        params = inspect.signature(fwd).parameters.values()
        prim.inputs = [p.name for p in params
                       if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
        prim.variadic = any(p.kind == p.VAR_POSITIONAL for p in params)
        unknown = set(formulas) - set(prim.inputs)
        if unknown:
            raise TypeError(f"{name}: formulas for unknown inputs {sorted(unknown)}")
        prim.formulas = formulas
        prim.formula_params = {k: tuple(inspect.signature(f).parameters)
                               for k, f in formulas.items()}
        savable = set(prim.inputs) | {"result", "results"}
        prim._saves_for = {k: tuple(p for p in ps if p in savable)
                           for k, ps in prim.formula_params.items()}
        # NOTE [Node edges]: inputs without a formula are no edges; with scalar_overload,
        # nor are inputs given as numbers. None: every input is an edge, one node class
        prim.scalar_overload = scalar_overload
        prim._edge_of = None if not scalar_overload and set(formulas) == set(prim.inputs) \
            or prim.variadic else tuple(n in formulas for n in prim.inputs)
        prim._plain = node_name_of is None and prim._edge_of is None
        prim._classes = {}
        prim._fwd_cache = {}
        prim._bwd_cache = {}
        prim._saves_cache = {}
        # NOTE [Tangents of primitives]: an explicit rule where JAX's jvp differs from torch
        prim.jvp = jvp
        prim._jvp_cache = {}
        prim._fast = None  # NOTE [Lazy fast lane]: whether its calls may take it, once known
        # NOTE [Host GEMM] in ops/_host_gemm.py: a _host_gemm.Host, for products
        prim.host = host
        _lazy_disk.register(prim)  # its place in disk keys (NOTE [Lazy disk cache])
        if name in _OPMATH and jit:
            prim.fwd = _opmath(fwd, _KEPT.get(name, ()))

    # a generated op that computes tangents (NOTE [Recorded tangents]) has none itself
    no_tangent = False

    def __repr__(self):
        return f"<wgrad primitive {self.name}>"

    def node_class(self, akey, in_meta, needs):
        """The class of the node of a call with attribute key ``akey``, input metadata
        ``in_meta`` and ``needs`` (NOTE [Node names per call], NOTE [Node edges])."""
        if self._plain:
            return self.node_cls
        key = (akey, in_meta, needs)
        cls = self._classes.get(key)
        if cls is None:
            name = None if self.node_name_of is None else self.node_name_of(akey, in_meta)
            name = name or self.node_name
            keep = None
            if self._edge_of is not None:
                so = self.scalar_overload
                so = so(akey, in_meta) if callable(so) else so
                keep = tuple(i for i, (e, m, n) in enumerate(zip(self._edge_of, in_meta, needs))
                             if n or (e and not (so and m is None)))
                if len(keep) == len(in_meta):
                    keep = None
            cls = _node_class(name, keep)
            _bounded_put(self._classes, key, cls)
        return cls

    # -- forward ------------------------------------------------------------------------
    def _forward_fn(self, akey):
        f = self._fwd_cache.get(akey)
        if f is None:
            f = functools.partial(self.fwd, **dict(akey)) if akey else self.fwd
            if self.jit:
                f = _lazy_disk.DeferredJit(f)  # NOTE [Deferred jit]
                f._wg_src = ("f", self, akey)  # NOTE [Lazy disk cache]
                if self.host is not None:
                    f = _host_forward(self.host, f, dict(akey))
                    f._wg_src = f.xla._wg_src
            _bounded_put(self._fwd_cache, akey, f)
        return f

    def __call__(self, *args, **attrs):
        if _lazy_state.on:  # NOTE [Lazy segments]
            res = _lazy_call(self, args, attrs)
            if res is not None:
                return res
        akey = tuple(attrs.items())
        f = self._fwd_cache.get(akey) or self._forward_fn(akey)
        try:
            if self.variadic:
                args = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) \
                    else args
                out = f(*[a._data for a in args])
            elif self.jit:
                out = f(*[a._data if isinstance(a, Tensor) else device_constant(a)
                          for a in args])
            else:
                out = f(*[a._data if isinstance(a, Tensor) else a for a in args])
        except (TypeError, ValueError):  # NOTE [Shape errors]
            check_broadcast(*[a.shape for a in args if isinstance(a, Tensor)])
            raise
        res = None
        if _state.grad:
            for a in args:
                if isinstance(a, Tensor) and (a._requires_grad or a._grad_fn is not None):
                    res = self._record(args, akey, attrs, out)
                    if self.view:
                        res = _mark_view(self, args, akey, res)
                    break
        if res is None:
            if self.nout == 1:
                res = _mark_view(self, args, akey, _make(out)) if self.view else _make(out)
            else:
                res = tuple(_make(o) for o in out)
        if _fw.active:  # NOTE [Forward AD state]: the one check when no level is active
            _push_tangents(self, args, akey, attrs, res)
        return res

    # NOTE [Recording cost]
    # _record runs once per differentiable op in eager code, so it is written for speed:
    # plain loops instead of generator expressions, the list of values to save computed
    # once per (primitive, which inputs need grad), and the single-output case apart.
    # A node's ``needs`` and ``in_meta`` tuples are interned: nodes with the same ones
    # share one object, so a recorded op leaves fewer new objects for Python's cyclic
    # garbage collector, whose full collections run more rarely the fewer survive (figures
    # in docs/performance.md), and the backward kernel lookup compares these keys by
    # identity. Under lazy mode an op of a backward group goes further: what every call
    # of one signature records alike is computed once and kept in the table the segment
    # keeps with the call's output avals (``_lazy_graph._signature``). In every mode a
    # new Tensor costs one class assignment instead of 13 slow field stores (NOTE
    # [Tensor creation cost] in _tensor.py).
    def _record(self, args, akey, attrs, out):
        needs = []
        edges = []
        in_meta = []
        for a in args:
            if isinstance(a, Tensor):
                d = a._data
                in_meta.append((d.shape, d.dtype))
                if a._requires_grad or a._grad_fn is not None:
                    needs.append(True)
                    edges.append(a._gradient_edge())
                    continue
            else:
                in_meta.append(None)
            needs.append(False)
            edges.append((None, 0))
        needs = _intern(_NEEDS, tuple(needs))
        single = self.nout == 1
        if single:
            if self.nondiff_outputs or out.dtype.kind not in _DIFF_KINDS:
                return _make(out)
            outs = None
        else:
            outs = tuple(out)
            diff_out = [i not in self.nondiff_outputs and o.dtype.kind in _DIFF_KINDS
                        for i, o in enumerate(outs)]
            if not any(diff_out):
                return tuple(_make(o) for o in outs)
        in_meta = _intern(_IN_META, tuple(in_meta))
        if self._plain:
            cls = self.node_cls
        else:
            cls = self.node_class(akey, in_meta, needs)
            if cls._keep is not None:  # NOTE [Node edges]
                edges = [edges[i] for i in cls._keep]
        node = cls(tuple(edges))
        if _anomaly._state.enabled:  # NOTE [Anomaly mode]
            _anomaly._record_forward(node)
        node.prim = self
        node.attrs = attrs
        node.akey = akey
        node.needs = needs
        node.num_outputs = self.nout
        node.in_meta = in_meta
        plan, saved = self._save_inputs(args, needs, _save)
        if single:
            node.out_meta = None
            results = (_make(out, node, 0),)
        else:
            node.out_meta = tuple((o.shape, o.dtype) for o in outs)
            results = tuple(_make(o, node, i) if d else _make(o)
                            for i, (o, d) in enumerate(zip(outs, diff_out)))
        for name, i in plan:
            if i == _RESULT:
                saved[name] = SavedTensor(results[0], is_output=True)
            elif i == _RESULTS:
                saved[name] = tuple(SavedTensor(r, is_output=True) for r in results)
        node.saved = saved
        return results[0] if single else results

    def _save_inputs(self, args, needs, save):
        """The save plan for ``needs`` and the inputs it saves by name, each through
        ``save`` (a Tensor or None to a SavedTensor); the results are added by the caller."""
        plan = self.save_plan(needs)
        saved = {}
        for name, i in plan:
            if i >= 0:
                saved[name] = _saved_input(args[i], save)
            elif i == _VARIADIC:
                saved[name] = tuple(save(a) for a in args)
        return plan, saved

    def _saved_values(self, args, needs, save):
        """The save plan for ``needs`` and a list with the value of each of its entries, in
        its order, as _save_inputs saves them; None where a result goes (the results are
        last; the caller adds them)."""
        plan = self.save_plan(needs)
        vals = []
        for name, i in plan:
            if i >= 0:
                vals.append(_saved_input(args[i], save))
            elif i == _VARIADIC:
                vals.append(tuple(save(a) for a in args))
            else:
                vals.append(None)
        return plan, vals

    def save_plan(self, needs):
        """``(name, where)`` per value a call with ``needs`` saves (_save_plan), cached."""
        plan = self._saves_cache.get(needs)
        if plan is None:
            plan = self._saves_cache[needs] = self._save_plan(needs)
        return plan

    def _save_plan(self, needs):
        """``(name, where)`` per value to save: an input index, or _VARIADIC, _RESULT,
        _RESULTS (the outputs, last)."""
        plan, tail = [], []
        for name in self._names_to_save(needs):
            if name == "result":
                tail.append((name, _RESULT))
            elif name == "results":
                tail.append((name, _RESULTS))
            elif self.variadic and name == self.inputs[0]:
                plan.append((name, _VARIADIC))
            else:
                plan.append((name, self.inputs.index(name)))
        return tuple(plan + tail)

    def _names_to_save(self, needs):
        names = []
        if self.variadic:
            needed_inputs = [self.inputs[0]] if any(needs) else []
        else:
            needed_inputs = [n for n, need in zip(self.inputs, needs) if need]
        for inp in needed_inputs:
            for p in self._saves_for.get(inp, ()):
                if p not in names:
                    names.append(p)
        return tuple(names)

    # -- backward -----------------------------------------------------------------------
    def run_formulas(self, attrs, needs, in_meta, out_meta, grads, saved):
        """Input gradients (Tensors or None) from output ``grads`` and ``saved`` values."""
        kw = dict(attrs)
        kw.update(saved)
        if self.nout == 1:
            kw["grad"] = grads[0]
            if grads[0] is None:
                return [None] * len(needs)
        else:
            if all(g is None for g in grads):
                return [None] * len(needs)
            kw["grads"] = tuple(
                g if g is not None else _make(jnp.zeros(m[0], m[1]))
                for g, m in zip(grads, out_meta))
        if "results" in kw:
            kw["result"] = kw["results"][0]
        if self.variadic:
            name = self.inputs[0]
            kw[name + "_shape"] = tuple(m[0] for m in in_meta)
            f = self.formulas.get(name)
            if f is None:
                _missing(self, name)
            gs = f(**{p: kw[p] for p in self.formula_params[name]})
            return [_post(g, m) if n else None for g, m, n in zip(gs, in_meta, needs)]
        for name, m in zip(self.inputs, in_meta):
            if m is not None:
                kw[name + "_shape"] = m[0]
                kw[name + "_dtype"] = m[1]
        out = []
        for name, m, n in zip(self.inputs, in_meta, needs):
            if not n:
                out.append(None)
                continue
            f = self.formulas.get(name)
            if f is None:
                _missing(self, name)
            g = f(**{p: kw[p] for p in self.formula_params[name]})
            out.append(_post(g, m))
        return out

    def kernel(self, akey, attrs, needs, in_meta, out_meta):
        """The cached backward kernel for this node signature (NOTE [One formula, two
        uses]): ``k(grads, saved_vals)`` over arrays, with ``k.names`` (the saved values
        in order) and ``k.identity`` (NOTE [Pass-through kernels])."""
        key = (akey, needs, in_meta, out_meta)
        k = self._bwd_cache.get(key)
        if k is None:
            k = self._build_kernel(attrs, needs, in_meta, out_meta)
            k._wg_src = ("k", self) + key  # NOTE [Lazy disk cache]
            xla = getattr(k, "xla", None)  # a wrapper's jitted kernel (host GEMM, a check)
            if xla is not None:
                xla._wg_src = k._wg_src
            _bounded_put(self._bwd_cache, key, k)
        return k

    def _build_kernel(self, attrs, needs, in_meta, out_meta):
        names = self._names_to_save(needs)
        reduced = {m[1] for m in in_meta + (out_meta or ()) if m is not None} & _REDUCED
        up = self.name in _OPMATH_BACKWARD and reduced and not (
            self.name == "sigmoid" and _F16 in reduced)  # torch's float16 one: step by step

        def fun(grads, saved_vals):
            if up:  # NOTE [Reduced-precision opmath]: _post rounds each gradient once
                grads = [_float32(g) for g in grads]
                saved_vals = [_float32(v) for v in saved_vals]
            prev = _state.grad
            _state.grad = False
            try:
                gs = [_wrap(g) for g in grads]
                sv = {n: _wrap(v) for n, v in zip(names, saved_vals)}
                res = self.run_formulas(attrs, needs, in_meta, out_meta, gs, sv)
            finally:
                _state.grad = prev
            return [r._data if r is not None else None for r in res]
        # NOTE [Deferred jit]; a float16/bfloat16 formula rounds op by op (NOTE [Rounding in
        # fused programs])
        k = (_lazy_disk.FusedJit if reduced else _lazy_disk.DeferredJit)(fun)
        if self.host is not None:
            k = _host_kernel(self.host, k, needs, in_meta, attrs, names)
        k.fun = fun
        k.names = names
        k.identity = _UNKNOWN
        return k


_UNKNOWN = object()


# NOTE [Reduced-precision opmath]
# torch's CPU kernels of float16 and bfloat16 compute in float32 (their "opmath" type) and
# round once at the end: a sum accumulates in float32, sigmoid's exp and division are not
# rounded apart, ``addcmul``'s ``value * t1 * t2 + self`` rounds once. A primitive whose
# forward is written in jax.numpy over the reduced dtype instead rounds after every step
# (XLA's CPU backend computes each float16 operation in float32 and rounds it), 2-5 times
# further from the exact value than torch and different in 20-60% of the elements. So the
# primitives named here run their forward over float32 copies of their reduced-precision
# inputs (a ``dtype`` attribute of float16/bfloat16 too) and round each output to the dtype
# the plain forward gives it (``jax.eval_shape``, at trace time only). An operand of another
# dtype (an integer tensor, a Python number: it arrives as a zero-dim array) is rounded to
# the reduced dtype first, as torch's iterator casts it to the common dtype (an int64 70000
# becomes inf in float16), except a zero-dim second operand of mul and div and lerp's
# weight: torch's kernels read those at float32 (``original_scalar_value<opmath_t>``).
# alpha of add/sub is rounded by their Python wrappers (elementwise.py). The backward
# formulas of the primitives in ``_OPMATH_BACKWARD`` (torch: one backward kernel each) run
# over float32 copies of their gradients and saved values, each input's gradient rounded
# once (``_post``); the others, like torch's composite formulas, round op by op, and ops
# wgrad composes from several primitives round between them (docs/differences.md). XLA's
# GPU backend computes float16 natively; there too these primitives compute in float32,
# as torch's CUDA kernels do.
_REDUCED = frozenset([jnp.dtype(jnp.float16), jnp.dtype(jnp.bfloat16)])
_F32, _F16 = jnp.dtype(jnp.float32), jnp.dtype(jnp.float16)
_OPMATH = frozenset([
    "add", "add_scalar", "sub", "rsub", "mul", "mul_scalar", "div", "addcmul", "addcdiv",
    "lerp", "sigmoid", "silu", "gelu", "softplus", "elu", "celu", "mish", "log_sigmoid",
    "hardswish", "hardsigmoid", "softmax", "log_softmax", "logsumexp", "logcumsumexp", "sum",
    "nansum", "mean", "prod", "cumsum", "cumprod", "var", "std", "var_mean", "std_mean",
    "linalg_vector_norm", "native_layer_norm", "mse_loss", "huber_loss", "smooth_l1_loss",
    "binary_cross_entropy", "binary_cross_entropy_with_logits", "logaddexp", "glu", "trace"])
_KEPT = {"mul": (1,), "div": (1,), "lerp": (2,)}  # zero-dim operands that enter unrounded
# backward formulas torch computes in one kernel (sigmoid_backward, _softmax_backward_data,
# native_layer_norm_backward...): run over float32 copies, each gradient rounded once
_OPMATH_BACKWARD = frozenset([
    "sigmoid", "tanh", "silu", "gelu", "elu", "celu", "softplus", "mish", "log_sigmoid",
    "hardswish", "hardsigmoid", "softmax", "log_softmax", "native_layer_norm", "mse_loss",
    "huber_loss", "smooth_l1_loss", "binary_cross_entropy", "glu"])


def _float32(v):
    return v.astype(_F32) if v is not None and getattr(v, "dtype", None) in _REDUCED else v


def _opmath(fwd, kept):
    """``fwd`` computed in float32 where it meets float16/bfloat16 (NOTE [Reduced-precision
    opmath]); the operands at the positions ``kept``, when zero-dim, enter unrounded."""
    def f(*args, **attrs):
        if not (any(getattr(a, "dtype", None) in _REDUCED for a in args) or
                attrs.get("dtype") in _REDUCED):
            return fwd(*args, **attrs)
        plain = jax.eval_shape(functools.partial(fwd, **attrs), *args)
        red = next((p.dtype for p in jax.tree_util.tree_leaves(plain) if p.dtype in _REDUCED),
                   None)
        up = []
        for i, a in enumerate(args):
            d = getattr(a, "dtype", None)
            if d in _REDUCED:
                a = a.astype(_F32)
            elif red is not None and d is not None and d.kind in "fiub" and \
                    not (a.ndim == 0 and i in kept):
                a = a.astype(red).astype(_F32)
            up.append(a)
        if attrs.get("dtype") in _REDUCED:
            attrs = dict(attrs, dtype=_F32)
        out = fwd(*up, **attrs)
        return jax.tree_util.tree_map(
            lambda o, p: o if o.dtype == p.dtype else o.astype(p.dtype), out, plain)
    functools.update_wrapper(f, fwd)
    return f


def _host_forward(host, jitted, attrs):
    """A forward that computes on the host where ``host`` can (NOTE [Host GEMM])."""
    def f(*arrays):
        out = host.forward(arrays, attrs)
        return jitted(*arrays) if out is None else out
    f.xla = jitted
    return f


def _host_kernel(host, jitted, needs, in_meta, attrs, names):
    """A backward kernel that computes on the host where ``host`` can (NOTE [Host
    GEMM]); traced, it is the jitted kernel."""
    def k(grads, saved_vals):
        out = host.backward(needs, in_meta, attrs, grads, names, saved_vals)
        return jitted(grads, saved_vals) if out is None else out
    k.xla = jitted
    return k


def lazy_fast(prim, args, akey, promote=False):
    """``prim(*args)`` with the attribute key ``akey`` (``tuple(attrs.items())``, in the
    order the call passes them) through the lazy fast lane without the general call's
    layers, for elementwise ops whose Python wrapper already knows its attributes (NOTE
    [Lazy fast lane]): the lane, else lazy mode's general path; None where the call must
    go through ``Primitive.__call__``. ``promote``: the call's first attribute, ``dtype``,
    is the inputs' result type, left out of ``akey`` (the lane's key determines it). Only
    while lazy mode is on."""
    if prim._fast and prim.host is None and _state.grad and not (
            _fw.active or _anomaly._state.enabled or _hooks_tls.stack):
        res = _lazy_graph.fast(prim, args, akey, promote)
        if res is not None:
            return res
        if promote:
            akey = (("dtype", _result_type(*args).np),) + akey
        return _lazy_general(prim, args, dict(akey), akey)
    return None


def _lazy_call(prim, args, attrs):
    """Record the call into the pending segment (NOTE [Lazy segments]); None where it
    must run eagerly. Under a JAX trace an input is a tracer, or a number stays a number
    (device_constant), and the call runs eagerly."""
    if not prim.jit or prim.view or _fw.active or _anomaly._state.enabled \
            or _hooks_tls.stack:
        return None
    if prim.host is not None and prim.host.in_lazy(
            [(a.shape, a.dtype.np) if isinstance(a, Tensor) else ((), None) for a in args]):
        return None  # NOTE [Host GEMM]
    akey = tuple(attrs.items())
    fast = prim._fast
    if fast is None:
        fast = prim._fast = prim.nout == 1 and not prim.variadic and prim.lazy_backward \
            and _lazy_graph.ENABLED
    if fast and _state.grad:  # NOTE [Lazy fast lane]
        res = _lazy_graph.fast(prim, args, akey)
        if res is not None:
            return res
    return _lazy_general(prim, args, attrs, akey)


def _lazy_general(prim, args, attrs, akey):
    """_lazy_call past the fast lane."""
    if prim.variadic:
        args = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    f = prim._fwd_cache.get(akey) or prim._forward_fn(akey)
    xs = []
    kinds = []  # per input: 0 not a Tensor, 1 a Tensor outside autograd, 2 one inside
    tracked = False
    for a in args:
        if isinstance(a, Tensor):
            xs.append(_lazy_raw(a))
            if a._grad_fn is not None or a._requires_grad:
                kinds.append(2)
                tracked = True
            else:
                kinds.append(1)
        else:
            c = device_constant(a)
            if c is a and a is not None:  # not a number (a string), or under a trace
                return None
            xs.append(c)
            kinds.append(0)
    if not tracked and 1 not in kinds:
        return None  # no Tensor input
    try:
        out, table = _lazy.record(f, xs, meta=True)
    except _lazy.NotLazy:
        return None
    except (TypeError, ValueError):  # NOTE [Shape errors]
        check_broadcast(*[a.shape for a in args if isinstance(a, Tensor)])
        raise
    if tracked and _state.grad:
        if _lazy_graph.ENABLED and prim.lazy_backward:
            return _lazy_graph.record(prim, args, akey, attrs, out, table, tuple(kinds))
        tls = _lazy.tls
        prev, tls.raw = tls.raw, True
        try:
            return prim._record(args, akey, attrs, out)
        finally:
            tls.raw = prev
    if prim.nout == 1:
        return _make(out)
    return tuple(_make(o) for o in out)


# NOTE [Bounded caches]
# Every per-shape or per-attribute cache is bounded, so a long-running program whose
# shapes keep changing (a notebook) stays flat: each Primitive keeps at most
# CACHE_MAX forward functions (keyed by static attributes) and CACHE_MAX backward
# kernels (keyed by attributes and input shapes/dtypes); the interning tables of NOTE
# [Recording cost] are cleared past _INTERN_MAX; the view replay kernels of ops/_views.py
# and optim's update kernels are lru_caches of 256. A jitted function dropped from a
# cache takes its XLA executables with it. Eviction is first in, first out: a hit costs
# one dict lookup, no bookkeeping (an LRU's move-to-end would cost every op), and an
# evicted entry still in use is rebuilt (one compile). Index values are not part of any
# key (NOTE [Index values are arguments] in ops/indexing.py).
CACHE_MAX = 256


def _bounded_put(cache, key, value):
    if len(cache) >= CACHE_MAX:
        del cache[next(iter(cache))]
    cache[key] = value


# NOTE [Tangents of primitives]
# Forward-mode AD needs no second formula table: the tangent of a primitive's outputs is
# the JVP of its forward, ``jax.jvp(fwd, primals, tangents)``, run as one jitted kernel
# per (primitive, attributes, which inputs carry a tangent); jit specialises it per
# shape and dtype. JAX's jvp of a complex function is the R-linear pushforward
# df = (df/dz) t + (df/dz*) conj(t), which is torch's forward-mode convention (no
# conjugation, unlike NOTE [Conjugate Wirtinger convention]). Explicit rules where this
# is not enough:
# - a view primitive applies itself to the tangent, so the tangent of a view is a view of
#   the tangent (NOTE [Views]);
# - ``Primitive(jvp=rule)`` gives ``rule(primals, tangents, **attrs)`` over arrays (an
#   absent tangent is None) where JAX's derivative at a non-differentiable point is not
#   torch's (abs'(0) is 0 in torch, 1 in JAX);
# - integer and boolean outputs, ``nondiff_outputs``, and ops in inference mode get no
#   tangent;
# - a tangent whose dtype is not its primal's is cast first (the real part for a complex
#   tangent of a real primal).
# With grad mode on and a primal or tangent that requires grad, the same function runs as a
# recorded op instead (NOTE [Recorded tangents]), so tangents can be differentiated.
_JVP_MAX = 1024


def _jvp_kernel(prim, akey, idx):
    cache = prim._jvp_cache
    key = (akey, idx)
    k = cache.get(key)
    if k is not None:
        return k
    attrs = dict(akey)
    fwd = functools.partial(prim.fwd, **attrs) if attrs else prim.fwd
    rule = prim.jvp

    def fun(vals, tans):
        tans = [_cast_tangent(t, vals[i]) for i, t in zip(idx, tans)]
        if rule is not None:
            full = [None] * len(vals)
            for i, t in zip(idx, tans):
                full[i] = t
            return rule(tuple(vals), tuple(full), **attrs)

        def g(*diff):
            vs = list(vals)
            for i, d in zip(idx, diff):
                vs[i] = d
            return fwd(*vs)
        return jax.jvp(g, tuple(vals[i] for i in idx), tuple(tans))[1]
    k = jax.jit(fun) if prim.jit else fun
    if len(cache) >= _JVP_MAX:
        cache.clear()
    cache[key] = k
    return k


def _cast_tangent(t, v):
    if t.dtype == v.dtype:
        return t
    if jnp.iscomplexobj(t) and not jnp.iscomplexobj(v):
        t = jnp.real(t)
    return t.astype(v.dtype)


def _push_tangents(prim, args, akey, attrs, res):
    """Give ``res`` (a Tensor or a tuple) the tangents of a call with dual inputs."""
    if _state.inference or prim.no_tangent:  # inference mode computes no tangents, as torch
        return
    if prim.variadic:
        args = args[0] if len(args) == 1 and isinstance(args[0], (list, tuple)) else args
    idx, tans = [], []
    for i, a in enumerate(args):
        if isinstance(a, Tensor):
            t = _get_tangent(a)
            if t is not None:
                idx.append(i)
                tans.append(t)
    if not idx:
        return
    if prim.view:
        if idx[0] == 0 and prim.nout == 1:
            _set_tangent(res, prim(tans[0], *args[1:], **attrs))
            return
    single = prim.nout == 1
    outs = (res,) if single else res
    if all(i in prim.nondiff_outputs or o._data.dtype.kind not in _DIFF_KINDS
           for i, o in enumerate(outs)):
        return
    diff = [i not in prim.nondiff_outputs and o._data.dtype.kind in _DIFF_KINDS
            for i, o in enumerate(outs)]
    touts = None
    if _state.grad and _any_requires_grad(args, tans):
        touts = _recorded_tangents(prim, akey, tuple(idx), args, tans, diff)
    if touts is None:
        k = _jvp_kernel(prim, akey, tuple(idx))
        vals = [a._data if isinstance(a, Tensor) else a for a in args]
        touts = k(vals, [t._data for t in tans])
        if single:
            touts = (touts,)
        touts = [_make(t) for t in touts]
    for o, t, d in zip(outs, touts, diff):
        if d:
            _set_tangent(o, t)
    node = outs[0]._grad_fn
    if isinstance(node, OpNode) and node.prim is prim:
        # a saved result is rebuilt on unpack: its tangent must come back with it
        node.fw_results = (_fw.generation, tuple(_get_tangent(o) for o in outs))


# NOTE [Recorded tangents]
# When grad mode is on and a primal or a tangent requires grad, a tangent must itself be
# differentiable (reverse-over-forward). It is then computed by a generated primitive whose
# forward is the JVP kernel's function over (tensor inputs, tangents) and whose backward is
# the JAX identity of NOTE [Conjugate Wirtinger convention], conj(jax.vjp(f)(conj g)), a
# generated primitive again, so any order works. Python scalar arguments become static
# attributes of the generated op (one compiled kernel per value: this path is rare).
_GENERATED = {}


def _any_requires_grad(args, tans):
    for a in args:
        if isinstance(a, Tensor) and (a._requires_grad or a._grad_fn is not None):
            return True
    for t in tans:
        if t._requires_grad or t._grad_fn is not None:
            return True
    return False


def _generated(key, fun, nout, name):
    """The primitive ``fun(*xs)`` over tensors, differentiable to any order."""
    p = _GENERATED.get(key)
    if p is not None:
        return p

    def backward(xs, gs):
        diff = tuple(i for i, x in enumerate(xs) if x._data.dtype.kind in _DIFF_KINDS)
        if not diff:
            return [None] * len(xs)
        n_in = len(xs)

        def vjp(*a):
            ins, cts = a[:n_in], a[n_in:]

            def g(*d):
                full = list(ins)
                for i, v in zip(diff, d):
                    full[i] = v
                return fun(*full)
            _, pull = jax.vjp(g, *[ins[i] for i in diff])
            cts = tuple(jnp.conj(c) for c in cts)
            res = tuple(jnp.conj(r) for r in pull(cts[0] if nout == 1 else cts))
            return res[0] if len(res) == 1 else res
        op = _generated(("vjp", key, diff), vjp, len(diff), name + "_vjp")
        outs = op(*xs, *gs)
        outs = (outs,) if len(diff) == 1 else outs
        full = [None] * n_in
        for i, o in zip(diff, outs):
            full[i] = o
        return full
    if nout == 1:
        formula = lambda grad, xs: backward(xs, (grad,))  # noqa: E731
    else:
        formula = lambda grads, xs: backward(xs, grads)  # noqa: E731
    p = Primitive(name, lambda *xs: fun(*xs), nout=nout, xs=formula)
    p.no_tangent = True
    if len(_GENERATED) >= _JVP_MAX:
        _GENERATED.clear()
    _GENERATED[key] = p
    return p


def _recorded_tangents(prim, akey, idx, args, tans, diff):
    """The tangents as recorded ops (NOTE [Recorded tangents]), or None when a static
    argument cannot key the generated op."""
    tpos = tuple(i for i, a in enumerate(args) if isinstance(a, Tensor))
    consts = tuple((i, a) for i, a in enumerate(args) if not isinstance(a, Tensor))
    key = ("jvp", prim, akey, idx, tpos, consts)
    try:
        hash(key)
    except TypeError:
        return None
    kernel = _jvp_kernel(prim, akey, idx)
    dpos = tuple(i for i, d in enumerate(diff) if d)
    n_t, n_args, single = len(tpos), len(args), prim.nout == 1

    def fun(*xs):
        vals = [None] * n_args
        for i, c in consts:
            vals[i] = c
        for i, x in zip(tpos, xs[:n_t]):
            vals[i] = x
        out = kernel.__wrapped__(vals, list(xs[n_t:])) if hasattr(kernel, "__wrapped__") \
            else kernel(vals, list(xs[n_t:]))
        out = (out,) if single else out
        out = tuple(out[i] for i in dpos)
        return out[0] if len(out) == 1 else out
    op = _generated(key, fun, len(dpos), prim.name + "_jvp")
    res = op(*[args[i] for i in tpos], *tans)
    res = (res,) if len(dpos) == 1 else res
    touts = [None] * len(diff)
    for i, r in zip(dpos, res):
        touts[i] = r
    return touts


def _restore_result_tangents(node, sv):
    ts = getattr(node, "fw_results", None)
    if ts is None or ts[0] != _fw.generation:  # recorded in an earlier level
        return
    ts = ts[1]
    if "result" in sv and sv["result"] is not None:
        _set_tangent(sv["result"], ts[0])
    if "results" in sv:
        for r, t in zip(sv["results"], ts):
            if r is not None:
                _set_tangent(r, t)

# NOTE [Pass-through kernels]
# Some backward kernels hand a gradient on untouched: add's and sub's ``self``, a sum
# over nothing, a cast to the same dtype. Such a kernel is found once, when it first
# runs, by tracing it: every output that is not None is one of the incoming gradients
# (a jaxpr output variable that is an input variable). From then on the node returns
# fresh Tensors over those gradients' arrays without an XLA dispatch.
def _pass_through(fun, gs, vals):
    """Per output, the index of the incoming gradient it equals (None for no gradient),
    or None when some output is computed."""
    closed, shapes = jax.make_jaxpr(fun, return_shape=True)(gs, vals)
    jp = closed.jaxpr
    grad_slot = {}  # position among the jaxpr's invars -> index into gs
    j = 0
    for i, g in enumerate(gs):
        if g is not None:
            grad_slot[jp.invars[j]] = i
            j += 1
    outs = iter(jp.outvars)
    ident = []
    for shape in shapes:
        if shape is None:
            ident.append(None)
            continue
        v = next(outs)
        i = grad_slot.get(v) if isinstance(v, _jex_core.Var) else None
        if i is None:
            return None
        ident.append(i)
    return tuple(ident)


def _identity(k, gs, vals, lazy):
    """_pass_through of kernel ``k`` over these arguments, remembered across processes
    (NOTE [Lazy disk cache]: tracing the kernel is a first step's milliseconds)."""
    args = _lazy.abstract((gs, vals)) if lazy else (gs, vals)
    if _lazy_disk.directory() is None:
        return _pass_through(k.fun, *args)
    leaves, tree = jax.tree_util.tree_flatten(args)
    if not all(isinstance(x, (jax.Array, jax.ShapeDtypeStruct)) for x in leaves):
        return _pass_through(k.fun, *args)  # a Python value among them: not kept
    avals = tuple((x.shape, x.dtype, bool(x.weak_type)) for x in leaves)
    return _lazy_disk.remembered("ident", k, (tree, avals),
                                 lambda: _pass_through(k.fun, *args))


# NOTE [Shape errors]
# Inputs whose shapes do not broadcast raise torch's RuntimeError, not JAX's
# TypeError/ValueError. The check costs nothing on valid calls: JAX's error is caught in
# Primitive.__call__ and the clash is found again from the input shapes here (ops whose
# shapes obey other rules, such as matmul and cat, check them before dispatch). Ops built
# from several primitives (lerp, masked_fill) call check_broadcast first, so the message
# names their own inputs in torch's order.
def check_broadcast(*shapes):
    """Raise torch's RuntimeError if ``shapes`` do not broadcast together."""
    out = []
    for s in shapes:
        s = tuple(s)
        out = [1] * (len(s) - len(out)) + out
        for k in range(1, len(s) + 1):
            if out[-k] == 1:
                out[-k] = s[-k]
            elif s[-k] not in (1, out[-k]):
                raise RuntimeError(f"The size of tensor a ({out[-k]}) must match the size of "
                                   f"tensor b ({s[-k]}) at non-singleton dimension "
                                   f"{len(out) - k}")


def _saved_input(a, save):
    """What a node keeps of input ``a``: a Tensor (or an absent one) through ``save``,
    index arrays each saved (so freed as torch's indices), anything else as it is."""
    if isinstance(a, Tensor) or a is None:
        return save(a)
    if type(a) is tuple:
        return tuple(save(x) if isinstance(x, Tensor) else
                     _save(_make(x)) if isinstance(x, jax.Array) else x for x in a)
    return a


def _save(t):
    if t is None:
        return SavedTensor(None)
    if t._is_inference and not _state.inference:
        raise RuntimeError(_ERR_INFERENCE)
    return SavedTensor(t)


def _wrap(v):
    if v is None:
        return None
    if isinstance(v, tuple):
        return tuple(_wrap(x) for x in v)
    return _make(v if not isinstance(v, (int, float, complex)) else jnp.asarray(v))


# NOTE [Python scalars as device constants]
# A Python number handed to a jitted function is copied host to device on every call
# (80 us against 31 us for ``x * 0.5`` on a GPU). Numbers reaching a jitted forward or
# backward kernel are replaced by a device array made once per (type, value) and kept:
# weakly typed like the number itself, so promotion and the traced program are unchanged.
# Zeros are told apart by sign (-0.0), NaNs by their text. The table is bounded: a
# program whose constants keep changing (a decaying factor) clears it from time to time
# and pays the transfer.
# Only outside any trace: inside one (a backward kernel, wgrad.compile, a user's jax.jit)
# a number is a literal of the traced program, and a concrete array there would become a
# captured constant of every kernel traced over it.
_CONSTS = {}
_CONSTS_MAX = 1024
_top_level = _lazy_disk.top_level  # NOTE [Python scalars as device constants]
_NUMBER = (int, float, complex)  # bool is an int


def device_constant(v, dtype=None):
    """``v`` as a cached device array (of ``dtype`` if given) when it is a Python number,
    else ``v`` (NOTE [Python scalars as device constants])."""
    if not isinstance(v, _NUMBER) or not _top_level():
        return v
    t = v.__class__
    key = (t, v, dtype) if v and v == v else (t, repr(v), dtype)  # zeros' signs, NaN
    c = _CONSTS.get(key)
    if c is None:
        try:  # a transfer, not a program to compile (a first step's milliseconds)
            c = jax.device_put(v) if dtype is None else jnp.asarray(v, dtype)
        except OverflowError:  # too large for any JAX integer: let jit raise its error
            return v
        if len(_CONSTS) >= _CONSTS_MAX:
            _CONSTS.clear()
        _CONSTS[key] = c
    return c


def _missing(prim, name):
    raise NotImplementedError(f"the derivative for '{prim.name}' is not implemented "
                              f"for input '{name}'.")


def _post(g, meta, node=None, index=0):
    """NOTE [Gradient post-processing]. ``node``/``index`` name a user-written backward
    (a custom Function) in torch's error for a gradient of the wrong shape."""
    if g is None:
        return None
    shape, dt = meta
    if not isinstance(g, Tensor):
        g = _make(jnp.asarray(g))
    d = g._data
    if d.shape != shape:
        try:
            g = g._sum_to(shape)
        except Exception:
            if node is None:
                raise
            raise RuntimeError(
                f"Function {node.name()} returned an invalid gradient at index {index} - got "
                f"{list(d.shape)} but expected shape compatible with {list(shape)}") from None
    if d.dtype != dt:
        if d.dtype.kind == "c" and dt.kind != "c":
            g = g.real
        g = g.to(dt)
    return g


# NOTE [Recording cost]: one shared tuple per distinct value; cleared when it grows past
# _INTERN_MAX (programs whose shapes keep changing)
_NEEDS = {}
_IN_META = {}
_INTERN_MAX = 4096


def _intern(table, value):
    """The one shared copy of ``value`` in ``table`` (cleared past _INTERN_MAX, NOTE
    [Bounded caches])."""
    if len(table) > _INTERN_MAX:
        table.clear()
    return table.setdefault(value, value)


class OpNode(Node):
    """The backward node of a Primitive call (``MulBackward0`` and so on)."""

    __slots__ = ("prim", "attrs", "akey", "needs", "in_meta", "out_meta", "saved",
                 "num_outputs", "fw_results")

    _keep = None  # NOTE [Node edges]: the inputs that are edges, where not all

    def apply(self, grads, needs=None):
        if needs is None:
            needs = self.needs
        try:
            p = self.prim
            saved = self.saved
            if _state.grad or _fw.active:  # create_graph: record the formulas; a dual
                # level: carry tangents through them (forward-over-reverse)
                sv = {k: _unpack(v, self, graph=True) for k, v in saved.items()}
                if _fw.active:
                    _restore_result_tangents(self, sv)
                return p.run_formulas(self.attrs, needs, self.in_meta, self.out_meta,
                                      list(grads), sv)
            if _lazy_state.on and not _hooks_tls.stack and p.lazy_backward and (
                    p.host is None or not p.host.in_lazy(self.in_meta)):
                # recorded into the segment (NOTE [Lazy segments])
                tls = _lazy.tls
                prev, tls.raw = tls.raw, True
                try:
                    return self._apply_kernel(p, saved, grads, True, needs)
                except _lazy.NotLazy:  # a tracer: under a JAX trace
                    pass
                finally:
                    tls.raw = prev
            return self._apply_kernel(p, saved, grads, False, needs)
        except NotImplementedError:
            masked = self._asked(needs)
            if masked is None:
                raise
            return self.apply(grads, masked)

    def _asked(self, needs):
        """``needs`` without the inputs the running backward call does not ask for (torch's
        task_should_compute_output: a missing formula of such an input is no error), or
        None where that changes nothing."""
        edges = edges_needed(self)
        if edges is None:
            return None
        masked = list(needs)
        for i, needed in enumerate(edges):
            if not needed:
                masked[i if self._keep is None else self._keep[i]] = False
        masked = tuple(masked)
        return None if masked == needs else masked

    def _apply_kernel(self, p, saved, grads, lazy, needs):
        # NOTE [Recording cost] applies here too: one dict lookup for the kernel, the
        # common saved value (a SavedTensor without hooks) unpacked inline
        k = p._bwd_cache.get((self.akey, needs, self.in_meta, self.out_meta))
        if k is None:
            k = p.kernel(self.akey, self.attrs, needs, self.in_meta, self.out_meta)
        if self.num_outputs == 1:
            g = grads[0]
            if g is None:
                return [None] * len(needs)
            gs = [g._data]
        else:
            if all(g is None for g in grads):
                return [None] * len(needs)
            gs = [g._data if g is not None else None for g in grads]
        vals = []
        for n in k.names:
            v = saved[n]
            if type(v) is SavedTensor:
                t = v.unpack(self)
                vals.append(t._data if t is not None else None)
            else:
                vals.append(device_constant(_unpack(v, self, graph=False)))
        ident = k.identity
        if ident is _UNKNOWN:
            ident = k.identity = _identity(k, gs, vals, lazy)
        if ident is not None:  # NOTE [Pass-through kernels]
            return [_make(gs[i]) if i is not None else None for i in ident]
        if lazy:
            leaves, tree = jax.tree_util.tree_flatten((gs, vals))
            outs = _lazy.record(k, leaves, tree)
        else:
            outs = k(gs, vals)
        return [_make(o) if o is not None else None for o in outs]

    def release_variables(self):
        # False: another backward freed them first (NOTE [Releasing saved values])
        return release_saved(self.saved.values())

    def __getattr__(self, name):
        if name.startswith("_raw_saved_"):
            key = name[len("_raw_saved_"):]
            if key in self.saved:
                return self.saved[key]
        elif name.startswith("_saved_"):
            key = name[len("_saved_"):]
            if key in self.saved:
                return _unpack(self.saved[key], self, graph=True)
            if key in self.attrs:
                return self.attrs[key]
        raise AttributeError(f"'{self.name()}' object has no attribute '{name}'")

    def __dir__(self):
        # as in torch, dir() lists the saved values, so tools (torchviz, wgrad.viz) find them
        raw = [f"_raw_saved_{k}" for k in self.saved]
        return sorted({*super().__dir__(), *raw, *(f"_saved_{k}" for k in self.saved),
                       *(f"_saved_{k}" for k in self.attrs)})


# NOTE [Node class names]
# As in torch, a node's type is named after its backward function: ``type(y.grad_fn)``
# is ``MulBackward0``, so reprs and graph descriptions built from ``type(fn).__name__``
# read as torch's. Each name gets one subclass of OpNode, made when the first Primitive
# with that node name is declared (a bounded set: one per declared primitive, plus the
# few names of NOTE [Node names per call]), so recording a node costs the same as
# instantiating OpNode itself. ``name()`` is that class name, except for the nodes torch
# writes by hand in C++ (CopySlices, CopyBackwards, AccumulateGrad, GraphRoot), whose
# ``name()`` is their C++ name, ``torch::autograd::CopySlices`` (graph._CPP_NAMED).

# NOTE [Node names per call]
# One Primitive can stand for several torch ops, whose nodes torch names apart: basic
# indexing is one ``index`` call in wgrad, while torch applies select, slice, unsqueeze
# or alias per index element and names the result's node after the last one
# (``x[1:]`` is SliceBackward0, ``x[:, 0]`` SelectBackward0, ``x[:]`` AliasBackward0).
# Such a Primitive passes ``node_name_of(akey, in_meta)``, the name for a call's attribute
# key and inputs' (shape, dtype) (None for a non-tensor), or None for its own; its node
# gets that name's class (``Primitive.node_class``), and ``name()`` is the class name
# (Node.name). The graph stays one node where torch has a chain of them
# (docs/differences.md). ``name_by_op`` names by a static ``op`` attribute that the
# caller passes and the forward ignores (``t()`` and ``transpose`` are one permute).
_NODE_CLASSES = {}


def name_by_op(names):
    """``node_name_of`` for a Primitive that stands for several torch ops: the name for the
    call's static ``op`` attribute (which the forward ignores), the Primitive's own without
    one (NOTE [Node names per call])."""
    def node_name_of(akey, in_meta):
        for k, v in akey:
            if k == "op":
                return names[v]
        return None
    return node_name_of


def _node_class(node_name, keep=None):
    cls = _NODE_CLASSES.get((node_name, keep))
    if cls is None:
        body = {"__slots__": (), "__module__": "builtins"}
        if keep is not None:  # NOTE [Node edges]: the gradients of the edges only
            body["_keep"] = keep
            body["apply"] = _apply_kept
        cls = _NODE_CLASSES[(node_name, keep)] = type(node_name, (OpNode,), body)
    return cls


def _apply_kept(self, grads):
    res = OpNode.apply(self, grads)
    return [res[i] for i in self._keep]


# NOTE [Node edges]
# torch's node has one edge (``next_functions`` entry, gradient returned by ``apply``, hook
# ``grad_inputs`` entry) per *differentiable* tensor argument of its ATen overload: an index,
# mask or condition is none (``x[i]`` is SelectBackward0 over x alone), nor is a Scalar of
# a scalar overload (``x ** 2`` is PowBackward0, ``2 - x`` RsubBackward1: one edge), while a
# number given where the overload takes a tensor is a wrapped tensor, an edge to nothing
# (``x * 2``: MulBackward0 with ``(x, None)``). A Primitive follows that: an input without a
# formula is no edge, and with ``scalar_overload`` (True, or a predicate over the call's
# ``akey, in_meta``: whether torch would take the scalar overload) neither is a non-tensor
# input. Its node class (per call: ``node_class``) then carries ``_keep``, the inputs that
# are edges; the node's edges and ``apply``'s gradients are those. An input that requires
# grad is always an edge, so no gradient can be dropped (a missing formula still raises).


def _unpack(v, node, graph):
    if isinstance(v, SavedTensor):
        t = v.unpack(node)
        return t if graph or t is None else t._data
    if isinstance(v, tuple):
        return tuple(_unpack(s, node, graph) for s in v)
    if graph and isinstance(v, (int, float, complex)) and not isinstance(v, bool):
        return _make(jnp.asarray(v))
    return v


def _camel(name):
    """torch's node-name spelling: ``log1p`` -> ``Log1P``, ``deg2rad`` -> ``Deg2Rad``."""
    out = []
    up = True
    for ch in name:
        if ch == "_":
            up = True
            continue
        out.append(ch.upper() if up else ch)
        up = ch.isdigit()
    return "".join(out)


def primitive(name, **kw):
    """Decorator form: ``@primitive("sin", self=lambda grad, self: ...)`` over the forward."""
    def deco(fwd):
        return Primitive(name, fwd, **kw)
    return deco


def holomorphic(derivative, *, divide=False):
    """The formula ``grad * derivative(...).conj()`` of a holomorphic op.

    NOTE [Holomorphic formulas]. With ``divide=True`` the formula is
    ``grad / derivative(...).conj()``. Its parameters are ``grad`` followed by
    ``derivative``'s, which decide what the node saves.

    Example
    -------
    >>> import inspect
    >>> from wgrad.ops._primitive import holomorphic
    >>> formula = holomorphic(lambda self: self.cos())  # sin's
    >>> list(inspect.signature(formula).parameters)
    ['grad', 'self']
    """
    def formula(grad, **kw):
        d = derivative(**kw).conj()
        return grad / d if divide else grad * d
    params = [inspect.Parameter("grad", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params += list(inspect.signature(derivative).parameters.values())
    formula.__signature__ = inspect.Signature(params)
    return formula
