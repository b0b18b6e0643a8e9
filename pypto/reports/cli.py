"""What every report command shares: its error type, the atomic write of the
page and the ``main`` that runs it through :func:`pypto.utils.cli.run_cli`
(failures: ``<prog>: error: <what>``, exit 1; argparse errors exit 2; a bug
exit 2 with ``internal error``; success prints the report's path, exit 0).
``-o -`` is stdout (the page, and no path after it), as for pypto-opt and ptoas."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from pypto.errors import Error
from pypto.utils.atomic import atomic_write_text, check_writable_path
from pypto.utils.cli import run_cli, write_stdout


class ReportError(Error):
    """A report could not be made (bad input or I/O): one line, exit 1."""


STDOUT = "-"
"""The output path that means stdout."""


def output_path(path: Path, error: type[Error] = ReportError) -> Path:
    """``path`` when a report can be written there: its folder exists and it is not a folder (``-``: stdout)."""
    if os.fspath(path) == STDOUT:
        return path
    try:
        return check_writable_path(path)  # the one rule of every output path (its messages too)
    except OSError as e:
        raise error(f"{e.strerror}: {e.filename}") from None


def write_report(path: Path, html: str, error: type[ReportError] = ReportError) -> Path:
    """Write the page atomically (``-``: to stdout); an OSError becomes ``error``."""
    if os.fspath(path) == STDOUT:
        write_stdout(html)
        return path
    try:
        atomic_write_text(path, html)
    except OSError as e:
        raise error(f"cannot write {path}: {e.strerror or e}") from e
    return path


def report_main(
    prog: str,
    parser: argparse.ArgumentParser,
    run: Callable[[argparse.Namespace], Path | os.PathLike[str]],
    argv: Sequence[str] | None = None,
) -> int:
    """Parse ``argv``, ``run`` it and print the output path (none when the page went to stdout)."""

    def body() -> int:
        out = run(parser.parse_args(argv))
        if os.fspath(out) != STDOUT:
            print(out)
        return 0

    return run_cli(prog, body)
