"""Atomic file writes: a reader never sees a half-written file."""

from __future__ import annotations

import errno
import itertools
import os
import re
import stat
import threading
from collections.abc import Sequence
from pathlib import Path

TEMP_NAME = re.compile(r"^\..+\.[A-Za-z0-9_]{8}\.tmp$")
"""The name of an atomic write's temporary file (``.<name>.<pid>.<random>.tmp``):
hidden, and skipped by every reader (:func:`is_temp_name`). A writer killed before its
rename (SIGKILL) leaves one; the next successful write of the same file removes it
(:func:`remove_stale_temps`)."""


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is an atomic write's temporary file (a kill can leave one)."""
    return TEMP_NAME.match(name) is not None


def _pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's live process
        return True
    return True


def remove_stale_temps(target: Path) -> list[Path]:
    """Remove the temporary files a killed writer of ``target`` left next to it
    (``.<name>.<pid>.<random>.tmp`` whose process is gone; a live writer's, ours included, is
    kept); the removed paths."""
    removed: list[Path] = []
    prefix = f".{target.name}."
    try:
        names = os.listdir(target.parent)
    except OSError:
        return removed
    for name in names:
        if not (name.startswith(prefix) and is_temp_name(name)):
            continue
        pid = name[len(prefix) :].split(".", 1)[0]
        if not pid.isdigit() or int(pid) == os.getpid() or _pid_alive(int(pid)):
            continue
        try:
            os.unlink(target.parent / name)
            removed.append(target.parent / name)
        except OSError:
            pass  # another writer removed it first
    return removed


