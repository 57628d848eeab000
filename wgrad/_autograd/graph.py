"""Backward graph: Node, AccumulateGrad, GraphRoot, hook handles, saved-tensor hook state.

Knows no Tensor: a tensor is reached only through the attributes the graph reads
(``_gradient_edge()``, ``register_hook``, ``_hooks``, ``_accumulate_grad``).
"""
import functools
import itertools
import sys
import threading
import weakref

__all__ = ["Node", "AccumulateGrad", "GraphRoot", "RemovableHandle", "GradientEdge",
           "get_gradient_edge", "register_multi_grad_hook", "saved_tensors_hooks",
           "disable_saved_tensors_hooks"]

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


# nodes that torch writes in C++ rather than generating from derivatives.yaml: name()
# gives their C++ type name, while their Python class (and so reprs) has the short one
_CPP_NAMED = frozenset(("AccumulateGrad", "CopySlices", "CopyBackwards", "GraphRoot",
                        "NotImplemented"))


class Node:
    """A backward function in the graph (torch.autograd.graph.Node).

    ``next_functions`` is a tuple of ``(Node or None, input_nr)`` pairs, one per input
    of the forward operation.
    """

    __slots__ = ("_edges", "_seq_nr", "_topological_nr", "_pre_hooks",
                 "_post_hooks", "_tensor_pre_hooks", "_retains_grad_hooks", "_metadata",
                 "_anomaly_trace", "_parent", "__weakref__")

    _is_group = False  # NOTE [Lazy backward groups] in ops/_lazy_graph.py

    def __init__(self, next_functions=(), sequence_nr=None):
        self._edges = next_functions  # what the engine follows
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

    @property
    def next_functions(self):
        edges = self._edges
        for fn, _ in edges:
            if fn is not None and fn._is_group:  # NOTE [Lazy backward groups]: its ops
                return tuple(f._resolve(nr) if f is not None and f._is_group else (f, nr)
                             for f, nr in edges)
        return tuple(edges)

    # -- identity -------------------------------------------------------------------
    def name(self):
        """torch's name of this node: its class name, or for torch's hand-written C++ nodes
        their C++ name (``torch::autograd::AccumulateGrad``)."""
        n = type(self).__name__
        return "torch::autograd::" + n if n in _CPP_NAMED else n

    def _forward_op_name(self):
        """The forward op's name as torch's errors give it: ``name()`` without a trailing
        ``Backward<n>`` (``Exp`` for ExpBackward0, ``F`` for a Function F's FBackward)."""
        n = self.name()
        s = n.rstrip("0123456789")
        return s[:-8] if s.endswith("Backward") else n

    def __repr__(self):
        return f"<{type(self).__name__} object at {hex(id(self))}>"

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

    def _has_hooks(self):
        """Whether any hook would run around this node (NOTE [A lazy group alone] in
        engine.py)."""
        return bool(self._pre_hooks or self._post_hooks or self._tensor_pre_hooks or
                    self._retains_grad_hooks)

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
                # an output that got no gradient still has its hooks called, with None
                # (torch wraps the undefined tensor as None)
                for hook in list(d.values()):
                    r = hook(grads[nr])
                    if r is not None:
                        grads[nr] = _check_tensor_hook_result(r)
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
        n = getattr(self, "num_outputs", None)
        if n is not None and len(grads) != n:
            raise TypeError(f"expected {n} arguments, got {len(grads)} instead")
        return self.apply(list(grads))

    def release_variables(self):
        """Free saved values (called by the engine when retain_graph is False)."""


def _check_tensor_hook_result(r):
    """A tensor hook's returned gradient; torch's TypeError for anything but a Tensor
    (this layer knows no Tensor class: a Tensor is what has ``requires_grad``)."""
    if not hasattr(r, "requires_grad"):
        raise TypeError(f"expected Variable, but hook returned '{type(r).__name__}'")
    return r


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


_ACC_LOCKS = tuple(threading.Lock() for _ in range(64))


class Error(Node):
    """Raises when a gradient that was computed without a graph is differentiated (torch's
    DelayedError node, whose type is named ``Error``): once_differentiable's backward, and
    formulas whose derivative is not defined (NOTE [Scatter product gradient])."""

    __slots__ = ("msg", "num_outputs")

    def __init__(self, msg, edges, n):
        super().__init__(edges)
        self.msg = msg
        self.num_outputs = n

    def name(self):
        return "Error"

    def apply(self, grads):
        raise RuntimeError(self.msg)


