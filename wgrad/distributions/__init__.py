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

__all__ = ["Distribution", "ExponentialFamily", "Normal", "constraints"]

# --- group A1: transforms, constraint registry, TransformedDistribution ---
# --- end A1 ---

# --- group A2: Uniform, Exponential, Cauchy, Laplace and transformed families ---
# --- end A2 ---

# --- group B: Gamma family and other continuous distributions ---
# --- end B ---

# --- group C: discrete distributions, Independent, MixtureSameFamily ---
# --- end C ---

# --- group D: multivariate distributions ---
# --- end D ---

# --- KL divergence (after every class) ---
# --- end KL ---
