"""``skip_init`` (torch.nn.utils.init): a module built without initializing its parameters
and buffers."""
import inspect

from ..._autograd.grad_mode import no_grad
from ..._creation import get_rng_state, set_rng_state
from ..modules.module import Module

__all__ = ["skip_init"]


def skip_init(module_cls, *args, **kwargs):
    """``module_cls(*args, **kwargs)`` with its parameters and buffers left as by
    ``empty`` (zeros in wgrad) and the global generator untouched, as torch's (which
    builds on the meta device, then ``to_empty``). The class must take ``device``.

    Example
    -------
    >>> m = wgrad.nn.utils.skip_init(wgrad.nn.Linear, 3, 1)
    >>> m.weight
    Parameter containing:
    tensor([[0., 0., 0.]], requires_grad=True)
    """
    if not issubclass(module_cls, Module):
        raise RuntimeError(f"Expected a Module; got {module_cls}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError("Module must support a 'device' arg to skip initialization")
    kwargs["device"] = kwargs.pop("device", "cpu")
    # wgrad has no meta device: build on the final device, then give the generator back
    # the numbers initialization drew and empty the tensors
    state = get_rng_state()
    try:
        module = module_cls(*args, **kwargs)
    finally:
        set_rng_state(state)
    with no_grad():
        for t in list(module.parameters()) + list(module.buffers()):
            t.zero_()
    return module
