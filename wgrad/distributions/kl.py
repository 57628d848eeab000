"""Kullback-Leibler divergences between distributions (torch.distributions.kl):
``kl_divergence(p, q)`` dispatches on the pair of types to a function registered with
``register_kl``, the most specific pair first."""
import functools
import math
import warnings

from .. import linalg, special
from .._creation import full_like, ones_like
from ..nn import functional as F
from ..ops import (broadcast_shapes, diag_embed, digamma, erf, exp, ge, le, lgamma, log,
                   log1p, maximum, square, where)
from .bernoulli import Bernoulli
from .beta import Beta
from .binomial import Binomial
from .categorical import Categorical
from .cauchy import Cauchy
from .continuous_bernoulli import ContinuousBernoulli
from .dirichlet import Dirichlet
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .exponential import Exponential
from .gamma import Gamma
from .geometric import Geometric
from .gumbel import Gumbel
from .half_normal import HalfNormal
from .independent import Independent
from .laplace import Laplace
from .lowrank_multivariate_normal import (LowRankMultivariateNormal, _batch_lowrank_logdet,
                                          _batch_lowrank_mahalanobis)
from .multivariate_normal import MultivariateNormal, _batch_mahalanobis
from .normal import Normal
from .one_hot_categorical import OneHotCategorical
from .pareto import Pareto
from .poisson import Poisson
from .transformed_distribution import TransformedDistribution
from .uniform import Uniform
from .utils import _grad, _sum_rightmost
from .utils import euler_constant as _EULER

__all__ = ["register_kl", "kl_divergence"]

_KL_REGISTRY = {}  # the registered (type_p, type_q) pairs: the source of truth
_KL_MEMOIZE = {}  # every (type(p), type(q)) looked up so far -> its function


def register_kl(type_p, type_q):
    """A decorator registering ``fun(p, q)`` as ``kl_divergence`` of instances of
    ``type_p`` and ``type_q`` (or of their subclasses, when no more specific pair is
    registered).

    Example
    -------
    >>> class Shifted(Normal):
    ...     pass
    >>> @register_kl(Shifted, Normal)
    ... def _kl_shifted_normal(p, q):
    ...     return wgrad.zeros(p.batch_shape)
    >>> kl_divergence(Shifted(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.)
    """
    # torch's check, kept as it is: issubclass raises first for anything not a class
    if not isinstance(type_p, type) and issubclass(type_p, Distribution):
        raise TypeError(f"Expected type_p to be a Distribution subclass but got {type_p}")
    if not isinstance(type_q, type) and issubclass(type_q, Distribution):
        raise TypeError(f"Expected type_q to be a Distribution subclass but got {type_q}")

    def decorator(fun):
        _KL_REGISTRY[type_p, type_q] = fun
        _KL_MEMOIZE.clear()  # a new pair may be a closer match for types already seen
        return fun

    return decorator


@functools.total_ordering
class _Match:
    """A registered pair ordered lexicographically by subclass: ``a <= b`` when ``a``'s
    first type differing from ``b``'s is a subclass of it."""
    __slots__ = ["types"]

    def __init__(self, *types):
        self.types = types

    def __eq__(self, other):
        return self.types == other.types

    def __le__(self, other):
        for x, y in zip(self.types, other.types):
            if not issubclass(x, y):
                return False
            if x is not y:
                break
        return True


def _dispatch_kl(type_p, type_q):
    """The function of the most specific registered pair matching ``(type_p, type_q)``,
    NotImplemented when none does; a RuntimeWarning when ordering the matches by ``p``
    first and by ``q`` first disagree."""
    matches = [(p, q) for p, q in _KL_REGISTRY
               if issubclass(type_p, p) and issubclass(type_q, q)]
    if not matches:
        return NotImplemented
    left_p, left_q = min(_Match(*m) for m in matches).types
    right_q, right_p = min(_Match(*reversed(m)) for m in matches).types
    left, right = _KL_REGISTRY[left_p, left_q], _KL_REGISTRY[right_p, right_q]
    if left is not right:
        warnings.warn(f"Ambiguous kl_divergence({type_p.__name__}, {type_q.__name__}). "
                      f"Please register_kl({left_p.__name__}, {right_q.__name__})",
                      RuntimeWarning, stacklevel=2)
    return left


