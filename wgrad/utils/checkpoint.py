"""Activation checkpointing (torch.utils.checkpoint): trade compute for memory.

``checkpoint(fn, *args, use_reentrant=...)`` runs ``fn`` without keeping the values its
backward needs and runs it again during backward to get them back.

# NOTE [Two checkpoints]
# use_reentrant=True: ``fn`` runs under no_grad inside a custom Function; that Function's
# backward reruns ``fn`` on detached copies of the inputs with grad mode on and calls
# ``backward`` on the rerun's outputs (a reentrant backward, hence the name). It cannot
# serve ``grad()`` or ``backward(inputs=...)``, whose pruned graph would skip the rerun.
#
# use_reentrant=False: ``fn`` runs with grad mode as it is, under saved-tensor hooks
# whose pack step keeps a placeholder (a _Slot) instead of the tensor. The first unpack
# of any of them in a backward call reruns ``fn`` under recording hooks that hand each
# value saved by the rerun to the slot of the same position, then stops the rerun
# (early stop) once the last slot is filled. Recomputed values live per backward call
# (the graph task id, or a fresh id outside backward) and each is handed out once.
# The inputs reach the rerun through a small Function that saves them, so an outer
# checkpoint's hooks, and nesting, apply to them like to any saved value.
"""
import contextlib
import itertools
import warnings
import weakref

from .. import _creation
from .._tensor import Tensor
from ..autograd import backward as _backward
from .._autograd import graph as _graph
from ..autograd.function import Function
from ..autograd.grad_mode import enable_grad, no_grad

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "check_backward_validity", "detach_variable", "noop_context_fn",
           "set_checkpoint_early_stop", "set_checkpoint_debug_enabled"]

_WARN_REENTRANT = (
    "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
    "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
    "exception. use_reentrant=False is recommended, but if you need to preserve the "
    "current default behavior, you can pass use_reentrant=True. Refer to docs for more "
    "details on the differences between the two variants.")
_WARN_REENTRANT_SEQ = (
    "torch.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter should be "
    "passed explicitly. In version 2.9 we will raise an exception if use_reentrant is not "
    "passed. use_reentrant=False is recommended, but if you need to preserve the current "
    "default behavior, you can pass use_reentrant=True. Refer to docs for more details on "
    "the differences between the two variants.")
_ERR_INVALID = (
    "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
    "passing an `inputs` parameter to .backward(). To resolve this error, you can either "
    "set use_reentrant=False, or call .backward() without passing the `inputs` argument.")
_TIP = """
Tip: To see a more detailed error message, either pass `debug=True` to
`torch.utils.checkpoint.checkpoint(...)` or wrap the code block
with `with torch.utils.checkpoint.set_checkpoint_debug_enabled(True):` to
enable checkpoint\u2011debug mode globally.
"""
_DEBUG_REPORT = (
    "An error happened while unpacking tensors; dumping logs of latest computation\n"
    "because you passed `debug=True` to `torch.utils.checkpoint.checkpoint()`.\n\n"
    "Operations that saved tensors during the original forward:\n\n{fwd}\n\n"
    "Operations that saved tensors during recomputation:\n\n{rec}\n\n"
    " ERROR: Detected non-determinism while running activation checkpointing\n\n"
    " You are seeing this error because you passed `debug=True` to checkpoint and\n"
    " tensors to be saved during the original forward and differ between those saved\n"
    " during recomputation. This can happen if different operators were ran in the\n"
    " original forward and in the recomputation.\n\n{msg}")


class CheckpointError(RuntimeError):
    """A checkpointed function saved different tensors when it was recomputed."""


