"""Fused linear layer: a cube kernel (matmul) feeding a vector kernel (bias, relu).

The kernels are ``@pl.jit.incore`` functions (InCore: no ``pl.at`` needed
inside); the ``@pl.jit`` entry is the Orchestration function: it creates the
intermediate DDR buffer with ``pl.create_tensor`` and calls the kernels.

Kernels:
  fused_matmul_bias -- c = a @ b + bias          (64x64)
  fused_linear_relu -- y = relu(x @ w + bias)    (64x64)

Run:  .venv/bin/python examples/intermediate/01_fused_linear.py
Next: examples/intermediate/02_softmax.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402


@pl.jit.incore
def matmul_kernel_64x64(a: pl.Tensor, b: pl.Tensor, output: pl.Out[pl.Tensor]):
    """Cube: output = a @ b."""
    tile_a_l1 = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    tile_b_l1 = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    tile_a_l0a = pl.move(tile_a_l1, target_memory=pl.Mem.Left)
    tile_b_l0b = pl.move(tile_b_l1, target_memory=pl.Mem.Right)
    tile_c_l0c = pl.matmul(tile_a_l0a, tile_b_l0b)
    pl.store(tile_c_l0c, [0, 0], output)
    return output


@pl.jit.incore
def add_bias_kernel_64x64(x: pl.Tensor, bias: pl.Tensor, output: pl.Out[pl.Tensor]):
    """Vector: output = x + bias."""
    tile_x = pl.load(x, [0, 0], [64, 64])
    tile_bias = pl.load(bias, [0, 0], [64, 64])
    tile_c = pl.add(tile_x, tile_bias)
    pl.store(tile_c, [0, 0], output)
    return output


@pl.jit.incore
def add_bias_relu_kernel_64x64(x: pl.Tensor, bias: pl.Tensor, output: pl.Out[pl.Tensor]):
    """Vector: output = relu(x + bias)."""
    tile_x = pl.load(x, [0, 0], [64, 64])
    tile_bias = pl.load(bias, [0, 0], [64, 64])
    tile_biased = pl.add(tile_x, tile_bias)
    tile_y = pl.relu(tile_biased)
    pl.store(tile_y, [0, 0], output)
    return output


@pl.jit
def fused_matmul_bias(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, c: pl.Out[pl.Tensor]):
    mm_out = pl.create_tensor([64, 64], dtype=pl.FP32)
    mm_out = matmul_kernel_64x64(a, b, mm_out)
    c = add_bias_kernel_64x64(mm_out, bias, c)
    return c


@pl.jit
def fused_linear_relu(x: pl.Tensor, w: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    mm_out = pl.create_tensor([64, 64], dtype=pl.FP32)
    mm_out = matmul_kernel_64x64(x, w, mm_out)
    y = add_bias_relu_kernel_64x64(mm_out, bias, y)
    return y


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)


def matmul_bias_reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> dict[str, torch.Tensor]:
    mm_out = a @ b
    return {"c": mm_out + bias}


def linear_relu_reference(x: torch.Tensor, w: torch.Tensor, bias: torch.Tensor) -> dict[str, torch.Tensor]:
    mm_out = x @ w
    return {"y": torch.clamp(mm_out + bias, min=0.0)}


CASES = [
    Case("fused_matmul_bias", fused_matmul_bias, make_inputs, matmul_bias_reference, ("c",), rtol=1e-3, atol=1e-3),
    Case("fused_linear_relu", fused_linear_relu, make_inputs, linear_relu_reference, ("y",), rtol=1e-3, atol=1e-3),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
