"""``pl.tile.fillpad(tile, pad_value=pl.PadValue.x)`` (issue 15): through the passes (``.lower()``), printed and
parsed back; codegen writes ``pto.tfillpad`` into a tile_buf whose ``pad`` is the pad value (``pad=3`` for
``min``), and both engines (interpreter, C++) fill the region outside the source's valid shape with it,
also when the valid shape is a run-time scalar (upstream's paged attention: ``valid_shape=[16, valid_len]``)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.ir import compile
from pypto.runtime import RunConfig, run


@pl.jit
def padded(data: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.load(data, [0, 0], [64, 64], valid_shape=[64, 48], target_memory=pl.MemorySpace.Vec)
        p = pl.tile.fillpad(s, pad_value=pl.PadValue.min)
        pl.store(p, [0, 0], output)
    return output


def test_fillpad_lowers_prints_and_parses() -> None:
    d, o = torch.zeros(64, 64), torch.zeros(64, 64)
    text = padded.lower(d, o).as_python()
    assert "pl.tile.fillpad(s__ssa_v0, pad_value=pl.PadValue.min)" in text
    assert pl.parse(text).as_python() == text


def test_fillpad_fills_the_pad_region_on_both_engines(tmp_path: Path) -> None:
    torch.manual_seed(0)
    d, o = torch.randn(64, 64), torch.zeros(64, 64)
    compiled = compile(padded.specialize(d, o), output_dir=tmp_path / "build")
    pto = "\n".join(p.read_text() for p in Path(compiled.output_dir).glob("ptoas/*.pto"))
    assert "pto.tfillpad ins(" in pto and "pad=3>" in pto
    result = run(compiled, d, o, config=RunConfig(kernel_engine="both"))
    want = d.clone()
    want[:, 48:] = float("-inf")
    torch.testing.assert_close(o, want)
    report = result.kernel_engine
    assert report is not None and report.diffs and not report.differing


@pl.function(type=pl.FunctionType.InCore)
def masked_row_max(
    x: pl.Tensor[[16, 128], pl.FP32], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[16, 1], pl.FP32]]
) -> pl.Tensor[[16, 1], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 128], valid_shape=[16, n], target_memory=pl.MemorySpace.Vec)
    p = pl.tile.fillpad(t, pad_value=pl.PadValue.min)
    tmp = pl.create_tile([16, 128], dtype=pl.FP32, target_memory=pl.MemorySpace.Vec)
    out = pl.store(pl.row_max(p, tmp), [0, 0], out)
    return out


@pl.program
class RuntimeValid:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[16, 128], pl.FP32], out: pl.Out[pl.Tensor[[16, 1], pl.FP32]], cfg: pl.Tensor[[1], pl.INT64]
    ) -> pl.Tensor[[16, 1], pl.FP32]:
        out = masked_row_max(x, pl.tensor.read(cfg, [0]), out)
        return out


@pytest.mark.parametrize("n", [40, 128])
def test_fillpad_after_a_runtime_valid_shape(n: int) -> None:
    x, out = -torch.rand(16, 128) - 1.0, torch.zeros(16, 1)  # all negative: an unfilled pad (0) would win
    run(RuntimeValid, x, out, torch.tensor([n]), config=RunConfig(platform="a2a3sim"))
    torch.testing.assert_close(out, x[:, :n].max(dim=1, keepdim=True).values)


@pl.jit
def _masked_row_max(data: pl.Tensor, output: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP):
        s = pl.load(data, [0, 0], [16, 64], valid_shape=[16, n])
        tmp = pl.create_tile([16, 64], dtype=pl.FP32)
        m = pl.row_max(pl.tile.fillpad(s, pad_value=pl.PadValue.min), tmp)  # the padding never wins
        pl.store(pl.row_expand_sub(pl.tile.fillpad(s), m), [0, 0], output)  # zero-padded, minus the row max
    return output


def test_the_torch_reference_fills_the_pad_region_as_the_device_does(tmp_path: Path) -> None:
    """validate_ir stopped at every dump with "no torch lowering for op pl.tile.fillpad": the torch code had no
    fillpad (its NO_TORCH said it tracked no valid shapes, which it does since issue 7's _tile_load)."""
    torch.manual_seed(1)
    d = torch.randn(16, 64) - 5.0  # all negative: a zero pad would win the row max
    out = torch.zeros(16, 64)
    _masked_row_max(d, out, 40, config=RunConfig(save_kernels_dir=str(tmp_path / "run")))
    m = d[:, :40].max(dim=1, keepdim=True).values
    want = torch.cat([d[:, :40], torch.zeros(16, 24)], dim=1) - m
    assert torch.allclose(out, want, atol=1e-5)
    compiled = compile(_masked_row_max.specialize(d, out, 40), output_dir=tmp_path / "build")
    compiled.validate_ir({"data": d, "output": torch.zeros(16, 64), "n": 40}, {"output": want}, rtol=1e-5, atol=1e-5)