class AccumulateGrad(Node):
    """Accumulates the incoming gradient into a leaf tensor's ``.grad``."""

    __slots__ = ("variable", "_lock")

    def __init__(self, variable):
        super().__init__((), sequence_nr=_SEQ_MAX)
        self.variable = variable
        # keyed by the leaf: two AccumulateGrad made for it concurrently share the lock
        self._lock = _ACC_LOCKS[(id(variable) >> 4) % len(_ACC_LOCKS)]

    def _tensor_hooks_for(self, output_nr):
        hooks = self.variable._hooks
        return list(hooks.values()) if hooks else []

    def _has_hooks(self):
        var = self.variable
        return bool(var._hooks or var._post_acc_hooks) or super()._has_hooks()

    def _run_pre_hooks(self, grads):
        hooks = self.variable._hooks
        if hooks:
            for hook in list(hooks.values()):
                if grads[0] is None:
                    break
                r = hook(grads[0])
                if r is not None:
                    grads[0] = _check_tensor_hook_result(r)
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
                if hook(var) is not None:
                    raise RuntimeError("Tensor post accumulate grad hooks should return None.")
        return []


class GradientEdge(tuple):
    """``(node, output_nr)``: where a gradient enters the graph; usable in ``grad()``.
    ``_meta`` is ``(shape, dtype)`` of the tensor it was taken from (for ``grad()``'s
    implicit and checked gradients), None when unknown."""

    def __new__(cls, node, output_nr, meta=None):
        e = super().__new__(cls, (node, output_nr))
        e._meta = meta
        return e

    node = property(lambda self: self[0])
    output_nr = property(lambda self: self[1])


def get_gradient_edge(tensor):
    """The GradientEdge through which gradients flow into ``tensor``."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    tensor._ungroup()  # NOTE [Lazy backward groups]
    return GradientEdge(*tensor._gradient_edge(), meta=(tensor.shape, tensor.dtype))


# NOTE [Current graph task]
# The engine records, per thread, the GraphTask whose node it is running
# (``_set_current_graph_task`` around each node, restored afterwards so that reentrant
# backward nests). Hooks ask for it through ``_current_graph_task_id`` and
# ``_will_engine_execute_node`` (torch's functions of the same names); the multi-grad
# hook needs both to know which backward call a gradient belongs to and how many of its
# tensors that call will reach.

_current = threading.local()
_task_ids = itertools.count()


def _set_current_graph_task(task):
    prev = getattr(_current, "task", None)
    _current.task = task
    return prev


def _current_graph_task_id():
    """An id of the backward call running on this thread, or -1 outside backward."""
    task = getattr(_current, "task", None)
    if task is None:
        return -1
    # kept inside the task's dependency map, so it lives and dies with the task
    deps = task.dependencies
    tid = deps.get(_TASK_ID)
    if tid is None:
        tid = deps.setdefault(_TASK_ID, next(_task_ids))
    return tid


_TASK_ID = object()


def _is_checkpoint_valid():
    """False inside a backward call that computes gradients for chosen inputs only
    (``grad()``, ``backward(inputs=...)``), where a reentrant checkpoint cannot run."""
    task = getattr(_current, "task", None)
    return task is None or task.exec_info is None


def edges_needed(node):
    """Which of ``node``'s edges the running backward call needs gradients for (torch's
    ``task_should_compute_output``), or None where it needs every one: no call running, or
    one without chosen inputs, or an edge into a lazy group (the engine maps those)."""
    task = getattr(_current, "task", None)
    info = None if task is None else task.exec_info
    if info is None:
        return None
    out = []
    for nxt, _ in node._edges:
        if nxt is not None and nxt._is_group:  # NOTE [Lazy backward groups]
            return None
        e = None if nxt is None else info.get(nxt)
        out.append(e is not None and (e.needed or bool(e.captures)))
    return tuple(out)


def _will_engine_execute_node(node):
    """Whether the running backward call will execute ``node`` (or capture its gradient)."""
    task = getattr(_current, "task", None)
    if task is None:
        raise RuntimeError("_will_engine_execute_node should only be called during the "
                           "backward pass")
    if isinstance(node, GradientEdge):
        node = node.node
    info = task.exec_info
    if info is None:
        return node in task.dependencies
    e = info.get(node)
    return e is not None and (e.needed or bool(e.captures))


class _MultiHandle(RemovableHandle):
    __slots__ = ("handles",)

    def __init__(self, handles):
        super().__init__(None)
        self.handles = handles

    def remove(self):
        for h in self.handles:
            h.remove()


# graph task ids an "any" multi-grad hook remembers: calls running at once on other threads
# must each fire it once (a smaller memory would let a still-running call fire it again)
_ANY_HOOK_TASKS = 1024


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Register ``fn`` over several tensors' gradients.

    ``mode="all"``: once per backward call, after the gradients of all of ``tensors``
    that this call computes are ready, ``fn(grads)`` gets them as a list (None for a
    tensor the call does not reach). ``mode="any"``: ``fn(grad)`` gets the first of them
    computed, once per backward call. Returns a handle whose ``remove()`` unregisters.

    Example
    -------
    >>> import wgrad
    >>> a = wgrad.ones(2, requires_grad=True)
    >>> b = wgrad.ones(2, requires_grad=True)
    >>> seen = []
    >>> h = wgrad.autograd.graph.register_multi_grad_hook(
    ...     (a, b), lambda gs: seen.append([g is None for g in gs]))
    >>> (a * 2).sum().backward()
    >>> seen
    [[False, True]]
    """
    supported = ("all", "any")
    if mode not in supported:
        raise ValueError(f"Expects mode to be one of {supported} but got {mode}")
    tensors = tuple(tensors)
    lock = threading.Lock()
    if mode == "any":
        ran = {}

        def wrapped(grad):
            tid = _current_graph_task_id()
            with lock:
                if tid in ran:
                    return
                ran[tid] = True
                if len(ran) > _ANY_HOOK_TASKS:  # the oldest call's id is never seen again
                    del ran[next(iter(ran))]
            fn(grad)
        return _MultiHandle(tuple(t.register_hook(wrapped) for t in tensors
                                  if t.requires_grad))

    state = {}  # graph task id -> [gradients still expected, buffer]
    for t in tensors:
        t._ungroup()  # NOTE [Lazy backward groups]
    nodes = [t._gradient_edge()[0] for t in tensors]
    n = len(tensors)

    def inner(idx):
        def hook(grad):
            tid = _current_graph_task_id()
            with lock:
                st = state.get(tid)
                if st is None:
                    st = state[tid] = [sum(map(_will_engine_execute_node, nodes)), [None] * n]
                st[1][idx] = grad
                st[0] -= 1
                done = st[0] <= 0
                if done:
                    del state[tid]
            if done:
                fn(st[1])
        return hook
    return _MultiHandle(tuple(t.register_hook(inner(i)) for i, t in enumerate(tensors)))


