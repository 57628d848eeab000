"""The chi-squared distribution (torch.distributions.Chi2)."""
from . import constraints
from .gamma import Gamma

__all__ = ["Chi2"]


class Chi2(Gamma):
    """The chi-squared distribution of ``df`` degrees of freedom: ``Gamma(df / 2, 1 / 2)``.

    Example
    -------
    >>> m = Chi2(wgrad.tensor([4.0]))
    >>> m.variance
    tensor([8.])
    >>> m.log_prob(wgrad.tensor([2.0]))
    tensor([-1.6931])
    """
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return super().expand(batch_shape, self._get_checked_instance(Chi2, _instance))

    @property
    def df(self):
        return self.concentration * 2