def noop_context_fn():
    """The default ``context_fn``: two null contexts (forward, recomputation)."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def check_backward_validity(inputs):
    """Warn, as torch does, when no tensor input requires grad."""
    if not any(isinstance(a, Tensor) and a.requires_grad for a in inputs):
        warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                      stacklevel=3)


def detach_variable(inputs):
    """Detached copies of the tensors in the tuple ``inputs``, with ``requires_grad`` kept."""
    if not isinstance(inputs, tuple):
        raise RuntimeError(f"Only tuple of tensors is supported. Got Unsupported input type: "
                           f"{type(inputs).__name__}")
    out = []
    for a in inputs:
        if isinstance(a, Tensor):
            d = a.detach()
            d.requires_grad = a.requires_grad
            a = d
        out.append(a)
    return tuple(out)


# -- global switches ---------------------------------------------------------------------
_settings = {"early_stop": True, "debug": None}


@contextlib.contextmanager
def set_checkpoint_early_stop(enable):
    """Context manager: whether non-reentrant checkpoints started in it stop recomputing as
    soon as every needed value is back (on by default)."""
    prev = _settings["early_stop"]
    _settings["early_stop"] = enable
    try:
        yield
    finally:
        _settings["early_stop"] = prev


@contextlib.contextmanager
def set_checkpoint_debug_enabled(enabled):
    """Context manager: force ``debug`` on (True) or off (False) for every checkpoint in it,
    overriding the argument; None defers to the argument."""
    prev = _settings["debug"]
    _settings["debug"] = enabled
    try:
        yield
    finally:
        _settings["debug"] = prev


@contextlib.contextmanager
def _rng_restored(state, enabled):
    """Run with the RNG at ``state`` (NOTE [Random numbers]), then put back the state the
    caller had."""
    if not enabled:
        yield
        return
    outer = _creation.get_rng_state()
    _creation.set_rng_state(state)
    try:
        yield
    finally:
        _creation.set_rng_state(outer)


# -- use_reentrant=True ------------------------------------------------------------------
class CheckpointFunction(Function):
    """The reentrant checkpoint (NOTE [Two checkpoints])."""

    @staticmethod
    def forward(ctx, run_function, preserve_rng_state, *args):
        check_backward_validity(args)
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        ctx.rng_state = _creation.get_rng_state() if preserve_rng_state else None
        ctx.inputs = [None if isinstance(a, Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx, *grads):
        if not _graph._is_checkpoint_valid():
            raise RuntimeError(_ERR_INVALID)
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        detached = detach_variable(tuple(inputs))
        with _rng_restored(ctx.rng_state, ctx.preserve_rng_state), enable_grad():
            outputs = ctx.run_function(*detached)
        if isinstance(outputs, Tensor):
            outputs = (outputs,)
        outs, gs = [], []
        for o, g in zip(outputs, grads):
            if isinstance(o, Tensor) and o.requires_grad:
                outs.append(o)
                gs.append(g)
        if not outs:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _backward(outs, gs)
        return (None, None) + tuple(a.grad if isinstance(a, Tensor) else None
                                    for a in detached)


# -- use_reentrant=False -----------------------------------------------------------------
class _Slot:
    """What the checkpoint's pack hook stores in place of a tensor: per backward call
    (graph task id), the key of its recomputed value, None once handed out."""

    __slots__ = ("keys", "__weakref__")

    def __init__(self):
        self.keys = {}


class _Key:
    __slots__ = ("__weakref__",)


class _StopRecomputation(Exception):
    pass


def _meta(t):
    return {"shape": t.shape, "dtype": t.dtype, "device": t.device}


class _SaveInputs(Function):
    """Saves the checkpoint's tensor inputs (the rerun reads them back from its node)."""

    @staticmethod
    def forward(dummy, kwargs, *args):
        return _creation.empty(0)

    @staticmethod
    def setup_context(ctx, inputs, output):
        _, kwargs, *args = inputs
        ctx.kwargs = kwargs
        ctx.args = [None if isinstance(a, Tensor) else a for a in args]
        ctx.save_for_backward(*[a for a in args if isinstance(a, Tensor)])

    @staticmethod
    def backward(ctx, *grads):
        raise AssertionError("the checkpoint's input node does not run")

    @staticmethod
    def inputs(ctx):
        args = list(ctx.args)
        tensors = iter(ctx.saved_tensors)
        for i, a in enumerate(args):
            if a is None:
                args[i] = next(tensors)
        return args, ctx.kwargs


