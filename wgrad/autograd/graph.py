"""Backward graph: Node, AccumulateGrad, GraphRoot, hook handles."""
import itertools
import sys
import threading
import weakref

__all__ = ["Node", "AccumulateGrad", "GraphRoot", "RemovableHandle", "GradientEdge",
           "get_gradient_edge"]

_seq = itertools.count()
_SEQ_MAX = sys.maxsize  # AccumulateGrad runs as soon as it is ready (torch: UINT64_MAX)


class RemovableHandle:
    """Handle returned by ``register_*hook``; ``remove()`` unregisters the hook."""

    __slots__ = ("_dict_ref", "id")
    _ids = itertools.count()

    def __init__(self, hooks_dict):
        self._dict_ref = weakref.ref(hooks_dict) if hooks_dict is not None else None
        self.id = next(RemovableHandle._ids)

    def remove(self):
        d = self._dict_ref() if self._dict_ref is not None else None
        if d is not None:
            d.pop(self.id, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


class _HookDict(dict):
    """A dict of hooks that a weakref can point at (plain dicts cannot be weakly referenced)."""
    __slots__ = ("__weakref__",)


def _add_hook(holder, fn):
    h = RemovableHandle(holder)
    holder[h.id] = fn
    return h


class Node:
    """A backward function in the graph (torch.autograd.graph.Node).

    ``next_functions`` is a tuple of ``(Node or None, input_nr)`` pairs, one per input
    of the forward operation.
    """

    __slots__ = ("next_functions", "_seq_nr", "_topological_nr", "_pre_hooks",
                 "_post_hooks", "_tensor_pre_hooks", "_retains_grad_hooks", "_metadata",
                 "_anomaly_trace", "_parent", "__weakref__")

    def __init__(self, next_functions=(), sequence_nr=None):
        self.next_functions = next_functions
        self._seq_nr = next(_seq) if sequence_nr is None else sequence_nr
        topo = 0
        for fn, _ in next_functions:
            if fn is not None and fn._topological_nr >= topo:
                topo = fn._topological_nr + 1
        self._topological_nr = topo
        self._pre_hooks = None
        self._post_hooks = None
        self._tensor_pre_hooks = None
        self._retains_grad_hooks = None
        self._metadata = None
        self._anomaly_trace = None

    # -- identity -------------------------------------------------------------------
    def name(self):
        return type(self).__name__

    def __repr__(self):
        return f"<{self.name()} object at {hex(id(self))}>"

    def _sequence_nr(self):
        return self._seq_nr

    @property
    def metadata(self):
        if self._metadata is None:
            self._metadata = {}
        return self._metadata

    # -- hooks ----------------------------------------------------------------------
    def register_hook(self, fn):
        """Register ``fn(grad_inputs, grad_outputs) -> grad_inputs or None``, run after
        this node computed the gradients of its inputs."""
        if self._post_hooks is None:
            self._post_hooks = _HookDict()
        return _add_hook(self._post_hooks, fn)

    def register_prehook(self, fn):
        """Register ``fn(grad_outputs) -> grad_outputs or None``, run before this node."""
        if self._pre_hooks is None:
            self._pre_hooks = _HookDict()
        return _add_hook(self._pre_hooks, fn)

    def _register_tensor_pre_hook(self, output_nr, fn):
        if self._tensor_pre_hooks is None:
            self._tensor_pre_hooks = {}
        d = self._tensor_pre_hooks.get(output_nr)
        if d is None:
            d = self._tensor_pre_hooks[output_nr] = _HookDict()
        return _add_hook(d, fn)

    def _set_retains_grad_hook(self, output_nr, fn):
        if self._retains_grad_hooks is None:
            self._retains_grad_hooks = {}
        self._retains_grad_hooks[output_nr] = fn

    def _tensor_hooks_for(self, output_nr):
        """Hooks that run on the gradient arriving at ``output_nr`` (tensor hooks, then
        the retains_grad hook: see PyTorch's note "Backward Hooks execution")."""
        hooks = []
        if self._tensor_pre_hooks is not None:
            d = self._tensor_pre_hooks.get(output_nr)
            if d:
                hooks.extend(d.values())
        return hooks

    def _run_pre_hooks(self, grads):
        """Tensor pre-hooks, retains_grad hooks, then node pre-hooks, in torch's order."""
        if self._tensor_pre_hooks:
            for nr, d in self._tensor_pre_hooks.items():
                for hook in list(d.values()):
                    if grads[nr] is None:
                        break
                    r = hook(grads[nr])
                    if r is not None:
                        grads[nr] = r
        if self._retains_grad_hooks:
            for nr, hook in self._retains_grad_hooks.items():
                if grads[nr] is not None:
                    hook(grads[nr])
        if self._pre_hooks:
            for hook in list(self._pre_hooks.values()):
                r = hook(tuple(grads))
                if r is not None:
                    grads = _check_hook_result(self, r, len(grads), "pre-hook")
        return grads

    def _run_post_hooks(self, grad_inputs, grad_outputs):
        if self._post_hooks:
            for hook in list(self._post_hooks.values()):
                r = hook(tuple(grad_inputs), tuple(grad_outputs))
                if r is not None:
                    grad_inputs = _check_hook_result(self, r, len(grad_inputs), "hook")
        return grad_inputs

    # -- to override -------------------------------------------------------------------
    def apply(self, grads):
        """Map the gradients of this node's outputs to those of its inputs."""
        raise NotImplementedError(f"{self.name()}.apply")

    def __call__(self, *grads):
        return self.apply(list(grads))

    def release_variables(self):
        """Free saved values (called by the engine when retain_graph is False)."""

    _input_meta = None  # per input: (shape, dtype) checked by the engine, or None


def _check_hook_result(node, r, n, what):
    if not isinstance(r, (tuple, list)):
        r = (r,)
    if len(r) != n:
        raise RuntimeError(f"{what} of {node.name()} returned {len(r)} gradients but "
                           f"expected {n}")
    return list(r)


class GraphRoot(Node):
    """Feeds the initial gradients into the graph."""

    __slots__ = ("grads",)

    def __init__(self, edges, grads):
        super().__init__(tuple(edges), sequence_nr=_SEQ_MAX)
        self.grads = grads

    def apply(self, grads):
        return list(self.grads)


class AccumulateGrad(Node):
    """Accumulates the incoming gradient into a leaf tensor's ``.grad``."""

    __slots__ = ("variable", "_lock")

    def __init__(self, variable):
        super().__init__((), sequence_nr=_SEQ_MAX)
        self.variable = variable
        self._lock = threading.Lock()

    def _tensor_hooks_for(self, output_nr):
        hooks = self.variable._hooks
        return list(hooks.values()) if hooks else []

    def _run_pre_hooks(self, grads):
        hooks = self.variable._hooks
        if hooks:
            for hook in list(hooks.values()):
                if grads[0] is None:
                    break
                r = hook(grads[0])
                if r is not None:
                    grads[0] = r
        return super()._run_pre_hooks(grads)

    def apply(self, grads):
        g = grads[0]
        if g is None:
            return []
        var = self.variable
        with self._lock:
            var._accumulate_grad(g)
        hooks = var._post_acc_hooks
        if hooks:
            for hook in list(hooks.values()):
                hook(var)
        return []


class GradientEdge(tuple):
    """``(node, output_nr)``: where a gradient enters the graph; usable in ``grad()``."""

    __slots__ = ()

    def __new__(cls, node, output_nr):
        return super().__new__(cls, (node, output_nr))

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])


def get_gradient_edge(tensor):
    """The GradientEdge through which gradients flow into ``tensor``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    return GradientEdge(*tensor._gradient_edge())
