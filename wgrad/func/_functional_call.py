"""functional_call and stack_module_state: a module called with other parameters and
buffers, and the parameters of several modules stacked for vmap (model ensembling)."""
import contextlib

from .._autograd.grad_mode import no_grad
from ..ops.shape import stack

__all__ = ["functional_call", "stack_module_state"]


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by the given tensors, as
    ``torch.func.functional_call``.

    The names are those of ``module.named_parameters()`` / ``named_buffers()`` (dotted
    paths into submodules); a module's own tensors are swapped for the call and restored
    afterwards, also when the call raises. With ``tie_weights`` a tensor given for one of
    several tied names (one Parameter registered twice) is used for all of them;
    ``strict`` demands exactly the module's names. ``args`` that is not a tuple is the
    single positional argument.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import functional_call
    >>> lin = wgrad.nn.Linear(2, 1, bias=False)
    >>> functional_call(lin, {"weight": wgrad.tensor([[1.0, 2.0]])}, (wgrad.ones(2),))
    tensor([3.])
    """
    if isinstance(parameter_and_buffer_dicts, dict):
        merged = dict(parameter_and_buffer_dicts)
    elif isinstance(parameter_and_buffer_dicts, (list, tuple)):
        merged, dup = {}, []
        for d in parameter_and_buffer_dicts:
            if not isinstance(d, dict):
                raise ValueError(f"Expected all elements of parameter_and_buffer_dicts to be "
                                 f"dictionaries but got {type(d)}")
            for k, v in d.items():
                if k in merged:
                    dup.append(k)
                merged[k] = v
        if dup:
            raise ValueError(f"{sorted(set(dup))} appeared in multiple dictionaries; behavior "
                             f"of functional call is ambiguous")
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    if kwargs is None:
        kwargs = {}
    with _reparametrized(module, merged, tie_weights, strict):
        return module(*args, **kwargs)


def _tied_names(module):
    """name -> all names of the same tensor (parameters and buffers), for tied tensors."""
    groups = {}
    for getter in (module.named_parameters, module.named_buffers):
        for name, t in getter(remove_duplicate=False):
            groups.setdefault(id(t), []).append(name)
    return {n: g for g in groups.values() if len(g) > 1 for n in g}


@contextlib.contextmanager
def _reparametrized(module, tensors, tie_weights, strict):
    names = [n for n, _ in module.named_parameters(remove_duplicate=False)] + \
        [n for n, _ in module.named_buffers(remove_duplicate=False)]
    tensors = dict(tensors)
    if tie_weights:
        tied = _tied_names(module)
        for name in list(tensors):
            for other in tied.get(name, ()):
                if other == name:
                    continue
                if other in tensors and tensors[other] is not tensors[name]:
                    raise ValueError(f"functional_call got multiple values for keys "
                                     f"{sorted([name, other])}, which are tied. Consider "
                                     f"using tie_weights=False")
                tensors[other] = tensors[name]
    if strict:
        missing = [n for n in names if n not in tensors]
        unexpected = [n for n in tensors if n not in names]
        if missing or unexpected:
            msg = f"Error(s) in reparametrizing for {type(module).__name__}:"
            if unexpected:
                msg += "\n\tUnexpected key(s): " + ", ".join(f"'{k}'" for k in unexpected) + "."
            if missing:
                msg += "\n\tMissing key(s): " + ", ".join(f"'{k}'" for k in missing) + "."
            raise RuntimeError(msg)
    undo = []
    try:
        for name, value in tensors.items():
            owner, attr = _owner(module, name)
            undo.append(_swap(owner, attr, value))
        yield
    finally:
        for restore in reversed(undo):
            restore()


def _owner(module, name):
    *path, attr = name.split(".")
    for p in path:
        module = getattr(module, p)
    return module, attr


def _swap(owner, attr, value):
    """Put ``value`` in place of ``owner.<attr>``; return the function that undoes it."""
    for table in ("_parameters", "_buffers"):
        d = owner.__dict__.get(table)
        if d is not None and attr in d:
            old = d[attr]
            d[attr] = value

            def restore(d=d, old=old):
                d[attr] = old
            return restore
    missing = object()
    old = owner.__dict__.get(attr, missing)
    object.__setattr__(owner, attr, value)

    def restore():
        if old is missing:
            owner.__dict__.pop(attr, None)
        else:
            object.__setattr__(owner, attr, old)
    return restore


def stack_module_state(models):
    """``(params, buffers)``: each parameter and buffer of ``models`` (modules of the same
    structure) stacked along a new first dimension, for ``vmap`` over
    ``functional_call`` (model ensembling), as ``torch.func.stack_module_state``. The
    stacked parameters are new leaves that require grad when the originals do.

    Example
    -------
    >>> import wgrad
    >>> from wgrad.func import stack_module_state
    >>> params, buffers = stack_module_state([wgrad.nn.Linear(2, 3) for _ in range(4)])
    >>> params["weight"].shape
    wgrad.Size([4, 3, 2])
    """
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or not any(m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    all_params = [dict(m.named_parameters()) for m in models]
    all_buffers = [dict(m.named_buffers()) for m in models]

    def stacked(name, ts):
        rg = {t.requires_grad for t in ts}
        if len(rg) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               f".requires_grad")
        with no_grad():
            out = stack([t.detach() for t in ts])
        return out.requires_grad_() if rg.pop() else out
    params = {k: stacked(k, [p[k] for p in all_params]) for k in all_params[0]}
    buffers = {k: stacked(k, [b[k] for b in all_buffers]) for k in all_buffers[0]}
    return params, buffers

