"""``wgrad.jax``: JAX interchange both ways and ``wgrad.compile``.

* ``interop``: zero-copy arrays (``from_jax``, ``from_dlpack``) and the two function
  bridges, ``jax_function`` (a JAX function as a differentiable wgrad op) and ``to_jax``
  (a wgrad function as a JAX function).
* ``compile``: a whole step (forward, backward, update) as one XLA computation; the
  compiled step is in ``_compiled_step``, the walk that finds its tensors in
  ``_discovery``, its generated fast path in ``_fast_path``.

All of these are also ``wgrad.<name>``.
"""
from ._compiled_step import CompiledStep, compile  # noqa: A004
from .interop import from_dlpack, from_jax, jax_function, to_jax

__all__ = ["from_jax", "to_jax", "jax_function", "from_dlpack", "compile", "CompiledStep"]