def kl_divergence(p, q):
    """``KL(p || q)``, the integral of ``p(x) log(p(x) / q(x))``, of shape
    ``batch_shape``; NotImplementedError when no function is registered for the pair of
    types (``register_kl``).

    Example
    -------
    >>> kl_divergence(Normal(0.0, 1.0), Normal(1.0, 1.0))
    tensor(0.5000)
    """
    try:
        fun = _KL_MEMOIZE[type(p), type(q)]
    except KeyError:
        fun = _KL_MEMOIZE[type(p), type(q)] = _dispatch_kl(type(p), type(q))
    if fun is NotImplemented:
        raise NotImplementedError(f"No KL(p || q) is implemented for p type "
                                  f"{p.__class__.__name__} and q type {q.__class__.__name__}")
    return fun(p, q)


def _infinite_like(tensor):
    return full_like(tensor, math.inf)


def _x_log_x(tensor):
    return special.xlogy(tensor, tensor)  # 0 at 0


def _batch_trace_XXT(bmat):
    """``trace(X X^T)`` of a batch of matrices: the sum of their squared entries."""
    m, n = bmat.shape[-2:]
    return bmat.reshape(-1, m * n).pow(2).sum(-1).reshape(bmat.shape[:-2])


def _inf_where(result, mask):
    """``result`` with ``inf`` where ``mask`` (written in place, as torch's)."""
    result[mask] = math.inf
    return result


# ----------------------------------------------------------------------------------------
# Pairs of one family
# ----------------------------------------------------------------------------------------

@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1[q.probs == 0] = math.inf
    t1[p.probs == 0] = 0
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2[q.probs == 1] = math.inf
    t2[p.probs == 1] = 0
    return t1 + t2


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    total_p = p.concentration1 + p.concentration0
    total_q = q.concentration1 + q.concentration0
    t1 = q.concentration1.lgamma() + q.concentration0.lgamma() + total_p.lgamma()
    t2 = p.concentration1.lgamma() + p.concentration0.lgamma() + total_q.lgamma()
    t3 = (p.concentration1 - q.concentration1) * digamma(p.concentration1)
    t4 = (p.concentration0 - q.concentration0) * digamma(p.concentration0)
    t5 = (total_q - total_p) * digamma(total_p)
    return t1 - t2 + t3 + t4 + t5


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    if (p.total_count < q.total_count).any():
        raise NotImplementedError("KL between Binomials where q.total_count > "
                                  "p.total_count is not implemented")
    kl = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                          - (-q.probs).log1p())
    more = p.total_count > q.total_count
    kl[more] = _infinite_like(kl[more])
    return kl


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    t[(q.probs == 0).expand_as(t)] = math.inf
    t[(p.probs == 0).expand_as(t)] = 0
    return t.sum(-1)


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_continuous_bernoulli_continuous_bernoulli(p, q):
    t1 = p.mean * (p.logits - q.logits)
    t2 = p._cont_bern_log_norm() + log1p(-p.probs)
    t3 = -q._cont_bern_log_norm() - log1p(-q.probs)
    return t1 + t2 + t3


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    total_p = p.concentration.sum(-1)
    total_q = q.concentration.sum(-1)
    t1 = total_p.lgamma() - total_q.lgamma()
    t2 = (p.concentration.lgamma() - q.concentration.lgamma()).sum(-1)
    t3 = p.concentration - q.concentration
    t4 = p.concentration.digamma() - total_p.digamma().unsqueeze(-1)
    return t1 - t2 + (t3 * t4).sum(-1)


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return -ratio.log() + ratio - 1


