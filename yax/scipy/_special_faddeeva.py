"""scipy.special.wofz, the Faddeeva function w(z) = exp(-z^2) erfc(-iz), by Weideman's rational
approximation.
"""

from __future__ import annotations

import numpy as np

import yax.numpy as jnp

__all__ = ["wofz"]


def _weideman_coefficients(n: int):
    """Coefficients of Weideman's rational approximation of w(z) (SIAM J. Numer. Anal. 31,
    1994): the Fourier coefficients of exp(-t^2) (L^2 + t^2) on the map t = L tan(theta / 2)."""
    m = 2 * n
    k = np.arange(-m + 1, m)
    scale = np.sqrt(n / np.sqrt(2))
    t = scale * np.tan(k * np.pi / (2 * m))
    f = np.concatenate([[0.0], np.exp(-t ** 2) * (scale ** 2 + t ** 2)])
    a = np.real(np.fft.fft(np.fft.fftshift(f))) / (2 * m)
    return np.flipud(a[1:n + 1]), float(scale)


_WEIDEMAN = _weideman_coefficients(40)


def wofz(z, /):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-i z), by Weideman's 40-term rational
    approximation in the upper half plane (relative error ~1e-14) and w(z) = 2 exp(-z^2) - w(-z)
    below it. Real input is promoted to complex."""
    z = jnp.asarray(z)
    complex_dtype = jnp.result_type(z.dtype, np.complex64)
    if jnp.issubdtype(z.dtype, jnp.integer) or z.dtype == np.float16:
        complex_dtype = jnp.result_type(jnp.zeros(()).dtype, np.complex64)
    z = z.astype(complex_dtype)
    coeffs, scale = _WEIDEMAN
    upper = jnp.imag(z) >= 0
    zz = jnp.where(upper, z, -z)
    iz = 1j * zz
    denominator = scale - iz
    ratio = (scale + iz) / denominator
    poly = jnp.zeros_like(z)
    for c in coeffs:  # Horner
        poly = poly * ratio + float(c)
    value = 2 * poly / (denominator * denominator) + float(1 / np.sqrt(np.pi)) / denominator
    return jnp.where(upper, value, 2 * jnp.exp(-z * z) - value)
