"""Every primitive of yax, one module per family; each module holds all rules of its primitives."""
