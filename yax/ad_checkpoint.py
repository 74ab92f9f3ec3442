"""`yax.ad_checkpoint`: checkpointing and residual accounting under their JAX names."""

from yax import checkpoint_policies  # noqa: F401,E402
from yax.transforms.checkpoint import checkpoint, checkpoint_name, remat  # noqa: F401
from yax.transforms.remat_cases import Offloadable, Recompute, Saveable  # noqa: F401,E402
from yax.transforms.residuals import print_saved_residuals, residual_report, saved_residuals  # noqa: F401
