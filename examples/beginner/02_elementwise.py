"""Element-wise add and multiply, at the tensor level and the tile level.

Kernels:
  tensor_add   -- out = a + b with tensor ops (``out[:] = pl.add(a, b)``), 128x128
  tile_add_128 -- c = a + b with explicit load / add / store, 128x128
  tile_mul_128 -- c = a * b, 128x128
  chunked_add  -- c = a + b on 512x128: ``pl.range`` over four 128-row chunks,
                  each chunk loaded at row offset ``i * 128`` and stored in the loop

Run:  .venv/bin/python examples/beginner/02_elementwise.py
Next: examples/beginner/03_scalar_ops.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

ROWS = 512
COLS = 128
TILE_ROWS = 128


@pl.jit
def tensor_add(a: pl.Tensor, b: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.add(a, b)
    return out


@pl.jit
def tile_add_128(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [128, 128])
        tile_b = pl.load(b, [0, 0], [128, 128])
        tile_c = pl.add(tile_a, tile_b)
        pl.store(tile_c, [0, 0], c)
    return c


@pl.jit
def tile_mul_128(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [128, 128])
        tile_b = pl.load(b, [0, 0], [128, 128])
        tile_c = pl.mul(tile_a, tile_b)
        pl.store(tile_c, [0, 0], c)
    return c


@pl.jit
def chunked_add(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(ROWS // TILE_ROWS):
            tile_a = pl.load(a, [i * TILE_ROWS, 0], [TILE_ROWS, COLS])
            tile_b = pl.load(b, [i * TILE_ROWS, 0], [TILE_ROWS, COLS])
            pl.store(pl.add(tile_a, tile_b), [i * TILE_ROWS, 0], c)
    return c


def square_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)


def tall_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)


def add_reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"c": a + b}


def chunked_add_reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    # The kernel's view: each 128-row chunk computed on its own.
    chunks = [a[i : i + TILE_ROWS] + b[i : i + TILE_ROWS] for i in range(0, ROWS, TILE_ROWS)]
    return {"c": torch.cat(chunks, dim=0)}


CASES = [
    Case("tensor_add", tensor_add, square_inputs, lambda a, b: {"out": a + b}, outputs=("out",)),
    Case("tile_add_128", tile_add_128, square_inputs, add_reference, outputs=("c",)),
    Case("tile_mul_128", tile_mul_128, square_inputs, lambda a, b: {"c": a * b}, outputs=("c",)),
    Case("chunked_add", chunked_add, tall_inputs, chunked_add_reference, outputs=("c",)),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
