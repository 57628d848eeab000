"""``wgrad.distributions.transforms``: invertible maps with a log-Jacobian, as
torch.distributions.transforms.

A transform ``t`` maps ``t.domain`` onto ``t.codomain``: ``t(x)`` is the forward map,
``t.inv(y)`` the inverse and ``t.log_abs_det_jacobian(x, y)`` is ``log |dy/dx|`` summed
over the ``event_dim`` rightmost dims. TransformedDistribution pushes a distribution
through a list of them; ``biject_to``/``transform_to`` (constraint_registry) find one
that reaches a given constraint.

Example
-------
>>> from wgrad.distributions.transforms import ExpTransform
>>> ExpTransform().inv(wgrad.tensor([1.0]))
tensor([0.])
"""
import functools
import math
import operator

from .. import linalg
from .._creation import eye, full_like, zeros_like
from .._dtype import finfo
from .._tensor import Size
from ..nn.functional import logsigmoid, pad, softplus
from ..ops import atanh, broadcast_shapes, cat, clamp, sigmoid, stack
from . import constraints
from .utils import (_sum_rightmost, broadcast_all, lazy_property, tril_matrix_to_vec,
                    vec_to_tril_matrix)

__all__ = ["AbsTransform", "AffineTransform", "CatTransform", "ComposeTransform",
           "CorrCholeskyTransform", "CumulativeDistributionTransform", "ExpTransform",
           "IndependentTransform", "LowerCholeskyTransform", "PositiveDefiniteTransform",
           "PowerTransform", "ReshapeTransform", "SigmoidTransform", "SoftplusTransform",
           "TanhTransform", "SoftmaxTransform", "StackTransform", "StickBreakingTransform",
           "Transform", "identity_transform"]

_Number = (int, float, bool)  # torch.types._Number: what counts as a plain number


