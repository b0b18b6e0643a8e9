"""Double buffering with ``pl.pipeline``: overlap the next tile's load with this
tile's compute.

A load / exp / store loop over 64-row tiles. ``pl.range`` runs it with one
buffer; ``pl.pipeline(n, stage=2)`` asks the compiler to replicate the body
twice per outer iteration with distinct buffers (LowerPipelineLoops), adding a
tail when the trip count is not a multiple of the stage count.

Kernels:
  single_buffer  -- the baseline loop, 8 tiles of 64x128
  pipelined      -- the same loop with ``pl.pipeline(8, stage=2)``
  pipelined_tail -- 5 tiles with ``stage=2``: two replicated iterations and a tail

Run:  .venv/bin/python examples/advanced/07_double_buffer.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

NT = 8  # tiles in the loop
NT_ODD = 5  # a trip count the stage count does not divide
TR = 64  # tile rows
TC = 128  # tile cols


@pl.jit
def single_buffer(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="single_loop"):
        for i in pl.range(NT):
            tile = pl.load(a, [i * TR, 0], [TR, TC])
            pl.store(pl.exp(tile), [i * TR, 0], out)
    return out


@pl.jit
def pipelined(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pipelined_loop"):
        for i in pl.pipeline(NT, stage=2):
            tile = pl.load(a, [i * TR, 0], [TR, TC])
            pl.store(pl.exp(tile), [i * TR, 0], out)
    return out


@pl.jit
def pipelined_tail(a: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="pipelined_tail_loop"):
        for i in pl.pipeline(NT_ODD, stage=2):
            tile = pl.load(a, [i * TR, 0], [TR, TC])
            pl.store(pl.exp(tile), [i * TR, 0], out)
    return out


def tiled_exp_reference(a: torch.Tensor) -> dict[str, torch.Tensor]:
    """exp of each 64-row tile, written back at its offset."""
    out = torch.empty_like(a)
    for r in range(0, a.shape[0], TR):
        out[r : r + TR] = torch.exp(a[r : r + TR])
    return {"out": out}


CASES = [
    Case(
        "single_buffer",
        single_buffer,
        lambda: (torch.randn(NT * TR, TC), torch.zeros(NT * TR, TC)),
        tiled_exp_reference,
        outputs=("out",),
        rtol=1e-4,
        atol=1e-4,
    ),
    Case(
        "pipelined",
        pipelined,
        lambda: (torch.randn(NT * TR, TC), torch.zeros(NT * TR, TC)),
        tiled_exp_reference,
        outputs=("out",),
        rtol=1e-4,
        atol=1e-4,
    ),
    Case(
        "pipelined_tail",
        pipelined_tail,
        lambda: (torch.randn(NT_ODD * TR, TC), torch.zeros(NT_ODD * TR, TC)),
        tiled_exp_reference,
        outputs=("out",),
        rtol=1e-4,
        atol=1e-4,
    ),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
