"""``pl.tile.fillpad(tile, pad_value=pl.PadValue.x)`` (issue 15): through the passes (``.lower()``), printed and
parsed back; codegen does not carry the pad value yet and says so with a located error."""

from __future__ import annotations

import pytest
import torch

import pypto
import pypto.language as pl


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


def test_fillpad_codegen_is_a_located_error() -> None:
    with pytest.raises(
        pypto.PartialCodegenError,
        match=r"test_fillpad.py:17:\d+: error: ptoas codegen: 'pl.tile.fillpad' has no pto lowering",
    ):
        padded(torch.zeros(64, 64), torch.zeros(64, 64))
