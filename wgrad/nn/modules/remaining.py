"""The remaining torch.nn modules: CTCLoss, NLLLoss2d, FractionalMaxPool2d/3d,
AdaptiveLogSoftmaxWithLoss, the legacy CrossMapLRN2d, the deprecated Container,
SyncBatchNorm (BatchNorm on one process, its ``convert_sync_batchnorm``) and DataParallel
(torch's behaviour without an accelerator: the wrapped module runs as it is).
Constructors, defaults, attributes, reprs and messages are torch's."""
import collections
import itertools
import warnings

import numpy as np

from ... import cuda as _cuda
from ..._device import device as _device
from ..._autograd.grad_mode import is_grad_enabled, no_grad
from ..._creation import tensor
from ...autograd.function import Function
from ...distributed import _process_group as _dist
from .. import functional as F
from .container import ModuleList, Sequential
from .linear import Linear
from .loss import NLLLoss, _Loss
from .module import Module
from .more import _InstanceNorm
from .normalization import _BatchNorm

__all__ = ["CTCLoss", "NLLLoss2d", "FractionalMaxPool2d", "FractionalMaxPool3d",
           "AdaptiveLogSoftmaxWithLoss", "CrossMapLRN2d", "Container", "SyncBatchNorm",
           "DataParallel"]


# -- losses ---------------------------------------------------------------------------------

class CTCLoss(_Loss):
    """The connectionist temporal classification loss (``F.ctc_loss``) of log-probabilities
    ``(T, N, C)`` against padded or concatenated targets.

    Example
    -------
    >>> import wgrad
    >>> lp = wgrad.zeros(3, 1, 2).log_softmax(2)
    >>> wgrad.nn.CTCLoss(reduction="sum")(lp, wgrad.tensor([[1]]), [3], [1])
    tensor(0.2877)
    """

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction=reduction)
        self.blank = blank
        self.zero_infinity = zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class _Deprecated:
    """torch's ``@deprecated(msg, category=FutureWarning)`` on a class: creating an
    instance of the class itself, or subclassing it, warns."""
    __deprecated__ = None

    def __new__(cls, *args, **kwargs):
        if cls.__dict__.get("__deprecated__") is not None:
            warnings.warn(cls.__deprecated__, FutureWarning, stacklevel=2)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs):
        for base in cls.__mro__[1:]:
            if base.__dict__.get("__deprecated__") is not None:
                warnings.warn(base.__deprecated__, FutureWarning, stacklevel=2)
                break
        super().__init_subclass__(**kwargs)


class NLLLoss2d(_Deprecated, NLLLoss):
    """torch's deprecated alias of :class:`NLLLoss` (for ``(N, C, H, W)`` input); creating
    one warns (FutureWarning).

    Example
    -------
    >>> import wgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     wgrad.nn.NLLLoss2d()(wgrad.zeros(1, 2, 1, 1), wgrad.tensor([[[1]]]))
    tensor(-0.)
    """
    __deprecated__ = ("`NLLLoss2d` has been deprecated. Please use `NLLLoss` instead as a "
                      "drop-in replacement and see "
                      "https://pytorch.org/docs/main/nn.html#torch.nn.NLLLoss for more details.")

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__(weight, size_average, ignore_index, reduce, reduction)


# -- fractional max pooling -----------------------------------------------------------------

class _FractionalMaxPoolNd(Module):
    _nd = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        nd, name = self._nd, type(self).__name__
        self.kernel_size = _ntuple(kernel_size, nd)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        self.output_size = _ntuple(output_size, nd) if output_size is not None else None
        self.output_ratio = _ntuple(output_ratio, nd) if output_ratio is not None else None
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a pooling "
                             f"ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError("only one of output_size and output_ratio may be specified")
        if self.output_ratio is not None:
            if not all(0 < self.output_ratio[d] < 1 for d in range(nd)):
                raise ValueError(f"output_ratio must be between 0 and 1 (got {output_ratio})")

    def forward(self, input):
        pool = F.fractional_max_pool2d if self._nd == 2 else F.fractional_max_pool3d
        return pool(input, self.kernel_size, self.output_size, self.output_ratio,
                    self.return_indices, _random_samples=self._random_samples)


