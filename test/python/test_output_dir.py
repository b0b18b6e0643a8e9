"""A compile into an existing build directory replaces it whole (never mixes
two builds); a folder of other files is refused; atomic writes name their
target on failure and their temporary files are recognisable."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
from test_pipeline_kernels import kernel
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from pypto.diagnostics import DiagnosticError, error_at
from pypto.driver.output_dir import OutputDirError, is_build_dir
from pypto.errors import Error
from pypto.ir import compile
from pypto.passes.base import PyPTOPass
from pypto.passes.pipeline_order import DEFAULT_PIPELINE
from pypto.passes.registry import get_pass, register_pass
from pypto.utils.atomic import atomic_write_text, check_writable_path, is_temp_name


@register_pass
@dataclass(frozen=True)
class FailHerePass(PyPTOPass):
    """Test-only: a located user error."""

    PASS_NAME: ClassVar[str] = "TestFailHere"
    name: ClassVar[str] = "test-fail-here"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise error_at(next(iter(op.ops)), "this pass always fails")


def _passes(fail_at: int | None = None) -> list[type[PyPTOPass]]:
    passes = [get_pass(k) for _, k in DEFAULT_PIPELINE[:6]]
    if fail_at is not None:
        passes = passes[:fail_at] + [FailHerePass]
    return passes


def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def test_failed_compile_replaces_a_good_build_whole(tmp_path: Path) -> None:
    out = tmp_path / "build"
    compile(kernel("add", tmp_path), output_dir=out, passes=_passes())
    good = _tree(out)
    assert "passes_dump/06_after_" + DEFAULT_PIPELINE[5][0] + ".py" in good
    (out / "ir_trace.html").write_text("old report")  # a file of the old build, written later
    with pytest.raises(DiagnosticError, match="this pass always fails"):
        compile(kernel("add", tmp_path), output_dir=out, passes=_passes(fail_at=2))
    dumps = sorted(p.name for p in (out / "passes_dump").iterdir())
    assert dumps[:3] == ["00_frontend.py", f"01_after_{DEFAULT_PIPELINE[0][0]}.py", f"02_after_{DEFAULT_PIPELINE[1][0]}.py"]
    assert "03_failed_TestFailHere.py" in dumps and "reproducer" in dumps
    assert not any(n.startswith(("04_", "05_", "06_")) for n in dumps), dumps  # nothing of the good build
    assert not (out / "ir_trace.html").exists()
    # A good compile after the failed one leaves no failure dump or reproducer behind.
    compile(kernel("add", tmp_path), output_dir=out, passes=_passes())
    assert _tree(out) == good - {"ir_trace.html"}
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".build")]  # nothing stranded beside it


def test_folder_of_other_files_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(OutputDirError, match="holds no PyPTO build"):
        compile(kernel("add", tmp_path), output_dir=mine, passes=_passes())
    assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    (tmp_path / "afile").write_text("x")
    with pytest.raises(Error, match="afile: output_dir is a file"):
        compile(kernel("add", tmp_path), output_dir=tmp_path / "afile", passes=_passes())


def test_empty_folder_is_used_and_stale_aside_is_swept(tmp_path: Path) -> None:
    out = tmp_path / "b"
    out.mkdir()
    stale = tmp_path / ".b.old-deadbeef"
    (stale / "passes_dump").mkdir(parents=True)
    compiled = compile(kernel("add", tmp_path), output_dir=out, passes=_passes())
    assert Path(compiled.output_dir) == out.resolve() and is_build_dir(out)
    assert not stale.exists()


def test_atomic_write_names_the_bad_path(tmp_path: Path) -> None:
    with pytest.raises(IsADirectoryError) as e:
        atomic_write_text(tmp_path, "x")
    assert e.value.filename == str(tmp_path) and "is a directory" in str(e.value)
    with pytest.raises(FileNotFoundError) as f:
        check_writable_path(tmp_path / "no" / "x.txt")
    assert f.value.filename == str(tmp_path / "no")
    assert list(tmp_path.iterdir()) == []


def test_temp_names_are_recognised(tmp_path: Path) -> None:
    assert is_temp_name(".05_after_Simplify.py.k3j4h5g6.tmp")
    assert not is_temp_name("05_after_Simplify.py") and not is_temp_name(".hidden")


# ---- builds without a top-level passes_dump/ or report/: L3 and multi-entry builds -----------------


def _l3_config() -> object:
    from pypto.ir.distributed_compiled_program import DistributedConfig

    return DistributedConfig(device_ids=[0, 1], num_sub_workers=0, timeout_s=60.0)


def test_an_l3_build_is_replaced_whole(tmp_path: Path) -> None:
    """The second compile was refused: ``OutputDirError: ... holds no PyPTO build (no passes_dump/ or
    report/)``, an L3 build having neither at its top level."""
    import dist_persist_programs as pp

    out = tmp_path / "l3"
    compile(pp.PermutedAdd, distributed_config=_l3_config(), output_dir=out)
    assert not (out / "passes_dump").exists() and not (out / "report").exists()
    (out / "dfx_outputs" / "rank0").mkdir(parents=True)  # what a run of the old build left
    (out / "dfx_outputs" / "rank0" / "old.txt").write_text("old run")
    built = _tree(out) - {"dfx_outputs", "dfx_outputs/rank0", "dfx_outputs/rank0/old.txt"}
    compiled = compile(pp.PermutedAdd, distributed_config=_l3_config(), output_dir=out)
    assert Path(compiled.output_dir) == out.resolve() and is_build_dir(out)
    assert _tree(out) == built  # the old run's files went with the old build
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".l3")]


def test_a_multi_entry_build_is_replaced_whole(tmp_path: Path) -> None:
    """Its top level has only ``next_levels/``: the second compile was refused as for an L3 build."""
    import dist_persist_programs as pp

    out = tmp_path / "two"
    compile(pp.AddSub, output_dir=out)
    assert sorted(p.name for p in out.iterdir()) == ["next_levels"]
    (out / "next_levels" / "add" / "stale.txt").write_text("old")
    compiled = compile(pp.AddSub, output_dir=out)
    assert Path(compiled.output_dir) == out.resolve() and not (out / "next_levels" / "add" / "stale.txt").exists()


def test_what_a_build_is(tmp_path: Path) -> None:
    """An L3 build whose compile failed in a per-rank program has only ``next_levels/<name>/`` with that
    program's dumps; a torch-form per-rank program has ``comm_meta.json``. A ``next_levels/`` of other
    files, or a lone ``orchestration/``, is no build."""

    def tree(*paths: str) -> Path:
        root = tmp_path / f"t{len(list(tmp_path.iterdir()))}"
        root.mkdir()
        for p in paths:
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).mkdir() if p.endswith("/") else (root / p).write_text("x")
        return root

    assert is_build_dir(tree("distributed_meta.json"))
    assert is_build_dir(tree("next_levels/add/passes_dump/00_frontend.py"))
    assert is_build_dir(tree("next_levels/add/report/"))
    assert is_build_dir(tree("next_levels/swap/comm_meta.json", "next_levels/swap/program.py"))
    assert not is_build_dir(tree("next_levels/notes/todo.txt", "next_levels/readme.md"))
    assert not is_build_dir(tree("next_levels/"))
    assert not is_build_dir(tree("orchestration/host_orch.py", "distributed_meta.json/"))  # a folder of that name


def test_a_folder_whose_next_levels_holds_other_files_is_refused(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    (mine / "next_levels" / "notes").mkdir(parents=True)
    (mine / "next_levels" / "notes" / "todo.txt").write_text("keep me")
    with pytest.raises(OutputDirError, match="holds no PyPTO build"):
        compile(kernel("add", tmp_path), output_dir=mine, passes=_passes())
    assert (mine / "next_levels" / "notes" / "todo.txt").read_text() == "keep me"
