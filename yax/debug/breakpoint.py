"""`debug.breakpoint()`: a host-side, pdb-style stop inside a traced (jitted, vmapped,
differentiated) function, as `jax.debug.breakpoint`.

At trace time the breakpoint records the user's stack frames above it (their code, line and local
variables). Array-valued locals, tracers included, become the operands of a `debug.callback`, so
when the compiled program reaches that point the host receives their run-time values and opens a
small command loop over the frames, with the tracers replaced by those values. It is not Python's
pdb (the program is XLA code, not Python lines: there is no `step`/`next`); it offers pdb's
inspection commands:

    p EXPR / pp EXPR   evaluate an expression in the current frame and print it (repr / pformat)
    EXPR               the same as `p EXPR`
    u(p) / d(own)      move to the caller's / callee's frame
    w(here), bt        print the stack as a traceback, innermost frame last
    l(ist) / ll        source around the current line / the whole function
    c(ont(inue))       leave the debugger; the program goes on
    q(uit), EOF        leave the debugger and raise in the program (as jax's debugger)
    h(elp)             this list

It runs where the callback runs: once each time the program reaches it (once per batch element
under vmap, per iteration inside a loop body), on the thread that runs the program.
"""

from __future__ import annotations

import cmd
import inspect
import linecache
import pprint
import sys
import threading
import traceback

import numpy as np

from yax import errors, lax, tree_util
from yax.core.trace import Tracer
from yax.debug.printing import callback
from yax.experimental.callbacks import pure_callback
from yax.runtime.array import Array
from yax.transforms.tracing import typeof

__all__ = ["breakpoint", "DebuggerFrame", "CliDebugger"]

# several threads can reach a breakpoint at once; one terminal session at a time
_LOCK = threading.Lock()


def _is_array(x) -> bool:
    return isinstance(x, (Array, Tracer, np.ndarray, np.generic))


class DebuggerFrame:
    """A user stack frame as the debugger shows it: file, function, line and source, its
    globals, and its locals (the array-valued ones filled in with run-time values)."""

    def __init__(self, filename, function, lineno, offset, source, globals_, locals_):
        self.filename, self.function, self.lineno = filename, function, lineno
        self.offset, self.source = offset, source  # the function's first line, and its lines
        self.globals, self.locals = globals_, locals_

    @classmethod
    def from_frame(cls, frame) -> DebuggerFrame:
        code = frame.f_code
        try:
            source, first = inspect.getsourcelines(frame)
        except (OSError, TypeError):
            source, first = [], code.co_firstlineno
        return cls(code.co_filename, code.co_name, frame.f_lineno, max(first, 1), source,
                   frame.f_globals, dict(frame.f_locals))


def _user_frames(filter_frames: bool, num_frames: int | None) -> list[DebuggerFrame]:
    frames, frame = [], sys._getframe(2)  # above breakpoint() itself
    while frame is not None:
        if not (filter_frames and errors._is_internal(frame.f_code.co_filename)):
            frames.append(DebuggerFrame.from_frame(frame))
        frame = frame.f_back
    return frames[:num_frames] if num_frames is not None else frames


