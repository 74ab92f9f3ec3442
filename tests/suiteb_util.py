"""The jax oracle's values for a whole table of test cases from one jitted jax program.

Eager jax compiles one XLA program per primitive application (per shape and dtype), and the
gradient of even a small activation runs a dozen of them, so an oracle evaluated case by case
costs a test file many small compiles. Tables of cases whose expected values are jax's instead
state their cases once, and `JaxTable` evaluates all of them in one `jax.jit` program per
dtype, on the first test that asks. The inputs are traced arguments of that program, not
constants, so XLA folds nothing that an eager evaluation would compute at run time."""

from __future__ import annotations

import contextlib
import sys

import numpy as np

from tests.harness import check_yax_numpy  # re-exported: the yax side of every table


def jax_values(cases: dict, as_numpy: bool = True) -> dict:
    """{key: (fn, args)} -> {key: fn(*args) as NumPy values}, all in one jax.jit program.
    `fn` closes over whatever must stay static (axes, keywords); `args` are its array (or
    scalar) inputs, traced. as_numpy=False keeps jax's Arrays (and so their weak types, which
    jit outputs keep as eager ones do)."""
    import jax
    # a case that jax cannot trace with abstract inputs (a data-dependent shape, a check that
    # needs concrete values) is evaluated eagerly, as before
    traceable = [key for key in cases if _traces(jax, *cases[key])]
    eager = {key: fn(*args) for key, (fn, args) in cases.items() if key not in traceable}
    # a list, not a dict: pytrees sort dict keys, and keys may not compare
    fns = [cases[key][0] for key in traceable]
    args = [tuple(cases[key][1]) for key in traceable]
    outs = jax.jit(lambda args: [fn(*a) for fn, a in zip(fns, args, strict=True)])(args)
    values = {**dict(zip(traceable, outs, strict=True)), **eager}
    if not as_numpy:
        return {key: values[key] for key in cases}
    return {key: jax.tree_util.tree_map(np.asarray, values[key]) for key in cases}


def _traces(jax, fn, args) -> bool:
    try:
        jax.eval_shape(fn, *args)
    except jax.errors.JAXTypeError:
        return False
    return True


class JaxTable:
    """A table's oracle values, computed once per key of `make_cases` (usually the dtype, with
    jax's x64 flag as the test has set it) and kept for the module's later tests."""

    def __init__(self, make_cases, as_numpy: bool = True):
        self._make_cases = make_cases
        self._as_numpy = as_numpy
        self._values: dict = {}

    def __call__(self, *key) -> dict:
        import jax
        full_key = key + (bool(jax.config.jax_enable_x64),)
        if full_key not in self._values:
            self._values[full_key] = jax_values(self._make_cases(*key), self._as_numpy)
        return self._values[full_key]




def jax_numpy_table(make_cases) -> JaxTable:
    """A JaxTable of cases `{key: (fn, args)}` written against a numpy module, as
    check_against_jax_numpy takes them: the oracle is `fn(jax.numpy, *args)`."""
    def jax_cases(*key):
        import jax.numpy as jnp_ref
        return {k: (_bind_module(fn, jnp_ref), args) for k, (fn, args) in
                make_cases(*key).items()}
    return JaxTable(jax_cases)


def _bind_module(fn, module):
    return lambda *args: fn(module, *args)


class _Checks:
    """The check_against_jax_numpy calls of one test, recorded to run together."""

    def __init__(self):
        self.cases: list = []

    def __call__(self, fn, *args, **options):
        line = sys._getframe(1).f_lineno  # named in a failure, as a traceback would
        self.cases.append((fn, args, options, line))


@contextlib.contextmanager
def batched_checks(check_yax=None):
    """`with batched_checks() as check:` then `check(fn, *args, ...)` as with
    check_against_jax_numpy: at the end of the block jax's values of all the checks come from
    one jitted program (`jax_values`), then yax's side of each check runs, in order:
    `check_yax(fn, args, want, **options)`, by default check_yax_numpy. Since the checks run
    after the block, a lambda that reads a loop variable binds it as a default argument."""
    check_yax = check_yax or check_yax_numpy
    checks = _Checks()
    yield checks
    import jax.numpy as jnp_ref
    wants = jax_values({i: (_bind_module(fn, jnp_ref), args)
                        for i, (fn, args, _, _) in enumerate(checks.cases)})
    for i, (fn, args, options, line) in enumerate(checks.cases):
        try:
            check_yax(fn, args, wants[i], **options)
        except AssertionError as e:
            raise AssertionError(f"the check at line {line}: {e}") from e
