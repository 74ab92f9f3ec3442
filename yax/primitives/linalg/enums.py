"""The option enums of yax.lax.linalg (jax.lax.linalg's, same members and values).

On CPU, yax's decompositions are LAPACK's: `EigImplementation.LAPACK`, `EighImplementation.QR`
and the SVD algorithms `DEFAULT` / `DIVIDE_AND_CONQUER` (gesdd) and `QR` (gesvd) are available;
the others name GPU/TPU solvers and are refused with jax's own reasons.
"""

from __future__ import annotations

import enum

from yax import errors

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm"]


class EigImplementation(enum.Enum):
    """Which solver `eig` uses: LAPACK geev on the host CPU (the only one on CPU), or the GPU
    libraries MAGMA and cuSOLVER."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """Which algorithm `eigh` uses: QR-based (LAPACK syevd/heevd, CPU/GPU), Jacobi (GPU/TPU) or
    QDWH spectral divide and conquer (TPU)."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """Which algorithm `svd` uses. On CPU: DEFAULT and DIVIDE_AND_CONQUER (LAPACK gesdd), QR
    (LAPACK gesvd); JACOBI and POLAR are GPU/TPU algorithms."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def check_eig_implementation(implementation) -> None:
    if implementation is not None and not isinstance(implementation, EigImplementation):
        raise errors.InvalidArgumentError(
            f"eig: implementation must be None or a lax.linalg.EigImplementation, got "
            f"{implementation!r}")
    if implementation not in (None, EigImplementation.LAPACK):
        raise errors.InvalidArgumentError(
            f"eig: only the LAPACK implementation is available (yax runs eig through LAPACK "
            f"geev on the CPU), got {implementation}")


def check_eigh_implementation(implementation) -> None:
    if implementation is not None and not isinstance(implementation, EighImplementation):
        raise errors.InvalidArgumentError(
            f"eigh: implementation must be None or a lax.linalg.EighImplementation, got "
            f"{implementation!r}")
    if implementation not in (None, EighImplementation.QR):
        raise errors.NotImplementedRuleError(
            f"eigh: {implementation} is a GPU/TPU algorithm; yax's eigh is LAPACK's QR-based "
            f"syevd/heevd (pass implementation=None or EighImplementation.QR)")


def check_svd_algorithm(algorithm) -> None:
    """None or an SvdAlgorithm LAPACK has: DEFAULT, DIVIDE_AND_CONQUER (gesdd) or QR (gesvd)."""
    if algorithm is not None and not isinstance(algorithm, SvdAlgorithm):
        raise errors.InvalidArgumentError(
            f"svd: algorithm must be None or a lax.linalg.SvdAlgorithm, got {algorithm!r}")
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise errors.NotImplementedRuleError(
            f"svd: {algorithm} is a GPU/TPU algorithm (as in JAX, not on CPU); use "
            f"SvdAlgorithm.DEFAULT, DIVIDE_AND_CONQUER or QR")
