"""``compile`` and ``lower_program``: run the pass pipeline over a Program.

``compile`` works on a clone (the input stays as written) and fills the
output directory (pl-dsl.md §6, seed 000)::

    <output_dir>/passes_dump/   00_frontend.py, NN_after_<Pass>.py[, .log]
    <output_dir>/report/        perf_hints.log (always), pipeline_profile.{txt,json}

(codegen folders ``ptoas/``, ``kernels/``, ``debug/`` come with codegen).
The default directory is
``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>``,
created exclusively so concurrent compiles never share one.
``lower_program`` runs the same pipeline and writes nothing (hints go to
stderr).
"""

from __future__ import annotations

import os
import secrets
import sys
from collections.abc import Iterable, Sequence
from datetime import datetime
from enum import StrEnum
from pathlib import Path
from typing import Any

from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp

from pypto.compile_profiling import CompileProfiler, env_enabled, get_active_profiler
from pypto.diagnostics import Diagnostic
from pypto.dialects.enums import FunctionType, ParamDirection
from pypto.dialects.program import function_type, param_directions
from pypto.utils.ir_fingerprint import fingerprint

from .dump import DumpWriter, dump_level
from .pass_context import resolve_settings
from .passes.base import PyPTOPass
from .perf_hints import DiagnosticPhase, DiagnosticPolicy, DiagnosticReport, is_warning, run_checks
from .pipeline import (
    MemoryPlanner,
    OptimizationStrategy,
    PassManager,
    PipelineListener,
    PipelineOptions,
    parse_memory_planner,
)
from .program import PassDumpLevel, Program
from .verification import VerificationLevel, parse_verification_level

REPORT_DIR = "report"


class BackendType(StrEnum):
    """The code generation target."""

    Ascend910B = "Ascend910B"
    Ascend950 = "Ascend950"


def resolve_target(platform: str | None, backend_type: BackendType | str | None) -> tuple[str, BackendType]:
    """``(platform, backend_type)``: a5* platforms mean Ascend950; a platform
    defaults from the backend (``a2a3sim`` / ``a5sim``)."""
    from pypto.runtime.config import backend_for_platform

    backend = BackendType(getattr(backend_type, "value", backend_type)) if backend_type is not None else None
    if platform is None:
        platform = "a5sim" if backend is BackendType.Ascend950 else "a2a3sim"
    implied = BackendType(backend_for_platform(platform))
    return platform, backend or implied


