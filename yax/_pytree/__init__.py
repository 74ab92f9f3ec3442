"""The pytree machinery behind `yax.tree_util` (its public face): key paths, the node registry,
PyTreeDef and flattening, mapping over leaves, and Partial."""
