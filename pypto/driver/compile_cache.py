"""The ``@pl.jit`` compile cache: a second compile of the same specialisation is a hit.

Process-wide (kept across ``@pl.jit`` objects of the same function: a notebook cell run again, a
kernel defined in a loop) and bounded (:data:`MAX_ENTRIES`, least recently used first out). The key
is everything that changes the compile's output:

- ``source``: a hash of the kernel's source text and of every ``@pl.jit.*`` function and
  module-level or closure constant (number, string, bool, None, ``pl`` dtype, enum member,
  ``pl.dynamic`` extent) its body or its annotations name, recursively; :class:`SourceKey` checks at
  each call that those names are still bound to the same values (a changed constant compiles again);
- ``signature``: the specialisation (each argument's tensor type, or a scalar's type and value);
- ``options``: the compile-side options of the ``RunConfig`` (``RunConfig.compile_options()``:
  strategy, dump_passes, dump_ptoas_passes, compile_profiling, diagnostics, memory planner, platform,
  backend, distributed config, save_kernels_dir, golden ...) and the active ``PassContext``'s settings;
- ``environment``: the variables that change what compile writes (:data:`ENV_VARS`).

A hit also needs the build directory to still exist (a removed one compiles again).
"""

from __future__ import annotations

import ast
import enum
import hashlib
import inspect
import os
import textwrap
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from pypto.frontend.dsl_objects import DType, DynVar

MAX_ENTRIES = 256
"""Compiled programs kept (least recently used dropped first)."""

ENV_VARS = (
    "PYPTO_COMPILE_PROFILING", "PYPTO_VERIFY_LEVEL", "PYPTO_WARNING_LEVEL", "PYPTO_EMIT_PTO_LOC",
    "PYPTO_EMIT_DEBUG_RUNNER", "PYPTO_PROG_BUILD_DIR",
)  # fmt: skip
"""Environment variables whose value is part of the key."""

_entries: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
stats = {"hits": 0, "misses": 0}
"""Hits and misses since the process started (or :func:`clear`)."""


_MISSING = object()
"""A name not bound (yet) where a kernel reads it."""


class SourceKey:
    """A kernel's source hash (:func:`source_hash`) and the bindings it read: the value each name its code
    or its annotations name had then, in the namespace it was read from (a module's globals or a closure
    cell). The front end reads those constants when it parses the kernel, so a name bound to another
    value since (a module constant changed, a notebook cell run again with ``DT = pl.FP16``) makes the
    hash stale: :meth:`current` checks them (a dict lookup each) and hashes again when one changed."""

    __slots__ = ("_fn", "_is_kernel", "digest", "_bindings")

    def __init__(self, fn: Callable[..., Any], is_kernel: Callable[[Any], bool]) -> None:
        self._fn, self._is_kernel = fn, is_kernel
        self.digest, self._bindings = _hash_with_bindings(fn, is_kernel)

    def current(self) -> str:
        """The hash for the values bound now (computed again only when a binding changed)."""
        for where, name, value in self._bindings:
            if name is None:  # a closure cell
                try:
                    now = where.cell_contents
                except ValueError:
                    now = _MISSING
            else:
                now = where.get(name, _MISSING)
            if now is not value and not (type(now) is type(value) and _same_constant(now, value)):
                self.digest, self._bindings = _hash_with_bindings(self._fn, self._is_kernel)
                break
        return self.digest


def _same_constant(a: Any, b: Any) -> bool:
    """``a == b`` for two constants of one type (``_constant_text`` spells both; anything else: identity)."""
    text = _constant_text(a)
    return text is not None and text == _constant_text(b)


