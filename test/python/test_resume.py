"""Every dump is a resume point: resuming from it reproduces the full
compile's final IR byte for byte (Python API and ``pypto-opt --resume``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from test_pipeline_kernels import kernel

from pypto.diagnostics import DiagnosticError
from pypto.driver.resume import parse_dump_name, resume_manager
from pypto.ir import PassDumpLevel, compile, resume
from pypto.pipeline.reproducer import ResumeError, read_reproducer

LAST = "49_after_MaterializeValidShapeSymbols.py"


@pytest.mark.parametrize("name", ["elementwise", "softmax"])
@pytest.mark.parametrize("level", [PassDumpLevel.CONCISE, PassDumpLevel.EXPLICIT])
def test_resume_from_every_dump(tmp_path: Path, name: str, level: PassDumpLevel) -> None:
    out = compile(kernel(name, tmp_path), output_dir=tmp_path / "o", dump_passes=level)
    final = (out.passes_dump / LAST).read_text()
    dumps = sorted(p for p in out.passes_dump.iterdir() if p.suffix == ".py")
    assert len(dumps) == 50
    bad = []
    for dump in dumps:
        text = resume(dump).as_python(level)
        if not text.endswith("\n"):
            text += "\n"
        if text != final:
            bad.append(dump.name)
    assert bad == []


def test_parse_dump_name() -> None:
    assert parse_dump_name("passes_dump/12_after_OptimizeOrchTensors.py") == (12, "OptimizeOrchTensors")
    assert parse_dump_name("00_frontend.py") == (0, None)
    with pytest.raises(ValueError):
        parse_dump_name("kernel.py")


def test_a_dump_or_reproducer_that_cannot_be_read_is_a_located_user_error(tmp_path: Path) -> None:
    with pytest.raises(DiagnosticError) as e:
        parse_dump_name("d/kernel.py")
    assert isinstance(e.value, ResumeError)
    assert e.value.diagnostic.render().startswith("d/kernel.py:1:1: error: 'kernel.py' is not a pass dump name")
    bad = tmp_path / "reproducer"
    bad.write_text("# pypto reproducer v1\n# pipeline: inline-functions\n# first-index: x\n# ---- input IR ----\n")
    with pytest.raises(ResumeError, match="malformed reproducer header"):
        read_reproducer(bad)


def test_resume_checks_the_pipeline() -> None:
    assert resume_manager("34_after_MemoryReuse.py").first_index == 35
    assert len(resume_manager("34_after_FoldNoOpReshape.py", memory_planner="PTOAS").passes) == 13
    with pytest.raises(ValueError, match="is MemoryReuse, not FoldNoOpReshape"):
        resume_manager("34_after_FoldNoOpReshape.py")


def test_pypto_opt_resume(tmp_path: Path) -> None:
    out = compile(kernel("softmax", tmp_path), output_dir=tmp_path / "o")
    opt = Path(sys.executable).parent / "pypto-opt"
    r = subprocess.run(
        [str(opt), str(out.passes_dump / "11_after_ConvertTensorToTileOps.py"), "--resume"],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout == (out.passes_dump / LAST).read_text()