@register_kl(ExponentialFamily, ExponentialFamily)
def _kl_expfamily_expfamily(p, q):
    """The Bregman divergence of the log normalizer between the natural parameters, by
    autograd (gradients reach ``q``'s parameters only, as in torch)."""
    if type(p) is not type(q):
        raise NotImplementedError("The cross KL-divergence between different exponential "
                                  "families cannot" + " " * 29 + "be computed using Bregman "
                                  "divergences")
    p_params = [t.detach().requires_grad_() for t in p._natural_params]
    q_params = q._natural_params
    p_norm = p._log_normalizer(*p_params)
    grads = _grad(p_norm.sum(), p_params)
    result = q._log_normalizer(*q_params) - p_norm
    for pp, qp, g in zip(p_params, q_params, grads):
        result = result - _sum_rightmost((qp - pp) * g, len(q.event_shape))
    return result


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    t1 = q.concentration * (p.rate / q.rate).log()
    t2 = lgamma(q.concentration) - lgamma(p.concentration)
    t3 = (p.concentration - q.concentration) * digamma(p.concentration)
    t4 = (q.rate - p.rate) * (p.concentration / p.rate)
    return t1 + t2 + t3 + t4


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ct1 = p.scale / q.scale
    ct2 = q.loc / q.scale
    ct3 = p.loc / q.scale
    t1 = -ct1.log() - ct2 + ct3
    t2 = ct1 * _EULER
    t3 = exp(ct2 + (1 + ct1).lgamma() - ct3)
    return t1 + t2 + t3 - (1 + _EULER)


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    return -p.entropy() - log1p(-q.probs) / p.probs - q.logits


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return _kl_normal_normal(p.base_dist, q.base_dist)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    scale_ratio = p.scale / q.scale
    loc_abs_diff = (p.loc - q.loc).abs()
    t1 = -scale_ratio.log()
    t2 = loc_abs_diff / q.scale
    t3 = scale_ratio * exp(-loc_abs_diff / p.scale)
    return t1 + t2 + t3 - 1


def _check_event_shapes(p, q, what):
    if p.event_shape != q.event_shape:
        raise ValueError(f"KL-divergence between two {what} with" + " " * 26
                         + "different event shapes cannot be computed")


def _lowrank_woodbury_factor(q):
    """``A`` with ``q``'s precision ``D^-1 - A^T A`` (Woodbury)."""
    wt_dinv = q._unbroadcasted_cov_factor.mT / q._unbroadcasted_cov_diag.unsqueeze(-2)
    return linalg.solve_triangular(q._capacitance_tril, wt_dinv, upper=False)


def _lowrank_logdet(d):
    return _batch_lowrank_logdet(d._unbroadcasted_cov_factor, d._unbroadcasted_cov_diag,
                                 d._capacitance_tril)


def _lowrank_mahalanobis_between(p, q):
    return _batch_lowrank_mahalanobis(q._unbroadcasted_cov_factor, q._unbroadcasted_cov_diag,
                                      q.loc - p.loc, q._capacitance_tril)


def _half_tril_logdet(d):
    return d._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