class CompiledProgram:
    """The result of :func:`compile`: the output directory (path-like), the
    input program, the lowered program and the entry's signature."""

    def __init__(
        self,
        output_dir: Path,
        program: Program | None,
        lowered: Program | None = None,
        *,
        platform: str = "a2a3sim",
        backend_type: BackendType | str = BackendType.Ascend910B,
    ):
        self.output_dir = Path(output_dir)
        self.program = program
        self.lowered = lowered
        self.platform = platform
        self.backend_type = BackendType(getattr(backend_type, "value", backend_type))
        self.orchestration_names: list[str] = []
        self.param_names: list[str] = []
        self.output_indices: list[int] = []
        self.has_return = False
        self._read_signature()

    def _read_signature(self) -> None:
        final = self.lowered or self.program
        if final is None:
            return
        funcs = final.functions
        self.orchestration_names = [n for n, f in funcs.items() if function_type(f) is FunctionType.Orchestration]
        entry_name = self.orchestration_names[0] if self.orchestration_names else next(iter(funcs), None)
        if entry_name is None:
            return
        source_funcs = self.program.functions if self.program is not None else {}
        entry: func.FuncOp = source_funcs.get(entry_name) or funcs[entry_name]
        self.param_names = [a.name_hint or f"arg{i}" for i, a in enumerate(entry.body.block.args)]
        outs = (ParamDirection.Out, ParamDirection.InOut)
        self.output_indices = [i for i, d in enumerate(param_directions(entry)) if d in outs]
        self.has_return = bool(entry.function_type.outputs.data)

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
            return self.output_dir == Path(other).resolve()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self.output_dir)

    @property
    def passes_dump(self) -> Path:
        return self.output_dir / "passes_dump"

    @property
    def report_dir(self) -> Path:
        return self.output_dir / REPORT_DIR

    # ---- pypto.debug: per-pass numeric validation (owned by the debug tools) ----

    def validate_ir(
        self, tensors: dict[str, Any], expected: dict[str, Any], *, rtol: float = 5e-2, atol: float = 5e-2
    ) -> None:
        """Run every dump of ``<output_dir>/passes_dump`` through torch codegen
        and check ``expected`` (see ``pypto.debug.validate_pass_ir_codegen_results``);
        ``FileNotFoundError`` when the build has no pass dumps."""
        from pypto.debug import validate_pass_ir_codegen_results

        dumps = self.output_dir / "passes_dump"
        if not dumps.is_dir():
            raise FileNotFoundError(f"no passes_dump/ under {self.output_dir}; compile with dump_passes=True")
        validate_pass_ir_codegen_results(str(dumps), tensors, expected, rtol=rtol, atol=atol)

    # ---- pypto.runtime: run on the simulated chip (owned by the runtime) ----

    def run_spec(self, args: Sequence[Any] = (), config: Any = None) -> Any:
        """The :class:`pypto.runtime.runnable.RunSpec` of this program (the runtime's ``Runnable``
        protocol): the lowered program, entry, parameter names, output directory and platform; the
        same object on every call. ``ValueError`` when there is no program (loaded from a directory)."""
        from pypto.runtime.runnable import RunSpec

        spec = getattr(self, "_run_spec", None)
        if spec is None:
            program = self.lowered or (lower_program(self.program) if self.program is not None else None)
            if program is None:
                raise ValueError(f"{self!r} has no program to run (loaded from a directory?)")
            entry = self.orchestration_names[0] if self.orchestration_names else None
            spec = self._run_spec = RunSpec(
                program, entry, list(self.param_names), self.output_dir, self.platform, self.backend_type.value
            )
        return spec

    def __call__(self, *args: Any, config: Any = None) -> Any:
        """Run on the simulated chip (``pypto.runtime.run``): Out/InOut tensors
        are written into ``args``; returns what the Orchestration function
        returns. The :class:`~pypto.runtime.RunResult` is kept in ``last_run``
        (None with ``config.codegen_only``)."""
        from pypto.runtime import RunConfig, run

        if config is not None and getattr(config, "codegen_only", False):
            self.last_run = None
            return None
        if config is None:
            config = RunConfig(platform=self.platform)
        self.last_run = run(self, *args, config=config)
        return self.last_run.outputs


def _as_program(program: Program | ModuleOp) -> Program:
    if isinstance(program, Program):
        return program
    if isinstance(program, ModuleOp):
        return Program(program)
    raise TypeError(f"expected a pypto.ir.Program, got {type(program).__name__}")


def default_output_dir(program: Program, now: datetime | None = None) -> Path:
    """``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>``
    (a name only: :func:`make_output_dir` creates it exclusively)."""
    root = os.environ.get("PYPTO_PROG_BUILD_DIR") or "build_output"
    stamp = (now or datetime.now()).strftime("%Y%m%d_%H%M%S")
    return Path(root) / f"{program.name or 'program'}_{stamp}_{secrets.token_hex(4)}"


def make_output_dir(program: Program, output_dir: str | os.PathLike[str] | None) -> Path:
    """Create the output directory; a default one is new (never shared)."""
    if output_dir is not None:
        out = Path(output_dir)
        out.mkdir(parents=True, exist_ok=True)
        return out
    for _ in range(100):
        out = default_output_dir(program)
        out.parent.mkdir(parents=True, exist_ok=True)
        try:
            out.mkdir()
            return out
        except FileExistsError:
            continue
    raise RuntimeError("could not create a fresh output directory")


