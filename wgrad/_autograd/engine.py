"""The backward engine: GraphTask, NodeTask, InputBuffer, ReadyQueue, Engine.

Modelled on torch/csrc/autograd/engine.cpp (see docs/engine.md for the picture and the
thread-safety contract). The engine sees Nodes and gradient values only; of a gradient
it reads ``device`` (to pick a ready queue) and, through ``_is_tracer``, whether its
array is a JAX tracer. It never imports ops or Tensor internals.

# NOTE [Ready queues and threads]
# Every GraphTask has a CPU ready queue, driven by the thread that called backward (for
# a reentrant call: the queue of the thread it was called on). Every accelerator device
# has one ready queue, driven by one long-lived worker thread. A node whose InputBuffer
# holds a gradient on an accelerator runs on that device's worker, every other node on
# the CPU queue. A task counts its queued-or-running NodeTasks (``outstanding``); it is
# complete at zero, and whoever completes it wakes the thread that waits for it.
"""
import heapq
import itertools
import operator
import os
import threading

import jax

from .grad_mode import _DecoratorContextManager
from .grad_mode import _state as _grad_state
from .forward_ad import state as _fw_state
from .lazy_mode import group as _lazy_group
from .lazy_mode import state as _lazy_state
from . import anomaly_mode as _anomaly
from .graph import AccumulateGrad, GraphRoot, _current, _hooks_tls, _set_current_graph_task
from .saved import ERR_BACKWARD_TWICE

__all__ = ["Engine", "GraphTask", "NodeTask", "InputBuffer", "ReadyQueue",
           "get_default_engine", "set_multithreading_enabled", "is_multithreading_enabled",
           "set_device_workers_for_host_devices", "MAX_DEPTH"]

# Reentrant backward calls nest on one thread up to this depth, then continue on a pool
# thread (torch's MAX_DEPTH). Each level costs ~12 Python frames, so 60 stays well inside
# the default recursion limit.
MAX_DEPTH = 60
_CPU = "cpu"  # worker key of a thread that drives a CPU ready queue


class _Local(threading.local):
    def __init__(self):
        self.worker = None         # None outside the engine; _CPU or a device otherwise
        self.queue = None          # the ReadyQueue this thread drives
        self.depth = 0             # reentrant calls nested on this thread
        self.total_depth = 0       # reentrant depth of the innermost task on this thread
        self.multithreading = True


_tls = _Local()


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
        """The device whose ready queue runs this node: the first gradient's device that
        counts as an accelerator (see ``set_device_workers_for_host_devices``), else None
        for the CPU queue."""
        for g in self.buffer:
            if g is not None:
                d = g.device
                if _is_accelerator(d):
                    return d
        return None


def _accumulate(a, b):
    # Under create_graph the sum is a recorded, differentiable add; in a dual level the
    # tangents add too; lazily it is an add in the pending segment (NOTE [Lazy segments] in
    # ops/_lazy.py). Otherwise it is a plain array add.
    if _grad_state.grad or _fw_state.active or _lazy_state.on:
        return a + b
    return a._new_like_data(add_arrays[0](a._data, b._data))


# How two gradient arrays add: ``ops`` puts its jitted add here (NOTE [Eager disk cache]
# in ops/_lazy_disk.py); this layer sees no ops.
add_arrays = [operator.add]


class NodeTask:
    """One ready node of a GraphTask with its summed input gradients. ``node`` None is a
    wake-up for the thread waiting on ``graph_task``; ``graph_task`` None shuts a worker
    down."""

    __slots__ = ("graph_task", "node", "inputs")

    def __init__(self, graph_task, node, inputs):
        self.graph_task = graph_task
        self.node = node
        self.inputs = inputs


