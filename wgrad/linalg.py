"""``wgrad.linalg``: torch.linalg's solvers, decompositions and norms with PyTorch's
complex gradients.

The formulas live in ``wgrad.ops.linear_algebra`` (ported from FunctionsManual.cpp).
Eigenvector and singular-vector gradients assume distinct eigen/singular values; in the
complex case a loss must not depend on the arbitrary phase of the vectors, and backward
raises torch's error when it does.
"""
from .ops.linear_algebra import (EighResult, EigResult, LinAlgError,  # noqa: F401
                                 LstsqResult, QRResult, SlogdetResult, SVDResult, cross, det,
                                 eigh, eigvals, eigvalsh, inv, matrix_exp, matrix_norm,
                                 matrix_power, multi_dot, norm, pinv, slogdet, svdvals, vecdot,
                                 vector_norm)
# torch.cholesky, torch.qr, torch.svd, torch.lu_solve and torch.matrix_rank have other
# signatures (torch.solve, eig and lstsq only raise): the module's names are those
from .ops.linear_algebra import (linalg_cholesky as cholesky, linalg_qr as qr,  # noqa: F401
                                 linalg_svd as svd, linalg_solve as solve, linalg_eig as eig,
                                 linalg_lstsq as lstsq, linalg_lu_solve as lu_solve,
                                 linalg_matrix_rank as matrix_rank)
from .ops.linear_algebra import (LUFactorExResult, LUFactorResult, LUResult,  # noqa: F401
                                 linalg_diagonal as diagonal, linalg_lu as lu,
                                 linalg_lu_factor as lu_factor,
                                 linalg_lu_factor_ex as lu_factor_ex,
                                 linalg_solve_triangular as solve_triangular,
                                 linalg_vander as vander)
from .ops.linear_algebra import (cholesky_ex, cond, householder_product,  # noqa: F401
                                 inv_ex, ldl_factor, ldl_factor_ex, ldl_solve, solve_ex,
                                 tensorinv, tensorsolve)
from .ops.linear_algebra import matmul, tensordot  # noqa: F401

__all__ = ["solve", "inv", "det", "slogdet", "eigh", "eigvalsh", "eig", "eigvals", "svd",
           "svdvals", "qr", "cholesky", "lstsq", "pinv", "matrix_exp", "matrix_power",
           "matrix_norm", "vector_norm", "norm", "cross", "multi_dot", "matmul", "vecdot",
           "tensordot", "LinAlgError", "lu_factor", "lu_factor_ex", "lu", "solve_triangular",
           "vander", "diagonal", "cond", "matrix_rank", "cholesky_ex", "inv_ex", "solve_ex",
           "lu_solve", "ldl_factor", "ldl_factor_ex", "ldl_solve", "householder_product",
           "tensorinv", "tensorsolve"]