class CompileSession(PipelineListener):
    """One compilation's listener: dumps, pass logs, diagnostics, failures."""

    def __init__(self, writer: DumpWriter | None, report: DiagnosticReport, options: dict[str, Any]):
        self.writer = writer
        self.report = report
        self.options = options
        self._before: list[object] | None = None

    def before_pass(self, index: int, pass_cls: type[PyPTOPass], program: Program) -> None:
        if self.writer is not None and self._before is None:
            self._before = fingerprint(program.module)

    def after_pass(
        self, index: int, pass_cls: type[PyPTOPass], program: Program, diagnostics: list[Diagnostic]
    ) -> None:
        name = str(pass_cls.PASS_NAME)
        if self.report.policy.phase is DiagnosticPhase.POST_PASS:
            extra = run_checks(program.module, DiagnosticPhase.POST_PASS, self.report.policy)
            for d in extra:
                d.pass_name = d.pass_name or name
            diagnostics = diagnostics + extra
        kept = self.report.add(diagnostics)
        if self.writer is not None:
            # Print only when the pass changed the IR (the dump is then the
            # same text as the last one, byte for byte). A placeholder pass is
            # the identity by construction: nothing to fingerprint.
            if getattr(pass_cls, "IS_PLACEHOLDER", False):
                self.writer.write_after(index, name, program, unchanged=True)
            else:
                after = fingerprint(program.module)
                self.writer.write_after(index, name, program, unchanged=after == self._before)
                self._before = after
            self.writer.write_log(index, name, [d for d in kept if is_warning(d)])

    def on_failure(
        self,
        index: int,
        pass_cls: type[PyPTOPass],
        error: BaseException,
        remaining: Sequence[type[PyPTOPass]],
        diagnostics: list[Diagnostic],
    ) -> None:
        self.report.add(diagnostics)
        if self.writer is None:
            return
        written = self.writer.write_failure(index, str(pass_cls.PASS_NAME), error, remaining, self.options)
        if written is not None:
            error.add_note(f"failing pass input: {written[0]}; replay: pypto-opt --run-reproducer {written[1]}")


def _pipeline(
    passes: Sequence[type[PyPTOPass]] | None,
    strategy: OptimizationStrategy,
    memory_planner: MemoryPlanner,
    level: VerificationLevel,
) -> PassManager:
    if passes is not None:
        return PassManager(passes, verification_level=level, memory_planner=memory_planner)
    return PassManager.get_strategy(strategy, memory_planner, verification_level=level)


def _codegen(lowered: Program, prof: CompileProfiler | None) -> None:
    """The codegen stage (kernels, orchestration): recorded in the profile;
    the code generators themselves come with the codegen issue."""
    if prof is None:
        return
    kernel_types = (FunctionType.InCore, FunctionType.AIC, FunctionType.AIV, FunctionType.Group)
    with prof.stage("codegen"):
        for name, f in lowered.functions.items():
            if function_type(f) in kernel_types:
                with prof.stage(f"kernel_codegen:{name}"):
                    pass
        if any(function_type(f) is FunctionType.Orchestration for f in lowered.functions.values()):
            with prof.stage("orchestration_codegen"):
                pass


