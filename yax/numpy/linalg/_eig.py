"""yax.numpy.linalg.eig and eigvals: the general (non-Hermitian) eigendecomposition, LAPACK's
geev on CPU (the eig primitive).
"""

from __future__ import annotations

from typing import NamedTuple

from yax.core.trace import bind
from yax.numpy.linalg._util import as_matrix
from yax.primitives.linalg.eig import eig_p

__all__ = ["EigResult", "eig", "eigvals"]


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


def eig(a):
    """Eigenvalues and right eigenvectors of general square matrices (CPU only, like JAX).

    Args:
      a: (..., n, n) float or complex.
    Returns:
      EigResult(eigenvalues (..., n), eigenvectors (..., n, n) as columns), both complex, in
      LAPACK's (unsorted) order; a @ v = v * w.
    Not differentiable (as in JAX): use eigvals for eigenvalue derivatives, eigh when Hermitian.
    """
    a = as_matrix("eig", a, square=True)
    w, v = bind(eig_p, a, compute_left_eigenvectors=False, compute_right_eigenvectors=True)
    return EigResult(w, v)


def eigvals(a):
    """The (complex, unsorted) eigenvalues of general square matrices; differentiable for
    distinct eigenvalues. CPU only."""
    a = as_matrix("eigvals", a, square=True)
    w, = bind(eig_p, a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)
    return w
