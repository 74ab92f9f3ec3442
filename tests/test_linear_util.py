"""jax.extend.linear_util's transformation stack on WrappedFun, compared with jax's own."""

from __future__ import annotations

import jax.extend.linear_util as jlu
import numpy as np
import pytest

import yax
from yax.extend import linear_util as ylu


def _programs(lu):
    @lu.transformation2
    def scale(f, factor, *args):
        return f(*args) * factor

    @lu.transformation_with_aux2
    def count_args(f, store, *args):
        store.store(len(args))
        return f(*args)

    @lu.transformation
    def add_one_to_args(*args):
        result = yield tuple(a + 1 for a in args), {}
        yield result - 1

    @lu.transformation_with_aux
    def with_square(*args):
        result = yield args, {}
        yield result, result * result

    base = lambda x, y, k=0: x * 10 + y + k  # noqa: E731
    out = {}
    w = scale(lu.wrap_init(base, {"k": 5}, debug_info=None), 2)
    out["scale"] = w.call_wrapped(1, 2)
    w2, aux = count_args(scale(lu.wrap_init(base), 3))
    out["aux"] = (w2.call_wrapped(1, 2), aux())
    out["gen"] = add_one_to_args(lu.wrap_init(base)).call_wrapped(1, 2)
    w3, sq = with_square(lu.wrap_init(base))
    out["gen_aux"] = (w3.call_wrapped(1, 2), sq())
    return out


def test_same_results_as_jax():
    ours = _programs(ylu)
    theirs = _programs(jlu) if hasattr(jlu, "transformation2") else None
    assert ours == {"scale": 34, "aux": (36, 2), "gen": 23 - 1, "gen_aux": (12, 144)}
    if theirs is not None:
        assert ours == theirs


def test_stores_and_merge():
    s1, s2 = ylu.Store(), ylu.Store()
    with pytest.raises(ylu.StoreException, match="empty"):
        s1.val  # noqa: B018
    s1.store(4)
    with pytest.raises(ylu.StoreException, match="occupied"):
        s1.store(5)
    assert ylu.merge_linear_aux(lambda: s1.val, lambda: s2.val) == (True, 4)
    assert ylu.merge_linear_aux(lambda: s2.val, lambda: s1.val) == (False, 4)
    with pytest.raises(ylu.StoreException, match="neither"):
        ylu.merge_linear_aux(lambda: s2.val, lambda: s2.val)
    with pytest.raises(ylu.StoreException, match="both"):
        ylu.merge_linear_aux(lambda: s1.val, lambda: s1.val)


def test_cache_memoizes_and_refills_stores():
    calls = []

    @ylu.cache
    def run(fun, x):
        calls.append(x)
        return fun.call_wrapped(x)

    @ylu.transformation_with_aux2
    def tag(f, store, x):
        store.store("seen")
        return f(x)

    base = lambda x: x * 2  # noqa: E731
    w, aux = tag(ylu.wrap_init(base))
    assert run(w, 3) == 6 and aux() == "seen"
    w_again, aux_again = tag(ylu.wrap_init(base))
    assert run(w_again, 3) == 6 and aux_again() == "seen"  # refilled from the cached call
    assert calls == [3]
    w_new, _ = tag(ylu.wrap_init(base))  # a store is written once per wrapped function
    assert run(w_new, 4) == 8 and calls == [3, 4]


def test_wrapped_fun_goes_through_yax_transformations():
    @ylu.transformation2
    def squared(f, x):
        return f(x) ** 2

    w = squared(ylu.wrap_init(lambda x: x * 3.0))
    np.testing.assert_allclose(yax.grad(w)(2.0), 2 * 6.0 * 3.0)
    np.testing.assert_allclose(yax.jit(w)(2.0), 36.0)
