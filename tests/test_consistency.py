"""debug.check_consistency: eager vs jit (and grad/vmap) agreement, and the porting bugs it
explains."""

from __future__ import annotations

import numpy as np
import pytest

import yax
import yax.numpy as jnp


def test_clean_function_passes_with_grad_and_vmap():
    report = yax.debug.check_consistency(lambda x: (jnp.sin(x) * jnp.arange(3.0)).sum(),
                                         jnp.linspace(0.0, 1.0, 3))
    assert report.ok, str(report)
    assert [leaf.ok for leaf in report.leaves] == [True]
    assert "OK" in str(report) and report.raise_if_failed() is report


def test_trace_time_side_effect_and_mutated_capture_are_flagged():
    counter = [0]

    def bad(x):
        counter[0] += 1  # runs once per trace under jit, on every call eagerly
        return x * counter[0]
    report = yax.debug.check_consistency(bad, jnp.ones(3), check_vmap=False)
    assert not report.ok and not report.leaves[0].ok
    assert any("runs only when jit traces" in p for p in report.problems)
    with pytest.raises(yax.errors.ConsistencyError, match="side effect"):
        report.raise_if_failed()

    w = np.ones(3, np.float32)

    def mutating(x):
        w[:] += 1  # in-place update of a captured NumPy array
        return x * w
    report = yax.debug.check_consistency(mutating, jnp.ones(3), check_vmap=False)
    assert any("runs only when jit traces" in p for p in report.problems)


def test_reliance_on_concrete_values_and_first_divergence():
    def branchy(x):
        return x if x.sum() > 0 else -x
    report = yax.debug.check_consistency(branchy, jnp.ones(3))
    assert len(report.problems) == 1 and "relies on concrete values" in report.problems[0]
    # every intermediate "diverges" with a negative tolerance: the first primitive is named
    where = yax.debug.first_divergence(lambda x: jnp.exp(x) * 3, (jnp.ones(3),), rtol=0, atol=-1)
    assert where.startswith("exp at ") and "test_consistency.py" in where