@register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)
def _kl_lowrankmultivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "Low Rank Multivariate Normals")
    term1 = _lowrank_logdet(q) - _lowrank_logdet(p)
    term3 = _lowrank_mahalanobis_between(p, q)
    # trace(q_cov^-1 p_cov) = trace((qD^-1 - A^T A)(pD + pW pW^T)), term by term
    a = _lowrank_woodbury_factor(q)
    p_w, p_d = p._unbroadcasted_cov_factor, p._unbroadcasted_cov_diag
    term21 = (p_d / q._unbroadcasted_cov_diag).sum(-1)
    term22 = _batch_trace_XXT(p_w * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term23 = _batch_trace_XXT(a * p_d.sqrt().unsqueeze(-2))
    term24 = _batch_trace_XXT(a.matmul(p_w))
    term2 = term21 + term22 - term23 - term24
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, LowRankMultivariateNormal)
def _kl_multivariatenormal_lowrankmultivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    term1 = _lowrank_logdet(q) - 2 * _half_tril_logdet(p)
    term3 = _lowrank_mahalanobis_between(p, q)
    # trace(q_cov^-1 p_cov) = trace((qD^-1 - A^T A) pL pL^T)
    a = _lowrank_woodbury_factor(q)
    p_l = p._unbroadcasted_scale_tril
    term21 = _batch_trace_XXT(p_l * q._unbroadcasted_cov_diag.rsqrt().unsqueeze(-1))
    term22 = _batch_trace_XXT(a.matmul(p_l))
    term2 = term21 - term22
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(LowRankMultivariateNormal, MultivariateNormal)
def _kl_lowrankmultivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "(Low Rank) Multivariate Normals")
    term1 = 2 * _half_tril_logdet(q) - _lowrank_logdet(p)
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    # trace(q_cov^-1 p_cov) = |qL^-1 pW|^2 + |qL^-1 pD^1/2|^2
    batch = tuple(broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                   p._unbroadcasted_cov_factor.shape[:-2]))
    n = p.event_shape[0]
    q_l = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_w = p._unbroadcasted_cov_factor.expand(batch + (n, p.cov_factor.size(-1)))
    p_d = diag_embed(p._unbroadcasted_cov_diag.sqrt()).expand(batch + (n, n))
    term21 = _batch_trace_XXT(linalg.solve_triangular(q_l, p_w, upper=False))
    term22 = _batch_trace_XXT(linalg.solve_triangular(q_l, p_d, upper=False))
    term2 = term21 + term22
    return 0.5 * (term1 + term2 + term3 - p.event_shape[0])


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_multivariatenormal_multivariatenormal(p, q):
    _check_event_shapes(p, q, "Multivariate Normals")
    half_term1 = _half_tril_logdet(q) - _half_tril_logdet(p)
    batch = tuple(broadcast_shapes(q._unbroadcasted_scale_tril.shape[:-2],
                                   p._unbroadcasted_scale_tril.shape[:-2]))
    n = p.event_shape[0]
    q_l = q._unbroadcasted_scale_tril.expand(batch + (n, n))
    p_l = p._unbroadcasted_scale_tril.expand(batch + (n, n))
    term2 = _batch_trace_XXT(linalg.solve_triangular(q_l, p_l, upper=False))
    term3 = _batch_mahalanobis(q._unbroadcasted_scale_tril, q.loc - p.loc)
    return half_term1 + 0.5 * (term2 + term3 - n)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale).pow(2)
    t1 = ((p.loc - q.loc) / q.scale).pow(2)
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehotcategorical_onehotcategorical(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    scale_ratio = p.scale / q.scale
    alpha_ratio = q.alpha / p.alpha
    result = q.alpha * scale_ratio.log() - alpha_ratio.log() + alpha_ratio - 1
    return _inf_where(result, p.support.lower_bound < q.support.lower_bound)


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    if p.transforms != q.transforms:
        raise NotImplementedError
    if p.event_shape != q.event_shape:
        raise NotImplementedError
    return kl_divergence(p.base_dist, q.base_dist)


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where(result, (q.low > p.low) | (q.high < p.high))


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError
    return _sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                          p.reinterpreted_batch_ndims)


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    # Chyzak and Nielsen (2019), arXiv:1905.10965
    t1 = ((p.scale + q.scale).pow(2) + (p.loc - q.loc).pow(2)).log()
    t2 = (4 * p.scale * q.scale).log()
    return t1 - t2


# ----------------------------------------------------------------------------------------
# Pairs of two families (infinite where p's support is not inside q's)
# ----------------------------------------------------------------------------------------

@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    return -p.entropy() - (p.probs * q.rate.log() - q.rate)


@register_kl(Beta, ContinuousBernoulli)
def _kl_beta_continuous_bernoulli(p, q):
    return -p.entropy() - p.mean * q.logits - log1p(-q.probs) - q._cont_bern_log_norm()


@register_kl(Beta, Pareto)
def _kl_beta_infinity(p, q):
    return _infinite_like(p.concentration1)


