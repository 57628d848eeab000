"""``functionalize`` and ``replace_all_batch_norm_modules_`` (torch.func).

torch's ``functionalize`` rewrites a function's in-place ops and views into out-of-place
ones for backends that cannot express mutation, and writes the mutations of the inputs
back into them afterwards: called eagerly, it computes what the function computes and
leaves the inputs as the function leaves them. wgrad's arrays are immutable already
(in-place ops rebind a tensor's array, NOTE [In-place ops]), so the wrapper runs the
function itself. What torch's unwrapping shows is kept: an output that is an input the
function mutated, or a view of one, comes back as a tensor of its own (torch's outputs are
then views of a new tensor, not of the input), and with ``remove="mutations_and_views"``
every output that is a view comes back as a tensor of its own, as torch's ``*_copy`` ops
make them.
"""
import functools

from .._control_flow import map_instances
from .._tensor import Tensor
from ..nn.modules.more import _InstanceNorm
from ..nn.modules.normalization import _BatchNorm

__all__ = ["functionalize", "replace_all_batch_norm_modules_"]

_BAD_REMOVE = (
    "functionalize(f, remove='mutations'): received invalid argument for remove={}. Valid "
    "options are:\n     remove='mutations': all inplace and out= operators will be removed "
    "from the program, and replaced with their out-of-place equivalents.\n     "
    "remove='mutations_and_views': In addition to the above, all aliasing operators {{view}} "
    "will be replaced with their non-aliasing counterparts, {{view}}_copy.\n")


def functionalize(func, *, remove="mutations"):
    """``func`` with its mutations (and, with ``remove="mutations_and_views"``, its views)
    removed, as torch.func.functionalize: the same values, gradients and input mutations
    as ``func`` called eagerly.

    Example
    -------
    >>> def f(a):
    ...     b = a.view(-1)
    ...     b.add_(1)
    ...     return a * 2
    >>> x = wgrad.ones(2)
    >>> wgrad.func.functionalize(f)(x), x
    (tensor([4., 4.]), tensor([2., 2.]))
    """
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(_BAD_REMOVE.format(remove))
    copy_views = remove == "mutations_and_views"

    @functools.wraps(func)
    def wrapped(*args, **kwargs):
        inputs = []
        map_instances(Tensor, inputs.append, (args, kwargs))
        versions = [t._version for t in inputs]
        out = func(*args, **kwargs)
        mutated = {id(t) for t, v in zip(inputs, versions) if t._version != v}

        def fresh(t):
            # torch hands back what functionalization computed: a mutated input (or a view
            # of one) comes back as a tensor of its own, views as copies when asked
            root = t if t._base is None else t._base
            return t.clone() if id(root) in mutated or (copy_views and t._base is not None) \
                else t
        return map_instances(Tensor, fresh, out)
    return wrapped


def _without_running_stats(module):
    # wgrad's instance norms derive from _BatchNorm; torch's do not, and keep their stats
    if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm) and \
            module.track_running_stats:
        module.running_mean = None
        module.running_var = None
        module.num_batches_tracked = None
        module.track_running_stats = False


def replace_all_batch_norm_modules_(root):
    """Turn off the running statistics of every batch norm module in ``root`` (``root``
    included), in place: ``running_mean``, ``running_var`` and ``num_batches_tracked``
    become None and ``track_running_stats`` False, so they normalize by the batch's
    statistics (what ``vmap`` over a model needs). Returns ``root``.

    Example
    -------
    >>> net = wgrad.nn.Sequential(wgrad.nn.Linear(3, 3), wgrad.nn.BatchNorm1d(3))
    >>> net = wgrad.func.replace_all_batch_norm_modules_(net)
    >>> net[1].running_mean is None, net[1].track_running_stats
    (True, False)
    """
    _without_running_stats(root)
    for module in root.modules():
        _without_running_stats(module)
    return root
