"""Compile ptoas C++ with g++: a shared library (cached by content) or a syntax check.

:func:`build_shared` writes ``<name>-<hash>.cpp`` and ``<name>-<hash>.so`` into ``out_dir``
(the hash covers the source, ``pto_cpu.hpp``, the flags and the compiler), so an unchanged
kernel is never compiled twice; the library is renamed into place only when complete.
:func:`build_library` compiles a file in place (the C++ kernel engine's builds, whose
errors must name the user's file). :func:`check_syntax` runs ``g++ -fsyntax-only``. Both raise :class:`BuildError` carrying
g++'s diagnostics.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from .emitc import include_dir

CXX = os.environ.get("PTOAS_CXX", "g++")
BASE_FLAGS = ("-std=c++17", "-O2")
HEADER = "pto_cpu.hpp"


class BuildError(Exception):
    """g++ rejected a source (or is missing); ``stderr`` holds its diagnostics."""

    def __init__(self, message: str, command: Sequence[str] = (), stderr: str = "") -> None:
        super().__init__(message)
        self.command = list(command)
        self.stderr = stderr


def _text(source: str | Path) -> str:
    return Path(source).read_text(encoding="utf-8") if isinstance(source, Path) else source


def _run(command: list[str], what: str) -> None:
    try:
        proc = subprocess.run(command, capture_output=True, text=True, check=False)
    except FileNotFoundError as e:
        raise BuildError(f"{what}: compiler {command[0]!r} not found", command) from e
    if proc.returncode != 0:
        first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:300])
        raise BuildError(f"{what}: g++ failed: {first}\n{proc.stderr}", command, proc.stderr)


def _key(text: str, flags: Sequence[str]) -> str:
    h = hashlib.sha256()
    for part in (text, (include_dir() / HEADER).read_text(encoding="utf-8"), CXX, *flags):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:16]


def _pch_dir(flags: Sequence[str], shared: bool) -> Path | None:
    """A directory with a copy of the header and its precompiled ``.gch`` for these flags (None if g++ fails).

    g++ uses ``pto_cpu.hpp.gch`` when its flags match and otherwise reads the identical copy
    beside it, so this only saves time (parsing the header dominates a kernel's syntax check).
    """
    header = (include_dir() / HEADER).read_text(encoding="utf-8")
    mode = ("-fPIC",) if shared else ()
    key = hashlib.sha256("\0".join((header, CXX, *BASE_FLAGS, *flags, *mode)).encode()).hexdigest()[:16]
    root = Path(os.environ.get("PTOAS_PCH_DIR", Path(tempfile.gettempdir()) / "pypto-ptoas-pch"))
    d = root / key
    gch = d / f"{HEADER}.gch"
    if gch.exists():
        return d
    try:
        d.mkdir(parents=True, exist_ok=True)
        (d / HEADER).write_text(header, encoding="utf-8")
        fd, tmp = tempfile.mkstemp(prefix=".pch.", dir=d)
        os.close(fd)
        proc = subprocess.run(
            [CXX, *BASE_FLAGS, *flags, *mode, "-x", "c++-header", str(d / HEADER), "-o", tmp],
            capture_output=True,
            text=True,
            check=False,
        )
        if proc.returncode != 0:
            os.unlink(tmp)
            return None
        os.replace(tmp, gch)
    except OSError:
        return None
    return d


def compile_command(src: Path, out: Path | None, flags: Sequence[str] = (), shared: bool = True) -> list[str]:
    """The g++ command line for ``src`` (``-fsyntax-only`` when ``out`` is None)."""
    pch = _pch_dir(flags, shared=out is not None and shared)
    includes = ([f"-I{pch}"] if pch is not None else []) + [f"-I{include_dir()}"]
    cmd = [CXX, *BASE_FLAGS, *includes, *flags, str(src)]
    if out is None:
        return [*cmd, "-fsyntax-only"]
    return [*cmd, *(("-shared", "-fPIC") if shared else ()), "-o", str(out)]


def build_shared(source: str | Path, out_dir: str | Path, name: str = "kernel", flags: Sequence[str] = ()) -> Path:
    """Compile C++ (text, or a Path to a file) into a shared library in ``out_dir``; returns its path."""
    text = _text(source)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    stem = f"{re.sub(r'[^A-Za-z0-9_.-]', '_', name)}-{_key(text, flags)}"
    lib = out_dir / f"{stem}.so"
    if lib.exists():
        return lib
    src = out_dir / f"{stem}.cpp"
    src.write_text(text, encoding="utf-8")
    fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=".so", dir=out_dir)
    os.close(fd)
    try:
        _run(compile_command(src, Path(tmp), flags), f"building {src.name}")
        os.replace(tmp, lib)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return lib


def cache_key(text: str, flags: Sequence[str] = ()) -> str:
    """16 hex digits naming a build of ``text``: they change with the source, ``pto_cpu.hpp``, the flags and the compiler."""
    return _key(text, flags)


def build_library(src: Path, lib: Path, flags: Sequence[str] = ()) -> Path:
    """Compile the file ``src`` as it is (g++'s messages name it) into the shared library ``lib``.

    The library is written to a temporary file beside ``lib`` and renamed into place only when g++
    succeeds; on failure nothing is left and :class:`BuildError` carries g++'s diagnostics."""
    lib.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{lib.stem}.", suffix=".so", dir=lib.parent)
    os.close(fd)
    try:
        _run(compile_command(src, Path(tmp), flags), f"building {src}")
        os.replace(tmp, lib)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
    return lib


def check_syntax(source: str | Path, flags: Sequence[str] = ()) -> None:
    """``g++ -std=c++17 -O2 -fsyntax-only`` on C++ text or a file; BuildError on failure."""
    if isinstance(source, Path):
        _run(compile_command(source, None, flags), f"checking {source.name}")
        return
    with tempfile.TemporaryDirectory(prefix="ptoas-syntax-") as d:
        src = Path(d) / "unit.cpp"
        src.write_text(source, encoding="utf-8")
        _run(compile_command(src, None, flags), "checking C++")
