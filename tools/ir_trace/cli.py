"""``pypto-ir-trace PASSES_DUMP [-o PATH] [--context N] [--format auto|py|mlir]``.

Exit codes: 0 success, 1 bad dump contents or I/O failure (one line
``pypto-ir-trace: error: <what>``), 2 argument errors (argparse).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pypto.reports.cli import output_path, report_main, write_report
from pypto.utils.cli import check_output_not_input

from .discovery import FORMATS, VALIDATION_FILE, Dump, IRTraceError, discover
from .lens import build_dir_of, lens_inputs
from .render import render_dump

PROG = "pypto-ir-trace"


def _context(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid non-negative integer: {value!r}") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be a non-negative integer: {value!r}")
    return n


def build_parser() -> argparse.ArgumentParser:
    """The argument parser (``prog`` fixed so both entry points print the same)."""
    p = argparse.ArgumentParser(
        prog=PROG,
        description="Render a pass dump (passes_dump/) as one self-contained HTML diff report.",
    )
    p.add_argument(
        "passes_dump",
        metavar="PASSES_DUMP",
        help="dump directory (00_frontend.py, 01_after_*.py, ...) or a build directory holding passes_dump/ "
        "(then the report has the source-line lens: .pto, C++ and in-core cycles per DSL line)",
    )
    p.add_argument(
        "-o", "--output", metavar="PATH", default="ir_trace.html", help="report path, - for stdout (default: ir_trace.html)"
    )
    p.add_argument(
        "--context", metavar="N", type=_context, default=3, help="unchanged lines kept around each change (default: 3)"
    )
    p.add_argument("--format", choices=FORMATS, default="auto", help="snapshot format (default: auto)")
    return p


def input_files(dump: Dump) -> list[Path]:
    """The files the report is made from: the snapshots, their logs, ``validation.json`` and (in a build
    directory) what the source-line lens reads."""
    files = [dump.path / name for s in dump.snapshots for name in (s.file, s.warning_file) if name]
    files.append(dump.path / VALIDATION_FILE)
    build = build_dir_of(dump)
    return files + (lens_inputs(build) if build is not None else [])


def run(args: argparse.Namespace) -> Path:
    """Build and write the report; returns its path."""
    out = output_path(Path(args.output), IRTraceError)
    dump = discover(args.passes_dump, args.format)
    check_output_not_input(out, input_files(dump))
    return write_report(out, render_dump(dump, args.context), IRTraceError)


def main(argv: Sequence[str] | None = None) -> int:
    """The console script."""
    return report_main(PROG, build_parser(), run, argv)


if __name__ == "__main__":
    sys.exit(main())
