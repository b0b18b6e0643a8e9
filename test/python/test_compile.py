"""``pypto.ir.compile`` / ``lower_program``: the pipeline, the dump files and
the output directory layout."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from pypto.core.mlir_text import parse_mlir
from pypto.driver.output_dir import default_output_dir
from pypto.ir import PassDumpLevel, Program, compile, lower_program
from pypto.passes.registry import get_pass
from pypto.utils.atomic import atomic_write_text

T = "!pl.tensor<128x128xf32>"
ADD = f"""
builtin.module @add_prog {{
  func.func @add(%a: {T}, %b: {T}, %out: {T} {{pl.dir = #pl<dir Out>}}) -> {T} {{
    %r = "pl.at"() <{{level = #pl<level CORE_GROUP>}}> ({{
      %c0 = arith.constant 0 : index
      %s = "pl.tensor.add"(%a, %b) : ({T}, {T}) -> {T}
      %out2 = "pl.tensor.assemble"(%out, %s, %c0, %c0) : ({T}, {T}, index, index) -> {T}
      "pl.yield"(%out2) : ({T}) -> ()
    }}) : () -> {T}
    func.return %r : {T}
  }}
}}
"""
DUMPS = ["00_frontend.py", "01_after_OutlineIncoreScopes.py", "02_after_ConvertTensorToTileOps.py"]
TWO_PASSES = [get_pass("outline-incore-scopes"), get_pass("convert-tensor-to-tile-ops")]


def compile_two(program: Program, **kwargs: object):
    """``compile`` with just the first two outlining/conversion passes."""
    return compile(program, passes=TWO_PASSES, **kwargs)


@pytest.fixture
def mlir_dumps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Dump MLIR text instead of the DSL (independent of the DSL printer)."""
    monkeypatch.setattr(Program, "as_python", lambda self, level=PassDumpLevel.CONCISE: f"# {level.name}\n{self.as_mlir()}")
    # the dump writer prints through as_python_locs (text and line map)
    monkeypatch.setattr(
        Program, "as_python_locs", lambda self, level=PassDumpLevel.CONCISE, cache=None: (self.as_python(level), [])
    )


def add_program() -> Program:
    return Program(parse_mlir(ADD))


def test_compile_writes_three_dumps(tmp_path: Path, mlir_dumps: None) -> None:
    prog = add_program()
    before = prog.as_mlir()
    out = compile_two(prog, output_dir=tmp_path / "o")
    assert out == tmp_path / "o" and os.fspath(out) == str((tmp_path / "o").resolve())
    assert sorted(p.name for p in (tmp_path / "o" / "passes_dump").iterdir()) == DUMPS
    assert (tmp_path / "o" / "report").is_dir()
    assert prog.as_mlir() == before  # compile works on a clone
    assert out.program is prog
    texts = [(tmp_path / "o" / "passes_dump" / n).read_text() for n in DUMPS]
    assert '"pl.at"' in texts[0] and "@add_incore_0" not in texts[0]
    assert "@add_incore_0" in texts[1] and "pl.tensor.add" in texts[1]
    assert "pl.tile.add" in texts[2] and "pl.tensor.add" not in texts[2]
    assert not [p for p in (tmp_path / "o" / "passes_dump").iterdir() if p.name.startswith(".")]  # no temp files


def test_dumps_are_deterministic(tmp_path: Path, mlir_dumps: None) -> None:
    compile_two(add_program(), output_dir=tmp_path / "x")
    compile_two(add_program(), output_dir=tmp_path / "y")
    for n in DUMPS:
        assert (tmp_path / "x" / "passes_dump" / n).read_bytes() == (tmp_path / "y" / "passes_dump" / n).read_bytes()


def test_dump_level(tmp_path: Path, mlir_dumps: None) -> None:
    compile_two(add_program(), output_dir=tmp_path / "e", dump_passes=PassDumpLevel.EXPLICIT)
    assert (tmp_path / "e" / "passes_dump" / DUMPS[0]).read_text().startswith("# EXPLICIT")
    compile_two(add_program(), output_dir=tmp_path / "n", dump_passes=False)
    assert not (tmp_path / "n" / "passes_dump").exists()
    assert (tmp_path / "n" / "report").is_dir()
    compile_two(add_program(), output_dir=tmp_path / "z", dump_passes=PassDumpLevel.NONE)
    assert not (tmp_path / "z" / "passes_dump").exists()


def test_default_output_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mlir_dumps: None) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    out = compile(add_program())
    assert out.output_dir.parent == (tmp_path / "builds").resolve()
    name = out.output_dir.name
    assert re.fullmatch(r"add_prog_\d{8}_\d{6}_[0-9a-f]{8}", name)
    monkeypatch.delenv("PYPTO_PROG_BUILD_DIR")
    assert default_output_dir(add_program()).parts[0] == "build_output"


def test_lower_program_writes_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    prog = add_program()
    lowered = lower_program(prog)
    assert list(tmp_path.iterdir()) == []
    assert set(lowered.functions) == {"add", "add_incore_0"}
    assert "pl.tile.add" in lowered.as_mlir()
    assert "pl.tile.add" not in prog.as_mlir()


def test_atomic_write_leaves_no_partial_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    target = tmp_path / "f.py"
    atomic_write_text(target, "old\n")

    def boom(src: str, dst: str) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", boom)
    with pytest.raises(OSError):
        atomic_write_text(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["f.py"]


# ---- with the real DSL printer and front end (written concurrently) -------------


def test_compile_dumps_dsl_text(tmp_path: Path) -> None:
    """Needs pypto.core.dsl_printer."""
    compile_two(add_program(), output_dir=tmp_path)
    first = (tmp_path / "passes_dump" / DUMPS[0]).read_text()
    assert first.startswith("# pypto.program: add_prog")
    after = (tmp_path / "passes_dump" / DUMPS[2]).read_text()
    assert "def add_incore_0(" in after and "pl.tile.load(" in after and "pl.tile.store(" in after


def test_frontend_program_through_compile(tmp_path: Path) -> None:
    """Needs pypto.language (@pl.program) and the DSL printer."""
    import pypto.language as pl

    @pl.program
    class AddK:
        @pl.function(type=pl.FunctionType.Orchestration)
        def add(
            self,
            a: pl.Tensor[[128, 128], pl.FP32],
            b: pl.Tensor[[128, 128], pl.FP32],
            out: pl.Out[pl.Tensor[[128, 128], pl.FP32]],
        ) -> pl.Tensor[[128, 128], pl.FP32]:
            with pl.at(level=pl.Level.CORE_GROUP):
                out[:] = pl.add(a, b)
            return out

    compile_two(AddK, output_dir=tmp_path)
    names = sorted(p.name for p in (tmp_path / "passes_dump").iterdir())
    assert names == DUMPS
    text = (tmp_path / "passes_dump" / DUMPS[2]).read_text()
    assert "def add_incore_0(" in text
    assert "pl.tile.add(" in text and "pl.tile.store(" in text
    compile_two(AddK, output_dir=tmp_path / "again")
    for n in DUMPS:
        assert (tmp_path / "passes_dump" / n).read_bytes() == (tmp_path / "again" / "passes_dump" / n).read_bytes()
