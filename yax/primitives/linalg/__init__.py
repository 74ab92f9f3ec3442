"""Linear-algebra primitives (cholesky, triangular_solve, lu, qr, eigh, svd).

Each module holds its primitives with all their rules; on CPU they lower to the LAPACK custom
calls jaxlib registers (see custom_call.py), on GPU to native StableHLO ops where one exists.
"""
