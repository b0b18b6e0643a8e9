"""The Default pipeline, ``ir.compile``'s build directory, dumps, pass
failures and the RunConfig forwarding."""

from __future__ import annotations

import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from test_pipeline_kernels import KERNELS, kernel
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pypto.diagnostics import Severity, emit, error_at
from pypto.errors import InternalError
from pypto.ir import MemoryPlanner, OptimizationStrategy, PassDumpLevel, PassManager, compile, run_reproducer
from pypto.passes.base import PyPTOPass
from pypto.passes.pipeline_order import DEFAULT_PIPELINE
from pypto.passes.placeholders import PlaceholderPass
from pypto.passes.registry import get_pass, register_pass
from pypto.pipeline.reproducer import read_reproducer

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-builds"
ROOT = Path(__file__).resolve().parents[2]


@register_pass
@dataclass(frozen=True)
class BoomPass(PyPTOPass):
    """Test-only: an internal error (a bug)."""

    PASS_NAME: ClassVar[str] = "TestBoom"
    name: ClassVar[str] = "test-boom"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise RuntimeError("boom in a test pass")


@register_pass
@dataclass(frozen=True)
class ValueErrorPass(PyPTOPass):
    """Test-only: a Python ValueError inside a pass (a bug, not the user's mistake)."""

    PASS_NAME: ClassVar[str] = "TestValueError"
    name: ClassVar[str] = "test-value-error"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise ValueError("list index confusion")


@register_pass
@dataclass(frozen=True)
class UserErrorPass(PyPTOPass):
    """Test-only: a located user error at the first function."""

    PASS_NAME: ClassVar[str] = "TestUserError"
    name: ClassVar[str] = "test-user-error"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise error_at(next(iter(op.ops)), "tile 't' needs 300000 bytes; Vec holds 196608")


@register_pass
@dataclass(frozen=True)
class WarnPass(PyPTOPass):
    """Test-only: one warning at the first op of the first function."""

    PASS_NAME: ClassVar[str] = "TestWarn"
    name: ClassVar[str] = "test-warn"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        f = next(iter(op.ops))
        first = next(o for o in f.walk() if o is not f and o.name.startswith("pl."))
        from pypto.diagnostics import Diagnostic, op_span

        emit(Diagnostic(Severity.WARNING, "value is never used", op_span(first), rule="UnusedVariable"))


def names_in(d: Path) -> list[str]:
    return sorted(p.name for p in d.iterdir())


# ---- the pipeline ------------------------------------------------------------------


def test_default_strategy_runs_the_49_passes_in_order() -> None:
    pm = PassManager.get_strategy(OptimizationStrategy.Default)
    assert pm.pass_names == [n for n, _ in DEFAULT_PIPELINE]
    assert len(pm.pass_names) == 49 and pm.pass_names.count("Simplify") == 2
    assert [p.name for p in pm.passes] == [k for _, k in DEFAULT_PIPELINE]


def test_memory_planner_drops_passes() -> None:
    assert len(PassManager.get_strategy(memory_planner=MemoryPlanner.DSA_RP).passes) == 48
    ptoas = PassManager.get_strategy(memory_planner="PTOAS").pass_names
    assert "MemoryReuse" not in ptoas and "AllocateMemoryAddr" not in ptoas and len(ptoas) == 47


def test_placeholders_fill_only_missing_names() -> None:
    for pass_name, kebab in DEFAULT_PIPELINE:
        cls = get_pass(kebab)
        assert cls.PASS_NAME == pass_name and cls.name == kebab
    assert not issubclass(get_pass("outline-incore-scopes"), PlaceholderPass)


def test_dump_names_match_upstream(tmp_path: Path) -> None:
    out = compile(kernel("add", tmp_path), output_dir=tmp_path / "o")
    ours = names_in(out.passes_dump)
    assert ours == names_in(UPSTREAM / "add" / "passes_dump")
    assert ours[0] == "00_frontend.py" and ours[-1] == "49_after_MaterializeValidShapeSymbols.py"


def test_numbering_shifts_with_the_planner(tmp_path: Path) -> None:
    out = compile(kernel("add", tmp_path), output_dir=tmp_path / "o", memory_planner="PTOAS")
    names = names_in(out.passes_dump)
    assert len(names) == 48
    assert "34_after_FoldNoOpReshape.py" in names and "47_after_MaterializeValidShapeSymbols.py" in names


# ---- compile and the build directory ------------------------------------------------


