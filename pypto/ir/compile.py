"""``compile`` and ``lower_program``: run the pass pipeline over a Program.

``compile`` works on a clone (the input stays as written), writes the pass
dumps and the output directory layout (pl-dsl.md §6); ``lower_program`` runs
the same pipeline and writes nothing. Codegen comes later.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp

from .dump import DumpWriter, dump_level
from .passes.base import PyPTOPass
from .pipeline import PassManager
from .program import PassDumpLevel, Program

REPORT_DIR = "report"


class CompiledProgram:
    """The result of :func:`compile`: the output directory (path-like), the
    input program and the lowered program."""

    def __init__(self, output_dir: Path, program: Program, lowered: Program):
        self.output_dir = output_dir
        self.program = program
        self.lowered = lowered

    def __fspath__(self) -> str:
        return str(self.output_dir)

    def __str__(self) -> str:
        return str(self.output_dir)

    def __repr__(self) -> str:
        return f"CompiledProgram({str(self.output_dir)!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, CompiledProgram):
            return self.output_dir == other.output_dir
        if isinstance(other, (str, os.PathLike)):
            return self.output_dir == Path(other)
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.output_dir)

    @property
    def passes_dump(self) -> Path:
        return self.output_dir / "passes_dump"


def _as_program(program: Program | ModuleOp) -> Program:
    if isinstance(program, Program):
        return program
    if isinstance(program, ModuleOp):
        return Program(program)
    raise TypeError(f"expected a pypto.ir.Program, got {type(program).__name__}")


def default_output_dir(program: Program, now: datetime | None = None) -> Path:
    """``${PYPTO_PROG_BUILD_DIR:-build_output}/<program.name>_<YYYYmmdd_HHMMSS>``."""
    root = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return Path(root) / f"{program.name or 'program'}_{stamp}"


def compile(  # noqa: A001 - the upstream API name
    program: Program | ModuleOp,
    output_dir: str | os.PathLike[str] | None = None,
    dump_passes: bool | PassDumpLevel = True,
    *,
    passes: Sequence[type[PyPTOPass]] | None = None,
) -> CompiledProgram:
    """Compile ``program`` into ``output_dir``.

    Runs the pipeline (``passes``, default OutlineIncoreScopes and
    ConvertTensorToTileOps) on a clone of ``program``, verifying after each
    pass. When ``dump_passes`` is truthy (a bool or a ``PassDumpLevel``),
    writes ``passes_dump/00_frontend.py`` and ``NN_after_<PassName>.py``;
    ``report/`` is always created.
    """
    source = _as_program(program)
    out = Path(output_dir) if output_dir is not None else default_output_dir(source)
    out.mkdir(parents=True, exist_ok=True)
    (out / REPORT_DIR).mkdir(exist_ok=True)
    writer = DumpWriter(out, dump_level(dump_passes))
    work = source.clone()
    writer.write_frontend(work)
    lowered = PassManager(passes).run(work, callback=writer if writer.enabled else None)
    return CompiledProgram(out.resolve(), source, lowered)


def lower_program(program: Program | ModuleOp, *, passes: Sequence[type[PyPTOPass]] | None = None) -> Program:
    """The program after the pipeline (on a clone); no files are written."""
    return PassManager(passes).run(_as_program(program).clone())
