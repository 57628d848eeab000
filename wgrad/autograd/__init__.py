"""wgrad.autograd: backward, grad, grad modes, graph utilities, gradcheck.

The public torch.autograd API over the core in ``wgrad._autograd`` (which knows no
Tensor): this package may import every layer below it.
"""
import math
import warnings

import jax
import numpy as np

from .._autograd.anomaly_mode import (detect_anomaly, is_anomaly_check_nan_enabled,
                                      is_anomaly_enabled, set_detect_anomaly)
from .._autograd.engine import (get_default_engine, is_multithreading_enabled,
                                set_device_workers_for_host_devices,
                                set_multithreading_enabled)
from .._autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                   is_inference_mode_enabled, no_grad, set_grad_enabled)
from .._autograd.graph import GradientEdge, Node, get_gradient_edge, register_multi_grad_hook
from .._autograd.lazy_mode import state as _lazy_state
from .._creation import ones, ones_like, zeros_like
from .._device import several_devices
from ..ops import _lazy
from .._tensor import Size, Tensor, _raw_data

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "is_grad_enabled", "inference_mode", "is_inference_mode_enabled", "graph", "Node",
           "GradientEdge", "gradcheck", "gradgradcheck", "GradcheckError", "Function",
           "once_differentiable", "functional", "forward_ad", "detect_anomaly", "set_detect_anomaly",
           "is_anomaly_enabled", "is_anomaly_check_nan_enabled", "get_gradient_edge",
           "register_multi_grad_hook", "increment_version", "set_multithreading_enabled",
           "is_multithreading_enabled", "set_device_workers_for_host_devices", "Variable",
           "SavedTensor"]


_WARN_CREATE_GRAPH = (
    "Using backward() with create_graph=True will create a reference cycle between the "
    "parameter and its gradient which can cause a memory leak. We recommend using "
    "autograd.grad when creating the graph to avoid this. If you have to use this function, "
    "make sure to reset the .grad fields of your parameters to None after use to break the "
    "cycle and avoid the leak.")


def _as_tuple(x):
    if x is None:
        return ()
    if isinstance(x, (list, tuple)) and not isinstance(x, GradientEdge):
        return tuple(x)
    return (x,)


def _as_inputs(x):
    """``inputs`` of grad/backward as a tuple, with torch's errors for anything else than
    Tensors and GradientEdges."""
    if isinstance(x, (Tensor, GradientEdge)):
        return (x,)
    x = tuple(x)  # TypeError: '<type>' object is not iterable, as torch
    for t in x:
        if not isinstance(t, (Tensor, GradientEdge)):
            raise RuntimeError(f"all inputs have to be Tensors or GradientEdges, but got "
                               f"{type(t).__name__}")
    return x


def _make_grads(outputs, grads, is_grads_batched=False):
    new = []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, GradientEdge):
            meta = out._meta
            if meta is None:
                if g is None:
                    raise RuntimeError("grad_outputs must be provided for a GradientEdge "
                                       "output")
                new.append(g)
                continue
            oshape, odtype, needs = meta[0], meta[1], True
        else:
            oshape, odtype, needs = out.shape, out.dtype, out.requires_grad
        if g is None:
            if needs:
                if math.prod(oshape) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                if not odtype.is_floating_point:
                    raise RuntimeError(f"grad can be implicitly created only for real scalar "
                                       f"outputs but got {odtype!r}")
                new.append(_one_like(out) if isinstance(out, Tensor)
                           else ones(tuple(oshape), dtype=odtype))
            else:
                new.append(None)
            continue
        if not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        gshape = tuple(g.shape)[1:] if is_grads_batched else tuple(g.shape)
        if gshape != tuple(oshape):
            if is_grads_batched:
                raise RuntimeError(
                    f"If `is_grads_batched=True`, we interpret the first dimension of each "
                    f"grad_output as the batch dimension. The sizes of the remaining "
                    f"dimensions are expected to match the shape of corresponding output, but "
                    f"a mismatch was detected: grad_output[{i}] has a shape of "
                    f"{Size(gshape)!r} and output[{i}] has a shape of {Size(oshape)!r}. If "
                    f"you only want some tensors in `grad_output` to be considered batched, "
                    f"consider using vmap.")
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of "
                               f"{Size(g.shape)!r} and output[{i}] has a shape of "
                               f"{Size(oshape)!r}.")
        if odtype.is_complex != g.dtype.is_complex:
            raise RuntimeError(f"For complex Tensors, both grad_output and output are required "
                               f"to have the same dtype. Mismatch in dtype: grad_output[{i}] "
                               f"has a dtype of {g.dtype!r} and output[{i}] has a dtype of "
                               f"{odtype!r}.")
        new.append(g)
    return new


# The implicit gradient of a one-element output, kept per (shape, dtype, device; the
# device left out where JAX has one): an array is immutable, so every backward can start
# from the same one (making it costs a dispatch)
_ONES = {}


def _one_like(out):
    d = _raw_data(out)  # an array, or a Pending (NOTE [Lazy segments]): its metadata
    if isinstance(d, jax.core.Tracer):  # under a JAX transformation
        return ones_like(out)
    several = several_devices()
    key = (d.shape, d.dtype, out.device) if several else (d.shape, d.dtype)
    a = _ONES.get(key)
    if a is None:
        if several:  # it takes the output's layout, which may span devices
            t = ones_like(out)
            a = t._data
            if isinstance(a, jax.core.Tracer) or len(a.devices()) != 1:
                return t  # under a trace, or laid out over several devices
        else:  # from the host: no program to trace, lower and compile for it (a first
            a = jax.device_put(np.ones(d.shape, d.dtype))  # step's milliseconds)
        if len(_ONES) >= 64:
            _ONES.clear()
        _ONES[key] = a
    return Tensor._make(a)


