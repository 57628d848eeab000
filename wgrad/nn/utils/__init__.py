"""``wgrad.nn.utils``: gradient clipping, parameter/vector conversion, weight_norm and
spectral_norm, parametrizations, conv/linear-BatchNorm fusion, skip_init."""
from . import clip_grad, convert_parameters  # noqa: F401
from .clip_grad import (clip_grad_norm, clip_grad_norm_, clip_grad_value_,  # noqa: F401
                        clip_grads_with_norm_, get_total_norm)
from .convert_parameters import parameters_to_vector, vector_to_parameters  # noqa: F401
from .weight_norm import remove_weight_norm, weight_norm  # noqa: F401

__all__ = ["clip_grad_norm_", "clip_grad_norm", "clip_grad_value_", "get_total_norm",
           "clip_grads_with_norm_", "parameters_to_vector", "vector_to_parameters",
           "weight_norm", "remove_weight_norm", "spectral_norm", "remove_spectral_norm",
           "fuse_conv_bn_eval", "fuse_conv_bn_weights", "fuse_linear_bn_eval",
           "fuse_linear_bn_weights", "skip_init", "convert_conv2d_weight_memory_format",
           "convert_conv3d_weight_memory_format", "parametrizations", "parametrize", "rnn",
           "stateless"]
from . import rnn  # noqa: E402,F401  (pack_padded_sequence and friends, issue 26)
from . import parametrize, parametrizations  # noqa: E402,F401
from . import fusion, stateless  # noqa: E402,F401
from .fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,  # noqa: E402,F401
                     fuse_linear_bn_eval, fuse_linear_bn_weights)
from .init import skip_init  # noqa: E402,F401
from .memory_format import (convert_conv2d_weight_memory_format,  # noqa: E402,F401
                            convert_conv3d_weight_memory_format)
from .spectral_norm import remove_spectral_norm, spectral_norm  # noqa: E402,F401
