"""The output directory of one ``compile``.

The default is ``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>``,
created exclusively so concurrent compiles never share one.

An explicit ``output_dir`` that already holds a build is replaced whole: the
old folder is renamed aside (``.<name>.old-<random>``, hidden, beside it) and
deleted, and the compile starts in a fresh, empty folder, so its files never
mix with an earlier build's (a failed compile leaves exactly its own dumps and
reproducer). A non-empty folder that holds no build is refused
(:class:`OutputDirError`): ``compile`` never deletes files it did not write.

What a build is (:func:`is_build_dir`): an L2 build has ``passes_dump/`` or ``report/`` (made when its
compile starts); an L3 (multi-chip) build has ``distributed_meta.json``, and a per-rank program in its
torch form ``comm_meta.json``; an L3 or multi-entry build whose top level has none of these (it failed,
or its compile was stopped, before they were written) is known by a build in its ``next_levels/``.
"""

from __future__ import annotations

import os
import secrets
import shutil
from datetime import datetime
from pathlib import Path

from pypto.core.program import Program
from pypto.errors import Error

REPORT_DIR = "report"
"""The folder of ``perf_hints.log`` and the compile profile."""
NEXT_LEVELS = "next_levels"
"""Where a build keeps its per-program sub-builds (an L3 build's chips, a multi-entry L2 build's entries)."""
DISTRIBUTED_META = "distributed_meta.json"
"""The file of an L3 build's plan and parameters (:mod:`pypto.driver.distributed`)."""
COMM_META = "comm_meta.json"
"""The file of a per-rank program built as its torch form (:mod:`pypto.driver.comm_program`)."""


def default_output_dir(program: Program | str, now: datetime | None = None) -> Path:
    """``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>`` for a program or a
    build's name (a name only: :func:`make_output_dir` creates it exclusively)."""
    root = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    name = program if isinstance(program, str) else program.name or "program"
    return Path(root) / f"{name}_{stamp}_{secrets.token_hex(4)}"


BUILD_SUBDIRS = ("passes_dump", REPORT_DIR)
"""Folders that only a build has: a folder with one of them is a build directory."""
BUILD_FILES = (DISTRIBUTED_META, COMM_META)
"""Files that only a build has: a folder with one of them is a build directory."""

_ASIDE = ".old-"


class OutputDirError(Error):
    """``output_dir`` cannot be used: it is a file, or a folder of other files."""


def is_build_dir(path: Path) -> bool:
    """Whether ``path`` holds a PyPTO build: one of :data:`BUILD_SUBDIRS` or :data:`BUILD_FILES`, or a
    ``next_levels/`` folder with a build in it (see the module docstring)."""
    if any((path / sub).is_dir() for sub in BUILD_SUBDIRS) or any((path / f).is_file() for f in BUILD_FILES):
        return True
    levels = path / NEXT_LEVELS
    return levels.is_dir() and any(sub.is_dir() and is_build_dir(sub) for sub in levels.iterdir())


def _sweep_aside(out: Path) -> None:
    """Delete the folders an interrupted replace of ``out`` left beside it."""
    for stale in out.parent.glob(f".{out.name}{_ASIDE}*"):
        shutil.rmtree(stale, ignore_errors=True)


def replace_build_dir(out: Path) -> Path:
    """Move the build in ``out`` aside, delete it, and create ``out`` empty."""
    aside = out.parent / f".{out.name}{_ASIDE}{secrets.token_hex(4)}"
    os.rename(out, aside)
    out.mkdir()
    shutil.rmtree(aside, ignore_errors=True)
    return out


def prepare_explicit_dir(output_dir: str | os.PathLike[str]) -> Path:
    """An empty ``output_dir`` for a new build (see the module docstring)."""
    out = Path(output_dir)
    if out.exists() and not out.is_dir():
        raise OutputDirError(f"{out}: output_dir is a file, not a folder")
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except (FileExistsError, NotADirectoryError):  # a file where a folder on the way should be
        blocking = next((p for p in out.parents if p.exists() and not p.is_dir()), out.parent)
        raise OutputDirError(f"{out}: output_dir cannot be made: {blocking} is a file, not a folder") from None
    _sweep_aside(out)
    if not out.is_dir():
        out.mkdir()
        return out
    if not any(out.iterdir()):
        return out
    if not is_build_dir(out):
        raise OutputDirError(
            f"{out}: output_dir is not empty and holds no PyPTO build (no passes_dump/, report/, "
            f"{DISTRIBUTED_META} or {NEXT_LEVELS}/ with a build in it); "
            "refusing to replace it: pass a new or empty folder"
        )
    return replace_build_dir(out)


def make_output_dir(program: Program | str, output_dir: str | os.PathLike[str] | None) -> Path:
    """Create the output directory, empty: a default one is new (never
    shared), an explicit one is replaced whole when it holds a build."""
    if output_dir is not None:
        return prepare_explicit_dir(output_dir)
    for _ in range(100):
        out = default_output_dir(program)
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            out.mkdir()
            return out
        except FileExistsError:
            continue
    raise RuntimeError("could not create a fresh output directory")
