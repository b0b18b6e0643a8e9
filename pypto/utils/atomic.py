"""Atomic file writes: a reader never sees a half-written file."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Sequence
from pathlib import Path


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes | Sequence[bytes], *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` atomically (a list or tuple of byte strings: their concatenation, written
    one after the other without joining them in memory first).

    The bytes go to a temporary file in the same directory, which then
    replaces ``path`` with ``os.replace``; on any failure the temporary file is
    removed and ``path`` is left as it was (absent or with its old contents).
    ``durable=False`` skips the ``fsync`` (still atomic for readers and a
    killed process; pass dumps and run-time artefacts use it: 50 fsyncs
    dominated a compile).
    """
    target = Path(path)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            if isinstance(data, list | tuple):
                for chunk in data:
                    f.write(chunk)
            else:
                f.write(data)
            if durable:
                f.flush()
                os.fsync(f.fileno())
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; artefacts are ordinary files
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def atomic_write_text(
    path: str | os.PathLike[str], text: str, encoding: str = "utf-8", *, durable: bool = True
) -> None:
    """Write ``text`` to ``path`` atomically (:func:`atomic_write_bytes`; no newline translation)."""
    atomic_write_bytes(path, text.encode(encoding), durable=durable)
