"""The continuous Bernoulli distribution (torch.distributions.ContinuousBernoulli)."""
import math
import numbers

from .._creation import ones_like, rand, zeros_like
from .._autograd.grad_mode import no_grad
from .._tensor import Size
from ..nn import functional as F
from ..ops import abs as abs_, expm1, ge, gt, le, log, log1p, maximum, pow as pow_, sqrt, where
from . import constraints
from .exp_family import ExponentialFamily
from .utils import broadcast_all, clamp_probs, lazy_property, logits_to_probs, probs_to_logits

__all__ = ["ContinuousBernoulli"]


class ContinuousBernoulli(ExponentialFamily):
    """The continuous Bernoulli distribution on ``[0, 1]`` (Loaiza-Ganem & Cunningham,
    2019) of ``probs`` in ``(0, 1)`` or real ``logits`` (not both): the density is
    proportional to ``probs ** x * (1 - probs) ** (1 - x)``.

    Where ``probs`` lies in ``lims`` (around 0.5, where the closed forms lose precision)
    the log normalizer, mean, variance and cdf are Taylor expansions in ``probs - 0.5``
    (the icdf is the identity).

    Example
    -------
    >>> m = ContinuousBernoulli(wgrad.tensor([0.3]))
    >>> m.mean
    tensor([0.4302])
    >>> m.log_prob(wgrad.tensor([0.5]))
    tensor([-0.0297])
    """
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    _mean_carrier_measure = 0
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        if (probs is None) == (logits is None):
            raise ValueError("Either `probs` or `logits` must be specified, but not both.")
        if probs is not None:
            is_scalar = isinstance(probs, numbers.Number)
            (self.probs,) = broadcast_all(probs)
            # checked before the clamp below, which would make any probs valid
            if validate_args is not None:
                if not self.arg_constraints["probs"].check(self.probs).all():
                    raise ValueError("The parameter probs has invalid values")
            self.probs = clamp_probs(self.probs)
        else:
            is_scalar = isinstance(logits, numbers.Number)
            (self.logits,) = broadcast_all(logits)
        self._param = self.probs if probs is not None else self.logits
        self._lims = lims
        super().__init__(Size() if is_scalar else self._param.size(),
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        names = [n for n in ("probs", "logits") if n in self.__dict__]
        new = self._expanded(ContinuousBernoulli, batch_shape, _instance, *names,
                             _lims=self._lims)
        new._param = getattr(new, names[-1])
        return new

    def _new(self, *args, **kwargs):
        return self._param.new(*args, **kwargs)

    def _outside_unstable_region(self):
        return maximum(le(self.probs, self._lims[0]), gt(self.probs, self._lims[1]))

    def _cut_probs(self):
        return where(self._outside_unstable_region(), self.probs,
                     self._lims[0] * ones_like(self.probs))

    def _cont_bern_log_norm(self):
        """The log normalizer as a function of ``probs``."""
        p = self._cut_probs()
        p_below_half = where(le(p, 0.5), p, zeros_like(p))
        p_above_half = where(ge(p, 0.5), p, ones_like(p))
        log_norm = log(abs_(log1p(-p) - log(p))) - where(
            le(p, 0.5), log1p(-2.0 * p_below_half), log(2.0 * p_above_half - 1.0))
        x = pow_(self.probs - 0.5, 2)
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * x) * x
        return where(self._outside_unstable_region(), log_norm, taylor)

    @property
    def mean(self):
        p = self._cut_probs()
        mus = p / (2.0 * p - 1.0) + 1.0 / (log1p(-p) - log(p))
        x = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * pow_(x, 2)) * x
        return where(self._outside_unstable_region(), mus, taylor)

    @property
    def stddev(self):
        return sqrt(self.variance)

    @property
    def variance(self):
        p = self._cut_probs()
        variances = (p * (p - 1.0) / pow_(1.0 - 2.0 * p, 2)
                     + 1.0 / pow_(log1p(-p) - log(p), 2))
        x = pow_(self.probs - 0.5, 2)
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * x) * x
        return where(self._outside_unstable_region(), variances, taylor)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return clamp_probs(logits_to_probs(self.logits, is_binary=True))

    @property
    def param_shape(self):
        return self._param.size()

    def sample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype,
                 device=self.probs.device)
        with no_grad():
            return self.icdf(u)

    def rsample(self, sample_shape=Size()):
        u = rand(self._extended_shape(sample_shape), dtype=self.probs.dtype,
                 device=self.probs.device)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        logits, value = broadcast_all(self.logits, value)
        return (-F.binary_cross_entropy_with_logits(logits, value, reduction="none")
                + self._cont_bern_log_norm())

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._cut_probs()
        cdfs = (pow_(p, value) * pow_(1.0 - p, 1.0 - value) + p - 1.0) / (2.0 * p - 1.0)
        unbounded = where(self._outside_unstable_region(), cdfs, value)
        return where(le(value, 0.0), zeros_like(value),
                     where(ge(value, 1.0), ones_like(value), unbounded))

    def icdf(self, value):
        p = self._cut_probs()
        return where(self._outside_unstable_region(),
                     (log1p(-p + value * (2.0 * p - 1.0)) - log1p(-p))
                     / (log(p) - log1p(-p)),
                     value)

    def entropy(self):
        log_p0, log_p1 = log1p(-self.probs), log(self.probs)
        return self.mean * (log_p0 - log_p1) - self._cont_bern_log_norm() - log_p0

    @property
    def _natural_params(self):
        return (self.logits,)

    def _log_normalizer(self, x):
        """The log normalizer as a function of the natural parameter ``x``."""
        lo, hi = self._lims[0] - 0.5, self._lims[1] - 0.5
        outside = maximum(le(x, lo), gt(x, hi))
        cut = where(outside, x, lo * ones_like(x))
        log_norm = log(abs_(expm1(cut))) - log(abs_(cut))
        taylor = 0.5 * x + pow_(x, 2) / 24.0 - pow_(x, 4) / 2880.0
        return where(outside, log_norm, taylor)
