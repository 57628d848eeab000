"""Parametrizations over ``parametrize`` (torch.nn.utils.parametrizations): ``orthogonal``,
``spectral_norm`` and ``weight_norm``.
"""
from enum import Enum, auto

from ... import _dtype as D
from ..._autograd.grad_mode import no_grad
from ..._creation import eye, randn, zeros_like
from ..._tensor import Tensor
from ...ops.layer import normalize
from ...ops.linear_algebra import (geqrf, householder_product, linalg_solve, matrix_exp, mv,
                                   vdot)
from ...ops.compare import allclose
from ...ops.shape import cat
from ..modules.conv import ConvTranspose1d, ConvTranspose2d, ConvTranspose3d
from ..modules.module import Module
from . import parametrize
from .weight_norm import _weight_norm, norm_except_dim

__all__ = ["orthogonal", "spectral_norm", "weight_norm"]


class _WeightNorm(Module):
    def __init__(self, dim=0):
        super().__init__()
        self.dim = -1 if dim is None else dim

    def forward(self, weight_g, weight_v):
        return _weight_norm(weight_v, weight_g, self.dim)

    def right_inverse(self, weight):
        return norm_except_dim(weight, 2, self.dim), weight


def weight_norm(module, name="weight", dim=0):
    """Parametrize ``module.<name>`` as magnitude (``parametrizations.<name>.original0``)
    times direction (``original1``); a state dict of the old ``weight_norm`` (``<name>_g``,
    ``<name>_v``) still loads.

    Example
    -------
    >>> import wgrad
    >>> m = wgrad.nn.utils.parametrizations.weight_norm(wgrad.nn.Linear(3, 2))
    >>> sorted(m.state_dict())
    ['bias', 'parametrizations.weight.original0', 'parametrizations.weight.original1']
    """
    parametrize.register_parametrization(module, name, _WeightNorm(dim), unsafe=True)

    def _weight_norm_compat_hook(state_dict, prefix, local_metadata, strict, missing_keys,
                                 unexpected_keys, error_msgs):
        g_key, v_key = f"{prefix}{name}_g", f"{prefix}{name}_v"
        if g_key in state_dict and v_key in state_dict:
            state_dict[f"{prefix}parametrizations.{name}.original0"] = state_dict.pop(g_key)
            state_dict[f"{prefix}parametrizations.{name}.original1"] = state_dict.pop(v_key)
    module._register_load_state_dict_pre_hook(_weight_norm_compat_hook)
    return module


def _is_orthogonal(Q):
    n, k = Q.size(-2), Q.size(-1)
    Id = eye(k, dtype=Q.dtype, device=Q.device)
    return allclose(Q.mH @ Q, Id, atol=10.0 * n * D.finfo(Q.dtype).eps)


def _make_orthogonal(A):
    """The Q factor of a tall ``A = QR`` with ``diag(R)`` real and non-negative."""
    X, tau = geqrf(A)
    Q = householder_product(X, tau)
    return Q * X.diagonal(dim1=-2, dim2=-1).sgn().unsqueeze(-2)


class _OrthMaps(Enum):
    matrix_exp = auto()
    cayley = auto()
    householder = auto()


