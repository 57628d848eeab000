"""``wgrad.func``: composable function transforms, as ``torch.func``.

``grad``, ``grad_and_value``, ``vjp``, ``jvp``, ``linearize``, ``jacrev``, ``jacfwd``,
``hessian``, ``vmap``, ``functional_call`` and ``stack_module_state`` with torch.func's
signatures, pytrees of Tensors as arguments and outputs, and torch.func's complex
convention: ``grad``/``vjp`` follow ``.backward()`` (conjugate Wirtinger, the conjugate of
``jax.grad``), ``jvp``/``linearize`` follow forward AD (``jax.jvp``, no conjugation).
Reverse and forward transforms run wgrad's own autograd (torch's rules exactly);
``vmap`` lowers the function to JAX (NOTE [Lowered calls] in _lower.py). docs/func.md has
the convention table.
"""
from ._functional_call import functional_call, stack_module_state
from ._functionalize import functionalize, replace_all_batch_norm_modules_
from ._transforms import (grad, grad_and_value, hessian, jacfwd, jacrev, jvp, linearize,
                          vjp)
from ._vmap import vmap

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "functional_call", "stack_module_state", "functionalize",
           "replace_all_batch_norm_modules_"]
