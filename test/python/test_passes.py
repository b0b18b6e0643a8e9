"""OutlineIncoreScopes, ConvertTensorToTileOps and the PassManager on IR
parsed from MLIR text (docs/ir.md)."""

from __future__ import annotations

import pytest
from xdsl.dialects import func, scf
from xdsl.dialects.builtin import ModuleOp

from pypto.core.context import make_context
from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.diagnostics import DiagnosticError
from pypto.dialects.enums import FunctionType, Level, MemorySpace, ParamDirection
from pypto.dialects.program import AtOp, function_level, function_type, param_directions
from pypto.dialects.types import TensorType, TileType
from pypto.ir import PassManager, Program
from pypto.passes.base import NameGen, base_name
from pypto.passes.convert_tensor_to_tile_ops import ConvertTensorToTileOps
from pypto.passes.outline_incore_scopes import OutlineIncoreScopes
from pypto.passes.registry import all_passes, get_pass

T = "!pl.tensor<128x128xf32>"

ADD = f"""
builtin.module @add_prog {{
  func.func @add(%a: {T}, %b: {T}, %out: {T} {{pl.dir = #pl<dir Out>}}) -> {T} {{
    %r = "pl.at"() <{{level = #pl<level CORE_GROUP>}}> ({{
      %c0 = arith.constant 0 : index
      %s = "pl.tensor.add"(%a, %b) : ({T}, {T}) -> {T} loc("add.py":4:18)
      %out2 = "pl.tensor.assemble"(%out, %s, %c0, %c0) : ({T}, {T}, index, index) -> {T} loc("add.py":4:9)
      "pl.yield"(%out2) : ({T}) -> ()
    }}) : () -> {T} loc("add.py":3:5)
    func.return %r : {T}
  }}
}}
"""

MATMUL = """
builtin.module @mm {
  func.func @matmul_k(%a: !pl.tensor<128x512xf16>, %b: !pl.tensor<512x128xf16>, %c: !pl.tensor<128x128xf32> {pl.dir = #pl<dir Out>}) -> !pl.tensor<128x128xf32> attributes {pl.func_type = #pl<func_type Orchestration>, pl.level = #pl<level CHIP>, pl.role = #pl<role Orchestrator>} {
    %r = "pl.at"() <{level = #pl<level CORE_GROUP>, name_hint = "k_blocked"}> ({
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c4 = arith.constant 4 : index
      %c128 = arith.constant 128 : index
      %0 = "pl.tensor.slice"(%a, %c0, %c0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<128x512xf16>, index, index) -> !pl.tensor<128x128xf16>
      %1 = "pl.tensor.slice"(%b, %c0, %c0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<512x128xf16>, index, index) -> !pl.tensor<128x128xf16>
      %acc = "pl.tensor.matmul"(%0, %1) <{out_dtype = f32, a_trans = false, b_trans = false, c_matrix_nz = false}> : (!pl.tensor<128x128xf16>, !pl.tensor<128x128xf16>) -> !pl.tensor<128x128xf32>
      %acc_rv = scf.for %k = %c1 to %c4 step %c1 iter_args(%acc_it = %acc) -> (!pl.tensor<128x128xf32>) {
        %k0 = arith.muli %k, %c128 : index
        %2 = "pl.tensor.slice"(%a, %c0, %k0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<128x512xf16>, index, index) -> !pl.tensor<128x128xf16>
        %3 = "pl.tensor.slice"(%b, %k0, %c0) <{shape = array<i64: 128, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}> : (!pl.tensor<512x128xf16>, index, index) -> !pl.tensor<128x128xf16>
        %acc__ssa_v3 = "pl.tensor.matmul_acc"(%acc_it, %2, %3) <{a_trans = false, b_trans = false}> : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf16>, !pl.tensor<128x128xf16>) -> !pl.tensor<128x128xf32>
        scf.yield %acc__ssa_v3 : !pl.tensor<128x128xf32>
      }
      %c2 = "pl.tensor.assemble"(%c, %acc_rv, %c0, %c0) : (!pl.tensor<128x128xf32>, !pl.tensor<128x128xf32>, index, index) -> !pl.tensor<128x128xf32>
      "pl.yield"(%c2) : (!pl.tensor<128x128xf32>) -> ()
    }) : () -> !pl.tensor<128x128xf32>
    func.return %r : !pl.tensor<128x128xf32>
  }
}
"""


