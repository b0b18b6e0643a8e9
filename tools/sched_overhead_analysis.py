"""Print the six scheduler-overhead analyses (runtime-dfx-formats.md §8) of a run's swimlane records and
deps.json as a report.

The analyses are :mod:`pypto.runtime.dfx.sched_overhead`'s.

    python -m pypto.tools.sched_overhead_analysis --chip-swimlane-records-json R --deps-json D

Both inputs are required: level >= 3 records (``RunConfig(enable_chip_swimlane=3)`` or 4) and the same run's
``deps.json`` (``enable_dep_gen=True``), which deps_viewer's check_deps checks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pypto.runtime.dfx.sched_overhead import analyze, format_report
from pypto.runtime.dfx.trace import TraceInputError, read_json_file
from pypto.tools.deps_viewer import read_deps
from pypto.utils.cli import cli_main


def report(records_path: Path, deps_path: Path) -> str:
    """The report of one run's records and deps.json (TraceInputError naming the file on bad input)."""
    records = read_json_file(records_path, "swimlane records", "level >= 3 chip_swimlane_records.json needed")
    deps = read_deps(deps_path, hint="run with RunConfig(enable_dep_gen=True)")  # its errors name the file
    try:
        return format_report(analyze(records, deps.edges, deps.block_nums))
    except TraceInputError as e:
        raise TraceInputError(f"{records_path}: {e}") from None


@cli_main("sched_overhead_analysis")
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="sched_overhead_analysis", description=__doc__.split("\n\n")[0])
    parser.add_argument("--chip-swimlane-records-json", type=Path, default=None, metavar="R",
                        help="chip_swimlane_records.json of a level >= 3 run")  # fmt: skip
    parser.add_argument("--deps-json", type=Path, default=None, metavar="D", help="deps.json of the same run")
    args = parser.parse_args(argv)
    if args.chip_swimlane_records_json is None:
        raise TraceInputError("--chip-swimlane-records-json is required (a level >= 3 chip_swimlane_records.json)")
    if args.deps_json is None:
        raise TraceInputError("--deps-json is required (the run's deps.json: RunConfig(enable_dep_gen=True))")
    text = report(args.chip_swimlane_records_json, args.deps_json)
    sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
