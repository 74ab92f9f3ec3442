"""yax/compile/: the one road from a closed jaxpr to an executable, and its caches."""

import numpy as np

import yax
import yax.numpy as jnp
from yax.compile import cache
from yax.compile.compiler import compile_jaxpr, lower_jaxpr
from yax.compile.run import run_closed_jaxpr
from yax.compile.when_eager import CompiledVariants
from yax.interpreters.staging import trace_to_jaxpr
from yax.runtime.array import Array


def _closed(fun, *avals):
    return trace_to_jaxpr(lambda *xs: [fun(*xs)], list(avals), name=fun.__name__)


def test_compile_jaxpr_runs_the_program():
    x = jnp.arange(4.0)

    def f(a):
        return jnp.sin(a) * 2.0

    closed = _closed(f, x.aval)
    exe = compile_jaxpr(closed)
    out = exe([x.buffer])
    np.testing.assert_allclose(np.asarray(out[0]), np.sin(np.arange(4.0)) * 2, rtol=1e-6)
    assert "main" in str(lower_jaxpr(closed).module)


def test_run_closed_jaxpr_compiles_once_per_jaxpr():
    x = jnp.ones(3)
    closed = _closed(lambda a: a + 1.0, x.aval)
    first = run_closed_jaxpr(closed, [x])
    second = run_closed_jaxpr(closed, [x])
    assert isinstance(first[0], Array)
    np.testing.assert_allclose(np.asarray(second[0]), [2.0, 2.0, 2.0])


def test_compiled_variants_are_made_once_per_key_and_cleared_by_clear_caches():
    made = []

    def make():
        made.append(1)
        return lambda *arrays: [a * 3.0 for a in arrays]

    variants = CompiledVariants("triple")
    x = jnp.ones(2)
    for _ in range(3):
        out = variants.get_or_make(("k",), make)(x)
    assert made == [1] and len(variants) == 1
    np.testing.assert_allclose(np.asarray(out[0]), [3.0, 3.0])
    yax.clear_caches()
    assert len(variants) == 0


def test_clear_caches_empties_every_registered_cache():
    x = jnp.eye(3) + 1.0
    jnp.linalg.inv(x)
    yax.jit(lambda a: a - 1)(x)
    assert any(len(c) for c in cache._caches.values())
    yax.clear_caches()
    assert not any(len(c) for c in cache._caches.values())


def test_sharding_classes_keep_their_public_home():
    from yax.runtime.named_sharding import NamedSharding as Moved
    from yax.sharding import NamedSharding, P, PartitionSpec
    assert NamedSharding is Moved and P is PartitionSpec
    import pickle
    assert pickle.loads(pickle.dumps(P("x", None))) == P("x", None)


def test_clear_caches_reaches_the_caches_that_are_not_lrus():
    from yax.interpreters import traced_cache
    from yax.runtime import values
    yax.numpy.ones(2) + 1.5  # an eager op: the constant 1.5 gets a device copy
    def one():
        return 1.0

    def two():
        return 2.0
    yax.lax.cond(True, one, two)  # traced branches, cached while the functions live
    assert values._scalar_arrays and len(traced_cache._entries)
    yax.clear_caches()
    assert not values._scalar_arrays and not len(traced_cache._entries)