class CliDebugger(cmd.Cmd):
    """The command loop over `frames` (innermost first) once their values are known. Its prompt,
    greeting and listings are those of jax's `jdb`, so a session reads the same under both."""

    prompt = "(jdb) "
    intro = "Entering jdb:"
    use_rawinput = False

    def __init__(self, frames: list[DebuggerFrame], stdin=None, stdout=None):
        super().__init__(stdin=stdin or sys.stdin, stdout=stdout or sys.stdout)
        self.frames, self.index, self.quit_requested = frames, 0, False

    # ------------------------------------------------------------------ helpers
    @property
    def frame(self) -> DebuggerFrame:
        return self.frames[self.index]

    def _say(self, text: str) -> None:
        self.stdout.write(text + "\n")

    def _eval(self, expr: str):
        return eval(expr, self.frame.globals, self.frame.locals)  # noqa: S307 (a debugger)

    def _line(self, f: DebuggerFrame, n: int) -> str:
        return linecache.getline(f.filename, n).rstrip()

    def _show_context(self, before: int, after: int) -> None:
        """`> file(line)`, then the source from `before` lines above to `after` below, the
        current line marked `->`."""
        f = self.frame
        self._say(f"> {f.filename}({f.lineno})")
        first = max(f.lineno - before, f.offset)
        last = min(f.lineno + after, f.offset + max(len(f.source) - 1, 0))
        for n in range(first, last + 1):
            self._say(("->  " if n == f.lineno else "    ") + self._line(f, n))

    def _show_lines(self, first: int, last: int) -> None:
        f = self.frame
        for n in range(first, last + 1):
            text = linecache.getline(f.filename, n)
            if not text:
                break
            mark = "->" if n == f.lineno else "  "
            self.stdout.write(f"{n:4d} {mark} {text.rstrip()}\n")

    def _show_error(self) -> None:
        self._say("*** " + traceback.format_exception_only(*sys.exc_info()[:2])[-1].strip())

    # ------------------------------------------------------------------ commands
    def default(self, line: str) -> None:
        self.do_p(line)

    def emptyline(self) -> None:  # unlike cmd's default, an empty line does not repeat
        return None

    def do_p(self, arg: str) -> None:
        """p EXPR: print repr(EXPR) evaluated in the current frame."""
        try:
            self._say(repr(self._eval(arg)))
        except Exception:  # noqa: BLE001  (the user's expression; show its error, stay)
            self._show_error()

    def do_pp(self, arg: str) -> None:
        """pp EXPR: pretty-print EXPR evaluated in the current frame."""
        try:
            self._say(pprint.pformat(self._eval(arg)))
        except Exception:  # noqa: BLE001
            self._show_error()

    def do_up(self, arg: str) -> None:
        """u(p): to the caller's frame."""
        if self.index + 1 >= len(self.frames):
            self._say("At topmost frame.")
        else:
            self.index += 1
        self._show_context(3, 2)

    def do_down(self, arg: str) -> None:
        """d(own): to the callee's frame."""
        if self.index == 0:
            self._say("At bottommost frame.")
        else:
            self.index -= 1
        self._show_context(3, 2)

    def do_where(self, arg: str) -> None:
        """w(here): the stack as a traceback, innermost frame last."""
        lines = ["Traceback:"]
        for f in reversed(self.frames):
            lines.append(f'  File "{f.filename}", line {f.lineno}')
            lines.append("    " + (self._line(f, f.lineno).strip() or "<no source>"))
        self._say("\n".join(lines))

    def do_list(self, arg: str) -> None:
        """l(ist): the source lines around the current line."""
        self._show_context(6, 5)

    def do_longlist(self, arg: str) -> None:
        """ll: the whole source of the current function, with line numbers."""
        f = self.frame
        self._show_lines(f.offset, f.offset + max(len(f.source) - 1, 0))

    def do_continue(self, arg: str) -> bool:
        """c(ont(inue)): leave the debugger; the program goes on."""
        return True

    def do_quit(self, arg: str) -> bool:
        """q(uit): leave the debugger and stop the program with an error."""
        self.quit_requested = True
        return True

    def do_help(self, arg: str) -> None:
        self._say(__doc__.split("pdb's\ninspection commands:\n\n")[1].split("\n\n")[0])

    do_u, do_d, do_w, do_bt, do_l, do_ll = do_up, do_down, do_where, do_where, do_list, do_longlist
    do_c = do_cont = do_continue
    do_q = do_exit = do_EOF = do_quit  # noqa: N815 (cmd's name for end of input)
    do_h = do_help


def _run_debugger(frames: list[DebuggerFrame], **kwargs) -> None:
    with _LOCK:
        debugger = CliDebugger(frames, **kwargs)
        debugger.cmdloop()
    if debugger.quit_requested:
        # jax's debugger quits with SystemExit, which its runtime reports as a JaxRuntimeError
        raise errors.JaxRuntimeError("quit from debug.breakpoint: the program stops here")


def breakpoint(*, backend: str | None = None, filter_frames: bool = True,  # noqa: A001
               num_frames: int | None = None, ordered: bool = False, token=None, **kwargs):
    """Stop at this point of the program on the host, in a pdb-style command loop over the
    calling frames with their run-time values (see the module docstring for the commands).

    backend: only "cli" (or None) exists in yax. filter_frames: hide yax's own frames.
    num_frames: how many frames (innermost first) to offer. ordered: order it with other
    ordered callbacks. token: instead of ordering, a pytree the breakpoint waits for and
    returns unchanged (use the result, or the program may drop the stop). kwargs: `stdin`,
    `stdout` of the command loop (default: the process's).
    """
    if backend not in (None, "cli"):
        raise ValueError(f"debug.breakpoint: unknown debugger backend {backend!r}; yax has "
                         "'cli' only")
    if token is not None and ordered:
        raise ValueError("`ordered` and `token` are mutually exclusive arguments.")
    frames = _user_frames(filter_frames, num_frames)
    # the array-valued locals of every frame travel as the callback's operands
    slots = [(i, name) for i, f in enumerate(frames) for name, v in f.locals.items()
             if _is_array(v)]
    operands = [frames[i].locals[name] for i, name in slots]

    def at_run_time(*values):
        shown = [DebuggerFrame(f.filename, f.function, f.lineno, f.offset, f.source, f.globals,
                               dict(f.locals)) for f in frames]
        for (i, name), v in zip(slots, values, strict=True):
            shown[i].locals[name] = v
        _run_debugger(shown, **kwargs)

    if token is None:
        callback(at_run_time, *operands, ordered=ordered)
        return None
    leaves, tree = tree_util.tree_flatten(token)
    leaves = lax.stop_gradient(leaves)

    def pass_through(*args):
        at_run_time(*args[len(leaves):])
        return args[:len(leaves)]
    shapes = [typeof(x) for x in leaves]
    out = pure_callback(pass_through, shapes, *leaves, *lax.stop_gradient(operands),
                        vmap_method="sequential")
    return tree_util.tree_unflatten(tree, list(out))