@register_kl(Beta, Exponential)
def _kl_beta_exponential(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    return -p.entropy() - q.rate.log() + q.rate * mean


@register_kl(Beta, Gamma)
def _kl_beta_gamma(p, q):
    t1 = -p.entropy()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (q.concentration - 1) * (p.concentration1.digamma()
                                  - (p.concentration1 + p.concentration0).digamma())
    t4 = q.rate * p.concentration1 / (p.concentration1 + p.concentration0)
    return t1 + t2 - t3 + t4


@register_kl(Beta, Normal)
def _kl_beta_normal(p, q):
    mean = p.concentration1 / (p.concentration1 + p.concentration0)
    var_normal = q.scale.pow(2)
    t1 = -p.entropy()
    t2 = 0.5 * (var_normal * 2 * math.pi).log()
    t3 = (mean * (1 - mean) / (p.concentration1 + p.concentration0 + 1) + mean.pow(2)) * 0.5
    t4 = q.loc * mean
    t5 = q.loc.pow(2) * 0.5
    return t1 + t2 + (t3 - t4 + t5) / var_normal


@register_kl(Beta, Uniform)
def _kl_beta_uniform(p, q):
    result = -p.entropy() + (q.high - q.low).log()
    return _inf_where(result, (q.low > p.support.lower_bound)
                      | (q.high < p.support.upper_bound))


@register_kl(ContinuousBernoulli, Pareto)
def _kl_continuous_bernoulli_infinity(p, q):
    return _infinite_like(p.probs)


@register_kl(ContinuousBernoulli, Exponential)
def _kl_continuous_bernoulli_exponential(p, q):
    return -p.entropy() - log(q.rate) + q.rate * p.mean


@register_kl(ContinuousBernoulli, Normal)
def _kl_continuous_bernoulli_normal(p, q):
    t1 = -p.entropy()
    t2 = 0.5 * (math.log(2.0 * math.pi) + square(q.loc / q.scale)) + log(q.scale)
    t3 = (p.variance + square(p.mean) - 2.0 * q.loc * p.mean) / (2.0 * square(q.scale))
    return t1 + t2 + t3


@register_kl(ContinuousBernoulli, Uniform)
def _kl_continuous_bernoulli_uniform(p, q):
    # torch's condition as it is: infinite unless q.low < 0 and q.high > 1
    result = -p.entropy() + (q.high - q.low).log()
    outside = maximum(ge(q.low, p.support.lower_bound), le(q.high, p.support.upper_bound))
    return where(outside, ones_like(result) * math.inf, result)


@register_kl(Exponential, Beta)
@register_kl(Exponential, ContinuousBernoulli)
@register_kl(Exponential, Pareto)
@register_kl(Exponential, Uniform)
def _kl_exponential_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    ratio = q.rate / p.rate
    t1 = -q.concentration * log(ratio)
    return (t1 + ratio + q.concentration.lgamma() + q.concentration * _EULER
            - (1 + _EULER))


@register_kl(Exponential, Gumbel)
def _kl_exponential_gumbel(p, q):
    scale_rate = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = scale_rate.log() - 1
    t2 = exp(loc_scale) * scale_rate / (scale_rate + 1)
    t3 = scale_rate.reciprocal()
    return t1 - loc_scale + t2 + t3


@register_kl(Exponential, Normal)
def _kl_exponential_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = 0.5 * log(rate_sqr * var_normal * 2 * math.pi)
    t2 = rate_sqr.reciprocal()
    t3 = q.loc / p.rate
    t4 = q.loc.pow(2) * 0.5
    return t1 - 1 + (t2 - t3 + t4) / var_normal


@register_kl(Gamma, Beta)
@register_kl(Gamma, ContinuousBernoulli)
@register_kl(Gamma, Pareto)
@register_kl(Gamma, Uniform)
def _kl_gamma_infinity(p, q):
    return _infinite_like(p.concentration)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.concentration / p.rate


@register_kl(Gamma, Gumbel)
def _kl_gamma_gumbel(p, q):
    rate_scale = p.rate * q.scale
    loc_scale = q.loc / q.scale
    t1 = ((p.concentration - 1) * p.concentration.digamma() - p.concentration.lgamma()
          - p.concentration)
    t2 = rate_scale.log() + p.concentration / rate_scale
    t3 = (exp(loc_scale) * (1 + rate_scale.reciprocal()).pow(-p.concentration)
          - loc_scale)
    return t1 + t2 + t3


@register_kl(Gamma, Normal)
def _kl_gamma_normal(p, q):
    var_normal = q.scale.pow(2)
    rate_sqr = p.rate.pow(2)
    t1 = (0.5 * log(rate_sqr * var_normal * 2 * math.pi) - p.concentration
          - p.concentration.lgamma())
    t2 = 0.5 * (p.concentration.pow(2) + p.concentration) / rate_sqr
    t3 = q.loc * p.concentration / p.rate
    t4 = 0.5 * q.loc.pow(2)
    return t1 + (p.concentration - 1) * p.concentration.digamma() + (t2 - t3 + t4) / var_normal


@register_kl(Gumbel, Beta)
@register_kl(Gumbel, ContinuousBernoulli)
@register_kl(Gumbel, Exponential)
@register_kl(Gumbel, Gamma)
@register_kl(Gumbel, Pareto)
@register_kl(Gumbel, Uniform)
def _kl_gumbel_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Gumbel, Normal)
def _kl_gumbel_normal(p, q):
    ratio = p.scale / q.scale
    t1 = (ratio / math.sqrt(2 * math.pi)).log()
    t2 = (math.pi * ratio * 0.5).pow(2) / 3
    t3 = ((p.loc + p.scale * _EULER - q.loc) / q.scale).pow(2) * 0.5
    return -t1 + t2 + t3 - (_EULER + 1)


