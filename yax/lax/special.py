"""yax.lax special functions: incomplete gamma and beta functions, polygamma, zeta and scaled
Bessel functions (the primitives of yax/primitives/special.py). Like the other lax wrappers
they do not promote: operands share one float dtype (Python scalars take it)."""

from __future__ import annotations

from yax.lax.elementwise import _nary
from yax.primitives import special as sp

__all__ = ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad", "polygamma", "zeta",
           "betainc", "bessel_i0e", "bessel_i1e"]

igamma = _nary(sp.igamma_p)
igamma.__doc__ = "The regularized lower incomplete gamma function P(a, x)."
igammac = _nary(sp.igammac_p)
igammac.__doc__ = "The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x)."
igamma_grad_a = _nary(sp.igamma_grad_a_p)
igamma_grad_a.__doc__ = "d/da of igamma(a, x)."
random_gamma_grad = _nary(sp.random_gamma_grad_p)
random_gamma_grad.__doc__ = (
    "The derivative d x / d a of a Gamma(a, 1) sample x with respect to its shape a, holding its "
    "CDF value fixed (implicit reparameterisation): -(dP/da)(a, x) / density(a, x).")
polygamma = _nary(sp.polygamma_p)
polygamma.__doc__ = "The m-th derivative of digamma, psi^(m)(x); m is a float array of integers."
zeta = _nary(sp.zeta_p)
zeta.__doc__ = "The Hurwitz zeta function zeta(x, q) = sum_k (k + q)^-x."
betainc = _nary(sp.regularized_incomplete_beta_p)
betainc.__name__ = "betainc"
betainc.__doc__ = "The regularized incomplete beta function I_x(a, b)."
bessel_i0e = _nary(sp.bessel_i0e_p)
bessel_i0e.__doc__ = "The exponentially scaled modified Bessel function exp(-|x|) I0(x)."
bessel_i1e = _nary(sp.bessel_i1e_p)
bessel_i1e.__doc__ = "The exponentially scaled modified Bessel function exp(-|x|) I1(x)."
