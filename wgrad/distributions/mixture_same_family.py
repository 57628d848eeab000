"""Mixtures of one family of distributions (torch.distributions.MixtureSameFamily)."""
from .._autograd.grad_mode import no_grad
from .._tensor import Size
from ..ops import gather, log_softmax, logsumexp
from . import constraints
from .categorical import Categorical
from .constraints import MixtureSameFamilyConstraint
from .distribution import Distribution

__all__ = ["MixtureSameFamily"]


class MixtureSameFamily(Distribution):
    """A batch of mixtures: ``mixture_distribution`` (a :class:`Categorical` over ``k``
    components) picks one of the ``k`` distributions along the rightmost batch dim of
    ``component_distribution``.

    Example
    -------
    >>> from wgrad.distributions import Normal
    >>> mix = Categorical(wgrad.tensor([0.5, 0.5]))
    >>> gmm = MixtureSameFamily(mix, Normal(wgrad.tensor([-1.0, 1.0]), wgrad.ones(2)))
    >>> gmm.mean, gmm.variance
    (tensor(0.), tensor(2.))
    """
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        self._mixture_distribution = mixture_distribution
        self._component_distribution = component_distribution
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError(" The Mixture distribution needs to be an  instance of "
                             "wgrad.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution needs to be an instance of "
                             "wgrad.distributions.Distribution")
        mdbs = mixture_distribution.batch_shape
        cdbs = component_distribution.batch_shape[:-1]
        for m, c in zip(reversed(mdbs), reversed(cdbs)):
            if m != 1 and c != 1 and m != c:
                raise ValueError(f"`mixture_distribution.batch_shape` ({mdbs}) is not "
                                 f"compatible with `component_distribution.batch_shape`"
                                 f"({cdbs})")
        km = mixture_distribution.logits.shape[-1]
        kc = component_distribution.batch_shape[-1]
        if km is not None and kc is not None and km != kc:
            raise ValueError(f"`mixture_distribution component` ({km}) does not equal "
                             f"`component_distribution.batch_shape[-1]` ({kc})")
        self._num_component = km
        event_shape = component_distribution.event_shape
        self._event_ndims = len(event_shape)
        super().__init__(batch_shape=cdbs, event_shape=event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        components = self._component_distribution.expand(
            batch_shape + (self._num_component,))
        return self._expanded(
            MixtureSameFamily, batch_shape, _instance, _component_distribution=components,
            _mixture_distribution=self._mixture_distribution.expand(batch_shape),
            _num_component=self._num_component, _event_ndims=self._event_ndims)

    @constraints.dependent_property
    def support(self):
        return MixtureSameFamilyConstraint(self._component_distribution.support)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def mean(self):
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        return (probs * self.component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # the law of total variance: E[Var(Y | X)] + Var(E[Y | X])
        probs = self._pad_mixture_dimensions(self.mixture_distribution.probs)
        dim = -1 - self._event_ndims
        components = self.component_distribution
        mean_of_variances = (probs * components.variance).sum(dim)
        variance_of_means = (probs * (components.mean - self._pad(self.mean)).pow(2.0)).sum(dim)
        return mean_of_variances + variance_of_means

    def cdf(self, x):
        cdf_x = self.component_distribution.cdf(self._pad(x))
        return (cdf_x * self.mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self.component_distribution.log_prob(self._pad(x))  # [S, B, k]
        log_mix_prob = log_softmax(self.mixture_distribution.logits, dim=-1)  # [B, k]
        return logsumexp(log_prob_x + log_mix_prob, dim=-1)

    def sample(self, sample_shape=Size()):
        with no_grad():
            gather_dim = len(sample_shape) + len(self._batch_shape)
            event_shape = self._event_shape
            picks = self.mixture_distribution.sample(sample_shape)  # [n, B]
            draws = self.component_distribution.sample(sample_shape)  # [n, B, k, E]
            n_pick = len(picks.shape)
            index = picks.reshape(picks.shape + Size((1,) * (len(event_shape) + 1)))
            index = index.repeat(Size((1,) * n_pick + (1,)) + event_shape)
            return gather(draws, gather_dim, index).squeeze(gather_dim)

    def _pad(self, x):
        return x.unsqueeze(-1 - self._event_ndims)

    def _pad_mixture_dimensions(self, x):
        n_batch = len(self._batch_shape)
        n_mix_batch = len(self.mixture_distribution.batch_shape)
        pad = 0 if n_mix_batch == 1 else n_batch - n_mix_batch
        shape = x.shape
        return x.reshape(shape[:-1] + Size(pad * [1]) + shape[-1:]
                         + Size(self._event_ndims * [1]))

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self.mixture_distribution},"
                f"\n  {self.component_distribution})")