# ======================================================================================
# Default saved-tensor hooks (NOTE [Saved tensor hooks] in saved.py)
# ======================================================================================

class _HooksState(threading.local):
    def __init__(self):
        self.stack = []            # (pack, unpack) pairs; the innermost is last
        self.disabled_msg = None   # set by disable_saved_tensors_hooks


_hooks_tls = _HooksState()


def _hooks_state():
    """This thread's saved-tensor hook state (``.stack``, ``.disabled_msg``)."""
    return _hooks_tls


class saved_tensors_hooks:
    """Context manager: every tensor saved for backward in its scope, on this thread, is
    stored as ``pack_hook(tensor)`` and recovered by ``unpack_hook(packed)``.

    ``pack_hook`` runs once per saved tensor and must not modify its input in place;
    ``unpack_hook`` runs on every access and must return a Tensor equal to the packed one.
    Nested scopes: the innermost pair wins. Python scalars are not passed to the hooks.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(3, requires_grad=True)
    >>> with wgrad.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t):
    ...     y = (x * x).sum()
    >>> y.backward()
    >>> x.grad
    tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        st = _hooks_tls
        if st.disabled_msg is not None:
            raise RuntimeError(st.disabled_msg)
        st.stack.append((self.pack_hook, self.unpack_hook))
        return self

    def __exit__(self, *exc):
        _hooks_tls.stack.pop()


class disable_saved_tensors_hooks:
    """Context manager (and decorator) under which entering ``saved_tensors_hooks``
    raises ``RuntimeError(error_message)``; raises at once if hooks are active.

    Example
    -------
    >>> import wgrad
    >>> with wgrad.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
    ...     pass
    """

    def __init__(self, error_message):
        self.error_message = error_message

    def __enter__(self):
        st = _hooks_tls
        if st.stack:
            raise RuntimeError(self.error_message)
        self._prev = st.disabled_msg
        st.disabled_msg = self.error_message
        return self

    def __exit__(self, *exc):
        _hooks_tls.disabled_msg = self._prev

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with disable_saved_tensors_hooks(self.error_message):
                return fn(*args, **kwargs)
        return wrapper