def incore(body: str, params: str = f"%a: {T}, %out: {T} {{pl.dir = #pl<dir Out>}}") -> str:
    attrs = "pl.func_type = #pl<func_type InCore>, pl.level = #pl<level CHIP_DIE>, pl.role = #pl<role SubWorker>"
    return f"""
builtin.module @p {{
  func.func @k({params}) -> {T} attributes {{{attrs}}} {{
    %c0 = arith.constant 0 : index
{body}
    func.return %out : {T}
  }}
}}
"""


def run(module: ModuleOp, *passes: type) -> ModuleOp:
    for p in passes:
        p().apply(make_context(), module)
        module.verify()
    return module


def funcs(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}


def op_names(f: func.FuncOp) -> list[str]:
    return [op.name for op in f.body.walk() if op.name.startswith("pl.")]


def named(f: func.FuncOp) -> dict[str, object]:
    return {op.results[0].name_hint: op for op in f.body.walk() if op.results and op.results[0].name_hint}


# ---- helpers -------------------------------------------------------------------


def test_base_name_and_namegen() -> None:
    assert base_name("out__ssa_v1") == "out"
    assert base_name("t__tmp_v0") == "t"
    assert base_name("acc__iter_v1") == "acc"
    assert base_name(None) == "t"
    names = NameGen({"out__ssa_v1"})
    assert names.fresh("a__tile") == "a__tile"
    assert names.next_version("out__ssa_v0") == "out__ssa_v2"
    assert names.next_version("out") == "out"


def test_registry_names() -> None:
    assert get_pass("outline-incore-scopes") is OutlineIncoreScopes
    assert get_pass("OutlineIncoreScopes") is OutlineIncoreScopes
    assert get_pass("ConvertTensorToTileOps") is ConvertTensorToTileOps
    assert {"outline-incore-scopes", "convert-tensor-to-tile-ops"} <= set(all_passes())
    assert OutlineIncoreScopes.PASS_NAME == "OutlineIncoreScopes"
    assert ConvertTensorToTileOps.name == "convert-tensor-to-tile-ops"


# ---- OutlineIncoreScopes --------------------------------------------------------


def test_outline_add() -> None:
    m = run(parse_mlir(ADD), OutlineIncoreScopes)
    fs = funcs(m)
    assert list(fs) == ["add_incore_0", "add"]  # inserted before its parent
    k, parent = fs["add_incore_0"], fs["add"]
    assert function_type(k) is FunctionType.InCore
    assert function_level(k) is Level.CHIP_DIE
    assert function_type(parent) is FunctionType.Orchestration
    assert [a.name_hint for a in k.args] == ["a", "b", "out"]
    assert param_directions(k) == [ParamDirection.In, ParamDirection.In, ParamDirection.Out]
    assert op_names(k) == ["pl.tensor.add", "pl.tensor.assemble"]
    ret = k.body.block.last_op
    assert isinstance(ret, func.ReturnOp) and ret.operands[0] is k.args[2]  # returns the Out param
    call = parent.body.block.first_op
    assert isinstance(call, func.CallOp) and call.callee.string_value() == "add_incore_0"
    assert list(call.operands) == list(parent.args)
    assert call.res[0].name_hint == "r"
    assert parent.body.block.last_op.operands[0] is call.res[0]  # type: ignore[union-attr]
    assert not any(isinstance(o, AtOp) for o in m.walk())
    assert str(k.location).startswith('loc("add.py":3:5)') or "add.py" in print_mlir(k)


def test_outline_name_hint_and_loop() -> None:
    m = run(parse_mlir(MATMUL), OutlineIncoreScopes)
    k = funcs(m)["k_blocked"]
    assert [a.name_hint for a in k.args] == ["a", "b", "c"]
    assert param_directions(k)[2] is ParamDirection.Out
    assert any(isinstance(o, scf.ForOp) for o in k.body.walk())
    # constants used only inside the scope stay inside it
    assert "arith.constant" in [o.name for o in k.body.block.ops]


