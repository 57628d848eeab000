"""Student's t-distribution (torch.distributions.StudentT)."""
import math
from math import inf, nan

from .._tensor import Size
from ..ops import digamma, lgamma, log1p, rsqrt
from . import constraints
from .chi2 import Chi2
from .distribution import Distribution
from .utils import _standard_normal, broadcast_all

__all__ = ["StudentT"]


class StudentT(Distribution):
    """Student's t-distribution of ``df`` degrees of freedom, location ``loc`` and scale
    ``scale``; samples are ``loc + scale * X / sqrt(Z / df)`` with ``X`` standard normal
    and ``Z`` a ``Chi2(df)`` draw (reparameterized).

    Example
    -------
    >>> m = StudentT(wgrad.tensor([3.0]))
    >>> m.log_prob(wgrad.tensor([0.0]))
    tensor([-1.0009])
    >>> m.variance
    tensor([3.])
    """
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        self._chi2 = Chi2(self.df)
        super().__init__(self.df.size(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(StudentT, batch_shape, _instance, "df", "loc", "scale",
                              _chi2=self._chi2.expand(batch_shape))

    @property
    def mean(self):
        m = self.loc.clone()
        m[self.df <= 1] = nan
        return m

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        m = df.clone()
        big = df > 2
        m[big] = self.scale[big].pow(2) * df[big] / (df[big] - 2)
        m[(df <= 2) & (df > 1)] = inf
        m[df <= 1] = nan
        return m

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        x = _standard_normal(shape, dtype=self.df.dtype, device=self.df.device)
        z = self._chi2.rsample(sample_shape)
        return self.loc + self.scale * (x * rsqrt(z / self.df))

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        log_z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
                 + lgamma(0.5 * df) - lgamma(0.5 * (df + 1.0)))
        return -0.5 * (df + 1.0) * log1p(y ** 2.0 / df) - log_z

    def entropy(self):
        df = self.df
        log_beta = lgamma(0.5 * df) + math.lgamma(0.5) - lgamma(0.5 * (df + 1))
        return (self.scale.log()
                + 0.5 * (df + 1) * (digamma(0.5 * (df + 1)) - digamma(0.5 * df))
                + 0.5 * df.log() + log_beta)
