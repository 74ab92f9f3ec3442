"""debug.breakpoint: a host-side command loop over the calling frames with run-time values,
under eager, jit, vmap, grad and scan."""

from __future__ import annotations

import io

import numpy as np
import pytest

import yax
import yax.numpy as jnp
from yax import errors


def _session(fn, commands: str, *args):
    out = io.StringIO()

    def with_stop(x):
        y = jnp.sin(x) * 2
        yax.debug.breakpoint(stdin=io.StringIO(commands), stdout=out)
        return y + 1

    result = fn(with_stop)(*args)
    return result, out.getvalue()


def _printed_arrays(text: str) -> list[np.ndarray]:
    """The arrays the debugger printed with `p` (NumPy reprs), in order."""
    lines = [ln.removeprefix("(jdb) ") for ln in text.splitlines()]
    return [eval(ln, {"array": np.array, "float32": np.float32})  # noqa: S307 (our own output)
            for ln in lines if ln.startswith("array(")]


@pytest.mark.parametrize("wrap", ["eager", "jit"])
def test_prints_run_time_values(wrap):
    x = jnp.arange(3.0)
    fn = yax.jit if wrap == "jit" else (lambda f: f)
    result, text = _session(fn, "p y\npp x.shape\np y.sum() + 100\nc\n", x)
    np.testing.assert_allclose(result, np.sin(np.arange(3.0)) * 2 + 1, rtol=1e-6)
    y = np.sin(np.arange(3.0, dtype=np.float32)) * 2
    np.testing.assert_allclose(_printed_arrays(text)[0], y, rtol=1e-6)
    assert "(3,)" in text and "np.float32(103.50" in text
    assert "Traced" not in text and "Tracer" not in text


def test_frames_up_down_where_and_list():
    out = io.StringIO()

    def inner(v):
        w = v * 3
        yax.debug.breakpoint(stdin=io.StringIO("u\np z\nd\np w\nw\nl\nunknown_name\nc\n"),
                             stdout=out)
        return w

    def outer(z):
        return inner(z + 1)

    yax.jit(outer)(jnp.ones(2))
    text = out.getvalue()
    assert text.startswith("Entering jdb:\n(jdb) ")  # jax's jdb greeting and prompt
    assert "->          return inner(z + 1)" in text  # `u`: the caller's line, in context
    assert "Traceback:" in text and text.count('  File "') >= 2  # `w`: the stack
    assert "array([1., 1.], dtype=float32)" in text   # z in the caller's frame
    assert "array([6., 6.], dtype=float32)" in text   # w back in inner
    assert "*** NameError" in text                    # an error in an expression: stays open
    assert "yax.debug.breakpoint(" in text            # `l` shows the source


def test_vmap_stops_once_per_element_and_grad_sees_primals():
    _, text = _session(yax.vmap, "p y\nc\n" * 3, jnp.arange(2.0))
    assert text.count("(jdb) array(") == 2
    np.testing.assert_allclose(_printed_arrays(text), [0.0, 2 * np.sin(1.0)], rtol=1e-6)
    g, text = _session(lambda f: yax.grad(lambda x: f(x).sum()), "p y\nc\n", jnp.zeros(2))
    np.testing.assert_allclose(g, [2.0, 2.0])
    assert "array([0., 0.], dtype=float32)" in text


def test_in_scan_once_per_iteration():
    out = io.StringIO()

    def body(c, x):
        c = c + x
        yax.debug.breakpoint(stdin=io.StringIO("p c\nc\n" * 4), stdout=out)
        return c, c

    yax.jit(lambda xs: yax.lax.scan(body, 0.0, xs))(jnp.arange(3.0))
    assert [line for line in out.getvalue().splitlines() if "array(" in line] == [
        "(jdb) array(0., dtype=float32)", "(jdb) array(1., dtype=float32)",
        "(jdb) array(3., dtype=float32)"]


def test_token_is_returned_and_quit_stops_the_program():
    out = io.StringIO()

    def f(x):
        t = yax.debug.breakpoint(token=x, stdin=io.StringIO("p x\nc\n"), stdout=out)
        return t * 2

    np.testing.assert_allclose(yax.jit(f)(jnp.ones(2)), [2.0, 2.0])
    assert "array([1., 1.], dtype=float32)" in out.getvalue()

    def g(x):
        yax.debug.breakpoint(stdin=io.StringIO("q\n"), stdout=out)
        return x

    with pytest.raises(errors.JaxRuntimeError, match="quit from debug.breakpoint") as info:
        yax.jit(g)(1.0).block_until_ready()
    assert type(info.value) is errors.JaxRuntimeError  # the class jax's quit raises
    with pytest.raises(ValueError, match="mutually exclusive"):
        yax.debug.breakpoint(token=1.0, ordered=True)
    with pytest.raises(ValueError, match="backend"):
        yax.debug.breakpoint(backend="web")
