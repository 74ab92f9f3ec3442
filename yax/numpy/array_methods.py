"""Installs NumPy-style operators and methods on Array and Tracer (being written)."""
