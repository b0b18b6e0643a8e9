"""pypto.core.analysis: the one liveness (MLIR-style, loop-aware), the FunctionPass
base, and the rule that a pass imports only the pass base, the registry and analyses."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, cf, func, scf
from xdsl.dialects.builtin import Builtin, ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.parser import Parser

from pypto.core.analysis.liveness import Liveness, LiveRange
from pypto.dialects.enums import FunctionType
from pypto.dialects.program import set_function_type
from pypto.passes.base import FunctionPass

PASSES = Path(__file__).resolve().parents[2] / "pypto" / "passes"

LOOP_AND_IF = """
func.func @f(%n: index, %c: i1) -> i32 {
  %a = arith.constant 1 : i32
  %b = arith.constant 2 : i32
  %lb = arith.constant 0 : index
  %one = arith.constant 1 : index
  %r = scf.for %i = %lb to %n step %one iter_args(%acc = %b) -> (i32) {
    %s = arith.addi %acc, %a : i32
    %t = arith.muli %s, %s : i32
    scf.yield %t : i32
  }
  %d = arith.constant 3 : i32
  %e = scf.if %c -> (i32) {
    %u = arith.addi %d, %d : i32
    scf.yield %u : i32
  } else {
    scf.yield %r : i32
  }
  %g = arith.addi %e, %e : i32
  func.return %g : i32
}
"""

BRANCHES = """
func.func @g(%x: i32) -> i32 {
  %a = arith.addi %x, %x : i32
  cf.br ^bb1
^bb1:
  cf.br ^bb2
^bb2:
  %b = arith.addi %a, %a : i32
  func.return %b : i32
}
"""


def _parse(text: str) -> func.FuncOp:
    ctx = Context()
    for dialect in (Builtin, func.Func, arith.Arith, scf.Scf, cf.Cf):
        ctx.load_dialect(dialect)
    module = Parser(ctx, text).parse_module()
    f = module.body.block.first_op
    assert isinstance(f, func.FuncOp)
    return f


def _named(f: func.FuncOp) -> dict[str, Operation]:
    """Ops by their first result's name (``%a`` -> ``"a"``)."""
    return {op.results[0].name_hint: op for op in f.walk() if op.results and op.results[0].name_hint}


def test_liveness_numbers_ops_in_preorder() -> None:
    f = _parse(LOOP_AND_IF)
    lv = Liveness(f)
    ops = list(lv.ops())
    assert [lv.index(op) for op in ops] == list(range(len(ops)))
    loop = next(op for op in ops if isinstance(op, scf.ForOp))
    assert lv.end_index(loop) == lv.index(loop) + 3  # addi, muli, yield


def test_a_value_read_in_a_loop_lives_to_the_loop_end() -> None:
    f = _parse(LOOP_AND_IF)
    lv, op = Liveness(f), _named(f)
    loop = op["r"]
    a = op["a"].results[0]
    (use,) = lv.uses(a)
    assert use.user is op["s"] and use.anchor is loop and use.loops == (loop,)
    assert lv.live_range(a).end == lv.end_index(loop)
    assert not lv.is_dead_after(a, op["s"]) and not lv.is_dead_after(a, op["t"])
    assert lv.is_dead_after(a, loop)
    # a value defined in the loop body dies at its last use there
    s = op["s"].results[0]
    assert lv.live_range(s).end == lv.index(op["t"]) and lv.is_dead_after(s, op["t"])


def test_definitions_function_arguments_iter_args_and_region_results() -> None:
    f = _parse(LOOP_AND_IF)
    lv, op = Liveness(f), _named(f)
    loop = op["r"]
    assert isinstance(loop, scf.ForOp)
    assert lv.definition(f.body.block.args[0]) == -1
    assert lv.definition(loop.body.block.args[1]) == lv.index(loop)  # iter_arg: at the loop
    assert lv.definition(loop.results[0]) == lv.end_index(loop)  # result: once the loop ran