@register_kl(Laplace, Beta)
@register_kl(Laplace, ContinuousBernoulli)
@register_kl(Laplace, Exponential)
@register_kl(Laplace, Gamma)
@register_kl(Laplace, Pareto)
@register_kl(Laplace, Uniform)
def _kl_laplace_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    var_normal = q.scale.pow(2)
    ratio = p.scale.pow(2) / var_normal
    t1 = 0.5 * log(2 * ratio / math.pi)
    t2 = 0.5 * p.loc.pow(2)
    t3 = p.loc * q.loc
    t4 = 0.5 * q.loc.pow(2)
    return -t1 + ratio + (t2 - t3 + t4) / var_normal - 1


@register_kl(Normal, Beta)
@register_kl(Normal, ContinuousBernoulli)
@register_kl(Normal, Exponential)
@register_kl(Normal, Gamma)
@register_kl(Normal, Pareto)
@register_kl(Normal, Uniform)
def _kl_normal_infinity(p, q):
    return _infinite_like(p.loc)


@register_kl(Normal, Gumbel)
def _kl_normal_gumbel(p, q):
    mean_scale = p.loc / q.scale
    var_scale_sqr = (p.scale / q.scale).pow(2)
    loc_scale = q.loc / q.scale
    t1 = var_scale_sqr.log() * 0.5
    t2 = mean_scale - loc_scale
    t3 = exp(-mean_scale + 0.5 * var_scale_sqr + loc_scale)
    return -t1 + t2 + t3 - (0.5 * (1 + math.log(2 * math.pi)))


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    loc_diff = p.loc - q.loc
    scale_ratio = p.scale / q.scale
    loc_diff_scale = loc_diff / p.scale
    t1 = log(scale_ratio)
    t2 = math.sqrt(2 / math.pi) * p.scale * exp(-0.5 * loc_diff_scale.pow(2))
    t3 = loc_diff * erf(math.sqrt(0.5) * loc_diff_scale)
    return -t1 + (t2 + t3) / q.scale - (0.5 * (1 + math.log(0.5 * math.pi)))


@register_kl(Pareto, Beta)
@register_kl(Pareto, ContinuousBernoulli)
@register_kl(Pareto, Uniform)
def _kl_pareto_infinity(p, q):
    return _infinite_like(p.scale)


@register_kl(Pareto, Exponential)
def _kl_pareto_exponential(p, q):
    scale_rate = p.scale * q.rate
    t1 = (p.alpha / scale_rate).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * scale_rate / (p.alpha - 1)
    return _inf_where(t1 - t2 + t3 - 1, p.alpha <= 1)


@register_kl(Pareto, Gamma)
def _kl_pareto_gamma(p, q):
    common = p.scale.log() + p.alpha.reciprocal()
    t1 = p.alpha.log() - common
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * common
    t4 = q.rate * p.alpha * p.scale / (p.alpha - 1)
    return _inf_where(t1 + t2 + t3 + t4 - 1, p.alpha <= 1)


