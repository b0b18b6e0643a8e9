"""``lower_program``: a Program through the pass pipeline, on a clone, writing nothing.

Warnings and perf hints go to stderr (pl-dsl.md §6 shapes). ``compile``
(:mod:`pypto.driver.compile`) runs the same pipeline and also writes the
output directory; the runtime lowers a bare Program with this function.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pypto.core.program import Program
from pypto.errors import ArgumentTypeError
from pypto.passes.base import PyPTOPass
from pypto.utils.gc_policy import fewer_collections

from .checks import run_checks
from .manager import MemoryPlanner, OptimizationStrategy, PassManager, PipelineOptions, parse_memory_planner
from .perf_hints import DiagnosticPhase, DiagnosticPolicy, DiagnosticReport
from .session import CompileSession
from .verification import VerificationLevel, parse_verification_level


def as_program(program: Program | ModuleOp) -> Program:
    """``program`` as a Program (a bare ModuleOp is wrapped); TypeError otherwise."""
    if isinstance(program, Program):
        return program
    if isinstance(program, ModuleOp):
        return Program(program)
    raise ArgumentTypeError(f"expected a pypto.ir.Program, got {type(program).__name__}")


def build_manager(
    passes: Sequence[type[PyPTOPass]] | None,
    strategy: OptimizationStrategy,
    memory_planner: MemoryPlanner,
    level: VerificationLevel,
) -> PassManager:
    """The PassManager of ``passes`` when given, else of ``strategy``."""
    if passes is not None:
        return PassManager(passes, verification_level=level, memory_planner=memory_planner)
    return PassManager.get_strategy(strategy, memory_planner, verification_level=level)


def lower_program(
    program: Program | ModuleOp,
    *,
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    memory_planner: MemoryPlanner | str | None = None,
    verification_level: VerificationLevel | int | str | None = None,
    diagnostic_phase: DiagnosticPhase | int | str | None = None,
    disabled_diagnostics: Iterable[object] | None = None,
    werror: Iterable[object] | None = None,
    passes: Sequence[type[PyPTOPass]] | None = None,
    **_ignored: Any,
) -> Program:
    """The program after the pipeline (on a clone); no files are written.
    Warnings and perf hints go to stderr (pl-dsl.md §6 shapes)."""
    policy = DiagnosticPolicy.make(diagnostic_phase, disabled_diagnostics, werror)
    report = DiagnosticReport(policy)
    session = CompileSession(None, report, {})
    planner = parse_memory_planner(memory_planner)
    work = as_program(program).clone()
    try:
        with fewer_collections():  # as ir.compile runs the pipeline (gc_policy)
            report.add(run_checks(work.module, DiagnosticPhase.PRE_PIPELINE, policy))
            pm = build_manager(passes, strategy, planner, parse_verification_level(verification_level))
            pm.run(work, listeners=[session], options=PipelineOptions(memory_planner=planner.value))
            report.add(run_checks(work.module, DiagnosticPhase.POST_PIPELINE, policy))
    finally:
        report.print_warnings(sys.stderr)
        report.print_hints(sys.stderr)
    report.raise_werror()
    return work
