"""``wgrad.nn.utils``: gradient clipping, parameter/vector conversion, weight_norm."""
from . import clip_grad, convert_parameters  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters",
           "weight_norm", "remove_weight_norm"]
from . import rnn  # noqa: E402,F401  (pack_padded_sequence and friends, issue 26)
from . import parametrize, parametrizations  # noqa: E402,F401
