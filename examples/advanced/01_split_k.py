"""Split-K matrix multiplication: the K reduction spread over parallel cores.

With small M and N there are few output tiles, so one tile per core leaves
cores idle. Split-K gives each core a K slice: ``pl.parallel`` over the
slices, one ``pl.at`` scope per slice computing a partial product with tensor
ops (``a[:, k0 : k0 + KS]`` slices, ``pl.matmul``), and ``pl.assemble(...,
atomic=pl.AtomicType.Add)`` adding it into the output, which a first scope
zero-fills with ``pl.full``.

Kernel:
  matmul_split_k -- [64, 512] @ [512, 64], K split across 4 cores

Run:  .venv/bin/python examples/advanced/01_split_k.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

import pypto.language as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from _harness import Case, CaseResult, run_cases  # noqa: E402

M = 64
N = 64
K = 512
SPLIT = 4  # cores the K reduction is spread across
KS = K // SPLIT  # per-core K slice


@pl.jit
def matmul_split_k(a: pl.Tensor, b: pl.Tensor, c: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="zero_init"):
        c = pl.assemble(c, pl.full([M, N], dtype=pl.FP32, value=0.0), [0, 0])
    for ks in pl.parallel(0, SPLIT):
        with pl.at(level=pl.Level.CORE_GROUP, name_hint="split_k"):
            k0 = ks * KS
            a_k = a[:, k0 : k0 + KS]
            b_k = b[k0 : k0 + KS, :]
            partial = pl.matmul(a_k, b_k, out_dtype=pl.FP32)
            c = pl.assemble(c, partial, [0, 0], atomic=pl.AtomicType.Add)
    return c


def make_inputs() -> tuple[torch.Tensor, ...]:
    return torch.randn(M, K), torch.randn(K, N), torch.zeros(M, N)


def reference(a: torch.Tensor, b: torch.Tensor) -> dict[str, torch.Tensor]:
    """Zero, then add each core's partial product over its K slice."""
    c = torch.zeros(M, N)
    for ks in range(SPLIT):
        k0 = ks * KS
        c += a[:, k0 : k0 + KS] @ b[k0 : k0 + KS, :]
    return {"c": c}


CASES = [Case("matmul_split_k", matmul_split_k, make_inputs, reference, outputs=("c",), rtol=1e-3, atol=1e-3)]


def main() -> list[CaseResult]:
    return run_cases(CASES)


if __name__ == "__main__":
    main()
