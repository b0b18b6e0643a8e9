"""Whether any file in some directories may have changed, in one system call when none did (Linux inotify).

A replayed ``"cpp"`` run (:mod:`.cpp_plan`) must notice an edited kernel ``.cpp`` or ``pto_cpu.hpp``; a
``stat`` of each file is a system call, and on a VM right after an interpreter run seven of them cost
about 40 µs. Instead the directories holding them are watched; :func:`generation` drains the events with
one ``read`` and counts up when there were any. A plan re-checks its files' stamps only when the count
moved since its last check.

``generation()`` is None when the watch is unavailable (not Linux, no inotify, its limits reached) or
was lost (a watched directory removed or moved, the event queue overflowed, a forked child sharing the
parent's queue): callers then check their stamps every time.
"""

from __future__ import annotations

import ctypes
import os
import struct
import sys
from collections.abc import Iterable

_IN_NONBLOCK, _IN_CLOEXEC = 0o4000, 0o2000000
_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF, _IN_Q_OVERFLOW, _IN_IGNORED = 0x400, 0x800, 0x4000, 0x8000
_MASK = (
    _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
    | _IN_DELETE_SELF | _IN_MOVE_SELF
)  # fmt: skip
_LOST = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_Q_OVERFLOW | _IN_IGNORED
"""Events after which a directory is no longer watched (or events were dropped)."""
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then len bytes of name


class _Watch:
    def __init__(self) -> None:
        self.fd: int | None = None
        self.dirs: dict[str, int] = {}
        self.count = 0
        self.usable = sys.platform.startswith("linux")

    def _lose(self) -> None:
        self.usable = False
        if self.fd is not None:
            try:
                os.close(self.fd)
            except OSError:
                pass
        self.fd, self.dirs = None, {}

    def watch(self, dirs: Iterable[str]) -> int | None:
        """Watch ``dirs`` (besides those already watched); the generation after draining the events."""
        if not self.usable:
            return None
        try:
            libc = ctypes.CDLL(None, use_errno=True)
            if self.fd is None:
                fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
                if fd < 0:
                    raise OSError(ctypes.get_errno(), "inotify_init1")
                self.fd = fd
            for d in dirs:
                if d not in self.dirs:
                    wd = libc.inotify_add_watch(self.fd, os.fsencode(d), _MASK)
                    if wd < 0:
                        raise OSError(ctypes.get_errno(), f"inotify_add_watch {d}")
                    self.dirs[d] = wd
        except (OSError, AttributeError):  # no inotify, or a limit reached: stamps every time
            self._lose()
            return None
        return self.generation()

    def generation(self) -> int | None:
        """The count of event batches read so far (one ``read`` when there are none); None: not watching."""
        if self.fd is None:
            return None
        try:
            data = os.read(self.fd, 65536)
        except BlockingIOError:
            return self.count
        except OSError:
            self._lose()
            return None
        self.count += 1
        while data:
            offset = 0
            while offset + _EVENT.size <= len(data):
                _wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                if mask & _LOST:
                    self._lose()
                    return None
                offset += _EVENT.size + length
            try:
                data = os.read(self.fd, 65536)
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