@register_kl(Pareto, Normal)
def _kl_pareto_normal(p, q):
    var_normal = 2 * q.scale.pow(2)
    common = p.scale / (p.alpha - 1)
    t1 = (math.sqrt(2 * math.pi) * q.scale * p.alpha / p.scale).log()
    t2 = p.alpha.reciprocal()
    t3 = p.alpha * common.pow(2) / (p.alpha - 2)
    t4 = (p.alpha * common - q.loc).pow(2)
    return _inf_where(t1 - t2 + (t3 + t4) / var_normal - 1, p.alpha <= 2)


@register_kl(Poisson, Bernoulli)
@register_kl(Poisson, Binomial)
def _kl_poisson_infinity(p, q):
    return _infinite_like(p.rate)


@register_kl(Uniform, Beta)
def _kl_uniform_beta(p, q):
    width = p.high - p.low
    t1 = log(width)
    t2 = (q.concentration1 - 1) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t3 = ((q.concentration0 - 1) * (_x_log_x(1 - p.high) - _x_log_x(1 - p.low) + width)
          / width)
    t4 = (q.concentration1.lgamma() + q.concentration0.lgamma()
          - (q.concentration1 + q.concentration0).lgamma())
    return _inf_where(t3 + t4 - t1 - t2, (p.high > q.support.upper_bound)
                      | (p.low < q.support.lower_bound))


@register_kl(Uniform, ContinuousBernoulli)
def _kl_uniform_continuous_bernoulli(p, q):
    # torch's condition as it is: infinite unless 0 < p.low and p.high < 1
    result = -p.entropy() - p.mean * q.logits - log1p(-q.probs) - q._cont_bern_log_norm()
    outside = maximum(ge(p.high, q.support.upper_bound), le(p.low, q.support.lower_bound))
    return where(outside, ones_like(result) * math.inf, result)


@register_kl(Uniform, Exponential)
def _kl_uniform_exponetial(p, q):
    result = q.rate * (p.high + p.low) / 2 - ((p.high - p.low) * q.rate).log()
    return _inf_where(result, p.low < q.support.lower_bound)


@register_kl(Uniform, Gamma)
def _kl_uniform_gamma(p, q):
    width = p.high - p.low
    t1 = width.log()
    t2 = q.concentration.lgamma() - q.concentration * q.rate.log()
    t3 = (1 - q.concentration) * (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    t4 = q.rate * (p.high + p.low) / 2
    return _inf_where(-t1 + t2 + t3 + t4, p.low < q.support.lower_bound)


@register_kl(Uniform, Gumbel)
def _kl_uniform_gumbel(p, q):
    common = q.scale / (p.high - p.low)
    high_loc = (p.high - q.loc) / q.scale
    low_loc = (p.low - q.loc) / q.scale
    t1 = common.log() + 0.5 * (high_loc + low_loc)
    t2 = common * (exp(-high_loc) - exp(-low_loc))
    return t1 - t2


@register_kl(Uniform, Normal)
def _kl_uniform_normal(p, q):
    width = p.high - p.low
    t1 = (math.sqrt(math.pi * 2) * q.scale / width).log()
    t2 = width.pow(2) / 12
    t3 = ((p.high + p.low - 2 * q.loc) / 2).pow(2)
    return t1 + 0.5 * (t2 + t3) / q.scale.pow(2)


@register_kl(Uniform, Pareto)
def _kl_uniform_pareto(p, q):
    width = p.high - p.low
    t1 = (q.alpha * q.scale.pow(q.alpha) * width).log()
    t2 = (_x_log_x(p.high) - _x_log_x(p.low) - width) / width
    return _inf_where(t2 * (q.alpha + 1) - t1, p.low < q.support.lower_bound)


def _add_kl_info():
    """``kl_divergence``'s docstring, completed with the registered pairs."""
    rows = ["\n\n    KL divergence is implemented for these pairs of distributions:"]
    for p, q in sorted(_KL_REGISTRY, key=lambda pq: (pq[0].__name__, pq[1].__name__)):
        rows.append(f"* :class:`~wgrad.distributions.{p.__name__}` and "
                    f":class:`~wgrad.distributions.{q.__name__}`")
    kl_divergence.__doc__ += "\n    ".join(rows)
