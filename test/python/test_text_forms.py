"""Both text forms of every test program are fixed points, and upstream MLIR
reads our generic form."""

from __future__ import annotations

from pathlib import Path

import pytest

import pypto.language as pl
from pypto.core.mlir_text import parse_mlir, print_mlir

SHARED = Path(__file__).resolve().parents[3] / "shared"
UPSTREAM = SHARED / "reference" / "upstream-builds"
DUMPS = sorted(UPSTREAM.glob("*/passes_dump/*.py"))
EXAMPLE_DUMPS = [d for d in DUMPS if d.name in ("00_frontend.py", "11_after_ConvertTensorToTileOps.py", "35_after_AllocateMemoryAddr.py")]


def test_the_upstream_dumps_are_there():
    assert len(DUMPS) == 150


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_mlir_form_is_a_fixed_point(path: Path):
    program = pl.loads(str(path))
    text = program.as_mlir()
    again = print_mlir(parse_mlir(text, str(path)))
    assert again == text


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_dsl_form_is_a_fixed_point(path: Path):
    first = pl.loads(str(path)).as_python()
    second = pl.parse(first).as_python()
    assert second == first


@pytest.mark.parametrize("path", EXAMPLE_DUMPS, ids=lambda p: f"{p.parent.parent.name}/{p.stem}")
def test_upstream_mlir_parses_the_generic_form(path: Path):
    ir = pytest.importorskip("mlir.ir", reason="the [mlir] extra is not installed")
    generic = pl.loads(str(path)).as_mlir(generic=True)
    ctx = ir.Context()
    ctx.allow_unregistered_dialects = True
    module = ir.Module.parse(generic, ctx)
    printed = str(module.operation)
    assert "func.func @" in printed and '"pl.' in printed
    assert module.operation.verify()


def test_repeated_name_hints_get_unique_names():
    """Values sharing a name hint (and a hint that looks like a numbered repeat) print under distinct
    names, and numbered values never take a name already given."""
    from xdsl.dialects import arith, test
    from xdsl.dialects.builtin import IntegerAttr, ModuleOp, i32
    from xdsl.ir import Block, Region

    ops = [arith.ConstantOp(IntegerAttr(i, i32)) for i in range(6)]
    for op, hint in zip(ops, ["t", "t", "t_1", None, "t", None], strict=True):
        op.result.name_hint = hint
    user = test.TestOp(operands=[op.result for op in ops])
    text = print_mlir(ModuleOp(Region(Block([*ops, user]))), debuginfo=False)
    names = [line.split("=")[0].strip() for line in text.splitlines() if "arith.constant" in line]
    assert len(set(names)) == 6 and names[:3] == ["%t", "%t_1", "%t_2"]  # (xDSL drops a hint's `_1`)
    assert all(f"{n}" in text.split("test.op")[1] for n in names)
