"""The examples and the README's code run (docs that are executed cannot rot)."""

from __future__ import annotations

import pathlib
import re
import runpy

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_quickstart_runs(capsys):
    runpy.run_path(str(ROOT / "examples" / "quickstart.py"), run_name="__main__")
    out = capsys.readouterr().out
    assert "rows sum to one: True" in out
    assert "eager and jit agree: True" in out
    assert "stablehlo" in out and "{ lambda" in out


def test_readme_snippet_runs(capsys):
    text = (ROOT / "README.md").read_text()
    code = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    exec(compile(code, "README.md", "exec"), {})
    out = capsys.readouterr().out
    assert "[1." in out and "lambda" in out
    np.testing.assert_allclose(np.sin(np.arange(3.0)) * 2 + 1, [1.0, 2.682942, 2.818595],
                               rtol=1e-5)
