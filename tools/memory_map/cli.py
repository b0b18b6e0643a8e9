"""``python -m pypto.tools.memory_map DUMP|passes_dump/|BUILD_DIR [-o OUT.html] [-p PASS] [-b BACKEND]``.

Exit codes: 0 success (the report path is printed), 1 a dump the map cannot
draw or an I/O failure (one line ``pypto-memory-map: error: <what>``), 2
argument errors (argparse).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

from pypto.reports.cli import output_path, report_main, write_report
from pypto.utils.cli import check_output_not_input

from .model import MemoryMapError, UnassignedAddressesError, build_map, normalize_backend
from .render import render_map

PROG = "pypto-memory-map"
DEFAULT_PASS = "AllocateMemoryAddr"
DEFAULT_BACKEND = "Ascend910B"
_TARGET_ARCH = re.compile(r'pto\.target_arch\s*=\s*"([^"]+)"')
_PTO_FILES = ("ptoas/*.pto", "kernels/**/*.pto")
"""Where :func:`detect_backend` looks for ``pto.target_arch``, relative to the build directory."""


def _backend(value: str) -> str:
    name = normalize_backend(value)
    if name is None:
        raise argparse.ArgumentTypeError(f"unknown backend {value!r} (choose Ascend910B or Ascend950)")
    return name


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``prog`` fixed so both entry points print the same)."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description=(
            "Draw the on-chip memory of a pass dump as one self-contained HTML page: "
            "address across, lifetime down, the IR beside."
        ),
    )
    p.add_argument(
        "path", metavar="DUMP|passes_dump/|BUILD_DIR", help="a pass dump, a passes_dump/ directory or a build directory"
    )
    p.add_argument("-o", "--output", metavar="OUT.html", help="report path, - for stdout (default: <dump>.memory_map.html)")
    p.add_argument(
        "-p",
        "--pass",
        dest="pass_name",
        metavar="PASS",
        default=DEFAULT_PASS,
        help=f"in a directory, take the highest-numbered *_after_PASS.py (default: {DEFAULT_PASS})",
    )
    p.add_argument(
        "-b",
        "--backend",
        type=_backend,
        metavar="BACKEND",
        help="Ascend910B or Ascend950 (default: pto.target_arch of ../ptoas/*.pto, else Ascend910B, marked assumed)",
    )
    return p


def _numbered(directory: Path, pass_name: str) -> list[tuple[int, Path]]:
    """Every ``NN_after_<pass_name>.py`` in ``directory`` (files or not), by number."""
    pat = re.compile(rf"^(\d+)_after_{re.escape(pass_name)}\.py$")
    out = []
    for f in directory.iterdir():
        m = pat.match(f.name)
        if m:
            out.append((int(m.group(1)), f))
    return sorted(out)


def failed_dump(directory: Path) -> Path | None:
    """The ``NN_failed_<Pass>.py`` a failed compile left in ``directory`` (None if it did not fail)."""
    failed = sorted(f for f in directory.glob("[0-9]*_failed_*.py") if f.is_file())
    return failed[0] if failed else None


def _failed_error(directory: Path, failed: Path) -> MemoryMapError:
    name = failed.stem.split("_failed_", 1)[1]
    return MemoryMapError(
        f"{directory}: the compile failed in pass {name} ({failed.name}), so no pass assigned on-chip addresses; "
        "fix that error (see passes_dump/reproducer) and compile again"
    )


def find_dump(path: Path, pass_name: str) -> Path:
    """The dump file ``path`` names: itself, or the highest-numbered
    ``*_after_<pass_name>.py`` of a ``passes_dump/`` or of a build directory's one."""
    if not path.exists():
        raise MemoryMapError(f"no such file or directory: {path}")
    if path.is_file():
        if path.suffix != ".py":
            raise MemoryMapError(f"not a pass dump (expected a .py file): {path}")
        return path
    directory = path / "passes_dump" if (path / "passes_dump").is_dir() else path
    found = _numbered(directory, pass_name)
    if found:
        dump = found[-1][1]
        if not dump.is_file():
            raise MemoryMapError(f"{dump}: the pass dump is not a file (expected the .py the compile wrote)")
        return dump
    failed = failed_dump(directory)
    if failed is not None:
        raise _failed_error(directory, failed)
    if pass_name == DEFAULT_PASS and _numbered(directory, "InitMemRef"):
        raise MemoryMapError(
            f"{directory} has no *_after_{DEFAULT_PASS}.py: the build ran with memory_planner=PTOAS, which leaves "
            "on-chip addresses to ptoas; compile with the default planner (PYPTO) to get a memory map"
        )
    if not any(directory.glob("[0-9]*_*.py")):
        raise MemoryMapError(f"{path} is neither a pass dump, a passes_dump/ directory nor a build directory")
    raise MemoryMapError(f"{directory} has no *_after_{pass_name}.py")


def detect_backend(dump: Path) -> tuple[str, bool, str]:
    """(backend, assumed, where it came from): ``pto.target_arch`` of the build's
    ``ptoas/*.pto`` (then ``kernels/**/*.pto``, where upstream builds without
    ptoas keep them), else Ascend910B, assumed."""
    build = dump.resolve().parent.parent
    for pattern in _PTO_FILES:
        for pto in sorted(build.glob(pattern)):
            try:
                head = pto.read_text(encoding="utf-8", errors="replace")[:4096]
            except OSError:
                continue
            m = _TARGET_ARCH.search(head)
            if m:
                name = normalize_backend(m.group(1))
                rel = pto.relative_to(build).as_posix()
                if name is not None:
                    return name, False, f"pto.target_arch = {m.group(1)!r} in {rel}"
    return DEFAULT_BACKEND, True, "no ptoas/*.pto with pto.target_arch"


def run(args: argparse.Namespace) -> Path:
    """Build and write the report; returns its path."""
    dump = find_dump(Path(args.path), args.pass_name)
    out = output_path(Path(args.output) if args.output else dump.with_suffix(".memory_map.html"), MemoryMapError)
    build = dump.resolve().parent.parent
    check_output_not_input(out, [dump, *(p for pattern in _PTO_FILES for p in build.glob(pattern))])
    if args.backend:
        backend, assumed, source = args.backend, False, "-b"
    else:
        backend, assumed, source = detect_backend(dump)
    try:
        mm = build_map(dump, backend, assumed, source)
    except UnassignedAddressesError as e:
        failed = failed_dump(dump.parent)
        if failed is not None:
            raise _failed_error(dump.parent, failed) from e
        if not _numbered(dump.parent, DEFAULT_PASS) and _numbered(dump.parent, "InitMemRef"):
            raise MemoryMapError(
                f"{dump.name}: addresses are not assigned: the build ran with memory_planner=PTOAS (no "
                f"*_after_{DEFAULT_PASS}.py in {dump.parent.name}/), which leaves on-chip addresses to ptoas; "
                "compile with the default planner (PYPTO) to get a memory map"
            ) from e
        raise
    return write_report(out, render_map(mm), MemoryMapError)


def main(argv: Sequence[str] | None = None) -> int:
    """The command line entry point."""
    return report_main(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
