"""The module objects that stand for `jax.*` modules in alias mode (see yax/_alias.py).

A facade is a fresh module named with the jax name (`jax.numpy`), holding the public names of
the yax module it stands for (`yax.numpy`). It is a separate object, never the yax module
itself, so that what the import system and libraries write on it (`jax.flatten_util` set on
the `jax` facade after that import, chex's `jax.jit = fake_jit`) never changes yax's own
modules. A name the yax module lacks raises an AttributeError naming the jax name, the yax
module it was looked up in, and the closest names yax offers there.
"""

from __future__ import annotations

import difflib
import importlib
import types

from yax import errors

DOCS_PAGE = "docs/ecosystem.md"

# what a facade never copies from its yax module: the module's own identity
_IDENTITY = frozenset({"__name__", "__spec__", "__loader__", "__path__", "__file__",
                       "__cached__", "__package__", "__getattr__", "__dir__", "__builtins__"})


_ABSENT = object()


class NotProvidedImportError(ImportError):
    """`from jax.X import name` in alias mode where yax provides no `name` under `jax.X`."""


class JaxFacade(types.ModuleType):
    """`jax.<name>` in alias mode: the names of one yax module (or of a dict of names)."""

    def __init__(self, jax_name: str, source, *, overrides: dict | None = None,
                 children: tuple[str, ...] = ()):
        super().__init__(jax_name)
        self.__dict__["_yax_source"] = source
        self.__dict__["_yax_children"] = children
        names = vars(source) if isinstance(source, types.ModuleType) else dict(source)
        for key, value in names.items():
            # yax's internal submodules stay out; jax's submodules come from the table
            if key not in _IDENTITY and not isinstance(value, types.ModuleType):
                self.__dict__[key] = value
        self.__dict__.update(overrides or {})
        self.__dict__["__path__"] = []  # a package: jax.<name>.<child> imports go to the finder

    def __getattr__(self, name: str):
        if name in self.__dict__["_yax_children"]:  # `jax.flatten_util` without its import
            return _import_child(f"{self.__name__}.{name}")
        source = self.__dict__["_yax_source"]
        if isinstance(source, types.ModuleType) and not (
                name.startswith("__") and name.endswith("__")):
            value = getattr(source, name, _ABSENT)  # a name the yax module made later
            if value is not _ABSENT and not isinstance(value, types.ModuleType):
                return value
        raise missing_attribute(self.__name__, name, source)

    def __dir__(self):
        return sorted(set(self.__dict__) | set(self.__dict__["_yax_children"]))

    def __repr__(self):
        source = self.__dict__["_yax_source"]
        what = source.__name__ if isinstance(source, types.ModuleType) else "yax"
        return f"<module {self.__name__!r} (yax alias mode: {what})>"


def _import_child(full_name: str):
    return importlib.import_module(full_name)


def missing_attribute(jax_module: str, name: str, source) -> AttributeError:
    """The error for `jax_module.name` when yax's stand-in `source` has no `name`."""
    if name.startswith("__") and name.endswith("__"):  # probes (copy, pickle, inspect)
        return AttributeError(f"module {jax_module!r} has no attribute {name!r}")
    if isinstance(source, types.ModuleType):
        listed = getattr(source, "__all__", None) or dir(source)
    else:
        listed = list(source)
    offered = sorted(n for n in listed if not n.startswith("_"))
    close = difflib.get_close_matches(name, offered, n=4, cutoff=0.6)
    where = (f"`{source.__name__}`" if isinstance(source, types.ModuleType)
             else "yax's stand-in for it")
    if close:
        hint = f"; the closest names it offers: {', '.join(close)}"
    elif offered:
        hint = (f"; it offers {len(offered)} names ({', '.join(offered[:8])}"
                f"{', ...' if len(offered) > 8 else ''})")
    else:
        hint = "; it exists only so that a library's import of it succeeds, and has no names"
    return errors.NotImplementedAttributeError(
        f"`{jax_module}.{name}` is not provided by yax: in alias mode `{jax_module}` is "
        f"{where}, which has no `{name}`{hint}. See {DOCS_PAGE} for what alias mode covers.")


def missing_from_import(facade: JaxFacade, name: str) -> ImportError:
    """The error for `from <facade> import name` when it is neither a name nor a module."""
    jax_module = facade.__name__
    reason = missing_attribute(jax_module, name, facade.__dict__["_yax_source"])
    children = facade.__dict__["_yax_children"]
    modules = f" (its modules: {', '.join(children)})" if children else ""
    error = NotProvidedImportError(
        f"cannot import name {name!r} from {jax_module!r}{modules}: {reason}")
    error.name = jax_module
    return error


def missing_module(jax_name: str, offered: list[str]) -> ModuleNotFoundError:
    """The error for `import jax_name` when alias mode has no yax module for it."""
    parent = jax_name.rpartition(".")[0]
    siblings = sorted(n.rpartition(".")[2] for n in offered if n.rpartition(".")[0] == parent)
    hint = (f"; under `{parent}` it provides {', '.join(siblings)}" if siblings else "")
    error = ModuleNotFoundError(
        f"No module named {jax_name!r}: yax's alias mode does not provide `{jax_name}`"
        f"{hint}. See {DOCS_PAGE} for the jax modules alias mode maps to yax.")
    error.name = jax_name
    return error
