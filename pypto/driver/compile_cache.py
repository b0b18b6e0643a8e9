"""The ``@pl.jit`` compile cache: a second compile of the same specialisation is a hit.

Process-wide (kept across ``@pl.jit`` objects of the same function: a notebook cell run again, a
kernel defined in a loop) and bounded (:data:`MAX_ENTRIES`, least recently used first out). The key
is everything that changes the compile's output:

- ``source``: a hash of the kernel's source text and of every ``@pl.jit.*`` function and
  module-level constant (number, string, bool) its body names, recursively;
- ``signature``: the specialisation (each argument's tensor type, or a scalar's type and value);
- ``options``: the compile-side options of the ``RunConfig`` (``RunConfig.compile_options()``:
  strategy, dump_passes, dump_ptoas_passes, compile_profiling, diagnostics, memory planner, platform,
  backend, distributed config, save_kernels_dir, golden ...) and the active ``PassContext``'s settings;
- ``environment``: the variables that change what compile writes (:data:`ENV_VARS`).

A hit also needs the build directory to still exist (a removed one compiles again).
"""

from __future__ import annotations

import hashlib
import inspect
import os
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

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


def source_hash(fn: Callable[..., Any], is_kernel: Callable[[Any], bool]) -> str:
    """A hash of ``fn``'s source and of the kernels (``is_kernel``) and simple constants its code names."""
    h = hashlib.sha256()
    seen: set[int] = set()

    def add(f: Callable[..., Any]) -> None:
        f = getattr(f, "fn", f)
        if id(f) in seen:
            return
        seen.add(id(f))
        try:
            h.update(inspect.getsource(f).encode())
        except (OSError, TypeError):
            h.update(repr(getattr(f, "__code__", f)).encode())
        code = getattr(f, "__code__", None)
        if code is None:
            return
        names = set(code.co_names)
        for const in code.co_consts:  # nested code (comprehensions, lambdas) names globals too
            if inspect.iscode(const):
                names.update(const.co_names)
        globs = getattr(f, "__globals__", {})
        closure = dict(zip(code.co_freevars, (c.cell_contents for c in (f.__closure__ or ())), strict=False))
        for name in sorted(names | set(closure)):
            value = closure.get(name, globs.get(name))
            if is_kernel(value):
                add(value)
            elif isinstance(value, int | float | str | bool):
                h.update(f"{name}={value!r};".encode())

    add(fn)
    return h.hexdigest()[:16]


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
