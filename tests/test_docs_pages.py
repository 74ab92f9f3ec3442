"""Every page of the documentation runs: the code blocks of each docs/*.md page are executed in
order, in one namespace per page, so a documented example cannot rot even when the site is not
built (`make docs` executes the notebook pages again, with their outputs shown).

What runs: MyST-NB code cells (```{code-cell}) and ```python fences. A cell tagged
`raises-exception` (MyST-NB's tag) must raise; a fence or cell whose first line is `# no-run`
is shown but not run (signatures, pseudo-code).
"""

from __future__ import annotations

import pathlib
import re
import subprocess
import sys

import pytest

import yax

DOCS = pathlib.Path(__file__).resolve().parent.parent / "docs"
_SKIP_DIRS = {"_build", "jupyter_execute", "_ext", "_static", "_gen"}

_BLOCK = re.compile(r"^```(\{code-cell\}[^\n]*|python)[ \t]*\n(.*?)^```[ \t]*$", re.S | re.M)


def pages() -> list[pathlib.Path]:
    return sorted(p for p in DOCS.rglob("*.md") if not _SKIP_DIRS & set(p.parts))


def code_blocks(text: str) -> list[tuple[str, bool, int]]:
    """(source, must_raise, line) for each runnable block of a page, in order."""
    out = []
    for m in _BLOCK.finditer(text):
        body = m.group(2)
        must_raise = False
        if m.group(1).startswith("{code-cell}"):
            options, body = _split_cell_options(body)
            must_raise = "raises-exception" in options
        if body.lstrip().startswith("# no-run"):
            continue
        out.append((body, must_raise, text.count("\n", 0, m.start()) + 2))
    return out


def _split_cell_options(body: str) -> tuple[str, str]:
    """A code cell's options: `:tags: [...]` lines, or a `---` YAML block, at its top."""
    lines = body.split("\n")
    if lines and lines[0].strip() == "---":
        end = lines.index("---", 1)
        return "\n".join(lines[1:end]), "\n".join(lines[end + 1:])
    i = 0
    while i < len(lines) and lines[i].startswith(":"):
        i += 1
    return "\n".join(lines[:i]), "\n".join(lines[i:])


def run_page(path: pathlib.Path) -> None:
    namespace = {"__name__": f"docs_{path.stem}"}
    for source, must_raise, line in code_blocks(path.read_text()):
        code = compile("\n" * (line - 1) + source, str(path), "exec")
        if must_raise:
            try:
                exec(code, namespace)
            except Exception:  # any error is what the page shows  # noqa: S110
                continue
            pytest.fail(f"{path.name}:{line}: a `raises-exception` cell did not raise")
        else:
            exec(code, namespace)


@pytest.fixture
def restore_config():
    old = yax.config.enable_x64
    yield
    yax.config.update("enable_x64", old)


def run_page_in_child(path: pathlib.Path) -> None:
    """A page that turns alias mode on (`yax.alias_jax()`) runs in its own process: alias mode
    lasts for the process, and the other tests need the real jax as their oracle."""
    program = (f"import pathlib, sys; sys.path.insert(0, {str(DOCS.parent)!r}); "
               f"from tests.test_docs_pages import run_page; run_page(pathlib.Path({str(path)!r}))")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{path.name} failed in its child process:\n{done.stderr}"


@pytest.mark.parametrize("path", pages(), ids=lambda p: str(p.relative_to(DOCS)))
def test_page_runs(path, restore_config, capsys):
    if "alias_jax()" in path.read_text():
        run_page_in_child(path)
    else:
        run_page(path)


def test_a_broken_block_fails(tmp_path):
    """The harness can fail: a raising block fails the page, an unraised `raises-exception`
    cell fails it too."""
    bad = tmp_path / "bad.md"
    bad.write_text("# bad\n\n```python\nimport yax.numpy as jnp\njnp.sin(undefined_name)\n```\n")
    with pytest.raises(NameError):
        run_page(bad)
    quiet = tmp_path / "quiet.md"
    quiet.write_text("```{code-cell} ipython3\n:tags: [raises-exception]\nx = 1\n```\n")
    with pytest.raises(pytest.fail.Exception):
        run_page(quiet)
