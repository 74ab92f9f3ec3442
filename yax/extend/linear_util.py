"""`jax.extend.linear_util`: jax's wrapper of functions under transformation (`WrappedFun`).

A WrappedFun is a Python callable plus a stack of transformations that libraries written
against jax's internals add to it before calling it:

    @transformation2
    def scale_result(f, factor, *args):      # f: the function below this transformation
        return f(*args) * factor
    wrapped = scale_result(wrap_init(fn), 3.0)   # a new WrappedFun; `fn` is not called yet
    wrapped.call_wrapped(x)                      # scale_result(fn, 3.0, x)

`transformation_with_aux2` also gives the transformation a store for an auxiliary output,
read after the call through the returned thunk; `transformation`/`transformation_with_aux` are
the older generator-based form (the generator receives the arguments, yields the arguments to
call with, receives the result and yields the final one). `cache(call)` memoizes a function of
a WrappedFun on its core function, transformation stack and arguments.

yax's own transformations take plain callables; a WrappedFun is one (calling it calls
`call_wrapped`), so it can be passed to them directly.
"""

from __future__ import annotations

import functools
import weakref

__all__ = ["StoreException", "WrappedFun", "cache", "merge_linear_aux", "transformation",
           "transformation2", "transformation_with_aux", "transformation_with_aux2",
           "wrap_init"]


class StoreException(Exception):
    """A store read while empty, or written twice."""


_EMPTY = object()


class Store:
    """One auxiliary output of a transformation: written once per call, then read."""

    __slots__ = ("_value",)

    def __init__(self):
        self._value = _EMPTY

    def store(self, value) -> None:
        if self._value is not _EMPTY:
            raise StoreException("Store occupied")
        self._value = value

    def reset(self) -> None:
        self._value = _EMPTY

    @property
    def val(self):
        if self._value is _EMPTY:
            raise StoreException("Store empty")
        return self._value

    def __bool__(self) -> bool:
        return self._value is not _EMPTY


class EqualStore(Store):
    """A store that may be written again with an equal value (retracing the same function)."""

    __slots__ = ()

    def store(self, value) -> None:
        if self._value is _EMPTY:
            self._value = value
            return
        try:
            same = bool(self._value == value)
        except Exception:  # noqa: BLE001  (values without a truth-valued ==: not equal)
            same = False
        if not same:
            raise StoreException("Store occupied with not-equal value")


class WrappedFun:
    """A function `f` with the transformations to apply when it is called (innermost last in
    `transforms`), their stores, extra keyword `params` for `f`, and jax's debug info."""

    def __init__(self, f, params=(), debug_info=None, *, transforms=(), stores=(),
                 f_transformed=None):
        self.f, self.params, self.debug_info = f, tuple(params), debug_info
        self.transforms, self.stores = tuple(transforms), tuple(stores)
        self.f_transformed = f_transformed or (
            lambda *args, **kwargs: f(*args, **dict(self.params), **kwargs))
        self.in_type = None

    @property
    def __name__(self):
        return getattr(self.f, "__name__", "<unnamed wrapped function>")

    def wrap(self, gen, gen_static_args, out_store) -> WrappedFun:
        """This function with one more transformation `gen` on top (and its store)."""
        below = self.f_transformed
        if out_store is None:
            top = functools.partial(gen, below, *gen_static_args)
        else:
            top = functools.partial(gen, below, out_store, *gen_static_args)
        return WrappedFun(self.f, self.params, self.debug_info,
                          transforms=((gen, tuple(gen_static_args)),) + self.transforms,
                          stores=(out_store,) + self.stores, f_transformed=top)

    def populate_stores(self, stores) -> None:
        """Fill this function's stores from another call's (a cache hit)."""
        for mine, theirs in zip(self.stores, stores, strict=True):
            if mine is not None:
                mine.store(theirs.val)

    def call_wrapped(self, *args, **kwargs):
        return self.f_transformed(*args, **kwargs)

    def __call__(self, *args, **kwargs):
        return self.call_wrapped(*args, **kwargs)

    def replace_debug_info(self, debug_info) -> WrappedFun:
        return WrappedFun(self.f, self.params, debug_info, transforms=self.transforms,
                          stores=self.stores, f_transformed=self.f_transformed)

    def __hash__(self):
        return hash((self.f, self.transforms, self.params))

    def __eq__(self, other):
        return (isinstance(other, WrappedFun) and self.f == other.f
                and self.transforms == other.transforms and self.params == other.params)

    def __repr__(self):
        stack = "".join(f"{i}   : {getattr(g, '__name__', g)}   {args}\n"
                        for i, (g, args) in enumerate(self.transforms))
        return f"Wrapped function:\n{stack}Core: {self.__name__}\n"


