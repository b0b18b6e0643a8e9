"""The PassManager: PyPTO's pass pipeline over a Program, in place.

``PassManager.get_strategy(OptimizationStrategy.Default)`` runs the 49
passes of pl-dsl.md §5 by name through the pass registry (so a real pass
replaces its identity placeholder without touching this file);
``memory_planner`` ``DSA_RP`` / ``PTOAS`` leave passes out and the numbers of
the later ones shift (a dump's ``NN`` is the position actually run).

The passes run through the one runner, :class:`pypto.pipeline.pass_runner.PassRunner`
(shared with ``pypto-opt`` and ``ptoas``). Each pass runs inside a profiler stage (when a
:class:`~pypto.compile_profiling.CompileProfiler` is active), then the
verification of :mod:`pypto.pipeline.verification` (only where the pass changed the IR:
:class:`~pypto.pipeline.verification.PassVerifier`), then the listeners (dump
writer, diagnostics) and the legacy ``callback``. Diagnostics emitted while a
pass runs are stamped with its name. When a pass (or the verification after
it) raises, listeners' ``on_failure`` run (the dump writer leaves
``NN_failed_<Pass>.py`` and a ``reproducer``); a user error propagates as it
is (with a note naming the pass), any other exception becomes
:class:`~pypto.errors.InternalError` naming the pass and saying it is a bug
(:func:`pypto.pipeline.pass_runner.classify_error`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from enum import Enum, StrEnum
from typing import Any

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from pypto.compile_profiling import CompileProfiler
from pypto.core.context import make_context
from pypto.core.program import Program
from pypto.diagnostics import Diagnostic, DiagnosticCollector, collecting, emit
from pypto.errors import ArgumentTypeError, InvalidArgumentError
from pypto.passes.base import PyPTOPass
from pypto.passes.pipeline_order import DEFAULT_PIPELINE, KEBAB_NAMES, SKIPPED_BY_PLANNER
from pypto.passes.registry import get_pass

from .pass_runner import USER_ERRORS, PassListener, PassRunner, classify_error, pass_label
from .verification import (
    PassVerifier,
    VerificationError,
    VerificationLevel,
    parse_verification_level,
)

PassCallback = Callable[[int, type[PyPTOPass], Program], None]
"""Called after pass number ``index`` (1-based) has run and verified."""


class OptimizationStrategy(Enum):
    """The pass pipelines PyPTO offers (upstream has one: Default)."""

    Default = "Default"


class MemoryPlanner(StrEnum):
    """Who plans on-chip memory; DSA_RP / PTOAS take passes out of the pipeline."""

    PYPTO = "PYPTO"
    DSA_RP = "DSA_RP"
    PTOAS = "PTOAS"


def parse_memory_planner(value: MemoryPlanner | str | None) -> MemoryPlanner:
    """``None`` -> PYPTO; a name (any case) -> the planner."""
    if value is None:
        return MemoryPlanner.PYPTO
    if isinstance(value, MemoryPlanner):
        return value
    name = getattr(value, "name", value)
    try:
        return MemoryPlanner(str(name).upper())
    except ValueError:
        raise InvalidArgumentError(f"unknown memory planner {value!r}; expected PYPTO, DSA_RP or PTOAS") from None


def strategy_pass_names(
    strategy: OptimizationStrategy = OptimizationStrategy.Default, memory_planner: MemoryPlanner | str | None = None
) -> list[str]:
    """The PyPTO names of the passes a strategy runs, in order."""
    if strategy is not OptimizationStrategy.Default:
        raise InvalidArgumentError(f"unknown optimization strategy {strategy!r}; expected OptimizationStrategy.Default")
    skipped = SKIPPED_BY_PLANNER[parse_memory_planner(memory_planner).value]
    return [name for name, _ in DEFAULT_PIPELINE if name not in skipped]


@dataclass
class PipelineOptions:
    """Compile options a pass may read (``current_options()``); recorded in
    reproducers."""

    backend_type: str = "Ascend910B"
    platform: str = "a2a3sim"
    memory_planner: str = "PYPTO"
    analyze_auto_scopes_for_deps: bool = False
    enable_pypto_l0c_double_buffer: bool | None = None
    emit_source_loc: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> PipelineOptions:
        known = {k: v for k, v in d.items() if k in cls.__dataclass_fields__}
        return cls(**known)


_options: list[PipelineOptions] = []


def current_options() -> PipelineOptions:
    """The options of the pipeline running now (defaults outside one)."""
    return _options[-1] if _options else PipelineOptions()


@contextmanager
def using_options(options: PipelineOptions) -> Iterator[PipelineOptions]:
    """Make ``options`` the current pipeline options inside the block."""
    _options.append(options)
    try:
        yield options
    finally:
        _options.pop()


class PipelineListener:
    """Hooks around each pass (all optional; the base does nothing)."""

    def before_pass(self, index: int, pass_cls: type[PyPTOPass], program: Program) -> None:
        """Before pass number ``index`` runs."""

    def after_pass(
        self, index: int, pass_cls: type[PyPTOPass], program: Program, diagnostics: list[Diagnostic]
    ) -> None:
        """After it ran and verified; ``diagnostics`` are what it emitted."""

    def on_failure(
        self,
        index: int,
        pass_cls: type[PyPTOPass],
        error: BaseException,
        remaining: Sequence[type[PyPTOPass]],
        diagnostics: list[Diagnostic],
    ) -> None:
        """When the pass or its verification raised ``error`` (``remaining``
        starts with the failing pass)."""


class ProgressListener(PipelineListener):
    """Names each pass in a progress bar (:mod:`pypto.utils.progress`) and counts it when it ends."""

    def __init__(self, bar: Any):
        self.bar = bar

    def before_pass(self, index: int, pass_cls: type[PyPTOPass], program: Program) -> None:
        self.bar.name(pass_label(pass_cls))

    def after_pass(
        self, index: int, pass_cls: type[PyPTOPass], program: Program, diagnostics: list[Diagnostic]
    ) -> None:
        self.bar.advance(pass_label(pass_cls))


class PassManager:
    """Runs an ordered list of pass classes over a Program, in place."""

    def __init__(
        self,
        passes: Sequence[type[PyPTOPass]] | None = None,
        *,
        verify: bool = True,
        verification_level: VerificationLevel | int | str | None = None,
        first_index: int = 1,
        strategy: OptimizationStrategy = OptimizationStrategy.Default,
        memory_planner: MemoryPlanner | str | None = None,
    ):
        """``passes`` default to ``strategy``'s with ``memory_planner``;
        ``verify=False`` is ``VerificationLevel.NONE``; ``first_index`` is
        the number of the first pass (a resumed pipeline starts later)."""
        self.memory_planner = parse_memory_planner(memory_planner)
        if passes is None:
            names = strategy_pass_names(strategy, self.memory_planner)
            passes = [get_pass(KEBAB_NAMES[n]) for n in names]  # type: ignore[misc]
        self.passes: list[type[PyPTOPass]] = list(passes)
        for i, pass_cls in enumerate(self.passes):
            if not (isinstance(pass_cls, type) and issubclass(pass_cls, PyPTOPass)):
                raise ArgumentTypeError(
                    f"passes[{i}]: expected a pass class (a PyPTOPass subclass, e.g. from "
                    f"pypto.passes.registry.get_pass), got {type(pass_cls).__name__} {pass_cls!r}"
                )
        self.verification_level = parse_verification_level(verification_level) if verify else VerificationLevel.NONE
        self.first_index = first_index
        self.strategy = strategy
        self._verifier: PassVerifier | None = None

    @classmethod
    def get_strategy(
        cls,
        strategy: OptimizationStrategy = OptimizationStrategy.Default,
        memory_planner: MemoryPlanner | str | None = None,
        **kwargs: Any,
    ) -> PassManager:
        """The PassManager of an optimization strategy (upstream's entry point)."""
        return cls(None, strategy=strategy, memory_planner=memory_planner, **kwargs)

    @property
    def pass_names(self) -> list[str]:
        """The passes' CamelCase names, in order (as the dumps name them)."""
        return [pass_label(p) for p in self.passes]

    def tail(self, done: int) -> PassManager:
        """The pipeline after its first ``done`` passes (numbering continues)."""
        pm = PassManager(self.passes[done:], first_index=self.first_index + done, memory_planner=self.memory_planner)
        pm.verification_level = self.verification_level
        return pm

    def run(
        self,
        program: Program | ModuleOp,
        callback: PassCallback | None = None,
        ctx: Context | None = None,
        *,
        listeners: Sequence[PipelineListener] = (),
        options: PipelineOptions | None = None,
    ) -> Program:
        """Run every pass over ``program`` (modified in place) and return it."""
        prog = program if isinstance(program, Program) else Program(program)
        ctx = ctx or make_context()
        prof = CompileProfiler.current()
        self._verifier: PassVerifier | None = None
        adapter = _PipelineAdapter(self.passes, self.first_index, prog, listeners, callback, prof)
        runner = PassRunner(
            [pass_cls() for pass_cls in self.passes],
            [adapter],
            first_index=self.first_index,
            check=self._verify,
            error_policy=lambda e, p, index: classify_error(e, pass_label(p), index),
        )
        with using_options(options or current_options()):
            if prof is None or prof.open_stage == "passes":  # compile opened it (its set-up is in it too)
                runner.run(ctx, prog.module)
            else:
                with prof.stage("passes"):
                    runner.run(ctx, prog.module)
        return prog

    def _verify(self, pass_: ModulePass, module: ModuleOp) -> None:
        """The verification after a pass, where the IR changed (:class:`PassVerifier`); none after a
        placeholder (the identity by construction)."""
        if getattr(pass_, "IS_PLACEHOLDER", False):
            return
        if self._verifier is None:
            self._verifier = PassVerifier(self.verification_level)
        self._verifier(module, pass_label(pass_))


class _PipelineAdapter(PassListener):
    """The PassManager's one listener on the runner: each pass runs inside a
    profiler stage and a diagnostics collector; the pipeline listeners then
    see the Program, the pass class and the diagnostics it emitted."""

    def __init__(
        self,
        passes: Sequence[type[PyPTOPass]],
        first_index: int,
        prog: Program,
        listeners: Sequence[PipelineListener],
        callback: PassCallback | None,
        prof: CompileProfiler | None,
    ):
        self.passes = passes
        self.first_index = first_index
        self.prog = prog
        self.listeners = listeners
        self.callback = callback
        self.prof = prof
        self._scope: ExitStack | None = None
        self._collected: DiagnosticCollector | None = None

    def _pass_cls(self, index: int) -> type[PyPTOPass]:
        return self.passes[index - self.first_index]

    def before_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        pass_cls = self._pass_cls(index)
        for listener in self.listeners:
            listener.before_pass(index, pass_cls, self.prog)
        scope = ExitStack()
        self._collected = scope.enter_context(collecting())
        if self.prof is not None:
            scope.enter_context(self.prof.stage(pass_label(pass_)))
        self._scope = scope

    def _end(self, pass_: ModulePass) -> list[Diagnostic]:
        """Close the pass's profiler stage; its diagnostics, stamped with its name."""
        if self._scope is not None:
            self._scope.close()
            self._scope = None
        items = self._collected.items if self._collected is not None else []
        self._collected = None
        name = pass_label(pass_)
        for d in items:
            if d.pass_name is None:
                d.pass_name = name
        return list(items)

    def after_pass(self, index: int, pass_: ModulePass, module: ModuleOp) -> None:
        diags = self._end(pass_)
        pass_cls = self._pass_cls(index)
        if self.listeners:
            for listener in self.listeners:
                listener.after_pass(index, pass_cls, self.prog, diags)
        else:
            for d in diags:
                emit(d)
        if self.callback is not None:
            self.callback(index, pass_cls, self.prog)

    def on_failure(self, index: int, pass_: ModulePass, module: ModuleOp, error: BaseException) -> None:
        diags = self._end(pass_)
        remaining = self.passes[index - self.first_index :]
        for listener in self.listeners:
            listener.on_failure(index, remaining[0], error, remaining, diags)


__all__ = [
    "MemoryPlanner",
    "OptimizationStrategy",
    "PassCallback",
    "PassManager",
    "USER_ERRORS",
    "PipelineListener",
    "PipelineOptions",
    "ProgressListener",
    "VerificationError",
    "VerificationLevel",
    "current_options",
    "parse_memory_planner",
    "strategy_pass_names",
    "using_options",
]
