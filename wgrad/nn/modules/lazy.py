"""Lazy modules: layers whose input size is inferred from the first input (torch's
``LazyModuleMixin``, ``LazyLinear``, ``LazyConv*``, ``LazyConvTranspose*``,
``LazyBatchNorm*``, ``LazyInstanceNorm*``).

# NOTE [Lazy modules]
# A lazy module holds UninitializedParameters (and UninitializedBuffers) until its first
# call: a forward pre-hook runs ``initialize_parameters(*args)``, which materializes them
# from the input's shape and initializes them as the eager layer would, then removes the
# hooks and turns the module into ``cls_to_become`` (``LazyLinear`` becomes ``Linear``).
# A load_state_dict pre-hook materializes them from a checkpoint's shapes instead, and
# ``state_dict`` keeps them uninitialized. As in torch, an uninitialized parameter
# cannot be used in an op before that; torch raises a ValueError naming the op, wgrad's op
# sees an empty array and raises its shape error.
"""
import itertools

from ... import _dtype as D
from ..._autograd.grad_mode import no_grad
from ..._creation import tensor
from ..parameter import UninitializedBuffer, UninitializedParameter, is_lazy
from .conv import Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from .linear import Linear
from .more import BatchNorm3d, InstanceNorm1d, InstanceNorm2d, InstanceNorm3d, _InstanceNorm
from .normalization import BatchNorm1d, BatchNorm2d, _BatchNorm

__all__ = ["LazyModuleMixin", "LazyLinear", "LazyConv1d", "LazyConv2d", "LazyConv3d",
           "LazyConvTranspose1d", "LazyConvTranspose2d", "LazyConvTranspose3d",
           "LazyBatchNorm1d", "LazyBatchNorm2d", "LazyBatchNorm3d", "LazyInstanceNorm1d",
           "LazyInstanceNorm2d", "LazyInstanceNorm3d"]


class LazyModuleMixin:
    """Mixin for modules that infer their parameters' shapes from the first input
    (NOTE [Lazy modules]). Subclasses define ``initialize_parameters(*args, **kwargs)``
    and ``cls_to_become``."""

    cls_to_become = None

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if is_lazy(p) or keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if is_lazy(b) or keep_vars else b.detach()

    def _lazy_load_hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                        unexpected_keys, error_msgs):
        # an uninitialized parameter takes the checkpoint's shape (then its values load)
        for name, p in itertools.chain(self._parameters.items(), self._buffers.items()):
            key = prefix + name
            if key in state_dict and p is not None and is_lazy(p) \
                    and not is_lazy(state_dict[key]):
                with no_grad():
                    p.materialize(state_dict[key].shape)

    def initialize_parameters(self, *args, **kwargs):
        """Materialize and initialize the parameters from the first input."""
        raise NotImplementedError(f"initialize_parameters is not implemented for "
                                  f"{self.__class__.__name__}")

    def has_uninitialized_params(self):
        """Whether a parameter or buffer is still uninitialized."""
        return any(is_lazy(p) for p in itertools.chain(self._parameters.values(),
                                                         self._buffers.values()))

    def _infer_parameters(self, module, args, kwargs=None):
        module.initialize_parameters(*args, **(kwargs or {}))
        if module.has_uninitialized_params():
            raise RuntimeError(f"module {self._get_name()} has not been fully initialized")
        module._initialize_hook.remove()
        module._load_hook.remove()
        delattr(module, "_initialize_hook")
        delattr(module, "_load_hook")
        if module.cls_to_become is not None:
            module.__class__ = module.cls_to_become

    def _replicate_for_data_parallel(self):
        raise RuntimeError("Modules with uninitialized parameters can't be used with "
                           "`DataParallel`. Run a dummy forward pass to correctly initialize "
                           "the modules")


class LazyLinear(LazyModuleMixin, Linear):
    """A ``Linear`` whose ``in_features`` is the last dimension of its first input.

    Example
    -------
    >>> import wgrad
    >>> m = wgrad.nn.LazyLinear(3)
    >>> m(wgrad.ones(2, 5)).shape, type(m).__name__, m.in_features
    (wgrad.Size([2, 3]), 'Linear', 5)
    """

    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        super().__init__(0, 0, False)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_features = out_features
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            with no_grad():
                self.in_features = input.shape[-1]
                self.weight.materialize((self.out_features, self.in_features))
                if self.bias is not None:
                    self.bias.materialize((self.out_features,))
                self.reset_parameters()


