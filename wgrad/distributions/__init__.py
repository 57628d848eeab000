"""``wgrad.distributions``: probability distributions with torch.distributions' API.

Parameters are checked against their constraints (``validate_args``), ``log_prob``,
``cdf``, ``entropy``, ``mean``/``variance`` are differentiable, ``rsample`` gives
reparameterized samples, and ``kl_divergence`` dispatches on the pair of types. Samples
come from wgrad's generator (``wgrad.manual_seed``), so their values differ from torch's
for the same seed (docs/differences.md); their distributions and gradients do not.

Example
-------
>>> from wgrad.distributions import Normal
>>> Normal(0.0, 1.0).log_prob(wgrad.tensor(0.0))
tensor(-0.9189)
"""
from . import constraints
from .distribution import Distribution
from .exp_family import ExponentialFamily
from .normal import Normal

__all__ = ["Distribution", "ExponentialFamily", "Normal"]  # torch's: its modules are not listed

# --- group A1: transforms, constraint registry, TransformedDistribution ---
from . import constraint_registry, transforms  # noqa: E402
from .constraint_registry import biject_to, transform_to  # noqa: E402
from .transformed_distribution import TransformedDistribution  # noqa: E402
from .transforms import *  # noqa: E402,F401,F403

__all__ += ["TransformedDistribution", "biject_to", "transform_to"] + transforms.__all__
# --- end A1 ---

# --- group A2: Uniform, Exponential, Cauchy, Laplace and transformed families ---
from .cauchy import Cauchy  # noqa: E402
from .exponential import Exponential  # noqa: E402
from .gumbel import Gumbel  # noqa: E402
from .half_cauchy import HalfCauchy  # noqa: E402
from .half_normal import HalfNormal  # noqa: E402
from .inverse_gamma import InverseGamma  # noqa: E402
from .kumaraswamy import Kumaraswamy  # noqa: E402
from .laplace import Laplace  # noqa: E402
from .log_normal import LogNormal  # noqa: E402
from .logistic_normal import LogisticNormal  # noqa: E402
from .pareto import Pareto  # noqa: E402
from .relaxed_bernoulli import RelaxedBernoulli  # noqa: E402
from .relaxed_categorical import RelaxedOneHotCategorical  # noqa: E402
from .uniform import Uniform  # noqa: E402
from .weibull import Weibull  # noqa: E402

# as in torch, LogitRelaxedBernoulli and ExpRelaxedCategorical stay in their modules
__all__ += ["Cauchy", "Exponential", "Gumbel", "HalfCauchy", "HalfNormal", "InverseGamma",
            "Kumaraswamy", "Laplace", "LogNormal", "LogisticNormal", "Pareto",
            "RelaxedBernoulli", "RelaxedOneHotCategorical", "Uniform", "Weibull"]
# --- end A2 ---

# --- group B: Gamma family and other continuous distributions ---
from .beta import Beta  # noqa: E402
from .chi2 import Chi2  # noqa: E402
from .continuous_bernoulli import ContinuousBernoulli  # noqa: E402
from .dirichlet import Dirichlet  # noqa: E402
from .fishersnedecor import FisherSnedecor  # noqa: E402
from .gamma import Gamma  # noqa: E402
from .generalized_pareto import GeneralizedPareto  # noqa: E402
from .studentT import StudentT  # noqa: E402
from .von_mises import VonMises  # noqa: E402

__all__ += ["Beta", "Chi2", "ContinuousBernoulli", "Dirichlet", "FisherSnedecor", "Gamma",
            "GeneralizedPareto", "StudentT", "VonMises"]
# --- end B ---

# --- group C: discrete distributions, Independent, MixtureSameFamily ---
from .bernoulli import Bernoulli  # noqa: E402
from .binomial import Binomial  # noqa: E402
from .categorical import Categorical  # noqa: E402
from .geometric import Geometric  # noqa: E402
from .independent import Independent  # noqa: E402
from .mixture_same_family import MixtureSameFamily  # noqa: E402
from .multinomial import Multinomial  # noqa: E402
from .negative_binomial import NegativeBinomial  # noqa: E402
from .one_hot_categorical import (  # noqa: E402
    OneHotCategorical, OneHotCategoricalStraightThrough)
from .poisson import Poisson  # noqa: E402

__all__ += ["Bernoulli", "Binomial", "Categorical", "Geometric", "Independent",
            "MixtureSameFamily", "Multinomial", "NegativeBinomial", "OneHotCategorical",
            "OneHotCategoricalStraightThrough", "Poisson"]
# --- end C ---

# --- group D: multivariate distributions ---
from .lkj_cholesky import LKJCholesky
from .lowrank_multivariate_normal import LowRankMultivariateNormal
from .multivariate_normal import MultivariateNormal
from .wishart import Wishart

__all__ += ["LKJCholesky", "LowRankMultivariateNormal", "MultivariateNormal", "Wishart"]
# --- end D ---

# --- KL divergence (after every class) ---
from . import kl
from .kl import _add_kl_info, kl_divergence, register_kl

_add_kl_info()
__all__ += ["kl_divergence", "register_kl"]
# --- end KL ---
