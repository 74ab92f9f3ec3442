"""Alias mode: `import jax` (and every `import jax.X`) resolves to yax's modules.

    yax.alias_jax()          # before the libraries are imported
    import optax, flax       # they see yax under the name jax

or from the shell, `python -m yax script.py` / `python -m yax -m pytest tests/`.

How it stays safe:
- The table ALIASES says which yax module stands for each jax module; nothing outside it is
  guessed. A `sys.meta_path` finder placed first serves those names as facades
  (yax/_alias_facade.py): fresh modules with the jax name and the yax module's names, so what
  libraries write on them never reaches yax itself. A jax module the table lacks fails with
  ModuleNotFoundError naming it and what yax has under its parent package.
- yax's runtime is the only part of yax built on the real jax. `import yax` imports it (and
  with it the real jax) before any alias exists, and its modules hold their references. On
  installation every real `jax*` entry leaves `sys.modules` for a private stash, so no library
  can reach a real jax module by any import path. Code of the real jax itself (and of
  yax/runtime) that imports lazily is recognised by the file of the importing frame and still
  gets the real module. jaxlib is never aliased.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import os
import sys

from yax import _alias_facade, _alias_src
from yax._alias_table import ALIASES, JAX_VERSION, SOURCE_SHIMS

__all__ = ["alias_jax", "is_aliased", "JAX_VERSION"]

_RUNTIME_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "runtime")
_THIS_FILES = {os.path.abspath(__file__), os.path.abspath(_alias_facade.__file__)}


class _State:
    finder: _AliasFinder | None = None
    real_modules: dict = {}  # the real jax's modules, by name, as they were at installation
    real_roots: tuple[str, ...] = ()  # directories whose code keeps the real jax
    real_specs: dict = {}
    served_real: set = set()  # real modules handed to real jax code since the last sweep


def is_aliased() -> bool:
    """Whether `alias_jax()` has run in this process."""
    return _State.finder is not None


def alias_jax() -> None:
    """Make `import jax` and `import jax.X` give yax's modules from now on (idempotent).

    Call it before the libraries that import jax are imported: a module that already holds the
    real jax keeps it. yax's runtime keeps the real jax and jaxlib it runs on.
    """
    if is_aliased():
        return
    real = {name: mod for name, mod in sys.modules.items() if _is_jax_name(name)}
    root = real.get("jax")
    if root is None or not getattr(root, "__file__", None):
        raise ImportError("alias_jax: the real jax is not imported; import yax first")
    _State.real_modules = real
    _State.real_specs = {name: getattr(mod, "__spec__", None) for name, mod in real.items()}
    _State.real_roots = (os.path.dirname(os.path.abspath(root.__file__)) + os.sep,
                         _RUNTIME_DIR + os.sep)
    for name in real:
        del sys.modules[name]
    _State.finder = _AliasFinder()
    sys.meta_path.insert(0, _State.finder)


def _is_jax_name(name: str) -> bool:
    return name == "jax" or name.startswith("jax.")


def _caller_keeps_real_jax() -> bool:
    """Whether the import being resolved comes from the real jax's own code or yax/runtime."""
    frame = sys._getframe(2)
    while frame is not None:
        filename = frame.f_code.co_filename
        if not (filename.startswith("<frozen importlib") or filename in _THIS_FILES):
            return os.path.abspath(filename).startswith(_State.real_roots)
        frame = frame.f_back
    return False


def _in_from_import() -> bool:
    """Whether the import system is resolving the names of a `from package import name`."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_code.co_filename.startswith("<frozen importlib"):
        if frame.f_code.co_name == "_handle_fromlist":
            return True
        frame = frame.f_back
    return False


def real_module(name: str):
    """The real jax's module `name` as it was when the alias was installed (None if absent)."""
    return _State.real_modules.get(name)


class _AliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Serves `jax.*` from the table; everything else is left to the other finders."""

    def find_spec(self, fullname, path=None, target=None):
        if not _is_jax_name(fullname):
            return None
        _sweep_real_modules()
        if fullname in ALIASES or fullname in SOURCE_SHIMS:
            return importlib.machinery.ModuleSpec(fullname, self, is_package=True)
        if _caller_keeps_real_jax():
            return self._real_spec(fullname)
        parent = sys.modules.get(fullname.rpartition(".")[0])
        if isinstance(parent, _alias_facade.JaxFacade) and _in_from_import():
            # `from jax.numpy import sinn`: the name is neither a facade's attribute nor a
            # module; Python would swallow a ModuleNotFoundError here and raise its own
            # message, which names neither yax nor what it offers
            raise _alias_facade.missing_from_import(parent, fullname.rpartition(".")[2])
        raise _alias_facade.missing_module(fullname, [*ALIASES, *SOURCE_SHIMS])

    def _real_spec(self, fullname):
        if fullname in _State.real_modules:
            return importlib.machinery.ModuleSpec(fullname, _RealLoader(), is_package=True)
        for finder in sys.meta_path:  # a real jax module not imported before: load it as usual
            if finder is not self and hasattr(finder, "find_spec"):
                spec = finder.find_spec(fullname, _real_path(fullname), None)
                if spec is not None:
                    return spec
        return None

    def create_module(self, spec):
        return _build_facade(spec.name)

    def exec_module(self, module):
        pass


def _real_path(fullname: str):
    parent = _State.real_modules.get(fullname.rpartition(".")[0])
    return getattr(parent, "__path__", None)


class _RealLoader(importlib.abc.Loader):
    """Hands a stashed real jax module back to real jax code that imports it lazily."""

    def create_module(self, spec):
        _State.served_real.add(spec.name)
        return _State.real_modules[spec.name]

    def exec_module(self, module):
        module.__spec__ = _State.real_specs.get(module.__name__, module.__spec__)


def _sweep_real_modules() -> None:
    """Take back out of `sys.modules` (and off the facades) the real modules that the import
    system put there when real jax code imported them lazily, so no library finds them."""
    while _State.served_real:
        name = _State.served_real.pop()
        module = sys.modules.get(name)
        if module is not None and module is _State.real_modules.get(name):
            del sys.modules[name]
        parent = sys.modules.get(name.rpartition(".")[0])
        child = name.rpartition(".")[2]
        if isinstance(parent, _alias_facade.JaxFacade) and parent.__dict__.get(child) is module:
            del parent.__dict__[child]


def _build_facade(jax_name: str):
    children = tuple(sorted(n[len(jax_name) + 1:] for n in (*ALIASES, *SOURCE_SHIMS)
                            if n.rpartition(".")[0] == jax_name))
    if jax_name in SOURCE_SHIMS:
        return _alias_facade.JaxFacade(jax_name, _alias_src.names(jax_name), children=children)
    source = importlib.import_module(ALIASES[jax_name])
    overrides = _alias_src.extra_names(jax_name)
    if jax_name == "jax":
        overrides = {**overrides, "__version__": JAX_VERSION,
                     "__version_info__": tuple(int(p) for p in JAX_VERSION.split("."))}
    return _alias_facade.JaxFacade(jax_name, source, overrides=overrides, children=children)
