"""``atomic_write_files`` writes into a device or FIFO among its targets, as ``atomic_write_bytes`` does: the
rename over it put a regular file in place of the link (or, as root, of ``/dev/null`` itself)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from pypto.utils.atomic import KeptFiles, atomic_write_files


def test_a_device_among_the_files_is_written_into(tmp_path: Path) -> None:
    link = tmp_path / "trace.clean.json"
    link.symlink_to(os.devnull)
    other = tmp_path / "instr_metrics.json"
    atomic_write_files([(link, b"{}"), (other, b"[]")])
    assert link.is_symlink() and os.readlink(link) == os.devnull
    assert stat.S_ISCHR(os.stat(os.devnull).st_mode)
    assert other.read_bytes() == b"[]"


def test_a_fifo_gets_the_bytes(tmp_path: Path) -> None:
    """A FIFO is written into (a reader gets the bytes), with ``kept`` remembering every file in order."""
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        first = tmp_path / "a.json"
        atomic_write_files([(first, b"1"), (fifo, b"through the pipe")], kept=KeptFiles())
        assert os.read(reader, 100) == b"through the pipe"
        assert stat.S_ISFIFO(os.stat(fifo).st_mode) and first.read_bytes() == b"1"
    finally:
        os.close(reader)


def test_a_symlink_is_written_through(tmp_path: Path) -> None:
    """``-o out.mlir`` where out.mlir links to a shared file: the shared file gets the bytes and the link stays
    (the rename replaced the link with a regular file, and the shared file kept its old text)."""
    from pypto.utils.atomic import atomic_write_bytes

    shared = tmp_path / "shared"
    shared.mkdir()
    (shared / "out.mlir").write_text("old")
    for i, write in enumerate(
        (
            lambda p, b: atomic_write_bytes(p, b),
            lambda p, b: atomic_write_bytes(p, b, durable=False),
            lambda p, b: atomic_write_files([(p, b)]),
        )
    ):
        link = tmp_path / f"out{i}.mlir"
        link.symlink_to(shared / "out.mlir")
        write(link, f"new {i}".encode())
        assert link.is_symlink() and (shared / "out.mlir").read_text() == f"new {i}"
