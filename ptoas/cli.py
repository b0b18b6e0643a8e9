"""``ptoas``: compile a ``.pto`` file to kernel C++ with the xDSL pipeline.

::

    ptoas [IN.pto|-] [-o OUT.cpp|-] [--pto-arch=a3|a5 | --arch a2a3|a5] [--pto-level=level1|2|3]
          [--enable-insert-sync] [--disable-infer-layout] [--emit-addptr-trace]
          [--memory-planner] [--print-ir-after-all] [--dump-dir DIR] [--emit cpp|pto]

PTOAS's options (``tools/ptoas/ptoas.cpp`` of hw-native-sys/PTOAS) with its
defaults: input and output ``-`` (stdin / stdout); ``--pto-arch`` ``a3`` (our
``a2a3``) or ``a5``, else the module's ``pto.target_arch``; an invalid arch or
level is an ``Error: invalid ...`` line and exit 1, as a usage error is.
``--pto-level=level3`` requires ``addr`` on every ``pto.alloc_tile``;
``level1``/``level2`` reject it. Without ``--pto-level`` both are accepted
(our own ``.pto`` carries addresses; PTOAS's default, level2, would reject
them). ``--disable-infer-layout`` and ``--emit-addptr-trace`` are accepted and
change nothing (we infer no layouts and emit no addptr). ``--arch``,
``--memory-planner``, ``--print-ir-after-all``, ``--dump-dir`` and ``--emit``
are ours.

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
from typing import NoReturn

from xdsl.dialects.builtin import ModuleOp
from xdsl.utils.exceptions import ParseError

from pypto.errors import Error
from pypto.ptoas.arch_scope import apply_left_blayout, text_arch
from pypto.ptoas.dialect.tile_ops import AllocTileOp, TAssignOp
from pypto.ptoas.emitc.errors import EmitError
from pypto.ptoas.passes import ARCHS, PtoasOptions, run_ptoas_pipeline
from pypto.ptoas.pto_text import PTOVerifyError, SourceMap, format_diagnostic, parse_pto_with_source_map, print_pto
from pypto.utils.atomic import atomic_write_text, check_writable_path
from pypto.utils.cli import check_output_not_input, cli_main, read_input_text, write_stdout

PTO_ARCHS = {"a3": "a2a3", "a5": "a5"}  # PTOAS's --pto-arch -> our arch name
PTO_LEVELS = ("level1", "level2", "level3")


class CliError(Error):
    """A user-facing failure with a ready message."""


class _Parser(argparse.ArgumentParser):
    """argparse whose usage errors exit 1, as PTOAS's (LLVM's) option parser does."""

    def error(self, message: str) -> NoReturn:
        self.print_usage(sys.stderr)
        self.exit(1, f"{self.prog}: error: {message}\n")


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="ptoas", description="Compile a .pto file to kernel C++ (xDSL ptoas).")
    p.add_argument("input", nargs="?", default="-", help="the .pto file (default '-': stdin)")
    p.add_argument("-o", "--output", default="-", help="output file (default '-': stdout)")
    arch = p.add_mutually_exclusive_group()
    arch.add_argument(
        "--pto-arch", metavar="a3|a5", help="PTOAS's target arch (a3 is our a2a3; overrides the module's)"
    )
    arch.add_argument("--arch", choices=ARCHS, help="target arch (overrides the module's pto.target_arch)")
    p.add_argument("--pto-level", metavar="level1|level2|level3", help="PTOAS's build level (level3: tiles carry addr)")
    p.add_argument("--disable-infer-layout", action="store_true", help="accepted for PTOAS compatibility (no effect)")
    p.add_argument("--emit-addptr-trace", action="store_true", help="accepted for PTOAS compatibility (no effect)")
    p.add_argument("--enable-insert-sync", action="store_true", help="insert set_flag/wait_flag for pipe hazards")
    p.add_argument("--memory-planner", action="store_true", help="re-plan every tile address (plan-memory)")
    p.add_argument("--print-ir-after-all", action="store_true", help="print the IR after each pass to stderr")
    p.add_argument("--dump-dir", help="write NN_after_<pass>.mlir into this directory")
    p.add_argument("--emit", choices=("cpp", "pto"), default="cpp", help="what to write (default: cpp)")
    return p


def _read(path: str) -> tuple[str, str]:
    """The input's text and its name; bytes that are not UTF-8 are an ``InputError`` naming the byte
    and its offset (``read_input_text``, as pypto-opt reads its input)."""
    try:
        return read_input_text(path), "<stdin>" if path == "-" else path
    except OSError as e:
        raise CliError(f"{path}: error: cannot read input: {e.strerror or e}") from None


def _emit_cpp(module: ModuleOp) -> str:
    try:
        from pypto.ptoas.emitc import emit_cpp
    except ImportError as e:
        raise CliError(f"ptoas: error: C++ emission is not available ({e}); use --emit pto") from None
    return emit_cpp(module)


def resolve_arch(args: argparse.Namespace) -> str | None:
    """Our arch name from ``--pto-arch`` (PTOAS's spelling, any case) or ``--arch``; None keeps the module's."""
    if args.pto_arch is None:
        return args.arch
    arch = PTO_ARCHS.get(args.pto_arch.lower())
    if arch is None:
        raise CliError(f"Error: invalid --pto-arch='{args.pto_arch}'. Expected 'a3' or 'a5'.")
    return arch


def resolve_level(args: argparse.Namespace) -> str | None:
    """The ``--pto-level`` asked for (lower case), or None when not given."""
    if args.pto_level is None:
        return None
    level = args.pto_level.lower()
    if level not in PTO_LEVELS:
        raise CliError(f"Error: invalid --pto-level='{args.pto_level}'. Expected 'level1', 'level2', or 'level3'.")
    return level


def check_level(module: ModuleOp, level: str | None, insert_sync: bool) -> None:
    """PTOAS's level rules: ``pto.tassign`` only at level3 and without insert-sync;
    ``pto.alloc_tile addr`` required at level3, rejected below (raises CliError / PTOVerifyError)."""
    if level is None:
        return
    if any(isinstance(op, TAssignOp) for op in module.walk()):
        if level != "level3":
            raise CliError("Error: pto.tassign is only supported when --pto-level=level3.")
        if insert_sync:
            raise CliError("Error: pto.tassign requires --enable-insert-sync to be disabled.")
    for op in module.walk():
        if not isinstance(op, AllocTileOp):
            continue
        if level == "level3" and op.addr is None:
            raise PTOVerifyError("'pto.alloc_tile' op requires 'addr' operand when --pto-level=level3", op)
        if level != "level3" and op.addr is not None:
            raise PTOVerifyError(
                "'pto.alloc_tile' op unexpected 'addr' operand: only supported when --pto-level=level3", op
            )


def prints_plan_memory(module: ModuleOp, level: str | None) -> bool:
    """Does PTOAS print its PlanMemory dump for this input? It runs PlanMemory below level3;
    without ``--pto-level``, a module whose tiles carry ``addr`` (or uses ``tassign``) is taken as level3."""
    if level is not None:
        return level != "level3"
    return not any(
        (isinstance(op, AllocTileOp) and op.addr is not None) or isinstance(op, TAssignOp) for op in module.walk()
    )


def compile_text(text: str, filename: str, args: argparse.Namespace) -> str:
    """Parse, run the pipeline and produce the output text (raises ParseError / PTOVerifyError)."""
    source_map: SourceMap | None = None
    arch = resolve_arch(args)
    level = resolve_level(args)
    # PTOAS parses under an arch (flag, else the text's, else a3): Left tiles take its layout.
    declared = text_arch(text)
    text = apply_left_blayout(text, arch or declared or "a2a3")
    if arch is None and declared in ARCHS:
        arch = declared  # PTOAS's "a3" is our "a2a3"
    try:
        module, source_map = parse_pto_with_source_map(text, filename)
        check_level(module, level, args.enable_insert_sync)
        options = PtoasOptions(
            arch=arch,
            memory_planner=args.memory_planner,
            insert_sync=args.enable_insert_sync,
            ptoas_sync=True,
            dump_dir=Path(args.dump_dir) if args.dump_dir else None,
            dump_inputs=(Path(args.input),) if args.input != "-" else (),
            print_ir_after_all=sys.stderr if args.print_ir_after_all else None,
            plan_memory_dump=sys.stderr if prints_plan_memory(module, level) else None,
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
    except EmitError as e:  # an op or form the emitter does not handle: the user's input, located
        raise CliError(format_diagnostic(PTOVerifyError(str(e), e.op), source_map)) from None
    except (ValueError, NotImplementedError) as e:
        raise CliError(f"{filename}: error: C++ emission failed: {e}") from None


@cli_main("ptoas")
def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the exit code (mapped by :func:`pypto.utils.cli.run_cli`)."""
    args = _parser().parse_args(argv)
    check_output_not_input(args.output, [args.input])
    text, filename = _read(args.input)
    to_file = bool(args.output) and args.output != "-"
    if to_file:
        check_writable_path(args.output)
    out = compile_text(text, filename, args)
    if to_file:
        atomic_write_text(args.output, out)
    else:
        write_stdout(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
