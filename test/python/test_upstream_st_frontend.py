"""Front-end forms upstream's tests/st/distributed use: arithmetic on ``pl.dynamic`` extents (in
annotations and as values), early returns from ``if`` branches, ``return self.f(...)`` of a tuple, an
enum argument given as its string (``mode="ring"``), ``pl.store(..., output_tensor=)``, and a load window
past the tensor's end when its valid shape fits."""

from __future__ import annotations

import pytest
import torch

import pypto.language as pl
from pypto.errors import ParserTypeError, UndefinedVariableError, UnsupportedFeatureError
from pypto.frontend.dsl_objects import DynExpr
from pypto.runtime import RunConfig, run

SIM = RunConfig(platform="a2a3sim")
NR = pl.dynamic("NR")


def test_dynamic_extent_arithmetic_builds_an_expression() -> None:
    e = NR * 64 + 1
    assert isinstance(e, DynExpr) and e.name == "((NR * 64) + 1)"
    assert e.value(lambda v: {"NR": 4}[v.name]) == 257
    assert (2 * NR).value(lambda v: 3) == 6 and (NR // 2).value(lambda v: 8) == 4
    with pytest.raises(TypeError):
        NR * 1.5  # noqa: B018 - an extent is an integer


def test_a_dynamic_extent_expression_in_an_annotation_is_a_dynamic_dimension() -> None:
    @pl.function(type=pl.FunctionType.Orchestration)
    def f(x: pl.Tensor[[NR * 2, 16], pl.FP32]) -> pl.Tensor[[NR * 2, 16], pl.FP32]:
        return x

    assert "x: pl.Tensor[[-1, 16], pl.FP32]" in f.as_python()  # the printers show a dynamic extent as -1


M = pl.dynamic("M")


def test_a_dynamic_extent_used_as_a_value_reads_the_parameter_dimension() -> None:
    @pl.function(type=pl.FunctionType.InCore)
    def k(x: pl.Tensor[[NR, 16], pl.FP32], y: pl.Out[pl.Tensor[[NR, 16], pl.FP32]]) -> pl.Tensor[[NR, 16], pl.FP32]:
        for r in pl.range(NR - 1):
            t = pl.load(x, [r, 0], [1, 16])
            y = pl.store(t, [r, 0], y)
        return y

    text = k.as_python()
    assert "pl.tensor.dim(x, 0)" in text and "- 1" in text


def test_a_dynamic_extent_of_no_parameter_is_a_located_error() -> None:
    with pytest.raises(UndefinedVariableError, match="'M' is not a dimension of a parameter") as e:

        @pl.function(type=pl.FunctionType.InCore)
        def k(x: pl.Tensor[[NR, 16], pl.FP32], y: pl.Out[pl.Tensor[[NR, 16], pl.FP32]]) -> pl.Tensor[[NR, 16], pl.FP32]:
            for r in pl.range(M):
                t = pl.load(x, [r, 0], [1, 16])
                y = pl.store(t, [r, 0], y)
            return y

    assert "test_upstream_st_frontend.py" in str(e.value)


@pl.jit.incore
def copy_rows(x: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]):
    for r in pl.range(NR):
        t = pl.load(x, [r, 0], [1, 64])
        y = pl.store(t, [r, 0], y)
    return y


@pl.jit
def copy_rows_orch(x: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]):
    return copy_rows(x, y)


def test_pl_range_of_a_dynamic_extent_runs_specialized() -> None:
    x, y = torch.randn(3, 64), torch.zeros(3, 64)
    copy_rows_orch(x, y, config=SIM)
    assert torch.equal(x, y)


EARLY = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        if flag == 1:
            u = pl.add(t, t)
            return pl.store(u, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             flag: pl.Scalar[pl.INDEX]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(x, out, flag)
        return out
"""


@pytest.mark.parametrize("flag", [0, 1])
def test_an_early_return_from_an_if_runs(flag: int) -> None:
    prog = pl.parse(EARLY)
    text = prog.as_python()
    assert "else:" in text and pl.parse(text).as_python() == text
    x, out = torch.randn(16, 64), torch.zeros(16, 64)
    run(prog, x, out, flag, config=SIM)
    assert torch.equal(out, x * 2 if flag else torch.zeros(16, 64))


def test_a_return_inside_a_loop_is_still_a_located_error() -> None:
    src = EARLY.replace("        if flag == 1:\n", "        for i in pl.range(2):\n")
    with pytest.raises(UnsupportedFeatureError, match="'return' inside a loop"):
        pl.parse(src)


TUPLE = """
import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], a: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
          b: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[16, 64], pl.FP32]]:
        t = pl.load(x, [0, 0], [16, 64])
        a = pl.store(t, [0, 0], a)
        b = pl.store(pl.add(t, t), [0, 0], output_tensor=b)
        return a, b

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], a: pl.Out[pl.Tensor[[16, 64], pl.FP32]],
             b: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> tuple[pl.Tensor[[16, 64], pl.FP32], pl.Tensor[[16, 64], pl.FP32]]:
        return self.k(x, a, b)
