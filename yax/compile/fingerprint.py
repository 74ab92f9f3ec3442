"""A digest of what a traced program depends on in a Python function: its code, closure, defaults
and the globals it reads, so that another process can tell the function is unchanged.

The persistent program cache (`compile.program_cache`) keys a traced and compiled program by
this digest plus the call's avals, so a new process skips tracing. A wrong "unchanged" would run
a stale program, so the walk refuses (returns None) on anything it cannot vouch for:

  - user functions hash their bytecode, constants and names (nested code objects too), closure
    cells, defaults, and every global their code names, recursively into the functions and
    classes they call; library functions (stdlib, site-packages, yax) are named, plus their
    package version, unless they close over values, which are hashed;
  - immutable values hash by value (numbers, strings, tuples, dtypes), arrays by content up to
    `MAX_ARRAY_BYTES`; a user module by its source file's bytes;
  - mutable containers (list, dict, set), instances of arbitrary classes and functions that
    write globals or outer variables refuse: trace-time state or side effects could differ.
"""

from __future__ import annotations

import dis
import enum
import functools
import hashlib
import os
import sys
import sysconfig
import types

import numpy as np

from yax.core.primitive import Primitive
from yax.runtime.array import Array

MAX_ARRAY_BYTES = 16 << 20  # arrays larger than this are not hashed: the program is not cached
_MAX_NODES = 20_000
_MAX_DEPTH = 24
_STORES = {"STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF", "DELETE_DEREF"}
_LIB_DIRS = tuple({os.path.realpath(p) + os.sep for p in (
    sysconfig.get_paths().get("stdlib"), sysconfig.get_paths().get("platstdlib"),
    sysconfig.get_paths().get("purelib"), sysconfig.get_paths().get("platlib")) if p})
_YAX_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
_PRIMITIVE = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))


class Refused(Exception):
    """The walk met something whose influence on the trace it cannot vouch for."""


# A hit skips running the function's Python, so a function that may act on the world while it
# is traced (print, log, read the clock or a file, draw a Python random number) is never
# cached this way: under jax it runs once per process, and so it must here.
_SIDE_EFFECT_BUILTINS = frozenset({
    "print", "input", "open", "breakpoint", "exec", "eval", "compile", "globals", "locals",
    "vars", "setattr", "delattr", "__import__", "id", "hash"})
_SIDE_EFFECT_MODULES = frozenset({
    "time", "random", "os", "sys", "io", "logging", "warnings", "datetime", "uuid", "secrets",
    "subprocess", "socket", "threading", "multiprocessing", "tempfile", "shutil", "pathlib",
    "pdb", "sqlite3", "urllib", "http", "pickle", "shelve", "tqdm"})


def _refuse_side_effects(module: str | None) -> None:
    if module and (module.split(".")[0].lstrip("_") in _SIDE_EFFECT_MODULES
                   or module.startswith("numpy.random")):
        raise Refused(f"code from {module}, which may have side effects while tracing")


def function_digest(fun) -> bytes | None:
    """A digest of `fun` (and what it reads), or None where it cannot be trusted."""
    try:
        w = _Walker()
        w.value(fun, 0)
        return w.h.digest()
    except (Refused, RecursionError):
        return None


def value_digest(value) -> bytes | None:
    """A digest of a static argument's value (None: not one the walk can vouch for)."""
    return function_digest(value)