def check_writable_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as a Path if a file can be written there, else the OSError
    naming it: its folder is missing (or a file), or it is a folder."""
    target = Path(path)
    if target.is_dir():
        raise IsADirectoryError(errno.EISDIR, "output path is a directory", str(target))
    parent = target.parent
    if not parent.is_dir():
        if parent.exists():  # -o notes.txt/out.mlir: the "folder" is a file
            raise NotADirectoryError(errno.ENOTDIR, "output directory is a file, not a directory", str(parent))
        raise FileNotFoundError(errno.ENOENT, "output directory does not exist", str(parent))
    return target


def atomic_write_bytes(
    path: str | os.PathLike[str],
    data: bytes | Sequence[bytes | bytearray | memoryview],
    *,
    durable: bool = True,
    new: bool = False,
) -> None:
    """Write ``data`` to ``path`` atomically (a list or tuple of byte strings: their concatenation, written
    one after the other without joining them in memory first).

    The bytes go to a temporary file in the same directory, which then
    replaces ``path`` with ``os.replace``; on any failure the temporary file is
    removed and ``path`` is left as it was (absent or with its old contents). After a
    durable write (a user's output file), the temporary files of killed earlier writers of
    ``path`` are removed; a build folder's dumps and run artefacts skip that look at the folder
    on every write (their readers skip temporary files, and a compile replaces the folder whole).
    A folder as ``path``, or a missing folder, raises an OSError naming it. A symlink as ``path`` is written
    through: the file it names is replaced and the link kept.
    ``durable=False`` skips the ``fsync`` (still atomic for readers and a
    killed process; pass dumps and run-time artefacts use it: 50 fsyncs
    dominated a compile). It also removes the old file just before the rename:
    ext4 writes a file out to disk at once when it is renamed over an existing
    one, which cost a DFX run 4x its file time; a reader may find the name
    absent for that instant, never a partial file. ``new=True``: the caller created the folder
    itself and writes each name in it once (the pass dumps), so there is no old file to remove.
    """
    target = Path(path) if new else _through_links(Path(path))
    if not new and _is_device(_stat(target)):
        _write_in_place(target, data, Path(path))
        return
    tmp = _write_temp(target, data, durable=durable)
    try:
        if not durable and not new:
            _remove_old(target)
        os.replace(tmp, target)
    except BaseException as exc:
        _discard(tmp)
        if isinstance(exc, OSError):
            raise _write_error(exc, target) from None
        raise
    if durable:
        remove_stale_temps(target)


def _through_links(target: Path) -> Path:
    """The file a symlink ``target`` names (``out.mlir -> ../shared/out.mlir``): the write replaces that file
    and keeps the link, as writing through the link would (a rename over the link replaced it with a regular
    file). A path that is no link is itself."""
    return Path(os.path.realpath(target)) if os.path.islink(target) else target


def _stat(target: Path) -> os.stat_result | None:
    """``os.stat(target)`` (through its links); None when there is nothing there (or it cannot be looked at)."""
    try:
        return os.stat(target)
    except OSError:
        return None


def _is_device(st: os.stat_result | None) -> bool:
    """Whether ``st`` (a target's :func:`_stat`) is an existing file that is not a regular file nor a folder:
    ``/dev/null``, ``/dev/stdout``, a FIFO. Such a path is written into, never replaced: a rename over it
    would put a regular file in place of the device (``-o /dev/null`` run as root replaced ``/dev/null``)."""
    return st is not None and not stat.S_ISREG(st.st_mode) and not stat.S_ISDIR(st.st_mode)


def _write_in_place(target: Path, data: bytes | Sequence[bytes | bytearray | memoryview], given: Path) -> None:
    """Write ``data`` into the device ``target`` (:func:`_is_device`); an OSError names ``given``, the path the
    caller gave (a link to the device, as a user's ``-o`` names it)."""
    try:
        fd = os.open(target, os.O_WRONLY)
        try:
            if isinstance(data, list | tuple):
                _write_chunks(fd, data)
            else:
                _write_all(fd, data)
        finally:
            os.close(fd)
    except OSError as e:
        raise _write_error(e, given) from None


class KeptFiles:
    """What this process last wrote to some files: their bytes, and the file's identity just after the write
    (device, inode, size, modification time). A write of the same bytes to a file that still has that identity
    (nobody replaced or edited it since) changes nothing and is skipped, as a build tool's "write if changed"
    does: the file keeps its contents and its time stamp. A run's DFX artefacts are mostly the same bytes on
    every run of a program (the simulated timing does not depend on the data), and creating a file cost a
    flagged run about 0.1 ms each (writing a 1.4 MB ``args.bin`` 0.5 ms; joining and comparing it 0.07 ms). At
    most ``max_files`` files and ``max_bytes`` bytes are kept (a file of more than a quarter of that is not),
    the least recently written forgotten first."""

    def __init__(self, max_files: int = 256, max_bytes: int = 16 << 20):
        self.max_files, self.max_bytes = max_files, max_bytes
        self._kept: dict[str, tuple[bytes | tuple[bytes, ...], tuple[int, int, int, int], int]] = {}
        self._bytes = 0
        self._lock = threading.Lock()  # runs in two threads: the memory's own bookkeeping stays whole

    def payload(self, data: bytes | Sequence[bytes | bytearray | memoryview]) -> bytes | tuple[bytes, ...] | None:
        """``data`` as it can be kept: bytes, a tuple of bytes, or the concatenation of other buffers (they may be
        reused after the write); None when it is too large to keep."""
        if type(data) is bytes:
            return data if len(data) <= self.max_bytes // 4 else None
        if not isinstance(data, list | tuple):
            data = [data]
        if all([type(chunk) is bytes for chunk in data]):
            chunks = tuple(data)
            return chunks if sum(map(len, chunks)) <= self.max_bytes // 4 else None
        if sum([memoryview(chunk).nbytes for chunk in data]) > self.max_bytes // 4:
            return None
        return b"".join(data)

    def unchanged(self, path: str | os.PathLike[str], data: bytes | Sequence[bytes | bytearray | memoryview]) -> bool:
        """Whether ``path`` holds exactly ``data`` (what :meth:`payload` takes) as this process wrote it last (a
        ``stat``). Buffers are compared where they lie, never joined first (``args.bin``'s views of a run's
        tensors: joining them only to compare cost a run again 0.25 ms of 01_ffn's 3.4 MB)."""
        kept = self._kept.get(os.fspath(path))
        if kept is None or not _same_bytes(kept[0], data):
            return False
        try:
            return _identity(os.stat(path)) == kept[1]
        except OSError:
            return False

    def remember(
        self, path: str | os.PathLike[str], payload: bytes | tuple[bytes, ...] | None, written: os.stat_result
    ) -> None:
        """``payload`` was just written to ``path`` as the file ``written`` (its ``fstat`` after the write, not a
        ``stat`` of the path, which another writer may have replaced since): keep both (None: forget the file)."""
        key = os.fspath(path)
        with self._lock:
            kept = self._kept.pop(key, None)
            if kept is not None:
                self._bytes -= kept[2]
            if payload is None:
                return
            size = len(payload) if type(payload) is bytes else sum(map(len, payload))
            self._kept[key] = (payload, _identity(written), size)
            self._bytes += size
            while len(self._kept) > self.max_files or self._bytes > self.max_bytes:
                self._bytes -= self._kept.pop(next(iter(self._kept)))[2]

    def forget_all(self) -> None:
        """Keep nothing: every next write is made."""
        with self._lock:
            self._kept.clear()
            self._bytes = 0


def _same_bytes(kept: bytes | tuple[bytes, ...], data: bytes | Sequence[bytes | bytearray | memoryview]) -> bool:
    """Whether ``data`` (bytes, or buffers to concatenate) is the bytes ``kept`` (a :meth:`KeptFiles.payload`),
    each buffer compared in place (``bytes.startswith`` at its offset: a ``memcmp``, no copy)."""
    chunks = data if isinstance(data, list | tuple) else (data,)
    if type(kept) is tuple:  # kept as the byte strings it was given: the same strings, mostly the same objects
        return tuple(chunks) == kept
    views = [c if type(c) is bytes else memoryview(c).cast("B") for c in chunks]
    if sum(map(len, views)) != len(kept):
        return False
    offset = 0
    for view in views:
        if not kept.startswith(view, offset):
            return False
        offset += len(view)
    return True


def _identity(st: os.stat_result) -> tuple[int, int, int, int]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def atomic_write_files(
    files: Sequence[tuple[str | os.PathLike[str], bytes | Sequence[bytes | bytearray | memoryview]]],
    *,
    make_folders: bool = False,
    kept: KeptFiles | None = None,
) -> None:
    """Write several files, each atomically as :func:`atomic_write_bytes` with ``durable=False`` does: every
    temporary file is written first, then each old file is removed and its new one renamed into place, so a
    failure while the temporary files are written (a full disk) leaves every file as it was. ``make_folders``:
    a missing folder is made when its first file's write finds it missing (not looked for before every
    write). ``kept``: a file that already holds its bytes as this process last wrote them is left as it is
    (:class:`KeptFiles`), and what is written is remembered there. A run's DFX artefacts go through here
    together (``dfx.base.finish_all``)."""
    if kept is None:
        _write_files(files, make_folders)
        return
    todo = []
    for path, data in files:
        if kept.unchanged(path, data):
            continue
        payload = kept.payload(data)
        todo.append((path, data if payload is None else payload, payload))
    written: list[os.stat_result] = []
    _write_files([(path, data) for path, data, _ in todo], make_folders, written)
    for (path, _, payload), st in zip(todo, written, strict=True):
        kept.remember(path, payload, st)


def _write_files(
    files: Sequence[tuple[str | os.PathLike[str], bytes | Sequence[bytes | bytearray | memoryview]]],
    make_folders: bool,
    written: list[os.stat_result] | None = None,
) -> None:
    """:func:`atomic_write_files`'s writes; ``written`` gets each file's ``fstat`` once its bytes are in (the
    file a rename puts in place: what another writer renames there later is another file). A device or FIFO
    among the targets (``/dev/null``, through a link) is written into after the files are in place. A folder
    in a target's place fails before any file is replaced (:func:`check_writable_path`'s error): all or none."""
    temps: list[tuple[Path, str]] = []
    devices: list[tuple[Path, bytes | Sequence[bytes | bytearray | memoryview], Path]] = []
    try:
        for path, data in files:
            target = _through_links(Path(path))
            st = _stat(target)
            if st is not None and stat.S_ISDIR(st.st_mode):
                check_writable_path(target)  # raises: the output path is a folder
            if _is_device(st):  # written into last, never replaced (atomic_write_bytes' rule)
                devices.append((target, data, Path(path)))
                if written is not None:
                    written.append(st)
                continue
            try:
                tmp = _write_temp(target, data, durable=False, written=written)
            except FileNotFoundError:
                if not make_folders or os.path.isdir(target.parent):
                    raise
                target.parent.mkdir(parents=True, exist_ok=True)
                tmp = _write_temp(target, data, durable=False, written=written)
            temps.append((target, tmp))
    except BaseException:
        for _, tmp in temps:
            _discard(tmp)
        raise
    for i, (target, tmp) in enumerate(temps):
        try:
            _remove_old(target)
            os.replace(tmp, target)
        except BaseException as exc:
            for _, rest in temps[i:]:
                _discard(rest)
            if isinstance(exc, OSError):
                raise _write_error(exc, target) from None
            raise
    for target, data, given in devices:
        _write_in_place(target, data, given)


def _write_temp(
    target: Path,
    data: bytes | Sequence[bytes | bytearray | memoryview],
    *,
    durable: bool,
    written: list[os.stat_result] | None = None,
) -> str:
    """A new temporary file next to ``target`` holding ``data`` (fsynced when ``durable``), closed: its path
    (its ``fstat`` after the write appended to ``written``). On a failure it is removed and the error raised
    (an OSError naming a missing folder or a folder as ``target``, when that is the reason)."""
    try:
        fd, tmp = _open_temp(os.fspath(target))
    except OSError as e:
        raise _write_error(e, target) from None
    try:
        try:
            if os.fstat(fd).st_mode & 0o7777 != FILE_MODE:  # a umask that took bits away: put them back
                os.fchmod(fd, FILE_MODE)  # whatever the umask, artefacts are ordinary files
            if isinstance(data, list | tuple):
                _write_chunks(fd, data)
            else:
                _write_all(fd, data)
            if durable:
                os.fsync(fd)
            if written is not None:
                written.append(os.fstat(fd))
        finally:
            os.close(fd)
    except BaseException as exc:
        _discard(tmp)
        if isinstance(exc, OSError):
            raise _write_error(exc, target) from None
        raise
    return tmp


def _write_error(error: OSError, target: Path) -> OSError:
    """The error to raise for a failed write of ``target``: the located reason when it is one
    (:func:`check_writable_path` raises it: a missing folder, a folder as the path), else ``error`` as raised
    for ``target`` itself: the user named ``target``, never the hidden temporary file beside it
    (``/proc/.out.json.123.0a1b2c3d.tmp: No such file or directory`` named a file nobody asked for), nor no
    file at all (a failed ``write``: ``No space left on device``)."""
    check_writable_path(target)
    if error.filename is not None and os.fspath(error.filename) == os.fspath(target):
        return error
    return type(error)(error.errno, error.strerror, os.fspath(target))


def _remove_old(target: Path) -> None:
    """Remove ``target`` before a non-durable write renames its new contents there: ext4 writes a file out
    to disk at once when it is renamed over an existing one."""
    try:
        os.unlink(target)
    except FileNotFoundError:
        pass


def _discard(tmp: str) -> None:
    """Remove a temporary file that will not be renamed into place."""
    try:
        os.unlink(tmp)
    except FileNotFoundError:
        pass


FILE_MODE = 0o644
"""The mode of every file written here, whatever the umask (the temporary file is created with it: under the
usual umasks no ``fchmod``, which cost a run's artefact write tens of µs of journal work each)."""

_TEMP_SERIAL = itertools.count(int.from_bytes(os.urandom(3), "big"))
"""Numbers the temporary files of this process (a random start; the process id is in the name too)."""

_PID = [os.getpid()]
"""This process's id for the temporary names: read once, not a ``getpid`` call per file (a forked child
reads its own: :func:`os.register_at_fork`)."""
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=lambda: _PID.__setitem__(0, os.getpid()))


def _open_temp(path: str) -> tuple[int, str]:
    """A new temporary file next to ``path`` (``.<name>.<pid>.<8 hex digits>.tmp``, created
    exclusively, like ``tempfile.mkstemp`` but without its machinery): its descriptor and path.
    The digits are a per-process serial number (no ``getrandom`` call per file); a name left by a
    killed process of the same pid is skipped."""
    head, tail = os.path.split(path)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | getattr(os, "O_NOFOLLOW", 0)
    for _ in range(100):
        tmp = os.path.join(head, f".{tail}.{_PID[0]}.{next(_TEMP_SERIAL) & 0xFFFFFFFF:08x}.tmp")
        try:
            return os.open(tmp, flags, FILE_MODE), tmp
        except FileExistsError:
            continue
    raise FileExistsError(errno.EEXIST, "no unused temporary file name", path)


def _write_all(fd: int, chunk: bytes | bytearray | memoryview) -> None:
    """Write every byte of ``chunk`` (one write call unless the kernel takes less)."""
    if not isinstance(chunk, bytes | bytearray | memoryview):
        raise TypeError(f"atomic_write_bytes writes bytes, got {type(chunk).__name__}")
    view = memoryview(chunk).cast("B") if not isinstance(chunk, bytes) else chunk
    done = os.write(fd, view)
    total = len(view)
    if done < total:
        rest = memoryview(view)
        while done < total:
            done += os.write(fd, rest[done:])


WRITEV_MAX = 512
"""The most chunks one ``writev`` call takes (POSIX guarantees at least 16, Linux 1024)."""


def _write_chunks(fd: int, chunks: Sequence[bytes | bytearray | memoryview]) -> None:
    """Write the concatenation of ``chunks``: one ``writev`` call per :data:`WRITEV_MAX` of them (one
    ``write`` a chunk where the platform has no ``writev``)."""
    views = []
    for chunk in chunks:
        if not isinstance(chunk, bytes | bytearray | memoryview):
            raise TypeError(f"atomic_write_bytes writes bytes, got {type(chunk).__name__}")
        views.append(memoryview(chunk).cast("B") if not isinstance(chunk, bytes) else chunk)
    if not hasattr(os, "writev"):
        for view in views:
            _write_all(fd, view)
        return
    for first in range(0, len(views), WRITEV_MAX):
        group = views[first : first + WRITEV_MAX]
        done = os.writev(fd, group)
        if done < sum(len(v) for v in group):  # the kernel took less: the rest one write at a time
            _write_all(fd, b"".join(group)[done:])


def atomic_write_text(
    path: str | os.PathLike[str], text: str, encoding: str = "utf-8", *, durable: bool = True, new: bool = False
) -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write_bytes`; no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), durable=durable, new=new)
