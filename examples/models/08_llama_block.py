"""The MLP half of a LLaMA decoder layer, tiled over rows: RMSNorm -> SwiGLU MLP -> residual add.

    h   = rms_norm(x) * gamma
    out = x + (silu(h @ w_gate) * (h @ w_up)) @ w_down

The tokens are split into row blocks of ``BLOCK`` rows (``pl.parallel``); each stage of a block is a
``pl.at`` scope, so a block is six tasks: the norm, the residual add and the SwiGLU activation on
vector (AIV) cores, the three projections on cube (AIC) cores. A block's tasks form a diamond (the
gate and up projections both read the norm's output; the activation reads both), and the residual
add reads the block's input again. The intermediates are ``pl.create_tensor`` DDR tensors.

Kernel:
  llama_mlp_block -- x [TOKENS, HIDDEN], gamma [1, HIDDEN], w_gate / w_up [HIDDEN, FFN], w_down [FFN, HIDDEN]

Run:  .venv/bin/python examples/models/08_llama_block.py
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
EPS = 1e-6


@pl.jit
def llama_mlp_block(
    x: pl.Tensor, gamma: pl.Tensor, w_gate: pl.Tensor, w_up: pl.Tensor, w_down: pl.Tensor, out: pl.Out[pl.Tensor]
):
    normed = pl.create_tensor([TOKENS, HIDDEN], dtype=pl.FP32)
    gate = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    up = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    act = pl.create_tensor([TOKENS, FFN], dtype=pl.FP32)
    mlp = pl.create_tensor([TOKENS, HIDDEN], dtype=pl.FP32)
    for b in pl.parallel(0, BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="rms_norm"):
            row = b * BLOCK
            t = pl.load(x, [row, 0], [BLOCK, HIDDEN])
            g = pl.load(gamma, [0, 0], [1, HIDDEN])
            scratch = pl.create_tile([BLOCK, HIDDEN], dtype=pl.FP32, target_memory=pl.Mem.Vec)
            sum_sq: pl.Tile[[BLOCK, 1], pl.FP32] = pl.row_sum(pl.mul(t, t), scratch)
            mean_t: pl.Tile[[1, BLOCK], pl.FP32] = pl.reshape(sum_sq, [1, BLOCK])
            rms_t = pl.sqrt(pl.add(pl.mul(mean_t, 1.0 / HIDDEN), EPS))
            rms: pl.Tile[[BLOCK, 1], pl.FP32] = pl.reshape(rms_t, [BLOCK, 1])
            pl.store(pl.col_expand_mul(pl.row_expand_div(t, rms), g), [row, 0], normed)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="gate_proj"):
            row = b * BLOCK
            hg = pl.move(
                pl.load(normed, [row, 0], [BLOCK, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left
            )
            wg = pl.move(pl.load(w_gate, [0, 0], [HIDDEN, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(hg, wg), [row, 0], gate)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="up_proj"):
            row = b * BLOCK
            hu = pl.move(
                pl.load(normed, [row, 0], [BLOCK, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left
            )
            wu = pl.move(pl.load(w_up, [0, 0], [HIDDEN, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(hu, wu), [row, 0], up)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="swiglu"):
            row = b * BLOCK
            tg = pl.load(gate, [row, 0], [BLOCK, FFN])
            tu = pl.load(up, [row, 0], [BLOCK, FFN])
            sig = pl.recip(pl.add(pl.exp(pl.mul(tg, -1.0)), 1.0))
            pl.store(pl.mul(pl.mul(tg, sig), tu), [row, 0], act)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="down_proj"):
            row = b * BLOCK
            ha = pl.move(pl.load(act, [row, 0], [BLOCK, FFN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            wd = pl.move(pl.load(w_down, [0, 0], [FFN, HIDDEN], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(ha, wd), [row, 0], mlp)
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="residual"):
            row = b * BLOCK
            pl.store(
                pl.add(pl.load(x, [row, 0], [BLOCK, HIDDEN]), pl.load(mlp, [row, 0], [BLOCK, HIDDEN])), [row, 0], out
            )
    return out


def _weight(rows: int, cols: int) -> torch.Tensor:
    """A projection weight scaled like a trained one (unit-variance outputs)."""
    return torch.randn(rows, cols) / rows**0.5


def make_inputs() -> tuple[torch.Tensor, ...]:
    x = torch.randn(TOKENS, HIDDEN)
    gamma = 1.0 + 0.1 * torch.randn(1, HIDDEN)
    return x, gamma, _weight(HIDDEN, FFN), _weight(HIDDEN, FFN), _weight(FFN, HIDDEN), torch.zeros(TOKENS, HIDDEN)


def reference(
    x: torch.Tensor, gamma: torch.Tensor, w_gate: torch.Tensor, w_up: torch.Tensor, w_down: torch.Tensor
) -> dict[str, torch.Tensor]:
    """Step by step, as the kernels compute it."""
    h = x / torch.sqrt((x * x).sum(dim=1, keepdim=True) / HIDDEN + EPS) * gamma
    g = h @ w_gate
    act = g / (1.0 + torch.exp(-g)) * (h @ w_up)
    return {"out": x + act @ w_down}


CASES = [Case("llama_mlp_block", llama_mlp_block, make_inputs, reference, ("out",), rtol=1e-3, atol=1e-3)]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
