"""Progress bars on long work (compile, run, replay, ir-trace): shown only when it is worth it.

::

    with progress("compile", total=len(passes)) as bar:
        for p in passes:
            bar.advance(p.name)      # names the current pass / task
            ...

A bar appears when the work has taken longer than :data:`DELAY` seconds (about 2 s) and stderr is
a terminal; off a terminal, under ``PYPTO_PROGRESS=0``, or for short work nothing is printed (and
``rich`` is not even imported). It draws on stderr and is removed when the work ends (transient).
A ``progress`` opened inside another (a compile inside a run) names its step in the outer bar
instead of opening a second one.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TextIO

ENV_VAR = "PYPTO_PROGRESS"
DELAY = 2.0
"""Seconds of work before a bar appears."""

_active: list[Progress] = []


def enabled(stream: TextIO | None = None) -> bool:
    """Whether bars may be drawn: ``PYPTO_PROGRESS`` is not ``0`` and ``stream`` (stderr) is a terminal."""
    if os.environ.get(ENV_VAR, "").strip().lower() in ("0", "false", "no", "off"):
        return False
    stream = stream if stream is not None else sys.stderr
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """One task's bar: started by a timer after ``delay`` seconds, updated by :meth:`advance`."""

    def __init__(self, description: str, total: int | None, stream: TextIO, delay: float = DELAY):
        self.description = description
        self.total = total
        self.stream = stream
        self.done = 0
        self.current = ""
        self._lock = threading.Lock()
        self._bar: Any = None
        self._task: Any = None
        self._closed = False
        self._timer = threading.Timer(delay, self._start)
        self._timer.daemon = True

    @property
    def shown(self) -> bool:
        """Whether the bar is on screen."""
        return self._bar is not None

    def _label(self) -> str:
        return f"{self.description}: {self.current}" if self.current else self.description

    def _start(self) -> None:
        with self._lock:
            if self._closed or self._bar is not None:
                return
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            columns = [TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn()]
            bar = Progress(*columns, console=Console(file=self.stream), transient=True)
            self._task = bar.add_task(self._label(), total=self.total, completed=self.done)
            bar.start()
            self._bar = bar

    def advance(self, label: str = "", steps: int = 1) -> None:
        """Count ``steps`` done and name what runs now."""
        with self._lock:
            self.done += steps
            self.current = label or self.current
            if self._bar is not None:
                self._bar.update(self._task, completed=self.done, description=self._label())

    def name(self, label: str) -> None:
        """Name what runs now without counting a step."""
        self.advance(label, steps=0)

    def close(self) -> None:
        self._timer.cancel()
        with self._lock:
            self._closed = True
            if self._bar is not None:
                self._bar.stop()
                self._bar = None


class _Nested:
    """A ``progress`` inside another: names its steps in the outer bar."""

    def __init__(self, outer: Progress, description: str):
        self.outer = outer
        self.description = description
        self.shown = False

    def advance(self, label: str = "", steps: int = 1) -> None:
        self.outer.name(f"{self.description} {label}".strip())

    def name(self, label: str) -> None:
        self.advance(label, 0)


class _Silent:
    """No bar (not a terminal, ``PYPTO_PROGRESS=0``)."""

    shown = False

    def advance(self, label: str = "", steps: int = 1) -> None:
        """Nothing to draw."""

    def name(self, label: str) -> None:
        """Nothing to draw."""


@contextmanager
def progress(
    description: str, total: int | None = None, *, stream: TextIO | None = None, delay: float = DELAY
) -> Iterator[Progress | _Nested | _Silent]:
    """A bar for the work in the block (see the module docstring)."""
    if _active:
        yield _Nested(_active[-1], description)
        return
    stream = stream if stream is not None else sys.stderr
    if not enabled(stream):
        yield _Silent()
        return
    bar = Progress(description, total, stream, delay)
    _active.append(bar)
    bar._timer.start()
    try:
        yield bar
    finally:
        _active.remove(bar)
        bar.close()


__all__ = ["DELAY", "ENV_VAR", "Progress", "enabled", "progress"]
