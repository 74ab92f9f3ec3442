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


def _run_example(name: str, **kwargs):
    """Import examples/<name>.py (not as __main__) and call its main(**kwargs); the examples that
    switch on 64-bit mode at import have the flag restored afterwards."""
    import yax
    old = yax.config.enable_x64
    try:
        module = runpy.run_path(str(ROOT / "examples" / f"{name}.py"), run_name=name)
        return module["main"](**kwargs)
    finally:
        yax.config.update("enable_x64", old)


def test_mlp_digits_accuracy(capsys):
    acc = _run_example("mlp_digits", epochs=12)
    out = capsys.readouterr().out
    assert acc > 0.95
    match = re.search(r"test accuracy: ([0-9.]+)", out)
    assert match and float(match.group(1)) == round(acc, 4)


def test_per_example_clipping(capsys):
    result = _run_example("per_example_clipping", steps=30)
    out = capsys.readouterr().out
    assert result["vmap_matches_loop"]
    assert 0.0 < result["clipped_fraction"] < 1.0
    assert result["dp_accuracy"] > 0.8 and result["plain_accuracy"] > 0.8
    assert "DP-SGD" in out


def test_newton_hvp_converges(capsys):
    result = _run_example("newton_hvp")
    out = capsys.readouterr().out
    norms = result["logreg_norms"]
    assert norms[-1] < 1e-10 < norms[0] and len(norms) <= 10
    assert norms[-1] < result["gd_norm"]  # Newton beats gradient descent
    assert result["rosenbrock_error"] < 1e-6
    assert "newton step" in out


def test_gp_regression_fits(capsys):
    result = _run_example("gp_regression", steps=150)
    out = capsys.readouterr().out
    assert 0.07 < result["noise"] < 0.13  # the data were generated with noise 0.1
    assert result["rmse"] < 0.1
    assert "test RMSE" in out


def test_stax_digits_accuracy(capsys):
    acc = _run_example("stax_digits", epochs=8)
    out = capsys.readouterr().out
    assert acc > 0.94
    match = re.search(r"test accuracy: ([0-9.]+)", out)
    assert match and float(match.group(1)) == round(acc, 4)


def test_mixed_precision_digits(capsys):
    result = _run_example("mixed_precision_digits", epochs=8)
    out = capsys.readouterr().out
    assert result["float32_accuracy"] > 0.94
    assert abs(result["mixed_accuracy"] - result["float32_accuracy"]) <= 0.01
    assert result["steps_applied"] > 0 and result["final_loss_scale"] >= 1.0
    assert "float32 test accuracy" in out and "compute=bfloat16" in out
