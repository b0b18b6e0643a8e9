"""Matrix multiplication on the cube unit (64x64).

The cube path through the memory hierarchy: DDR -> Mat (L1) with ``pl.load(...,
target_memory=pl.Mem.Mat)``, Mat -> Left / Right (L0A / L0B) with ``pl.move``,
``pl.matmul`` into Acc (L0C), and ``pl.store`` from Acc back to DDR.

Kernel:
  matmul_64 -- c = a @ b, 64x64 fp32

Run:  .venv/bin/python examples/beginner/05_matmul.py
Next: examples/beginner/06_concat.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402


@pl.jit
def matmul_64(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a_l1 = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tile_b_l1 = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tile_a_l0a = pl.move(tile_a_l1, target_memory=pl.Mem.Left)
        tile_b_l0b = pl.move(tile_b_l1, target_memory=pl.Mem.Right)
        tile_c_l0c = pl.matmul(tile_a_l0a, tile_b_l0b)
        pl.store(tile_c_l0c, [0, 0], c)
    return c


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)


def reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"c": a @ b}


CASES = [Case("matmul_64", matmul_64, make_inputs, reference, outputs=("c",), rtol=1e-3, atol=1e-3)]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
