"""``spectral_norm`` / ``remove_spectral_norm`` (torch.nn.utils' forward-pre-hook form):
a parameter ``w`` is kept as ``w_orig`` with buffers ``w_u`` and ``w_v`` (estimates of its
first singular vectors) and recomputed as ``w_orig / sigma``, ``sigma = u @ W @ v``, before
each forward; in training mode ``n_power_iterations`` of the power method update ``u`` and
``v`` in place first. The state dict carries torch's ``spectral_norm`` version metadata,
and a version-0 state dict (``weight`` stored, no ``weight_v``) still loads."""
from ..._autograd.grad_mode import no_grad
from ...ops.layer import normalize
from ...ops.linear_algebra import dot, multi_dot, mv
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..parameter import Parameter, UninitializedParameter

__all__ = ["SpectralNorm", "SpectralNormLoadStateDictPreHook", "SpectralNormStateDictHook",
           "spectral_norm", "remove_spectral_norm"]


class SpectralNorm:
    """The forward pre-hook that recomputes ``name`` from ``name_orig``, ``name_u`` and
    ``name_v`` (invariant after each training forward: ``u = normalize(W @ v)``)."""

    _version = 1  # 1: the weight is no buffer, v is one, eval mode uses u @ W_orig @ v

    def __init__(self, name="weight", n_power_iterations=1, dim=0, eps=1e-12):
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """``weight`` with ``dim`` first, flattened to a matrix."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.dim())
                                                if d != self.dim])
        return weight.reshape(weight.size(0), -1)

    def compute_weight(self, module, do_power_iteration):
        """``weight_orig / sigma``; with ``do_power_iteration`` the buffers ``u`` and
        ``v`` are first updated in place (and cloned for this forward's graph)."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        weight_mat = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v = normalize(mv(weight_mat.t(), u), dim=0, eps=self.eps, out=v)
                    u = normalize(mv(weight_mat, v), dim=0, eps=self.eps, out=u)
                u, v = u.clone(), v.clone()
        return weight / dot(u, mv(weight_mat, v))

    def remove(self, module):
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs):
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    def _solve_v_and_rescale(self, weight_mat, u, target_sigma):
        # a v with u = normalize(W @ v) and u @ W @ v = sigma (pinverse: W^T W may be
        # singular)
        v = multi_dot([weight_mat.t().mm(weight_mat).pinverse(), weight_mat.t(),
                       u.unsqueeze(1)]).squeeze(1)
        return v.mul_(target_sigma / dot(u, mv(weight_mat, v)))

    @staticmethod
    def apply(module, name, n_power_iterations, dim, eps):
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError("Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        fn = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        if weight is None:
            raise ValueError(f"`SpectralNorm` cannot be applied as parameter `{name}` is None")
        if isinstance(weight, UninitializedParameter):
            raise ValueError("The module passed to `SpectralNorm` can't have uninitialized "
                             "parameters. Make sure to run the dummy forward before applying "
                             "spectral normalization")
        with no_grad():
            h, w = fn.reshape_weight_to_matrix(weight).size()
            u = normalize(weight.new_empty(h).normal_(0, 1), dim=0, eps=fn.eps)
            v = normalize(weight.new_empty(w).normal_(0, 1), dim=0, eps=fn.eps)
        delattr(module, fn.name)
        module.register_parameter(fn.name + "_orig", weight)
        # ``name`` stays readable before the first forward: a plain attribute (no
        # parameter) aliasing the original's data
        setattr(module, fn.name, weight.data)
        module.register_buffer(fn.name + "_u", u)
        module.register_buffer(fn.name + "_v", v)
        module.register_forward_pre_hook(fn)
        module._register_state_dict_hook(SpectralNormStateDictHook(fn))
        module._register_load_state_dict_pre_hook(SpectralNormLoadStateDictPreHook(fn))
        return fn


class SpectralNormLoadStateDictPreHook:
    """Loads a version-0 state dict (``W = W_orig / sigma`` stored, no ``v``): ``v`` is
    solved from ``W_orig``, ``u`` and ``sigma = mean(W_orig / W)``."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs):
        fn = self.fn
        version = local_metadata.get("spectral_norm", {}).get(fn.name + ".version", None)
        if version is not None and version >= 1:
            return
        weight_key = prefix + fn.name
        if version is None and weight_key not in state_dict and \
                all(weight_key + s in state_dict for s in ("_orig", "_u", "_v")):
            return  # a current state dict without its metadata
        has_missing_keys = False
        for suffix in ("_orig", "", "_u"):
            key = weight_key + suffix
            if key not in state_dict:
                has_missing_keys = True
                if strict:
                    missing_keys.append(key)
        if has_missing_keys:
            return
        with no_grad():
            weight_orig = state_dict[weight_key + "_orig"]
            weight = state_dict.pop(weight_key)
            sigma = (weight_orig / weight).mean()
            weight_mat = fn.reshape_weight_to_matrix(weight_orig)
            u = state_dict[weight_key + "_u"]
            state_dict[weight_key + "_v"] = fn._solve_v_and_rescale(weight_mat, u, sigma)


class SpectralNormStateDictHook:
    """Writes ``metadata['spectral_norm']['<name>.version']`` into the state dict."""

    def __init__(self, fn):
        self.fn = fn

    def __call__(self, module, state_dict, prefix, local_metadata):
        if "spectral_norm" not in local_metadata:
            local_metadata["spectral_norm"] = {}
        key = self.fn.name + ".version"
        if key in local_metadata["spectral_norm"]:
            raise RuntimeError(f"Unexpected key in metadata['spectral_norm']: {key}")
        local_metadata["spectral_norm"][key] = self.fn._version


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Rescale ``module.<name>`` by its spectral norm, estimated by the power method
    before every forward (``dim``: the output dim, 1 for ConvTranspose, else 0). ``u`` and
    ``v`` start from wgrad's generator (other numbers than torch's for a seed).

    Example
    -------
    >>> m = wgrad.nn.utils.spectral_norm(wgrad.nn.Linear(3, 2))
    >>> sorted(m.state_dict()), tuple(m.weight_u.shape), tuple(m.weight_v.shape)
    (['bias', 'weight_orig', 'weight_u', 'weight_v'], (2,), (3,))
    """
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name="weight"):
    """Undo ``spectral_norm``: ``<name>`` becomes a Parameter holding the current
    normalized value (no power iteration), and the state dict hooks go.

    Example
    -------
    >>> m = wgrad.nn.utils.spectral_norm(wgrad.nn.Linear(3, 2))
    >>> sorted(wgrad.nn.utils.remove_spectral_norm(m).state_dict())
    ['bias', 'weight']
    """
    for k, hook in module._forward_pre_hooks.items():
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[k]
            break
    else:
        raise ValueError(f"spectral_norm of '{name}' not found in {module}")
    for k, hook in module._state_dict_hooks.items():
        if isinstance(hook, SpectralNormStateDictHook) and hook.fn.name == name:
            del module._state_dict_hooks[k]
            break
    # torch's loop compares the _WrappedHook around the hook, so there the load pre-hook
    # stays (a later strict load of the plain module's state dict then misses
    # "<name>_orig"); wgrad removes it, looking inside the wrapper
    for k, hook in module._load_state_dict_pre_hooks.items():
        inner = getattr(hook, "hook", hook)
        if isinstance(inner, SpectralNormLoadStateDictPreHook) and inner.fn.name == name:
            del module._load_state_dict_pre_hooks[k]
            break
    return module
