"""Structured control flow primitives: loops and branches holding their bodies as jaxprs."""
