"""``pld.tile.put`` / ``pld.tile.get`` (issue 19): the staged forms of ``pld.tensor.put`` / ``get`` run on 2
simulated ranks, match torch, lower to ``pto.comm.tput`` / ``tget`` with ``buf(%stage)`` and cost the cycles of
the tensor form (upstream lowers ``pld.tensor.put`` to ``tile.create`` + ``pld.tile.put``: one lowering)."""

from __future__ import annotations

from pathlib import Path

import dist_tile_rma_programs as pt
import pytest
import torch

from pypto.ir.distributed_compiled_program import DistributedConfig
from pypto.runtime import RunConfig

TIMEOUT = 60.0


def config(tmp_path: Path, name: str) -> RunConfig:
    dc = DistributedConfig(device_ids=[0, 1], timeout_s=TIMEOUT, num_sub_workers=0)
    return RunConfig(distributed_config=dc, save_kernels_dir=str(tmp_path / name))


def run(host: object, tmp_path: Path, name: str, x: torch.Tensor) -> tuple[torch.Tensor, list[int], str]:
    y = torch.zeros_like(x)
    compiled = host.compile(x, y, config=config(tmp_path, name))  # type: ignore[attr-defined]
    compiled(x, y, config=config(tmp_path, name))
    kernel = next((compiled.output_dir / "next_levels").glob("*/ptoas/*_k.pto")).read_text()
    return y, [rk.cycles for rk in compiled.last_run.ranks], kernel


def test_tile_put_with_notify_wait_matches_torch_and_the_tensor_put_cycles(tmp_path: Path) -> None:
    torch.manual_seed(0)
    x = torch.randn(2, 2, pt.N)
    y_tensor, cycles_tensor, _ = run(pt.put_host, tmp_path, "tensor", x)
    y_tile, cycles_tile, pto = run(pt.tile_put_host, tmp_path, "tile", x)
    expected = x.roll(1, dims=0)  # rank r's box holds rank r-1's x
    assert torch.equal(y_tile, expected) and torch.equal(y_tensor, expected)
    tput = next(line for line in pto.splitlines() if "pto.comm.tput(" in line)
    assert "buf(%stage" in tput and "!pto.tile_buf<loc=vec, dtype=f32, rows=1, cols=64" in tput and "pld." not in pto
    assert cycles_tile == cycles_tensor and min(cycles_tile) > 0


def test_tile_get_matches_torch_and_the_tensor_get_cycles(tmp_path: Path) -> None:
    torch.manual_seed(1)
    x = torch.randn(2, 2, pt.N)
    y_tensor, cycles_tensor, _ = run(pt.get_host, tmp_path, "tensor", x)
    y_tile, cycles_tile, pto = run(pt.tile_get_host, tmp_path, "tile", x)
    expected = torch.zeros_like(x)
    expected[:, 1] = x.roll(-1, dims=0)[:, 0]  # row 1 of rank r's y: row 0 of rank r+1's x
    assert torch.equal(y_tile, expected) and torch.equal(y_tensor, expected)
    assert "buf(%stage" in next(line for line in pto.splitlines() if "pto.comm.tget(" in line)
    assert cycles_tile == cycles_tensor and min(cycles_tile) > 0


SRC = """
import pypto.language as pl
import pypto.language.distributed as pld

@pl.program
class Staged:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[2, 64], pl.FP32], box: pld.DistributedTensor[[2, 64], pl.FP32]):
        ctx: pld.CommCtx = pld.get_comm_ctx(box)
        stage = pl.tile.create([1, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        box = pld.tile.put(box, pld.rank(ctx), x, stage)
        return box
"""


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (("[1, 64], dtype=pl.FP32", "[4, 64], dtype=pl.FP32"),
         "the staging tile 'stage' [4, 64] must fit in the transfer flattened to [rows, cols] = [2, 64]"),
        (("pl.Mem.Vec", "pl.Mem.Mat"), "the staging tile 'stage' must be a Vec tile (UB), got pl.Mem.Mat"),
        (("dtype=pl.FP32", "dtype=pl.FP16"),
         "the staging tile 'stage' (pl.FP16) must have the dtype of 'dst' (pl.FP32)"),
        (("[1, 64], dtype", "[64], dtype"), "the staging tile 'stage' must be a static 2-D tile, got shape [64]"),
    ],
)
def test_a_bad_staging_tile_is_a_located_error(edit: tuple[str, str], message: str) -> None:
    import pypto.language as pl
    from pypto.errors import ParserError

    with pytest.raises(ParserError) as err:
        pl.parse(SRC.replace(*edit), filename="staged.py")
    assert message in str(err.value) and "staged.py:11:" in str(err.value)


def test_the_staged_ops_and_the_comm_ctx_annotation_round_trip() -> None:
    """Upstream's printed single-stage subregion form (the region lists right after the stage) reads back;
    ``pld.CommCtx`` annotates an assignment and a parameter (an ``index`` handle)."""
    import pypto.language as pl
    from pypto.core.mlir_text import parse_mlir, print_mlir

    src = SRC.replace("box: pld.DistributedTensor[[2, 64], pl.FP32]):",
                      "box: pld.DistributedTensor[[2, 64], pl.FP32], c: pld.CommCtx):")
    src = src.replace("        return box", "        box = pld.tile.get(box, pld.nranks(c), box, stage, [1, 0], [0, 0], [1, 64])\n"
                      "        return box")
    text = pl.parse(src, filename="staged.py").as_python()
    assert "pld.tile.put(box, pld.rank(ctx), x, stage)" in text
    assert "pld.tile.get(box, pld.nranks(c), box, stage, [1, 0], [0, 0], shape=[1, 64])" in text
    assert "c: pl.Scalar[pl.INDEX]" in text and "ctx: pl.Scalar[pl.INDEX] = pld.get_comm_ctx(box)" in text
    again = pl.parse(text)
    assert again.as_python() == text
    for generic in (False, True):
        mlir = again.as_mlir(generic=generic)
        assert print_mlir(parse_mlir(mlir), generic=generic) == mlir