class _Orthogonal(Module):
    """Maps a matrix (batch) to an orthogonal (unitary) one of its shape: ``exp(A)``,
    the Cayley map of ``A`` (``A`` the skew part of the lower triangle) or a product of
    Householder reflectors; ``base`` (trivialization) multiplies from the left."""

    def __init__(self, weight, orthogonal_map, *, use_trivialization=True):
        super().__init__()
        if weight.is_complex() and orthogonal_map == _OrthMaps.householder:
            raise ValueError("The householder parametrization does not support complex "
                             "tensors.")
        self.shape = weight.shape
        self.orthogonal_map = orthogonal_map
        if use_trivialization:
            self.register_buffer("base", None)

    def forward(self, X):
        n, k = X.size(-2), X.size(-1)
        transposed = n < k
        if transposed:
            X = X.mT
            n, k = k, n
        if self.orthogonal_map in (_OrthMaps.matrix_exp, _OrthMaps.cayley):
            X = X.tril()
            if n != k:  # embed the tall X in a square matrix
                X = cat([X, X.new_zeros(n, n - k).expand(*X.shape[:-2], -1, -1)], dim=-1)
            A = X - X.mH  # skew-symmetric (skew-hermitian)
            if self.orthogonal_map == _OrthMaps.matrix_exp:
                Q = matrix_exp(A)
            else:  # (I + A/2)(I - A/2)^{-1}
                Id = eye(n, dtype=A.dtype, device=A.device)
                Q = linalg_solve(Id + A * -0.5, Id + A * 0.5)
            if n != k:
                Q = Q[..., :k]
        else:
            A = X.tril(diagonal=-1)
            tau = 2.0 / (1.0 + (A * A).sum(dim=-2))
            Q = householder_product(A, tau)
            # X's diagonal holds the signs (+-1), not differentiated through
            Q = Q * X.diagonal(dim1=-2, dim2=-1).int().unsqueeze(-2)
        if hasattr(self, "base"):
            Q = self.base @ Q
        if transposed:
            Q = Q.mT
        return Q

    def right_inverse(self, Q):
        with no_grad():
            return self._right_inverse(Q)

    def _right_inverse(self, Q):
        if Q.shape != self.shape:
            raise ValueError("Expected a matrix or batch of matrices of shape "
                             f"torch.Size({list(self.shape)}). Got a tensor of shape "
                             f"torch.Size({list(Q.shape)}).")
        Q_init = Q
        n, k = Q.size(-2), Q.size(-1)
        transpose = n < k
        if transpose:
            Q = Q.mT
            n, k = k, n
        if not hasattr(self, "base"):
            if self.orthogonal_map in (_OrthMaps.cayley, _OrthMaps.matrix_exp):
                raise NotImplementedError("It is not possible to assign to the matrix "
                                          "exponential or the Cayley parametrizations when "
                                          "use_trivialization=False.")
            # householder: the reflectors of Q's QR, the diagonal holding diag(R)'s signs
            # (flipped where LAPACK made no reflection, tau == 0)
            A, tau = geqrf(Q)
            A.diagonal(dim1=-2, dim2=-1).sign_()
            A.diagonal(dim1=-2, dim2=-1)[tau == 0.0] *= -1
            return A.mT if transpose else A
        if n == k:
            Q = Q.clone() if _is_orthogonal(Q) else _make_orthogonal(Q)
        else:  # complete Q to an n x n orthogonal matrix
            N = randn(*(Q.size()[:-2] + (n, n - k)), dtype=Q.dtype, device=Q.device)
            Q = _make_orthogonal(cat([Q, N], dim=-1))
        self.base = Q
        # -Id: householder(-Id) is Id, and the other maps send its skew part (0) to Id
        neg_Id = zeros_like(Q_init)
        neg_Id.diagonal(dim1=-2, dim2=-1).fill_(-1.0)
        return neg_Id


