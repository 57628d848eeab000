"""SavedTensor: a value a backward formula needs, with its version and release."""

__all__ = ["SavedTensor", "ERR_BACKWARD_TWICE"]

ERR_BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors "
    "after they have already been freed). Saved intermediate values of the graph are freed "
    "when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to "
    "backward through the graph a second time or if you need to access saved tensors after "
    "calling backward.")


# NOTE [Saved tensor versions]
# A SavedTensor records the tensor's version counter value when it is saved. Unpacking
# compares it with the counter's current value: an in-place change in between (even under
# no_grad or through a detached alias, which share the counter) raises instead of
# silently producing a wrong gradient.

class SavedTensor:
    """One saved value of a node.

    An input is saved as the tensor itself; an output (``result``) is saved as its data
    and rebuilt on unpack with the node as grad_fn, so the graph holds no reference cycle.
    """

    __slots__ = ("_tensor", "_data", "_is_output", "_output_nr", "_version", "_vc",
                 "_released", "_requires_grad", "_leaf")

    def __init__(self, tensor, is_output=False):
        self._is_output = is_output
        self._vc = tensor._vc
        self._version = tensor._vc.v
        self._released = False
        self._output_nr = tensor._output_nr
        if is_output:
            self._tensor = None
            self._data = tensor._data
        else:
            self._tensor = tensor
            self._data = None

    def unpack(self, node=None):
        if self._released:
            raise RuntimeError(ERR_BACKWARD_TWICE)
        if self._vc.v != self._version:
            self._raise_version(node)
        if self._is_output:
            from .._tensor import Tensor
            return Tensor._make(self._data, node, self._output_nr)
        return self._tensor

    def _raise_version(self, node):
        t = self._tensor
        data = self._data if t is None else t._data
        from .._dtype import from_np
        shape = ", ".join(str(s) for s in data.shape)
        if self._is_output:
            owner = node.name() if node is not None else "a node"
        else:
            owner = t.grad_fn.name() if t is not None and t.grad_fn is not None \
                else "AccumulateGrad" if t is not None and t.requires_grad else "a node"
        what = f"[{_torch_type_name(from_np(data.dtype))} [{shape}]]"
        raise RuntimeError(
            f"one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: {what}, which is output {self._output_nr} of {owner}, is at "
            f"version {self._vc.v}; expected version {self._version} instead. Hint: enable "
            f"anomaly detection to find the operation that failed to compute its gradient, "
            f"with wgrad.autograd.set_detect_anomaly(True).")

    def release(self):
        self._released = True
        self._tensor = None
        self._data = None


def _torch_type_name(d):
    return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor",
            "complex64": "torch.ComplexFloatTensor", "complex128": "torch.ComplexDoubleTensor",
            "int64": "torch.LongTensor", "int32": "torch.IntTensor",
            "bool": "torch.BoolTensor", "float16": "torch.HalfTensor"}.get(d.name, d.name)
