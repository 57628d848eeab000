"""Low-rank and partial decompositions: ``torch.svd_lowrank``, ``torch.pca_lowrank`` and
``torch.lobpcg``.

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
from ._autograd.grad_mode import _state
from ._creation import randn
from .linalg import cholesky, eigh, qr, solve_triangular, svd
from .ops._primitive import Primitive

__all__ = ["svd_lowrank", "pca_lowrank", "lobpcg"]


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


# NOTE [lobpcg]
# torch.lobpcg iterates LOBPCG (Knyazev's locally optimal block preconditioned conjugate
# gradient) from a random or given block X until the residuals fall below ``tol``; its
# result is the k extreme eigenpairs of the symmetric A (of A x = lambda B x). wgrad gives
# that result exactly, from ``linalg.eigh`` of the symmetrized A (after a Cholesky
# reduction where B is given): the same eigenvalues, and eigenvectors up to sign, as a
# converged run of torch's (``niter``, ``tol``, ``iK``, ``method``, ``tracker`` and the
# ``ortho_*`` options are accepted and have nothing to tune; an unconverged run of torch's,
# a small ``niter``, is less accurate than this). With grad, A enters as (A + A^T) / 2, as
# torch's, and the outputs come from one LOBPCGAutogradFunctionBackward node, torch's name,
# whose gradient is eigh's (the whole eigenspace: the same derivative torch's partial
# formula computes, differentiable again through eigh); where torch's backward raises
# (B given, complex input) so does this node's.
def _raising(msg):
    def formula(grads):
        raise ValueError(msg)
    return formula


def _lobpcg_node(D, U):
    """The identity over ``(E, X)`` as one LOBPCGAutogradFunctionBackward node, with the
    formulas ``D`` and ``U``."""
    return Primitive("lobpcg", lambda D, U: (D, U), nout=2,
                     node_name="LOBPCGAutogradFunctionBackward", D=D, U=U)


_NO_B = _raising("lobpcg.backward does not support backward with B != I yet.")
_NO_COMPLEX = _raising("lobpcg.backward does not support complex input yet. Note that "
                       "lobpcg.forward does though.")
_LOBPCG = {None: _lobpcg_node(lambda grads: grads[0], lambda grads: grads[1]),
           "B": _lobpcg_node(_NO_B, _NO_B), "complex": _lobpcg_node(_NO_COMPLEX, _NO_COMPLEX)}


def lobpcg(A, k=None, B=None, X=None, n=None, iK=None, niter=None, tol=None, largest=None,
           method=None, tracker=None, ortho_iparams=None, ortho_fparams=None,
           ortho_bparams=None):
    """The ``k`` largest (``largest=False``: smallest) eigenvalues and eigenvectors ``(E,
    X)`` of the symmetric ``A``, or of ``A x = lambda B x``, as a converged run of
    torch's LOBPCG gives them (NOTE [lobpcg]).

    Example
    -------
    >>> A = wgrad.diag(wgrad.tensor([1., 2., 3., 4., 5., 6.]))
    >>> wgrad.lobpcg(A, k=2)[0]
    tensor([6., 5.])
    """
    if A.shape[-2] != A.shape[-1]:
        raise AssertionError(f"A must be square, got shape {A.shape}")
    if B is not None and A.shape != B.shape:
        raise AssertionError(f"A and B must have same shape, got {A.shape} vs {B.shape}")
    m = A.shape[-1]
    k = (1 if X is None else X.shape[-1]) if k is None else k
    n = (k if n is None else n) if X is None else X.shape[-1]
    if m < 3 * n:
        raise ValueError(f"LOBPCG algorithm is not applicable when the number of A rows "
                         f"(={m}) is smaller than 3 x the number of requested eigenpairs "
                         f"(={n})")
    if X is not None and tuple(X.shape[-2:]) != (m, n):
        raise AssertionError(f"X shape mismatch: got {X.shape}, expected {(m, n)}")
    grad = _state.grad and (A.requires_grad or B is not None and B.requires_grad)
    if not (A.dtype.is_floating_point or A.dtype.is_complex):
        A = A.to(D.float32)
    if grad:  # torch's symmetrization (its transpose, also for complex input)
        A = (A + A.mT) / 2
        B = None if B is None else (B + B.mT) / 2
    if B is None:
        E, U = eigh(A)
    else:  # C = L^-1 A L^-H with B = L L^H; the eigenvectors of A x = lambda B x: L^-H y
        L = cholesky(B)
        C = solve_triangular(L, solve_triangular(L, A, upper=False).mH, upper=False).mH
        E, Y = eigh(C)
        U = solve_triangular(L.mH, Y, upper=True)
    if largest is None or largest:
        E, U = E[..., -k:].flip(-1), U[..., -k:].flip(-1)
    else:
        E, U = E[..., :k], U[..., :k]
    if not grad:
        return E, U
    node = _LOBPCG["B" if B is not None else "complex" if A.is_complex() else None]
    return tuple(node(E, U))