def test_compiled_program_fields(tmp_path: Path) -> None:
    prog = kernel("add", tmp_path)
    before = prog.as_mlir()
    out = compile(prog, output_dir=tmp_path / "o", dump_passes=False)
    assert out.output_dir == (tmp_path / "o").resolve() and out == tmp_path / "o"
    assert out.program is prog and prog.as_mlir() == before
    assert out.platform == "a2a3sim" and out.backend_type.value == "Ascend910B"
    assert out.param_names == ["a", "b", "out"] and out.output_indices == [2] and out.has_return
    assert out.orchestration_names == ["add"]
    assert names_in(out.output_dir) == [
        "compiled_meta.json", "debug", "kernel_config.py", "kernels", "orchestration", "ptoas", "report"
    ]  # fmt: skip
    assert (out.report_dir / "perf_hints.log").read_text() == "# PyPTO perf hints: none\n"
    a5 = compile(prog, output_dir=tmp_path / "a5", dump_passes=False, platform="a5sim")
    assert a5.backend_type.value == "Ascend950"


def test_default_dirs_are_unique(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYPTO_PROG_BUILD_DIR", str(tmp_path / "builds"))
    prog = kernel("add", tmp_path)
    a = compile(prog, dump_passes=False)
    b = compile(prog, dump_passes=False)
    assert a.output_dir != b.output_dir
    assert a.output_dir.parent == (tmp_path / "builds").resolve()
    stem, day, time, rnd = a.output_dir.name.rsplit("_", 3)
    assert stem == "add" and len(day) == 8 and len(time) == 6 and len(rnd) == 8


def test_explicit_dumps_print_tile_views(tmp_path: Path) -> None:
    prog = kernel("add", tmp_path)
    c = compile(prog, output_dir=tmp_path / "c", dump_passes=PassDumpLevel.CONCISE)
    e = compile(prog, output_dir=tmp_path / "e", dump_passes=PassDumpLevel.EXPLICIT)
    last = "49_after_MaterializeValidShapeSymbols.py"
    assert "pl.TileView(" in (e.passes_dump / last).read_text()
    assert "pl.TileView(" not in (c.passes_dump / last).read_text()


_DUMP_SCRIPT = """
import sys
sys.path.insert(0, {tests!r})
from pathlib import Path
from test_pipeline_kernels import kernel
from pypto.ir import compile, PassDumpLevel
d = Path(sys.argv[1]); d.mkdir(parents=True, exist_ok=True)
for name in ("elementwise", "softmax"):
    compile(kernel(name, d), output_dir=d / name, dump_passes=PassDumpLevel.EXPLICIT)
"""


def test_dumps_byte_identical_across_runs_and_hash_seeds(tmp_path: Path) -> None:
    script = tmp_path / "dump.py"
    script.write_text(_DUMP_SCRIPT.format(tests=str(Path(__file__).parent)))
    for seed in ("0", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        subprocess.run([sys.executable, str(script), str(tmp_path / "s" / seed)], check=True, env=env, cwd=tmp_path)
    for name in ("elementwise", "softmax"):
        a, b = tmp_path / "s" / "0" / name / "passes_dump", tmp_path / "s" / "12345" / name / "passes_dump"
        assert names_in(a) == names_in(b) and len(names_in(a)) == 50
        for n in names_in(a):
            assert (a / n).read_bytes() == (b / n).read_bytes(), n


# ---- failures -----------------------------------------------------------------------


def _with(names: list[str], extra: type[PyPTOPass], at: int) -> list[type[PyPTOPass]]:
    passes = [get_pass(k) for k in names]
    return passes[:at] + [extra] + passes[at:]


def test_internal_error_leaves_failed_dump_and_reproducer(tmp_path: Path) -> None:
    kebabs = [k for _, k in DEFAULT_PIPELINE]
    passes = _with(kebabs, BoomPass, 9)
    with pytest.raises(InternalError, match="pass TestBoom failed: RuntimeError: boom") as e:
        compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=passes)
    assert e.value.pass_name == "TestBoom"  # type: ignore[attr-defined]
    dump = tmp_path / "o" / "passes_dump"
    names = names_in(dump)
    assert names[:10] == ["00_frontend.py"] + [
        f"{i:02d}_after_{n}.py" for i, (n, _) in enumerate(DEFAULT_PIPELINE[:9], 1)
    ]
    assert "10_failed_TestBoom.py" in names and "reproducer" in names and len(names) == 12
    assert (dump / "10_failed_TestBoom.py").read_bytes() == (dump / "09_after_OutlineIncoreScopes.py").read_bytes()
    repro = read_reproducer(dump / "reproducer")
    assert repro.pipeline[0] == "test-boom" and repro.pipeline[1:] == kebabs[9:]
    assert repro.first_index == 10 and repro.failed_pass == "10 TestBoom"
    with pytest.raises(InternalError, match="pass TestBoom failed: RuntimeError: boom"):
        run_reproducer(dump / "reproducer")


def test_value_error_in_a_pass_is_a_bug_with_a_reproducer(tmp_path: Path) -> None:
    passes = _with(["inline-functions", "outline-incore-scopes"], ValueErrorPass, 1)
    with pytest.raises(InternalError, match="pass TestValueError failed: ValueError: list index confusion") as e:
        compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=passes)
    assert isinstance(e.value.__cause__, ValueError)
    assert any("this is a bug" in n for n in e.value.__notes__)
    assert any("--run-reproducer" in n for n in e.value.__notes__)
    dump = tmp_path / "o" / "passes_dump"
    assert "02_failed_TestValueError.py" in names_in(dump)
    assert read_reproducer(dump / "reproducer").error == (
        "InternalError: Internal error: pass TestValueError failed: ValueError: list index confusion"
    )


