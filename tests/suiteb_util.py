"""The jax oracle's values for a whole table of test cases from one jitted jax program.

Eager jax compiles one XLA program per primitive application (per shape and dtype), and the
gradient of even a small activation runs a dozen of them, so an oracle evaluated case by case
costs a test file many small compiles. Tables of cases whose expected values are jax's instead
state their cases once, and `JaxTable` evaluates all of them in one `jax.jit` program per
dtype, on the first test that asks. The inputs are traced arguments of that program, not
constants, so XLA folds nothing that an eager evaluation would compute at run time."""

from __future__ import annotations

import numpy as np


def jax_values(cases: dict) -> dict:
    """{key: (fn, args)} -> {key: fn(*args) as NumPy values}, all in one jax.jit program.
    `fn` closes over whatever must stay static (axes, keywords); `args` are its array (or
    scalar) inputs, traced."""
    import jax
    keys = list(cases)  # a list, not the dict: pytrees sort dict keys, and keys may not compare
    fns = [cases[key][0] for key in keys]
    args = [tuple(cases[key][1]) for key in keys]
    outs = jax.jit(lambda args: [fn(*a) for fn, a in zip(fns, args, strict=True)])(args)
    return dict(zip(keys, jax.tree_util.tree_map(np.asarray, outs), strict=True))


class JaxTable:
    """A table's oracle values, computed once per key of `make_cases` (usually the dtype, with
    jax's x64 flag as the test has set it) and kept for the module's later tests."""

    def __init__(self, make_cases):
        self._make_cases = make_cases
        self._values: dict = {}

    def __call__(self, *key) -> dict:
        import jax
        full_key = key + (bool(jax.config.jax_enable_x64),)
        if full_key not in self._values:
            self._values[full_key] = jax_values(self._make_cases(*key))
        return self._values[full_key]
