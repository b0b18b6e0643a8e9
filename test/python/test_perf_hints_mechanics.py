"""Perf-hint mechanics: collection from passes, per-site dedupe, the report
file and the stderr line, disabling, muting, werror, lower()."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from test_pipeline_kernels import kernel
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pypto.diagnostics import Diagnostic, Severity, emit, op_span
from pypto.ir import DiagnosticPhase, PerfHintError, compile, lower_program
from pypto.passes.base import PyPTOPass
from pypto.passes.registry import get_pass, register_pass
from pypto.pipeline.perf_hints import DiagnosticPolicy, dedupe, format_hint

MSG = (
    "tile.load has innermost dim = 64B (tile fp32[16], target_memory=Vec); moves 1024B as 16 x 64B rows; "
    "recommended >= 512B for backend a2a3 (L2 cache line = 512B). Consider increasing tile shape on the innermost axis."
)


@register_pass
@dataclass(frozen=True)
class HintPass(PyPTOPass):
    """Test-only: PH001 twice at each pl op of the first function (two sites)."""

    PASS_NAME: ClassVar[str] = "TestHint"
    name: ClassVar[str] = "test-hint"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        f = next(iter(op.ops))
        ops = [o for o in f.walk() if o.name.startswith("pl.tensor")][:2]
        for o in ops:
            for _ in range(2):
                d = Diagnostic(Severity.REMARK, MSG, op_span(o), rule="TileInnermostDimGranularity", code="PH001")
                emit(d)


def _passes() -> list[type[PyPTOPass]]:
    return [get_pass("inline-functions"), HintPass]


def test_hints_written_deduped_with_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=_passes())
    log = (out.report_dir / "perf_hints.log").read_text().splitlines()
    assert len(log) == 2
    assert log[0].startswith("[perf_hint PH001] TileInnermostDimGranularity: tile.load has innermost dim = 64B")
    assert "(2 occurrences at this source location) at add_kernel.py:" in log[0]
    err = capsys.readouterr().err
    assert f"[perf_hint] 4 hints across 2 sites; see {out.report_dir / 'perf_hints.log'}" in err


def test_disabled_and_muted(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for i, kw in enumerate(
        [{"disabled_diagnostics": ["TileInnermostDimGranularity"]}, {"diagnostic_phase": DiagnosticPhase.NONE}]
    ):
        out = compile(kernel("add", tmp_path), output_dir=tmp_path / str(i), passes=_passes(), **kw)  # type: ignore[arg-type]
        assert (out.report_dir / "perf_hints.log").read_text() == "# PyPTO perf hints: none\n"
    assert "[perf_hint]" not in capsys.readouterr().err


def test_werror_turns_hints_into_a_user_error(tmp_path: Path) -> None:
    with pytest.raises(PerfHintError, match="PH001") as e:
        compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=_passes(), werror=["PH001"])
    assert len(e.value.hints) == 4 and all(h.pass_name == "TestHint" for h in e.value.hints)
    assert (tmp_path / "o" / "report" / "perf_hints.log").read_text().startswith("[perf_hint PH001]")
    compile(kernel("add", tmp_path), output_dir=tmp_path / "p", passes=_passes(), werror=["PH002"])


def test_lower_prints_hints_to_stderr(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkey_cwd = tmp_path
    lower_program(kernel("add", monkey_cwd), passes=_passes())
    err = capsys.readouterr().err.splitlines()
    hints = [line for line in err if line.startswith("[perf_hint PH001]")]
    assert len(hints) == 2 and hints[0].endswith(hints[0].rsplit(" at ", 1)[1])
    assert not list(tmp_path.glob("build_output*"))


def test_format_and_policy() -> None:
    d = Diagnostic(Severity.REMARK, "m", None, rule="R", code="PH002")
    assert format_hint(d) == "[perf_hint PH002] R: m at <unknown>"
    assert dedupe([d, d]) == [(d, 2)]
    p = DiagnosticPolicy.make()
    assert "UnusedControlFlowResult" in p.disabled and p.phase is DiagnosticPhase.PRE_PIPELINE
    assert not DiagnosticPolicy.make("none").keeps(d)
    assert DiagnosticPolicy.make(werror=["PH002"]).is_error(d)


def test_warning_env_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_WARNING_LEVEL", "post_pass")
    assert DiagnosticPolicy.make().phase is DiagnosticPhase.POST_PASS