def _ntuple(v, n):
    """torch's ``_pair``/``_triple``."""
    return tuple(v) if isinstance(v, (list, tuple)) else (v,) * n


class FractionalMaxPool2d(_FractionalMaxPoolNd):
    """2-D fractional max pooling (``F.fractional_max_pool2d``): ``kernel_size`` windows at
    pseudo-random starts, ``output_size`` or ``output_ratio`` (in (0, 1)) outputs per
    plane; a ``_random_samples`` buffer ``(N, C, 2)`` fixes the windows, else each call
    draws them from wgrad's generator.

    Example
    -------
    >>> import wgrad
    >>> pool = wgrad.nn.FractionalMaxPool2d(2, output_ratio=0.5)
    >>> pool(wgrad.ones(1, 3, 8, 6)).shape
    wgrad.Size([1, 3, 4, 3])
    """
    _nd = 2


class FractionalMaxPool3d(_FractionalMaxPoolNd):
    """3-D fractional max pooling (``F.fractional_max_pool3d``); see
    :class:`FractionalMaxPool2d`.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.FractionalMaxPool3d(2, output_size=2)(wgrad.ones(1, 4, 4, 4)).shape
    wgrad.Size([1, 2, 2, 2])
    """
    _nd = 3

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        if (isinstance(kernel_size, int) and kernel_size <= 0) or (
                isinstance(kernel_size, (tuple, list)) and not all(k > 0 for k in kernel_size)):
            raise ValueError(f"kernel_size must be greater than 0, but got {kernel_size}")
        super().__init__(kernel_size, output_size, output_ratio, return_indices,
                         _random_samples)


# -- adaptive softmax -----------------------------------------------------------------------

_ASMoutput = collections.namedtuple("_ASMoutput", ["output", "loss"])


