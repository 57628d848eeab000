"""``weight_norm`` / ``remove_weight_norm`` (torch.nn.utils' forward-pre-hook form): a
parameter ``w`` is replaced by ``w_g`` (its norm over every dim but ``dim``) and ``w_v``
(its direction), and recomputed as ``w_v * (w_g / ||w_v||)`` before each forward."""
import warnings

from ..._autograd.grad_mode import no_grad
from ...ops.reduction import vector_norm
from ..parameter import Parameter, UninitializedParameter

__all__ = ["WeightNorm", "weight_norm", "remove_weight_norm"]


def norm_except_dim(v, pow=2, dim=0):
    """The ``pow``-norm of ``v`` over every dim but ``dim`` (all of them for ``dim=-1``),
    kept with size 1 in those dims (torch.norm_except_dim)."""
    if dim == -1:
        return vector_norm(v, pow)
    dim = dim % v.dim()
    others = tuple(d for d in range(v.dim()) if d != dim)
    return vector_norm(v, pow, dim=others, keepdim=True)


def _weight_norm(v, g, dim=0):
    return v * (g / norm_except_dim(v, 2, dim))


class WeightNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_g`` and ``name_v``."""

    def __init__(self, name, dim):
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return _weight_norm(v, g, self.dim)

    @staticmethod
    def apply(module, name, dim):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError("Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        fn = WeightNorm(name, dim)
        weight = getattr(module, name)
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `WeightNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "weight normalization")
        del module._parameters[name]
        with no_grad():
            g = norm_except_dim(weight, 2, fn.dim)
        module.register_parameter(name + "_g", Parameter(g.detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, fn.compute_weight(module))
        module.register_forward_pre_hook(fn)
        return fn

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module)
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name="weight", dim=0):
    """Reparametrize ``module.<name>`` as magnitude ``<name>_g`` times direction
    ``<name>_v`` (``dim=None``: one magnitude for the whole tensor); deprecated in torch
    in favour of ``parametrizations.weight_norm``, with the same warning.

    Example
    -------
    >>> import wgrad
    >>> import warnings; warnings.simplefilter("ignore")
    >>> m = wgrad.nn.utils.weight_norm(wgrad.nn.Linear(3, 2))
    >>> [n for n, _ in m.named_parameters()], tuple(m.weight_g.shape)
    (['bias', 'weight_g', 'weight_v'], (2, 1))
    """
    warnings.warn("`torch.nn.utils.weight_norm` is deprecated in favor of "
                  "`torch.nn.utils.parametrizations.weight_norm`.", FutureWarning, stacklevel=2)
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name="weight"):
    """Undo ``weight_norm``: ``<name>`` becomes a Parameter again, with the current value."""
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")
