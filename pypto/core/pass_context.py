"""``PassContext``: pipeline settings for every ``compile`` inside a ``with`` block (pl-dsl.md §6).

::

    with ir.PassContext(verification_level="NONE", disabled_diagnostics=["PH001"]):
        ir.compile(program)                       # uses the context's settings
        ir.compile(program, memory_planner="PTOAS")   # RuntimeError: set it on the context

The settings a context carries are the ones ``compile`` would otherwise take
as arguments: ``verification_level``, ``diagnostic_phase``,
``disabled_diagnostics``, ``memory_planner`` and ``runtime``. Passing any of
them explicitly to ``compile`` while a context is active is a ``RuntimeError``
naming the arguments (the two sources would disagree silently otherwise).
Contexts nest; the innermost one is active. A setting the context leaves at
``None`` keeps ``compile``'s default.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, fields
from typing import Any

CONTEXT_SETTINGS: tuple[str, ...] = (
    "verification_level",
    "diagnostic_phase",
    "disabled_diagnostics",
    "memory_planner",
    "runtime",
)
"""The ``compile`` arguments a PassContext supplies."""


@dataclass
class PassContext:
    """Pipeline settings for the ``compile`` calls made inside ``with PassContext(...)``."""

    verification_level: Any = None
    diagnostic_phase: Any = None
    disabled_diagnostics: Iterable[object] | None = None
    memory_planner: Any = None
    runtime: Any = None

    def __enter__(self) -> PassContext:
        _STACK.append(self)
        return self

    def __exit__(self, *exc: object) -> None:
        if _STACK and _STACK[-1] is self:
            _STACK.pop()
        elif self in _STACK:  # exited out of order: drop it and whatever it left above it
            del _STACK[_STACK.index(self) :]

    @staticmethod
    def current() -> PassContext | None:
        """The innermost active context, or None."""
        return _STACK[-1] if _STACK else None

    def settings(self) -> dict[str, Any]:
        """The settings this context supplies (``None`` = compile's default)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}


_STACK: list[PassContext] = []


def resolve_settings(explicit: dict[str, Any]) -> dict[str, Any]:
    """``compile``'s context-backed arguments: the explicit ones outside a context, the active context's
    inside one (an explicit one there is a ``RuntimeError``)."""
    ctx = PassContext.current()
    if ctx is None:
        return explicit
    given = [name for name in CONTEXT_SETTINGS if explicit.get(name) is not None]
    if given:
        raise RuntimeError(
            f"compile() got {', '.join(given)} inside an active PassContext; set "
            f"{'it' if len(given) == 1 else 'them'} on the PassContext (or call compile outside it)"
        )
    return ctx.settings()
