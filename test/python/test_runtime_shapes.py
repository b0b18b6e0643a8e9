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
from pypto.errors import ArgumentTypeError, ParserTypeError, UnsupportedFeatureError
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


ROWS = pl.dynamic("ROWS")
COLS = pl.dynamic("COLS")


@pl.function(type=pl.FunctionType.InCore)
def scale_tile(
    x: pl.Tensor[[16, COLS], pl.FP32, pl.TensorView(valid_shape=[16, COLS], layout=pl.TensorLayout.ND)],
    out: pl.Out[pl.Tensor[[16, COLS], pl.FP32]],
) -> pl.Tensor[[16, COLS], pl.FP32]:
    out = pl.store(pl.mul(pl.load(x, [0, 0], [16, 128]), 3.0), [0, 0], out)
    return out


@pl.program
class Specialized:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, x: pl.Tensor[[ROWS, COLS], pl.FP32], out: pl.Out[pl.Tensor[[ROWS, COLS], pl.FP32]]
    ) -> pl.Tensor[[ROWS, COLS], pl.FP32]:
        cols = pl.tensor.dim(x, 1)
        for i in pl.range(pl.tensor.dim(x, 0) // 16):
            with pl.cluster():
                buf = pl.create_tensor([16, cols], dtype=pl.FP32)
                y = scale_tile(pl.slice(x, [16, cols], [i * 16, 0]), buf)
            oi = pl.slice(out, [16, cols], [i * 16, 0])
            oi = scale_tile(y, oi)
        return out


@pytest.mark.parametrize("rows", [16, 48])
def test_a_dynamic_entry_is_specialized_on_the_tensors_run_gets(rows: int) -> None:
    # pl.tensor.dim of the specialized (static) dimension folds, so the kernel's COLS binds to 128
    x, out = torch.randn(rows, 128), torch.zeros(rows, 128)
    run(Specialized, x, out, config=SIM)
    torch.testing.assert_close(out, x * 9.0)


def test_a_compile_only_run_takes_the_inputs_and_returns_the_output() -> None:
    call = run(Specialized, config=SIM)
    x = torch.randn(32, 128)
    with pytest.raises(ArgumentTypeError, match="no static shape"):
        call(x)  # the Out parameter of a dynamic entry has no shape to allocate
    out = call(x, torch.zeros(32, 128))
    torch.testing.assert_close(out, x * 9.0)
    assert call.last_run is not None and len(call.last_run.tasks) == 4
    static = run(RuntimeShapes, config=SIM)  # a static Out parameter: allocated and returned
    x = torch.randn(64, 128)
    got = static(x, torch.tensor([128, 0]))
    assert got.shape == (64, 128)
    torch.testing.assert_close(got[16:], x[16:] * 2.0)


def test_tensor_view_needs_a_layout() -> None:
    with pytest.raises(ValueError, match="layout= is required"):
        pl.TensorView(valid_shape=[16, 16])
    assert pl.ND is pl.TensorLayout.ND


def test_cluster_inside_a_kernel_is_a_located_error() -> None:
    with pytest.raises(UnsupportedFeatureError, match="pl.cluster groups kernel calls") as e:

        @pl.program
        class Bad:
            @pl.function(type=pl.FunctionType.InCore)
            def k(x: pl.Tensor[[16, 128], pl.FP32]) -> pl.Tensor[[16, 128], pl.FP32]:
                with pl.cluster():
                    y = pl.add(x, x)
                return y

    assert "test_runtime_shapes.py" in str(e.value)


@pl.function(type=pl.FunctionType.InCore)
def first_entries(
    table: pl.Tensor[[8], pl.INT32], n: pl.Scalar[pl.INDEX], out: pl.Out[pl.Tensor[[1, 8], pl.FP32]]
) -> pl.Tensor[[1, 8], pl.FP32]:
    t = pl.tile.full([1, 8], dtype=pl.FP32, value=0.0)
    for i in pl.range(n):
        t = pl.tile.adds(t, pl.cast(pl.read(table, i), pl.FP32))
    out = pl.store(t, [0, 0], out)
    return out


@pl.program
class Overrun:
    @pl.function(type=pl.FunctionType.Orchestration)
    def main(
        self, table: pl.Tensor[[12], pl.INT32], out: pl.Out[pl.Tensor[[1, 8], pl.FP32]]
    ) -> pl.Tensor[[1, 8], pl.FP32]:
        window = pl.slice(table, [8], [8])  # runs 4 entries past the end; the kernel reads the valid 4
        out = first_entries(window, 4, out)
        return out


def test_a_window_past_the_end_is_read_only_and_padded() -> None:
    table, out = torch.arange(12, dtype=torch.int32), torch.zeros(1, 8)
    run(Overrun, table, out, config=SIM)
    torch.testing.assert_close(out, torch.full((1, 8), float(8 + 9 + 10 + 11)))
