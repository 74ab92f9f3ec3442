"""yax's public functions against jax 0.10.2's: every parameter jax's signature has, yax's has
too, except the gaps recorded in KNOWN_GAPS (each one a parameter yax does not take yet). The
test fails when a new gap appears (a jax parameter yax lacks) and when a recorded gap is closed
(so the table stays the truth); its failure message is the report."""

from __future__ import annotations

import inspect

import jax
import jax.nn
import jax.random
import pytest

import yax
import yax.nn
import yax.random
from tests.harness import only_against_jax_0_10

CHECKED = (
    "jit grad value_and_grad vjp jvp linearize vmap pmap checkpoint remat eval_shape device_put "
    "device_get make_jaxpr hessian jacfwd jacrev custom_jvp custom_vjp pure_callback "
    "block_until_ready "
    "lax.scan lax.cond lax.while_loop lax.fori_loop lax.switch lax.map lax.associative_scan "
    "lax.dot_general lax.conv_general_dilated lax.reduce lax.sort lax.top_k lax.psum "
    "lax.all_gather "
    "random.key random.PRNGKey random.split random.fold_in random.normal random.uniform "
    "random.bernoulli random.categorical random.randint random.permutation random.choice "
    "random.truncated_normal random.gamma random.beta random.key_data random.wrap_key_data "
    "random.dirichlet random.multivariate_normal random.gumbel random.exponential "
    "random.poisson random.bits "
    "nn.softmax nn.log_softmax nn.logsumexp nn.one_hot nn.gelu nn.standardize "
    "numpy.sum numpy.mean numpy.einsum numpy.matmul numpy.dot numpy.where numpy.take "
    "numpy.take_along_axis numpy.argsort numpy.sort numpy.zeros numpy.array numpy.asarray "
    "numpy.arange numpy.linspace numpy.clip numpy.var numpy.std numpy.max numpy.cumsum "
    "numpy.concatenate numpy.pad numpy.reshape "
    "tree_util.tree_map tree_util.tree_flatten tree_util.tree_reduce "
    "tree_util.register_pytree_node tree_util.tree_leaves"
).split()

KNOWN_GAPS = {
    "lax.scan": {"_split_transpose"},
    "lax.psum": {"axis_index_groups"},
    "lax.all_gather": {"axis_index_groups", "to"},
    "numpy.einsum": {"_dot_general"},
}


def _lookup(module, dotted: str):
    obj = module
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _named_parameters(fn) -> set:
    params = inspect.signature(fn).parameters.values()
    return {p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}


def _missing(name: str) -> set:
    return _named_parameters(_lookup(jax, name)) - _named_parameters(_lookup(yax, name))


@pytest.mark.parametrize("name", CHECKED)
@only_against_jax_0_10("jax 0.11 added parameters (in_nzs, is_stable, method, out_sharding)")
def test_signature_has_jax_parameters(name):
    missing = _missing(name)
    known = KNOWN_GAPS.get(name, set())
    assert not missing - known, (
        f"yax.{name} lacks jax's parameter(s) {sorted(missing - known)}: add them (with jax's "
        f"meaning) or record the gap in KNOWN_GAPS")
    assert not known - missing, (
        f"yax.{name} now takes {sorted(known - missing)}: remove them from KNOWN_GAPS")


def test_jit_takes_every_jax_parameter_in_order():
    ours = list(inspect.signature(yax.jit).parameters)
    theirs = list(inspect.signature(jax.jit).parameters)
    assert ours == theirs
    assert inspect.signature(yax.jit).parameters["fun"].kind is inspect.Parameter.POSITIONAL_ONLY