class ReadyQueue:
    """Heap of NodeTasks: wake-ups first, then deeper reentrant depth, then newer
    sequence_nr (AccumulateGrad has the largest, so a leaf's gradient lands as soon as
    it is complete). A ``threaded`` queue takes pushes from any thread and ``pop``
    blocks until a task is there; an unthreaded one is only ever touched by the one
    thread driving it (no device workers in play), so it skips the lock."""

    __slots__ = ("heap", "threaded", "_lock", "_not_empty", "_waiting", "_tick")

    def __init__(self, threaded=True):
        self.heap = []
        self.threaded = False
        self._waiting = 0
        self._tick = itertools.count()  # FIFO among equal keys; NodeTasks never compare
        if threaded:
            self.make_threaded()

    def make_threaded(self):
        """From now on take pushes from any thread (the lock is made only then: most
        backward calls never need it)."""
        if not self.threaded:
            self._lock = threading.Lock()
            self._not_empty = threading.Condition(self._lock)
            self.threaded = True

    def push(self, task, wakeup=False):
        if wakeup:  # a wake-up or shutdown NodeTask (node None) goes before all others
            item = (-(1 << 62), 0, next(self._tick), task)
        else:
            item = (-task.graph_task.depth, -task.node._seq_nr, next(self._tick), task)
        if not self.threaded:
            heapq.heappush(self.heap, item)
            return
        with self._lock:
            heapq.heappush(self.heap, item)
            if self._waiting:
                self._not_empty.notify()

    def pop(self):
        if not self.threaded:
            # nothing else can push here, so an empty heap means no task is pending
            return heapq.heappop(self.heap)[3]
        with self._lock:
            while not self.heap:
                self._waiting += 1
                try:
                    self._not_empty.wait()
                finally:
                    self._waiting -= 1
            return heapq.heappop(self.heap)[3]

    def __len__(self):
        return len(self.heap)


class _ExecInfo:
    __slots__ = ("needed", "captures")

    def __init__(self):
        self.needed = False
        self.captures = None  # list of (input_nr, output_index)


# NOTE [Thread-local state in backward]
# A GraphTask captures the calling thread's state when it is created: inference mode and
# the default saved-tensor hooks (with whether they are disabled). Before every node, on
# whichever thread runs it, that state is installed, with grad mode set to create_graph;
# the caller's own state objects are put back when backward returns. So nothing a node
# does to this state (a hook entering a context and never leaving it) outlives the node,
# and a device worker never carries one task's state into another (torch's
# ThreadLocalStateGuard in thread_main). Anomaly mode is process-wide, as in torch.

def _install_state(task):
    _grad_state.grad = task.create_graph
    inference, stack, msg = task.thread_state
    _grad_state.inference = inference
    _hooks_tls.stack = list(stack)
    _hooks_tls.disabled_msg = msg


def _save_state():
    return _grad_state.grad, _grad_state.inference, _hooks_tls.stack, _hooks_tls.disabled_msg


def _restore_state(saved):
    _grad_state.grad, _grad_state.inference, _hooks_tls.stack, _hooks_tls.disabled_msg = saved


class GraphTask:
    """State of one backward() / grad() call."""

    __slots__ = ("keep_graph", "create_graph", "depth", "cpu_queue", "use_devices",
                 "dependencies", "not_ready", "exec_info", "captured", "outstanding", "lock",
                 "error", "thread_state", "final_callbacks", "boundary")

    def __init__(self, keep_graph, create_graph, depth=0, cpu_queue=None, use_devices=False):
        self.keep_graph = keep_graph
        self.create_graph = create_graph
        self.depth = depth                  # reentrant depth: deeper tasks run first
        self.cpu_queue = cpu_queue if cpu_queue is not None else ReadyQueue()
        self.use_devices = use_devices      # route nodes to device workers
        self.dependencies = {}
        self.not_ready = {}                 # node -> InputBuffer still waiting for inputs
        self.exec_info = None
        self.captured = None
        self.outstanding = 0                # NodeTasks queued or running
        self.lock = threading.Lock()        # guards dependencies/not_ready/outstanding
        self.error = None                   # first exception; stops all scheduling
        self.final_callbacks = None         # queue_callback's, run once the task is done
        self.boundary = False
        # the caller's thread-local state, installed around every node of this task
        # (NOTE [Thread-local state in backward])
        self.thread_state = (_grad_state.inference, tuple(_hooks_tls.stack),
                             _hooks_tls.disabled_msg)

    def compute_dependencies(self, root, stop=()):
        """Count each node's incoming edges, not looking past the nodes in ``stop``."""
        deps = self.dependencies
        seen = {root}
        seen.update(stop)
        stack = [root]
        while stack:
            fn = stack.pop()
            for nxt, nr in fn._edges:
                if nxt is None:
                    continue
                if nxt._is_group and nxt._map is not None:  # NOTE [Lazy backward groups]
                    nxt = nxt._map[nr][0]
                deps[nxt] = deps.get(nxt, 0) + 1
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)

    def init_to_execute(self, root, outputs, accumulate_grad, stop=()):
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
        stack = [(root, iter(_edges_of(root)))]
        visited = {root}
        visited.update(stop)  # captured, never run
        while stack:
            fn, it = stack[-1]
            child = next(it, None)
            if child is not None:
                nxt = child[0]
                if nxt is None or nxt in visited or nxt._topological_nr < min_topo:
                    continue
                visited.add(nxt)
                stack.append((nxt, iter(_edges_of(nxt))))
                continue
            stack.pop()
            need = any(n is not None and n in info and (info[n].needed or info[n].captures)
                       for n, _ in _edges_of(fn))
            if need:
                e = info.get(fn)
                if e is None:
                    e = info[fn] = _ExecInfo()
                e.needed = True
        self.captured = [None] * len(outputs)

    def finish_one(self):
        """One NodeTask is done; True when it was the last of this task."""
        with self.lock:
            self.outstanding -= 1
            return self.outstanding == 0

    def set_error(self, exc):
        with self.lock:
            if self.error is None:
                self.error = exc


