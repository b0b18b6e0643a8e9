"""A task graph of two named scopes: stage 2 reads what stage 1 wrote.

Each ``pl.at(level=pl.Level.CORE_GROUP, name_hint=...)`` becomes its own InCore
function; the Orchestration function calls them in order. Stage 1 writes the
Out buffer ``scratch`` with tensor ops (``scratch[:] = pl.add(x, x)``); stage 2
reads it, so the runtime derives a read-after-write edge between the tasks.
Nothing is declared: the edge falls out of the buffer directions.

Kernel:
  inferred_edge -- scratch = x + x; out = scratch + scratch   (128x128)

Run:  .venv/bin/python examples/intermediate/07_task_graph.py
Next: examples/advanced/07_double_buffer.py
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


@pl.jit
def inferred_edge(x: pl.Tensor, scratch: pl.Out[pl.Tensor], out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage1"):
        scratch[:] = pl.add(x, x)
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="stage2"):
        out[:] = pl.add(scratch, scratch)
    return scratch, out


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS), torch.zeros(ROWS, COLS)


def reference(x: torch.Tensor) -> dict[str, torch.Tensor]:
    scratch = x + x
    return {"scratch": scratch, "out": scratch + scratch}


CASES = [Case("inferred_edge", inferred_edge, make_inputs, reference, outputs=("scratch", "out"))]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