class _Frame:
    """One non-reentrant checkpoint call: its slots and their recomputed values."""

    _fresh_ids = itertools.count(-2, -1)  # ids for unpacks outside backward

    def __init__(self, recompute, early_stop, check_meta, debug):
        self.recompute = recompute
        self.early_stop = early_stop
        self.check_meta = check_meta
        self.debug = debug
        self.input_node = None
        self.slots = []         # weakrefs to _Slot, in save order
        self.metas = []         # per slot, the saved tensor's metadata
        self.fwd_ops = []       # debug: per slot, the node that saved it
        self.recomputed = {}    # gid -> WeakKeyDictionary(_Key -> tensor)
        self.counts = {}        # gid -> values saved by that call's rerun
        self.rec_ops = {}       # debug: gid -> node names saved during the rerun
        self.done = set()       # gids whose rerun ran
        self.forward_completed = False
        self.ignore_count = False

    # the hooks of the original forward
    def pack(self, t):
        slot = _Slot()
        self.slots.append(weakref.ref(slot))
        if self.check_meta:
            self.metas.append(_meta(t))
        if self.debug:
            self.fwd_ops.append(_saver_name(t))
        return slot

    def unpack(self, slot):
        gid = _graph._current_graph_task_id()
        if gid == -1:
            gid = next(self._fresh_ids)
        if gid not in self.done:
            self._rerun(gid)
        if gid not in slot.keys:
            raise CheckpointError("torch.utils.checkpoint: internal error: a saved value "
                                  "was not recomputed")
        key = slot.keys[gid]
        if key is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                "make sure to do so only once. Otherwise please open an issue with details "
                "on your use case.")
        slot.keys[gid] = None
        return self.recomputed[gid].pop(key)

    def _rerun(self, gid):
        args, kwargs = _SaveInputs.inputs(self.input_node)
        self.recomputed[gid] = weakref.WeakKeyDictionary()
        self.counts[gid] = 0
        self.rec_ops[gid] = []
        try:
            with _graph.saved_tensors_hooks(lambda t: self._pack_recomputed(gid, t),
                                            lambda t: t), enable_grad():
                self.recompute(*args, **kwargs)
        except _StopRecomputation as stop:
            # its traceback holds the frames of the rerun, and through them its graph
            stop.__traceback__ = None
        self.done.add(gid)
        self._check(gid)

    def _pack_recomputed(self, gid, t):
        if t.requires_grad:
            t = t.detach()
        idx = self.counts[gid]
        self.counts[gid] = idx + 1
        if self.debug:
            self.rec_ops[gid].append(_saver_name(t))
        if idx >= len(self.slots):
            if not self.forward_completed:  # grad() inside the checkpointed function
                self.ignore_count = True
                return t
            self._raise(gid, "torch.utils.checkpoint: trying to save more tensors during "
                             "recomputation than during the original forward pass.\n" + _TIP)
        slot = self.slots[idx]()
        if slot is not None:
            key = _Key()
            slot.keys[gid] = key
            self.recomputed[gid][key] = t
        if self.early_stop and self.counts[gid] == len(self.slots):
            raise _StopRecomputation
        return t

    def _check(self, gid):
        if self.ignore_count:
            return
        if self.counts[gid] != len(self.slots):
            self._raise(gid, f"torch.utils.checkpoint: A different number of tensors was "
                             f"saved during the original forward and recomputation.\n"
                             f"Number of tensors saved during forward: {len(self.slots)}\n"
                             f"Number of tensors saved during recomputation: "
                             f"{self.counts[gid]}.\n{_TIP}")
        if not self.check_meta:
            return
        lines = ""
        for idx, ref in enumerate(self.slots):
            slot = ref()
            if slot is None:
                continue
            now = _meta(self.recomputed[gid][slot.keys[gid]])
            if now != self.metas[idx]:
                lines += (f"tensor at position {idx}:\nsaved metadata: {self.metas[idx]}\n"
                          f"recomputed metadata: {now}\n")
        if lines:
            self._raise(gid, f"torch.utils.checkpoint: Recomputed values for the following "
                             f"tensors have different metadata than during the forward "
                             f"pass.\n{lines}.\n{_TIP}")

    def _raise(self, gid, msg):
        if self.debug:
            msg = _DEBUG_REPORT.format(fwd="\n".join(self.fwd_ops),
                                       rec="\n".join(self.rec_ops.get(gid, ())), msg=msg)
        raise CheckpointError(msg)


