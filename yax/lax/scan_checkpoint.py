"""`scan(..., checkpoint="sqrt")`: reverse mode of a long loop in O(sqrt n) memory.

`grad` of a plain scan stores every step's residuals: memory grows as n. Split into segments of
k steps, each segment a checkpointed inner scan, the forward pass stores only the carry that
enters each segment (n/k of them); the backward pass reruns one segment at a time and holds that
segment's k steps of residuals. With k ~ sqrt(n) both terms are O(sqrt n), for the price of one
more forward pass. Meaning (same values and derivatives as the plain scan):

    k = ceil(sqrt(n)) for "sqrt", or the int given
    carry, ys = init, []
    for start in range(0, n, k):       # segments taken in reverse order when reverse=True
        carry, y = checkpoint(plain_scan)(f, carry, xs[start:start + k])   # last one may be short
        ys.append(y)
    return carry, concatenate(ys)

The outer loop is a `scan` over the n // k full segments (xs reshaped to (n // k, k, ...)); the
n % k leftover steps run as one more, shorter, checkpointed segment.
"""

from __future__ import annotations

import math

from yax.errors import InvalidArgumentError
from yax.interpreters.rule_cache import cached
from yax.interpreters.staging import closure_convert, trace_to_jaxpr
from yax.lax.shape import concatenate, reshape
from yax.lax.slicing import slice_in_dim
from yax.primitives.control_flow.scan import scan_p
from yax.primitives.remat import remat_p
from yax.runtime.values import aval_of

__all__ = ["segment_length", "segmented_scan"]


def segment_length(checkpoint, length: int) -> int | None:
    """The steps per checkpointed segment that `checkpoint=` asks for (None: a plain scan)."""
    if checkpoint is None or checkpoint is False:
        return None
    if checkpoint == "sqrt":
        k = math.isqrt(length)
        k += k * k < length  # ceil(sqrt(n)): n = 10 gives 3 segments of 4, 4 and 2 steps
    elif isinstance(checkpoint, int) and not isinstance(checkpoint, bool) and checkpoint >= 1:
        k = checkpoint
    else:
        raise InvalidArgumentError(
            f"scan: checkpoint= takes None, \"sqrt\" or a positive int (the steps per "
            f"checkpointed segment), got {checkpoint!r}")
    # one segment covering the whole loop would store as much as the plain scan
    return k if 1 <= k < length else None


def segmented_scan(consts, carry, xs, *, body, length: int, reverse: bool, unroll: int,
                   k: int) -> list:
    """The outputs (final carry..., ys...) of scan_p over `body` (const-free, inputs
    consts + carry + x), run as checkpointed segments of `k` steps."""
    n_outer, rest = divmod(length, k)
    main = [reshape(_leading(x, 0, n_outer * k), (n_outer, k, *aval_of(x).shape[1:]))
            for x in xs]
    tail = [slice_in_dim(x, n_outer * k, length) for x in xs] if rest else []

    def run_main(c):
        return _outer_scan(consts, c, main, body, n_outer, k, reverse, unroll)

    def run_tail(c):
        return _segment(consts, c, tail, body, rest, reverse, unroll) if rest else (c, [])
    # in reverse the loop meets the leftover steps (the highest indices) first
    first, second = (run_tail, run_main) if reverse else (run_main, run_tail)
    c, ys_first = first(list(carry))
    c, ys_second = second(c)
    ys_main, ys_tail = (ys_second, ys_first) if reverse else (ys_first, ys_second)
    ys = [reshape(y, (n_outer * k, *aval_of(y).shape[2:])) for y in ys_main]
    if rest:
        ys = [concatenate([a, b], 0) for a, b in zip(ys, ys_tail, strict=True)]
    return [*c, *ys]


def _leading(x, start: int, stop: int):
    return x if (start, stop) == (0, aval_of(x).shape[0]) else slice_in_dim(x, start, stop)


def _bind_scan(consts, carry, xs, jaxpr, length, reverse, unroll):
    n = len(consts) + len(carry) + len(xs)
    return scan_p.bind(*consts, *carry, *xs, jaxpr=jaxpr, length=length, reverse=reverse,
                       num_consts=len(consts), num_carry=len(carry), linear=(False,) * n,
                       unroll=unroll)


def _checkpointed_segment(body, n_consts: int, n_carry: int, x_avals, steps: int, reverse,
                          unroll):
    """(const-free jaxpr, consts) of remat(steps of the plain scan): consts, carry, xs ->
    carry, ys. Built once per body and shape (rule_cache), so eager loops do not retrace."""
    def make():
        def seg(*args):
            consts, carry = args[:n_consts], args[n_consts:n_consts + n_carry]
            return _bind_scan(consts, carry, args[n_consts + n_carry:], body, steps, reverse,
                              unroll)
        in_avals = [*body.in_avals[:n_consts + n_carry], *x_avals]
        return closure_convert(trace_to_jaxpr(seg, in_avals, name="scan_segment"))
    key = ("scan_segment", body, tuple(x_avals), steps, reverse, unroll)
    return cached(key, make, lambda v: v[1])


def _remat(seg_jaxpr, seg_consts, args):
    # prevent_cse is not needed: the recomputation sits in the backward scan's body, which XLA
    # does not merge with the forward loop
    return remat_p.bind(*seg_consts, *args, jaxpr=seg_jaxpr, policy=None, prevent_cse=False)


def _segment(consts, carry, xs, body, steps, reverse, unroll):
    """One checkpointed run of `steps` steps over `xs` (leading axis `steps`)."""
    x_avals = [aval_of(x) for x in xs]
    seg, seg_consts = _checkpointed_segment(body, len(consts), len(carry), x_avals, steps,
                                            reverse, unroll)
    outs = _remat(seg, seg_consts, [*consts, *carry, *xs])
    return outs[:len(carry)], outs[len(carry):]


def _outer_scan(consts, carry, xs, body, n_outer, k, reverse, unroll):
    """A scan over `n_outer` segments of `k` steps; each step of it is one checkpointed
    segment, so its residuals are the carries entering the segments (and the xs)."""
    n_c, n_car = len(consts), len(carry)
    seg_x_avals = [aval_of(x).update(shape=aval_of(x).shape[1:]) for x in xs]

    def make():
        seg, seg_consts = _checkpointed_segment(body, n_c, n_car, seg_x_avals, k, reverse,
                                                unroll)

        def outer_body(*args):
            return _remat(seg, seg_consts, args)
        in_avals = [*body.in_avals[:n_c + n_car], *seg_x_avals]
        return closure_convert(trace_to_jaxpr(outer_body, in_avals, name="scan_segments"))
    key = ("scan_segments", body, tuple(seg_x_avals), k, reverse, unroll)
    outer, outer_consts = cached(key, make, lambda v: v[1])
    outs = _bind_scan([*outer_consts, *consts], carry, xs, outer, n_outer, reverse, 1)
    return outs[:n_car], outs[n_car:]
