"""Scalar operands: ``pl.mul(t, 2.0)`` selects ``muls`` (a Python number as the
second operand picks the scalar form of add/sub/mul/div).

Kernels:
  fused_add_scale -- c = (a + b) * 2.0 on tiles (``pl.tile.muls``), 128x128
  tensor_scale    -- out = a * 2.0 - 1.0 with tensor ops (``pl.tensor.muls``/``subs``), 128x128

Run:  .venv/bin/python examples/beginner/03_scalar_ops.py
Next: examples/beginner/04_activation.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402


@pl.jit
def fused_add_scale(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [128, 128])
        tile_b = pl.load(b, [0, 0], [128, 128])
        tile_sum = pl.add(tile_a, tile_b)
        tile_c = pl.mul(tile_sum, 2.0)
        pl.store(tile_c, [0, 0], c)
    return c


@pl.jit
def tensor_scale(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out[:] = pl.sub(pl.mul(a, 2.0), 1.0)
    return out


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)


def reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"c": (a + b) * 2.0}


def tensor_scale_reference(a: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"out": a * 2.0 - 1.0}


CASES = [
    Case("fused_add_scale", fused_add_scale, make_inputs, reference, outputs=("c",)),
    Case(
        "tensor_scale",
        tensor_scale,
        lambda: (torch.randn(128, 128), torch.zeros(128, 128)),
        tensor_scale_reference,
        outputs=("out",),
    ),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
