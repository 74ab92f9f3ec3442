"""The old home of `yax.runtime.mesh`, kept so that imports and pickles naming it work."""

from yax.runtime.mesh import *  # noqa: F401,F403
