"""scipy.special's spherical harmonics sph_harm_y, from normalised associated Legendre functions.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp
from yax.scipy._special_gamma import _promoted

__all__ = ["sph_harm_y"]


def _normalized_legendre(n_max: int, m_abs, cos_t, sin_t):
    """P_n^|m|(cos t) normalised so that Y = P * exp(i m phi), for n = 0..n_max, by the stable
    recurrences: diagonal P_m^m, then P_{m+1}^m, then upward in n (a list indexed by n)."""
    four_pi = 4 * np.pi
    pmm = jnp.full_like(cos_t, float(np.sqrt(1 / four_pi)))
    rows = {}
    for m in range(n_max + 1):
        if m > 0:  # P_m^m = -sqrt((2m + 1) / 2m) sin(t) P_{m-1}^{m-1}
            pmm = -float(np.sqrt((2 * m + 1) / (2 * m))) * sin_t * pmm
        rows[(m, m)] = pmm
        if m + 1 <= n_max:
            rows[(m + 1, m)] = float(np.sqrt(2 * m + 3)) * cos_t * pmm
        for n in range(m + 2, n_max + 1):
            a = np.sqrt((4 * n * n - 1) / (n * n - m * m))
            b = np.sqrt(((n - 1) ** 2 - m * m) / (4 * (n - 1) ** 2 - 1))
            rows[(n, m)] = float(a) * (cos_t * rows[(n - 1, m)] - float(b) * rows[(n - 2, m)])
    return rows


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max=None):
    """The spherical harmonic Y_n^m(theta, phi) (scipy's `sph_harm_y` convention: theta is the
    polar angle, phi the azimuth; Condon-Shortley phase included). `n_max` (static) bounds the
    degree; when omitted it is read from the concrete `n`. Derivatives (`diff_n`) beyond 0 are
    not supported."""
    if diff_n not in (None, 0):
        raise NotImplementedError("sph_harm_y: only diff_n=0 is supported")
    n, m = jnp.asarray(n), jnp.asarray(m)
    if n_max is None:
        n_max = int(np.max(np.asarray(n)))
    theta, phi = _promoted("sph_harm_y", theta, phi)
    n, m, theta, phi = jnp.broadcast_arrays(n, m, theta, phi)
    m_abs = jnp.abs(m)
    rows = _normalized_legendre(int(n_max), m_abs, jnp.cos(theta), jnp.sin(theta))
    p = jnp.zeros_like(theta)
    for (degree, order), val in rows.items():
        p = jnp.where((n == degree) & (m_abs == order), val, p)
    # Y_n^{-m} = (-1)^m conj(Y_n^m)
    p = jnp.where((m < 0) & (jnp.remainder(m_abs, 2) == 1), -p, p)
    complex_dtype = jnp.result_type(theta.dtype, np.complex64)
    phase = jnp.exp(1j * (m.astype(theta.dtype) * phi).astype(complex_dtype))
    return p.astype(complex_dtype) * phase
