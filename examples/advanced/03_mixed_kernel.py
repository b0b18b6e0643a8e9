"""Mixed kernels: cube and vector work in one scope, split into an AIC and an AIV kernel joined by a pipe.

A ``pl.at(CORE_GROUP)`` scope that uses both the cube (matmul) and the
vector unit is a *mixed* kernel. ExpandMixedKernel splits it into an AIC
function, an AIV function and a Group function calling both; each tile that
crosses between them becomes ``pl.tile.tpush_to_aiv`` / ``tpop_from_aic``
(cube -> vector) or ``tpush_to_aic`` / ``tpop_from_aiv`` (vector -> cube).
On the simulated chip the Group task occupies one core cluster (an AIC and an
AIV core); the popping side waits for the push (on a2a3 the tile goes
through GM: the push is costed as a store, the pop as a load).

Kernels:
  matmul_bias_epilogue -- y = relu(a @ b + bias)   (cube -> vector)
  prescaled_matmul     -- c = (2 * a) @ b          (vector -> cube)

Run:  .venv/bin/python examples/advanced/03_mixed_kernel.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402


@pl.jit
def matmul_bias_epilogue(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, y: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="matmul_epilogue"):
        ta = pl.load(a, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(ta, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        c = pl.move(acc, target_memory=pl.Mem.Vec)  # cube -> vector: the pipe
        tbias = pl.load(bias, [0, 0], [64, 64])
        pl.store(pl.relu(pl.add(c, tbias)), [0, 0], y)
    return y


@pl.jit
def prescaled_matmul(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="prescale_matmul"):
        ta = pl.mul(pl.load(a, [0, 0], [64, 64]), 2.0)
        tm = pl.move(ta, target_memory=pl.Mem.Mat)  # vector -> cube: the pipe
        tb = pl.load(b, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
        acc = pl.matmul(pl.move(tm, target_memory=pl.Mem.Left), pl.move(tb, target_memory=pl.Mem.Right))
        pl.store(acc, [0, 0], c)
    return c


def make_epilogue_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(64, 64), torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)


def make_prescaled_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(64, 64), torch.randn(64, 64), torch.zeros(64, 64)


def epilogue_reference(a: torch.Tensor, b: torch.Tensor, bias: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"y": torch.relu(a @ b + bias)}


def prescaled_reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    return {"c": (2 * a) @ b}


CASES = [
    Case(
        "matmul_bias_epilogue",
        matmul_bias_epilogue,
        make_epilogue_inputs,
        epilogue_reference,
        ("y",),
        rtol=1e-3,
        atol=1e-3,
    ),
    Case("prescaled_matmul", prescaled_matmul, make_prescaled_inputs, prescaled_reference, ("c",), rtol=1e-3, atol=1e-3),
]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