def _saver_name(t):
    fn = t.grad_fn
    return fn.name() if fn is not None else "leaf"


def _checkpoint_without_reentrant(fn, args, kwargs, preserve_rng_state, context_fn,
                                  determinism_check, debug):
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    if _settings["debug"] is not None:
        debug = _settings["debug"]
    fwd_ctx, rec_ctx = context_fn()
    rng_state = _creation.get_rng_state() if preserve_rng_state else None

    def recompute(*a, **kw):
        with _rng_restored(rng_state, preserve_rng_state), rec_ctx:
            fn(*a, **kw)

    frame = _Frame(recompute, _settings["early_stop"], determinism_check == "default",
                   debug)
    dummy = _creation.empty(0, requires_grad=True)
    saver = _SaveInputs.apply(dummy, kwargs, *args)
    if saver.grad_fn is None:  # grad mode off: nothing to checkpoint (nor contexts, as torch)
        return fn(*args, **kwargs)
    frame.input_node = saver.grad_fn
    with _graph.saved_tensors_hooks(frame.pack, frame.unpack), fwd_ctx:
        out = fn(*args, **kwargs)
    frame.forward_completed = True
    return out


def checkpoint(function, *args, use_reentrant=None, context_fn=noop_context_fn,
               determinism_check="default", debug=False, **kwargs):
    """Run ``function(*args, **kwargs)`` without saving its intermediate values; backward
    recomputes them (NOTE [Two checkpoints]).

    ``use_reentrant`` should be passed (not passing it warns and means True, as in torch);
    False is recommended. ``preserve_rng_state`` (default True) reruns with the random
    state of the forward, so random ops draw the same numbers. ``context_fn``,
    ``determinism_check`` and ``debug`` apply to ``use_reentrant=False`` only.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.utils.checkpoint import checkpoint
    >>> x = wgrad.tensor([1.0, 2.0], requires_grad=True)
    >>> y = checkpoint(lambda t: (t.sin() * t).sum(), x, use_reentrant=False)
    >>> y.backward()
    >>> wgrad.allclose(x.grad, x.sin() + x * x.cos())
    True
    """
    if use_reentrant is None:
        warnings.warn(_WARN_REENTRANT, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        return CheckpointFunction.apply(function, preserve, *args)
    return _checkpoint_without_reentrant(function, args, kwargs, preserve, context_fn,
                                         determinism_check, debug)


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run a sequence of functions (a list, or a module's children) in ``segments``
    checkpointed chunks; the last chunk runs normally.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.utils.checkpoint import checkpoint_sequential
    >>> x = wgrad.ones(2, requires_grad=True)
    >>> y = checkpoint_sequential([wgrad.sin, wgrad.exp, wgrad.cos], 2, x, use_reentrant=False)
    >>> y.sum().backward()
    """
    if use_reentrant is None:
        warnings.warn(_WARN_REENTRANT_SEQ, UserWarning, stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(kwargs))
    if hasattr(functions, "children"):
        functions = list(functions.children())
    functions = list(functions)

    def run(start, end):
        def forward(x):
            for f in functions[start:end + 1]:
                x = f(x)
            return x
        return forward

    size = len(functions) // segments
    end = -1
    for start in range(0, size * (segments - 1), size):
        end = start + size - 1
        input = checkpoint(run(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run(end + 1, len(functions) - 1)(input)