def _constant_text(value: Any) -> str | None:
    """How a constant the front end reads from a kernel's namespace is hashed (``constexpr.evaluate``:
    numbers, strings, bools, None, ``pl`` dtypes, enum members, ``pl.dynamic`` extents); None for any
    other value, which the front end does not read as a constant."""
    if value is None or isinstance(value, int | float | str | bool):
        return f"{type(value).__name__}:{value!r}"
    if isinstance(value, enum.Enum):
        return f"{type(value).__module__}.{type(value).__qualname__}.{value.name}"
    if isinstance(value, DType | DynVar):
        return repr(value)
    return None


def source_hash(fn: Callable[..., Any], is_kernel: Callable[[Any], bool]) -> str:
    """A hash of ``fn``'s source and of the kernels (``is_kernel``) and constants its code and annotations
    name (:class:`SourceKey` also keeps what it read, to notice a rebinding)."""
    return _hash_with_bindings(fn, is_kernel)[0]


def _hash_with_bindings(
    fn: Callable[..., Any], is_kernel: Callable[[Any], bool]
) -> tuple[str, list[tuple[Any, str | None, Any]]]:
    """:func:`source_hash` and the bindings it read: ``(globals, name, value)`` or ``(cell, None, value)``."""
    h = hashlib.sha256()
    seen: set[int] = set()
    bindings: list[tuple[Any, str | None, Any]] = []

    def add(f: Callable[..., Any]) -> None:
        f = getattr(f, "fn", f)
        if id(f) in seen:
            return
        seen.add(id(f))
        names: set[str] = set()
        try:
            source = inspect.getsource(f)
        except (OSError, TypeError):
            h.update(repr(getattr(f, "__code__", f)).encode())
        else:
            h.update(source.encode())
            names.update(_names_in(source))  # annotations too: a string under PEP 563, not in the code
        code = getattr(f, "__code__", None)
        if code is None:
            return
        names.update(code.co_names)
        for const in code.co_consts:  # nested code (comprehensions, lambdas) names globals too
            if inspect.iscode(const):
                names.update(const.co_names)
        globs = getattr(f, "__globals__", {})
        cells = dict(zip(code.co_freevars, f.__closure__ or (), strict=False))
        for name in sorted(names | set(cells)):
            cell = cells.get(name)
            if cell is not None:
                try:
                    value = cell.cell_contents
                except ValueError:
                    value = _MISSING
                bindings.append((cell, None, value))
            else:
                value = globs.get(name, _MISSING)
                bindings.append((globs, name, value))
            if is_kernel(value):
                add(value)
                continue
            text = _constant_text(value)
            if text is not None:
                h.update(f"{name}={text};".encode())

    add(fn)
    return h.hexdigest()[:16], bindings


def _names_in(source: str) -> set[str]:
    """The names a function's source reads (its body and its annotations); empty when it does not parse
    on its own (the code's names still count)."""
    try:
        tree = ast.parse(textwrap.dedent(source))
    except SyntaxError:
        return set()
    return {node.id for node in ast.walk(tree) if isinstance(node, ast.Name)}


def environment_key() -> tuple[Any, ...]:
    """The :data:`ENV_VARS` values (the cache lives in one process: one PyPTO version)."""
    return tuple(os.environ.get(v) for v in ENV_VARS)


def lookup(key: tuple[Any, ...]) -> Any:
    """The compiled program of ``key`` (None on a miss, or when its build directory is gone)."""
    compiled = _entries.get(key)
    if compiled is not None and not compiled.output_dir.is_dir():
        del _entries[key]
        compiled = None
    if compiled is None:
        stats["misses"] += 1
        return None
    _entries.move_to_end(key)
    stats["hits"] += 1
    return compiled


def store(key: tuple[Any, ...], compiled: Any) -> None:
    """Keep ``compiled`` under ``key`` (dropping the least recently used beyond :data:`MAX_ENTRIES`)."""
    _entries[key] = compiled
    _entries.move_to_end(key)
    while len(_entries) > MAX_ENTRIES:
        _entries.popitem(last=False)


def clear() -> None:
    """Forget every entry and reset :data:`stats`."""
    _entries.clear()
    stats.update(hits=0, misses=0)
