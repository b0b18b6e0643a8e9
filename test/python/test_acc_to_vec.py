"""A matmul result (Acc tile) feeding a vector op in one ``pl.at`` scope (issue 15): moved to Vec as
upstream does, split into an AIC + AIV pair by ExpandMixedKernel, numerics against torch."""

from __future__ import annotations

import torch

import pypto.language as pl


@pl.jit
def matmul_bias(a: pl.Tensor, b: pl.Tensor, bias: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP, name_hint="mm_bias"):
        acc = pl.matmul(a, b, out_dtype=pl.FP32)  # cube
        out[:] = pl.add(acc, bias)  # vector
    return out


def test_acc_tile_feeds_a_vector_op() -> None:
    torch.manual_seed(0)
    a = torch.randn(64, 64, dtype=torch.float16)
    b = torch.randn(64, 64, dtype=torch.float16)
    bias = torch.randn(64, 64)
    out = torch.zeros(64, 64)
    compiled = matmul_bias.compile(a, b, bias, out)
    kinds = {name: str(f.attributes.get("pl.func_type")) for name, f in compiled.lowered.functions.items()}
    assert any("AIC" in k for k in kinds.values()) and any("AIV" in k for k in kinds.values())
    compiled(a, b, bias, out)
    torch.testing.assert_close(out, a.float() @ b.float() + bias, rtol=1e-2, atol=1e-2)