class _Walker:
    def __init__(self):
        self.h = hashlib.sha256()
        self.seen: dict = {}  # id -> visit number, for cycles (recursive functions)
        self.keep: list = []  # keeps visited objects alive so ids stay unique

    def emit(self, *parts) -> None:
        for p in parts:
            self.h.update(str(p).encode() + b"\0")

    def value(self, v, depth: int) -> None:
        if depth > _MAX_DEPTH or len(self.keep) > _MAX_NODES:
            raise Refused("too deep or too large")
        t = type(v)
        if t in _PRIMITIVE:
            self.emit("p", t.__name__, repr(v))
            return
        back = self.seen.get(id(v))
        if back is not None:
            self.emit("ref", back)
            return
        self.seen[id(v)] = len(self.seen)
        self.keep.append(v)
        d = depth + 1
        if t is tuple:
            self.emit("tuple", len(v))
            for x in v:
                self.value(x, d)
        elif t is frozenset:
            self.emit("frozenset", len(v))
            for r in sorted(self._sub(x, d) for x in v):
                self.emit(r)
        elif t is np.ndarray or t is Array:
            self.array(v)
        elif isinstance(v, np.generic):
            self.emit("npscalar", v.dtype.str, v.tobytes().hex())
        elif t is np.dtype or isinstance(v, np.dtype):
            self.emit("dtype", v.str, v.name)
        elif t is types.FunctionType:
            self.function(v, d)
        elif t is types.MethodType:
            self.emit("method")
            self.value(v.__func__, d)
            self.value(v.__self__, d)
        elif t is functools.partial:
            self.emit("partial")
            self.value(v.func, d)
            self.value(v.args, d)
            self.value(tuple(sorted(v.keywords.items())), d)
        elif t is types.ModuleType:
            self.module(v)
        elif isinstance(v, type):
            self.cls(v, d)
        elif isinstance(v, enum.Enum):
            self.emit("enum", v.name)
            self.value(type(v), d)
        elif isinstance(v, (types.BuiltinFunctionType, np.ufunc)) or t.__name__ in (
                "method_descriptor", "wrapper_descriptor", "builtin_function_or_method"):
            self.named(v)
        elif t.__name__ == "JitFunction" and t.__module__.startswith("yax."):
            self.jitted(v, d)
        elif isinstance(v, Primitive):  # made once at import; its name says which it is
            self.emit("primitive", type(v).__module__, type(v).__qualname__, v.name)
        elif _is_module_attribute(v):  # a library's named object (a ufunc, a custom_jvp)
            self.named(v)
        else:
            raise Refused(f"a {t.__module__}.{t.__qualname__} value")

    def jitted(self, v, depth: int) -> None:
        """A `yax.jit` function: its options, then the function it wraps."""
        if v._sharded:
            raise Refused("a sharded jit")
        self.emit("jit", sorted(v._static_argnums), sorted(v._static_argnames),
                  sorted(v._donate_argnums), sorted(v._donate_argnames), v._inline,
                  repr(sorted((v._compiler_options or {}).items())))
        self.value(v._fun, depth)

    def _sub(self, v, depth) -> str:
        sub = _Walker()
        sub.value(v, depth)
        return sub.h.hexdigest()

    def array(self, v) -> None:
        if type(v) is Array:
            if v.is_deleted():
                raise Refused("a deleted Array")
            weak = v.aval.weak_type
            v = np.asarray(v)
        else:
            weak = False
        if v.nbytes > MAX_ARRAY_BYTES or v.dtype.hasobject:
            raise Refused("an array too large to hash")
        self.emit("array", v.dtype.str, v.shape, weak,
                  hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest())

    def named(self, v) -> None:
        module = getattr(v, "__module__", None) or getattr(type(v), "__module__", "")
        name = getattr(v, "__qualname__", None) or getattr(v, "__name__", None)
        if not name or not _is_library_module_name(module):
            raise Refused("an unnamed callable")
        _refuse_side_effects(module)
        self.emit("named", module, name, _package_version(module))

    def function(self, f, depth: int) -> None:
        module = f.__module__ or ""
        # a library's own function: its name (and version) says what it is, unless it is a
        # closure made at run time (`yax.grad(loss)`), whose cells are hashed below
        if _is_library_module_name(module) and (_is_module_attribute(f) or not (
                f.__closure__ or f.__defaults__ or f.__kwdefaults__)):
            _refuse_side_effects(module)
            self.emit("libfn", module, f.__qualname__, _package_version(module))
            return
        code = f.__code__
        self.emit("fn", f.__qualname__)
        self.code(code, f.__globals__, depth, top=True)
        for cell in f.__closure__ or ():
            try:
                contents = cell.cell_contents
            except ValueError:  # an empty cell (a name assigned later in the outer function)
                self.emit("emptycell")
                continue
            if type(contents) is types.ModuleType:
                self.module(contents, _all_names(code), depth)
            else:
                self.value(contents, depth)
        self.value(f.__defaults__, depth)
        self.value(tuple(sorted((f.__kwdefaults__ or {}).items())), depth)

    def code(self, code, globals_, depth: int, top: bool = False) -> None:
        if _writes_outside(code, top):
            raise Refused("a function that writes globals or outer variables")
        self.emit("code", code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount,
                  code.co_flags, code.co_code.hex(), code.co_names, code.co_varnames,
                  code.co_freevars, code.co_cellvars)
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                self.code(c, globals_, depth)
            else:
                self.value(c, depth)
        if _IMPORT_NAME in _opcodes(code):  # `import time` inside the function
            for ins in dis.get_instructions(code):
                if ins.opname == "IMPORT_NAME":
                    _refuse_side_effects(ins.argval)
        builtins = globals_.get("__builtins__", {})
        builtins = builtins if isinstance(builtins, dict) else vars(builtins)
        for name in code.co_names:
            if name in globals_:
                self.emit("global", name)
                value = globals_[name]
                if type(value) is types.ModuleType:
                    self.module(value, code.co_names, depth)
                else:
                    self.value(value, depth)
            elif name in builtins:
                if name in _SIDE_EFFECT_BUILTINS:
                    raise Refused(f"a call of {name}(), which acts while tracing")
                self.emit("builtin", name)
                self.value(builtins[name], depth)
            # else: an attribute name only; its value comes from an object hashed elsewhere

    def module(self, m, names=(), depth: int = 0) -> None:
        """A library module by name and version; a user module by its source and the values
        of the attributes the reading code names (`settings.LR`, which may be set at run
        time)."""
        name = m.__name__
        if _is_library_module_name(name):
            _refuse_side_effects(name)
            for attr in names:  # `np.random.normal`: the submodule the code reaches
                sub = getattr(m, attr, None) if attr in vars(m) else None
                if type(sub) is types.ModuleType:
                    _refuse_side_effects(sub.__name__)
            self.emit("libmod", name, _package_version(name))
            return
        path = getattr(m, "__file__", None)
        if not path or not path.endswith(".py"):
            raise Refused("a module without source")
        self.emit("usermod", name, _file_digest(path))
        attrs = vars(m)
        for attr in names:
            if attr in attrs:
                self.emit("modattr", attr)
                value = attrs[attr]
                if type(value) is types.ModuleType:
                    self.module(value, names, depth + 1)
                else:
                    self.value(value, depth + 1)

    def cls(self, c, depth: int) -> None:
        if _is_library_module_name(c.__module__):
            self.emit("libcls", c.__module__, c.__qualname__, _package_version(c.__module__))
            return
        self.emit("cls", c.__module__, c.__qualname__)
        for base in c.__bases__:
            self.value(base, depth)
        for name, attr in sorted(vars(c).items()):
            if name in ("__dict__", "__weakref__", "__doc__", "__module__", "__qualname__",
                        "__annotations__", "__slots__", "__firstlineno__",
                        "__static_attributes__", "__match_args__", "__orig_bases__",
                        "__parameters__", "__abstractmethods__", "_abc_impl",
                        "__dataclass_params__", "__dataclass_fields__"):
                continue
            self.emit("attr", name)
            if isinstance(attr, (classmethod, staticmethod)):
                attr = attr.__func__
            elif isinstance(attr, property):
                attr = (attr.fget, attr.fset, attr.fdel)
            self.value(attr, depth)


