"""The multivariate normal distribution of low-rank-plus-diagonal covariance
(torch.distributions.LowRankMultivariateNormal)."""
import math

from .. import linalg
from .._creation import eye
from .._tensor import Size
from ..ops import broadcast_tensors, diag_embed, matmul
from . import constraints
from .distribution import Distribution
from .multivariate_normal import _batch_mahalanobis, _batch_mv
from .utils import _standard_normal, lazy_property

__all__ = ["LowRankMultivariateNormal"]


def _plus_identity(k):
    return k + eye(k.shape[-1], dtype=k.dtype, device=k.device)


def _batch_capacitance_tril(W, D):
    """The Cholesky factor of the capacitance matrix ``I + W^T D^-1 W``."""
    wt_dinv = W.mT / D.unsqueeze(-2)
    return linalg.cholesky(_plus_identity(matmul(wt_dinv, W)))


def _batch_lowrank_logdet(W, D, capacitance_tril):
    """``log det(W W^T + D)`` by the matrix determinant lemma: the capacitance matrix's
    log-determinant plus ``D``'s."""
    return (2 * capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)
            + D.log().sum(-1))


def _batch_lowrank_mahalanobis(W, D, x, capacitance_tril):
    """``x^T (W W^T + D)^-1 x`` by the Woodbury identity (one solve with the capacitance
    matrix's Cholesky factor)."""
    wt_dinv_x = _batch_mv(W.mT / D.unsqueeze(-2), x)
    return (x.pow(2) / D).sum(-1) - _batch_mahalanobis(capacitance_tril, wt_dinv_x)


class LowRankMultivariateNormal(Distribution):
    """The multivariate normal distribution of mean ``loc`` and covariance
    ``cov_factor @ cov_factor.T + diag(cov_diag)``; log-determinants and inverses go
    through the small ``rank x rank`` capacitance matrix.

    Example
    -------
    >>> m = LowRankMultivariateNormal(wgrad.zeros(2), wgrad.tensor([[1.0], [0.0]]),
    ...                               wgrad.ones(2))
    >>> m.log_prob(wgrad.tensor([0.0, 1.0]))
    tensor(-2.6845)
    """
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        event_shape = loc.shape[-1:]
        if cov_factor.dim() < 2:
            raise ValueError("cov_factor must be at least two-dimensional, with optional "
                             "leading batch dimensions")
        if cov_factor.shape[-2:-1] != event_shape:
            raise ValueError(f"cov_factor must be a batch of matrices with shape "
                             f"{event_shape[0]} x m")
        if cov_diag.shape[-1:] != event_shape:
            raise ValueError(f"cov_diag must be a batch of vectors with shape {event_shape}")
        try:
            loc_, self.cov_factor, cov_diag_ = broadcast_tensors(
                loc.unsqueeze(-1), cov_factor, cov_diag.unsqueeze(-1))
        except RuntimeError as e:
            raise ValueError(f"Incompatible batch shapes: loc {loc.shape}, cov_factor "
                             f"{cov_factor.shape}, cov_diag {cov_diag.shape}") from e
        self.loc = loc_[..., 0]
        self.cov_diag = cov_diag_[..., 0]
        self._unbroadcasted_cov_factor = cov_factor
        self._unbroadcasted_cov_diag = cov_diag
        self._capacitance_tril = _batch_capacitance_tril(cov_factor, cov_diag)
        super().__init__(self.loc.shape[:-1], event_shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LowRankMultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        vector_shape = batch_shape + self._event_shape
        new.loc = self.loc.expand(vector_shape)
        new.cov_diag = self.cov_diag.expand(vector_shape)
        new.cov_factor = self.cov_factor.expand(vector_shape + self.cov_factor.shape[-1:])
        for name in ("_unbroadcasted_cov_factor", "_unbroadcasted_cov_diag",
                     "_capacitance_tril"):
            setattr(new, name, getattr(self, name))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        return ((self._unbroadcasted_cov_factor.pow(2).sum(-1)
                 + self._unbroadcasted_cov_diag)
                .expand(self._batch_shape + self._event_shape))

    @lazy_property
    def scale_tril(self):
        # W W^T + D = D^1/2 (I + D^-1/2 W W^T D^-1/2) D^1/2, whose middle factor has
        # eigenvalues >= 1: its Cholesky factor is well conditioned
        sqrt_d = self._unbroadcasted_cov_diag.sqrt().unsqueeze(-1)
        scaled_w = self._unbroadcasted_cov_factor / sqrt_d
        k = _plus_identity(matmul(scaled_w, scaled_w.mT))
        return (sqrt_d * linalg.cholesky(k)).expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        w = self._unbroadcasted_cov_factor
        return (matmul(w, w.mT) + diag_embed(self._unbroadcasted_cov_diag)).expand(
            self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        # Woodbury: (W W^T + D)^-1 = D^-1 - A^T A with A = C^-1/2 W^T D^-1
        wt_dinv = self._unbroadcasted_cov_factor.mT / self._unbroadcasted_cov_diag.unsqueeze(-2)
        a = linalg.solve_triangular(self._capacitance_tril, wt_dinv, upper=False)
        return (diag_embed(self._unbroadcasted_cov_diag.reciprocal()) - a.mT @ a).expand(
            self._matrix_shape())

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        options = dict(dtype=self.loc.dtype, device=self.loc.device)
        eps_w = _standard_normal(shape[:-1] + self.cov_factor.shape[-1:], **options)
        eps_d = _standard_normal(shape, **options)
        return (self.loc + _batch_mv(self._unbroadcasted_cov_factor, eps_w)
                + self._unbroadcasted_cov_diag.sqrt() * eps_d)

    def _log_det(self):
        return _batch_lowrank_logdet(self._unbroadcasted_cov_factor,
                                     self._unbroadcasted_cov_diag, self._capacitance_tril)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_lowrank_mahalanobis(self._unbroadcasted_cov_factor,
                                       self._unbroadcasted_cov_diag, value - self.loc,
                                       self._capacitance_tril)
        return -0.5 * (self._event_shape[0] * math.log(2 * math.pi) + self._log_det() + m)

    def entropy(self):
        h = 0.5 * (self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._log_det())
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
