"""A 2-D tile stored into an N-D tensor (upstream's ``pl.store(row, [0, j, 0], out)`` of a ``[1, SIZE]``
row into a ``[1, NR, SIZE]`` output): the window is ``[1, ..., 1, rows, cols]`` at the offsets. It
verifies, stays 2-D through FlattenTileNdTo2D, lowers to one ``pto.tstore`` and runs on the device and
as torch; any other rank mismatch is a located error."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.debug.torch_codegen import torch_codegen
from pypto.errors import ParserTypeError
from pypto.runtime import RunConfig, run

SRC = """
import pypto.language as pl

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[4, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 4, 64], pl.FP32]]) -> pl.Tensor[[1, 4, 64], pl.FP32]:
        for j in pl.range(4):
            row = pl.load(x, [3 - j, 0], [1, 64])
            out = pl.store(row, [0, j, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[4, 64], pl.FP32], out: pl.Out[pl.Tensor[[1, 4, 64], pl.FP32]]) -> pl.Tensor[[1, 4, 64], pl.FP32]:
        return self.k(x, out)
"""


def program(src: str = SRC) -> pl.Program:
    return pl.parse(src, filename="kernel.py")


def test_a_2d_tile_into_a_3d_tensor_prints_and_round_trips() -> None:
    text = program().as_python()
    assert "pl.tile.store(row, [0, j, 0], out)" in text
    assert pl.parse(text).as_python() == text


def test_a_2d_tile_into_a_3d_tensor_lowers_to_one_tstore_and_runs_on_the_device() -> None:
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    pto = print_pto(lower_to_pto(lower_program(program()))["k"])
    assert pto.count("pto.tstore ins(") == 1 and "pto.treshape" not in pto
    x, out = torch.randn(4, 64), torch.zeros(1, 4, 64)
    run(program(), x, out, config=RunConfig(platform="a2a3sim"))
    assert torch.equal(out[0], x.flip(0))


def test_a_2d_tile_into_a_3d_tensor_runs_as_torch() -> None:
    ns: dict[str, object] = {}
    exec(torch_codegen(program()), ns)
    x, out = torch.randn(4, 64), torch.zeros(1, 4, 64)
    ns["main"](x, out)  # type: ignore[operator]
    assert torch.equal(out[0], x.flip(0))


@pytest.mark.parametrize(
    ("old", "new"),
    [("pl.load(x, [3 - j, 0], [1, 64])", "pl.reshape(pl.load(x, [3 - j, 0], [1, 64]), [64])"),
     ("out: pl.Out[pl.Tensor[[1, 4, 64], pl.FP32]]) -> pl.Tensor[[1, 4, 64], pl.FP32]:\n        for",
      "out: pl.Out[pl.Tensor[[256], pl.FP32]]) -> pl.Tensor[[256], pl.FP32]:\n        for")],
)  # fmt: skip
def test_another_rank_mismatch_is_a_located_error(old: str, new: str) -> None:
    assert old in SRC
    with pytest.raises(ParserTypeError, match="has rank .*, or a 2-D tile") as e:
        program(SRC.replace(old, new, 1))
    assert "kernel.py:10" in str(e.value)


@pl.jit
def _double(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, a)
    return out


@pytest.mark.parametrize("shape", [(128,), (2, 16, 64), (2, 2, 4, 32)])
def test_an_nd_tensor_is_loaded_into_one_flat_tile(shape: tuple[int, ...], tmp_path) -> None:  # noqa: ANN001
    """A 1-D or N-D tensor loaded whole: FlattenTileNdTo2D keeps the load N-D and the codegen loads the
    window into one tile of its flattened 2-D shape (``[2, 16, 64]`` -> ``[32, 64]``), the reshapes
    around it the same tile; the store writes the N-D window. The codegen stopped with "tile shape
    [128] is not static 2-D"."""
    a, out = torch.randn(*shape), torch.zeros(*shape)
    compiled = _double.compile(a, out, config=RunConfig(dump_passes=True, save_kernels_dir=str(tmp_path / "b")))
    compiled(a, out)
    assert torch.equal(out, a + a)
    compiled.validate_ir({"a": a, "out": torch.zeros(*shape)}, {"out": a + a})
