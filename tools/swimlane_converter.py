"""Convert a run's chip_swimlane_records.json (and deps.json) to the Chrome Trace Event JSON that Perfetto's UI
opens (runtime-dfx-formats.md §3).

The trace is :mod:`pypto.runtime.dfx.trace`'s, the one a flagged run writes.

    python -m pypto.tools.swimlane_converter RECORDS [--deps-json DEPS] [--func-names MAP] [-o OUT]
        [--overhead] [--perfetto OUT.pftrace]

``--overhead`` adds the §8 scheduler-overhead model as counter tracks on pid 2 (``oh_*``,
:mod:`pypto.runtime.dfx.overhead`); ``--perfetto`` also writes the same trace as Perfetto's native
protobuf (:mod:`pypto.runtime.dfx.perfetto`, the PyPI ``perfetto`` package of the ``dfx`` extra).

Without ``--deps-json`` a sibling ``deps.json`` is used when there is one (no deps: no dependency arrows
and every bar ``task(..)``); names come from ``--func-names`` or the newest sibling ``name_map*.json`` (a
func_id it does not name: ``func_<id>_<letters>``). deps.json is checked by deps_viewer's check_deps.
Records read from stdin (``-``) have no siblings: only the files the options name are read.
The default output is ``merged_swimlane.json`` next to the records; ``-o -`` writes the JSON to stdout
(and prints no path). An output path naming an input file is refused.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from pypto.reports.cli import STDOUT
from pypto.runtime.dfx.overhead import overhead_events
from pypto.runtime.dfx.perfetto import perfetto_trace
from pypto.runtime.dfx.trace import (
    TraceInputError,
    chrome_trace,
    func_name_table,
    read_json_file,
    trace_json,
)
from pypto.tools.deps_viewer import read_deps
from pypto.utils.atomic import atomic_write_files, check_writable_path
from pypto.utils.cli import check_output_not_input, cli_main


def convert(
    records_path: Path,
    deps_path: Path | None,
    names_path: Path | None,
    out: Path | None,
    *,
    overhead: bool = False,
    perfetto: Path | None = None,
) -> Path:
    """Write the merged trace (with the overhead counters when ``overhead``; also as Perfetto's protobuf
    to ``perfetto`` when given); returns the JSON's path."""
    records = read_json_file(records_path, "swimlane records")
    if not isinstance(records, dict):
        raise TraceInputError(f"{records_path}: expected a JSON object with metadata and aicore_tasks")
    folder = None if str(records_path) == "-" else records_path.parent  # records from stdin have no siblings
    if folder is not None and deps_path is None and (folder / "deps.json").is_file():
        deps_path = folder / "deps.json"
    if folder is not None and names_path is None:
        maps = sorted(folder.glob("name_map*.json"), key=lambda p: (p.stat().st_mtime, p.name))
        names_path = maps[-1] if maps else None
    names_by_id = None
    if names_path is not None:
        name_map = read_json_file(names_path, "name map")  # its errors name the file
        try:
            names_by_id = func_name_table(name_map)
        except TraceInputError as e:
            raise TraceInputError(f"{names_path}: {e}") from None
    deps = read_deps(deps_path, names_by_id) if deps_path is not None else None  # its errors name the file
    try:
        trace = chrome_trace(records, deps=deps)
        if overhead:
            trace["traceEvents"] += overhead_events(records, deps.edges if deps is not None else [])
    except TraceInputError as e:
        raise TraceInputError(f"{records_path}: {e}") from None
    target = out if out is not None else folder / "merged_swimlane.json"
    to_stdout = os.fspath(target) == STDOUT
    outputs = ([] if to_stdout else [(target, "-o")]) + ([(perfetto, "--perfetto")] if perfetto is not None else [])
    for path, option in outputs:
        if os.fspath(path) == STDOUT:
            raise TraceInputError(f"{option} -: the Perfetto trace is binary; give it a file path")
        try:
            check_writable_path(path)  # a missing folder, or a folder as the output, fails before anything is written
        except OSError as e:
            raise TraceInputError(f"{e.strerror}: {e.filename}") from None
        check_output_not_input(path, [records_path, deps_path, names_path], option)  # an input is never replaced
    if perfetto is not None and not to_stdout and perfetto.resolve() == target.resolve():
        raise TraceInputError(f"{perfetto}: --perfetto and -o name the same file; the protobuf would replace the JSON")
    text = trace_json(trace)
    files: list[tuple[Path, bytes]] = [] if to_stdout else [(target, text.encode("utf-8"))]
    if perfetto is not None:
        files.append((perfetto, perfetto_trace(trace)))
    atomic_write_files(files)  # both or neither: a failed write of one leaves the other as it was
    if to_stdout:
        sys.stdout.write(text)
        sys.stdout.flush()
    return target


@cli_main("swimlane_converter")
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="swimlane_converter", description=__doc__.split("\n\n")[0])
    parser.add_argument("records", type=Path, help="chip_swimlane_records.json")
    parser.add_argument("--deps-json", type=Path, default=None, help="deps.json (default: a sibling one)")
    parser.add_argument("--func-names", type=Path, default=None, help="name_map*.json (default: the newest sibling)")
    parser.add_argument("-o", "--output", type=Path, default=None,
                        help="output (default: merged_swimlane.json; -: stdout)")  # fmt: skip
    parser.add_argument("--overhead", action="store_true", help="add the scheduler-overhead counter tracks (oh_*)")
    parser.add_argument("--perfetto", type=Path, default=None, metavar="OUT.pftrace",
                        help="also write the trace as Perfetto's native protobuf")  # fmt: skip
    args = parser.parse_args(argv)
    path = convert(args.records, args.deps_json, args.func_names, args.output, overhead=args.overhead,
                   perfetto=args.perfetto)  # fmt: skip
    if os.fspath(path) != STDOUT:
        print(path)
    if args.perfetto is not None:
        print(args.perfetto)
    return 0


if __name__ == "__main__":
    sys.exit(main())
