"""``ptoas``: compile a ``.pto`` file to kernel C++ with the xDSL pipeline.

::

    ptoas IN.pto -o OUT.cpp [--arch a2a3|a5] [--enable-insert-sync] [--memory-planner]
                            [--print-ir-after-all] [--dump-dir DIR] [--emit cpp|pto]

Parse -> verify -> plan-memory -> insert-sync (see :mod:`pypto.ptoas.passes`)
-> C++ (:func:`pypto.ptoas.emitc.emit_cpp`). ``--emit pto`` writes the final
``.pto`` instead of C++. Bad input prints one ``file:line:col: error: ...``
line on stderr and exits 1; nothing is written then (the output appears
atomically, only when everything succeeded). A bug prints ``ptoas: internal
error: ...`` and exits 2 (backtrace with ``PYPTO_BACKTRACE=1``); :func:`pypto.utils.cli.cli_main` maps them.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from pypto.errors import Error
from pypto.ptoas.passes import ARCHS, PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import PTOVerifyError, SourceMap, format_diagnostic, parse_pto_with_source_map, print_pto
from pypto.utils.atomic import atomic_write_text, check_writable_path
from pypto.utils.cli import cli_main


class CliError(Error):
    """A user-facing failure with a ready message."""


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="ptoas", description="Compile a .pto file to kernel C++ (xDSL ptoas).")
    p.add_argument("input", help="the .pto file ('-' for stdin)")
    p.add_argument("-o", "--output", help="output file (default: stdout)")
    p.add_argument("--arch", choices=ARCHS, help="target arch (overrides the module's pto.target_arch)")
    p.add_argument("--enable-insert-sync", action="store_true", help="insert set_flag/wait_flag for pipe hazards")
    p.add_argument("--memory-planner", action="store_true", help="re-plan every tile address (plan-memory)")
    p.add_argument("--print-ir-after-all", action="store_true", help="print the IR after each pass to stderr")
    p.add_argument("--dump-dir", help="write NN_after_<pass>.mlir into this directory")
    p.add_argument("--emit", choices=("cpp", "pto"), default="cpp", help="what to write (default: cpp)")
    return p


def _read(path: str) -> tuple[str, str]:
    if path == "-":
        return sys.stdin.read(), "<stdin>"
    try:
        return Path(path).read_text(encoding="utf-8"), path
    except (OSError, UnicodeDecodeError) as e:
        raise CliError(f"{path}: error: cannot read input: {getattr(e, 'strerror', None) or e}") from None


def _emit_cpp(module: ModuleOp) -> str:
    try:
        from pypto.ptoas.emitc import emit_cpp
    except ImportError as e:
        raise CliError(f"ptoas: error: C++ emission is not available ({e}); use --emit pto") from None
    return emit_cpp(module)


def compile_text(text: str, filename: str, args: argparse.Namespace) -> str:
    """Parse, run the pipeline and produce the output text (raises ParseError / PTOVerifyError)."""
    source_map: SourceMap | None = None
    try:
        module, source_map = parse_pto_with_source_map(text, filename)
        options = PtoasOptions(
            arch=args.arch,
            memory_planner=args.memory_planner,
            insert_sync=args.enable_insert_sync,
            dump_dir=Path(args.dump_dir) if args.dump_dir else None,
            print_ir_after_all=sys.stderr if args.print_ir_after_all else None,
        )
        run_ptoas_pipeline(module, options)
    except (ParseError, PTOVerifyError) as e:
        raise CliError(format_diagnostic(e, source_map)) from None
    if args.emit == "pto":
        return print_pto(module)
    try:
        return _emit_cpp(module)
    except PTOVerifyError as e:
        raise CliError(format_diagnostic(e, source_map)) from None
    except (ValueError, NotImplementedError) as e:
        raise CliError(f"{filename}: error: C++ emission failed: {e}") from None


@cli_main("ptoas")
def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (mapped by :func:`pypto.utils.cli.run_cli`)."""
    args = _parser().parse_args(argv)
    text, filename = _read(args.input)
    if args.output:
        check_writable_path(args.output)
    out = compile_text(text, filename, args)
    if args.output:
        atomic_write_text(args.output, out)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