class AdaptiveLogSoftmaxWithLoss(Module):
    """Efficient softmax approximation (Grave et al.): the frequent classes below
    ``cutoffs[0]`` and one entry per tail cluster form the ``head``; each tail cluster is
    a two-layer projection (its hidden size shrinking by ``div_value`` per cluster).
    ``forward(input, target)`` returns ``_ASMoutput(output, loss)``: each target's
    log-probability and the mean negative log-likelihood; ``log_prob`` gives every
    class's, ``predict`` the most likely class.

    Example
    -------
    >>> import wgrad
    >>> asm = wgrad.nn.AdaptiveLogSoftmaxWithLoss(8, 10, cutoffs=[4])
    >>> out = asm(wgrad.randn(3, 8), wgrad.tensor([0, 5, 9]))
    >>> out.output.shape, out.loss.shape
    (wgrad.Size([3]), wgrad.Size([]))
    >>> asm.log_prob(wgrad.randn(2, 8)).exp().sum(1).allclose(wgrad.ones(2))
    True
    """

    def __init__(self, in_features, n_classes, cutoffs, div_value=4.0, head_bias=False,
                 device=None, dtype=None):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        cutoffs = list(cutoffs)
        if len(cutoffs) == 0:
            raise ValueError("cutoffs should be a sequence of length larger than 0")
        if (cutoffs != sorted(cutoffs) or min(cutoffs) <= 0 or max(cutoffs) > n_classes - 1
                or len(set(cutoffs)) != len(cutoffs) or any(int(c) != c for c in cutoffs)):
            raise ValueError("cutoffs should be a sequence of unique, positive integers sorted "
                             "in an increasing order, where each value is between 1 and "
                             "n_classes-1")
        self.in_features = in_features
        self.n_classes = n_classes
        self.cutoffs = cutoffs + [n_classes]
        self.div_value = div_value
        self.head_bias = head_bias
        self.shortlist_size = self.cutoffs[0]
        self.n_clusters = len(self.cutoffs) - 1
        self.head_size = self.shortlist_size + self.n_clusters
        self.head = Linear(in_features, self.head_size, bias=head_bias, **kw)
        self.tail = ModuleList()
        for i in range(self.n_clusters):
            hsz = int(in_features // (div_value ** (i + 1)))
            osz = self.cutoffs[i + 1] - self.cutoffs[i]
            self.tail.append(Sequential(Linear(in_features, hsz, bias=False, **kw),
                                        Linear(hsz, osz, bias=False, **kw)))

    def reset_parameters(self):
        self.head.reset_parameters()
        for i2h, h2o in self.tail:
            i2h.reset_parameters()
            h2o.reset_parameters()

    def forward(self, input_, target_):
        targ_dim = target_.dim()
        if targ_dim == 1:
            if input_.size(0) != target_.size(0):
                raise RuntimeError("Input and target should have the same size in the batch "
                                   "dimension.")
            if input_.dim() != 2:
                raise RuntimeError(f"1D target tensor expects 2D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        elif targ_dim == 0:
            if input_.dim() != 1:
                raise RuntimeError(f"0D target tensor expects 1D input tensors, but found "
                                   f"inputs with size {input_.size()}")
        else:
            raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
        batched = targ_dim > 0
        input = input_ if batched else input_.unsqueeze(0)
        target = target_ if batched else target_.unsqueeze(0)
        used_rows = 0
        batch_size = target.size(0)
        output = input.new_zeros(batch_size)
        gather_inds = target.new_empty(batch_size)
        bounds = [0] + self.cutoffs
        for i in range(len(bounds) - 1):
            low, high = bounds[i], bounds[i + 1]
            mask = (target >= low) & (target < high)
            rows = mask.nonzero().squeeze()
            if rows.numel() == 0:
                continue
            if i == 0:
                gather_inds.index_copy_(0, rows, target[mask])
            else:
                relative = target[mask] - low
                cluster_output = self.tail[i - 1](input.index_select(0, rows))
                gather_inds.index_fill_(0, rows, self.shortlist_size + i - 1)
                logprob = F.log_softmax(cluster_output, dim=1)
                local = logprob.gather(1, relative.unsqueeze(1))
                output.index_copy_(0, rows, local.squeeze(1))
            used_rows += rows.numel()
        if used_rows != batch_size:
            raise RuntimeError(f"Target values should be in [0, {self.n_classes - 1}], but "
                               f"values in range [{target.min().item()}, "
                               f"{target.max().item()}] were found. ")
        head_logprob = F.log_softmax(self.head(input), dim=1)
        output += head_logprob.gather(1, gather_inds.unsqueeze(1)).squeeze()
        loss = (-output).mean()
        if not batched:
            output = output.squeeze(0)
        return _ASMoutput(output, loss)

    def _get_full_log_prob(self, input, head_output):
        out = input.new_empty((head_output.size(0), self.n_classes))
        head_logprob = F.log_softmax(head_output, dim=1)
        out[:, :self.shortlist_size] = head_logprob[:, :self.shortlist_size]
        for i, (start, stop) in enumerate(itertools.pairwise(self.cutoffs)):
            cluster_logprob = F.log_softmax(self.tail[i](input), dim=1)
            out[:, start:stop] = cluster_logprob + \
                head_logprob[:, self.shortlist_size + i].unsqueeze(1)
        return out

    def log_prob(self, input):
        """The log-probabilities of all ``n_classes`` classes, ``(N, n_classes)``."""
        return self._get_full_log_prob(input, self.head(input))

    def predict(self, input):
        """The most likely class of each row (``log_prob(input).argmax(1)``, computing the
        tail clusters only where the head does not settle it)."""
        head_output = self.head(input)
        output = head_output.argmax(dim=1)
        not_in_shortlist = output >= self.shortlist_size
        if not not_in_shortlist.any():
            return output
        if not_in_shortlist.all():
            return self._get_full_log_prob(input, head_output).argmax(dim=1)
        log_prob = self._get_full_log_prob(input[not_in_shortlist],
                                           head_output[not_in_shortlist])
        output[not_in_shortlist] = log_prob.argmax(dim=1)
        return output


# -- the legacy cross-map LRN ---------------------------------------------------------------

def _band(channels, lo, hi):
    """(C, C) 0/1 matrix: row ``c`` sums the entries ``c + lo .. c + hi`` that exist."""
    c = np.arange(channels)[:, None]
    j = np.arange(channels)[None, :]
    return ((j >= c + lo) & (j <= c + hi)).astype(np.float64)


def _channel_sum(m, x):
    """``sum_j m[c, j] x[:, j]`` over the channels of ``(N, C, H, W)`` ``x``."""
    n, c, h, w = x.shape
    return (tensor(m, dtype=x.dtype) @ x.reshape(n, c, h * w)).reshape(n, c, h, w)


def _lrn_forward(ctx, input, size, alpha=1e-4, beta=0.75, k=1):
    """torch's legacy ``CrossMapLRN2d.forward``: ``x * (k + alpha / size * S)^-beta`` with
    ``S`` its running channel-window sum of squares, which never drops channel 0."""
    ctx.size, ctx.alpha, ctx.beta, ctx.k = size, alpha, beta, k
    if input.dim() != 4:
        raise ValueError(f"CrossMapLRN2d: Expected input to be 4D, got {input.dim()}D "
                         f"instead.")
    if not (input.dtype.is_floating_point or input.dtype.is_complex):
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{input.dtype.scalar_name}")
    pre_pad = int((size - 1) / 2 + 1)
    window = _band(input.size(1), 1 - pre_pad, pre_pad - 1)
    window[:, 0] = 1.0  # the running sum adds channel 0 first and never subtracts it
    scale = _channel_sum(window, input * input) * (alpha / size) + k
    ctx.scale = scale
    output = scale.pow(-beta) * input
    ctx.save_for_backward(input, output)
    return output


def _lrn_backward(ctx, grad_output):
    """torch's legacy backward (not the derivative of the forward above: its window is
    ``[c - p, c + size - 1 - p]`` with ``p = int(size - (size - 1) / 2)``)."""
    if is_grad_enabled():
        raise RuntimeError("mul(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    input, output = ctx.saved_tensors
    size, channels = ctx.size, input.size(1)
    inverse_pre_pad = int(size - (size - 1) / 2)
    if inverse_pre_pad + channels > channels + size - 1:
        raise RuntimeError(f"start ({inverse_pre_pad}) + length ({channels}) exceeds dimension "
                           f"size ({channels + size - 1}).")
    cache_ratio = 2 * ctx.alpha * ctx.beta / size
    grad_input = ctx.scale.pow(-ctx.beta) * grad_output
    ratio = grad_output * output / ctx.scale
    accum = _channel_sum(_band(channels, -inverse_pre_pad, size - 1 - inverse_pre_pad), ratio)
    return grad_input - cache_ratio * input * accum, None, None, None, None


# the node is "CrossMapLRN2dBackward", as torch's legacy autograd Function's
_cross_map_lrn2d = type("CrossMapLRN2d", (Function,), {
    "forward": staticmethod(_lrn_forward), "backward": staticmethod(_lrn_backward),
    "__module__": __name__})


class CrossMapLRN2d(Module):
    """torch's legacy local response normalisation across channels of ``(N, C, H, W)``
    input, with its quirks kept: the channel window (``size`` wide) always also counts
    channel 0, and the backward is the legacy formula.

    Example
    -------
    >>> import wgrad
    >>> wgrad.nn.CrossMapLRN2d(3, alpha=1.0, beta=1.0, k=1.0)(wgrad.ones(1, 1, 1, 1))
    tensor([[[[0.7500]]]])
    """

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return _cross_map_lrn2d.apply(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"


# -- deprecated and multi-device containers -------------------------------------------------

class Container(_Deprecated, Module):
    """torch's deprecated container: a Module whose keyword arguments become submodules;
    creating or subclassing one warns (FutureWarning).

    Example
    -------
    >>> import wgrad, warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     wgrad.nn.Container(fc=wgrad.nn.Linear(2, 1)).fc
    Linear(in_features=2, out_features=1, bias=True)
    """
    __deprecated__ = ("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.")

    def __init__(self, **kwargs):
        super().__init__()
        for key, value in kwargs.items():
            self.add_module(key, value)


class SyncBatchNorm(_BatchNorm):
    """Batch normalisation over ``(N, C, ...)`` input whose statistics torch synchronises
    across the processes of a group. Without an initialized process group it is
    BatchNorm. Once one is initialized, a training step raises torch's ValueError for CPU
    input; GPU input is BatchNorm in a world of one process and raises in a larger one
    (wgrad does not synchronise the statistics).
    ``SyncBatchNorm.convert_sync_batchnorm(module)`` replaces every BatchNorm*d in a
    module tree, keeping its parameters and running statistics.

    Example
    -------
    >>> import wgrad
    >>> net = wgrad.nn.Sequential(wgrad.nn.Conv2d(1, 2, 1), wgrad.nn.BatchNorm2d(2))
    >>> wgrad.nn.SyncBatchNorm.convert_sync_batchnorm(net)[1]
    SyncBatchNorm(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True,
                 track_running_stats=True, process_group=None, device=None, dtype=None, *,
                 bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input):
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input):
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # cumulative moving average
                factor = 1.0 / float(self.num_batches_tracked)
        bn_training = self.training or (self.running_mean is None
                                        and self.running_var is None)
        keep = not self.training or self.track_running_stats
        if bn_training and self.training and _dist.is_available() and _dist.is_initialized():
            if input.device.type not in ("cuda", "hpu", "xpu", "privateuseone"):
                raise ValueError("SyncBatchNorm expected input tensor to be on GPU or XPU or "
                                 "privateuseone")
            if _dist.get_world_size(self.process_group or None) > 1:
                raise RuntimeError("wgrad's SyncBatchNorm does not synchronise batch "
                                   "statistics across processes: use BatchNorm per process")
        return F.batch_norm(input, self.running_mean if keep else None,
                            self.running_var if keep else None, self.weight, self.bias,
                            bn_training, factor, self.eps)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """``module`` with every BatchNorm*d (at any depth) replaced by a SyncBatchNorm
        sharing its parameters and running statistics (the module itself when it is a
        BatchNorm*d)."""
        out = module
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            out = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                module.affine, module.track_running_stats, process_group,
                                bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    out.weight = module.weight
                    out.bias = module.bias
            out.running_mean = module.running_mean
            out.running_var = module.running_var
            out.num_batches_tracked = module.num_batches_tracked
            out.training = module.training
            if hasattr(module, "qconfig"):
                out.qconfig = module.qconfig
        for name, child in module.named_children():
            out.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        return out


class DataParallel(Module):
    """torch's single-process multi-GPU wrapper. Without a GPU (torch's behaviour on a
    CPU-only machine) it keeps ``module`` and ``device_ids = []`` and ``forward`` calls
    the module. With GPUs, one device (``device_ids`` of length 1) is supported: the
    module moves there and the inputs are moved to it; several GPUs raise (wgrad does
    not replicate modules across devices: use DistributedDataParallel).

    Example
    -------
    >>> import wgrad
    >>> net = wgrad.nn.DataParallel(wgrad.nn.Identity())
    >>> net(wgrad.ones(2)), net.module
    (tensor([1., 1.]), Identity())
    """

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not _cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(_cuda.device_count()))
        device_ids = [d if isinstance(d, int) else _cuda._index(d) for d in device_ids]
        if len(device_ids) != 1:
            raise RuntimeError(f"wgrad's DataParallel runs on one GPU (got device_ids "
                               f"{device_ids}): use DistributedDataParallel, or pass one "
                               f"device id")
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = device_ids
        self.output_device = output_device if isinstance(output_device, int) \
            else _cuda._index(output_device)
        self.src_device_obj = _device("cuda", device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        if not self.device_ids:
            return self.module(*inputs, **kwargs)
        for t in itertools.chain(self.module.parameters(), self.module.buffers()):
            if t.device != self.src_device_obj:
                raise RuntimeError(f"module must have its parameters and buffers on device "
                                   f"{self.src_device_obj} (device_ids[0]) but found one of "
                                   f"them on device: {t.device}")
        inputs, kwargs = _to_device((inputs, kwargs), self.src_device_obj)
        return self.module(*inputs, **kwargs)


def _to_device(obj, device):
    """Tensors in nested tuples, lists and dicts moved to ``device``."""
    if hasattr(obj, "to") and hasattr(obj, "device") and not isinstance(obj, Module):
        return obj.to(device)
    if isinstance(obj, (tuple, list)):
        return type(obj)(_to_device(o, device) for o in obj)
    if isinstance(obj, dict):
        return {k: _to_device(v, device) for k, v in obj.items()}
    return obj
