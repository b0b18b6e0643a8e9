"""Normalization layers on a 32x64 input: RMSNorm and LayerNorm.

``pl.row_sum`` reduces each row to a [32, 1] tile. Scalar ops on a [32, 1]
(column-major) tile are done on its [1, 32] row-major reshape: ``pl.reshape``
there and back. ``pl.row_expand_div`` / ``pl.row_expand_sub`` broadcast the
per-row values across a row, ``pl.col_expand_mul`` / ``pl.col_expand``
broadcast a [1, 64] row (gamma, beta) down the columns; ``pl.sqrt`` gives the
root.

Kernels:
  rms_norm   -- out = x / sqrt(mean(x^2) + eps) * gamma
  layer_norm -- out = (x - mean) / sqrt(var + eps) * gamma + beta

Run:  .venv/bin/python examples/intermediate/03_normalization.py
Next: examples/intermediate/04_matmul_acc.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

ROWS = 32
HIDDEN = 64
EPS = 1e-5
INV_HIDDEN = 1.0 / HIDDEN  # 0.015625


@pl.jit
def rms_norm(x: pl.Tensor, gamma: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [32, 64])
        tile_gamma = pl.load(gamma, [0, 0], [1, 64])
        squared = pl.mul(tile_x, tile_x)
        tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mean_sq: pl.Tile[[32, 1], pl.FP32] = pl.row_sum(squared, tmp)
        mean_sq_t: pl.Tile[[1, 32], pl.FP32] = pl.reshape(mean_sq, [1, 32])
        mean_sq_t = pl.mul(mean_sq_t, 0.015625)
        rms_t = pl.add(mean_sq_t, 1e-5)
        rms_t = pl.sqrt(rms_t)
        rms: pl.Tile[[32, 1], pl.FP32] = pl.reshape(rms_t, [32, 1])
        normalized = pl.row_expand_div(tile_x, rms)
        result = pl.col_expand_mul(normalized, tile_gamma)
        pl.store(result, [0, 0], output)
    return output


@pl.jit
def layer_norm(x: pl.Tensor, gamma: pl.Tensor, beta: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [32, 64])
        tile_gamma = pl.load(gamma, [0, 0], [1, 64])
        tile_beta = pl.load(beta, [0, 0], [1, 64])

        tmp = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        mean: pl.Tile[[32, 1], pl.FP32] = pl.row_sum(tile_x, tmp)
        mean_t: pl.Tile[[1, 32], pl.FP32] = pl.reshape(mean, [1, 32])
        mean_t = pl.mul(mean_t, 0.015625)
        mean = pl.reshape(mean_t, [32, 1])
        centered = pl.row_expand_sub(tile_x, mean)

        squared = pl.mul(centered, centered)
        tmp2 = pl.create_tile([32, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        var: pl.Tile[[32, 1], pl.FP32] = pl.row_sum(squared, tmp2)
        var_t: pl.Tile[[1, 32], pl.FP32] = pl.reshape(var, [1, 32])
        var_t = pl.mul(var_t, 0.015625)
        std_t = pl.sqrt(pl.add(var_t, 1e-5))
        std: pl.Tile[[32, 1], pl.FP32] = pl.reshape(std_t, [32, 1])

        normalized = pl.row_expand_div(centered, std)
        scaled = pl.col_expand_mul(normalized, tile_gamma)
        beta_full = pl.col_expand(scaled, tile_beta)
        result = pl.add(scaled, beta_full)
        pl.store(result, [0, 0], output)
    return output


def rms_norm_reference(x: torch.Tensor, gamma: torch.Tensor) -> dict[str, torch.Tensor]:
    mean_sq = (x * x).sum(dim=-1, keepdim=True) * INV_HIDDEN
    rms = torch.sqrt(mean_sq + EPS)
    return {"output": x / rms * gamma}


def layer_norm_reference(x: torch.Tensor, gamma: torch.Tensor, beta: torch.Tensor) -> dict[str, torch.Tensor]:
    mean = x.sum(dim=-1, keepdim=True) * INV_HIDDEN
    centered = x - mean
    var = (centered * centered).sum(dim=-1, keepdim=True) * INV_HIDDEN
    std = torch.sqrt(var + EPS)
    return {"output": centered / std * gamma + beta}


CASES = [
    Case(
        "rms_norm",
        rms_norm,
        lambda: (torch.randn(ROWS, HIDDEN), torch.randn(1, HIDDEN), torch.zeros(ROWS, HIDDEN)),
        rms_norm_reference,
        outputs=("output",),
    ),
    Case(
        "layer_norm",
        layer_norm,
        lambda: (torch.randn(ROWS, HIDDEN), torch.randn(1, HIDDEN), torch.randn(1, HIDDEN), torch.zeros(ROWS, HIDDEN)),
        layer_norm_reference,
        outputs=("output",),
    ),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
