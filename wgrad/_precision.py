"""torch's float32 precision settings (``set_float32_matmul_precision``,
``backends.cuda.matmul.allow_tf32``, ``backends.cudnn.allow_tf32``) as JAX sees them.

# NOTE [Float32 precision]
# torch computes float32 (and complex64) matrix products in full float32 unless told
# otherwise ('highest'); JAX's default lets a GPU use TF32 (relative error ~3e-4 against
# ~2e-6 on an H100 for a 1024^2 product). The matmul setting is JAX's own
# ``jax_default_matmul_precision``, which every dot_general without an explicit precision
# reads at trace time and which is part of every jax.jit cache key: matmul, mm, bmm,
# einsum, tensordot, linear, recurrent layers, the products inside linalg, backward
# kernels, wgrad.compile and a user's jax.jit all follow a change at once, with no per-op
# cost (conv_transpose and conv follow the conv flag below). wgrad sets it
# to 'highest' at import unless JAX was configured already (JAX_DEFAULT_MATMUL_PRECISION);
# like jax_enable_x64, it is JAX's global setting, so plain JAX code in the same process
# follows it too. torch -> JAX: 'highest' -> HIGHEST (float32), 'high' -> HIGH
# ('tensorfloat32'), 'medium' -> DEFAULT (bfloat16 passes allowed, as torch's 'medium').
# Convolutions follow ``backends.cudnn.allow_tf32`` instead (torch's default True: TF32
# allowed, JAX's DEFAULT; False: HIGHEST). That flag is a static attribute of the
# convolution primitive (its forward and backward kernels are keyed by it; a backward
# uses its forward's value) and a change bumps ``generation``, which wgrad.compile
# checks to drop steps traced under the old value. On a CPU all settings compute the
# same values; the lowered program still carries them (tests/test_precision.py).
"""
import warnings

import jax

__all__ = ["set_float32_matmul_precision", "get_float32_matmul_precision",
           "conv_precision", "set_conv_tf32", "conv_tf32", "generation", "FUSED_OPTIONS"]

# NOTE [Rounding in fused programs]
# XLA drops a float16/bfloat16 rounding between two ops of one computation where its
# "excess precision" option (on by default) lets it: a float32 result rounded to bfloat16
# and read by the next op keeps its float32 bits. Eager wgrad rounds each op's result, as
# torch (NOTE [Reduced-precision opmath]); a lazy segment, a lazy group's backward and a
# wgrad.compile step are one computation each, where a bfloat16 ``exp(x / 8) * y``
# differed from eager mode's (and torch's) in 26% of its elements. So these compile with
# the option off: a per-compile option, so users' own jax.jit programs keep XLA's default.
FUSED_OPTIONS = {"xla_allow_excess_precision": False}

_TO_JAX = {"highest": "highest", "high": "tensorfloat32", "medium": "bfloat16"}
_FROM_JAX = {jax.lax.Precision.HIGHEST: "highest", jax.lax.Precision.HIGH: "high",
             jax.lax.Precision.DEFAULT: "medium"}

# bumped on every change of a setting that JAX's cache keys do not hold (the conv flag)
generation = [0]
_conv_tf32 = [True]


def set_float32_matmul_precision(precision):
    """Set the internal precision of float32 matrix products (torch's API).

    Parameters
    ----------
    precision : {'highest', 'high', 'medium'}
        'highest' computes in float32 (the default), 'high' allows TF32 on GPUs,
        'medium' allows bfloat16 passes. Any other value warns and changes nothing, as
        in torch. NOTE [Float32 precision].

    Example
    -------
    >>> import wgrad
    >>> wgrad.set_float32_matmul_precision("high")
    >>> wgrad.get_float32_matmul_precision()
    'high'
    >>> wgrad.set_float32_matmul_precision("highest")
    """
    if precision not in _TO_JAX:
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    jax.config.update("jax_default_matmul_precision", _TO_JAX[precision])


def get_float32_matmul_precision():
    """The current float32 matmul precision: 'highest', 'high' or 'medium'.

    Example
    -------
    >>> import wgrad
    >>> wgrad.get_float32_matmul_precision()
    'highest'
    """
    value = jax.config.jax_default_matmul_precision
    if value is None:  # JAX's own default: TF32 where the GPU has it
        return "medium"
    try:
        return _FROM_JAX.get(jax.lax.Precision(value), "highest")
    except (ValueError, TypeError):  # a dot algorithm name: JAX decides, float32 or better
        return "highest"


def set_conv_tf32(flag):
    """``backends.cudnn.allow_tf32 = flag``."""
    flag = bool(flag)
    if flag != _conv_tf32[0]:
        _conv_tf32[0] = flag
        generation[0] += 1


def conv_tf32():
    return _conv_tf32[0]


def conv_precision():
    """The precision a float32 convolution is lowered with now."""
    return jax.lax.Precision.DEFAULT if _conv_tf32[0] else jax.lax.Precision.HIGHEST


if jax.config.jax_default_matmul_precision is None:
    set_float32_matmul_precision("highest")