def test_outline_inout_and_extra_result() -> None:
    text = f"""
builtin.module @p {{
  func.func @f(%x: {T}, %y: {T}) -> {T} {{
    %c0 = arith.constant 0 : index
    "pl.at"() <{{level = #pl<level CORE_GROUP>}}> ({{
      %s = "pl.tensor.add"(%y, %x) : ({T}, {T}) -> {T}
      %w = "pl.tensor.assemble"(%y, %s, %c0, %c0) : ({T}, {T}, index, index) -> {T}
      "pl.yield"() : () -> ()
    }}) : () -> ()
    %z = "pl.tensor.exp"(%y) : ({T}) -> {T}
    func.return %z : {T}
  }}
}}
"""
    m = run(parse_mlir(text), OutlineIncoreScopes)
    k, f = funcs(m)["f_incore_0"], funcs(m)["f"]
    assert [a.name_hint for a in k.args] == ["y", "x"]
    assert param_directions(k) == [ParamDirection.InOut, ParamDirection.In]  # y read before written
    call = next(o for o in f.body.block.ops if isinstance(o, func.CallOp))
    exp = next(o for o in f.body.block.ops if o.name == "pl.tensor.exp")
    assert exp.operands[0] is call.res[0]  # later reads see the written tensor


def test_outline_two_scopes_counter() -> None:
    text = f"""
builtin.module @p {{
  func.func @f(%x: {T}, %o: {T} {{pl.dir = #pl<dir Out>}}) -> {T} {{
    %c0 = arith.constant 0 : index
    %r1 = "pl.at"() <{{level = #pl<level CORE_GROUP>}}> ({{
      %w = "pl.tensor.assemble"(%o, %x, %c0, %c0) : ({T}, {T}, index, index) -> {T}
      "pl.yield"(%w) : ({T}) -> ()
    }}) : () -> {T}
    %r2 = "pl.at"() <{{level = #pl<level CORE_GROUP>}}> ({{
      %w = "pl.tensor.assemble"(%r1, %x, %c0, %c0) : ({T}, {T}, index, index) -> {T}
      "pl.yield"(%w) : ({T}) -> ()
    }}) : () -> {T}
    func.return %r2 : {T}
  }}
}}
"""
    m = run(parse_mlir(text), OutlineIncoreScopes)
    assert list(funcs(m)) == ["f_incore_0", "f_incore_1", "f"]
    assert param_directions(funcs(m)["f_incore_1"]) == [ParamDirection.Out, ParamDirection.In]


def test_outline_name_hint_collision_is_disambiguated() -> None:
    # upstream: a hint naming another function is namespaced under the parent (``<parent>_<hint>``)
    text = ADD.replace("<{level = #pl<level CORE_GROUP>}>", '<{level = #pl<level CORE_GROUP>, name_hint = "add"}>')
    m = run(parse_mlir(text, "add.mlir"), OutlineIncoreScopes)
    assert list(funcs(m)) == ["add_add", "add"]


def test_outline_is_deterministic() -> None:
    a = print_mlir(run(parse_mlir(MATMUL), OutlineIncoreScopes))
    b = print_mlir(run(parse_mlir(MATMUL), OutlineIncoreScopes))
    assert a == b


# ---- ConvertTensorToTileOps -----------------------------------------------------


def test_convert_add_names_and_ops() -> None:
    m = run(parse_mlir(ADD), OutlineIncoreScopes, ConvertTensorToTileOps)
    k = funcs(m)["add_incore_0"]
    assert op_names(k) == ["pl.tile.load", "pl.tile.load", "pl.tile.add", "pl.tile.store"]
    n = named(k)
    assert {"a__tile", "b__tile", "s__tile", "out__tile"} <= set(n)
    load = n["a__tile"]
    assert isinstance(load.results[0].type, TileType)  # type: ignore[attr-defined]
    assert load.results[0].type.memory_space is MemorySpace.Vec  # type: ignore[attr-defined]
    # the orchestration function is untouched
    assert op_names(funcs(m)["add"]) == []


def test_convert_matmul_loop_carry() -> None:
    m = run(parse_mlir(MATMUL), OutlineIncoreScopes, ConvertTensorToTileOps)
    k = funcs(m)["k_blocked"]
    names = op_names(k)
    assert "pl.tensor.slice" not in names and names.count("pl.tile.load") == 4
    assert names.count("pl.tile.matmul") == 1 and names.count("pl.tile.matmul_acc") == 1
    loop = next(o for o in k.body.walk() if isinstance(o, scf.ForOp))
    t = loop.results[0].type
    assert isinstance(t, TileType) and t.memory_space is MemorySpace.Acc
    text = print_mlir(k)
    for name in ("t__tile", "t__tile_1", "t__tile_2", "t__tile_3", "acc__tile", "acc__tile_1", "c__tile"):
        assert f"%{name} = " in text
    assert all(
        o.results[0].type.memory_space is MemorySpace.Mat for o in k.body.walk() if o.name == "pl.tile.load"  # type: ignore[attr-defined]
    )


