"""A window with a valid shape made in the Orchestration function (``pl.slice(a, [16, 32], [r, 0],
valid_shape=[n, 32])``) and read in a ``pl.at`` scope: the kernel reads only its valid region, as the torch
reference of every pass dump does (OutlineIncoreScopes reads the window through a slice of it with the same
valid shape). Before, the valid shape stayed in the Orchestration function: the kernel read and wrote all 16
rows of the window while the torch code wrote ``n``, and ``validate_ir`` failed at the first dump."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import torch

import pypto.language as pl
from pypto.ir import compile as ir_compile
from pypto.runtime import RunConfig

UNSET = -7.0
"""What the output holds where no valid row was written."""


@pl.jit
def _window_exp(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    s = pl.slice(a, [16, 32], [8, 0], valid_shape=[n, 32])
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="rows_exp"):
        c[:] = pl.exp(s)
    return c


@pl.jit
def _window_row_sums(a: pl.Tensor, c: pl.Out[pl.Tensor], n: pl.Scalar[pl.INDEX]):
    for i in pl.range(2):
        s = pl.slice(a, [16, 32], [i * 16, 0], valid_shape=[n, 32])
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="block_sums"):
            c = pl.assemble(c, pl.row_sum(s), [i * 16, 0])
    return c


def _device_then_dumps(kernel: Any, a: torch.Tensor, shape: tuple[int, int], n: int,
                       want: torch.Tensor, tmp_path: Path) -> None:  # fmt: skip
    """The simulated chip's result against ``want``, then the torch code of every pass dump against the chip's."""
    c = torch.full(shape, UNSET)
    kernel(a, c, n, config=RunConfig(save_kernels_dir=str(tmp_path / "run")))
    torch.testing.assert_close(c, want, rtol=1e-4, atol=1e-4)
    program = ir_compile(kernel.specialize(a, torch.full(shape, UNSET), n), output_dir=str(tmp_path / "build"))
    program.validate_ir({"a": a, "c": torch.full(shape, UNSET), "n": n}, {"c": c}, rtol=1e-4, atol=1e-4)


def test_a_window_made_outside_the_scope_keeps_its_valid_rows(tmp_path: Path) -> None:
    a = torch.randn(32, 32, generator=torch.Generator().manual_seed(3))
    want = torch.full((16, 32), UNSET)
    want[:11] = torch.exp(a[8:19])
    _device_then_dumps(_window_exp, a, (16, 32), 11, want, tmp_path)


def test_windows_made_in_a_loop_each_keep_their_valid_rows(tmp_path: Path) -> None:
    a = torch.randn(32, 32, generator=torch.Generator().manual_seed(4))
    want = torch.full((32, 1), UNSET)
    for r in (0, 16):
        want[r : r + 5] = a[r : r + 5].sum(1, keepdim=True)
    _device_then_dumps(_window_row_sums, a, (32, 1), 5, want, tmp_path)
