"""The compiler the runtime may call: the driver registers ``ir.compile`` here (the runtime sits
below the driver and never imports it; both import this module, which imports nothing)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

Compiler = Callable[..., Any]
"""``compiler(program, **compile_options) -> a compiled program`` (a ``pypto.runtime.Runnable``)."""

_compiler: list[Compiler] = []


def register_compiler(compiler: Compiler) -> None:
    """Make ``compiler`` the registered one (the driver does this when it is imported)."""
    _compiler[:] = [compiler]


def registered_compiler() -> Compiler | None:
    """The registered compiler, or None."""
    return _compiler[0] if _compiler else None
