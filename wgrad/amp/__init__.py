"""``wgrad.amp``: torch.amp's ``autocast`` and ``GradScaler``, for the code that uses them.

wgrad has no automatic mixed precision: an op runs in its inputs' dtype (cast a model with
``model.to(wgrad.bfloat16)`` to train in lower precision). What torch does without mixed
precision is reproduced exactly: ``enabled=False``, and ``"cuda"`` without a GPU (torch
warns and disables itself) are no-ops, and a disabled ``GradScaler`` passes losses and
steps through. Asking for mixed precision (``autocast`` enabled on the CPU or a GPU, an
enabled scaler) raises NotImplementedError (docs/differences.md) rather than run in full
precision silently.

Example
-------
>>> with wgrad.autocast("cpu", enabled=False):
...     y = wgrad.ones(2) @ wgrad.ones(2)
>>> y.dtype
wgrad.float32
"""
import contextlib
import re
import warnings

import jax

from .. import _dtype as D

__all__ = ["autocast", "GradScaler", "is_autocast_available", "is_autocast_enabled",
           "get_autocast_dtype"]

_DEVICES = ("cpu, cuda, ipu, xpu, mkldnn, opengl, opencl, ideep, hip, ve, fpga, maia, xla, "
            "lazy, vulkan, mps, meta, hpu, mtia, privateuseone")
_DEFAULT_DTYPES = {"cpu": D.bfloat16, "cuda": D.float16}


def _cuda_available():
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def is_autocast_enabled(device_type=None):
    """False: wgrad never runs in an autocast region (see the module)."""
    if device_type is not None:
        _check_device_type(device_type)
    return False


def get_autocast_dtype(device_type):
    """torch's default autocast dtype of ``device_type`` (bfloat16 on the CPU, float16
    elsewhere)."""
    return _DEFAULT_DTYPES.get(_check_device_type(device_type), D.float16)


def _check_device_type(device_type):
    kind = re.match(r"[a-z_]*", device_type).group(0)
    if kind not in _DEVICES.split(", "):
        raise RuntimeError(f"Expected one of {_DEVICES} device type at start of device "
                           f"string: {device_type}")
    return kind


def is_autocast_available(device_type):
    """Whether torch has autocast for ``device_type`` (wgrad runs none: see the module)."""
    return _check_device_type(device_type) in ("cpu", "cuda")


def _not_implemented(what, dtype):
    raise NotImplementedError(
        f"{what}: wgrad has no automatic mixed precision (it would run ops in {dtype}); "
        f"cast the model and inputs to one dtype (model.to(wgrad.bfloat16)) or pass "
        f"enabled=False (docs/differences.md)")


class autocast(contextlib.ContextDecorator):  # a decorator too
    """torch.autocast as a context manager and decorator: a no-op where torch's is one
    (``enabled=False``; ``"cuda"`` without a GPU, with torch's warning), else raising
    NotImplementedError when entered."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: "
                             f"`{type(device_type)}`")
        self.device = _check_device_type(device_type)
        self.fast_dtype = _DEFAULT_DTYPES.get(self.device, D.float16) if dtype is None \
            else dtype
        if enabled and self.device == "cuda" and not _cuda_available():
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling "
                          "autocast.", UserWarning, stacklevel=2)
            enabled = False
        self._enabled = enabled

    def __enter__(self):
        if self._enabled:
            _not_implemented(f"autocast(device_type={self.device!r})", self.fast_dtype)
        return self

    def __exit__(self, *exc):
        return False



class GradScaler:
    """torch.amp.GradScaler: disabled (``enabled=False``, or ``"cuda"`` without a GPU, with
    torch's warning) it passes losses through and steps the optimizer as torch's does;
    enabled it raises NotImplementedError (loss scaling is for mixed precision)."""

    def __init__(self, device="cuda", init_scale=2.0 ** 16, growth_factor=2.0,
                 backoff_factor=0.5, growth_interval=2000, enabled=True):
        self._device = device
        if enabled and device == "cuda" and not _cuda_available():
            warnings.warn("torch.cuda.amp.GradScaler is enabled, but CUDA is not available. "
                          " Disabling.", UserWarning, stacklevel=2)
            enabled = False
        if enabled:
            _not_implemented(f"GradScaler({device!r})", "float16")
        self._enabled = False

    def is_enabled(self):
        return self._enabled

    def scale(self, outputs):
        return outputs

    def unscale_(self, optimizer):
        return None

    def step(self, optimizer, *args, **kwargs):
        return optimizer.step(*args, **kwargs)

    def update(self, new_scale=None):
        return None

    def get_scale(self):
        return 1.0

    def get_growth_factor(self):
        return 2.0

    def get_backoff_factor(self):
        return 0.5

    def get_growth_interval(self):
        return 2000

    def state_dict(self):
        return {}

    def load_state_dict(self, state_dict):
        return None