class _LazyConvXdMixin(LazyModuleMixin):
    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_channels != 0:
            super().reset_parameters()

    def initialize_parameters(self, input, *args, **kwargs):
        if self.has_uninitialized_params():
            self.in_channels = self._get_in_channels(input)
            if self.in_channels % self.groups != 0:
                raise ValueError("in_channels must be divisible by groups")
            with no_grad():
                if self.transposed:
                    self.weight.materialize((self.in_channels, self.out_channels // self.groups,
                                             *self.kernel_size))
                else:
                    self.weight.materialize((self.out_channels, self.in_channels // self.groups,
                                             *self.kernel_size))
                if self.bias is not None:
                    self.bias.materialize((self.out_channels,))
                self.reset_parameters()

    def _get_in_channels(self, input):
        nd = self._spatial_dims + 1
        if input.dim() not in (nd, nd + 1):
            raise RuntimeError(f"Expected {nd}D (unbatched) or {nd + 1}D (batched) input to "
                               f"{self.__class__.__name__}, but got input of size: "
                               f"torch.Size({list(input.shape)})")
        return input.shape[1] if input.dim() == nd + 1 else input.shape[0]


def _lazy_conv(base, spatial, transposed):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, *rest, **kwargs):
        # the base's own signature after ``padding`` (dilation/groups/bias/... for a
        # convolution, output_padding/groups/bias/dilation/... for a transposed one)
        names = (("output_padding", "groups", "bias", "dilation", "padding_mode", "device",
                  "dtype") if transposed else
                 ("dilation", "groups", "bias", "padding_mode", "device", "dtype"))
        opts = dict(zip(names, rest))
        opts.update(kwargs)
        bias = opts.pop("bias", True)
        device, dtype = opts.get("device"), opts.get("dtype")
        base.__init__(self, 0, 0, kernel_size, stride, padding, bias=False, **opts)
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        self.out_channels = out_channels
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)

    def init(self, *args, **kwargs):
        __init__(self, *args, **kwargs)
        self._load_hook = self._register_load_state_dict_pre_hook(self._lazy_load_hook)
        self._initialize_hook = self.register_forward_pre_hook(self._infer_parameters,
                                                               with_kwargs=True)
    name = "Lazy" + base.__name__
    doc = (f"A ``{base.__name__}`` whose ``in_channels`` is inferred from its first input "
           f"(NOTE [Lazy modules]).")
    return type(name, (_LazyConvXdMixin, base), {
        "__init__": init, "__doc__": doc, "__module__": __name__, "cls_to_become": base,
        "_spatial_dims": spatial})


LazyConv1d = _lazy_conv(Conv1d, 1, False)
LazyConv2d = _lazy_conv(Conv2d, 2, False)
LazyConvTranspose1d = _lazy_conv(ConvTranspose1d, 1, True)
LazyConvTranspose2d = _lazy_conv(ConvTranspose2d, 2, True)
LazyConv3d = _lazy_conv(Conv3d, 3, False)
LazyConvTranspose3d = _lazy_conv(ConvTranspose3d, 3, True)


class _LazyNormBase(LazyModuleMixin, _BatchNorm):
    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        super().__init__(0, eps, momentum, False, False, device, dtype, bias=False)
        self.affine = affine
        self.track_running_stats = track_running_stats
        if affine:
            self.weight = UninitializedParameter(device=device, dtype=dtype)
            if bias:
                self.bias = UninitializedParameter(device=device, dtype=dtype)
        if track_running_stats:
            self.running_mean = UninitializedBuffer(device=device, dtype=dtype)
            self.running_var = UninitializedBuffer(device=device, dtype=dtype)
            self.num_batches_tracked = tensor(0, dtype=D.default_int(), device=device)

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.num_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        if self.has_uninitialized_params():
            self.num_features = input.shape[1]
            with no_grad():
                if self.affine:
                    self.weight.materialize((self.num_features,))
                    if self.bias is not None:
                        self.bias.materialize((self.num_features,))
                if self.track_running_stats:
                    self.running_mean.materialize((self.num_features,))
                    self.running_var.materialize((self.num_features,))
                self.reset_parameters()


class LazyBatchNorm1d(_LazyNormBase, BatchNorm1d):
    """A ``BatchNorm1d`` whose ``num_features`` is ``input.size(1)`` of its first input."""

    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNormBase, BatchNorm2d):
    """A ``BatchNorm2d`` whose ``num_features`` is ``input.size(1)`` of its first input."""

    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNormBase, BatchNorm3d):
    """A ``BatchNorm3d`` whose ``num_features`` is ``input.size(1)`` of its first input."""

    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm1d`` whose ``num_features`` is ``input.size(1)`` of its first input
    (torch's defaults: ``affine`` and ``track_running_stats`` True)."""

    _dims = InstanceNorm1d._dims
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm2d`` whose ``num_features`` is ``input.size(1)`` of its first input."""

    _dims = InstanceNorm2d._dims
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNormBase, _InstanceNorm):
    """An ``InstanceNorm3d`` whose ``num_features`` is ``input.size(1)`` of its first input."""

    _dims = InstanceNorm3d._dims
    cls_to_become = InstanceNorm3d
