"""Randomized low-rank decompositions: ``torch.svd_lowrank`` and ``torch.pca_lowrank``.

Both are Halko, Martinsson and Tropp's randomized range finder (Algorithm 4.4 of "Finding
structure with randomness", 2009: ``niter`` power iterations, each re-orthonormalized by
a QR) followed by the SVD of the small projected matrix (their Algorithm 5.1), written
with wgrad's own ops as torch's are with its own, so they are differentiable the same way
(through ``matmul``, ``linalg.qr`` and ``linalg.svd``). The random test matrix comes from
wgrad's generator (``wgrad.manual_seed`` makes a call repeatable): its stream is not
torch's, so for a matrix that is not exactly of rank <= ``q`` the approximations differ
from torch's as two of torch's runs with different seeds do (docs/differences.md).
"""
from . import _dtype as D
from ._creation import randn
from .linalg import qr, svd

__all__ = ["svd_lowrank", "pca_lowrank"]


def _floating(A):
    """The dtype of the random test matrix: A's where floating or complex, else the
    default float dtype (torch's ``get_floating_dtype``)."""
    d = A.dtype
    return d if d.is_floating_point or d.is_complex else D.float32


def _basis(A, q, niter, M):
    """An orthonormal basis of ``q`` columns approximating the range of ``A - M``."""
    R = randn(A.shape[-1], q, dtype=_floating(A), device=A.device)
    X = A @ R if M is None else A @ R - M @ R
    Q = qr(X).Q
    for _ in range(niter):
        X = A.mH @ Q if M is None else A.mH @ Q - M.mH @ Q
        Q = qr(X).Q
        X = A @ Q if M is None else A @ Q - M @ Q
        Q = qr(X).Q
    return Q


def _svd_lowrank(A, q, niter, M):
    q = 6 if q is None else q
    niter = 2 if niter is None else niter
    m, n = A.shape[-2:]
    if M is not None:
        M = M.broadcast_to(A.shape)
    wide = m < n
    if wide:  # the algorithm wants a tall matrix: decompose A^H and swap U and V
        A = A.mH
        M = None if M is None else M.mH
    Q = _basis(A, q, niter, M)
    B = Q.mH @ A if M is None else Q.mH @ A - Q.mH @ M
    U, S, Vh = svd(B, full_matrices=False)
    U, V = Q @ U, Vh.mH
    return (V, S, U) if wide else (U, S, V)


def svd_lowrank(A, q=6, niter=2, M=None):
    """An approximate rank-``q`` SVD ``(U, S, V)`` of ``A - M`` (``A ~ U diag(S) V^H``),
    exact where the matrix has rank <= ``q``; ``niter`` power iterations sharpen it.

    Example
    -------
    >>> _ = wgrad.manual_seed(0)
    >>> A = wgrad.tensor([[1., 2.], [2., 4.], [3., 6.]])  # rank 1
    >>> U, S, V = wgrad.svd_lowrank(A, q=1)
    >>> S
    tensor([8.3666])
    """
    return _svd_lowrank(A, q, niter, M)


def pca_lowrank(A, q=None, center=True, niter=2):
    """A principal component analysis of the data matrix ``A`` (samples by features):
    ``svd_lowrank`` of ``A`` less its column means (``center=True``); ``V``'s columns are
    the principal directions, ``S ** 2 / (m - 1)`` the variances along them.

    Example
    -------
    >>> _ = wgrad.manual_seed(0)
    >>> A = wgrad.tensor([[0., 0.], [1., 1.], [2., 2.]])
    >>> U, S, V = wgrad.pca_lowrank(A, q=1)
    >>> S ** 2 / 2
    tensor([2.])
    """
    m, n = A.shape[-2:]
    if q is None:
        q = min(6, m, n)
    elif not 0 <= q <= min(m, n):
        raise ValueError(f"q(={q}) must be non-negative integer and not greater than "
                         f"min(m, n)={min(m, n)}")
    if not niter >= 0:
        raise ValueError(f"niter(={niter}) must be non-negative integer")
    if center:
        A = A - A.mean(dim=(-2,), keepdim=True)
    return _svd_lowrank(A, q, niter, None)