class Engine:
    """Runs GraphTasks on the calling thread, device workers and a reentrant pool."""

    def __init__(self):
        self._lock = threading.Lock()
        self._device_queues = {}            # device -> ReadyQueue (its worker is started)
        self._pool_cv = threading.Condition()
        self._pool_tasks = []               # (GraphTask, Event) waiting for a pool thread
        self._pool_idle = 0
        self._pool_size = 0

    def execute(self, roots, grads, keep_graph, create_graph, outputs=None,
                accumulate_grad=True, boundary=False):
        """Backpropagate ``grads`` from the edges ``roots``.

        ``outputs``: edges whose incoming gradient is captured and returned (grad());
        with ``accumulate_grad`` only those AccumulateGrad nodes run (backward(inputs=)).
        ``boundary``: the ``outputs`` edges bound the graph (NOTE [Lazy backward groups]):
        their nodes neither run nor are looked past, and a captured gradient skips their
        tensor hooks (the caller hands it on to those nodes, which run them).
        """
        tls = _tls
        if outputs is None and not create_graph and len(roots) == 1 and tls.worker is None \
                and _alone(roots[0], grads[0], keep_graph, tls.multithreading):
            return None
        root = GraphRoot(roots, grads)
        reentrant = tls.worker is not None
        sync = any(_is_tracer(g) for g in grads)
        use_devices = tls.multithreading and not sync and _devices_in_use()
        if reentrant:
            queue = tls.queue
            if use_devices:
                queue.make_threaded()  # safe: only we touch it now
        else:
            queue = ReadyQueue(threaded=use_devices)
        task = GraphTask(keep_graph, create_graph, tls.total_depth + 1 if reentrant else 0,
                         queue, use_devices)
        task.boundary = boundary
        _lazy_group.ref = None  # NOTE [Lazy backward groups]: no op joins a group now run
        stop = {n for n, _ in outputs} if boundary else ()
        task.compute_dependencies(root, stop)
        if outputs:
            task.init_to_execute(root, outputs, accumulate_grad, stop)
        task.outstanding = 1
        task.cpu_queue.push(NodeTask(task, root, InputBuffer(0)))
        prev = _save_state()
        try:
            if not reentrant:
                tls.worker, tls.queue = _CPU, task.cpu_queue
                try:
                    self._thread_main(task)
                finally:
                    tls.worker, tls.queue = None, None
            elif tls.depth >= MAX_DEPTH and not sync:
                self._run_on_pool(task)
            else:
                tls.depth += 1
                tls.total_depth += 1
                try:
                    self._thread_main(task)
                finally:
                    tls.depth -= 1
                    tls.total_depth -= 1
        except BaseException as e:  # e.g. KeyboardInterrupt while waiting: stop the task
            task.set_error(e)
            raise
        finally:
            _restore_state(prev)
        if task.error is None and task.final_callbacks:
            self._run_final_callbacks(task)
        if task.error is not None:
            # the original exception object: its traceback still shows where it was raised.
            # Neither the task nor this frame keeps it (error -> traceback -> this frame ->
            # error would be a cycle holding the whole graph until a gc pass)
            err, task.error = task.error, None
            try:
                raise err
            finally:
                del err
        return task.captured

    def queue_callback(self, callback):
        """Run ``callback()`` once the backward call now running on this thread is done
        (torch's ``Variable._execution_engine.queue_callback``)."""
        task = _current_task()
        if task is None:
            raise RuntimeError("Final callbacks can only be installed during backward pass.")
        with task.lock:
            if task.final_callbacks is None:
                task.final_callbacks = []
            task.final_callbacks.append(callback)

    def _run_final_callbacks(self, task):
        # with the task current, so that a callback may queue more (they run too)
        outer = _set_current_graph_task(task)
        try:
            i = 0
            while i < len(task.final_callbacks):
                task.final_callbacks[i]()
                i += 1
        finally:
            _set_current_graph_task(outer)

    # -- the loop every engine thread runs ----------------------------------------------
    def _thread_main(self, task):
        """Drive this thread's ready queue until ``task`` completes (a device worker
        passes None and runs until shut down). NOTE [Ready queues and threads]."""
        queue = _tls.queue
        # the task whose grad mode and NOTE [Current graph task] are set on this thread:
        # set when the popped task changes, restored on the way out (reentrant nesting)
        current = None
        outer = _set_current_graph_task(None)
        idle = _save_state() if task is None else None  # a device worker's own state
        try:
            while task is None or task.outstanding > 0:
                nt = queue.pop()
                gt = nt.graph_task
                if nt.node is None:
                    if gt is None:          # shutdown
                        return
                    continue                # wake-up: re-check our task
                if gt.error is None:
                    _install_state(gt)
                    if gt is not current:
                        _set_current_graph_task(gt)
                        current = gt
                    try:
                        done = self._evaluate(gt, nt.node, nt.inputs.buffer)
                    except BaseException as e:
                        gt.set_error(e)
                        done = gt.finish_one()
                else:
                    done = gt.finish_one()
                if done and gt.cpu_queue is not queue:
                    gt.cpu_queue.push(NodeTask(gt, None, None), wakeup=True)
                # a thread waiting on its queue holds no node, gradient or task: a device
                # worker that kept the last one, or its task's state (saved-tensor hooks),
                # would keep them alive until its next backward
                nt = gt = None
                if task is None and current is not None and not queue.heap:
                    _set_current_graph_task(None)
                    _restore_state(idle)
                    current = None
        finally:
            _set_current_graph_task(outer)

    def _evaluate(self, task, node, inputs):
        """Run one node and hand its outputs to the nodes that consume them."""
        info = task.exec_info
        if info is not None:
            e = info.get(node)
            if e is not None and e.captures:
                self._capture(task, node, inputs, e.captures, e.needed)
            if e is None or not e.needed:
                return task.finish_one()
        outputs = self._call_function(task, node, inputs)
        # NOTE [Releasing saved values]
        # release reports whether the values were still there, atomically, so of several
        # backward calls racing through a shared graph without retain_graph exactly one
        # succeeds.
        if not task.keep_graph and node.release_variables() is False:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        return self._schedule_successors(task, node, outputs)

    @staticmethod
    def _capture(task, node, inputs, captures, runs):
        """grad(inputs=...): store the gradients flowing into ``node`` that are results,
        after the tensor hooks of the captured tensors. As torch: a node that also runs
        (``runs``) calls its tensor hooks itself, once, so the capture takes the gradient
        as it arrived."""
        for input_nr, out_i in captures:
            g = inputs[input_nr]
            for hook in () if runs or task.boundary else node._tensor_hooks_for(input_nr):
                if g is None:
                    break
                r = hook(g)
                if r is not None:
                    g = r
            if not runs and not task.boundary and g is not None:
                keep = node._retains_grad_hooks  # as torch: a retained .grad sees it too
                keep = keep.get(input_nr) if keep else None
                if keep is not None:
                    keep(g)
            task.captured[out_i] = g

    def _schedule_successors(self, task, node, outputs):
        """Add ``outputs`` to the input buffers of the next nodes and queue each node whose
        last input arrived; True when this finished the task."""
        info = task.exec_info
        # NOTE [Single-threaded tasks]
        # A task that uses no device worker is only ever touched by the one thread driving
        # its queue, so it skips the lock.
        locked = task.use_devices
        if locked:
            task.lock.acquire()
        try:
            deps = task.dependencies
            not_ready = task.not_ready
            for i, (nxt, input_nr) in enumerate(node._edges):
                if nxt is None:
                    continue
                if nxt._is_group and nxt._map is not None and nxt not in deps:
                    nxt, input_nr = nxt._map[input_nr]  # exploded before this task began
                n = deps[nxt] - 1
                deps[nxt] = n
                b = not_ready.get(nxt)
                if b is None:
                    b = InputBuffer(_num_inputs(nxt))
                b.add(input_nr, outputs[i])
                if n:
                    not_ready[nxt] = b
                    continue
                not_ready.pop(nxt, None)
                if info is None or nxt in info:  # needed, or only capturing a gradient
                    # counted before it can run, so the count cannot touch zero early
                    task.outstanding += 1
                    nt = NodeTask(task, nxt, b)
                    (self._ready_queue(nt) if task.use_devices else task.cpu_queue).push(nt)
            task.outstanding -= 1
            return task.outstanding == 0
        finally:
            if locked:
                task.lock.release()

    @staticmethod
    def _call_function(task, node, inputs):
        """The one place a node runs: pre-hooks, apply, output checks, post-hooks."""
        inputs = node._run_pre_hooks(inputs)
        outputs = (node.apply(inputs) if not _anomaly._state.enabled  # NOTE [Anomaly mode]
                   else _anomaly._checked_apply(node, inputs))
        n = len(node._edges)
        if len(outputs) != n:
            raise RuntimeError(f"Function {node.name()} returned an incorrect number of "
                               f"gradients (expected {n}, got {len(outputs)})")
        if node._post_hooks:
            outputs = node._run_post_hooks(outputs, inputs)
        return outputs

    # -- queues and threads -------------------------------------------------------------
    def _ready_queue(self, nt):
        dev = nt.inputs.device()
        if dev is None:
            return nt.graph_task.cpu_queue
        q = self._device_queues.get(dev)
        if q is None:
            q = self._start_device_worker(dev)
        return q

    def _start_device_worker(self, dev):
        with self._lock:
            q = self._device_queues.get(dev)
            if q is None:
                q = ReadyQueue()
                threading.Thread(target=self._device_main, args=(dev, q), daemon=True,
                                 name=f"wgrad-autograd-{dev}").start()
                self._device_queues[dev] = q
        return q

    def _device_main(self, dev, queue):
        _tls.worker, _tls.queue = dev, queue
        self._thread_main(None)

    def _run_on_pool(self, task):
        """Reentrant call past MAX_DEPTH: a pool thread drives ``task`` (on the caller's
        queue) with a fresh stack while this thread waits."""
        done = threading.Event()
        with self._pool_cv:
            self._pool_tasks.append((task, done))
            if self._pool_idle:  # claim an idle thread, so every task has its own thread
                self._pool_idle -= 1
                self._pool_cv.notify()
            else:
                self._pool_size += 1
                threading.Thread(target=self._pool_main, daemon=True,
                                 name=f"wgrad-autograd-reentrant-{self._pool_size}").start()
        done.wait()

    def _pool_main(self):
        tls = _tls
        tls.worker = _CPU
        while True:
            with self._pool_cv:
                while not self._pool_tasks:
                    self._pool_idle += 1  # the thread that notifies us takes it back
                    self._pool_cv.wait()
                task, done = self._pool_tasks.pop(0)
            tls.queue, tls.total_depth, tls.depth = task.cpu_queue, task.depth, 0
            try:
                self._thread_main(task)
            except BaseException as e:  # pragma: no cover - _thread_main catches node errors
                task.set_error(e)
            finally:
                tls.queue = None
                done.set()


