"""``ir.PassContext``: compile settings from the active context; explicit ones inside it are an error."""

from __future__ import annotations

from pathlib import Path

import pytest

import pypto.language as pl
from pypto.ir import PassContext, Program, compile

SOURCE = '''import pypto.language as pl


@pl.program
class matmul:
    @pl.function(type=pl.FunctionType.Orchestration)
    def matmul(self, a: pl.Tensor[[128, 128], pl.FP16], b: pl.Tensor[[128, 128], pl.FP16],
               c: pl.Out[pl.Tensor[[128, 128], pl.FP32]]) -> pl.Tensor[[128, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP):
            c[:] = pl.matmul(a, b, out_dtype=pl.FP32)
        return c
'''


@pytest.fixture
def program(tmp_path: Path) -> Program:
    path = tmp_path / "matmul.py"
    path.write_text(SOURCE)
    return pl.loads(path)


def _dumps(out: Path) -> list[str]:
    return sorted(p.name for p in (out / "passes_dump").glob("*.py"))


def _hints(out: Path) -> str:
    return (out / "report" / "perf_hints.log").read_text()


def test_compile_takes_the_context_settings(program: Program, tmp_path: Path) -> None:
    plain = compile(program, output_dir=tmp_path / "plain")
    with PassContext(memory_planner="PTOAS", disabled_diagnostics=["PH001"]) as ctx:
        assert PassContext.current() is ctx
        scoped = compile(program, output_dir=tmp_path / "scoped")
    assert PassContext.current() is None
    # the PTOAS planner takes MemoryReuse / AllocateMemoryAddr out of the pipeline; PH001 is silenced
    assert any("AllocateMemoryAddr" in n for n in _dumps(Path(plain.output_dir)))
    assert not any("AllocateMemoryAddr" in n for n in _dumps(Path(scoped.output_dir)))
    assert "PH001" in _hints(Path(plain.output_dir))
    assert "PH001" not in _hints(Path(scoped.output_dir))


@pytest.mark.parametrize(
    "kwargs",
    [
        {"verification_level": "NONE"},
        {"diagnostic_phase": "POST_PIPELINE"},
        {"disabled_diagnostics": ["PH001"]},
        {"memory_planner": "PTOAS"},
        {"runtime": object()},
    ],
)
def test_explicit_setting_inside_a_context_is_a_runtime_error(
    program: Program, tmp_path: Path, kwargs: dict[str, object]
) -> None:
    (name,) = kwargs
    with PassContext(), pytest.raises(RuntimeError, match=rf"compile\(\) got {name} inside an active PassContext"):
        compile(program, output_dir=tmp_path / "out", **kwargs)  # type: ignore[arg-type]
    assert not (tmp_path / "out").exists()  # nothing written


def test_other_arguments_and_outside_calls_are_fine(program: Program, tmp_path: Path) -> None:
    with PassContext(verification_level="NONE"):
        compile(program, output_dir=tmp_path / "a", dump_passes=False, skip_ptoas=True)
    compile(program, output_dir=tmp_path / "b", memory_planner="PTOAS")  # no context: explicit is fine


def test_contexts_nest_innermost_wins(program: Program, tmp_path: Path) -> None:
    with PassContext(memory_planner="PTOAS"):
        with PassContext(memory_planner="PYPTO"):
            inner = compile(program, output_dir=tmp_path / "inner")
        outer = compile(program, output_dir=tmp_path / "outer")
    assert any("AllocateMemoryAddr" in n for n in _dumps(Path(inner.output_dir)))
    assert not any("AllocateMemoryAddr" in n for n in _dumps(Path(outer.output_dir)))
