"""``python -m pypto.tools.clean_sim_trace <path> [-o OUTPUT_DIR] [--keep-scalar] [--raw-metrics]``: a clean,
Chrome/Perfetto-viewable in-core pipeline trace (upstream PyPTO's CLI, docs/en/dev/04-simulator-trace-cleaning.md).

``<path>`` is one of

- a real simulator dump: a ``visualize_data.bin`` file or an ``OPPROF_*`` folder holding
  ``simulator/visualize_data.bin`` (:mod:`pypto.runtime.dfx.simdump`). ``trace.clean.json`` and
  ``instr_metrics.json`` (the API_INSTR block reshaped per core; verbatim with ``--raw-metrics``) are
  written next to the file, or into ``-o``;
- a build directory of a program that ran (its ``runtime/<kernel>.pto``, the kernels as the device
  model runs them) or one such ``.pto`` file: each kernel runs alone on the device model with random
  inputs (:func:`pypto.device.interpreter.example_args`: a data-dependent kernel's trip counts are
  those of the inputs, as with upstream's profiling skill) and ``<n>_<kernel>/`` gets
  ``trace.clean.json``, ``instr_metrics.json`` and ``bottleneck.txt`` (:mod:`pypto.runtime.dfx.incore`;
  ``n`` numbers the kernels by name, ``task_id`` in the JSON), under ``<build>/dfx_outputs/incore/``
  or ``-o``. A kernel that cannot run alone (it pops what another core pushes) is reported and
  skipped. ``RunConfig(enable_incore_trace=True)`` writes the same files for a real run's tasks.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from pypto.errors import Error
from pypto.runtime.dfx.base import DFX_DIR, json_text
from pypto.runtime.dfx.incore import INCORE_DIR, core_name, incore_trace, instr_metrics, write_part
from pypto.runtime.dfx.simdump import (
    API_INSTR,
    TRACE,
    DumpError,
    clean_dump_trace,
    find_dump,
    read_dump,
    reshape_metrics,
)
from pypto.runtime.dfx.trace import trace_json
from pypto.utils.atomic import atomic_write_files
from pypto.utils.cli import cli_main

CUBE_PIPES = frozenset({"CUBE", "MTE1", "FIXPIPE"})


class ToolError(Error):
    """A one-line error for the command line."""


def clean_dump(dump: Path, out: Path | None, keep_scalar: bool, raw_metrics: bool) -> list[Path]:
    """The two files of a simulator dump."""
    blocks = read_dump(dump)
    metrics = None
    try:
        trace = clean_dump_trace(blocks[TRACE], keep_scalar)
        if API_INSTR in blocks:
            metrics = blocks[API_INSTR] if raw_metrics else reshape_metrics(blocks[API_INSTR])
    except DumpError as e:  # a block's shape: the message names the file
        raise DumpError(f"{dump}: {e}") from None
    folder = out if out is not None else dump.parent
    folder.mkdir(parents=True, exist_ok=True)
    files = [(folder / "trace.clean.json", trace_json(trace).encode("utf-8"))]
    if metrics is not None:
        files.append((folder / "instr_metrics.json", (json_text(metrics) + "\n").encode("utf-8")))
    atomic_write_files(files)  # both or neither (a folder in a file's place fails before anything is written)
    return [path for path, _ in files]


def kernel_files(path: Path) -> tuple[list[Path], Path]:
    """The ``.pto`` files to run and the default output folder."""
    if path.is_file() and path.suffix == ".pto":
        return [path], path.parent
    units = sorted((path / "runtime").glob("*.pto")) if path.is_dir() else []
    if not units:
        raise ToolError(
            f"{path}: not a visualize_data.bin, an OPPROF_* folder, a .pto file or a build directory with "
            "runtime/*.pto (run the program once with save_kernels_dir=... to get one)"
        )
    return units, path / DFX_DIR / INCORE_DIR


def clean_kernels(path: Path, out: Path | None, keep_scalar: bool) -> list[Path]:
    """Run each kernel of a build directory (or a ``.pto``) alone and write its in-core files."""
    from pypto.device.interpreter import DeviceError, example_args, load_module, run_kernel

    units, default_out = kernel_files(path)
    folder = out if out is not None else default_out
    written: list[Path] = []
    failed: list[str] = []
    for n, unit in enumerate(units):
        try:
            module, positions, _ = load_module(unit)
            run = run_kernel(module, None, example_args(module), positions=positions, pto_file=str(unit))
        except (DeviceError, ValueError) as e:
            failed.append(f"{unit.name}: {str(e).splitlines()[0]}")
            print(f"clean_sim_trace: skipped {unit}: {str(e).splitlines()[0]}", file=sys.stderr)
            continue
        kernel = unit.stem
        core_type = "aic" if any(r.pipe in CUBE_PIPES for r in run.records) else "aiv"
        core = core_name(core_type, 0)
        metrics = instr_metrics(run, kernel, n, core, core_type)
        files, text = write_part(folder / f"{n}_{kernel}", metrics, incore_trace(run, kernel, n, core, keep_scalar))
        written += files
        print(text)
    if not written:
        raise ToolError("no kernel could run alone: " + "; ".join(failed))
    return written


@cli_main("clean_sim_trace")
def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="clean_sim_trace", description=__doc__.splitlines()[0])
    parser.add_argument("path", type=Path, help="visualize_data.bin, an OPPROF_* folder, a build directory or a .pto")
    parser.add_argument("-o", "--output-dir", type=Path, default=None, help="where to write (default: see above)")
    parser.add_argument("--keep-scalar", action="store_true", help="keep the SCALAR setup lane (dropped by default)")
    parser.add_argument("--raw-metrics", action="store_true",
                        help="dump the API_INSTR block verbatim instead of reshaping it (simulator dumps)")  # fmt: skip
    args = parser.parse_args(argv)
    if not args.path.exists():
        raise ToolError(f"{args.path}: no such file or directory")
    dump = None if args.path.suffix == ".pto" else find_dump(args.path)
    if dump is not None:
        written = clean_dump(dump, args.output_dir, args.keep_scalar, args.raw_metrics)
    else:
        written = clean_kernels(args.path, args.output_dir, args.keep_scalar)
    for p in written:
        print(p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
