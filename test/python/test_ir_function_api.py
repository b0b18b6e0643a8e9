"""upstream's Python IR API (issue 15): ``Program.functions`` gives ``ir.Function`` views (``name``,
``func_type``, ``params``, ``return_types``, ``as_python``), ``pl.parse`` of one ``@pl.function``
answers the same, ``pypto.ir.serialize`` / ``deserialize`` round-trip, and ``pl.parse``'s errors are
also the ``ValueError`` / ``SyntaxError`` upstream raises. Plus ``pl.transpose`` (the axis swap)."""

from __future__ import annotations

import pytest
import torch
from xdsl.dialects import func

import pypto.ir as ir
import pypto.language as pl
from pypto.errors import ParserTypeError

CODE = """
@pl.function
def vector_add(x: pl.Tensor[[128], pl.FP32], y: pl.Tensor[[128], pl.FP32]) -> pl.Tensor[[128], pl.FP32]:
    result: pl.Tensor[[128], pl.FP32] = pl.add(x, y)
    return result
"""


@pl.program
class Two:
    @pl.function(type=pl.FunctionType.InCore)
    def k(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        t = pl.load(x, [0, 0], [16, 64])
        out = pl.store(t, [0, 0], out)
        return out

    @pl.function(type=pl.FunctionType.Orchestration)
    def main(self, x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[pl.Tensor[[16, 64], pl.FP32]]) -> pl.Tensor[[16, 64], pl.FP32]:
        out = self.k(x, out)
        return out


def test_program_functions_are_ir_functions() -> None:
    fns = Two.functions
    assert list(fns) == ["k", "main"]
    k = fns["k"]
    assert isinstance(k, ir.Function) and isinstance(k.op, func.FuncOp)
    assert k.name == "k" and k.func_type is pl.FunctionType.InCore
    assert fns["main"].func_type is pl.FunctionType.Orchestration
    assert [p.name for p in k.params] == ["x", "out"]
    assert [str(t) for t in k.return_types] == ["!pl.tensor<16x64xf32>"]
    assert k.sym_name.data == "k"  # other attributes are the func.func's
    assert "def k(x: pl.Tensor[[16, 64], pl.FP32], out: pl.Out[" in k.as_python() and "def main" not in k.as_python()


def test_parsed_function_and_serialize_round_trip() -> None:
    p = pl.parse(CODE)
    assert p.name == "vector_add" and len(p.params) == 2 and len(p.return_types) == 1
    data = ir.serialize(p)
    assert isinstance(data, bytes)
    back = ir.deserialize(data)
    assert back.name == "vector_add" and back == p
    one = ir.deserialize(ir.serialize(Two.functions["k"]))
    assert list(one.functions) == ["k"] and [p.name for p in one.params] == ["x", "out"]
    with pytest.raises(ValueError, match="the program has 2 functions"):
        _ = Two.params
    with pytest.raises(ValueError, match="not bytes written by pypto.ir.serialize"):
        ir.deserialize(b"junk")


def test_parse_errors_are_upstreams_exception_types() -> None:
    with pytest.raises(ValueError, match="found none"):
        pl.parse("x = 42\n")
    with pytest.raises(ValueError, match="found 2"):
        pl.parse(CODE + CODE.replace("vector_add", "other"))
    with pytest.raises(SyntaxError):
        pl.parse("@pl.function\ndef f(x):\n    return x +\n")


@pl.jit
def transpose_k(x: pl.Tensor, out: pl.Out[pl.Tensor]):
    with pl.at(level=pl.Level.CORE_GROUP):
        out = pl.assemble(out, pl.transpose(x, 0, 1), [0, 0])
    return out


def test_transpose_swaps_axes() -> None:
    x, out = torch.randn(16, 32), torch.zeros(32, 16)
    text = transpose_k.lower(x, out).as_python()
    assert "pl.tile.transpose(" in text
    transpose_k(x, out)
    torch.testing.assert_close(out, x.T)


def test_transpose_axis_out_of_range_is_located() -> None:
    with pytest.raises(ParserTypeError, match="out of range"):
        pl.parse(CODE.replace("pl.add(x, y)", "pl.transpose(x, 0, 3)"))


def test_transpose_has_a_torch_form() -> None:
    """Both layers (``pl.tile.transpose`` after lowering, ``pl.tensor.transpose`` as written) run in the
    torch codegen that validate_ir uses."""
    from pypto.debug import torch_codegen

    x = torch.randn(16, 32)
    written, lowered = transpose_k.specialize(x, torch.zeros(32, 16)), transpose_k.lower(x, torch.zeros(32, 16))
    assert "pl.tensor.transpose(" in written.as_python() and "pl.tile.transpose(" in lowered.as_python()
    for program in (written, lowered):
        ns: dict[str, object] = {}
        exec(compile(torch_codegen(program), "<gen>", "exec"), ns)  # noqa: S102
        out = torch.zeros(32, 16)
        ns["transpose_k"](x, out)  # type: ignore[operator]
        assert torch.equal(out, x.T)
