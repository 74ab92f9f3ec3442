"""The checks of the per-primitive second-order table (tests/primitive_cases.py), each a
jitted program per (case, check); `run_together` jits the checks of one case as one program.

For a case `f` at inputs `xs`, with random directions `v, w` (input-shaped) and `u`
(output-shaped), `z` (input-shaped):
  g(x) = J(x) v      (forward first derivative)     h(x) = J(x)^T u   (reverse first derivative)
  jvp_jvp:   jvp(g)(x; w)              == central difference of g along w
  jvp_vjp:   jvp(h)(x; w)              == central difference of h along w (forward-over-reverse)
  vjp_vjp:   <z, dh(x) w>  (by differences) == <vjp(h)(x)(z), w>
  linearize: linear_transpose of linearize(f) and of linearize(g): <u, L v> == <L^T u, v>, and
             L v == jvp(f)(x; v)
  vmap:      vmap(g) and vmap(h) over a batch of inputs == the per-example results stacked
A `named` case (a collective) is a per-lane function: every check program runs inside
`vmap(..., axis_name="i")` over the leading axis, so the collective's own jvp/transpose rules
are the ones differentiated; the identities then hold for the whole (all-lane) function.
"""

from __future__ import annotations

import zlib

import numpy as np

import yax

# Central differences in float64: truncation error ~ EPS**2 * |g'''| / 6 ~ 1e-10 and rounding
# ~ 1e-16 / EPS ~ 1e-11 for the O(1) inputs of the table, far inside TOL.
EPS = 1e-5
TOL = 1e-6
BATCH = 2
CHECKS = ("jvp_jvp", "jvp_vjp", "vjp_vjp", "linearize", "vmap")


def _tree_map(fn, *trees):
    return yax.tree_util.tree_map(fn, *trees)


def _leaves(tree):
    return [np.asarray(x) for x in yax.tree_util.tree_leaves(tree)]


def _inner(a, b) -> float:
    return float(sum(np.sum(x * y) for x, y in zip(_leaves(a), _leaves(b), strict=True)))


def _shift(xs, d, s):
    return tuple(x + s * t for x, t in zip(xs, d, strict=True))


def _g(f, v):
    return lambda *xs: yax.jvp(f, xs, v)[1]


def _h(f, u):
    return lambda *xs: yax.vjp(f, *xs)[1](u)


def _differences(fun, xs, w):
    return fun(*_shift(xs, w, EPS)), fun(*_shift(xs, w, -EPS))


def _prog_jvp_jvp(f, xs, d):
    g = _g(f, d["v"])
    return (*_differences(g, xs, d["w"]), yax.jvp(g, xs, d["w"])[1])


def _prog_jvp_vjp(f, xs, d):
    h = _h(f, d["u"])
    return (*_differences(h, xs, d["w"]), yax.jvp(h, xs, d["w"])[1])


def _prog_vjp_vjp(f, xs, d):
    h = _h(f, d["u"])
    return (*_differences(h, xs, d["w"]), yax.vjp(h, *xs)[1](d["z"]))


def _prog_linearize(f, xs, d):
    _, lin = yax.linearize(f, *xs)
    lin_t = yax.linear_transpose(lin, *d["v"])
    g = _g(f, d["v"])
    _, lin2 = yax.linearize(g, *xs)
    lin2_t = yax.linear_transpose(lin2, *d["w"])
    return (lin(*d["v"]), lin_t(d["u"]), yax.jvp(f, xs, d["v"])[1],
            lin2(*d["w"]), lin2_t(d["u"]))


def _prog_vmap(f, xs, d, reverse=True):
    xs_b = d["xs_b"]
    each = [tuple(x[i] for x in xs_b) for i in range(BATCH)]
    g = _g(f, d["v"])
    out = (yax.vmap(g)(*xs_b), [g(*x) for x in each])
    if not reverse:
        return out
    h = _h(f, d["u"])
    return (*out, yax.vmap(h)(*xs_b), [h(*x) for x in each])


def _prog_vmap_forward(f, xs, d):
    return _prog_vmap(f, xs, d, reverse=False)


PROGRAMS = {"jvp_jvp": _prog_jvp_jvp, "jvp_vjp": _prog_jvp_vjp, "vjp_vjp": _prog_vjp_vjp,
            "linearize": _prog_linearize, "vmap": _prog_vmap}


