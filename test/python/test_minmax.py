"""``pl.maximum`` / ``pl.minimum`` (issue 15: upstream's element-wise max/min, tile or tensor, tile or scalar
right-hand side), numerics against torch on the simulated chip."""

from __future__ import annotations

import torch

import pypto.language as pl


@pl.jit
def tile_minmax(a: pl.Tensor, b: pl.Tensor, hi: pl.Out[pl.Tensor], lo: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        ta = pl.load(a, [0, 0], [32, 64])
        tb = pl.load(b, [0, 0], [32, 64])
        pl.store(pl.maximum(pl.maximum(ta, tb), -0.5), [0, 0], hi)  # tile-tile, then tile-scalar
        pl.store(pl.minimum(pl.minimum(ta, tb), 0.5), [0, 0], lo)
    return hi, lo


@pl.jit
def tensor_minmax(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.minimum(pl.maximum(a, b), 1.0)
    return out


def test_tile_maximum_minimum() -> None:
    torch.manual_seed(0)
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    hi, lo = torch.zeros(32, 64), torch.zeros(32, 64)
    text = tile_minmax.lower(a, b, hi, lo).as_python()
    assert "pl.tile.maximum(" in text and "pl.tile.maximums(" in text and "pl.tile.minimums(" in text
    tile_minmax(a, b, hi, lo)
    torch.testing.assert_close(hi, torch.clamp(torch.maximum(a, b), min=-0.5))
    torch.testing.assert_close(lo, torch.clamp(torch.minimum(a, b), max=0.5))


def test_tensor_maximum_minimum() -> None:
    torch.manual_seed(1)
    a, b = torch.randn(32, 64), torch.randn(32, 64)
    out = torch.zeros(32, 64)
    tensor_minmax(a, b, out)
    torch.testing.assert_close(out, torch.clamp(torch.maximum(a, b), max=1.0))