def test_convert_reductions_get_scratch_tiles() -> None:
    body = f"""
    %m = "pl.tensor.row_max"(%a) : ({T}) -> !pl.tensor<128x1xf32>
    %d = "pl.tensor.row_expand_sub"(%a, %m) : ({T}, !pl.tensor<128x1xf32>) -> {T}
    %w = "pl.tensor.assemble"(%out, %d, %c0, %c0) : ({T}, {T}, index, index) -> {T}
"""
    m = run(parse_mlir(incore(body)), ConvertTensorToTileOps)
    k = funcs(m)["k"]
    assert op_names(k) == ["pl.tile.load", "pl.tile.create", "pl.tile.row_max", "pl.tile.row_expand_sub", "pl.tile.store"]
    assert {"a__tile", "tmp__tile", "m__tile", "d__tile", "out__tile"} <= set(named(k))


def test_convert_unsupported_op_is_located_error() -> None:
    body = """
    %t = "pl.tensor.create"() <{shape = array<i64: -1, 128>, dtype = f32}> : () -> !pl.tensor<?x128xf32> loc("k.py":7:9)
"""
    with pytest.raises(DiagnosticError) as e:
        run(parse_mlir(incore(body)), ConvertTensorToTileOps)
    assert "cannot convert pl.tensor.create with the dynamic shape" in str(e.value)
    assert e.value.diagnostic.span is not None and (e.value.diagnostic.span.line, e.value.diagnostic.span.col) == (7, 9)


def test_convert_broadcast_is_located_error() -> None:
    body = f"""
    %r = "pl.tensor.slice"(%a, %c0, %c0) <{{shape = array<i64: 1, 128>, operandSegmentSizes = array<i32: 1, 2, 0, 0>}}> : ({T}, index, index) -> !pl.tensor<1x128xf32>
    %s = "pl.tensor.add"(%a, %r) : ({T}, !pl.tensor<1x128xf32>) -> {T} loc("k.py":9:13)
"""
    with pytest.raises(DiagnosticError) as e:
        run(parse_mlir(incore(body)), ConvertTensorToTileOps)
    assert "do not broadcast" in str(e.value)


def test_convert_leaves_non_incore_functions() -> None:
    text = f"""
builtin.module @p {{
  func.func @g(%a: {T}) -> {T} {{
    %e = "pl.tensor.exp"(%a) : ({T}) -> {T}
    func.return %e : {T}
  }}
}}
"""
    m = run(parse_mlir(text), ConvertTensorToTileOps)
    assert op_names(funcs(m)["g"]) == ["pl.tensor.exp"]
    assert isinstance(funcs(m)["g"].body.block.first_op.results[0].type, TensorType)  # type: ignore[union-attr]


# ---- PassManager ---------------------------------------------------------------


def test_pass_manager_runs_in_order_with_callback() -> None:
    seen: list[tuple[int, str, int]] = []
    prog = Program(parse_mlir(ADD))
    pm = PassManager([OutlineIncoreScopes, ConvertTensorToTileOps])
    assert pm.pass_names == ["OutlineIncoreScopes", "ConvertTensorToTileOps"]
    out = pm.run(prog, callback=lambda i, p, pr: seen.append((i, p.PASS_NAME, len(pr.functions))))
    assert out is prog
    assert seen == [(1, "OutlineIncoreScopes", 2), (2, "ConvertTensorToTileOps", 2)]


def test_pass_manager_reports_verification_failure() -> None:
    from dataclasses import dataclass

    from pypto.passes.base import PyPTOPass
    from pypto.pipeline.manager import VerificationError

    @dataclass(frozen=True)
    class Breaker(PyPTOPass):
        PASS_NAME = "Breaker"
        name = "breaker"

        def apply(self, ctx, op):  # type: ignore[no-untyped-def]
            f = next(o for o in op.ops if isinstance(o, func.FuncOp))
            f.body.block.last_op.detach()  # drop the terminator

    with pytest.raises(VerificationError) as e:
        PassManager([OutlineIncoreScopes, Breaker]).run(Program(parse_mlir(ADD)))
    assert e.value.pass_name == "Breaker"
