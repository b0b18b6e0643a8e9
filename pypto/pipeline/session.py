"""``CompileSession``: one compilation's pipeline listener (dumps, pass logs, diagnostics, failures)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pypto.core.program import Program
from pypto.diagnostics import Diagnostic
from pypto.passes.base import PyPTOPass
from pypto.utils.ir_fingerprint import fingerprint

from .checks import run_checks
from .dump import DumpWriter
from .manager import PipelineListener
from .perf_hints import DiagnosticPhase, DiagnosticReport, is_warning


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