def _named(case, fn):
    """Run `fn` per lane (the leading axis) with the axis named "i" when the case is a
    collective; unchanged otherwise."""
    return yax.vmap(fn, axis_name="i") if case.named else fn


def directions(name: str, case) -> dict:
    """Fixed-seed directions for the case (seeded by its name: stable across runs/orders)."""
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    like = lambda tree: _tree_map(lambda a: rng.standard_normal(a.shape), tree)  # noqa: E731
    out = yax.eval_shape(_named(case, case.fn), *case.args)
    d = {"v": like(case.args), "w": like(case.args), "u": like(out), "z": like(case.args)}
    axis = 1 if case.named else 0
    d["xs_b"] = tuple(np.stack([x + 0.01 * i * t for i in range(BATCH)], axis=axis)
                      for x, t in zip(case.args, d["w"], strict=True))
    return d


def program(case, check: str):
    """The check's program as a function of (inputs, directions)."""
    prog = _prog_vmap_forward if check == "vmap" and not case.reverse() else PROGRAMS[check]
    return _named(case, lambda xs, d: prog(case.fn, xs, d))


def run(case, check: str, d: dict, jit: bool = True):
    prog = program(case, check)
    return (yax.jit(prog) if jit else prog)(tuple(case.args), d)


def run_together(case, check_names, d: dict) -> dict:
    """The programs of several checks of one case as one jitted program: check -> its result,
    the same values `run` gives each alone. One compile per case rather than one per check: on
    a sample of 27 cases, 27 compiles instead of 128 and 4.5 s of CPU instead of 6.7 s."""
    progs = {check: program(case, check) for check in check_names}
    return yax.jit(lambda xs, d: {check: prog(xs, d) for check, prog in progs.items()})(
        tuple(case.args), d)


def _close(got, want, what: str, tol: float) -> None:
    got_l, want_l = _leaves(got), _leaves(want)
    assert len(got_l) == len(want_l), f"{what}: output structures differ"
    for a, b in zip(got_l, want_l, strict=True):
        scale = max(1.0, float(np.max(np.abs(b), initial=0.0)))
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol * scale, err_msg=what)


def _fd(plus, minus):
    return _tree_map(lambda a, b: (np.asarray(a) - np.asarray(b)) / (2 * EPS), plus, minus)


def _adjoint(lhs: float, rhs: float, what: str, tol: float) -> None:
    scale = max(1.0, abs(lhs), abs(rhs))
    assert abs(lhs - rhs) <= tol * scale, f"{what}: <u, A v> = {lhs!r} but <A^T u, v> = {rhs!r}"


def verify(case, check: str, result, d: dict) -> None:
    """Assert the identity of `check` on the outputs of its program."""
    tol = case.tol
    if check in ("jvp_jvp", "jvp_vjp"):
        plus, minus, got = result
        _close(got, _fd(plus, minus), f"{check} vs central differences of the first derivative",
               tol)
    elif check == "vjp_vjp":
        plus, minus, ct = result
        _adjoint(_inner(d["z"], _fd(plus, minus)), _inner(ct, d["w"]),
                 "vjp(vjp) vs central differences of the vjp", tol)
    elif check == "linearize":
        lin_v, lin_t_u, jvp_v, lin2_w, lin2_t_u = result
        _close(lin_v, jvp_v, "linearize(f)(v) vs jvp(f)(v)", tol)
        _adjoint(_inner(d["u"], lin_v), _inner(lin_t_u, d["v"]),
                 "linear_transpose(linearize(f))", tol)
        _adjoint(_inner(d["u"], lin2_w), _inner(lin2_t_u, d["w"]),
                 "linear_transpose(linearize(jvp(f)))", tol)
    elif check == "vmap":
        axis = 1 if case.named else 0
        stack = lambda xs: _tree_map(lambda *a: np.stack(a, axis), *xs)  # noqa: E731
        _close(result[0], stack(result[1]), "vmap(jvp(f)) vs per-example", tol)
        if case.reverse():
            _close(result[2], stack(result[3]), "vmap(vjp(f)) vs per-example", tol)
    else:
        raise ValueError(check)
