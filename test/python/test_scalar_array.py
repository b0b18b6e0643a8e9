"""``pl.array.create(n, pl.INT32)`` scalar arrays (upstream's on-core ``pl.Array``): ``arr[i] = v`` and
``arr[i]`` (also spelled ``pl.array.update_element`` / ``get_element``) in InCore code, carried through
loops; a ``[1, n']`` Vec tile written with ``pl.tile.write`` and read with ``pl.tile.read``, so both text
forms round trip, it lowers to ``pto.tsetval`` / ``pto.tgetval`` and runs on the device and as torch."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.debug.torch_codegen import torch_codegen
from pypto.errors import InvalidOperationError, ParserTypeError, UnsupportedFeatureError
from pypto.runtime import RunConfig, run

SRC = """
import pypto.language as pl

@pl.program
class Prog:
    @pl.function(type=pl.FunctionType.InCore)
    def hist(self, idx: pl.Tensor[[1, 16], pl.INT32], out: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT32]:
        counts = pl.array.create(4, pl.INT32)
        for b in pl.range(4):
            counts[b] = 0
        for i in pl.range(16):
            e = pl.read(idx, [0, i])
            cur = counts[e]
            counts[e] = cur + 1
        counts = pl.array.update_element(counts, 0, pl.array.get_element(counts, 0) + 100)
        for b in pl.range(4):
            pl.write(out, [0, b], counts[b])
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, idx: pl.Tensor[[1, 16], pl.INT32], out: pl.Out[pl.Tensor[[1, 4], pl.INT32]]) -> pl.Tensor[[1, 4], pl.INT32]:
        return self.hist(idx, out)
"""


def program(src: str = SRC) -> pl.Program:
    return pl.parse(src, filename="kernel.py")


def data() -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    idx = torch.tensor([[0, 1, 1, 3, 3, 3, 2, 0, 1, 1, 1, 3, 2, 2, 0, 1]], dtype=torch.int32)
    want = torch.bincount(idx[0], minlength=4).to(torch.int32).reshape(1, 4)
    want[0, 0] += 100
    return idx, torch.zeros(1, 4, dtype=torch.int32), want


def test_an_array_is_a_padded_vec_tile_and_both_text_forms_round_trip() -> None:
    text = program().as_python()
    assert "counts: pl.Tile[[1, 8], pl.INT32, pl.Mem.Vec] = pl.tile.create([1, 8], dtype=pl.INT32" in text
    assert "pl.tile.write(counts, [0, pl.cast(e, pl.INDEX)], cur + pl.const(1, pl.INT32))" in text
    assert "pl.tile.read(counts, [0, 0]) + pl.const(100, pl.INT32)" in text
    assert pl.parse(text).as_python() == text
    for generic in (False, True):
        mlir = program().as_mlir(generic=generic)
        assert print_mlir(parse_mlir(mlir), generic=generic) == mlir


def test_an_array_lowers_to_tsetval_tgetval_and_runs_on_the_device() -> None:
    from pypto.pipeline.lower import lower_program
    from pypto.ptoas.codegen import lower_program as lower_to_pto
    from pypto.ptoas.pto_text import print_pto

    pto = print_pto(lower_to_pto(lower_program(program()))["hist"])
    assert "pto.tsetval ins(" in pto and "pto.tgetval ins(" in pto
    idx, out, want = data()
    run(program(), idx, out, config=RunConfig(platform="a2a3sim"))
    assert torch.equal(out, want)


def test_an_array_runs_as_torch() -> None:
    ns: dict[str, object] = {}
    exec(torch_codegen(program()), ns)
    idx, out, want = data()
    ns["main"](idx, out)  # type: ignore[operator]
    assert torch.equal(out, want)


@pytest.mark.parametrize(
    ("old", "new", "error", "message", "line"),
    [("pl.array.create(4, pl.INT32)", "pl.array.create(idx, pl.INT32)", ParserTypeError,
      "the extent must be a compile-time integer", 8),
     ("pl.array.create(4, pl.INT32)", "pl.array.create(0, pl.INT32)", ParserTypeError,
      "the extent must be a positive integer, got 0", 8),
     ("pl.array.create(4, pl.INT32)", "pl.array.create(4, 3)", ParserTypeError,
      "the dtype must be a scalar dtype", 8),
     ("counts[b] = 0", "counts[4] = 0", InvalidOperationError, r"index 4 is out of range for 'counts' \(extent 4\)", 10),
     ("counts[b] = 0", "counts[b, 0] = 0", ParserTypeError, "index it with one integer", 10),
     ("counts[b] = 0", "counts[b] = idx", ParserTypeError, "the value must be a scalar", 10),
     ("pl.array.get_element(counts, 0)", "pl.array.get_element(idx, 0)", ParserTypeError,
      "'idx' is not an array from pl.array.create", 15)],
)  # fmt: skip
def test_misuse_is_a_located_error(old: str, new: str, error: type, message: str, line: int) -> None:
    assert old in SRC
    with pytest.raises(error, match=message) as e:
        program(SRC.replace(old, new, 1))
    assert f"kernel.py:{line}" in str(e.value)


def test_an_array_of_scalars_in_orchestration_code_is_a_located_error() -> None:
    src = SRC.replace("        return self.hist(idx, out)", "        a = pl.array.create(4, pl.INT32)\n        return self.hist(idx, out)")
    with pytest.raises(UnsupportedFeatureError, match="belongs in InCore code") as e:
        program(src)
    assert "kernel.py:22" in str(e.value)