"""


def test_return_of_a_call_giving_a_tuple_and_store_output_tensor() -> None:
    prog = pl.parse(TUPLE)
    assert prog.as_python().count("self.k(") == 1
    x, a, b = torch.randn(16, 64), torch.zeros(16, 64), torch.zeros(16, 64)
    run(prog, x, a, b, config=SIM)
    assert torch.equal(a, x) and torch.equal(b, x * 2)


def test_an_enum_argument_may_be_its_string() -> None:
    import pypto.language.distributed as pld
    from pypto.dialects import distributed_ops  # noqa: F401 - registers the pld enum attributes
    from pypto.dialects.distributed_enums import AllreduceMode
    from pypto.dialects.op_base import EnumCodec

    codec = EnumCodec(AllreduceMode)
    assert codec.from_attr(codec.to_attr("ring")) is pld.AllreduceMode.ring
    with pytest.raises(TypeError, match="expected a pld.AllreduceMode value, got 'tree'"):
        codec.to_attr("tree")


def test_a_load_window_past_the_end_is_accepted_when_its_valid_shape_fits() -> None:
    src = """
import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def k(x: pl.Tensor[[1, 1], pl.FP32], y: pl.Out[pl.Tensor[[1, 1], pl.FP32]]) -> pl.Tensor[[1, 1], pl.FP32]:
    t = pl.load(x, [0, 0], [8, 1], valid_shape=[VALID, 1])
    y = pl.store(t, [0, 0], y)
    return y
"""
    assert "pl.tile.load(x, [0, 0], [8, 1], [1, 1]" in pl.parse(src.replace("VALID", "1")).as_python()
    with pytest.raises(ParserTypeError, match=r"window \[0:2\] in dimension 0 is past the end"):
        pl.parse(src.replace("VALID", "2"))


@pl.program
class TwoEntries:
    @pl.function(type=pl.FunctionType.InCore)
    def fill(self, x: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]) -> pl.Tensor[[NR, 64], pl.FP32]:
        for r in pl.range(NR):
            t = pl.load(x, [r, 0], [1, 64])
            y = pl.store(t, [r, 0], y)
        return y

    @pl.function(type=pl.FunctionType.InCore)
    def other(self, x: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]) -> pl.Tensor[[NR, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [1, 64])
        y = pl.store(t, [0, 0], y)
        return y

    @pl.function(type=pl.FunctionType.Orchestration)
    def fill_orch(self, x: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]) -> pl.Tensor[[NR, 64], pl.FP32]:
        return self.fill(x, y)

    @pl.function(type=pl.FunctionType.Orchestration)
    def other_orch(self, x: pl.Tensor[[NR, 64], pl.FP32], y: pl.Out[pl.Tensor[[NR, 64], pl.FP32]]) -> pl.Tensor[[NR, 64], pl.FP32]:
        return self.other(x, y)


def test_a_dispatched_entry_is_specialized_to_its_tensors_with_its_kernels_only() -> None:
    """A @pl.program host orchestrator's dispatch of ``fill_orch`` with [3, 64] tensors: the program is
    parsed again with NR bound (the kernel it calls too: pl.range(NR) is the constant 3) and keeps only
    the functions ``fill_orch`` reaches (``other`` would keep a dynamic shape)."""
    from pypto.driver.host_trace import _Entry

    prog = _Entry(TwoEntries, "fill_orch").specialize(torch.zeros(3, 64), torch.zeros(3, 64))
    assert sorted(prog.func_ops) == ["fill", "fill_orch"]
    text = prog.as_python()
    assert "def fill(x: pl.Tensor[[3, 64], pl.FP32]" in text and "pl.range(3)" in text
    x, y = torch.randn(3, 64), torch.zeros(3, 64)
    run(prog, x, y, config=SIM)
    assert torch.equal(x, y)