def test_a_use_in_an_if_is_precise_and_the_block_range_is_coarse() -> None:
    f = _parse(LOOP_AND_IF)
    lv, op = Liveness(f), _named(f)
    d = op["d"].results[0]
    if_op = op["e"]
    assert lv.live_range(d).end == lv.index(op["u"])  # not lifted: an if runs once
    assert lv.end_operation(d) is if_op
    assert lv.block_range(d).end == lv.end_index(if_op)  # MLIR's granularity
    u = op["u"].results[0]
    then_yield = if_op.regions[0].block.last_op
    assert then_yield is not None
    assert lv.buffer_range([d, u]) == LiveRange(lv.index(op["d"]), lv.index(then_yield))
    assert lv.buffer_range([d, u], coarse=True) == LiveRange(lv.index(op["d"]), lv.end_index(if_op))


def test_live_in_and_live_out_per_block() -> None:
    f = _parse(LOOP_AND_IF)
    lv, op = Liveness(f), _named(f)
    loop, if_op = op["r"], op["e"]
    assert isinstance(loop, scf.ForOp) and isinstance(if_op, scf.IfOp)
    body = loop.body.block
    a = op["a"].results[0]
    assert lv.live_in(body) == [a]
    assert lv.live_out(body) == [a]  # read again by the next iteration
    then_block = if_op.true_region.block
    assert lv.live_in(then_block) == [op["d"].results[0]]
    assert lv.live_out(then_block) == []
    assert set(lv.live_ranges()) == set(lv.values())


def test_live_sets_follow_branch_successors() -> None:
    f = _parse(BRANCHES)
    lv = Liveness(f)
    entry, bb1, bb2 = list(f.body.blocks)
    a = entry.first_op.results[0]  # type: ignore[union-attr]
    assert lv.live_in(bb2) == [a] and lv.live_in(bb1) == [a]
    assert lv.live_out(entry) == [a] and lv.live_out(bb1) == [a] and lv.live_out(bb2) == []
    assert lv.live_in(entry) == []


class _Names(FunctionPass):
    name = "names"
    PASS_NAME = "Names"
    FUNCTION_TYPES = (FunctionType.InCore,)
    seen: list[str] = []

    def run_on_function(self, f: func.FuncOp, ctx: Context) -> None:
        self.seen.append(f.sym_name.data)


def test_function_pass_runs_on_functions_of_its_kinds_with_a_body() -> None:
    fs = [_parse(LOOP_AND_IF).clone() for _ in range(3)]
    for f, name, kind in zip(fs, ("k1", "orch", "k2"), (FunctionType.InCore, FunctionType.Orchestration, FunctionType.InCore), strict=True):
        f.sym_name = StringAttr(name)
        set_function_type(f, kind)
    decl = func.FuncOp.external("k3", [], [])
    set_function_type(decl, FunctionType.InCore)
    module = ModuleOp([*fs, decl])
    _Names.seen = []
    _Names().apply(Context(), module)
    assert _Names.seen == ["k1", "k2"]


def test_pass_names_default_to_the_class_name_and_its_pipeline_spelling() -> None:
    class InitMemRef(FunctionPass):  # the pipeline spells it init-memref, not init-mem-ref
        def run_on_function(self, f: func.FuncOp, ctx: Context) -> None: ...

    class MyNewPass(FunctionPass):
        def run_on_function(self, f: func.FuncOp, ctx: Context) -> None: ...

    assert (InitMemRef.PASS_NAME, InitMemRef.name) == ("InitMemRef", "init-memref")
    assert (MyNewPass.PASS_NAME, MyNewPass.name) == ("MyNewPass", "my-new-pass")
    assert (_Names.PASS_NAME, _Names.name) == ("Names", "names")  # explicit names stay


PASS_FILES = [p for p in sorted(PASSES.glob("*.py")) if p.stem not in ("__init__", "registry")]


def test_the_pass_folder_is_found() -> None:
    assert len(PASS_FILES) > 20, PASSES


@pytest.mark.parametrize("path", PASS_FILES, ids=lambda p: p.name)
def test_a_pass_imports_no_other_pass(path: Path) -> None:
    """Passes share code through pypto.core.analysis or the pass base, never through another pass."""
    allowed = {"base", "registry", "placeholders", "pipeline_order"}
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level == 1:
            modules = [node.module] if node.module else [a.name for a in node.names]
            assert set(modules) <= allowed, f"{path.name} imports pass module(s) {modules}"
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("pypto.passes."):
            assert node.module.removeprefix("pypto.passes.") in allowed, f"{path.name} imports {node.module}"
