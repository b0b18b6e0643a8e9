"""SPMD: one task run as N blocks, each block on its own core, each reading its block index.

``with pl.spmd(n):`` around a kernel call launches that call as one task of ``n`` blocks (upstream
PyPTO's dispatch form, ``examples/models/09_paged_attention_spmd.py``). Every block runs the same
kernel on its own core; ``pl.tile.get_block_idx()`` tells it which block it is (0 .. n-1) and
``pl.tile.get_block_num()`` how many there are, so each picks its own rows. The AICPU scheduler
dispatches the blocks one by one onto the free cores of their type; the task is done when its last
block is, and only then are its consumers released.

Kernels:
  spmd_scale_add -- ``scaled = 2 * x`` as 4 AIV blocks of 32 rows (block b: rows 32b .. 32b+31),
                    then ``out = scaled + y`` as 2 AIV blocks striding over the 4 row chunks
                    (block b: chunks b, b + 2), then ``total = out @ w`` as one plain AIC task
  spmd_matmul    -- ``c = a @ b`` as 2 AIC blocks, one 64-row half each
  spmd_loop_add  -- the loop form ``for i in pl.spmd(2):`` (the body is outlined into one kernel,
                    ``i`` its block index): ``out = a + b``, one 64-row half per block

Run:  .venv/bin/python examples/advanced/09_spmd.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

ROWS = 128
COLS = 128
CHUNK = 32  # rows per block of the scale kernel
BLOCKS = ROWS // CHUNK


@pl.jit.incore
def scale_rows(x: pl.Tensor, scaled: pl.Out[pl.Tensor]):
    """Vector: block b doubles rows [32b, 32b+32)."""
    row = pl.tile.get_block_idx() * CHUNK
    t = pl.load(x, [row, 0], [CHUNK, COLS])
    pl.store(pl.mul(t, 2.0), [row, 0], scaled)
    return scaled


@pl.jit.incore
def add_rows_strided(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    """Vector: block b adds the row chunks b, b + block_num, ... (a stride loop over the blocks)."""
    first = pl.tile.get_block_idx()
    step = pl.tile.get_block_num()
    for chunk in pl.range(first, BLOCKS, step):
        row = chunk * CHUNK
        ta = pl.load(a, [row, 0], [CHUNK, COLS])
        tb = pl.load(b, [row, 0], [CHUNK, COLS])
        pl.store(pl.add(ta, tb), [row, 0], out)
    return out


@pl.jit.incore
def matmul_64(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """Cube: c = a[:64, :64] @ b[:64, :64] (one plain task)."""
    ta = pl.move(pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
    pl.store(pl.matmul(ta, tb), [0, 0], c)
    return c


@pl.jit.incore
def matmul_halves(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    """Cube: block h computes rows [64h, 64h+64) of c = a @ b."""
    row = pl.tile.get_block_idx() * 64
    ta = pl.move(pl.load(a, [row, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    tb = pl.move(pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
    pl.store(pl.matmul(ta, tb), [row, 0], c)
    return c


@pl.jit
def spmd_scale_add(x: pl.Tensor, y: pl.Tensor, w: pl.Tensor, out: pl.Out[pl.Tensor], total: pl.Out[pl.Tensor]):
    scaled = pl.create_tensor([ROWS, COLS], dtype=pl.FP32)
    with pl.spmd(BLOCKS):
        scaled = scale_rows(x, scaled)
    with pl.spmd(2):
        out = add_rows_strided(scaled, y, out)
    total = matmul_64(out, w, total)
    return out, total


@pl.jit
def spmd_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.spmd(2):
        c = matmul_halves(a, b, c)
    return c


@pl.jit
def spmd_loop_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    for i in pl.spmd(2):  # i binds the block index
        off = i * 64
        out = pl.store(pl.add(pl.load(a, [off, 0], [64, COLS]), pl.load(b, [off, 0], [64, COLS])), [off, 0], out)
    return out


def scale_add_inputs() -> tuple[torch.Tensor, ...]:
    x, y, w = torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.randn(64, 64)
    return x, y, w, torch.zeros(ROWS, COLS), torch.zeros(64, 64)


def scale_add_reference(x: torch.Tensor, y: torch.Tensor, w: torch.Tensor) -> dict[str, torch.Tensor]:
    out = 2.0 * x + y
    return {"out": out, "total": out[:64, :64] @ w}


def matmul_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(128, 64), torch.randn(64, 64), torch.zeros(128, 64)


def matmul_reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"c": a @ b}


def loop_add_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)


def loop_add_reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"out": a + b}


CASES = [
    Case("spmd_scale_add", spmd_scale_add, scale_add_inputs, scale_add_reference, ("out", "total"),
         rtol=1e-3, atol=1e-3),
    Case("spmd_matmul", spmd_matmul, matmul_inputs, matmul_reference, ("c",), rtol=1e-3, atol=1e-3),
    Case("spmd_loop_add", spmd_loop_add, loop_add_inputs, loop_add_reference, ("out",)),
]  # fmt: skip


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
