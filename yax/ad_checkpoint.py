"""`yax.ad_checkpoint`: checkpointing and residual accounting under their JAX names."""

from yax import checkpoint_policies  # noqa: F401  (jax.ad_checkpoint.checkpoint_policies)
from yax.transforms.checkpoint import checkpoint, checkpoint_name, remat  # noqa: F401
from yax.transforms.residuals import print_saved_residuals, residual_report, saved_residuals  # noqa: F401
