"""NumPy operators and methods for `Array` and `Tracer`, installed when yax.numpy is imported.

The core classes live below yax.numpy in the dependency order, so they cannot import it; this
module attaches `x + y`, `x.sum()`, `x.T`, `x[idx]`, `x.at[idx].set(v)`, ... to both classes
with setattr. An operand that is not array-like makes an operator return NotImplemented, so
Python can try the other operand's reflected method.
"""

from __future__ import annotations

from yax import errors
from yax.core.trace import Tracer
from yax.numpy import manipulation, reductions, ufuncs
from yax.numpy._promote import is_array_like
from yax.numpy.contractions import dot, matmul
from yax.numpy.indexing import IndexUpdateHelper, getitem
from yax.numpy.setops import nonzero
from yax.runtime.array import Array

__all__: list[str] = []


def _binary_op(fn, reflected: bool = False):
    def op(self, other):
        if not is_array_like(other):
            return NotImplemented
        return fn(other, self) if reflected else fn(self, other)
    op.__name__ = fn.__name__
    return op


def _matmul(a, b):
    return matmul(a, b)


def _divmod(a, b):
    return ufuncs.divmod(a, b)


_BINARY_OPERATORS = {
    "add": ufuncs.add, "sub": ufuncs.subtract, "mul": ufuncs.multiply,
    "truediv": ufuncs.true_divide, "floordiv": ufuncs.floor_divide, "mod": ufuncs.remainder,
    "pow": ufuncs.power, "matmul": _matmul, "and": ufuncs.bitwise_and, "or": ufuncs.bitwise_or,
    "xor": ufuncs.bitwise_xor, "lshift": ufuncs.left_shift, "rshift": ufuncs.right_shift,
    "divmod": _divmod,
}
_COMPARISONS = {"eq": ufuncs.equal, "ne": ufuncs.not_equal, "lt": ufuncs.less,
                "le": ufuncs.less_equal, "gt": ufuncs.greater, "ge": ufuncs.greater_equal}
_UNARY_OPERATORS = {"neg": ufuncs.negative, "pos": ufuncs.positive, "abs": ufuncs.absolute,
                    "invert": ufuncs.invert}


def _getitem(self, idx):
    return getitem(self, idx)


def _setitem(self, idx, value):
    raise TypeError(
        f"yax arrays are immutable: `x[idx] = y` is not supported on {type(self).__name__} of "
        f"shape {self.shape}. Use the functional update `x = x.at[idx].set(y)` (or .add, .mul, "
        f".min, .max) instead.")


def _at(self):
    return IndexUpdateHelper(self)


def _reshape(self, *shape, order: str = "C"):
    """Reshape; the shape is given as varargs or as one tuple."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return manipulation.reshape(self, shape, order=order)


def _transpose(self, *axes):
    """Permute axes (reversed by default); the axes are given as varargs or one tuple."""
    if not axes or (len(axes) == 1 and axes[0] is None):
        axes = None
    elif len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return manipulation.transpose(self, axes)


def _astype(self, dtype, copy: bool = False, device=None):
    return manipulation.astype(self, dtype)


def _flatten(self, order: str = "C"):
    return manipulation.ravel(self, order=order)


def _dot(self, b, *, precision=None, preferred_element_type=None):
    return dot(self, b, precision=precision, preferred_element_type=preferred_element_type)


def _round(self, decimals: int = 0, out=None):
    return ufuncs.round(self, decimals, out)


def _python_round(self, ndigits=None):
    if ndigits is None:
        return round(float(self))  # Python's round() of a scalar gives an int
    return ufuncs.round(self, ndigits)


def _lazy(module: str, name: str):
    """A method that calls yax.numpy.<module>.<name> (imported on first use: those modules
    load after this one)."""
    def method(self, *args, **kwargs):
        import importlib
        return getattr(importlib.import_module(f"yax.numpy.{module}"), name)(self, *args,
                                                                              **kwargs)
    method.__name__ = name
    return method


def _tracer_item(self, *args):
    """`.item()` needs the value now; a traced value does not have one yet."""
    value = self.to_concrete_or_none()
    if value is None:
        raise errors.ConcretizationError(
            f".item() was called on a traced value {self.aval.str_short()} (inside a "
            f"{self._trace.name} transformation), whose value is not known while tracing. "
            f"Return the value from the jitted/transformed function and call .item() on the "
            f"result outside it, or keep computing with the array instead of a Python scalar.")
    import numpy as np
    return np.asarray(value).item(*args)


def _tracer_tolist(self):
    value = self.to_concrete_or_none()
    if value is None:
        raise errors.ConcretizationError(
            f".tolist() was called on a traced value {self.aval.str_short()} (inside a "
            f"{self._trace.name} transformation), whose value is not known while tracing. "
            f"Return the array from the transformed function and call .tolist() outside it.")
    import numpy as np
    return np.asarray(value).tolist()


def _nonzero(self, *, size=None, fill_value=None):
    return nonzero(self, size=size, fill_value=fill_value)


_LAZY_METHODS = {
    "sort": ("sorting", "sort"), "argsort": ("sorting", "argsort"),
    "trace": ("construction", "trace"), "diagonal": ("construction", "diagonal"),
    "repeat": ("rearrange", "repeat"), "searchsorted": ("searching", "searchsorted"),
    "take": ("indexing", "take"), "compress": ("rearrange", "compress"),
    "argpartition": ("searching", "argpartition"),
}

_METHODS = {
    "nonzero": _nonzero,
    **{name: _lazy(mod, fn) for name, (mod, fn) in _LAZY_METHODS.items()},
    "astype": _astype, "reshape": _reshape, "transpose": _transpose, "ravel": _flatten,
    "flatten": _flatten, "squeeze": manipulation.squeeze, "swapaxes": manipulation.swapaxes,
    "sum": reductions.sum, "prod": reductions.prod, "mean": reductions.mean,
    "var": reductions.var, "std": reductions.std, "max": reductions.max, "min": reductions.min,
    "all": reductions.all, "any": reductions.any, "argmax": reductions.argmax,
    "argmin": reductions.argmin, "cumsum": reductions.cumsum, "cumprod": reductions.cumprod,
    "ptp": reductions.ptp, "clip": ufuncs.clip, "round": _round, "dot": _dot,
    "conj": ufuncs.conjugate, "conjugate": ufuncs.conjugate,
    "__getitem__": _getitem, "__setitem__": _setitem, "__round__": _python_round,
}
_PROPERTIES = {
    "T": lambda self: manipulation.transpose(self),
    "mT": lambda self: manipulation.swapaxes(self, -1, -2),
    "real": ufuncs.real, "imag": ufuncs.imag, "at": _at,
}


def _install(cls) -> None:
    for name, fn in _BINARY_OPERATORS.items():
        setattr(cls, f"__{name}__", _binary_op(fn))
        setattr(cls, f"__r{name}__", _binary_op(fn, reflected=True))
    for name, fn in _COMPARISONS.items():
        setattr(cls, f"__{name}__", _binary_op(fn))
    for name, fn in _UNARY_OPERATORS.items():
        setattr(cls, f"__{name}__", fn)
    for name, fn in _METHODS.items():
        setattr(cls, name, fn)
    for name, fn in _PROPERTIES.items():
        setattr(cls, name, property(fn))


_install(Array)
_install(Tracer)
Tracer.item = _tracer_item
Tracer.tolist = _tracer_tolist
