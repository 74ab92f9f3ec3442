"""The old home of `yax.runtime.named_sharding`, kept so that imports and pickles naming it work."""

from yax.runtime.named_sharding import *  # noqa: F401,F403