class Transform:
    """An invertible map with a computable log-Jacobian, from ``domain`` onto
    ``codomain`` (constraints).

    Subclasses define ``_call`` and/or ``_inverse``, and ``log_abs_det_jacobian`` when
    ``bijective``. ``cache_size=1`` remembers the last ``(x, y)`` pair, so that
    ``t.inv(t(x))`` returns ``x`` itself (the same object) and skips the inverse.

    Example
    -------
    >>> t = ExpTransform(cache_size=1)
    >>> x = wgrad.tensor([0.5])
    >>> t.inv(t(x)) is x
    True
    """
    bijective = False

    def __init__(self, cache_size=0):
        self._cache_size = cache_size
        self._inv = None
        if cache_size == 1:
            self._cached_x_y = None, None
        elif cache_size != 0:
            raise ValueError("cache_size must be 0 or 1")
        super().__init__()

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_inv"] = None
        return state

    @property
    def event_dim(self):
        """How many rightmost dims make one event (when the domain's and codomain's
        agree)."""
        if self.domain.event_dim == self.codomain.event_dim:
            return self.domain.event_dim
        raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")

    @property
    def inv(self):
        """The inverse transform (``t.inv.inv is t``)."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    @property
    def sign(self):
        """The sign of the Jacobian's determinant (+1 or -1, or a tensor), for
        bijective one-dimensional transforms."""
        raise NotImplementedError

    def with_cache(self, cache_size=1):
        """This transform with a cache of ``cache_size`` (itself if it has one)."""
        if self._cache_size == cache_size:
            return self
        if type(self).__init__ is Transform.__init__:
            return type(self)(cache_size=cache_size)
        raise NotImplementedError(f"{type(self)}.with_cache is not implemented")

    def __eq__(self, other):
        return self is other

    def __ne__(self, other):
        return not self.__eq__(other)

    def __call__(self, x):
        """``y``, the image of ``x``."""
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        """``x``, the preimage of ``y``."""
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError

    def _inverse(self, y):
        raise NotImplementedError

    def log_abs_det_jacobian(self, x, y):
        """``log |dy/dx|`` at the pair ``x``, ``y = t(x)``."""
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__ + "()"

    def forward_shape(self, shape):
        """The shape of ``t(x)`` for ``x`` of ``shape``."""
        return shape

    def inverse_shape(self, shape):
        """The shape of ``t.inv(y)`` for ``y`` of ``shape``."""
        return shape


class _InverseTransform(Transform):
    """The inverse of ``transform`` (made by ``transform.inv``), sharing its cache
    setting.

    Example
    -------
    >>> ExpTransform().inv
    _InverseTransform(ExpTransform())
    """

    def __init__(self, transform):
        super().__init__(cache_size=transform._cache_size)
        self._inv = transform

    @property
    def _forward(self):
        """The transform inverted (lost when pickled, as torch's)."""
        if self._inv is None:
            raise AssertionError("_inv must not be None")
        return self._inv

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return self._forward.codomain

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return self._forward.domain

    @property
    def bijective(self):
        return self._forward.bijective

    @property
    def sign(self):
        return self._forward.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._forward.with_cache(cache_size).inv

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._forward == other._inv

    def __repr__(self):
        return f"{type(self).__name__}({self._inv!r})"

    def __call__(self, x):
        return self._forward._inv_call(x)

    def log_abs_det_jacobian(self, x, y):
        return -self._forward.log_abs_det_jacobian(y, x)

    def forward_shape(self, shape):
        return self._inv.inverse_shape(shape)

    def inverse_shape(self, shape):
        return self._inv.forward_shape(shape)


def _widened(constraint, event_dim):
    """``constraint`` with its events widened to ``event_dim`` dims."""
    if event_dim > constraint.event_dim:
        return constraints.independent(constraint, event_dim - constraint.event_dim)
    return constraint


class ComposeTransform(Transform):
    """The transforms ``parts`` applied one after the other (each caches for itself).

    Example
    -------
    >>> t = ComposeTransform([ExpTransform(), AffineTransform(1.0, 2.0)])
    >>> t(wgrad.tensor([0.0]))
    tensor([3.])
    """

    def __init__(self, parts, cache_size=0):
        if cache_size:
            parts = [part.with_cache(cache_size) for part in parts]
        super().__init__(cache_size=cache_size)
        self.parts = parts

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if not self.parts:
            return constraints.real
        domain = self.parts[0].domain
        event_dim = self.parts[-1].codomain.event_dim
        for part in reversed(self.parts):
            event_dim += part.domain.event_dim - part.codomain.event_dim
            event_dim = max(event_dim, part.domain.event_dim)
        if event_dim < domain.event_dim:
            raise AssertionError(f"event_dim {event_dim} must be >= domain.event_dim "
                                 f"{domain.event_dim}")
        return _widened(domain, event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if not self.parts:
            return constraints.real
        codomain = self.parts[-1].codomain
        event_dim = self.parts[0].domain.event_dim
        for part in self.parts:
            event_dim += part.codomain.event_dim - part.domain.event_dim
            event_dim = max(event_dim, part.codomain.event_dim)
        if event_dim < codomain.event_dim:
            raise AssertionError(f"event_dim {event_dim} must be >= codomain.event_dim "
                                 f"{codomain.event_dim}")
        return _widened(codomain, event_dim)

    @lazy_property
    def bijective(self):
        return all(p.bijective for p in self.parts)

    @lazy_property
    def sign(self):
        sign = 1
        for p in self.parts:
            sign = sign * p.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([p.inv for p in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for part in self.parts:
            x = part(x)
        return x

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return zeros_like(x)
        xs = [x]
        for part in self.parts[:-1]:
            xs.append(part(xs[-1]))
        xs.append(y)
        terms = []
        event_dim = self.domain.event_dim
        for part, a, b in zip(self.parts, xs[:-1], xs[1:]):
            terms.append(_sum_rightmost(part.log_abs_det_jacobian(a, b),
                                        event_dim - part.domain.event_dim))
            event_dim += part.codomain.event_dim - part.domain.event_dim
        return functools.reduce(operator.add, terms)

    def forward_shape(self, shape):
        for part in self.parts:
            shape = part.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for part in reversed(self.parts):
            shape = part.inverse_shape(shape)
        return shape

    def __repr__(self):
        return (type(self).__name__ + "(\n    " + ",\n    ".join(repr(p) for p in self.parts)
                + "\n)")


identity_transform = ComposeTransform([])


class IndependentTransform(Transform):
    """``base_transform`` with ``reinterpreted_batch_ndims`` more rightmost dims in each
    event: the map is the same, the log-Jacobian is summed over those dims.

    Example
    -------
    >>> t = IndependentTransform(ExpTransform(), 1)
    >>> t.log_abs_det_jacobian(wgrad.tensor([1.0, 2.0]), None)
    tensor(3.)
    """

    def __init__(self, base_transform, reinterpreted_batch_ndims, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.base_transform = base_transform.with_cache(cache_size)
        self.reinterpreted_batch_ndims = reinterpreted_batch_ndims

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return IndependentTransform(self.base_transform, self.reinterpreted_batch_ndims,
                                    cache_size=cache_size)

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        return constraints.independent(self.base_transform.domain,
                                       self.reinterpreted_batch_ndims)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        return constraints.independent(self.base_transform.codomain,
                                       self.reinterpreted_batch_ndims)

    @property
    def bijective(self):
        return self.base_transform.bijective

    @property
    def sign(self):
        return self.base_transform.sign

    def _call(self, x):
        if x.dim() < self.domain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform(x)

    def _inverse(self, y):
        if y.dim() < self.codomain.event_dim:
            raise ValueError("Too few dimensions on input")
        return self.base_transform.inv(y)

    def log_abs_det_jacobian(self, x, y):
        return _sum_rightmost(self.base_transform.log_abs_det_jacobian(x, y),
                              self.reinterpreted_batch_ndims)

    def __repr__(self):
        return (f"{type(self).__name__}({self.base_transform!r}, "
                f"{self.reinterpreted_batch_ndims})")

    def forward_shape(self, shape):
        return self.base_transform.forward_shape(shape)

    def inverse_shape(self, shape):
        return self.base_transform.inverse_shape(shape)


class ReshapeTransform(Transform):
    """Reshapes the rightmost dims from ``in_shape`` to ``out_shape`` (the same number of
    elements); its Jacobian is 1.

    Example
    -------
    >>> ReshapeTransform((2, 2), (4,))(wgrad.ones(3, 2, 2)).shape
    wgrad.Size([3, 4])
    """
    bijective = True

    def __init__(self, in_shape, out_shape, cache_size=0):
        self.in_shape = Size(in_shape)
        self.out_shape = Size(out_shape)
        if self.in_shape.numel() != self.out_shape.numel():
            raise ValueError("in_shape, out_shape have different numbers of elements")
        super().__init__(cache_size=cache_size)

    @constraints.dependent_property
    def domain(self):
        return constraints.independent(constraints.real, len(self.in_shape))

    @constraints.dependent_property
    def codomain(self):
        return constraints.independent(constraints.real, len(self.out_shape))

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return ReshapeTransform(self.in_shape, self.out_shape, cache_size=cache_size)

    def _call(self, x):
        return x.reshape(x.shape[:x.dim() - len(self.in_shape)] + self.out_shape)

    def _inverse(self, y):
        return y.reshape(y.shape[:y.dim() - len(self.out_shape)] + self.in_shape)

    def log_abs_det_jacobian(self, x, y):
        return x.new_zeros(x.shape[:x.dim() - len(self.in_shape)])

    @staticmethod
    def _reshaped(shape, old, new):
        if len(shape) < len(old):
            raise ValueError("Too few dimensions on input")
        cut = len(shape) - len(old)
        if shape[cut:] != old:
            raise ValueError(f"Shape mismatch: expected {shape[cut:]} but got {old}")
        return shape[:cut] + new

    def forward_shape(self, shape):
        return self._reshaped(shape, self.in_shape, self.out_shape)

    def inverse_shape(self, shape):
        return self._reshaped(shape, self.out_shape, self.in_shape)


class ExpTransform(Transform):
    """``y = exp(x)``.

    Example
    -------
    >>> ExpTransform()(wgrad.tensor([0.0, 1.0]))
    tensor([1.0000, 2.7183])
    """
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x


class PowerTransform(Transform):
    """``y = x ** exponent`` on the positive reals.

    Example
    -------
    >>> PowerTransform(2.0)(wgrad.tensor([3.0]))
    tensor([9.])
    """
    domain = constraints.positive
    codomain = constraints.positive
    bijective = True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size=cache_size)
        (self.exponent,) = broadcast_all(exponent)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return PowerTransform(self.exponent, cache_size=cache_size)

    @lazy_property
    def sign(self):
        return self.exponent.sign()

    def __eq__(self, other):
        if not isinstance(other, PowerTransform):
            return False
        return self.exponent.eq(other.exponent).all().item()

    def _call(self, x):
        return x.pow(self.exponent)

    def _inverse(self, y):
        return y.pow(1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))

    def inverse_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.exponent, "shape", ()))


def _clipped_sigmoid(x):
    info = finfo(x.dtype)
    return clamp(sigmoid(x), min=info.tiny, max=1.0 - info.eps)


class SigmoidTransform(Transform):
    """``y = 1 / (1 + exp(-x))``, kept inside ``[tiny, 1 - eps]``; the inverse is the
    logit.

    Example
    -------
    >>> SigmoidTransform()(wgrad.tensor([0.0]))
    tensor([0.5000])
    """
    domain = constraints.real
    codomain = constraints.unit_interval
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    def _call(self, x):
        return _clipped_sigmoid(x)

    def _inverse(self, y):
        info = finfo(y.dtype)
        y = y.clamp(min=info.tiny, max=1.0 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x) - softplus(x)


class SoftplusTransform(Transform):
    """``y = log(1 + exp(x))`` (linear for ``x > 20``).

    Example
    -------
    >>> SoftplusTransform()(wgrad.tensor([0.0]))
    tensor([0.6931])
    """
    domain = constraints.real
    codomain = constraints.positive
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    def _call(self, x):
        return softplus(x)

    def _inverse(self, y):
        return (-y).expm1().neg().log() + y

    def log_abs_det_jacobian(self, x, y):
        return -softplus(-x)


class TanhTransform(Transform):
    """``y = tanh(x)``, with the stable log-Jacobian ``2 (log 2 - x - softplus(-2x))``
    (the inverse is not clipped: use ``cache_size=1`` near +-1).

    Example
    -------
    >>> TanhTransform().log_abs_det_jacobian(wgrad.tensor([0.0]), None)
    tensor([0.])
    """
    domain = constraints.real
    codomain = constraints.interval(-1.0, 1.0)
    bijective = True
    sign = +1

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return atanh(y)

    def log_abs_det_jacobian(self, x, y):
        return 2.0 * (math.log(2.0) - x - softplus(-2.0 * x))


class AbsTransform(Transform):
    """``y = |x|`` (not bijective: the inverse returns ``y``).

    Example
    -------
    >>> AbsTransform()(wgrad.tensor([-2.0]))
    tensor([2.])
    """
    domain = constraints.real
    codomain = constraints.positive

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y


def _same(a, b):
    if isinstance(a, _Number) and isinstance(b, _Number):
        return a == b
    return (a == b).all().item()


class AffineTransform(Transform):
    """``y = loc + scale * x`` elementwise; ``event_dim`` rightmost dims make one event
    (the log-Jacobian is summed over them).

    Example
    -------
    >>> AffineTransform(1.0, 2.0).log_abs_det_jacobian(wgrad.tensor([0.0]), None)
    tensor([0.6931])
    """
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.loc = loc
        self.scale = scale
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @constraints.dependent_property(is_discrete=False)
    def domain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    @constraints.dependent_property(is_discrete=False)
    def codomain(self):
        if self.event_dim == 0:
            return constraints.real
        return constraints.independent(constraints.real, self.event_dim)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return AffineTransform(self.loc, self.scale, self.event_dim, cache_size=cache_size)

    def __eq__(self, other):
        return (isinstance(other, AffineTransform) and _same(self.loc, other.loc)
                and _same(self.scale, other.scale))

    @property
    def sign(self):
        if isinstance(self.scale, _Number):
            scale = float(self.scale)
            return 1 if scale > 0 else -1 if scale < 0 else 0
        return self.scale.sign()

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        shape = x.shape
        if isinstance(self.scale, _Number):
            result = full_like(x, math.log(abs(self.scale)))
        else:
            result = self.scale.abs().log()
        if self.event_dim:
            result = result.view(result.size()[:-self.event_dim] + (-1,)).sum(-1)
            shape = shape[:-self.event_dim]
        return result.expand(shape)

    def forward_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                getattr(self.scale, "shape", ()))

    def inverse_shape(self, shape):
        return broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                getattr(self.scale, "shape", ()))


