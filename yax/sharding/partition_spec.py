"""The old home of `yax.runtime.partition_spec`, kept so that imports and pickles naming it work."""

from yax.runtime.partition_spec import *  # noqa: F401,F403