def wrap_init(f, params=None, *, debug_info=None) -> WrappedFun:
    """`f` as a WrappedFun with no transformations (`params`: extra keyword arguments)."""
    return WrappedFun(f, tuple((params or {}).items()), debug_info)


def _curried(transform):
    """`transform(gen)` may be used as a decorator: `transform(gen)(fun, *args)`."""
    @functools.wraps(transform)
    def curried(gen, *rest, **kwargs):
        if rest:
            return transform(gen, *rest, **kwargs)
        return functools.wraps(gen)(lambda fun, *args, **kw: transform(gen, fun, *args, **kw))
    return curried


@_curried
def transformation2(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """`fun` with `gen(f_below, *gen_static_args, *call_args)` run on each call."""
    return fun.wrap(gen, gen_static_args, None)


@_curried
def transformation_with_aux2(gen, fun: WrappedFun, *gen_static_args,
                             use_eq_store: bool = False, unk_names: bool = False):
    """`(wrapped, aux_thunk)`: `gen(f_below, store, *gen_static_args, *call_args)` runs on each
    call and may `store.store(aux)`; `aux_thunk()` reads it after the call."""
    del unk_names  # jax's debug-info option
    store = EqualStore() if use_eq_store else Store()
    return fun.wrap(gen, gen_static_args, store), lambda: store.val


def _drive(gen_inst, f):
    args, kwargs = next(gen_inst)
    return gen_inst.send(f(*args, **kwargs))


@_curried
def transformation(gen, fun: WrappedFun, *gen_static_args) -> WrappedFun:
    """The generator form of `transformation2` (see the module docstring)."""
    def run(f, *args, **kwargs):
        return _drive(gen(*args, **kwargs), f)
    run.__name__ = getattr(gen, "__name__", "transformation")
    return transformation2(run, fun, *gen_static_args)


@_curried
def transformation_with_aux(gen, fun: WrappedFun, *gen_static_args):
    """The generator form of `transformation_with_aux2`: the generator's last yield is
    `(result, aux)`."""
    def run(f, store, *args, **kwargs):
        result, aux = _drive(gen(*args, **kwargs), f)
        store.store(aux)
        return result
    run.__name__ = getattr(gen, "__name__", "transformation_with_aux")
    return transformation_with_aux2(run, fun, *gen_static_args)


def cache(call, *, explain=None):
    """Memoize `call(fun: WrappedFun, *args)` on (fun.f, its transformations, params, args);
    a hit refills `fun`'s stores from the call that filled the cache."""
    del explain  # jax's cache-miss logging hook
    per_function: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()

    def memoized(fun: WrappedFun, *args):
        entries = per_function.setdefault(fun.f, {})
        key = (fun.transforms, fun.params, args)
        hit = entries.get(key)
        if hit is not None:
            result, stores = hit
            fun.populate_stores(stores)
            return result
        result = call(fun, *args)
        entries[key] = (result, fun.stores)
        return result

    memoized.cache_clear = per_function.clear
    memoized.evict_function = lambda f: per_function.pop(f, None)
    return memoized


def merge_linear_aux(aux1, aux2):
    """`(True, aux1())` or `(False, aux2())`, whichever of the two stores was written; it is an
    error for both or neither to be."""
    try:
        first = aux1()
    except StoreException:
        try:
            return False, aux2()
        except StoreException:
            raise StoreException("neither store occupied") from None
    try:
        aux2()
    except StoreException:
        return True, first
    raise StoreException("both stores occupied")