def _scalar_root(out):
    """``([edge], [its gradient])`` of ``out.backward()`` where ``out`` is a real
    floating-point 0-d tensor in a graph (what _make_grads and _root_edges make of it,
    without their general cases), else None (they run and raise what torch raises)."""
    if out._grad_fn is None and not out._requires_grad:
        return None
    d = _raw_data(out)
    if d.shape != () or d.dtype.kind != "f" or isinstance(d, jax.core.Tracer):
        return None
    return [out._gradient_edge()], [_one_like(out)]


def _root_edges(outputs, grads):
    roots, root_grads = [], []
    for i, (out, g) in enumerate(zip(outputs, grads)):
        if isinstance(out, GradientEdge):
            roots.append(tuple(out))
            root_grads.append(_own(g))
            continue
        if not out.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not "
                               f"have a grad_fn")
        roots.append(out._gradient_edge())
        root_grads.append(_own(g))
    return roots, root_grads


def _own(g):
    """A gradient given by the caller enters the graph as a new Tensor over its array, so
    that AccumulateGrad, which keeps the tensor it receives, never keeps the caller's."""
    if isinstance(g, Tensor) and g._grad_fn is None and not g._requires_grad:
        return Tensor._make(g._data)
    return g


def _input_edges(inputs, retain_grad=False):
    """The edges whose gradients ``backward(inputs=)`` / ``grad`` compute; ``retain_grad``
    (backward) makes a non-leaf input keep its ``.grad``."""
    edges = []
    for t in inputs:
        if isinstance(t, GradientEdge):
            edges.append(tuple(t))
            continue
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
        if retain_grad and t.grad_fn is not None:
            t.retain_grad()
        t._ungroup()  # its own node: NOTE [Lazy backward groups]
        edges.append(t._gradient_edge())
    return edges


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulate gradients of ``tensors`` into the ``.grad`` of graph leaves.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> wgrad.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    root = None
    if tensors.__class__ is Tensor and grad_tensors is None and inputs is None \
            and not create_graph:
        root = _scalar_root(tensors)
    if root is not None:  # the common ``loss.backward()``
        roots, root_grads = root
        edges = None
        retain_graph = bool(retain_graph)
    else:
        tensors = _as_tuple(tensors)
        if inputs is not None:
            inputs = _as_inputs(inputs)
            if len(inputs) == 0:
                raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
        grads = _as_tuple(grad_tensors) if grad_tensors is not None else \
            (None,) * len(tensors)
        if len(grads) != len(tensors):
            raise RuntimeError(f"got {len(grads)} tensors and {len(tensors)} gradients")
        grads = _make_grads(tensors, grads)
        if retain_graph is None:
            retain_graph = create_graph
        if create_graph:
            warnings.warn(_WARN_CREATE_GRAPH, UserWarning, stacklevel=2)
        roots, root_grads = _root_edges(tensors, grads)
        edges = _input_edges(inputs, retain_grad=True) if inputs else None
    if _lazy_state.on and _lazy.dispatch_overlaps():
        _lazy.flush()  # the forward runs while the backward is recorded (NOTE [Lazy segments])
    get_default_engine().execute(roots, root_grads, retain_graph, create_graph, edges,
                                 accumulate_grad=True)
    if _lazy_state.on:  # the gradients are concrete when backward returns (NOTE [Lazy segments])
        _lazy.flush()


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """Gradients of ``outputs`` with respect to ``inputs``, returned (not accumulated).

    Example
    -------
    >>> import wgrad
    >>> z = wgrad.tensor(1 + 2j, requires_grad=True)
    >>> wgrad.autograd.grad((z * z.conj()).real, z)
    (tensor(2.+4.j),)
    """
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = _as_tuple(outputs)
    inputs = _as_inputs(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    gouts = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(gouts) != len(outputs):
        raise RuntimeError(f"grad requires one grad_output per output: got {len(gouts)} "
                           f"grad_outputs and {len(outputs)} outputs")
    if is_grads_batched:
        return functional._batched_grad(outputs, inputs, gouts, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    gouts = _make_grads(outputs, gouts)
    if retain_graph is None:
        retain_graph = create_graph
    roots, root_grads = _root_edges(outputs, gouts)
    captured = get_default_engine().execute(roots, root_grads, retain_graph, create_graph,
                                            _input_edges(inputs), accumulate_grad=False)
    result = []
    for i, (t, g) in enumerate(zip(inputs, captured)):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have "
                                   f"been used in the graph. Set allow_unused=True if this is "
                                   f"the desired behavior.")
            if materialize_grads:
                if isinstance(t, GradientEdge):  # no shape to make zeros of
                    raise RuntimeError("materialize_grads cannot be used when the given input "
                                       "is a GradientEdge")
                g = zeros_like(t, requires_grad=create_graph)
        result.append(g)
    return tuple(result)


# the submodules use backward/grad above, so they are imported once those exist
from . import anomaly_mode, forward_ad, function, functional, grad_mode, graph  # noqa: E402
from . import profiler  # noqa: E402  (torch.autograd.profiler)
from .function import Function, once_differentiable  # noqa: E402
from .gradcheck import GradcheckError, gradcheck, gradgradcheck  # noqa: E402
from .graph import increment_version  # noqa: E402
from .variable import Variable  # noqa: E402
import wgrad as torch  # noqa: E402  (legacy code reads torch.autograd.torch)
from ._saved_api import SavedTensor  # noqa: E402
