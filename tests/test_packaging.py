"""yax installs as users install it: a wheel built from this tree, installed into a fresh virtual
environment, imports and runs with only its declared dependencies.

The fresh environment borrows the test environment's already-installed dependencies (numpy, jax,
...) through a path entry instead of downloading them again, but never its copy of yax: only the
wheel's files can be imported as `yax`.
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys
import sysconfig
import venv
import zipfile

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    out = tmp_path_factory.mktemp("wheel")
    # no build isolation: the test extra installs a setuptools that builds wheels by itself
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "-w", str(out), str(ROOT)],
                   check=True, capture_output=True, timeout=600)
    (path,) = out.glob("yax-*.whl")
    return path


def test_wheel_holds_every_module_and_the_metadata(wheel):
    import yax
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        meta = z.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    sources = {str(p.relative_to(ROOT)) for p in (ROOT / "yax").rglob("*.py")
               if "__pycache__" not in p.parts}
    assert sources <= names, sorted(sources - names)[:10]
    assert f"Version: {yax.__version__}" in meta
    requires = [line for line in meta.splitlines() if line.startswith("Requires-Dist:")]
    runtime = [r for r in requires if "extra ==" not in r]
    assert not any("scikit-learn" in r for r in runtime), runtime  # only the examples need it
    assert any(r.startswith("Requires-Dist: jax") for r in runtime)
    assert "License" in meta and "Apache" in meta


def test_wheel_imports_in_a_fresh_venv(wheel, tmp_path):
    env_dir = tmp_path / "venv"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # only the wheel's yax
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    # this environment's pip installs into the new one (`pip --python`), as `pip install` would
    subprocess.run([sys.executable, "-m", "pip", "--python", str(py), "install", "--quiet",
                    "--no-deps", "--no-index", str(wheel)], check=True, capture_output=True,
                   timeout=300, env=env)
    # dependencies from this environment (a bare path entry: its .pth hooks, including the
    # editable install of this tree, are not run)
    site = pathlib.Path(subprocess.check_output(
        [str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        text=True).strip())
    (site / "zz_test_deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    code = ("import yax, yax.numpy as jnp; "
            "assert '/venv/' in yax.__file__, yax.__file__; "
            "print(yax.__version__, float(yax.jit(yax.grad(lambda x: jnp.sum(x ** 2)))"
            "(jnp.ones(3))[0]))")
    out = subprocess.run([str(py), "-c", code], cwd=tmp_path, env=env, capture_output=True,
                         text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    import yax
    assert out.stdout.split() == [yax.__version__, "2.0"]
