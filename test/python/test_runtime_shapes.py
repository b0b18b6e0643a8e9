"""Run-time shapes in an Orchestration function (upstream's paged-attention models, issue 15).

``pl.create_tensor([q_tile, head_dim])`` / ``pl.slice(x, [q_tile, head_dim], [row, 0])`` with
``head_dim = pl.tensor.read(config, [3])``: the type's dimension is dynamic, the host allocates /
windows the run-time extent, and a kernel parameter of static shape gets the tensor through
``pl.tensor.refine_shape`` (the host checks the extent). ``pl.tensor.dim`` reads an extent; a module
level ``@pl.function`` called by its plain name joins the program; an integer flag passed to a BOOL
parameter is ``!= 0``.
"""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError
from pypto.runtime import RunConfig, run
from pypto.runtime.orchestration import OrchestrationError

SIM = RunConfig(platform="a2a3sim")


@pl.function(type=pl.FunctionType.InCore)
def double_rows(
    x: pl.Tensor[[16, 128], pl.FP32], flag: pl.Scalar[pl.BOOL], out: pl.Out[pl.Tensor[[16, 128], pl.FP32]]
) -> pl.Tensor[[16, 128], pl.FP32]:
    t = pl.load(x, [0, 0], [16, 128])
    if flag:
        y = pl.store(pl.mul(t, 2.0), [0, 0], out)
    else:
        y = pl.store(t, [0, 0], out)
    return y


@pl.program
class RuntimeShapes:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self,
        x: pl.Tensor[[64, 128], pl.FP32],
        out: pl.Out[pl.Tensor[[64, 128], pl.FP32]],
        config: pl.Tensor[[2], pl.INT64],
    ) -> pl.Tensor[[64, 128], pl.FP32]:
        cols = pl.tensor.read(config, [0])
        tiles = pl.tensor.dim(x, 0) // 16
        for i in pl.range(tiles):
            if i == 0:
                flag = pl.yield_(1)
            else:
                flag = pl.yield_(0)
            xi = pl.slice(x, [16, cols], [i * 16, 0])
            buf = pl.create_tensor([16, cols], dtype=pl.FP32)
            y = double_rows(xi, flag, buf)
            oi = pl.slice(out, [16, cols], [i * 16, 0])
            oi = double_rows(y, 1, oi)
        return out


def test_printed_program_keeps_the_runtime_extents() -> None:
    text = RuntimeShapes.as_python()
    assert "pl.Tensor[[16, -1], pl.FP32] = pl.tensor.create([16, " in text
    assert "pl.tensor.refine_shape(" in text and "pl.tensor.dim(x, 0)" in text
    assert pl.parse(text).as_python() == text  # the dump is a resume point


def test_runtime_extents_match_torch() -> None:
    torch.manual_seed(0)
    x, out = torch.randn(64, 128), torch.zeros(64, 128)
    run(RuntimeShapes, x, out, torch.tensor([128, 0]), config=SIM)
    want = x * 2.0
    want[:16] *= 2.0  # the first tile's flag is set
    torch.testing.assert_close(out, want)


@pl.program
class OneBuffer:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 128], pl.FP32], config: pl.Tensor[[1], pl.INT64]) -> pl.Tensor[[16, 128], pl.FP32]:
        buf = pl.create_tensor([16, pl.tensor.read(config, [0])], dtype=pl.FP32)
        y = double_rows(x, True, buf)
        return y


def test_an_extent_the_kernel_does_not_take_is_a_located_error() -> None:
    with pytest.raises(OrchestrationError, match=r"test_runtime_shapes.py:\d+.*has shape \[16, 128\].*\[16, 64\]"):
        run(OneBuffer, torch.randn(16, 128), torch.tensor([64]), config=SIM)
    with pytest.raises(OrchestrationError, match=r"window \[16, 64\] at \[0, 0\] .* is not contiguous"):
        run(RuntimeShapes, torch.randn(64, 128), torch.zeros(64, 128), torch.tensor([64, 0]), config=SIM)


def test_a_runtime_extent_inside_a_kernel_is_a_located_error() -> None:
    with pytest.raises(ParserTypeError, match="Orchestration function only") as e:

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(x: pl.Tensor[[16, 128], pl.FP32], n: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 128], pl.FP32]:
                t = pl.create_tensor([16, n], dtype=pl.FP32)
                return t

    assert "test_runtime_shapes.py" in str(e.value)


def test_tensor_dim_of_a_bad_axis_is_a_located_error() -> None:
    with pytest.raises(ParserTypeError, match="axis 2 is out of range"):

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.Orchestration)
            def main(self, x: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
                n = pl.tensor.dim(x, 2)
                buf = pl.create_tensor([16, n], dtype=pl.FP32)
                return buf


def test_a_hardware_platform_runs_simulated_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    x, out = torch.randn(64, 128), torch.zeros(64, 128)
    with pytest.raises(RuntimeError, match="PYPTO_SIMULATE_NPU=1"):
        run(RuntimeShapes, x, out, torch.tensor([128, 0]), config=RunConfig(platform="a2a3"))
    monkeypatch.setenv("PYPTO_SIMULATE_NPU", "1")
    run(RuntimeShapes, x, out, torch.tensor([128, 0]), config=RunConfig(platform="a2a3"))
    torch.testing.assert_close(out[16:], x[16:] * 2.0)
