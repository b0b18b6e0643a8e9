"""Diagnostic names given to ``disabled_diagnostics`` / ``werror`` are checked (issue 16): an unknown
one is an ``InvalidArgumentError`` with the closest known name and the list of known ones, before
anything is written; every name a check or a pass declares is accepted."""

from __future__ import annotations

from pathlib import Path

import pytest

import pypto.language as pl
from pypto.core.pass_context import PassContext
from pypto.errors import InvalidArgumentError
from pypto.ir import compile as ir_compile
from pypto.passes.registry import all_passes
from pypto.pipeline.perf_hints import DiagnosticCheck, DiagnosticPolicy, known_diagnostic_names, registered_checks


@pl.program
class Tiny:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(self, a: pl.Tensor[[16, 32], pl.FP32], out: pl.Out[pl.Tensor[[16, 32], pl.FP32]]) -> pl.Tensor[[16, 32], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            out[:] = pl.exp(a)
        return out


def test_known_names_are_what_checks_and_passes_declare() -> None:
    known = known_diagnostic_names()
    assert {c.value for c in DiagnosticCheck} <= known
    assert {c.name for c in registered_checks()} <= known and "PH001" in known
    declared = {n for get in all_passes().values() for kv in getattr(get(), "DIAGNOSTICS", {}).items() for n in kv}
    assert {"PH002", "AutoTileMatmulL0", "PH-MR-001", "PipelineStageCapacity"} <= declared <= known
    policy = DiagnosticPolicy.make(None, sorted(known), sorted(known))
    assert known <= policy.disabled and policy.werror == known


@pytest.mark.parametrize(
    ("option", "name", "suggestion"),
    [
        ("disabled_diagnostics", "UnusedVariabel", "UnusedVariable"),
        ("disabled_diagnostics", "ph001", "PH001"),
        ("werror", "PH01", "PH001"),
        ("werror", "TileInnermostDimGranularty", "TileInnermostDimGranularity"),
    ],
)
def test_unknown_name_is_rejected_with_a_suggestion(tmp_path: Path, option: str, name: str, suggestion: str) -> None:
    out = tmp_path / "build"
    with pytest.raises(InvalidArgumentError) as e:
        ir_compile(Tiny, output_dir=out, dump_passes=False, **{option: [name]})
    msg = str(e.value)
    assert f"unknown diagnostic {name!r} in {option}; did you mean {suggestion!r}?" in msg
    assert all(k in msg for k in known_diagnostic_names())  # the known names are listed
    assert not out.exists()  # refused before anything is written


def test_unknown_name_without_a_close_match_and_a_bare_string(tmp_path: Path) -> None:
    with pytest.raises(InvalidArgumentError, match=r"unknown diagnostic 'zzz' in werror \(known: "):
        DiagnosticPolicy.make(werror=["zzz"])
    assert DiagnosticPolicy.make(disabled_diagnostics="PH001").disabled >= {"PH001"}  # one name, not its letters
    with pytest.raises(InvalidArgumentError, match="unknown diagnostic 'PH0001'"):
        DiagnosticPolicy.make(disabled_diagnostics="PH0001")


def test_unknown_name_in_a_pass_context(tmp_path: Path) -> None:
    with PassContext(disabled_diagnostics=["UnusedVar"]), pytest.raises(InvalidArgumentError, match="did you mean 'UnusedVariable'"):
        ir_compile(Tiny, output_dir=tmp_path / "b", dump_passes=False)
    compiled = ir_compile(Tiny, output_dir=tmp_path / "c", dump_passes=False, disabled_diagnostics=["UnusedVariable"])
    assert compiled.output_dir.is_dir()
