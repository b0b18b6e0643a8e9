"""Matrix multiply with K accumulation.

The first K chunk initialises the accumulator (Acc / L0C) with ``pl.matmul``;
later chunks add into it with ``pl.matmul_acc``. Each chunk is a Mat load at a
K offset (``[0, 32]`` of a, ``[32, 0]`` of b), moved to Left / Right.

Kernels:
  matmul_acc_64 -- 64x64 @ 64x64, K = 64 as two chunks of 32
  matmul_k_loop -- 64x256 @ 256x64, K = 256 as four chunks of 64: the
                   accumulator is carried through a ``pl.range`` loop

Run:  .venv/bin/python examples/intermediate/04_matmul_acc.py
Next: examples/intermediate/07_task_graph.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

K_CHUNK = 64
K_TOTAL = 256


@pl.jit
def matmul_acc_64(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a0_l1 = pl.load(a, [0, 0], [64, 32], target_memory=pl.Mem.Mat)
        tile_b0_l1 = pl.load(b, [0, 0], [32, 64], target_memory=pl.Mem.Mat)
        tile_a0_l0a = pl.move(tile_a0_l1, target_memory=pl.Mem.Left)
        tile_b0_l0b = pl.move(tile_b0_l1, target_memory=pl.Mem.Right)
        acc: pl.Tile[[64, 64], pl.FP32] = pl.matmul(tile_a0_l0a, tile_b0_l0b)

        tile_a1_l1 = pl.load(a, [0, 32], [64, 32], target_memory=pl.Mem.Mat)
        tile_b1_l1 = pl.load(b, [32, 0], [32, 64], target_memory=pl.Mem.Mat)
        tile_a1_l0a = pl.move(tile_a1_l1, target_memory=pl.Mem.Left)
        tile_b1_l0b = pl.move(tile_b1_l1, target_memory=pl.Mem.Right)
        acc = pl.matmul_acc(acc, tile_a1_l0a, tile_b1_l0b)

        pl.store(acc, [0, 0], c)
    return c


@pl.jit
def matmul_k_loop(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="k_loop"):
        a0 = pl.move(pl.load(a, [0, 0], [64, K_CHUNK], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
        b0 = pl.move(pl.load(b, [0, 0], [K_CHUNK, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
        acc = pl.matmul(a0, b0)
        for k in pl.range(1, K_TOTAL // K_CHUNK):
            k0 = k * K_CHUNK
            a_mat = pl.load(a, [0, k0], [64, K_CHUNK], target_memory=pl.Mem.Mat)
            b_mat = pl.load(b, [k0, 0], [K_CHUNK, 64], target_memory=pl.Mem.Mat)
            a_left = pl.move(a_mat, target_memory=pl.Mem.Left)
            b_right = pl.move(b_mat, target_memory=pl.Mem.Right)
            acc = pl.matmul_acc(acc, a_left, b_right)
        pl.store(acc, [0, 0], c)
    return c


def k_chunked_reference(a: torch.Tensor, b: torch.Tensor, chunk: int) -> torch.Tensor:
    """Sum of the per-chunk products, in the kernels' order."""
    acc = a[:, :chunk] @ b[:chunk, :]
    for k0 in range(chunk, a.shape[1], chunk):
        acc = acc + a[:, k0 : k0 + chunk] @ b[k0 : k0 + chunk, :]
    return acc


CASES = [
    Case(
        "matmul_acc_64",
        matmul_acc_64,
        lambda: (torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)),
        lambda a, b: {"c": k_chunked_reference(a, b, 32)},
        outputs=("c",),
        rtol=1e-3,
        atol=1e-3,
    ),
    Case(
        "matmul_k_loop",
        matmul_k_loop,
        lambda: (torch.randn(64, K_TOTAL), torch.randn(K_TOTAL, 64), torch.zeros(64, 64)),
        lambda a, b: {"c": k_chunked_reference(a, b, K_CHUNK)},
        outputs=("c",),
        rtol=1e-3,
        atol=1e-3,
    ),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
