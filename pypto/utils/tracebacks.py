"""Tracebacks without PyPTO's internal frames (as JAX does).

A public entry point decorated with :func:`api_boundary` re-raises an
exception with the frames of PyPTO's own source folders removed, so the user
sees their own lines and the error; a note says how to see everything.
``PYPTO_BACKTRACE=1`` keeps every frame. Nested boundaries filter again
(idempotent); the bare ``raise`` adds no frame of its own.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, TypeVar

F = TypeVar("F", bound=Callable[..., Any])

NOTE = "PyPTO's internal frames are hidden from this traceback; set PYPTO_BACKTRACE=1 to show them"

_PACKAGES = ("pypto", "pypto.dialects", "pypto.ptoas", "pypto.tools")
"""Packages whose folders hold PyPTO's frames (the installed layout maps several source folders)."""


def backtrace_enabled() -> bool:
    """``PYPTO_BACKTRACE=1`` (or the older ``PTO_BACKTRACE=1``) is set."""
    return "1" in (os.environ.get("PYPTO_BACKTRACE"), os.environ.get("PTO_BACKTRACE"))


@functools.cache
def _roots() -> tuple[str, ...]:
    roots = []
    for name in _PACKAGES:
        module = sys.modules.get(name)
        for path in getattr(module, "__path__", []) or []:
            roots.append(str(Path(path).resolve()) + os.sep)
    return tuple(sorted(set(roots)))


def is_internal(filename: str) -> bool:
    """Whether ``filename`` is a source file of PyPTO itself."""
    if not filename or filename.startswith("<"):
        return False
    try:
        resolved = str(Path(filename).resolve())
    except OSError:
        return False
    return resolved.startswith(_roots())


def filter_traceback(tb: TracebackType | None) -> TracebackType | None:
    """``tb`` without PyPTO's frames (the same chain when it has none)."""
    frames: list[TracebackType] = []
    while tb is not None:
        if not is_internal(tb.tb_frame.f_code.co_filename):
            frames.append(tb)
        tb = tb.tb_next
    out: TracebackType | None = None
    for t in reversed(frames):
        out = TracebackType(out, t.tb_frame, t.tb_lasti, t.tb_lineno)
    return out


def caller_frame(depth: int = 1) -> Any:
    """The frame ``depth`` calls above the caller, not counting :func:`api_boundary`'s wrappers
    (what a decorator that reads its user's locals must look at)."""
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code is _WRAPPER_CODE:
        frame = frame.f_back
    return frame


def api_boundary(fn: F) -> F:
    """Decorate a public entry point: exceptions leave it with PyPTO's frames hidden."""

    @functools.wraps(fn)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        __tracebackhide__ = True  # noqa: F841 - pytest hides this frame too
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            if backtrace_enabled():
                raise
            _filter_chain(e)
            raise  # a bare raise keeps the (filtered) traceback and adds no frame

    return wrapped  # type: ignore[return-value]


_WRAPPER_CODE = api_boundary(lambda: None).__code__  # every api_boundary wrapper runs this code object


def _filter_chain(error: BaseException) -> None:
    """Filter ``error`` and its causes/contexts once, and add the note."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        e.__traceback__ = filter_traceback(e.__traceback__)
        e = e.__cause__ or e.__context__
    if NOTE not in getattr(error, "__notes__", []):
        error.add_note(NOTE)
