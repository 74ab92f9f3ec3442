"""Alias mode (`python -m yax`, `yax.alias_jax()`) and the jax modules libraries import.

Alias mode runs in child processes (this process keeps the real jax as the oracle); the jax
modules it serves (`yax._jax_names.*`, `yax.flatten_util`, ...) are also plain yax modules,
tested here directly against the real jax.
"""

from __future__ import annotations

import json
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as np_jax
import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import tree_util
from yax._alias_table import ALIASES, JAX_VERSION, SOURCE_SHIMS
from yax._jax_names.interpreters import ad, batching, mlir
from yax.extend import core as ext_core
from yax.flatten_util import ravel_pytree

ROOT = pathlib.Path(__file__).resolve().parent.parent


def _child(*args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    return subprocess.run([sys.executable, "-m", "yax", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


@pytest.fixture(scope="module")
def checks():
    proc = _child("tests/alias_mode_child.py", "--flag", "value")
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("ALIAS-CHECKS ")]
    assert proc.returncode == 0 and line, proc.stderr[-4000:]
    return json.loads(line[-1].split(" ", 1)[1])


def test_jax_src_test_util_serves_create_mesh(checks):
    assert checks["create_mesh"] == [[["x", 1]], True]


def test_script_sees_yax_under_the_name_jax(checks):
    assert checks["argv"] == ["--flag", "value"]
    assert checks["name"] == "jax"
    assert checks["jit_is_yax"] and checks["sin_is_yax"] and checks["array_is_yax"]
    assert checks["grad"] == 1.0 and checks["ravel"] == 7


def test_reports_the_jax_version_yax_follows(checks):
    assert checks["version"] == JAX_VERSION
    assert checks["version_info"] == [int(p) for p in JAX_VERSION.split(".")]


def test_no_real_jax_module_reachable_but_the_runtime_keeps_it(checks):
    assert checks["real_in_sys_modules"] == []
    assert checks["runtime_backend_module"] == "jax.extend.backend"
    assert not checks["runtime_backend_is_facade"]


def test_missing_names_fail_naming_the_jax_name(checks):
    message = checks["missing_attribute"]
    assert "`jax.numpy.sinn`" in message and "yax.numpy" in message and "sin" in message
    assert checks["hasattr_missing"] is False
    for module in ("jax.experimental.jax2tf", "jax._src.xla_bridge"):
        assert checks[module].startswith("ModuleNotFoundError") and module in checks[module]
    assert "checkify" in checks["jax.experimental.jax2tf"]  # what yax has there
    assert checks["module_error_name"] == "jax.experimental.jax2tf"


def test_from_imports_of_missing_names_name_them_and_what_yax_offers(checks):
    sinn = checks["from jax.numpy import sinn"]
    assert sinn.startswith("NotProvidedImportError")  # an ImportError: `except ImportError` works
    assert "`jax.numpy.sinn`" in sinn and "`yax.numpy`" in sinn and "sin, sinh" in sinn
    jax2tf = checks["from jax.experimental import jax2tf"]
    assert "`jax.experimental.jax2tf`" in jax2tf and "checkify" in jax2tf
    empty = checks["from jax._src.compiler import anything"]
    assert "`jax._src.compiler.anything`" in empty and "has no names" in empty


def test_writes_on_facades_do_not_reach_yax(checks):
    assert checks["yax_jit_intact"] and checks["interpreters_intact"]


def test_dash_m_runs_a_module(tmp_path):
    (tmp_path / "probe_mod.py").write_text(
        "import sys, jax\nprint('MOD', jax.numpy.add(1, 2), sys.argv[1:], __name__)\n")
    proc = _child("-m", "probe_mod", "x", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "MOD 3 ['x'] __main__" in proc.stdout


def test_usage_without_arguments():
    proc = _child()
    assert proc.returncode == 2 and "python -m yax script.py" in proc.stdout


@pytest.mark.parametrize("args, says", [
    (("-c", "print(1)"), "unknown option '-c'"),
    (("-m",), "-m needs a module name"),
    (("no_such_script.py",), "no such script 'no_such_script.py'"),
])
def test_bad_command_lines_say_what_is_wrong(args, says):
    proc = _child(*args)
    assert proc.returncode == 1 and says in proc.stderr and "usage:" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_table_targets_exist():
    """Every yax module of the alias table imports (a stale entry would fail only on use)."""
    import importlib  # noqa: PLC0415  (the test imports each table entry by name)
    for jax_name, yax_name in ALIASES.items():
        assert importlib.import_module(yax_name) is not None, jax_name
    assert all(name.startswith("jax._src") for name in SOURCE_SHIMS)


def test_docs_list_the_jax_src_names():
    text = (ROOT / "docs" / "ecosystem.md").read_text()
    for name in SOURCE_SHIMS:
        assert f"`{name}`" in text, name


# --- a primitive defined the jax way ------------------------------------------------------

def _make_cube_primitive():
    cube_p = ext_core.Primitive("test_cube")
    cube_p.def_impl(lambda x: x * x * x)
    cube_p.def_abstract_eval(lambda aval: aval)
    ad.primitive_jvps[cube_p] = lambda primals, tangents: (
        cube_p.bind(primals[0]), 3.0 * primals[0] ** 2 * ad.instantiate_zeros(tangents[0]))
    batching.primitive_batchers[cube_p] = lambda args, dims: (cube_p.bind(args[0]), dims[0])
    mlir.register_lowering(cube_p, mlir.lower_fun(lambda x: x * x * x, multiple_results=False))
    return cube_p


def test_user_primitive_under_every_transformation():
    cube_p = _make_cube_primitive()
    x = np.array([0.5, -1.0, 2.0], np.float32)
    cube = cube_p.bind
    np.testing.assert_allclose(cube(jnp.asarray(x)), x ** 3, rtol=1e-6)
    np.testing.assert_allclose(yax.jit(cube)(x), x ** 3, rtol=1e-6)
    np.testing.assert_allclose(yax.vmap(cube)(x), x ** 3, rtol=1e-6)
    np.testing.assert_allclose(yax.jit(yax.vmap(yax.grad(cube)))(x), 3 * x ** 2, rtol=1e-6)
    np.testing.assert_allclose(yax.vmap(yax.grad(yax.grad(cube)))(x), 6 * x, rtol=1e-6)
    assert cube_p in ad.primitive_jvps and cube_p in batching.primitive_batchers


def test_user_primitive_transpose_rule():
    double_p = ext_core.Primitive("test_double")
    double_p.def_impl(lambda x: 2.0 * x)
    double_p.def_abstract_eval(lambda aval: aval)
    mlir.register_lowering(double_p, mlir.lower_fun(lambda x: 2.0 * x, multiple_results=False))
    ad.deflinear2(double_p, lambda ct, x: [2.0 * ct])
    x = np.array([1.0, 3.0], np.float32)
    np.testing.assert_allclose(yax.grad(lambda v: jnp.sum(double_p.bind(v) ** 2))(x), 8 * x)
    np.testing.assert_allclose(yax.jit(yax.grad(lambda v: jnp.sum(double_p.bind(v))))(x),
                               [2.0, 2.0])


def test_missing_rule_is_a_clear_error():
    p = ext_core.Primitive("test_no_batch")
    p.def_impl(lambda x: x)
    p.def_abstract_eval(lambda aval: aval)
    with pytest.raises(NotImplementedError, match="test_no_batch"):
        yax.vmap(p.bind)(np.ones(2, np.float32))


# --- modules checked against the real jax ---------------------------------------------------

TREES = [
    {"w": np.arange(6.0, dtype=np.float32).reshape(2, 3), "b": np.ones(3, np.float32)},
    [np.int32(3), np.arange(4, dtype=np.float32)],
    (np.ones((2,), np.float16), {"x": np.zeros((1, 2), np.float32)}),
    {},
]


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_ravel_pytree_matches_jax(tree):
    from jax.flatten_util import ravel_pytree as jax_ravel  # noqa: PLC0415  (the oracle)
    flat, unravel = ravel_pytree(tree)
    want, want_unravel = jax_ravel(tree)
    assert flat.dtype == want.dtype and flat.shape == want.shape
    np.testing.assert_array_equal(flat, want)
    back, want_back = unravel(flat), want_unravel(want)
    leaves, want_leaves = tree_util.tree_leaves(back), jax.tree_util.tree_leaves(want_back)
    assert [(x.shape, x.dtype) for x in leaves] == [(x.shape, x.dtype) for x in want_leaves]
    if leaves:
        with pytest.raises(ValueError):
            unravel(jnp.zeros(flat.shape[0] + 1, flat.dtype))


def test_ravel_pytree_under_grad_and_jit():
    params = {"w": jnp.ones((2, 2)), "b": jnp.zeros(2)}
    flat, unravel = ravel_pytree(params)

    def loss(v):
        p = unravel(v)
        return jnp.sum(p["w"] ** 2) + jnp.sum(p["b"])
    np.testing.assert_allclose(yax.jit(yax.grad(loss))(flat), [1, 1, 2, 2, 2, 2])  # b, then w


def test_tree_util_extras_match_jax():
    class Point:
        def __init__(self, x, y):
            self.x, self.y = x, y

        def tree_flatten_with_keys(self):
            return [(tree_util.GetAttrKey("x"), self.x), (tree_util.GetAttrKey("y"), self.y)], None

        def tree_unflatten(cls, aux, children):
            return cls(*children)
        tree_unflatten = classmethod(tree_unflatten)

    tree_util.register_pytree_with_keys_class(Point)
    paths = [tree_util.keystr(k) for k, _ in tree_util.tree_flatten_with_path(Point(1, 2))[0]]
    assert paths == [".x", ".y"]
    assert tree_util.tree_leaves(Point(1, [2, 3])) == [1, 2, 3]

    class Config:
        def __eq__(self, other):
            return isinstance(other, Config)

        def __hash__(self):
            return 0
    tree_util.register_static(Config)
    assert tree_util.tree_leaves([Config(), 1]) == [1]
    jax.tree_util.register_static(Config)
    assert jax.tree_util.tree_leaves([Config(), 1]) == [1]  # as jax
    assert tree_util.KeyPath is tuple


def test_mapped_and_unmapped_avals():
    aval = yax.core.avals.ShapedArray((3, 4), np.float32)
    assert ext_core.mapped_aval(3, 0, aval).shape == (4,)
    assert ext_core.mapped_aval(4, -1, aval).shape == (3,)
    assert ext_core.unmapped_aval(5, 1, aval).shape == (3, 5, 4)
    assert ext_core.unmapped_aval(5, None, aval) is aval
    with pytest.raises(ValueError):
        ext_core.mapped_aval(2, 0, aval)


def test_opaque_trace_state_tells_transformations_apart():
    outer = ext_core.get_opaque_trace_state()
    seen = []
    yax.jit(lambda x: seen.append(ext_core.get_opaque_trace_state()) or x)(1.0)
    assert outer == ext_core.get_opaque_trace_state() and seen[0] != outer


def test_float8_types_match_jax():
    for name in ("float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz"):
        assert np.dtype(getattr(jnp, name)) == np.dtype(getattr(np_jax, name))


def test_pswapaxes_matches_jax():
    x = np.arange(2 * 2 * 3, dtype=np.float32).reshape(2, 2, 3)
    got = yax.vmap(lambda v: yax.lax.pswapaxes(v, "i", 0), axis_name="i")(x)
    want = jax.vmap(lambda v: jax.lax.pswapaxes(v, "i", 0), axis_name="i")(x)
    np.testing.assert_array_equal(got, want)
