"""The multivariate normal distribution (torch.distributions.MultivariateNormal)."""
import math

from .. import linalg
from .._creation import eye
from .._tensor import Size
from ..ops import broadcast_shapes, cholesky_inverse, flip, matmul
from . import constraints
from .distribution import Distribution
from .utils import _standard_normal, lazy_property

__all__ = ["MultivariateNormal"]


def _batch_mv(bmat, bvec):
    """``bmat @ bvec`` for batches of matrices and vectors of broadcastable batch shapes."""
    return matmul(bmat, bvec.unsqueeze(-1)).squeeze(-1)


def _batch_mahalanobis(bL, bx):
    """The squared Mahalanobis distances ``x^T (L L^T)^-1 x`` of the vectors ``bx`` for the
    lower-triangular factors ``bL`` (batch shapes broadcastable), of the broadcast batch
    shape.

    The batch dims along which ``bL`` is broadcast are gathered as columns of one
    triangular solve per distinct factor, so ``bL`` is never copied across them.
    """
    n = bx.shape[-1]
    batch = tuple(broadcast_shapes(bL.shape[:-2], bx.shape[:-1]))
    bx = bx.expand(batch + (n,))
    l_batch = (1,) * (len(batch) - (bL.dim() - 2)) + tuple(bL.shape[:-2])
    rows = [i for i, s in enumerate(l_batch) if s != 1]
    cols = [i for i, s in enumerate(l_batch) if s == 1]
    row_shape = tuple(batch[i] for i in rows)
    col_shape = tuple(batch[i] for i in cols)
    x = bx.permute(rows + [len(batch)] + cols).reshape(row_shape + (n, math.prod(col_shape)))
    x = x.to(bL.dtype)  # torch's solve_triangular gives A's dtype; wgrad's wants one dtype
    solved = linalg.solve_triangular(bL.reshape(row_shape + (n, n)), x, upper=False)
    m = solved.pow(2).sum(-2).reshape(row_shape + col_shape)
    order = rows + cols
    return m.permute([order.index(i) for i in range(len(batch))])


def _precision_to_scale_tril(P):
    """The lower Cholesky factor of ``P^-1``, from the Cholesky factor of ``P`` with its
    rows and columns reversed (no inverse of ``P`` formed)."""
    flipped = linalg.cholesky(flip(P, (-2, -1)))
    l_inv = flip(flipped, (-2, -1)).transpose(-2, -1)
    identity = eye(P.shape[-1], dtype=P.dtype, device=P.device)
    return linalg.solve_triangular(l_inv, identity, upper=False)


class MultivariateNormal(Distribution):
    """The multivariate normal distribution of mean ``loc`` and covariance given by exactly
    one of ``covariance_matrix``, ``precision_matrix`` (positive definite) or
    ``scale_tril`` (lower-triangular with a positive diagonal, ``L L^T`` the covariance).

    Every computation uses the Cholesky factor; the other two matrices are made on first
    read.

    Example
    -------
    >>> m = MultivariateNormal(wgrad.zeros(2), covariance_matrix=wgrad.eye(2))
    >>> m.log_prob(wgrad.tensor([0.0, 1.0]))
    tensor(-2.3379)
    """
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        if loc.dim() < 1:
            raise ValueError("loc must be at least one-dimensional.")
        given = [(name, m) for name, m in (("scale_tril", scale_tril),
                                           ("covariance_matrix", covariance_matrix),
                                           ("precision_matrix", precision_matrix))
                 if m is not None]
        if len(given) != 1:
            raise ValueError("Exactly one of covariance_matrix or precision_matrix or "
                             "scale_tril may be specified.")
        (name, matrix), = given
        if matrix.dim() < 2:
            label = "scale_tril matrix" if name == "scale_tril" else name
            raise ValueError(f"{label} must be at least two-dimensional, with optional "
                             f"leading batch dimensions")
        batch_shape = broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        setattr(self, name, matrix.expand(tuple(batch_shape) + (-1, -1)))
        self.loc = loc.expand(tuple(batch_shape) + (-1,))
        super().__init__(batch_shape, self.loc.shape[-1:], validate_args=validate_args)
        if name == "scale_tril":
            self._unbroadcasted_scale_tril = matrix
        elif name == "covariance_matrix":
            self._unbroadcasted_scale_tril = linalg.cholesky(matrix)
        else:
            self._unbroadcasted_scale_tril = _precision_to_scale_tril(matrix)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(MultivariateNormal, _instance)
        batch_shape = Size(batch_shape)
        matrix_shape = batch_shape + self._event_shape + self._event_shape
        new.loc = self.loc.expand(batch_shape + self._event_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in ("covariance_matrix", "scale_tril", "precision_matrix"):
            if name in self.__dict__:
                setattr(new, name, self.__dict__[name].expand(matrix_shape))
        Distribution.__init__(new, batch_shape, self._event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _matrix_shape(self):
        return self._batch_shape + self._event_shape + self._event_shape

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self._matrix_shape())

    @lazy_property
    def covariance_matrix(self):
        tril = self._unbroadcasted_scale_tril
        return matmul(tril, tril.mT).expand(self._matrix_shape())

    @lazy_property
    def precision_matrix(self):
        return cholesky_inverse(self._unbroadcasted_scale_tril).expand(self._matrix_shape())

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril.pow(2).sum(-1)
                .expand(self._batch_shape + self._event_shape))

    def rsample(self, sample_shape=Size()):
        shape = self._extended_shape(sample_shape)
        eps = _standard_normal(shape, dtype=self.loc.dtype, device=self.loc.device)
        return self.loc + _batch_mv(self._unbroadcasted_scale_tril, eps)

    def _half_log_det(self):
        return self._unbroadcasted_scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        m = _batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return (-0.5 * (self._event_shape[0] * math.log(2 * math.pi) + m)
                - self._half_log_det())

    def entropy(self):
        h = 0.5 * self._event_shape[0] * (1.0 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self._batch_shape) if len(self._batch_shape) else h
