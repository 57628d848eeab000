"""``replicate``: copies of a module for each GPU whose parameters and buffers are
differentiable copies of the original's (torch.nn.parallel's; NOTE [CUDA communication
without a GPU])."""
from ..parameter import UninitializedParameter
from . import _functions, comm
from .comm import _get_device_index

__all__ = ["replicate"]


def _replica(module):
    """torch's ``Module._replicate_for_data_parallel``: a shallow copy without parameters
    of its own (a lazy module refuses)."""
    own = getattr(type(module), "_replicate_for_data_parallel", None)
    if own is not None:
        return own(module)
    replica = module.__new__(type(module))
    replica.__dict__ = module.__dict__.copy()
    replica._parameters = {}
    replica._buffers = replica._buffers.copy()
    replica._modules = replica._modules.copy()
    replica._is_replica = True
    return replica


def _copies(tensors, devices, detach):
    """Per device, a copy of each of ``tensors``."""
    if len(tensors) == 0:
        return []
    if detach:
        return comm._broadcast_coalesced(
            [t.detach() if not isinstance(t, UninitializedParameter) else t
             for t in tensors], devices)
    flat = _functions.broadcast(devices, *tensors)
    n = len(tensors)
    return [list(flat[i:i + n]) for i in range(0, len(flat), n)]


def replicate(network, devices, detach=False):
    """One replica of ``network`` per device of ``devices``: the same module tree, each
    parameter and buffer a copy on that device (``detach``: cut from the original's
    graph). Without devices, no replicas.

    Examples
    --------
    >>> replicas = wgrad.nn.parallel.replicate(wgrad.nn.ReLU(), [0, 1])
    >>> len(replicas), replicas[0](wgrad.tensor([-1., 2.]))
    (2, tensor([0., 2.]))
    """
    if not devices:
        return []
    devices = [_get_device_index(x, True) for x in devices]
    num = len(devices)
    params = list(network.parameters())
    param_index = {id(p): i for i, p in enumerate(params)}
    param_copies = _copies(params, devices, detach)

    buffers = list(network.buffers())
    with_grad = [b for b in buffers if b.requires_grad and not detach]
    without = [b for b in buffers if not (b.requires_grad and not detach)]
    index_with = {id(b): i for i, b in enumerate(with_grad)}
    index_without = {id(b): i for i, b in enumerate(without)}
    copies_with = _copies(with_grad, devices, detach)
    copies_without = _copies(without, devices, True)

    modules = list(network.modules())
    module_index = {id(m): i for i, m in enumerate(modules)}
    copies = [[] for _ in devices]
    for module in modules:
        for j in range(num):
            replica = _replica(module)
            replica._former_parameters = {}
            copies[j].append(replica)

    for i, module in enumerate(modules):
        for key, child in module._modules.items():
            for j in range(num):
                if child is None:
                    copies[j][i]._modules[key] = None
                else:
                    setattr(copies[j][i], key, copies[j][module_index[id(child)]])
        for key, param in module._parameters.items():
            for j in range(num):
                replica = copies[j][i]
                if param is None:
                    replica._parameters[key] = None
                else:
                    copy = param_copies[j][param_index[id(param)]]
                    setattr(replica, key, copy)
                    replica._former_parameters[key] = copy
        for key, buf in module._buffers.items():
            for j in range(num):
                replica = copies[j][i]
                if buf is None:
                    replica._buffers[key] = None
                elif buf.requires_grad and not detach:
                    setattr(replica, key, copies_with[j][index_with[id(buf)]])
                else:
                    setattr(replica, key, copies_without[j][index_without[id(buf)]])
    return [copies[j][0] for j in range(num)]
