"""``pl.write(dst, indices, value)``: one element of a tensor (GM) or tile set to a scalar, as upstream's
``tensor.write`` / ``tile.write``; parsed, verified, printed in both text forms, lowered to
``pto.store_scalar`` and run on the simulated device and as torch."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto import ir
from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.debug.torch_codegen import torch_codegen
from pypto.errors import ParserTypeError
from pypto.runtime import RunConfig, run

SRC = """
import pypto.language as pl

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, src: pl.Tensor[[4, 2], pl.INT32], y: pl.Out[pl.Tensor[[4, 2], pl.INT32]]) -> pl.Tensor[[4, 2], pl.INT32]:
        for i in pl.range(4):
            v = pl.read(src, [i, 1])
            pl.write(y, [i, 0], v + 1)
            pl.write(y, [i, 1], VALUE)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, src: pl.Tensor[[4, 2], pl.INT32], y: pl.Out[pl.Tensor[[4, 2], pl.INT32]]) -> pl.Tensor[[4, 2], pl.INT32]:
        y = self.k(src, y)
        return y
"""


def program(value: str = "7") -> pl.Program:
    return pl.parse(SRC.replace("VALUE", value), filename="kernel.py")


def expected(src: torch.Tensor) -> torch.Tensor:
    return torch.stack([src[:, 1] + 1, torch.full((4,), 7, dtype=torch.int32)], dim=1)


def test_pl_write_is_a_tensor_write_and_both_text_forms_round_trip() -> None:
    prog = program()
    text = prog.as_python()
    assert "pl.tensor.write(y, [i, 0], v + pl.const(1, pl.INT32))" in text
    assert "pl.tensor.write(y, [i, 1], pl.const(7, pl.INT32))" in text
    assert pl.parse(text).as_python() == text
    for generic in (False, True):
        mlir = prog.as_mlir(generic=generic)
        assert "pl.tensor.write" in mlir
        assert print_mlir(parse_mlir(mlir), generic=generic) == mlir


def test_pl_write_of_a_tile_is_a_tile_write() -> None:
    src = SRC.replace("v = pl.read(src, [i, 1])", "t = pl.load(src, [0, 0], [4, 2])\n            v = pl.read(t, [i, 1])")
    src = src.replace("pl.write(y, [i, 0], v + 1)", "t = pl.write(t, [i, 0], v + 1)")
    text = pl.parse(src.replace("VALUE", "7")).as_python()
    assert "pl.tile.write(t, [i, 0], v + pl.const(1, pl.INT32))" in text
    assert pl.parse(text).as_python() == text


@pytest.mark.parametrize(
    ("value", "message"),
    [("pl.const(1.5, pl.FP32)", r"operand 'value' has type pl.Scalar\[pl.FP32\], expected pl.Scalar\[pl.INT32\]"),
     ("src", "operand 'value' must be a scalar")],
)  # fmt: skip
def test_a_wrong_value_is_a_located_error(value: str, message: str) -> None:
    with pytest.raises(ParserTypeError, match=message) as e:
        program(value)
    assert "kernel.py:11" in str(e.value)


@pytest.mark.parametrize(
    "engine",
    ["interpreter", pytest.param("cpp", marks=pytest.mark.skipif(shutil.which("g++") is None, reason="no g++"))],
)
def test_pl_write_lowers_to_store_scalar_and_runs_on_the_device(
    engine: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``pto.store_scalar`` in both engines: the interpreter and the g++-built C++ (``p[i] = v;``)."""
    src, y = torch.arange(8, dtype=torch.int32).reshape(4, 2), torch.zeros(4, 2, dtype=torch.int32)
    compiled = ir.compile(program(), output_dir=str(tmp_path / "build"), dump_passes=False)
    run(compiled, src, y, config=RunConfig(platform="a2a3sim", kernel_engine=engine))
    assert torch.equal(y, expected(src))
    assert "torch form" not in capsys.readouterr().err  # the kernel ran simulated, not as its torch form


def test_pl_write_runs_as_torch() -> None:
    ns: dict[str, object] = {}
    exec(torch_codegen(program()), ns)
    src, y = torch.arange(8, dtype=torch.int32).reshape(4, 2), torch.zeros(4, 2, dtype=torch.int32)
    ns["main"](src, y)  # type: ignore[operator]
    assert torch.equal(y, expected(src))


TILE_SRC = """
import pypto.language as pl

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        t = pl.load(x, [0, 0], [8, 16])
        v = pl.read(t, [2, 3])
        t = pl.write(t, [0, 1], v * 10.0)
        t = pl.write(t, [7, 15], v)
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[8, 16], pl.FP32], y: pl.Out[pl.Tensor[[8, 16], pl.FP32]]) -> pl.Tensor[[8, 16], pl.FP32]:
        y = self.k(x, y)
        return y
"""


def test_tile_read_and_write_lower_to_tgetval_tsetval_and_run() -> None:
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    prog = pl.parse(TILE_SRC)
    pto = print_pto(lower_to_pto(lower_program(prog))["k"])
    assert pto.count("pto.tsetval ins(") == 2 and pto.count("pto.tgetval ins(") == 1
    x, y = torch.randn(8, 16), torch.zeros(8, 16)
    run(prog, x, y, config=RunConfig(platform="a2a3sim"))
    want = x.clone()
    want[0, 1], want[7, 15] = x[2, 3] * 10, x[2, 3]
    assert torch.equal(y, want)
