"""The autograd core, which knows no Tensor: grad modes, the graph (Node, Edge, hooks),
saved values, the engine and anomaly mode.

Layering (DESIGN.md section 3): this package imports nothing from ``wgrad._tensor``,
``wgrad.ops`` or ``wgrad.autograd``; it reads a tensor only through the attributes
named where it does (``_data``, ``_vc``, ``_grad_fn``, ``_gradient_edge()``, ...).
The public torch.autograd API is ``wgrad.autograd``.
"""
__all__ = []
