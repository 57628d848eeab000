"""``wgrad.autograd.grad_mode``: torch.autograd.grad_mode's names (the thread-local modes
live in ``wgrad._autograd.grad_mode``)."""
from .._autograd.engine import set_multithreading_enabled
from .._autograd.grad_mode import (enable_grad, inference_mode, is_grad_enabled,
                                   is_inference_mode_enabled, no_grad, set_grad_enabled)

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "set_multithreading_enabled", "is_grad_enabled", "is_inference_mode_enabled"]
