"""Single-head attention, one kernel per block of queries: ``q @ k.T`` on the cube, the softmax on the
vector core, ``p @ v`` on the cube.

``pl.parallel`` walks the blocks of ``BLOCK`` query rows; each block is one ``pl.at`` scope that uses both
units, and its values cross both ways: the scores go cube -> vector, the probabilities vector -> cube.
ExpandMixedKernel splits the scope into an AIC and an AIV kernel joined by a pipe each way: one Group task
on a cluster, whose two parts the device model runs interleaved (docs/runtime.md, "Mixed kernels").

Kernels:
  attention       -- o = softmax(q @ k.T / sqrt(D)) @ v on tensors: ``pl.matmul(qb, k, b_trans=True)``
                     (k read through a transposed view of its Mat tile), then ``pl.matmul(p, v)``
  attention_tiles -- the same on tiles: Mat loads, ``pl.tile.transpose_view(k)``, the moves to Left /
                     Right and Vec written out

with q [SEQ_Q, D], k and v [SEQ_K, D] and o [SEQ_Q, D], all FP32 (torch's
``scaled_dot_product_attention``; an FP16 model casts ``p`` with ``pl.cast(p, pl.FP16)`` before ``p @ v``).

Run:  .venv/bin/python examples/models/03_attention.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

SEQ_Q = 128
SEQ_K = 128
D = 64
BLOCK = 64  # query rows of one task
BLOCKS = SEQ_Q // BLOCK
SCALE = 0.125  # 1 / sqrt(D)


@pl.jit
def attention(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    for b in pl.parallel(0, BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="attn"):
            row = b * BLOCK
            qb = pl.slice(q, [BLOCK, D], [row, 0])
            scores = pl.mul(pl.matmul(qb, k, b_trans=True), SCALE)
            e = pl.exp(pl.row_expand_sub(scores, pl.row_max(scores)))
            p = pl.row_expand_div(e, pl.row_sum(e))
            o = pl.assemble(o, pl.matmul(p, v), [row, 0])
    return o


@pl.jit
def attention_tiles(q: pl.Tensor, k: pl.Tensor, v: pl.Tensor, o: pl.Out[pl.Tensor]):
    for b in pl.parallel(0, BLOCKS):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="attn_tiles"):
            row = b * BLOCK
            tq = pl.move(pl.load(q, [row, 0], [BLOCK, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
            tk = pl.load(k, [0, 0], [SEQ_K, D], target_memory=pl.Mem.Mat)
            kt = pl.move(pl.tile.transpose_view(tk), target_memory=pl.Mem.Right)
            scores = pl.mul(pl.move(pl.matmul(tq, kt), target_memory=pl.Mem.Vec), SCALE)  # cube -> vector
            tmp = pl.create_tile([BLOCK, SEQ_K], dtype=pl.FP32)
            e = pl.exp(pl.row_expand_sub(scores, pl.row_max(scores, tmp)))
            p = pl.row_expand_div(e, pl.row_sum(e, tmp))
            pa = pl.move(pl.move(p, target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)  # vector -> cube
            tv = pl.move(pl.load(v, [0, 0], [SEQ_K, D], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
            pl.store(pl.matmul(pa, tv), [row, 0], o)
    return o


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(SEQ_Q, D), torch.randn(SEQ_K, D), torch.randn(SEQ_K, D), torch.zeros(SEQ_Q, D)


def reference(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor) -> dict[str, torch.Tensor]:
    """The kernels' steps: scores, softmax over each row, the weighted sum of v."""
    p = torch.softmax(q @ k.T * SCALE, dim=-1)
    return {"o": p @ v}


CASES = [
    Case("attention", attention, make_inputs, reference, ("o",), rtol=1e-3, atol=1e-3),
    Case("attention_tiles", attention_tiles, make_inputs, reference, ("o",), rtol=1e-3, atol=1e-3),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
