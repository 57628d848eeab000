"""LinearCrossEntropyOptions: the chunking settings of ``F.linear_cross_entropy`` (NOTE
[Chunked linear cross entropy]); torch's module of that name."""
import dataclasses
from typing import Literal

from ... import _dtype as D
from ... import cuda as _cuda

__all__ = ["LinearCrossEntropyOptions"]

# "auto" resolved per (device type, input dtype), as torch's table; others: the fallback
_AUTO_DEFAULTS = {
    ("cuda", D.bfloat16): ("compact", "aspect_ratio:2"),
    ("cuda", D.float16): ("compact", "aspect_ratio:2"),
    ("cpu", D.bfloat16): ("accurate", "aspect_ratio"),
    ("cpu", D.float16): ("accurate", "aspect_ratio"),
}
_AUTO_FALLBACK = ("compact", "aspect_ratio:2")
_ACC_DTYPES = (D.float16, D.bfloat16, D.float32, D.float64)


@dataclasses.dataclass(slots=True, frozen=True)
class LinearCrossEntropyOptions:
    """How ``F.linear_cross_entropy`` chunks the batch: ``batch_chunk_size`` rows per
    chunk, or a ``chunking_method`` ("auto", "aspect_ratio" or "aspect_ratio:N": chunks
    whose logits take about the input's memory, N times less), an ``acc_policy``
    ("auto", "accurate", "balanced", "compact") and an ``acc_dtype`` (float32 for
    float16/bfloat16 inputs by default); ``allow_retain_graph`` permits a second backward
    through the mean/sum losses. The values are the unchunked loss's; the fields are
    validated as torch's.

    Examples
    --------
    >>> opts = wgrad.nn.LinearCrossEntropyOptions(batch_chunk_size=2)
    >>> opts.batch_chunk_size, opts.chunking_method
    (2, 'auto')
    """

    allow_retain_graph: bool = False
    batch_chunk_size: int | None = None
    chunking_method: str | None = "auto"
    acc_policy: Literal["accurate", "balanced", "compact", "auto"] = "auto"
    acc_dtype: D.dtype | None = None

    def __post_init__(self):
        if self.acc_policy not in {"auto", "accurate", "balanced", "compact"}:
            raise ValueError(f"invalid acc_policy: {self.acc_policy!r}")
        if self.chunking_method is not None and self.chunking_method != "auto":
            name, sep, factor = self.chunking_method.partition(":")
            factor = factor if sep else "1"
            if not (name == "aspect_ratio" and factor.isdigit() and int(factor) > 0):
                raise ValueError(f"invalid chunking_method: {self.chunking_method!r}")
        size = self.batch_chunk_size
        if not (size is None or (isinstance(size, int) and size > 0)):
            raise ValueError(f"batch_chunk_size must be positive int or None, got {size!r}")
        if self.acc_dtype is not None and self.acc_dtype not in _ACC_DTYPES:
            names = ", ".join(map(repr, _ACC_DTYPES))
            raise ValueError(f"acc_dtype must be one of {{None, {names}}}, got "
                             f"{self.acc_dtype!r}. Pass acc_dtype=None to let the op pick "
                             f"automatically.")

    @staticmethod
    def _ceil_div(a, b):
        return -(-a // b)

    @staticmethod
    def _resolve_auto_acc_dtype(dtype, device):
        """float32 for float16/bfloat16 input on the CPU or a GPU, else None."""
        if device is None or dtype not in (D.float16, D.bfloat16):
            return None
        if device.type == "cuda":
            return D.float32 if _cuda.is_available() else None
        return D.float32 if device.type == "cpu" else None

    def _compute_batch_chunk_size(self, num_batches, in_features, num_classes, method=None):
        """The chunk size "aspect_ratio[:N]" gives: the power of two at or above
        ``ceil(num_batches / ceil(num_classes / in_features))``, divided by N."""
        method = str(method if method is not None else self.chunking_method)
        if method.startswith("aspect_ratio"):
            factor = int(method.split(":", 1)[1]) if ":" in method else 1
            target = self._ceil_div(num_batches, self._ceil_div(num_classes, in_features))
            return min((1 << (target - 1).bit_length()) // factor, num_batches)
        raise AssertionError(f"unhandled chunking_method: {method!r}")

    def _adjust(self, num_batches, in_features, num_classes, dtype, device=None):
        """These options with "auto" and None resolved for one call."""
        acc_policy, method = self.acc_policy, self.chunking_method
        if method == "auto" and self.batch_chunk_size is not None:
            method = None
        if acc_policy == "auto" or method == "auto":
            picks = (_AUTO_DEFAULTS.get((device.type, dtype), _AUTO_FALLBACK)
                     if device is not None else _AUTO_FALLBACK)
            acc_policy = picks[0] if acc_policy == "auto" else acc_policy
            method = picks[1] if method == "auto" else method
        size = (num_batches if self.batch_chunk_size is None
                else min(self.batch_chunk_size, num_batches))
        if method is not None:
            size = self._compute_batch_chunk_size(num_batches, in_features, num_classes,
                                                  method)
            if self.batch_chunk_size is not None and self.batch_chunk_size != size:
                raise ValueError(f"batch_chunk_size (={self.batch_chunk_size}) and "
                                 f"chunking_method ('{method}') give different chunk sizes "
                                 f"({self.batch_chunk_size} vs {size}); pass only one.")
        acc_dtype = self.acc_dtype
        if acc_dtype is None:
            auto = (self._resolve_auto_acc_dtype(dtype, device) if self.acc_policy == "auto"
                    else None)
            acc_dtype = dtype if auto is None else auto
        return dataclasses.replace(self, acc_policy=acc_policy, chunking_method=method,
                                   batch_chunk_size=max(1, size), acc_dtype=acc_dtype)
