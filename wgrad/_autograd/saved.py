"""SavedTensor: a value a backward formula needs, with its version, hooks and release."""
import threading
from weakref import ref as _weakref

from .._dtype import from_np
from .anomaly_mode import _state as _anomaly_state
from .grad_mode import _state as _grad_state
from .graph import _hooks_tls

__all__ = ["SavedTensor", "ERR_BACKWARD_TWICE", "release_saved"]

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")
_RELEASE_LOCK = threading.Lock()
_ERR_HOOKS_FREED = (
    "Calling register_hooks on a saved tensor after it has been freed. Saved intermediate "
    "values of the graph are freed when you call .backward() or autograd.grad(). Specify "
    "retain_graph=True if you need to backward through the graph a second time or if you "
    "need to access saved variables after calling backward.")
_ERR_HOOKS_TWICE = ("Calling register_hooks on a saved tensor whose hooks have already been "
                    "set. Hint: only one pair of hooks is allowed at a time.")
_ERR_HOOKS_NONE = "Calling register_hooks on a saved tensor with value None is forbidden"
_ERR_PACK_INPLACE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook.")


# NOTE [Saved tensor versions]
# A SavedTensor records the tensor's version counter value when it is saved. Unpacking
# compares it with the counter's current value: an in-place change in between (even under
# no_grad or through a detached alias, which share the counter) raises instead of
# silently producing a wrong gradient. As in torch, values stored through pack/unpack
# hooks are not version-checked: the hooks own them.

# NOTE [Saved tensor hooks]
# The innermost ``saved_tensors_hooks`` of the saving thread (graph._hooks_tls) packs a
# tensor exactly once, when it is saved; ``unpack`` runs on every access (backward or
# ``grad_fn._saved_<name>``) and must return a Tensor, which is rewrapped with the saved
# tensor's autograd identity (grad_fn, output_nr, requires_grad). ``register_hooks`` on a
# ``_raw_saved_<name>`` does the same for one value after the fact.

# torch 2.13's hints after a saved tensor's version error
_HINT = ("Hint: enable anomaly detection to find the operation that failed to compute its "
         "gradient, with wgrad.autograd.set_detect_anomaly(True, check_nan=False).")
_HINT_ANOMALY = ("Hint: the backtrace further above shows the operation that failed to "
                 "compute its gradient. The variable in question was changed in there or "
                 "anywhere later. Good luck!")

_ERR_DETACHED = ("Trying to use a saved tensor that has been detached in-place, i.e. with "
                 ".detach_().This is not supported, please use out-of-place `.detach()` "
                 "instead")


