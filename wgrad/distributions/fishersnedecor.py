"""The Fisher-Snedecor (F) distribution (torch.distributions.FisherSnedecor)."""
import numbers
from math import nan

from .._dtype import finfo
from .._tensor import Size
from ..ops import log, log1p
from . import constraints
from .distribution import Distribution
from .gamma import Gamma
from .utils import broadcast_all

__all__ = ["FisherSnedecor"]


class FisherSnedecor(Distribution):
    """The F-distribution of ``df1`` and ``df2`` degrees of freedom; samples are the ratio
    of ``Gamma(df1 / 2, df1)`` and ``Gamma(df2 / 2, df2)`` draws (reparameterized).

    Example
    -------
    >>> m = FisherSnedecor(wgrad.tensor([4.0]), wgrad.tensor([6.0]))
    >>> m.mean
    tensor([1.5000])
    >>> m.log_prob(wgrad.tensor([1.0]))
    tensor([-0.8802])
    """
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(self.df1 * 0.5, self.df1)
        self._gamma2 = Gamma(self.df2 * 0.5, self.df2)
        numbers_only = isinstance(df1, numbers.Number) and isinstance(df2, numbers.Number)
        super().__init__(Size() if numbers_only else self.df1.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(FisherSnedecor, batch_shape, _instance, "df1", "df2",
                              _gamma1=self._gamma1.expand(batch_shape),
                              _gamma2=self._gamma2.expand(batch_shape))

    @property
    def mean(self):
        df2 = self.df2.clone()
        df2[df2 <= 2] = nan
        return df2 / (df2 - 2)

    @property
    def mode(self):
        mode = (self.df1 - 2) / self.df1 * self.df2 / (self.df2 + 2)
        mode[self.df1 <= 2] = nan
        return mode

    @property
    def variance(self):
        df1, df2 = self.df1, self.df2.clone()
        df2[df2 <= 4] = nan
        return 2 * df2.pow(2) * (df1 + df2 - 2) / (df1 * (df2 - 2).pow(2) * (df2 - 4))

    def rsample(self, sample_shape=Size(())):
        shape = self._extended_shape(sample_shape)
        x1 = self._gamma1.rsample(sample_shape).view(shape)
        x2 = self._gamma2.rsample(sample_shape).view(shape)
        tiny = finfo(x2.dtype).tiny
        x2.clamp_(min=tiny)
        y = x1 / x2
        y.clamp_(min=tiny)
        return y

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        ct1, ct2, ct3 = self.df1 * 0.5, self.df2 * 0.5, self.df1 / self.df2
        t1 = (ct1 + ct2).lgamma() - ct1.lgamma() - ct2.lgamma()
        t2 = ct1 * ct3.log() + (ct1 - 1) * log(value)
        t3 = (ct1 + ct2) * log1p(ct3 * value)
        return t1 + t2 - t3
