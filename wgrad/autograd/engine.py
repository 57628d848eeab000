"""The backward engine: GraphTask, InputBuffer, ReadyQueue, Engine.

Modelled on torch/csrc/autograd/engine.cpp. The engine sees Nodes and gradient values
only; it never imports ops or looks inside tensors beyond ``shape``/``dtype``.
"""
import heapq
import itertools

from .grad_mode import _state as _grad_state

__all__ = ["Engine", "GraphTask", "InputBuffer", "ReadyQueue", "get_default_engine"]


class InputBuffer:
    """Gradients arriving at one node, summed per input slot."""

    __slots__ = ("buffer",)

    def __init__(self, size):
        self.buffer = [None] * size

    def add(self, pos, grad):
        if grad is None:
            return
        old = self.buffer[pos]
        self.buffer[pos] = grad if old is None else _accumulate(old, grad)

    def device(self):
        for g in self.buffer:
            if g is not None:
                return g.device
        return None


def _accumulate(a, b):
    # Under create_graph the sum is recorded (a differentiable add); otherwise it is a
    # plain array add.
    if _grad_state.grad:
        return a + b
    return a._new_like_data(a._data + b._data)


class ReadyQueue:
    """Heap of ready NodeTasks: deeper reentrant depth first, then newer sequence_nr."""

    __slots__ = ("heap", "_tick")

    def __init__(self):
        self.heap = []
        self._tick = itertools.count()

    def push(self, node, inputs, depth=0):
        heapq.heappush(self.heap, (-depth, -node._seq_nr, next(self._tick), node, inputs))

    def pop(self):
        _, _, _, node, inputs = heapq.heappop(self.heap)
        return node, inputs

    def __len__(self):
        return len(self.heap)


class _ExecInfo:
    __slots__ = ("needed", "captures")

    def __init__(self):
        self.needed = False
        self.captures = None  # list of (input_nr, output_index)


class GraphTask:
    """State of one backward() / grad() call."""

    __slots__ = ("keep_graph", "create_graph", "dependencies", "not_ready", "exec_info",
                 "captured", "outstanding")

    def __init__(self, keep_graph, create_graph):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.dependencies = {}
        self.not_ready = {}
        self.exec_info = None
        self.captured = None
        self.outstanding = 0

    def compute_dependencies(self, root):
        deps = self.dependencies
        seen = {root}
        stack = [root]
        while stack:
            fn = stack.pop()
            for nxt, _ in fn.next_functions:
                if nxt is None:
                    continue
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    def init_to_execute(self, root, outputs, accumulate_grad):
        """Mark the nodes on a path from ``root`` to an ``outputs`` edge as needed, and
        where to capture the gradient of each output edge (torch's exec_info)."""
        info = self.exec_info = {}
        min_topo = min(n._topological_nr for n, _ in outputs)
        for i, (node, nr) in enumerate(outputs):
            e = info.get(node)
            if e is None:
                e = info[node] = _ExecInfo()
            if accumulate_grad:
                e.needed = True
            else:
                if e.captures is None:
                    e.captures = []
                e.captures.append((nr, i))
        # iterative DFS: a node is needed if any child is needed or captured
        stack = [(root, iter(root.next_functions))]
        visited = {root}
        while stack:
            fn, it = stack[-1]
            child = next(it, None)
            if child is not None:
                nxt = child[0]
                if nxt is None or nxt in visited or nxt._topological_nr < min_topo:
                    continue
                visited.add(nxt)
                stack.append((nxt, iter(nxt.next_functions)))
                continue
            stack.pop()
            need = any(n is not None and n in info and (info[n].needed or info[n].captures)
                       for n, _ in fn.next_functions)
            if need:
                e = info.get(fn)
                if e is None:
                    e = info[fn] = _ExecInfo()
                e.needed = True
        self.captured = [None] * len(outputs)

    def should_execute(self, node):
        return self.exec_info is None or (node in self.exec_info and
                                          self.exec_info[node].needed)


class Engine:
    """Runs GraphTasks. This version drives every task on the calling thread."""

    def execute(self, roots, grads, keep_graph, create_graph, outputs=None,
                accumulate_grad=True):
        """Backpropagate ``grads`` from the edges ``roots``.

        ``outputs``: edges whose incoming gradient is captured and returned (grad());
        with ``accumulate_grad`` only those AccumulateGrad nodes run (backward(inputs=)).
        """
        from .graph import GraphRoot
        root = GraphRoot(roots, grads)
        task = GraphTask(keep_graph, create_graph)
        task.compute_dependencies(root)
        if outputs:
            task.init_to_execute(root, outputs, accumulate_grad)
        queue = ReadyQueue()
        queue.push(root, InputBuffer(0))
        prev = _grad_state.grad
        _grad_state.grad = create_graph
        try:
            while queue:
                node, buf = queue.pop()
                self._evaluate(task, node, buf, queue)
        finally:
            _grad_state.grad = prev
        return task.captured

    def _evaluate(self, task, node, buf, queue):
        inputs = buf.buffer
        info = task.exec_info
        if info is not None:
            e = info.get(node)
            if e is not None and e.captures:
                for input_nr, out_i in e.captures:
                    g = inputs[input_nr]
                    for hook in node._tensor_hooks_for(input_nr):
                        if g is None:
                            break
                        r = hook(g)
                        if r is not None:
                            g = r
                    task.captured[out_i] = g
            if e is None or not e.needed:
                return
        outputs = self._call_function(task, node, inputs)
        if not task.keep_graph:
            node.release_variables()
        deps = task.dependencies
        not_ready = task.not_ready
        for i, (nxt, input_nr) in enumerate(node.next_functions):
            if nxt is None:
                continue
            n = deps[nxt] - 1
            deps[nxt] = n
            b = not_ready.get(nxt)
            if b is None:
                b = InputBuffer(_num_inputs(nxt))
            b.add(input_nr, outputs[i])
            if n == 0:
                not_ready.pop(nxt, None)
                if task.should_execute(nxt) or (info is not None and nxt in info):
                    queue.push(nxt, b)
            else:
                not_ready[nxt] = b

    @staticmethod
    def _call_function(task, node, inputs):
        inputs = node._run_pre_hooks(inputs)
        outputs = node.apply(inputs)
        n = len(node.next_functions)
        if len(outputs) != n:
            raise RuntimeError(f"Function {node.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(outputs)})")
        if node._input_meta is not None:
            outputs = _validate_outputs(node, outputs)
        if node._post_hooks:
            outputs = node._run_post_hooks(outputs, inputs)
        return outputs


def _num_inputs(node):
    n = getattr(node, "num_outputs", None)
    return n if n is not None else 1


def _validate_outputs(node, outputs):
    outputs = list(outputs)
    for i, (g, meta) in enumerate(zip(outputs, node._input_meta)):
        if g is None or meta is None:
            continue
        shape, dtype = meta
        if tuple(g.shape) != tuple(shape):
            try:
                g = g._sum_to(shape)
            except Exception:
                raise RuntimeError(
                    f"Function {node.name()} returned an invalid gradient at index {i} - got "
                    f"{list(g.shape)} but expected shape compatible with {list(shape)}"
                ) from None
        if g.dtype is not dtype:
            if g.dtype.is_complex and not dtype.is_complex:
                g = g.real
            g = g.to(dtype)
        outputs[i] = g
    return outputs


_engine = Engine()


def get_default_engine():
    return _engine
