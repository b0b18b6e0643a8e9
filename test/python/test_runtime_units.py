"""The runtime runs the ``.pto`` units compile wrote (``<out>/ptoas/<unit>.pto``), built by the one
``build_kernel_unit`` both paths call; and it knows compiled programs and ``@pl.jit`` functions only
through the ``Runnable`` protocol."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

import pypto.language as pl
from pypto.ir import compile as pypto_compile
from pypto.ptoas.codegen import build_kernel_unit, target_arch_of
from pypto.ptoas.pto_text import print_pto
from pypto.runtime import RunConfig, run
from pypto.runtime.runnable import Runnable, RunSpec
from pypto.utils.ir_fingerprint import is_sealed


@pl.jit
def add_mul(a: pl.Tensor, b: pl.Tensor, x: pl.Out[pl.Tensor], y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_add"):
        x[:] = pl.add(a, b)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_mul"):
        y[:] = pl.mul(a, b)
    return x, y


def _inputs() -> tuple[torch.Tensor, ...]:
    torch.manual_seed(0)
    return torch.randn(64, 128), torch.randn(64, 128), torch.zeros(64, 128), torch.zeros(64, 128)


def _compiled(tmp_path: Path, emit_source_loc: bool | None = None) -> Any:
    a, b, x, y = _inputs()
    program = add_mul.specialize(a, b, x, y)
    return pypto_compile(program, output_dir=tmp_path / "build", dump_passes=False, emit_source_loc=emit_source_loc)


def _unit_file(compiled: Any, kernel: str) -> Path:
    (path,) = [p for p in (compiled.output_dir / "ptoas").glob("*.pto") if kernel in p.stem]
    return path


def _records(result: Any, kernel: str) -> list[Any]:
    (task,) = [t for t in result.tasks if kernel in t.func_name]
    return [r for run_ in task.kernel_runs for r in run_.records]


@pytest.mark.parametrize("env", [None, "0"])
def test_compile_writes_what_build_kernel_unit_builds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, env: str | None) -> None:
    """Locations are on by default (``PYPTO_EMIT_PTO_LOC``, as upstream): ``loc(...)`` on the ops that have a
    DSL position, none on the others; ``PYPTO_EMIT_PTO_LOC=0`` writes no ``loc`` at all."""
    if env is None:
        monkeypatch.delenv("PYPTO_EMIT_PTO_LOC", raising=False)
    else:
        monkeypatch.setenv("PYPTO_EMIT_PTO_LOC", env)
    compiled = _compiled(tmp_path)
    arch = target_arch_of(compiled.backend_type, compiled.platform)
    files = sorted((compiled.output_dir / "ptoas").glob("*.pto"))
    assert len(files) == 2
    for path in files:
        unit = build_kernel_unit(compiled.lowered.functions[path.stem], arch, emit_source_loc=env is None)
        assert unit.name == path.stem
        text = path.read_text()
        assert unit.text == text
        assert ('loc("test_runtime_units.py"' in text) is (env is None) and "loc(unknown)" not in text


def test_runtime_runs_the_same_unit_from_the_directory_and_in_memory(tmp_path: Path) -> None:
    """A compiled program runs its ``ptoas/*.pto`` files; a bare Program builds its units in memory:
    after insert-sync both are the same text, DSL locations included."""
    compiled = _compiled(tmp_path)
    a, b, x, y = _inputs()
    from_dir = run(compiled, a, b, x, y)
    in_memory = run(add_mul.specialize(a, b, x, y), a, b, x, y)
    assert sorted(from_dir.units) == sorted(in_memory.units) and len(from_dir.units) == 2
    for name, unit in from_dir.units.items():
        assert unit.path == compiled.output_dir / "runtime" / f"{name}.pto"
        assert in_memory.units[name].path is None
        assert print_pto(unit.module) == print_pto(in_memory.units[name].module)
        assert is_sealed(unit.module) and is_sealed(in_memory.units[name].module)  # runs skip the fingerprint
        assert 'loc("test_runtime_units.py"' in unit.path.read_text()
    assert from_dir.total_cycles == in_memory.total_cycles
    tadd = next(r for r in _records(from_dir, "k_add") if r.instr == "TADD")
    assert tadd.dsl_loc is not None and tadd.dsl_loc.startswith("test_runtime_units.py:")
    assert tadd.pto_loc is not None and tadd.pto_loc.startswith(str(compiled.output_dir / "runtime" / "k_add.pto:"))


def test_an_edited_op_in_the_compiled_pto_is_what_runs(tmp_path: Path) -> None:
    """``pto.tadd`` -> ``pto.tsub`` in ``ptoas/<k_add>.pto``: the run computes a - b; the ops no longer
    match the DSL function, so the records name their ``.pto`` lines only."""
    compiled = _compiled(tmp_path, emit_source_loc=False)
    path = _unit_file(compiled, "k_add")
    text = path.read_text()
    assert text.count("pto.tadd ") == 1 and "loc(" not in text
    path.write_text(text.replace("pto.tadd ", "pto.tsub "))
    a, b, x, y = _inputs()
    result = run(compiled, a, b, x, y)
    torch.testing.assert_close(x, a - b)
    torch.testing.assert_close(y, a * b)
    ran = result.units[path.stem].path
    assert ran is not None and "pto.tsub " in ran.read_text() and "pto.tadd " not in ran.read_text()
    (tsub,) = [r for r in _records(result, "k_add") if r.instr == "TSUB"]
    assert tsub.dsl_loc is None and tsub.pto_loc is not None and tsub.pto_loc.startswith(f"{ran}:")
    line = int(tsub.pto_loc.split(":")[-2])
    assert "pto.tsub " in ran.read_text().splitlines()[line - 1]


def test_an_edited_constant_runs_and_keeps_the_dsl_locations(tmp_path: Path) -> None:
    """Move ``k_mul``'s second input tile to another UB address: same ops, so the DSL locations stay."""
    compiled = _compiled(tmp_path)
    path = _unit_file(compiled, "k_mul")
    text = path.read_text()
    assert "arith.constant 32768 : i64" in text and "arith.constant 98304 : i64" not in text
    path.write_text(text.replace("arith.constant 32768 : i64", "arith.constant 98304 : i64"))
    a, b, x, y = _inputs()
    result = run(compiled, a, b, x, y)
    torch.testing.assert_close(y, a * b)
    ran = result.units[path.stem].path
    assert ran is not None and "arith.constant 98304 : i64" in ran.read_text()
    loads = [r for r in _records(result, "k_mul") if r.instr == "TLOAD"]
    assert loads and all(r.dsl_loc is not None for r in loads)


class _Wrapped:
    """A Runnable that is neither a CompiledProgram nor a jit function."""

    def __init__(self, spec: RunSpec) -> None:
        self.spec = spec
        self.calls = 0

    def run_spec(self, args: Any, config: Any) -> RunSpec:
        self.calls += 1
        return self.spec


def test_compiled_programs_and_jit_functions_are_runnables(tmp_path: Path) -> None:
    compiled = _compiled(tmp_path)
    assert isinstance(compiled, Runnable) and isinstance(add_mul, Runnable)
    a, b, x, y = _inputs()
    spec = compiled.run_spec((a, b, x, y), None)
    assert spec is compiled.run_spec((), None)  # one spec: the runtime keeps its preparation
    assert spec.output_dir == compiled.output_dir and spec.param_names == ["a", "b", "x", "y"]
    wrapped = _Wrapped(spec)
    result = run(wrapped, a, b, x, y, config=RunConfig())
    assert wrapped.calls == 1
    torch.testing.assert_close(x, a + b)
    assert all(u.path is not None and u.path.parent == compiled.output_dir / "runtime" for u in result.units.values())