# NOTE [A lazy group alone]
# A lazy step's backward is most often one lazy backward group (NOTE [Lazy backward
# groups] in ops/_lazy_graph.py) whose outside edges all lead to leaves: the whole forward
# recorded into one group, its gradients accumulated into parameters. The engine's
# bookkeeping for that graph (a GraphTask, a ready queue, a root node, input buffers, the
# thread-local state installed around each node: ~25 us, 9% of the phase-retrieval step)
# does nothing there that the three calls below do not: the group runs once with grad
# mode off (create_graph is False), its saved values are released (with the same "second
# time" error), and each leaf's AccumulateGrad runs on the gradient that reached it, in
# edge order, as the ready queue would order them (every AccumulateGrad has the same
# sequence number). So ``execute`` runs such a backward directly where nothing could tell
# the difference: one root, no captured outputs (backward() without inputs=), no
# create_graph, not inside another backward, no device workers, no anomaly mode or dual
# level (the group would run its OpNodes through an inner engine call), the group not
# exploded, and no hook of any kind on the group or on a leaf's AccumulateGrad (a hook
# could queue a callback or look at the current graph task, which this path does not
# make). Anything else goes through the engine as before.
def _alone(edge, grad, keep_graph, multithreading):
    """Run the backward from ``edge`` directly where it is one lazy group feeding leaves
    (NOTE [A lazy group alone]); False where the engine must."""
    node, nr = edge
    if node is None or not node._is_group or node._map is not None or node._has_hooks() \
            or _anomaly._state.enabled or _fw_state.active \
            or (multithreading and _devices_in_use()):
        return False
    nexts = node._edges
    for nxt, _ in nexts:
        if nxt is not None and (nxt.__class__ is not AccumulateGrad or nxt._has_hooks()):
            return False
    grads = [None] * node.num_outputs
    grads[nr] = grad
    _lazy_group.ref = None  # no op joins a group now run
    prev = _grad_state.grad
    _grad_state.grad = False
    try:
        outs = node.apply(grads)
        if not keep_graph and node.release_variables() is False:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        for (nxt, _), g in zip(nexts, outs):
            if nxt is not None and g is not None:
                nxt.apply([g])
    finally:
        _grad_state.grad = prev
    return True


