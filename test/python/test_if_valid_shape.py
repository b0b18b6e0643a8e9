"""An ``if`` whose branches yield tiles with a run-time valid shape: the result has that valid shape on the
device. ptoas allocated the result's tile valid everywhere, so a store after the ``if`` wrote all 16 rows of a
tile whose 5 were valid. Branches whose valid shapes differ are a located error (the result is one tile_buf with
one valid shape); they were stored whole."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

import pypto.language as pl
from pypto.errors import PartialCodegenError
from pypto.runtime import RunConfig


@pl.jit
def _pick(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX], flag: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick"):
        if flag > 0:
            t = pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])
        else:
            t = pl.load(b, [0, 0], [16, 32], valid_shape=[n, 32])
        pl.store(pl.exp(t), [0, 0], c)
    return c


@pl.jit
def _pick_mixed(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX], flag: pl.Scalar[pl.INDEX]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick_mixed"):
        if flag > 0:
            t = pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])
        else:
            t = pl.load(b, [0, 0], [16, 32])
        pl.store(pl.exp(t), [0, 0], c)
    return c


@pytest.mark.parametrize("flag", [1, 0])
def test_an_if_result_keeps_the_valid_shape_its_branches_share(tmp_path: Path, flag: int) -> None:
    torch.manual_seed(flag)
    a, b, c = torch.randn(16, 32), torch.randn(16, 32), torch.full((16, 32), -1.0)
    _pick(a, b, c, 5, flag, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert torch.allclose(c[:5], torch.exp((a if flag else b)[:5]), rtol=1e-5, atol=1e-6)
    assert bool((c[5:] == -1.0).all()), "rows past the valid shape were stored"


def test_branches_yielding_different_valid_shapes_are_a_located_error(tmp_path: Path) -> None:
    a, b = torch.randn(16, 32), torch.randn(16, 32)
    with pytest.raises(PartialCodegenError) as e:
        _pick_mixed(a, b, torch.zeros(16, 32), 5, 1, config=RunConfig(save_kernels_dir=str(tmp_path)))
    msg = str(e.value)
    assert "test_if_valid_shape.py:32:9" in msg and "valid shapes differ" in msg, msg


@pl.jit
def _pick_then_matmul(a: pl.Tensor, b: pl.Tensor, w: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX],
                      flag: pl.Scalar[pl.INDEX]):  # fmt: skip
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pick_mm"):
        if flag > 0:
            t = pl.load(a, [0, 0], [16, 32], valid_shape=[n, 32])
        else:
            t = pl.load(b, [0, 0], [16, 32], valid_shape=[n, 32])
        tm = pl.move(pl.mul(t, 2.0), target_memory=pl.Mem.Mat)  # vector -> cube: the if result's n x 32
        tw = pl.load(w, [0, 0], [32, 32], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tw, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def test_an_if_result_with_a_run_time_valid_shape_crosses_to_the_cube(tmp_path: Path) -> None:
    """The pop took the static shape (no rule for an if result): "pops a 16x32 tile but the vector side pushed
    5x32"; it now declares the valid shape both branches yield."""
    torch.manual_seed(2)
    a, b, w, c = torch.randn(16, 32), torch.randn(16, 32), torch.randn(32, 32), torch.full((16, 32), -1.0)
    _pick_then_matmul(a, b, w, c, 5, 0, config=RunConfig(save_kernels_dir=str(tmp_path)))
    assert torch.allclose(c[:5], 2 * b[:5] @ w, rtol=1e-4, atol=1e-4)
    assert bool((c[5:] == -1.0).all())
