"""The LKJ distribution of Cholesky factors of correlation matrices
(torch.distributions.LKJCholesky)."""
import math

from .._creation import arange, randn
from .._dtype import finfo
from .._tensor import Size
from ..ops import cat, clamp, diag_embed, lgamma, mvlgamma, sqrt
from . import constraints
from .beta import Beta
from .distribution import Distribution
from .utils import broadcast_all

__all__ = ["LKJCholesky"]


class LKJCholesky(Distribution):
    """The LKJ distribution over lower Cholesky factors ``L`` of ``dim x dim`` correlation
    matrices, of density proportional to ``det(L L^T) ** (concentration - 1)`` (uniform
    over correlation matrices when ``concentration`` is 1). Samples come from the onion
    method (Lewandowski, Kurowicka and Joe, 2009, section 3.2), vectorized over rows.

    Example
    -------
    >>> m = LKJCholesky(2, wgrad.tensor(2.0))
    >>> m.log_prob(wgrad.eye(2))
    tensor(-0.2877)
    """
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if dim < 2:
            raise ValueError(f"Expected dim to be an integer greater than or equal to 2. "
                             f"Found dim={dim}.")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        # the onion method's Beta draws of each row's squared norm below the diagonal, all
        # rows at once (row 0's draw is unused: that row has nothing below the diagonal)
        marginal = self.concentration + 0.5 * (dim - 2)
        offset = arange(dim - 1, dtype=self.concentration.dtype,
                        device=self.concentration.device)
        offset = cat([offset.new_zeros((1,)), offset])
        self._beta = Beta(offset + 0.5, marginal.unsqueeze(-1) - 0.5 * offset)
        super().__init__(self.concentration.size(), Size((dim, dim)), validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = Size(batch_shape)
        return self._expanded(LKJCholesky, batch_shape, _instance, "concentration",
                              dim=self.dim, _beta=self._beta.expand(batch_shape + (self.dim,)))

    def sample(self, sample_shape=Size()):
        y = self._beta.sample(sample_shape).unsqueeze(-1)
        u = randn(self._extended_shape(sample_shape), dtype=y.dtype, device=y.device).tril(-1)
        u_sphere = u / u.norm(dim=-1, keepdim=True)
        u_sphere[..., 0, :].fill_(0.0)  # row 0 is all zeros below the diagonal: 0 / 0
        w = sqrt(y) * u_sphere
        diag = clamp(1 - (w ** 2).sum(dim=-1), min=finfo(w.dtype).tiny).sqrt()
        return w + diag_embed(diag)

    def log_prob(self, value):
        # det(L L^T) ** (eta - 1) times the Jacobian of L -> L L^T, prod_i L_ii ** (D - i):
        # the density is prod_i L_ii ** (2 (eta - 1) + D - i) over the normalizer of [1]
        if self._validate_args:
            self._validate_sample(value)
        diag = value.diagonal(dim1=-1, dim2=-2)[..., 1:]
        order = arange(2, self.dim + 1, device=self.concentration.device)
        order = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalized = (order * diag.log()).sum(dim=-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        normalizer = 0.5 * dm1 * math.log(math.pi) + mvlgamma(alpha - 0.5, dm1) - lgamma(
            alpha) * dm1
        return unnormalized - normalizer
