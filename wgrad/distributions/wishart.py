"""The Wishart distribution (torch.distributions.Wishart)."""
import math
import numbers
import warnings

from .. import linalg
from .._creation import arange, eye, randn, tensor, tril_indices
from .._dtype import finfo
from .._tensor import Size
from ..ops import broadcast_shapes, cholesky_solve, digamma, einsum, mvlgamma
from . import constraints
from .chi2 import Chi2
from .exp_family import ExponentialFamily
from .multivariate_normal import _precision_to_scale_tril
from .utils import lazy_property

__all__ = ["Wishart"]

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """The multivariate digamma function of dimension ``p``: the sum of
    ``digamma(x - i / 2)`` over ``i < p``."""
    if not x.gt((p - 1) / 2).all():
        raise AssertionError("Wrong domain for multivariate digamma function.")
    halves = arange(p, dtype=x.dtype, device=x.device).div(2)
    return digamma(x.unsqueeze(-1) - halves.expand(x.shape + (-1,))).sum(-1)


def _clamp_above_eps(x):
    return x.clamp(min=finfo(x.dtype).eps)


class Wishart(ExponentialFamily):
    """The Wishart distribution over positive definite matrices, of ``df`` degrees of
    freedom (more than the dimension minus one) and scale given by exactly one of
    ``covariance_matrix``, ``precision_matrix`` or ``scale_tril`` (its Cholesky factor).

    Samples use the Bartlett decomposition; singular draws are redrawn up to
    ``max_try_correction`` times (``rsample``), with torch's warning.

    Example
    -------
    >>> m = Wishart(wgrad.tensor(3.0), covariance_matrix=wgrad.eye(2))
    >>> m.mean
    tensor([[3., 0.],
            [0., 3.]])
    >>> m.log_prob(wgrad.eye(2))
    tensor(-3.5310)
    """
    support = constraints.positive_definite
    has_rsample = True
    _mean_carrier_measure = 0

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        given = [(name, m) for name, m in (("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix),
                                           ("scale_tril", scale_tril))
                 if m is not None]
        if len(given) != 1:
            raise AssertionError("Exactly one of covariance_matrix or precision_matrix or "
                                 "scale_tril may be specified.")
        (name, param), = given
        if param.dim() < 2:
            raise ValueError("scale_tril must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if isinstance(df, numbers.Number):
            batch_shape = Size(param.shape[:-2])
            self.df = tensor(df, dtype=param.dtype, device=param.device)
        else:
            batch_shape = broadcast_shapes(param.shape[:-2], df.shape)
            self.df = df.expand(batch_shape)
        event_shape = param.shape[-2:]
        p = event_shape[-1]
        if self.df.le(p - 1).any():
            raise ValueError(f"Value of df={df} expected to be greater than ndim - 1 = "
                             f"{p - 1}.")
        setattr(self, name, param.expand(tuple(batch_shape) + (-1, -1)))
        if self.df.lt(p).any():
            warnings.warn("Low df values detected. Singular samples are highly likely to "
                          "occur for ndim - 1 < df < ndim.", stacklevel=2)
        super().__init__(batch_shape, event_shape, validate_args=validate_args)
        self._batch_dims = [-(x + 1) for x in range(len(self._batch_shape))]
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = param
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(param)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(param)
        self._dist_chi2 = self._bartlett_chi2()

    def _bartlett_chi2(self):
        """The chi-squared distributions of the Bartlett factor's squared diagonal:
        ``df - i`` degrees of freedom on row ``i``."""
        tril = self._unbroadcasted_scale_tril
        rows = arange(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return Chi2(df=self.df.unsqueeze(-1) - rows.expand(self._batch_shape + (-1,)))

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(Wishart, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = batch_shape + self._event_shape
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril.expand(matrix_shape)
        new.df = self.df.expand(batch_shape)
        new._batch_dims = [-(x + 1) for x in range(len(batch_shape))]
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        ExponentialFamily.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._dist_chi2 = new._bartlett_chi2()
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._batch_shape + self._event_shape)

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return (tril @ tril.transpose(-2, -1)).expand(self._batch_shape + self._event_shape)

    @lazy_property
    def precision_matrix(self):
        tril = self._unbroadcasted_scale_tril
        identity = eye(self._event_shape[-1], dtype=tril.dtype, device=tril.device)
        return cholesky_solve(identity, tril).expand(self._batch_shape + self._event_shape)

    def _df_matrix(self, df):
        return df.view(self._batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df_matrix(self.df) * self.covariance_matrix

    @property
    def mode(self):
        factor = self.df - self.covariance_matrix.shape[-1] - 1
        factor[factor <= 0] = math.nan
        return self._df_matrix(factor) * self.covariance_matrix

    @property
    def variance(self):
        cov = self.covariance_matrix
        diag = cov.diagonal(dim1=-2, dim2=-1)
        return self._df_matrix(self.df) * (cov.pow(2) + einsum("...i,...j->...ij", diag, diag))

    def _bartlett_sampling(self, sample_shape=Size()):
        """``(L A)(L A)^T`` with ``A`` lower-triangular: chi variates on its diagonal,
        standard normal ones below."""
        p = self._event_shape[-1]
        noise = _clamp_above_eps(self._dist_chi2.rsample(sample_shape).sqrt()).diag_embed(
            dim1=-2, dim2=-1)
        i, j = tril_indices(p, p, offset=-1)
        noise[..., i, j] = randn(Size(sample_shape) + self._batch_shape + (p * (p - 1) // 2,),
                                 dtype=noise.dtype, device=noise.device)
        chol = self._unbroadcasted_scale_tril @ noise
        return chol @ chol.transpose(-2, -1)

    def _per_sample(self, flags):
        return flags.amax(self._batch_dims) if self._batch_shape else flags

    def rsample(self, sample_shape=Size(), max_try_correction=None):
        """Reparameterized samples by the Bartlett decomposition.

        As torch's: ``flagged`` starts as the samples that PASS the support check (torch's
        own inversion), the warning "Singular sample detected." is given when any is
        flagged, and the flagged ones are redrawn (up to ``max_try_correction`` times,
        default 10) until no redraw is singular.
        """
        if max_try_correction is None:
            max_try_correction = 10
        sample_shape = Size(sample_shape)
        sample = self._bartlett_sampling(sample_shape)
        flagged = self._per_sample(self.support.check(sample))
        if flagged.any():
            warnings.warn("Singular sample detected.", stacklevel=2)
            for _ in range(max_try_correction):
                redrawn = self._bartlett_sampling(flagged[flagged].shape)
                sample[flagged] = redrawn
                flagged[flagged.clone()] = self._per_sample(~self.support.check(redrawn))
                if not flagged.any():
                    break
        return sample

    def _log_det_scale(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        nu, p = self.df, self._event_shape[-1]
        return (-nu * (p * _LOG_2 / 2 + self._log_det_scale()) - mvlgamma(nu / 2, p=p)
                + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
                    dim1=-2, dim2=-1).sum(dim=-1) / 2)

    def entropy(self):
        nu, p = self.df, self._event_shape[-1]
        return ((p + 1) * (p * _LOG_2 / 2 + self._log_det_scale()) + mvlgamma(nu / 2, p=p)
                - (nu - p - 1) / 2 * _mvdigamma(nu / 2, p=p) + nu * p / 2)

    @property
    def _natural_params(self):
        return -self.precision_matrix / 2, (self.df - self._event_shape[-1] - 1) / 2

    def _log_normalizer(self, x, y):
        p = self._event_shape[-1]
        return ((y + (p + 1) / 2) * (-linalg.slogdet(-2 * x).logabsdet + _LOG_2 * p)
                + mvlgamma(y + (p + 1) / 2, p=p))
