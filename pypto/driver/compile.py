"""``compile``: run the pass pipeline over a Program and write the output directory.

``compile`` works on a clone (the input stays as written) and fills the
output directory (pl-dsl.md §6, seed 000)::

    <output_dir>/passes_dump/   00_frontend.py, NN_after_<Pass>.py[, .log]
    <output_dir>/report/        perf_hints.log (always), pipeline_profile.{txt,json}

(codegen folders ``ptoas/``, ``kernels/``, ``debug/`` come with codegen).
The default directory is
``${PYPTO_PROG_BUILD_DIR:-build_output}/<name>_<YYYYmmdd_HHMMSS>_<random>``
(:mod:`.output_dir`). ``lower_program`` (:mod:`pypto.pipeline.lower`) runs
the same pipeline and writes nothing (hints go to stderr).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from contextlib import ExitStack
from typing import Any

from xdsl.dialects.builtin import ModuleOp

from pypto.compile_profiling import owned_profiler, stage
from pypto.core.dsl_printer import FunctionTextCache
from pypto.core.pass_context import resolve_settings
from pypto.core.program import PassDumpLevel, Program
from pypto.errors import InvalidArgumentError
from pypto.passes.base import PyPTOPass
from pypto.pipeline.backend import BackendType
from pypto.pipeline.checks import run_checks
from pypto.pipeline.dump import DumpWriter, dump_level
from pypto.pipeline.lower import as_program, build_manager
from pypto.pipeline.manager import (
    MemoryPlanner,
    OptimizationStrategy,
    PipelineOptions,
    ProgressListener,
    parse_memory_planner,
)
from pypto.pipeline.perf_hints import DiagnosticPhase, DiagnosticPolicy, DiagnosticReport
from pypto.pipeline.session import CompileSession
from pypto.pipeline.verification import VerificationLevel, parse_verification_level
from pypto.utils.gc_policy import fewer_collections, import_long_lived
from pypto.utils.progress import progress
from pypto.utils.tracebacks import api_boundary

from .compiled import CompiledProgram
from .output_dir import NEXT_LEVELS, REPORT_DIR, make_output_dir


def resolve_target(platform: str | None, backend_type: BackendType | str | None) -> tuple[str, BackendType]:
    """``(platform, backend_type)``: a5* platforms mean Ascend950; a platform
    defaults from the backend (``a2a3sim`` / ``a5sim``)."""
    from pypto.runtime.config import backend_for_platform  # imported when used: keeps numpy out of `import pl`

    try:
        backend = BackendType(getattr(backend_type, "value", backend_type)) if backend_type is not None else None
    except ValueError:
        known = ", ".join(b.value for b in BackendType)
        raise InvalidArgumentError(f"unknown backend_type {backend_type!r}; expected one of {known}") from None
    if platform is None:
        platform = "a5sim" if backend is BackendType.Ascend950 else "a2a3sim"
    implied = BackendType(backend_for_platform(platform))
    return platform, backend or implied


@api_boundary
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
    golden: Callable[..., Any] | None = None,
    golden_rtol: float = 1e-5,
    golden_atol: float = 1e-5,
) -> CompiledProgram:
    """Compile ``program`` into ``output_dir`` (see the module docstring).

    ``dump_passes``: False/True or a ``PassDumpLevel`` (EXPLICIT prints every
    tile view). ``verification_level``: after each pass (default BASIC or
    ``PYPTO_VERIFY_LEVEL``). ``memory_planner``: PYPTO / DSA_RP / PTOAS.
    ``diagnostic_phase`` / ``disabled_diagnostics`` / ``werror``: see
    :mod:`pypto.pipeline.perf_hints`. ``profiling`` (or
    ``PYPTO_COMPILE_PROFILING``): ``report/pipeline_profile.{txt,json}``.
    ``passes`` replaces the strategy's pipeline (tests, experiments).
    The build-directory contract (``kernel_config.py``, ``compiled_meta.json``, ``orchestration/``,
    ``debug/run.py``; :mod:`pypto.runtime.build_dir`) is written for a program with an Orchestration
    entry; ``golden`` (a torch reference, with ``golden_rtol``/``golden_atol``) adds ``golden.py``.
    Inside ``with PassContext(...)`` the verification, diagnostic, planner and
    runtime settings come from the context (:mod:`pypto.core.pass_context`);
    passing them here too is a ``RuntimeError``.
    A failing pass raises its error (user errors as they are, bugs as
    ``InternalError``) after writing ``NN_failed_<Pass>.py`` and
    ``passes_dump/reproducer`` when dumps are on.
    A ``@pl.program`` with a multi-chip HOST orchestrator and ``distributed_config`` compiles into a
    :class:`~pypto.driver.distributed.DistributedCompiledProgram` (an L3 build).
    """
    options_in = {k: v for k, v in locals().items() if k not in ("program", "output_dir")}
    if distributed_config is not None and not getattr(program, "host_orchestrators", None) and \
            len(getattr(program, "host_functions", {})) == 1:
        from .distributed import as_host_program

        program = as_host_program(program)  # type: ignore[arg-type]
    if getattr(program, "host_orchestrators", None):
        from .distributed import compile_program_host

        return compile_program_host(program, distributed_config, platform=platform, output_dir=output_dir)  # type: ignore[return-value]
    entries = orchestration_entries(program)
    if len(entries) > 1:
        return _compile_each_entry(as_program(program), entries, output_dir, options_in)
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
    source = as_program(program)
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

    with owned_profiler(profiling) as (prof, owned), ExitStack() as stack, fewer_collections():
        try:
            closed = False

            def finish() -> None:
                """Close the dumps and write the diagnostics report (once, also on failure)."""
                nonlocal closed
                if not closed:
                    closed = True
                    writer.close()
                    report.write(report_dir)
                    report.print_warnings()

            try:
                with stage("passes"):  # the per-pass stages are its children (PassManager.run)
                    pm = build_manager(passes, strategy, planner, level)  # (the first loads the passes)
                    bar = stack.enter_context(progress("compile", total=len(pm.passes) + 1))
                    work = source.clone()
                    writer.write_frontend(work)
                    report.add(run_checks(work.module, DiagnosticPhase.PRE_PIPELINE, policy))
                    pm.run(work, listeners=[session, ProgressListener(bar)], options=options)
                    report.add(run_checks(work.module, DiagnosticPhase.POST_PIPELINE, policy))
                bar.name("codegen")
                with stage("codegen"):
                    # ptoas codegen (kernel_codegen:<name> each): ptoas/, ptoas_passes/, kernels/
                    # imported when used (import cost of `pl`); its classes live as long as the process
                    write_codegen = import_long_lived("pypto.ptoas.codegen.build").write_codegen
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
                    finish()
                    report.raise_werror()
                    compiled = CompiledProgram(out.resolve(), source, work, platform=platform, backend_type=backend)
                    with stage("orchestration_codegen"):
                        _write_build_contract(compiled, golden, golden_rtol, golden_atol, writer.texts)
                    bar.advance("codegen")
            finally:
                finish()
        finally:
            if prof is not None and (owned or profiling):
                prof.write_report(report_dir)
    return compiled


def orchestration_entries(program: Program | ModuleOp) -> list[str]:
    """The Orchestration functions of ``program``, in order."""
    from pypto.dialects.enums import FunctionType
    from pypto.dialects.program import function_type

    funcs = as_program(program).func_ops
    return [n for n, f in funcs.items() if function_type(f) is FunctionType.Orchestration]


def _compile_each_entry(source: Program, entries: list[str], output_dir: Any, options: dict[str, Any]) -> CompiledProgram:
    """An L2 program with several Orchestration entries (and no HOST orchestrator), as upstream: each entry
    compiled on its own, with only the functions it reaches, into ``next_levels/<entry>/``; the root has no
    ``orchestration/``. The result selects one by ``compiled[name]`` / ``compiled.<name>``."""
    from .host_trace import entry_only

    out = make_output_dir(source, output_dir)
    subs = {name: compile(entry_only(source, name), output_dir=out / NEXT_LEVELS / name, **options)
            for name in entries}  # fmt: skip
    compiled = CompiledProgram(out.resolve(), source, None, platform=subs[entries[0]].platform,
                               backend_type=subs[entries[0]].backend_type)
    compiled.sub_programs = subs
    return compiled


def _write_build_contract(
    compiled: CompiledProgram, golden: Any, rtol: float, atol: float, text_cache: FunctionTextCache | None = None
) -> None:
    """The replay contract files (:func:`pypto.runtime.build_dir.write_build_files`); a program without an
    Orchestration entry has none (stale ones of a reused directory are removed). ``text_cache``: the pass
    dumps' function texts (the orchestration file is the last dump's text when it is at the default level)."""
    from pypto.runtime.build_dir import GOLDEN, KERNEL_CONFIG, META, write_build_files

    out = compiled.output_dir
    if not compiled.orchestration_names or compiled.lowered is None:
        for name in (META, KERNEL_CONFIG, GOLDEN):
            (out / name).unlink(missing_ok=True)
        return
    if golden is None:
        (out / GOLDEN).unlink(missing_ok=True)
    write_build_files(
        out,
        compiled.lowered.module,
        compiled.orchestration_names[0],
        compiled.param_names,
        compiled.platform,
        compiled.backend_type.value,
        golden=golden,
        rtol=rtol,
        atol=atol,
        text_cache=text_cache,
    )
