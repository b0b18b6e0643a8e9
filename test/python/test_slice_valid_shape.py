"""``pl.slice(t, shape, offsets, valid_shape=[n, c])`` of a tile: the window's valid shape is ``[n, c]`` on the
device as in the torch reference. ptoas allocated the window valid everywhere, so the device stored all its
rows (16 where 5 were valid) while ``validate_ir``'s torch code stored 5; across cores the pop then took the
static shape."""

from __future__ import annotations

from pathlib import Path

import torch

import pypto.language as pl
from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig


@pl.jit
def _window_exp(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="window_exp"):
        t = pl.load(a, [0, 0], [32, 32])
        s = pl.slice(t, [16, 32], [8, 0], valid_shape=[n, 32])
        pl.store(pl.exp(s), [0, 0], c)
    return c


@pl.jit
def _window_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="window_mm"):
        t = pl.load(a, [0, 0], [32, 32])
        s = pl.slice(t, [16, 32], [8, 0], valid_shape=[n, 32])
        tm = pl.move(s, target_memory=pl.Mem.Mat)  # vector -> cube: n x 32 valid
        tb = pl.load(b, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_a_slice_with_a_valid_shape_stores_its_valid_rows_only(tmp_path: Path) -> None:
    torch.manual_seed(0)
    a, c = torch.randn(32, 32), torch.full((16, 32), -1.0)
    _window_exp(a, c, 5, config=RunConfig(save_kernels_dir=str(tmp_path / "run")))
    assert torch.allclose(c[:5], torch.exp(a[8:13]), rtol=1e-5, atol=1e-6)
    assert bool((c[5:] == -1.0).all()), "rows past the slice's valid shape were stored"
    expected = c.clone()
    program = ir_compile(_window_exp.specialize(a, c, 5), output_dir=str(tmp_path / "build"))
    program.validate_ir({"a": a, "c": torch.full((16, 32), -1.0), "n": 5}, {"c": expected})  # torch agrees


def test_a_slice_with_a_valid_shape_crosses_to_the_cube(tmp_path: Path) -> None:
    torch.manual_seed(1)
    a, b, c = torch.randn(32, 32), torch.randn(32, 32), torch.full((16, 32), -1.0)
    _window_matmul(a, b, c, 5, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert torch.allclose(c[:5], a[8:13] @ b, rtol=1e-4, atol=1e-4)
    assert bool((c[5:] == -1.0).all())