class SavedTensor:
    """One saved value of a node (``grad_fn._raw_saved_<name>``).

    Without hooks an input is saved as the tensor itself (so ``_saved_self is x``); an
    output (``result``) is saved as its data and rebuilt on unpack with the node as
    grad_fn, an equal but different object, so the graph holds no reference cycle.

    The core knows no Tensor class: a value it has to rebuild (an output, or one that
    went through hooks) is made by the saved tensor's own ``_make`` factory, kept in
    ``_make``; an unpack hook must return a tensor with that same factory.
    """

    __slots__ = ("_tensor", "_data", "_is_output", "_output_nr", "_version", "_vc",
                 "_released", "_grad_fn", "_requires_grad", "_grad_acc", "_packed",
                 "_unpack_hook", "_is_none", "_make", "_had_fn", "_ref")

    def __init__(self, tensor, is_output=False, data=None):
        self._ref = None
        self._is_output = is_output
        self._released = False
        self._unpack_hook = None
        self._packed = None
        self._is_none = tensor is None
        self._had_fn = tensor is not None and tensor._grad_fn is not None
        if tensor is None:
            self._tensor = self._data = self._vc = self._grad_fn = self._grad_acc = None
            self._version = self._output_nr = 0
            self._requires_grad = False
            return
        self._vc = tensor._vc
        self._version = tensor._vc.v
        self._output_nr = tensor._output_nr
        self._grad_fn = None
        self._requires_grad = tensor._requires_grad
        self._grad_acc = tensor._grad_acc
        if is_output:  # ``data``: the tensor's array slot as it is (a lazy value)
            self._tensor = None
            self._data = tensor._data if data is None else data
            self._make = tensor._make
        else:
            self._tensor = tensor
            self._data = None
        stack = _hooks_tls.stack
        if stack:
            pack, unpack = stack[-1]
            self._set_hooks(pack, unpack, tensor)

    @classmethod
    def _weak(cls, tensor, data):
        """An input saved by its array and a weak reference, for a node that the tensor's
        own history points back to (NOTE [Lazy backward groups] in ops/_lazy_graph.py: a
        strong one would be a reference cycle). Unpacks as the tensor while it lives,
        else as a new tensor over the array with ``_grad_fn``/``_output_nr`` (set by the
        group when it explodes)."""
        self = cls.__new__(cls)
        self._is_output = False
        self._released = False
        self._unpack_hook = self._packed = self._tensor = self._grad_fn = None
        self._is_none = False
        self._had_fn = True
        self._vc = tensor._vc
        self._version = tensor._vc.v
        self._output_nr = tensor._output_nr
        self._requires_grad = False
        self._grad_acc = None
        self._data = data
        self._make = tensor._make
        self._ref = _weakref(tensor)
        return self

    def _set_hooks(self, pack, unpack, tensor):
        self._make = tensor._make
        if not self._is_output:
            self._grad_fn = tensor._grad_fn
        v0 = tensor._vc.v
        prev = _grad_state.grad
        _grad_state.grad = False  # torch packs with grad mode off
        try:
            packed = pack(tensor)
        finally:
            _grad_state.grad = prev
        if tensor._vc.v != v0:
            raise RuntimeError(_ERR_PACK_INPLACE)
        self._packed = packed
        self._unpack_hook = unpack
        self._tensor = None
        self._data = None
        # hooks own the value (no version check): holding the counter would keep a
        # detach()-alias storage, and so the original array, alive
        self._vc = None

    def register_hooks(self, pack_hook, unpack_hook):
        """Pack this value now with ``pack_hook`` (once) and recover it with
        ``unpack_hook`` on every later access."""
        if not callable(pack_hook) or not callable(unpack_hook):
            raise TypeError("register_hooks(): incompatible function arguments: "
                            "pack_hook and unpack_hook must be callable")
        if self._released:
            raise RuntimeError(_ERR_HOOKS_FREED)
        if self._is_none:
            raise RuntimeError(_ERR_HOOKS_NONE)
        if self._unpack_hook is not None:
            raise RuntimeError(_ERR_HOOKS_TWICE)
        t = self.unpack()
        self._set_hooks(pack_hook, unpack_hook, t)

    def unpack(self, node=None):
        if self._released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._is_none:
            return None
        if self._unpack_hook is None:
            if self._vc.v != self._version:
                self._raise_version(node)
            if self._is_output:
                return self._make(self._data, node, self._output_nr)
            t = self._tensor
            if t is None:  # saved by a weak reference (_weak)
                t = self._ref()
                if t is None:
                    return self._make(self._data, self._grad_fn, self._output_nr)
            if self._had_fn and t._grad_fn is None:
                raise RuntimeError(_ERR_DETACHED)
            return t
        r = self._unpack_hook(self._packed)
        if getattr(r, "_make", None) is not self._make:
            raise TypeError(f"Output of saved tensor unpack_hook expected to be a Tensor "
                            f"but got result of type {type(r).__name__}")
        fn = node if self._is_output else self._grad_fn
        if fn is None and not self._requires_grad and not r._requires_grad \
                and r._grad_fn is None:
            return r  # torch: a value outside the graph comes back as the hook returned it
        t = self._make(r._data, fn, self._output_nr if fn is not None else 0)
        if fn is None:
            t._requires_grad = self._requires_grad
            t._grad_acc = self._grad_acc
        return t

    def _raise_version(self, node):
        t = self._tensor if self._ref is None else self._ref()
        data = self._data if t is None else t._data
        shape = ", ".join(str(s) for s in data.shape)
        owner = node if self._is_output else (t._ungroup() if t is not None else self._grad_fn)
        which = f", which is output {self._output_nr} of {owner._forward_op_name()}," \
            if owner is not None else ""
        hint = _HINT_ANOMALY if _anomaly_state.enabled else _HINT
        raise RuntimeError(
            f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [{from_np(data.dtype).legacy_type} [{shape}]]{which} "
            f"is at version {self._vc.v}; expected version {self._version} instead. {hint}")

    def release(self):
        """Free the value. Returns False if it was already freed: of several backward
        calls racing through a graph without retain_graph, exactly one gets True
        (NOTE [Releasing saved values] in engine.py)."""
        return release_saved((self,))


def release_saved(values):
    """Free every SavedTensor among ``values`` (a node's saved values: a tuple counts as
    its members, index components; anything else is skipped) under one lock acquisition.
    False if any was already freed (SavedTensor.release, NOTE [Releasing saved values]
    in engine.py)."""
    got = []
    for v in values:
        if v.__class__ is SavedTensor:
            got.append(v)
        elif v.__class__ is tuple:
            got.extend([s for s in v if s.__class__ is SavedTensor])
    fresh = True
    with _RELEASE_LOCK:
        for s in got:
            if s._released:
                fresh = False
            s._released = True
    for s in got:
        s._tensor = s._data = s._packed = s._unpack_hook = s._grad_fn = s._grad_acc = \
            s._ref = None
    return fresh