def _edges_of(fn):
    """``fn``'s edges as a task started now follows them: one into an exploded lazy group
    goes to the OpNode inside (NOTE [Lazy backward groups] in ops/_lazy_graph.py)."""
    edges = fn._edges
    for nxt, _ in edges:
        if nxt is not None and nxt._is_group and nxt._map is not None:
            return [(n._map[nr] if n is not None and n._is_group and n._map is not None
                     else (n, nr)) for n, nr in edges]
    return edges


def _num_inputs(node):
    n = getattr(node, "num_outputs", None)
    return n if n is not None else 1


# -- devices ------------------------------------------------------------------------------
_host_devices_as_accelerators = os.environ.get("WGRAD_HOST_DEVICE_WORKERS", "") not in ("", "0")
_devices_cache = {}


def _is_accelerator(dev):
    if dev.type != "cpu":
        return True
    return _host_devices_as_accelerators and bool(dev.index)


def _devices_in_use():
    """Whether any JAX device counts as an accelerator (cached per switch setting)."""
    flag = _host_devices_as_accelerators
    r = _devices_cache.get(flag)
    if r is None:
        devs = jax.devices()
        r = any(d.platform != "cpu" for d in devs) or (flag and len(jax.devices("cpu")) > 1)
        _devices_cache[flag] = r
    return r


