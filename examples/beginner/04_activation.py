"""Activations built from vector primitives: relu, exp, recip and scalar
add/mul chains.

Kernels:
  fused_add_relu -- relu(a + b)                          (128x128)
  silu           -- x * sigmoid(x) = x / (1 + exp(-x))   (32x128)
  gelu           -- x * sigmoid(1.702 * x)               (32x128, fast approximation)
  swiglu         -- gate * sigmoid(gate) * up            (32x128)
  geglu          -- gate * sigmoid(1.702 * gate) * up    (32x128)

sigmoid(v) is spelled ``pl.recip(pl.add(pl.exp(pl.mul(v, -1.0)), 1.0))``: muls,
exp, adds, recip.

Run:  .venv/bin/python examples/beginner/04_activation.py
Next: examples/beginner/05_matmul.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

ROWS = 32
COLS = 128


@pl.jit
def fused_add_relu(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_a = pl.load(a, [0, 0], [128, 128])
        tile_b = pl.load(b, [0, 0], [128, 128])
        tile_sum = pl.add(tile_a, tile_b)
        tile_c = pl.relu(tile_sum)
        pl.store(tile_c, [0, 0], c)
    return c


@pl.jit
def silu(x: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [ROWS, COLS])
        x_neg = pl.mul(tile_x, -1.0)
        exp_neg = pl.exp(x_neg)
        denom = pl.add(exp_neg, 1.0)
        sigmoid = pl.recip(denom)
        result = pl.mul(tile_x, sigmoid)
        pl.store(result, [0, 0], output)
    return output


@pl.jit
def gelu(x: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_x = pl.load(x, [0, 0], [ROWS, COLS])
        x_scaled = pl.mul(tile_x, 1.702)
        x_neg = pl.mul(x_scaled, -1.0)
        exp_neg = pl.exp(x_neg)
        denom = pl.add(exp_neg, 1.0)
        sigmoid = pl.recip(denom)
        result = pl.mul(tile_x, sigmoid)
        pl.store(result, [0, 0], output)
    return output


@pl.jit
def swiglu(gate: pl.Tensor, up: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_gate = pl.load(gate, [0, 0], [ROWS, COLS])
        tile_up = pl.load(up, [0, 0], [ROWS, COLS])
        gate_neg = pl.mul(tile_gate, -1.0)
        exp_neg = pl.exp(gate_neg)
        denom = pl.add(exp_neg, 1.0)
        sigmoid = pl.recip(denom)
        swish = pl.mul(tile_gate, sigmoid)
        result = pl.mul(swish, tile_up)
        pl.store(result, [0, 0], output)
    return output


@pl.jit
def geglu(gate: pl.Tensor, up: pl.Tensor, output: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        tile_gate = pl.load(gate, [0, 0], [ROWS, COLS])
        tile_up = pl.load(up, [0, 0], [ROWS, COLS])
        gate_scaled = pl.mul(tile_gate, 1.702)
        gate_neg = pl.mul(gate_scaled, -1.0)
        exp_neg = pl.exp(gate_neg)
        denom = pl.add(exp_neg, 1.0)
        sigmoid = pl.recip(denom)
        gelu_gate = pl.mul(tile_gate, sigmoid)
        result = pl.mul(gelu_gate, tile_up)
        pl.store(result, [0, 0], output)
    return output


def _sigmoid(v: torch.Tensor) -> torch.Tensor:
    """The kernels' sigmoid, step by step: recip(exp(v * -1) + 1)."""
    return torch.reciprocal(torch.exp(v * -1.0) + 1.0)


def relu_reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"c": torch.clamp(a + b, min=0.0)}


def silu_reference(x: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"output": x * _sigmoid(x)}


def gelu_reference(x: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"output": x * _sigmoid(x * 1.702)}


def swiglu_reference(gate: torch.Tensor, up: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"output": gate * _sigmoid(gate) * up}


def geglu_reference(gate: torch.Tensor, up: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"output": gate * _sigmoid(gate * 1.702) * up}


def one_input() -> tuple[torch.Tensor, ...]:
    return torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)


def two_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(ROWS, COLS), torch.randn(ROWS, COLS), torch.zeros(ROWS, COLS)


CASES = [
    Case(
        "fused_add_relu",
        fused_add_relu,
        lambda: (torch.randn(128, 128), torch.randn(128, 128), torch.zeros(128, 128)),
        relu_reference,
        outputs=("c",),
    ),
    Case("silu", silu, one_input, silu_reference, outputs=("output",)),
    Case("gelu", gelu, one_input, gelu_reference, outputs=("output",)),
    Case("swiglu", swiglu, two_inputs, swiglu_reference, outputs=("output",)),
    Case("geglu", geglu, two_inputs, geglu_reference, outputs=("output",)),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
