"""``python -m pypto.debug.bisect``: a deliberately wrong, test-only pass (it
turns ``add`` into ``sub``) is put into the pipeline; the bisect must name it,
the function it broke and the worst tensor, and write ``validation.json`` in
the schema ``pypto-ir-trace`` reads."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import pytest
import torch
from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.rewriter import Rewriter

import pypto.language as pl
from pypto.debug.bisect import bisect_dump, main
from pypto.dialects.tensor_ops import TensorSubOp
from pypto.dialects.tile_ops import TileSubOp
from pypto.ir import compile as ir_compile
from pypto.passes.base import PyPTOPass
from pypto.passes.registry import get_pass, register_pass
from pypto.pipeline.manager import PassManager

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT.parent / "shared" / "reference" / "upstream-builds"


@register_pass
@dataclass(frozen=True)
class FlipAddSignForTest(PyPTOPass):
    """TEST ONLY, deliberately wrong: ``a + b`` becomes ``a - b``."""

    PASS_NAME: ClassVar[str] = "FlipAddSignForTest"
    name: ClassVar[str] = "flip-add-sign-for-test"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for old in list(op.walk()):
            sub = {"pl.tile.add": TileSubOp, "pl.tensor.add": TensorSubOp}.get(old.name)
            if sub is not None:
                new = sub.create(operands=list(old.operands), result_types=[r.type for r in old.results])
                new.results[0].name_hint = old.results[0].name_hint
                Rewriter.replace_op(old, new)


@pl.program
class AddScale:
    @pl.function(type=pl.FunctionType.Orchestration)
    def add_scale(
        self,
        a: pl.Tensor[[64, 128], pl.FP32],
        b: pl.Tensor[[64, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="add_kernel"):
            for i in pl.range(2):
                ta = pl.load(a, [i * 32, 0], [32, 128])
                tb = pl.load(b, [i * 32, 0], [32, 128])
                pl.store(pl.muls(pl.add(ta, tb), 0.5), [i * 32, 0], out)
        return out


def _pipeline(after: str = "InferTileMemorySpace") -> list[type[PyPTOPass]]:
    """The Default pipeline with the wrong pass inserted after ``after``."""
    passes = list(PassManager.get_strategy().passes)
    names = [p.PASS_NAME for p in passes]
    at = names.index(after) + 1 if after in names else len(passes) // 2
    return [*passes[:at], FlipAddSignForTest, *passes[at:]]


@pytest.fixture(scope="module")
def broken_build(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("bisect") / "broken"
    ir_compile(AddScale, output_dir=out, passes=_pipeline())
    return out


def test_registered() -> None:
    assert get_pass("FlipAddSignForTest") is FlipAddSignForTest


def test_bisect_names_the_wrong_pass(broken_build: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dumps = sorted((broken_build / "passes_dump").glob("[0-9]*_*.py"))
    flip = next(f.name for f in dumps if f.name.endswith("_after_FlipAddSignForTest.py"))
    assert 10 < dumps.index(broken_build / "passes_dump" / flip) < len(dumps) - 10  # mid-pipeline

    rc = main([str(broken_build)])
    out = capsys.readouterr().out
    assert rc == 3
    assert f"first divergent pass: FlipAddSignForTest ({flip})" in out
    assert "function: add_kernel\n" in out
    assert "worst tensor: 'out', max_abs_diff: " in out
    assert "confirmed: " in out and f"{flip} diverges" in out

    data = json.loads((broken_build / "passes_dump" / "validation.json").read_text())
    assert data["version"] == 1 and data["first_divergent"] == flip and data["pass"] == "FlipAddSignForTest"
    assert data["functions"] == ["add_kernel"] and data["reference"] == "00_frontend.py"
    verdict = data["snapshots"][flip]["tensors"]["out"]
    assert verdict["status"] == "fail" and verdict["max_abs_diff"] > 0.1
    # a binary search: far fewer snapshots run than exist
    assert len(data["snapshots"]) <= math.ceil(math.log2(len(dumps))) + 3 < len(dumps)


def test_validation_json_reads_in_ir_trace(broken_build: Path, tmp_path: Path) -> None:
    discovery = pytest.importorskip("pypto.tools.ir_trace.discovery")
    path = tmp_path / "validation.json"
    assert main([str(broken_build), "-o", str(path)]) == 3
    files = sorted(p.name for p in (broken_build / "passes_dump").glob("[0-9]*_*.py"))
    verdicts = discovery.load_validation(path, files)
    flip = next(f for f in files if "FlipAddSignForTest" in f)
    assert verdicts[flip].status == "fail"
    assert verdicts["00_frontend.py"].status == "pass"


def test_bisect_all_and_expected_inputs(broken_build: Path, tmp_path: Path) -> None:
    g = torch.Generator().manual_seed(5)
    a, b = torch.randn(64, 128, generator=g), torch.randn(64, 128, generator=g)
    tensors = {"a": a, "b": b, "out": torch.zeros(64, 128)}
    result = bisect_dump(broken_build, tensors, {"out": (a + b) * 0.5}, check_all=True)
    assert result.pass_name == "FlipAddSignForTest" and result.reference == "expected"
    assert len(result.verdicts) == len(result.files)  # --all validates every snapshot
    worst = result.verdicts[result.first_divergent or ""].worst
    assert worst is not None and worst.name == "out"
    assert math.isclose(worst.max_abs_diff, float(b.abs().max()), rel_tol=1e-5)  # (a+b)/2 vs (a-b)/2

    inputs = tmp_path / "inputs.pt"
    torch.save({"tensors": tensors, "expected": {"out": (a + b) * 0.5 + 1}}, inputs)
    result = bisect_dump(broken_build, *_load(inputs))
    assert result.first_divergent == "00_frontend.py"  # the reference itself disagrees
    from pypto.debug.bisect import BisectError

    with pytest.raises(BisectError, match=r"expected\['out'\] must be a torch.Tensor, got int"):
        bisect_dump(broken_build, tensors, {"out": 3})  # type: ignore[dict-item]  # was an AttributeError


def _load(path: Path) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor] | None]:
    from pypto.debug.bisect import load_inputs

    return load_inputs(path)


def test_no_divergence_cli(tmp_path: Path) -> None:
    good = tmp_path / "good"
    ir_compile(AddScale, output_dir=good)
    proc = subprocess.run(
        [sys.executable, "-m", "pypto.debug.bisect", str(good), "-o", str(tmp_path / "v.json")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "no divergence:" in proc.stdout
    assert json.loads((tmp_path / "v.json").read_text())["first_divergent"] is None
    assert not (good / "passes_dump" / "validation.json").exists()


def test_snapshot_that_does_not_run_diverges(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = UPSTREAM / "add" / "passes_dump"
    if not src.is_dir():
        pytest.skip("no upstream add build")
    dump = tmp_path / "passes_dump"
    shutil.copytree(src, dump)
    bad = dump / "30_after_CanonicalizeIOOrder.py"
    bad.write_text(bad.read_text().replace("pl.tile.add(", "pl.tile.bogus_add("))
    for later in sorted(dump.glob("3[1-9]_*.py")) + sorted(dump.glob("4*_*.py")):
        later.write_text(later.read_text().replace("pl.tile.add(", "pl.tile.bogus_add("))
    assert main([str(dump)]) == 3
    out = capsys.readouterr().out
    assert "first divergent pass: CanonicalizeIOOrder (30_after_CanonicalizeIOOrder.py)" in out
    assert "error: " in out and "bogus_add" in out
    data = json.loads((dump / "validation.json").read_text())
    assert "bogus_add" in data["snapshots"]["30_after_CanonicalizeIOOrder.py"]["error"]


def test_bad_path(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([str(tmp_path / "missing")]) == 1
    assert "error: no such build or dump directory" in capsys.readouterr().err
    assert main([str(tmp_path)]) == 1
    assert "no pass dumps" in capsys.readouterr().err