def _is_tracer(t):
    """Narrow helper: is this gradient's array a JAX tracer (we are inside jax.jit)?"""
    return isinstance(getattr(t, "_data", None), jax.core.Tracer)


def set_device_workers_for_host_devices(enabled):
    """Treat every JAX CPU device but the first as an accelerator for queue purposes.

    With ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` JAX shows N host
    devices; when this is on (or the environment variable ``WGRAD_HOST_DEVICE_WORKERS=1``
    was set at import), gradients on ``cpu:1`` .. ``cpu:N-1`` are processed by one
    worker thread per device, exactly as a GPU's would be. Returns the previous setting.

    Example
    -------
    >>> import wgrad
    >>> prev = wgrad.autograd.set_device_workers_for_host_devices(True)
    >>> _ = wgrad.autograd.set_device_workers_for_host_devices(prev)
    """
    global _host_devices_as_accelerators
    prev = _host_devices_as_accelerators
    _host_devices_as_accelerators = bool(enabled)
    return prev


def is_multithreading_enabled():
    """Whether backward calls made on this thread may use device worker threads."""
    return _tls.multithreading


class set_multithreading_enabled(_DecoratorContextManager):
    """Enable or disable multithreaded backward on this thread (torch's API).

    With ``mode=False`` every node of a backward started on this thread runs on the
    calling thread, whatever its device. Usable as a function or a context manager;
    thread-local.

    Example
    -------
    >>> import wgrad
    >>> x = wgrad.ones(2, requires_grad=True)
    >>> with wgrad.autograd.set_multithreading_enabled(False):
    ...     (x * 2).sum().backward()
    >>> x.grad
    tensor([2., 2.])
    """

    def __init__(self, mode):
        self.prev = _tls.multithreading
        self.mode = bool(mode)
        _tls.multithreading = self.mode

    def __enter__(self):
        pass

    def __exit__(self, *exc):
        _tls.multithreading = self.prev

    def clone(self):
        return self.__class__(self.mode)


_engine = Engine()


def _current_task():
    return getattr(_current, "task", None)


def get_default_engine():
    return _engine
