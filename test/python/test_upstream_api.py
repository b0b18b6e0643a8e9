"""Small pieces of upstream PyPTO's Python API that upstream's examples and manual use (issue 15)."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl


@pl.jit
def scale(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.mul(a, 2.0)
    return out


def test_as_python_concise_drops_assignment_types() -> None:
    prog = scale.lower(torch.zeros(64, 128), torch.zeros(64, 128))
    full = prog.as_python()
    short = prog.as_python(concise=True)
    assert "def scale_incore_0(" in short
    assert ": pl.Tile[" in full and ": pl.Tile[" not in short  # intermediate tiles lose their annotation
    assert "a__ssa_v0: pl.Tensor[[64, 128], pl.FP32" in short  # parameters keep theirs
    assert "t__tile = pl.tile.muls(a__tile, 2.0)" in short
    assert len(short) < len(full)
    with pytest.raises(ValueError, match="only the prefix 'pl'"):
        prog.as_python(prefix="ir")
