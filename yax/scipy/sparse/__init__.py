"""yax.scipy.sparse: the part of SciPy's sparse API that jax.scipy offers, the iterative linear
solvers of `yax.scipy.sparse.linalg` (`cg`, `gmres`, `bicgstab`).

    import yax.scipy.sparse.linalg as spla
    x, _ = spla.cg(lambda v: a @ v, b)
"""

from yax._missing import module_getattr as _module_getattr
from yax.scipy.sparse import linalg  # noqa: F401

__getattr__ = _module_getattr(__name__, "jax.scipy.sparse")  # JAX names yax lacks
