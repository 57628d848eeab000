"""``torch.nn.utils.stateless``: the deprecated ``functional_call`` (torch 2.0 moved it to
``torch.func``); it warns as torch does and calls ``wgrad.func.functional_call``."""
import warnings

from ...func import functional_call as _functional_call

__all__ = ["functional_call"]


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """Call ``module`` with its parameters and buffers replaced by
    ``parameters_and_buffers`` (deprecated: use ``wgrad.func.functional_call``).

    Example
    -------
    >>> import warnings; warnings.simplefilter("ignore")
    >>> lin = wgrad.nn.Linear(2, 1, bias=False)
    >>> wgrad.nn.utils.stateless.functional_call(
    ...     lin, {"weight": wgrad.tensor([[1.0, 2.0]])}, (wgrad.ones(2),))
    tensor([3.])
    """
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0 and will be removed in a future version of PyTorch. Please use "
                  "`torch.func.functional_call` instead which is a drop-in replacement.",
                  FutureWarning, stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)
