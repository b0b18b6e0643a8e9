"""A ``@pl.program`` HOST orchestrator dispatches ``self.<entry>(..., device=r)``: each dispatched program
keeps only the functions its entry reaches, so another entry's kernel whose ``pl.dynamic`` shape no
dispatch binds (upstream's ``test_l3_host_tensor_allgather``: ``publish_orch`` beside
``consume_step(data: [NR, SIZE])``) does not reach codegen with a dynamic shape."""

from __future__ import annotations

import torch

import pypto.language as pl
from pypto.driver.host_trace import _Entry

NR = pl.dynamic("NR")


@pl.program
class TwoEntries:
    @pl.function(type=pl.FunctionType.InCore)
    def publish_k(self, x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        return pl.store(pl.load(x, [0, 0], [1, 64]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def publish(self, x: pl.Tensor[[1, 64], pl.FP32], y: pl.Out[pl.Tensor[[1, 64], pl.FP32]]) -> pl.Tensor[[1, 64], pl.FP32]:
        return self.publish_k(x, y)

    @pl.function(type=pl.FunctionType.InCore)
    def consume_k(self, d: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]) -> pl.Tensor[[NR, 64], pl.FP32]:
        return pl.store(pl.load(d, [0, 0], [1, 64]), [0, 0], y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def consume(self, d: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]) -> pl.Tensor[[NR, 64], pl.FP32]:
        return self.consume_k(d, y)


def test_a_static_entry_keeps_only_its_own_kernels() -> None:
    prog = _Entry(TwoEntries, "publish").specialize(torch.zeros(1, 64), torch.zeros(1, 64))
    assert sorted(prog.func_ops) == ["publish", "publish_k"]


def test_a_dynamic_entry_binds_and_keeps_only_its_own_kernels() -> None:
    prog = _Entry(TwoEntries, "consume").specialize(torch.zeros(2, 64), torch.zeros(2, 64))
    assert sorted(prog.func_ops) == ["consume", "consume_k"]
    assert "d: pl.Tensor[[2, 64], pl.FP32]" in prog.as_python()


def test_the_static_entry_compiles(tmp_path: object) -> None:
    from pypto import ir

    prog = _Entry(TwoEntries, "publish").specialize(torch.zeros(1, 64), torch.zeros(1, 64))
    x, y = torch.randn(1, 64), torch.zeros(1, 64)
    ir.compile(prog, output_dir=str(tmp_path), platform="a2a3sim")(x, y)
    assert torch.equal(y, x)
