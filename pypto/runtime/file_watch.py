"""Whether any file in some directories may have changed, in one system call when none did (Linux inotify).

A replayed ``"cpp"`` run (:mod:`.cpp_plan`) must notice an edited kernel ``.cpp`` or ``pto_cpu.hpp``; a
``stat`` of each file is a system call, and on a VM right after an interpreter run seven of them cost
about 40 µs. Instead the directories holding them are watched; :func:`generation` asks how many bytes of
events wait (one ``ioctl``, FIONREAD: a non-blocking ``read`` of an empty queue fails, and catching that
costs more in Python than the call), drains them when there are any, and then counts up. A plan
re-checks its files' stamps only when the count moved since its last check.

``generation()`` is None when the watch is unavailable (not Linux, no inotify, its limits reached) or
was lost (a watched directory removed or moved, the event queue overflowed, a forked child sharing the
parent's queue): callers then check their stamps every time.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable

try:  # Linux only (pyproject: a sys_platform marker)
    import fcntl
    import termios

    from inotify_simple import INotify, parse_events
    from inotify_simple import flags as _flags
except ImportError:  # pragma: no cover - not Linux
    INotify = None  # type: ignore[assignment,misc]

if INotify is not None:
    _MASK = (
        _flags.MODIFY | _flags.ATTRIB | _flags.CLOSE_WRITE | _flags.MOVED_FROM | _flags.MOVED_TO | _flags.CREATE
        | _flags.DELETE | _flags.DELETE_SELF | _flags.MOVE_SELF
    )  # fmt: skip
    _LOST = _flags.DELETE_SELF | _flags.MOVE_SELF | _flags.Q_OVERFLOW | _flags.IGNORED
    """Events after which a directory is no longer watched (or events were dropped)."""


_NONE_WAITING = bytes(4)


class _Watch:
    def __init__(self) -> None:
        self.waiting = bytearray(4)
        """FIONREAD's answer: the bytes of events waiting (a C int)."""
        self.inotify: INotify | None = None
        self.dirs: dict[str, int] = {}
        self.count = 0
        self.usable = INotify is not None and sys.platform.startswith("linux")

    def _lose(self) -> None:
        self.usable = False
        if self.inotify is not None:
            try:
                self.inotify.close()
            except OSError:
                pass
        self.inotify, self.dirs = None, {}

    def watch(self, dirs: Iterable[str]) -> int | None:
        """Watch ``dirs`` (besides those already watched); the generation after draining the events."""
        if not self.usable:
            return None
        try:
            if self.inotify is None:
                self.inotify = INotify(nonblocking=True)
            for d in dirs:
                if d not in self.dirs:
                    self.dirs[d] = self.inotify.add_watch(d, _MASK)
        except OSError:  # no inotify, or a limit reached: stamps every time
            self._lose()
            return None
        return self.generation()

    def generation(self) -> int | None:
        """The count of event batches read so far (one ``read`` when there are none); None: not watching."""
        if self.inotify is None:
            return None
        fd = self.inotify.fileno()
        try:  # the bytes waiting (FIONREAD): one system call when nothing changed, and no failed read to catch
            fcntl.ioctl(fd, termios.FIONREAD, self.waiting)
            if self.waiting == _NONE_WAITING:
                return self.count
            data = os.read(fd, 65536)
        except BlockingIOError:
            return self.count
        except OSError:
            self._lose()
            return None
        self.count += 1
        while data:
            if any(event.mask & _LOST for event in parse_events(data)):
                self._lose()
                return None
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                self._lose()
                return None
        return self.count


_WATCH = _Watch()


def _forked() -> None:  # a child shares the parent's event queue: whoever reads an event takes it from the other
    _WATCH._lose()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forked)


def watch(dirs: Iterable[str]) -> int | None:
    """Start watching ``dirs``; the current generation (None: no watch, check stamps every time)."""
    return _WATCH.watch(dirs)


def generation() -> int | None:
    """The current generation: unchanged while no file in a watched directory changed (None: no watch)."""
    return _WATCH.generation()