def _all_names(code) -> tuple:
    """The names `code` and the code nested in it use (globals and attributes)."""
    names = list(code.co_names)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            names += _all_names(c)
    return tuple(dict.fromkeys(names))


def _is_module_attribute(v) -> bool:
    """Whether `v` is what its library module names it (so naming it says what it is)."""
    module, name = getattr(v, "__module__", None), getattr(v, "__name__", None)
    if type(module) is not str or type(name) is not str or not _is_library_module_name(module):
        return False
    return getattr(sys.modules.get(module), name, None) is v


# Disassembling is slow (a new process's first cache lookup hashes every function it reaches):
# the opcodes are every other byte of the wordcode, so a byte scan says whether a function
# has any instruction of interest at all, and only then is it disassembled.
_IMPORT_NAME = dis.opmap["IMPORT_NAME"]
_WRITES = tuple(dis.opmap[n] for n in ("STORE_GLOBAL", "DELETE_GLOBAL", "STORE_DEREF",
                                       "DELETE_DEREF"))


def _opcodes(code) -> bytes:
    return code.co_code[::2]


@functools.lru_cache(maxsize=4096)
def _writes_outside(code, top: bool) -> bool:
    """Whether `code` assigns a global, or (for the outermost function) a variable of an
    enclosing function: trace-time side effects a cache hit would skip."""
    opcodes = _opcodes(code)
    if not any(op in opcodes for op in _WRITES):
        return False
    for ins in dis.get_instructions(code):
        if ins.opname in ("STORE_GLOBAL", "DELETE_GLOBAL"):
            return True
        if ins.opname in ("STORE_DEREF", "DELETE_DEREF") and ins.argval in code.co_freevars:
            # a nested function writing its parent's cell is the parent's own business, but the
            # function being traced writing a cell of its definer leaks state across calls
            if top:
                return True
    return False