def test_user_error_reproducer_replays(tmp_path: Path) -> None:
    from pypto.diagnostics import DiagnosticError

    passes = _with(["inline-functions", "outline-incore-scopes"], UserErrorPass, 2)
    with pytest.raises(DiagnosticError, match="needs 300000 bytes") as e:
        compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=passes)
    assert any("TestUserError" in n for n in e.value.__notes__)
    dump = tmp_path / "o" / "passes_dump"
    assert "03_failed_TestUserError.py" in names_in(dump)
    with pytest.raises(DiagnosticError, match="needs 300000 bytes"):
        run_reproducer(dump / "reproducer")


def test_pypto_opt_runs_the_reproducer(tmp_path: Path) -> None:
    plugin = tmp_path / "plugin.py"
    plugin.write_text(
        "from dataclasses import dataclass\n"
        "from typing import ClassVar\n"
        "from pypto.passes.base import PyPTOPass\n"
        "from pypto.passes.registry import register_pass\n\n"
        "@register_pass\n@dataclass(frozen=True)\nclass TestBoom(PyPTOPass):\n"
        "    PASS_NAME: ClassVar[str] = 'TestBoom'\n    name: ClassVar[str] = 'test-boom'\n\n"
        "    def apply(self, ctx, op):\n        raise RuntimeError('boom in a test pass')\n"
    )
    passes = _with(["inline-functions", "simplify"], BoomPass, 1)
    with pytest.raises(InternalError):
        compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=passes)
    repro = tmp_path / "o" / "passes_dump" / "reproducer"
    opt = Path(sys.executable).parent / "pypto-opt"
    r = subprocess.run(
        [str(opt), "--load-pass-plugin", str(plugin), "--run-reproducer", str(repro)], capture_output=True, text=True
    )
    assert r.returncode == 2, r.stderr
    assert "internal error in pass 'TestBoom'" in r.stderr and "boom in a test pass" in r.stderr


def test_warning_log_per_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    passes = _with(["inline-functions"], WarnPass, 1)
    compile(kernel("add", tmp_path), output_dir=tmp_path / "o", passes=passes)
    dump = tmp_path / "o" / "passes_dump"
    assert names_in(dump) == [
        "00_frontend.py",
        "01_after_InlineFunctions.py",
        "02_after_TestWarn.log",
        "02_after_TestWarn.py",
    ]
    lines = (dump / "02_after_TestWarn.log").read_text().splitlines()
    assert lines[0].startswith("add_kernel.py:") and lines[0].endswith(
        ": warning: value is never used [UnusedVariable]"
    )
    assert lines[1].startswith(" ") and " | " in lines[1] and lines[2].strip().startswith("|")
    assert "^" in lines[2]
    assert "[warning] [UnusedVariable] (TestWarn) value is never used at add_kernel.py:" in capsys.readouterr().err


def test_runconfig_forwards_compile_options(tmp_path: Path) -> None:
    from pypto.runtime import RunConfig

    cfg = RunConfig(dump_passes=PassDumpLevel.CONCISE, compile_profiling=True, save_kernels_dir=str(tmp_path / "o"))
    assert cfg.backend_type == "Ascend910B" and RunConfig(platform="a5").backend_type == "Ascend950"
    from pypto.driver.jit import _config_options

    opts = _config_options(cfg, compile)
    assert opts["output_dir"] == str(tmp_path / "o") and opts["profiling"] is True
    assert opts["dump_passes"] == PassDumpLevel.CONCISE and opts["platform"] == "a2a3sim"
    assert _config_options(RunConfig(), compile)["dump_passes"] is False


def test_kernels_known() -> None:
    assert set(KERNELS) >= {"add", "elementwise", "softmax"}
    assert (ROOT / "pypto").is_dir()
