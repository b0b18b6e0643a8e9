"""Column-wise tile concatenation: c[:, :16] = a, c[:, 16:] = b.

The result of ``pl.concat`` is annotated (``tile_out: pl.Tile[[32, 32], pl.FP32]``);
the front end checks the annotation against the inferred type.

Kernel:
  tile_concat_32x32 -- c[32, 32] = concat(a[32, 16], b[32, 16])

Run:  .venv/bin/python examples/beginner/06_concat.py
Next: examples/intermediate/01_fused_linear.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402


@pl.jit
def tile_concat_32x32(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [32, 16])
        tile_b = pl.load(b, [0, 0], [32, 16])
        tile_out: pl.Tile[[32, 32], pl.FP32] = pl.concat(tile_a, tile_b)
        pl.store(tile_out, [0, 0], c)
    return c


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(32, 16), torch.randn(32, 16), torch.zeros(32, 32)


def reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    c = torch.empty(32, 32)
    c[:, :16] = a
    c[:, 16:] = b
    return {"c": c}


CASES = [Case("tile_concat_32x32", tile_concat_32x32, make_inputs, reference, outputs=("c",))]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
