"""``wgrad.utils.dlpack``: torch.utils.dlpack's exchange of tensors with other array
libraries through DLPack capsules.

Example
-------
>>> import numpy as np
>>> from wgrad.utils.dlpack import to_dlpack, from_dlpack
>>> from_dlpack(to_dlpack(wgrad.arange(3.)))
tensor([0., 1., 2.])
"""
from ..jax.interop import from_dlpack

__all__ = ["to_dlpack", "from_dlpack"]


def to_dlpack(tensor):
    """A DLPack capsule of ``tensor``'s values (shared with JAX's array where it can be): a
    conjugate view exports its conjugated values, and a tensor that requires grad exports
    as torch's does (no history travels)."""
    return tensor._data.__dlpack__()