def orthogonal(module, name="weight", orthogonal_map=None, *, use_trivialization=True):
    """Parametrize ``module.<name>`` (a matrix or a batch of them) as an orthogonal
    (unitary) matrix: orthonormal columns when tall, rows when wide. ``orthogonal_map`` is
    ``"matrix_exp"`` (default for square or complex), ``"cayley"`` or ``"householder"``
    (default otherwise); ``use_trivialization`` keeps a ``base`` buffer in the
    parametrization. A non-orthogonal initial value is orthogonalized by QR; a tall one
    is completed to a square ``base`` with wgrad's generator (other numbers than torch's).

    Example
    -------
    >>> m = wgrad.nn.utils.parametrizations.orthogonal(wgrad.nn.Linear(3, 3))
    >>> bool(wgrad.allclose(m.weight.T @ m.weight, wgrad.eye(3), atol=1e-5))
    True
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if weight.ndim < 2:
        raise ValueError("Expected a matrix or batch of matrices. Got a tensor of "
                         f"{weight.ndim} dimensions.")
    if orthogonal_map is None:
        orthogonal_map = "matrix_exp" if weight.size(-2) == weight.size(-1) or \
            weight.is_complex() else "householder"
    orth_enum = getattr(_OrthMaps, orthogonal_map, None)
    if orth_enum is None:
        raise ValueError('orthogonal_map has to be one of "matrix_exp", "cayley", '
                         f'"householder". Got: {orthogonal_map}')
    orth = _Orthogonal(weight, orth_enum, use_trivialization=use_trivialization)
    parametrize.register_parametrization(module, name, orth, unsafe=True)
    return module


class _SpectralNorm(Module):
    """``weight / sigma`` with ``sigma = u^H W v`` from the buffers ``_u`` and ``_v``,
    updated by ``n_power_iterations`` of the power method on each training-mode read (a
    1-d weight is normalized exactly)."""

    def __init__(self, weight, n_power_iterations=1, dim=0, eps=1e-12):
        super().__init__()
        ndim = weight.ndim
        if dim >= ndim or dim < -ndim:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[-{ndim}, {ndim - 1}] but got {dim})")
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.dim = dim if dim >= 0 else dim + ndim
        self.eps = eps
        if ndim > 1:
            self.n_power_iterations = n_power_iterations
            weight_mat = self._reshape_weight_to_matrix(weight)
            h, w = weight_mat.size()
            u = weight_mat.new_empty(h).normal_(0, 1)
            v = weight_mat.new_empty(w).normal_(0, 1)
            self.register_buffer("_u", normalize(u, dim=0, eps=self.eps))
            self.register_buffer("_v", normalize(v, dim=0, eps=self.eps))
            self._power_method(weight_mat, 15)  # start near the singular vectors

    def _reshape_weight_to_matrix(self, weight):
        if weight.ndim <= 1:
            raise AssertionError(f"Expected weight to have more than 1 dimension, got "
                                 f"{weight.ndim}")
        if self.dim != 0:
            weight = weight.permute(self.dim, *(d for d in range(weight.dim())
                                                if d != self.dim))
        return weight.flatten(1)

    def _power_method(self, weight_mat, n_power_iterations):
        if weight_mat.ndim <= 1:
            raise AssertionError(f"Expected weight_mat to have more than 1 dimension, got "
                                 f"{weight_mat.ndim}")
        with no_grad():  # u and v are updated in place (torch's note on DataParallel)
            for _ in range(n_power_iterations):
                self._u = normalize(mv(weight_mat, self._v), dim=0, eps=self.eps,
                                    out=self._u)
                self._v = normalize(mv(weight_mat.H, self._u), dim=0, eps=self.eps,
                                    out=self._v)

    def forward(self, weight):
        if weight.ndim == 1:
            return normalize(weight, dim=0, eps=self.eps)
        weight_mat = self._reshape_weight_to_matrix(weight)
        if self.training:
            self._power_method(weight_mat, self.n_power_iterations)
        # clones: a graph of an earlier forward keeps the u and v it used
        u, v = self._u.clone(), self._v.clone()
        return weight / vdot(u, mv(weight_mat, v))

    def right_inverse(self, value):
        return value


def spectral_norm(module, name="weight", n_power_iterations=1, eps=1e-12, dim=None):
    """Parametrize ``module.<name>`` as itself divided by its spectral norm, estimated by
    the power method (15 steps at registration, ``n_power_iterations`` on each read in
    training mode); ``dim`` is the output dim (1 for ConvTranspose, else 0). ``u`` and
    ``v`` start from wgrad's generator (other numbers than torch's for a seed).

    Example
    -------
    >>> m = wgrad.nn.utils.parametrizations.spectral_norm(wgrad.nn.Linear(3, 2))
    >>> sorted(m.state_dict())  # doctest: +NORMALIZE_WHITESPACE
    ['bias', 'parametrizations.weight.0._u', 'parametrizations.weight.0._v',
     'parametrizations.weight.original']
    """
    weight = getattr(module, name, None)
    if not isinstance(weight, Tensor):
        raise ValueError(f"Module '{module}' has no parameter or buffer with name '{name}'")
    if dim is None:
        dim = 1 if isinstance(module, (ConvTranspose1d, ConvTranspose2d,
                                       ConvTranspose3d)) else 0
    parametrize.register_parametrization(module, name,
                                         _SpectralNorm(weight, n_power_iterations, dim, eps))
    return module
