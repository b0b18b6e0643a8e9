"""ResolveBackendOpLayouts and the layouts ptoas accepts, on an RMSNorm whose
variance is a ``[16, 1]`` column (upstream's qwen3 decode, ``input_rmsnorm``).

The column is col_major; ``add``/``mul``/``sqrt`` (ROW_MAJOR ops) run on it as a
``[1, 16]`` row vector, ``recip`` (unary: PTOAS checks no layout) on the column.
"""

from __future__ import annotations

from pathlib import Path

import pytest
import torch
from xdsl.dialects import func

import pypto.language as pl
from pypto.dialects.enums import TileLayout
from pypto.dialects.op_facts import needs_row_major
from pypto.dialects.tile_ops import TileRecipOp, TileReshapeOp, TileSqrtOp
from pypto.dialects.types import TileType
from pypto.ir import compile
from pypto.runtime import RunConfig, run


@pl.jit
def rms_column(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms"):
        sq = pl.reshape(pl.row_sum(pl.mul(x, x)), [1, 16])
        var = pl.reshape(pl.add(pl.mul(sq, 1.0 / 128), 1e-6), [16, 1])
        inv = pl.recip(pl.sqrt(var))
        out = pl.assemble(out, pl.row_expand_mul(x, inv), [0, 0])
    return out


def _ops(module, cls):  # type: ignore[no-untyped-def]
    return [o for f in module.ops if isinstance(f, func.FuncOp) for o in f.walk() if isinstance(o, cls)]


@pytest.mark.parametrize("engine", ["interpreter", "cpp"])
def test_column_vector_rmsnorm_matches_torch(engine: str, tmp_path: Path) -> None:
    torch.manual_seed(0)
    x, out = torch.randn(16, 128), torch.zeros(16, 128)
    compiled = compile(rms_column.specialize(x, out), output_dir=tmp_path / "build")
    run(compiled, x, out, config=RunConfig(kernel_engine=engine))
    expected = x / torch.sqrt((x * x).mean(-1, keepdim=True) + 1e-6)
    torch.testing.assert_close(out, expected, rtol=1e-5, atol=1e-5)
    dump = next((Path(compiled.output_dir) / "passes_dump").glob("*_after_ResolveBackendOpLayouts.py")).read_text()
    assert "__rm_a0_tmp_v0: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.reshape(" in dump
    assert "__row_major_tmp_v1: pl.Tile[[1, 16], pl.FP32, pl.Mem.Vec] = pl.tile.sqrt(" in dump


def test_no_row_major_op_keeps_a_column() -> None:
    """After the pass every ROW_MAJOR op has row_major tiles; recip keeps its column."""
    program = rms_column.specialize(torch.zeros(16, 128), torch.zeros(16, 128))
    from pypto.core.context import make_context
    from pypto.passes.pipeline_order import DEFAULT_PIPELINE
    from pypto.passes.registry import get_pass

    module = program.module
    for _, name in DEFAULT_PIPELINE[: [n for n, _ in DEFAULT_PIPELINE].index("ResolveBackendOpLayouts") + 1]:
        get_pass(name)().apply(make_context(), module)
    module.verify()
    checked = 0
    for f in module.ops:
        if not isinstance(f, func.FuncOp):
            continue
        for op in f.walk():
            if needs_row_major(op):
                for v in [*op.operands, *op.results]:
                    if isinstance(v.type, TileType):
                        assert v.type.effective_view().blayout.data == TileLayout.row_major, op.name
                        checked += 1
    assert checked > 0
    (sqrt,) = _ops(module, TileSqrtOp)
    assert isinstance(sqrt.operands[0].owner, TileReshapeOp)
    (recip,) = _ops(module, TileRecipOp)
    t = recip.results[0].type
    assert isinstance(t, TileType) and t.get_shape() == (16, 1)
