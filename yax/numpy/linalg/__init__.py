"""yax.numpy.linalg: NumPy's linear-algebra API on the yax.lax.linalg primitives.

    import yax.numpy as jnp
    x = jnp.linalg.solve(a, b)

Every function works on batches of matrices in the leading dims, and under jit, grad, jvp and
vmap. Inputs must be floating or complex (integers raise a DTypeError; convert them first).
See docs/linalg.md.
"""

from yax.numpy.linalg._decomp import (  # noqa: F401
    EighResult,
    QRResult,
    SVDResult,
    cholesky,
    eigh,
    eigvalsh,
    qr,
    svd,
    svdvals,
)
from yax.numpy.linalg._norm import matrix_norm, norm, vector_norm  # noqa: F401
from yax.numpy.linalg._solve import (  # noqa: F401
    SlogdetResult,
    cond,
    det,
    inv,
    lstsq,
    matrix_power,
    matrix_rank,
    pinv,
    slogdet,
    solve,
)

__all__ = ["cholesky", "cond", "det", "eigh", "eigvalsh", "inv", "lstsq", "matrix_power",
           "matrix_norm", "matrix_rank", "norm", "pinv", "qr", "slogdet", "solve", "svd",
           "svdvals", "vector_norm"]
from yax.numpy.linalg._array_api import (  # noqa: F401,E402  (array-API names)
    cross,
    diagonal,
    matmul,
    matrix_transpose,
    outer,
    tensordot,
    trace,
    vecdot,
)
from yax.numpy.linalg._eig import EigResult, eig, eigvals  # noqa: F401,E402
from yax.numpy.linalg._tensor import multi_dot, tensorinv, tensorsolve  # noqa: F401,E402

__all__ += ["cross", "diagonal", "eig", "eigvals", "matmul", "matrix_transpose", "multi_dot",
            "outer", "tensordot", "tensorinv", "tensorsolve", "trace", "vecdot"]