@functools.lru_cache(maxsize=1024)
def _is_library_module_name(name: str | None) -> bool:
    if not name:
        return False
    top = name.split(".")[0]
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        return True
    if top == "yax":
        return True
    mod = sys.modules.get(top)
    path = getattr(mod, "__file__", None) if mod is not None else None
    if path is None:
        return False
    path = os.path.realpath(path)
    return any(path.startswith(d) for d in _LIB_DIRS) and not path.startswith(_YAX_DIR)


@functools.lru_cache(maxsize=1024)
def _package_version(name: str) -> str:
    top = (name or "").split(".")[0]
    if top == "yax":
        return yax_source_identity()
    mod = sys.modules.get(top)
    return str(getattr(mod, "__version__", "")) if mod is not None else ""


_identity: list = []  # [identity], once computed


def yax_source_identity() -> str:
    """yax's version, plus (for a source checkout, whose code changes without a new version)
    the size and modification time of every yax module imported: editing yax invalidates
    entries. Computed once per process, at its first use (a program imports the same modules
    before its first jitted call, so processes agree), and so only a few milliseconds."""
    # yax._version is on the package's top floor, above this module's: read when needed
    from yax._version import __version__
    if _identity:
        return _identity[0]
    if any(_YAX_DIR.startswith(d) for d in _LIB_DIRS):
        return __version__
    files = sorted(f for name, m in list(sys.modules.items())
                   if (name == "yax" or name.startswith("yax."))
                   and (f := getattr(m, "__file__", None)))
    h = hashlib.sha256()
    for path in files:
        try:
            st = os.stat(path)
        except OSError:
            continue
        h.update(f"{path[len(_YAX_DIR):]}:{st.st_size}:{st.st_mtime_ns}\0".encode())
    identity = f"{__version__}+{h.hexdigest()[:16]}"
    _identity.append(identity)
    return identity


_file_digests: dict = {}


def _file_digest(path: str) -> str:
    try:
        st = os.stat(path)
        stamp = (st.st_size, st.st_mtime_ns)
        hit = _file_digests.get(path)
        if hit is not None and hit[0] == stamp:
            return hit[1]
        with open(path, "rb") as f:
            digest = hashlib.sha256(f.read()).hexdigest()
    except OSError:
        raise Refused("an unreadable module file") from None
    _file_digests[path] = (stamp, digest)
    return digest
