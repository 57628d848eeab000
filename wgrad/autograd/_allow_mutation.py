"""``allow_mutation_on_saved_tensors``: in-place changes to saved tensors are allowed.

# NOTE [Mutation of saved tensors]
# Torch clones a saved tensor right before an in-place op overwrites it, so backward sees
# the value it saved. JAX arrays are immutable and an in-place op rebinds the tensor's
# array (DESIGN.md section 4), so keeping the array that was current when the value was
# saved is that clone, made for free: the pack hook keeps it beside the tensor and the
# version it had, and unpack returns the tensor if its version is unchanged, else a
# tensor over the kept array. One handle per (tensor, version) saved: saving the same
# tensor twice shares it. ``cloned`` lists the live handles whose tensor has changed
# since, which is the set torch's context holds clones for.
"""
import weakref

from .._autograd.graph import saved_tensors_hooks
from .._tensor import Tensor

__all__ = ["allow_mutation_on_saved_tensors"]

_ERR_OUTSIDE = ("Trying to backward outside of the 'allow_mutation_on_saved_tensors' "
                "contextin which the graph was originally recorded.")
_active = [False]


class _Handle:
    __slots__ = ("data", "vc", "version", "__weakref__")

    def __init__(self, t):
        self.data = t._data
        self.vc = t._vc
        self.version = t._vc.v


class _AllowMutationOnSavedContext:
    """What ``allow_mutation_on_saved_tensors`` yields: its saved values' handles."""

    def __init__(self):
        self.tid_to_weakhandle = weakref.WeakValueDictionary()  # (id, version) -> handle
        self.original = weakref.WeakKeyDictionary()              # handle -> tensor

    @property
    def cloned(self):
        """Handle -> saved value, for the live saved tensors changed in place since."""
        return {h: Tensor._make(h.data) for h, _ in list(self.original.items())
                if h.vc.v != h.version}

    def clear(self):
        self.tid_to_weakhandle.clear()
        self.original.clear()

    def pack(self, t):
        tid = (id(t), t._vc.v)
        h = self.tid_to_weakhandle.get(tid)
        if h is None or self.original.get(h) is not t:
            h = _Handle(t)
            self.tid_to_weakhandle[tid] = h
            self.original[h] = t
        return h

    def unpack(self, h):
        if not _active[0]:
            raise AssertionError(_ERR_OUTSIDE)
        t = self.original.get(h)
        if t is None:
            raise AssertionError(_ERR_OUTSIDE)
        if h.vc.v == h.version:
            return t
        return Tensor._make(h.data)


class allow_mutation_on_saved_tensors:
    """Context manager: tensors saved for backward in its scope may be modified in place
    afterwards; backward uses the values they had when saved (NOTE [Mutation of saved
    tensors]). Backward must run inside the same context; contexts cannot be nested.

    Example
    -------
    >>> import wgrad
    >>> with wgrad.autograd.graph.allow_mutation_on_saved_tensors():
    ...     a = wgrad.ones(2, requires_grad=True)
    ...     b = a.clone()
    ...     out = (b * b).sum()
    ...     _ = b.sin_()
    ...     out.backward()
    >>> a.grad
    tensor([2., 2.])
    """

    def __enter__(self):
        self._ctx = ctx = _AllowMutationOnSavedContext()
        self._hooks = saved_tensors_hooks(ctx.pack, ctx.unpack)
        self._hooks.__enter__()
        if _active[0]:
            self._exit()
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _active[0] = True
        return ctx

    def _exit(self):
        self._ctx.clear()
        _active[0] = False
        self._hooks.__exit__(None, None, None)

    def __exit__(self, *exc):
        self._exit()
