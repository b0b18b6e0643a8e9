"""Row-wise softmax: out[i] = exp(x[i] - max(x[i])) / sum(exp(x[i] - max(x[i]))).

``pl.create_tile`` makes the scratch tile that the tile reductions
``pl.row_max`` / ``pl.row_sum`` need; ``pl.row_expand_sub`` / ``pl.row_expand_div``
broadcast a per-row [M, 1] value across the row.

Kernels:
  tile_softmax -- one 64x64 tile
  softmax_rows -- a 64x128 tensor in four 16-row chunks (``pl.range``)

Run:  .venv/bin/python examples/intermediate/02_softmax.py
Next: examples/intermediate/03_normalization.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402


@pl.jit
def tile_softmax(a: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [64, 64])
        max_tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        row_max: pl.Tile[[64, 1], pl.FP32] = pl.row_max(tile_a, max_tmp)
        shifted = pl.row_expand_sub(tile_a, row_max)
        exp_shifted = pl.exp(shifted)
        sum_tmp = pl.create_tile([64, 64], dtype=pl.FP32, target_memory=pl.Mem.Vec)
        row_sum: pl.Tile[[64, 1], pl.FP32] = pl.row_sum(exp_shifted, sum_tmp)
        result = pl.row_expand_div(exp_shifted, row_sum)
        pl.store(result, [0, 0], output)
    return output


@pl.jit
def softmax_rows(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        for i in pl.range(4):
            t = pl.load(x, [i * 16, 0], [16, 128])
            tmp = pl.create_tile([16, 128], dtype=pl.FP32)
            mx = pl.row_max(t, tmp)
            e = pl.exp(pl.row_expand_sub(t, mx))
            s = pl.row_sum(e, tmp)
            pl.store(pl.row_expand_div(e, s), [i * 16, 0], out)
    return out


def softmax_reference(x: torch.Tensor) -> torch.Tensor:
    """The kernels' algorithm, step by step."""
    row_max = x.amax(dim=-1, keepdim=True)
    exp_shifted = torch.exp(x - row_max)
    row_sum = exp_shifted.sum(dim=-1, keepdim=True)
    return exp_shifted / row_sum


CASES = [
    Case(
        "tile_softmax",
        tile_softmax,
        lambda: (torch.randn(64, 64), torch.zeros(64, 64)),
        lambda a: {"output": softmax_reference(a)},
        outputs=("output",),
    ),
    Case(
        "softmax_rows",
        softmax_rows,
        lambda: (torch.randn(64, 128), torch.zeros(64, 128)),
        lambda x: {"out": softmax_reference(x)},
        outputs=("out",),
    ),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