def compile(  # noqa: A001 - the upstream API name
    program: Program | ModuleOp,
    output_dir: str | os.PathLike[str] | None = None,
    strategy: OptimizationStrategy = OptimizationStrategy.Default,
    dump_passes: bool | PassDumpLevel = True,
    backend_type: BackendType | str | None = None,
    skip_ptoas: bool = False,
    verification_level: VerificationLevel | int | str | None = None,
    diagnostic_phase: DiagnosticPhase | int | str | None = None,
    disabled_diagnostics: Iterable[object] | None = None,
    memory_planner: MemoryPlanner | str | None = None,
    enable_pypto_l0c_double_buffer: bool | None = None,
    profiling: bool = False,
    platform: str | None = None,
    distributed_config: Any = None,
    analyze_auto_scopes_for_deps: bool = False,
    emit_source_loc: bool | None = None,
    dump_ptoas_passes: bool = False,
    runtime: Any = None,
    werror: Iterable[object] | None = None,
    *,
    passes: Sequence[type[PyPTOPass]] | None = None,
) -> CompiledProgram:
    """Compile ``program`` into ``output_dir`` (see the module docstring).

    ``dump_passes``: False/True or a ``PassDumpLevel`` (EXPLICIT prints every
    tile view). ``verification_level``: after each pass (default BASIC or
    ``PYPTO_VERIFY_LEVEL``). ``memory_planner``: PYPTO / DSA_RP / PTOAS.
    ``diagnostic_phase`` / ``disabled_diagnostics`` / ``werror``: see
    :mod:`pypto.ir.perf_hints`. ``profiling`` (or
    ``PYPTO_COMPILE_PROFILING``): ``report/pipeline_profile.{txt,json}``.
    ``passes`` replaces the strategy's pipeline (tests, experiments).
    Inside ``with PassContext(...)`` the verification, diagnostic, planner and
    runtime settings come from the context (:mod:`pypto.ir.pass_context`);
    passing them here too is a ``RuntimeError``.
    A failing pass raises its error (user errors as they are, bugs as
    ``InternalError``) after writing ``NN_failed_<Pass>.py`` and
    ``passes_dump/reproducer`` when dumps are on.
    """
    settings = resolve_settings(
        {
            "verification_level": verification_level,
            "diagnostic_phase": diagnostic_phase,
            "disabled_diagnostics": disabled_diagnostics,
            "memory_planner": memory_planner,
            "runtime": runtime,
        }
    )
    verification_level, diagnostic_phase = settings["verification_level"], settings["diagnostic_phase"]
    disabled_diagnostics, memory_planner = settings["disabled_diagnostics"], settings["memory_planner"]
    runtime = settings["runtime"]
    source = _as_program(program)
    platform, backend = resolve_target(platform, backend_type)
    planner = parse_memory_planner(memory_planner)
    level = parse_verification_level(verification_level)
    policy = DiagnosticPolicy.make(diagnostic_phase, disabled_diagnostics, werror)
    out = make_output_dir(source, output_dir)
    report_dir = out / REPORT_DIR
    report_dir.mkdir(exist_ok=True)
    options = PipelineOptions(
        backend_type=backend.value,
        platform=platform,
        memory_planner=planner.value,
        analyze_auto_scopes_for_deps=analyze_auto_scopes_for_deps,
        enable_pypto_l0c_double_buffer=enable_pypto_l0c_double_buffer,
        emit_source_loc=emit_source_loc,
        extra={"skip_ptoas": skip_ptoas, "dump_ptoas_passes": dump_ptoas_passes},
    )
    writer = DumpWriter(out, dump_level(dump_passes))
    report = DiagnosticReport(policy)
    session = CompileSession(
        writer if writer.enabled else None, report, options.to_dict() | {"verification_level": level}
    )

    own: CompileProfiler | None = None
    prof = get_active_profiler()
    if prof is None and (profiling or env_enabled()):
        own = prof = CompileProfiler().__enter__()
    try:
        work = source.clone()
        writer.write_frontend(work)
        report.add(run_checks(work.module, DiagnosticPhase.PRE_PIPELINE, policy))
        pm = _pipeline(passes, strategy, planner, level)
        pm.run(work, listeners=[session], options=options)
        report.add(run_checks(work.module, DiagnosticPhase.POST_PIPELINE, policy))
        _codegen(work, prof)
        # ---- ptoas codegen (pypto.ptoas.codegen.build, issue 5): ptoas/, ptoas_passes/, kernels/ ----
        from pypto.ptoas.codegen.build import write_codegen

        write_codegen(
            work,
            out,
            skip_ptoas=skip_ptoas,
            emit_source_loc=emit_source_loc,
            dump_ptoas_passes=dump_ptoas_passes,
            memory_planner=planner,
            backend=backend,
            platform=platform,
        )
    finally:
        writer.close()
        if own is not None:
            own.__exit__(None, None, None)
        report.write(report_dir)
        report.print_warnings()
        if prof is not None and (profiling or env_enabled() or own is not None):
            prof.write_report(report_dir)
    report.raise_werror()
    return CompiledProgram(out.resolve(), source, work, platform=platform, backend_type=backend)


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
    work = _as_program(program).clone()
    try:
        report.add(run_checks(work.module, DiagnosticPhase.PRE_PIPELINE, policy))
        pm = _pipeline(passes, strategy, planner, parse_verification_level(verification_level))
        pm.run(work, listeners=[session], options=PipelineOptions(memory_planner=planner.value))
        report.add(run_checks(work.module, DiagnosticPhase.POST_PIPELINE, policy))
    finally:
        report.print_warnings(sys.stderr)
        report.print_hints(sys.stderr)
    report.raise_werror()
    return work
