"""A transformer feed-forward block, tiled over rows: a task graph of cube and vector kernels.

An FFN maps each token's hidden vector through an up projection, an activation and a down
projection. Here the tokens are split into row blocks of ``BLOCK`` rows; ``pl.parallel`` walks the
blocks and each stage of a block is its own ``pl.at`` scope, so each becomes a kernel and each call
a task: the projections are cube (AIC) kernels (Mat loads, moves to Left/Right, matmul, store from
Acc), the activation a vector (AIV) kernel. The intermediates live in DDR tensors made with
``pl.create_tensor``; the runtime derives the edges between a block's stages from the buffers they
read and write.

Kernels:
  ffn_gelu   -- out = gelu(x @ w_up) @ w_down                   (3 tasks per row block)
  ffn_swiglu -- out = (silu(x @ w_gate) * (x @ w_up)) @ w_down  (4 tasks per row block)

with x [TOKENS, HIDDEN], w_up / w_gate [HIDDEN, FFN], w_down [FFN, HIDDEN]; gelu is the sigmoid
form x * sigmoid(1.702 x). This is the model ``benchmarks/dfx_overhead.py`` times by default.

Run:  .venv/bin/python examples/models/01_ffn.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

TOKENS = 256
HIDDEN = 64
FFN = 128
BLOCK = 64  # rows of one task
BLOCKS = TOKENS // BLOCK


@pl.jit
def ffn_gelu(x: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor, out: pl.Out[pl.Tensor]):
    up = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    act = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    for b in pl.parallel(0, BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="up_proj"):
            row = b * BLOCK
            xa = pl.move(pl.load(x, [row, 0], [BLOCK, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            wu = pl.move(pl.load(w_up, [0, 0], [HIDDEN, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(xa, wu), [row, 0], up)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gelu"):
            row = b * BLOCK
            h = pl.load(up, [row, 0], [BLOCK, FFN])
            denom = pl.add(pl.exp(pl.mul(h, -1.702)), 1.0)
            pl.store(pl.mul(h, pl.recip(denom)), [row, 0], act)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj"):
            row = b * BLOCK
            ha = pl.move(pl.load(act, [row, 0], [BLOCK, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            wd = pl.move(pl.load(w_down, [0, 0], [FFN, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(ha, wd), [row, 0], out)
    return out


@pl.jit
def ffn_swiglu(x: pl.Tensor, w_gate: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor, out: pl.Out[pl.Tensor]):
    gate = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    up = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    act = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    for b in pl.parallel(0, BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate_proj"):
            row = b * BLOCK
            xg = pl.move(pl.load(x, [row, 0], [BLOCK, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            wg = pl.move(pl.load(w_gate, [0, 0], [HIDDEN, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(xg, wg), [row, 0], gate)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="up_proj"):
            row = b * BLOCK
            xu = pl.move(pl.load(x, [row, 0], [BLOCK, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            wu = pl.move(pl.load(w_up, [0, 0], [HIDDEN, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(xu, wu), [row, 0], up)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="swiglu"):
            row = b * BLOCK
            g = pl.load(gate, [row, 0], [BLOCK, FFN])
            u = pl.load(up, [row, 0], [BLOCK, FFN])
            sig = pl.recip(pl.add(pl.exp(pl.mul(g, -1.0)), 1.0))
            pl.store(pl.mul(pl.mul(g, sig), u), [row, 0], act)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj"):
            row = b * BLOCK
            ha = pl.move(pl.load(act, [row, 0], [BLOCK, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            wd = pl.move(pl.load(w_down, [0, 0], [FFN, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(ha, wd), [row, 0], out)
    return out


def _weight(rows: int, cols: int) -> torch.Tensor:
    """A projection weight scaled like a trained one (unit-variance outputs)."""
    return torch.randn(rows, cols) / rows**0.5


def gelu_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(TOKENS, HIDDEN), _weight(HIDDEN, FFN), _weight(FFN, HIDDEN), torch.zeros(TOKENS, HIDDEN)


def swiglu_inputs() -> tuple[torch.Tensor, ...]:
    x, w_up, w_down, out = gelu_inputs()
    return x, _weight(HIDDEN, FFN), w_up, w_down, out


def gelu_reference(x: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor) -> dict[str, torch.Tensor]:
    h = x @ w_up
    return {"out": (h / (1.0 + torch.exp(-1.702 * h))) @ w_down}


def swiglu_reference(
    x: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor
) -> dict[str, torch.Tensor]:
    g = x @ w_gate
    return {"out": (g / (1.0 + torch.exp(-g)) * (x @ w_up)) @ w_down}


CASES = [
    Case("ffn_gelu", ffn_gelu, gelu_inputs, gelu_reference, ("out",), rtol=1e-3, atol=1e-3),
    Case("ffn_swiglu", ffn_swiglu, swiglu_inputs, swiglu_reference, ("out",), rtol=1e-3, atol=1e-3),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