class CorrCholeskyTransform(Transform):
    """Maps a real vector of length ``D (D - 1) / 2`` to the Cholesky factor of a
    ``D x D`` correlation matrix: each row of the lower triangle is ``tanh``-ed, then a
    signed stick-breaking gives it unit norm. The log-Jacobian is that of ``x`` and the
    flattened strict lower triangle of ``y``.

    Example
    -------
    >>> CorrCholeskyTransform()(wgrad.tensor([0.0]))
    tensor([[1., 0.],
            [0., 1.]])
    """
    domain = constraints.real_vector
    codomain = constraints.corr_cholesky
    bijective = True

    def _call(self, x):
        x = x.tanh()
        eps = finfo(x.dtype).eps
        x = x.clamp(min=-1 + eps, max=1 - eps)
        r = vec_to_tril_matrix(x, diag=-1)
        # y = sign(r) sqrt(r**2 prod_{k<j}(1 - r_k**2)) = r sqrt(prod_{k<j}(1 - r_k**2))
        z1m_cumprod_sqrt = (1 - r ** 2).sqrt().cumprod(-1)
        r = r + eye(r.shape[-1], dtype=r.dtype, device=r.device)
        return r * pad(z1m_cumprod_sqrt[..., :-1], [1, 0], value=1)

    def _inverse(self, y):
        y_cumsum = 1 - (y * y).cumsum(dim=-1)
        y_cumsum_shifted = pad(y_cumsum[..., :-1], [1, 0], value=1)
        t = (tril_matrix_to_vec(y, diag=-1)
             / tril_matrix_to_vec(y_cumsum_shifted, diag=-1).sqrt())
        return (t.log1p() - t.neg().log1p()) / 2

    def log_abs_det_jacobian(self, x, y, intermediates=None):
        # diag=-2 reads 1 - sum_{k<=j} y_k**2 for j < i - 1: the shifted cumsum, directly
        y1m_cumsum = 1 - (y * y).cumsum(dim=-1)
        stick_breaking_logdet = 0.5 * tril_matrix_to_vec(y1m_cumsum, diag=-2).log().sum(-1)
        tanh_logdet = -2 * (x + softplus(-2 * x) - math.log(2.0)).sum(dim=-1)
        return stick_breaking_logdet + tanh_logdet

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError("Too few dimensions on input")
        n = shape[-1]
        d = round((0.25 + 2 * n) ** 0.5 + 0.5)
        if d * (d - 1) // 2 != n:
            raise ValueError("Input is not a flattened lower-diagonal number")
        return shape[:-1] + (d, d)

    def inverse_shape(self, shape):
        if len(shape) < 2:
            raise ValueError("Too few dimensions on input")
        if shape[-2] != shape[-1]:
            raise ValueError("Input is not square")
        d = shape[-1]
        return shape[:-2] + (d * (d - 1) // 2,)


def _at_least_1d(shape):
    if len(shape) < 1:
        raise ValueError("Too few dimensions on input")


class SoftmaxTransform(Transform):
    """Maps reals to the simplex by ``exp`` and normalizing along the last dim (not
    bijective; the inverse is ``log``).

    Example
    -------
    >>> SoftmaxTransform()(wgrad.tensor([0.0, 0.0]))
    tensor([0.5000, 0.5000])
    """
    domain = constraints.real_vector
    codomain = constraints.simplex

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    def _call(self, x):
        probs = (x - x.max(-1, True)[0]).exp()
        return probs / probs.sum(-1, True)

    def _inverse(self, y):
        return y.log()

    def forward_shape(self, shape):
        _at_least_1d(shape)
        return shape

    def inverse_shape(self, shape):
        _at_least_1d(shape)
        return shape


class StickBreakingTransform(Transform):
    """Maps ``K - 1`` reals to the ``K``-simplex by stick breaking (iterated sigmoids, as
    in the construction of the Dirichlet); bijective.

    Example
    -------
    >>> StickBreakingTransform()(wgrad.tensor([0.0]))
    tensor([0.5000, 0.5000])
    """
    domain = constraints.real_vector
    codomain = constraints.simplex
    bijective = True

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    def _call(self, x):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        z = _clipped_sigmoid(x - offset.log())
        z_cumprod = (1 - z).cumprod(-1)
        return pad(z, [0, 1], value=1) * pad(z_cumprod, [1, 0], value=1)

    def _inverse(self, y):
        y_crop = y[..., :-1]
        offset = y.shape[-1] - y.new_ones(y_crop.shape[-1]).cumsum(-1)
        # the remaining stick can round to <= 0 when y[-1] ~ 0: keep it positive
        sf = clamp(1 - y_crop.cumsum(-1), min=finfo(y.dtype).tiny)
        return y_crop.log() - sf.log() + offset.log()

    def log_abs_det_jacobian(self, x, y):
        offset = x.shape[-1] + 1 - x.new_ones(x.shape[-1]).cumsum(-1)
        x = x - offset.log()
        # log(1 - sigmoid(x)) = -x + logsigmoid(x)
        return (-x + logsigmoid(x) + y[..., :-1].log()).sum(-1)

    def forward_shape(self, shape):
        _at_least_1d(shape)
        return shape[:-1] + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        _at_least_1d(shape)
        return shape[:-1] + (shape[-1] - 1,)


class LowerCholeskyTransform(Transform):
    """Maps square matrices to lower-triangular ones with a positive diagonal (the
    strict lower triangle kept, the diagonal exponentiated).

    Example
    -------
    >>> LowerCholeskyTransform()(wgrad.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()


class PositiveDefiniteTransform(Transform):
    """Maps square matrices to positive-definite ones, ``L L^T`` with ``L`` from
    LowerCholeskyTransform.

    Example
    -------
    >>> PositiveDefiniteTransform()(wgrad.zeros(2, 2))
    tensor([[1., 0.],
            [0., 1.]])
    """
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    def _call(self, x):
        x = LowerCholeskyTransform()(x)
        return x @ x.mT

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))


def _check_dim_length(dim, z, where, name, size, what):
    """torch's checks that ``dim`` indexes ``z`` (called ``where``) and that ``z`` (called
    ``name``) has ``size`` entries along it."""
    if not -z.dim() <= dim < z.dim():
        raise AssertionError(f"dim {dim} out of range for {where} with {z.dim()} dimensions")
    if z.size(dim) != size:
        raise AssertionError(f"{name}.size({dim}) = {z.size(dim)} must equal {what} {size}")


class CatTransform(Transform):
    """The transforms ``tseq`` applied to consecutive slices of ``lengths`` along ``dim``
    (as ``cat``).

    Example
    -------
    >>> t = CatTransform([ExpTransform(), identity_transform], dim=0, lengths=[1, 1])
    >>> t(wgrad.tensor([0.0, 5.0]))
    tensor([1., 5.])
    """

    def __init__(self, tseq, dim=0, lengths=None, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.lengths = list([1] * len(self.transforms) if lengths is None else lengths)
        if len(self.lengths) != len(self.transforms):
            raise AssertionError(f"lengths ({len(self.lengths)}) must match transforms "
                                 f"({len(self.transforms)})")
        self.dim = dim

    @lazy_property
    def event_dim(self):
        return max(t.event_dim for t in self.transforms)

    @lazy_property
    def length(self):
        return sum(self.lengths)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CatTransform(self.transforms, self.dim, self.lengths, cache_size)

    def _check(self, z, where, name):
        _check_dim_length(self.dim, z, where, name, self.length, "length")

    def _slices(self, z):
        out, start = [], 0
        for length in self.lengths:
            out.append(z.narrow(self.dim, start, length))
            start = start + length
        return out

    def _call(self, x):
        self._check(x, "tensor", "x")
        return cat([t(s) for t, s in zip(self.transforms, self._slices(x))], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "tensor", "y")
        return cat([t.inv(s) for t, s in zip(self.transforms, self._slices(y))],
                   dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        terms = []
        for t, xs, ys in zip(self.transforms, self._slices(x), self._slices(y)):
            term = t.log_abs_det_jacobian(xs, ys)
            if t.event_dim < self.event_dim:
                term = _sum_rightmost(term, self.event_dim - t.event_dim)
            terms.append(term)
        dim = self.dim - x.dim() if self.dim >= 0 else self.dim
        dim = dim + self.event_dim
        if dim < 0:
            return cat(terms, dim=dim)
        return sum(terms)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.cat([t.domain for t in self.transforms], self.dim, self.lengths)

    @constraints.dependent_property
    def codomain(self):
        return constraints.cat([t.codomain for t in self.transforms], self.dim,
                               self.lengths)


class StackTransform(Transform):
    """The transforms ``tseq`` applied to the slices of ``dim`` (as ``stack``).

    Example
    -------
    >>> t = StackTransform([ExpTransform(), identity_transform], dim=0)
    >>> t(wgrad.tensor([0.0, 5.0]))
    tensor([1., 5.])
    """

    def __init__(self, tseq, dim=0, cache_size=0):
        if not all(isinstance(t, Transform) for t in tseq):
            raise AssertionError("All elements of tseq must be Transform instances")
        if cache_size:
            tseq = [t.with_cache(cache_size) for t in tseq]
        super().__init__(cache_size=cache_size)
        self.transforms = list(tseq)
        self.dim = dim

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return StackTransform(self.transforms, self.dim, cache_size)

    def _slice(self, z):
        return [z.select(self.dim, i) for i in range(z.size(self.dim))]

    def _check(self, z, where, name):
        _check_dim_length(self.dim, z, where, name, len(self.transforms), "len(transforms)")

    def _call(self, x):
        self._check(x, "tensor", "x")
        return stack([t(s) for s, t in zip(self._slice(x), self.transforms)], dim=self.dim)

    def _inverse(self, y):
        self._check(y, "tensor", "y")
        return stack([t.inv(s) for s, t in zip(self._slice(y), self.transforms)],
                     dim=self.dim)

    def log_abs_det_jacobian(self, x, y):
        self._check(x, "x", "x")
        self._check(y, "y", "y")
        return stack([t.log_abs_det_jacobian(a, b) for a, b, t in
                      zip(self._slice(x), self._slice(y), self.transforms)], dim=self.dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.transforms)

    @constraints.dependent_property
    def domain(self):
        return constraints.stack([t.domain for t in self.transforms], self.dim)

    @constraints.dependent_property
    def codomain(self):
        return constraints.stack([t.codomain for t in self.transforms], self.dim)


class CumulativeDistributionTransform(Transform):
    """``y = distribution.cdf(x)``, from the distribution's support onto ``[0, 1]``; its
    log-Jacobian is ``distribution.log_prob(x)``.

    Example
    -------
    >>> from wgrad.distributions import Normal
    >>> CumulativeDistributionTransform(Normal(0.0, 1.0))(wgrad.tensor([0.0]))
    tensor([0.5000])
    """
    bijective = True
    codomain = constraints.unit_interval
    sign = +1

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size=cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        return CumulativeDistributionTransform(self.distribution, cache_size=cache_size)
