"""The front half of the Default pipeline (passes 1..11) against upstream PyPTO.

The key test runs our passes 1..11, in pipeline order, on the three reference
kernels (``upstream-builds/{add,softmax_rows,matmul_k}``, loaded from their
``00_frontend.py`` with ``pl.loads``) and compares the printed program after
each pass with upstream's ``NN_after_<Pass>.py`` text. The one remaining
difference is normalised away, with the reason:

- ``attrs={"__compiler_tensor_to_tile_mat_bridge": True}`` on the Mat loads
  ConvertTensorToTileOps creates for matmul operands (matmul_k pass 11): our
  ops hold no free-form ``attrs`` dictionary (the same normalisation the DSL
  printer's upstream-dump test applies, test_dsl_printer.py). The tag only
  tells upstream's later passes that the load was a tensor->tile bridge.

Passes 08 (OutlineHierarchyScopes) and 10 (OutlineClusterScopes) run as
whatever the registry holds under their names (pipeline placeholders at the
time of writing); upstream's 08 and 10 dumps of these kernels equal their
inputs, so identity is the expected behaviour here.

Everything else -- SSA names (``acc__iter_v1``, ``acc__rv_v2``), temporaries
(``t__tmp_v0``), outlined functions, tile names -- must be equal text.
The other tests pin each pass's own behaviour.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects import arith, func, scf
from xdsl.dialects.builtin import ModuleOp

import pypto.language as pl
from pypto.core.context import make_context
from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.core.program import PassDumpLevel, Program
from pypto.diagnostics import DiagnosticError
from pypto.passes.base import PyPTOPass
from pypto.passes.convert_to_ssa import ConvertToSSA
from pypto.passes.ctrl_flow_transform import CtrlFlowTransform
from pypto.passes.flatten_call_expr import FlattenCallExpr
from pypto.passes.inline_functions import InlineFunctions
from pypto.passes.normalize_stmt_structure import NormalizeStmtStructure
from pypto.passes.pipeline_order import DEFAULT_PIPELINE, KEBAB_NAMES
from pypto.passes.registry import all_passes, get_pass
from pypto.passes.simplify import Simplify
from pypto.passes.unroll_loops import UnrollLoops

UPSTREAM = Path(__file__).resolve().parents[3] / "shared" / "reference" / "upstream-builds"
KERNELS = {"add": PassDumpLevel.CONCISE, "softmax_rows": PassDumpLevel.EXPLICIT, "matmul_k": PassDumpLevel.EXPLICIT}
FRONT = DEFAULT_PIPELINE[:11]

MINE: tuple[type[PyPTOPass], ...] = (
    InlineFunctions,
    UnrollLoops,
    CtrlFlowTransform,
    ConvertToSSA,
    Simplify,
    NormalizeStmtStructure,
    FlattenCallExpr,
)


def normalize_upstream(text: str) -> str:
    """Drop what our IR does not hold (see the module docstring)."""
    return re.sub(r", attrs=\{[^{}]*\}", "", text).strip() + "\n"


def run(program: Program | ModuleOp, *passes: type[PyPTOPass]) -> ModuleOp:
    module = program.module if isinstance(program, Program) else program
    for p in passes:
        p().apply(make_context(), module)
        module.verify()
    return module


def dsl(text: str) -> Program:
    return pl.parse(text)


def printed(program: Program, level: PassDumpLevel = PassDumpLevel.CONCISE) -> str:
    return program.as_python(level)


# ---- registration ----------------------------------------------------------------------


def test_names_match_the_pipeline() -> None:
    for cls in MINE:
        assert KEBAB_NAMES[cls.PASS_NAME] == cls.name
        assert get_pass(cls.name) is cls
        assert get_pass(cls.PASS_NAME) is cls
        assert cls.name in all_passes()
    # Simplify runs twice (passes 5 and 45) but is one registered class.
    positions = [i for i, (camel, _) in enumerate(DEFAULT_PIPELINE, start=1) if camel == "Simplify"]
    assert positions == [5, 45]
    assert get_pass("simplify") is Simplify


# ---- the key test: passes 1..11 vs upstream dumps ------------------------------------------


def _dump(kernel: str, index: int, camel: str) -> Path:
    return UPSTREAM / kernel / "passes_dump" / f"{index:02d}_after_{camel}.py"


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_front_passes_reproduce_upstream_dumps(kernel: str) -> None:
    level = KERNELS[kernel]
    program = pl.loads(str(UPSTREAM / kernel / "passes_dump" / "00_frontend.py"))
    mismatches: list[str] = []
    for index, (camel, kebab) in enumerate(FRONT, start=1):
        cls = get_pass(kebab)
        assert cls.PASS_NAME == camel
        cls().apply(make_context(), program.module)
        program.module.verify()
        expected = normalize_upstream(_dump(kernel, index, camel).read_text())
        got = printed(program, level).strip() + "\n"
        if got != expected:
            mismatches.append(f"{index:02d}_after_{camel}:\n--- upstream\n{expected}--- ours\n{got}")
    assert not mismatches, "\n".join(mismatches)


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_convert_to_ssa_on_its_own_dump_is_identity(kernel: str) -> None:
    """Resuming from 04_after_ConvertToSSA and running the pass again changes nothing."""
    level = KERNELS[kernel]
    path = _dump(kernel, 4, "ConvertToSSA")
    program = pl.loads(str(path))
    before = printed(program, level)
    run(program, ConvertToSSA)
    assert printed(program, level) == before == normalize_upstream(path.read_text())


@pytest.mark.parametrize("kernel", sorted(KERNELS))
def test_front_passes_deterministic(kernel: str) -> None:
    texts = []
    for _ in range(2):
        program = pl.loads(str(UPSTREAM / kernel / "passes_dump" / "00_frontend.py"))
        run(program, *(get_pass(k) for _, k in FRONT))
        texts.append(print_mlir(program.module))
    assert texts[0] == texts[1]


# ---- ConvertToSSA --------------------------------------------------------------------------

T = "pl.Tensor[[16, 128], pl.FP32]"


def test_convert_to_ssa_versions_per_base_name() -> None:
    program = dsl(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}, n: pl.Scalar[pl.INDEX]) -> {T}:
    y = pl.exp(x)
    y = pl.neg(y)
    for i in pl.range(4):
        y = pl.add(y, x)
        z = pl.exp(y)
    if n < 2:
        y = pl.neg(y)
    return y
"""
    )
    run(program, ConvertToSSA)
    text = printed(program)
    assert "def f(x__ssa_v0: " in text and "n__ssa_v0: pl.Scalar[pl.INDEX]" in text
    assert "y__ssa_v0: " in text and "= pl.tensor.neg(y__ssa_v0)" in text
    # iter arg and loop result are versioned before the body: y__iter_v2, y__rv_v3, body y__ssa_v4
    assert "for i__idx_v0, (y__iter_v2,) in pl.range(4, init_values=(y__ssa_v1,)):" in text
    assert "y__ssa_v4: " in text and "= pl.tensor.add(y__iter_v2, x__ssa_v0)" in text
    assert "z__ssa_v0: " in text
    assert "y__rv_v3: " in text and "pl.yield_(y__ssa_v4)" in text
    # the if merge is versioned after its arms
    assert "y__ssa_v5: " in text and "y__phi_v6" in text
    assert text.rstrip().endswith("return y__phi_v6")
    again = printed(Program(run(program.clone(), ConvertToSSA)))
    assert again == text


def test_convert_to_ssa_keeps_temporaries_and_unnamed_values() -> None:
    program = dsl(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}) -> {T}:
    y = pl.exp(pl.neg(x))
    return y
"""
    )
    run(program, ConvertToSSA, FlattenCallExpr, ConvertToSSA)
    text = printed(program)
    assert "t__tmp_v0: " in text and "y__ssa_v0: " in text and "= pl.tensor.exp(t__tmp_v0)" in text


# ---- FlattenCallExpr -----------------------------------------------------------------------


def test_flatten_call_expr_skips_taken_names_and_keeps_arith_inline() -> None:
    program = dsl(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}, t__tmp_v0: {T}) -> {T}:
    y = pl.add(pl.exp(x), pl.neg(t__tmp_v0))
    for i in pl.range(2):
        y = pl.add(y, pl.tensor.slice(x, [16, 128], [i * 0, 0]))
    return y
"""
    )
    run(program, FlattenCallExpr)
    text = printed(program)
    assert "t__tmp_v1: " in text and "= pl.tensor.exp(x)" in text
    assert "t__tmp_v2: " in text and "= pl.tensor.neg(t__tmp_v0)" in text
    assert "t__tmp_v3: " in text and "pl.tensor.slice(x, [16, 128], [i * 0, 0])" in text
    before = print_mlir(program.module)
    run(program, FlattenCallExpr)
    assert print_mlir(program.module) == before


# ---- UnrollLoops ---------------------------------------------------------------------------


def test_unroll_nested_and_zero_trip() -> None:
    program = dsl(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}) -> {T}:
    for i in pl.unroll(2):
        for j in pl.unroll(3):
            x = pl.adds(x, 1.0)
    for k in pl.unroll(0):
        x = pl.exp(x)
    return x
"""
    )
    run(program, UnrollLoops)
    ops = [op.name for op in program.module.walk() if op.name.startswith("pl.")]
    assert ops == ["pl.tensor.adds"] * 6
    assert not [op for op in program.module.walk() if isinstance(op, scf.ForOp)]


def test_unroll_needs_literal_bounds() -> None:
    program = dsl(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {T}, n: pl.Scalar[pl.INDEX]) -> {T}:
    for i in pl.unroll(n):
        x = pl.exp(x)
    return x
"""
    )
    with pytest.raises(DiagnosticError, match="literal bounds"):
        run(program, UnrollLoops)


# ---- InlineFunctions -----------------------------------------------------------------------


def test_inline_recursive_is_a_user_error() -> None:
    # The front end rejects recursion itself; MLIR input can still hold it.
    ty = "!pl.tensor<16x128xf32>"
    module = parse_mlir(
        f"""
builtin.module @p {{
  func.func @g(%v: {ty}) -> {ty} attributes {{pl.func_type = #pl<func_type Inline>}} {{
    %w = func.call @g(%v) : ({ty}) -> {ty}
    func.return %w : {ty}
  }}
  func.func @main(%x: {ty}) -> {ty} {{
    %y = func.call @g(%x) : ({ty}) -> {ty}
    func.return %y : {ty}
  }}
}}
"""
    )
    with pytest.raises(DiagnosticError, match="recursive"):
        run(module, InlineFunctions)


def test_inline_returning_a_parameter() -> None:
    program = dsl(
        f"""import pypto.language as pl

@pl.program
class P:
    @pl.function(type=pl.FunctionType.Inline)
    def ident(self, v: {T}) -> {T}:
        return v

    @pl.function
    def main(self, x: {T}) -> {T}:
        y = self.ident(x)
        z = pl.exp(y)
        return z
"""
    )
    run(program, InlineFunctions)
    assert list(program.functions) == ["main"]
    assert "z: pl.Tensor[[16, 128], pl.FP32] = pl.tensor.exp(x)" in printed(program)


# ---- Simplify ------------------------------------------------------------------------------

SIMPLE = """
builtin.module @s {
  func.func @f(%n: index) -> (index, i32, i1, f32, index) {
    %c3 = arith.constant 3 : index
    %c0 = arith.constant 0 : index
    %big = arith.constant 2147483647 : i32
    %one32 = arith.constant 1 : i32
    %a = arith.floordivsi %c3, %c0 : index
    %w = arith.addi %big, %one32 : i32
    %lt = arith.cmpi sge, %c3, %c0 : index
    %f1 = arith.constant 1.5 : f32
    %f2 = arith.constant 2.0 : f32
    %fm = arith.mulf %f1, %f2 : f32
    %m = arith.muli %c0, %n : index
    func.return %a, %w, %lt, %fm, %m : index, i32, i1, f32, index
  }
}
"""


def test_simplify_folding_edge_cases() -> None:
    module = run(parse_mlir(SIMPLE), Simplify)
    f = next(op for op in module.ops if isinstance(op, func.FuncOp))
    ret = f.body.block.last_op
    assert ret is not None
    div, wrap, cmp, fmul, mul0 = (v.owner for v in ret.operands)
    assert isinstance(div, arith.FloorDivSIOp)  # division by zero is not folded
    assert isinstance(wrap, arith.ConstantOp) and wrap.value.value.data == -(2**31)  # type: ignore[attr-defined]
    assert isinstance(cmp, arith.ConstantOp) and cmp.value.value.data in (1, -1)  # type: ignore[attr-defined]
    assert isinstance(fmul, arith.ConstantOp) and fmul.value.value.data == 3.0  # type: ignore[attr-defined]
    assert isinstance(mul0, arith.ConstantOp) and mul0.value.value.data == 0  # type: ignore[attr-defined]
    assert not [op for op in f.walk() if isinstance(op, arith.MuliOp | arith.AddiOp | arith.MulfOp | arith.CmpiOp)]


def test_simplify_is_a_no_op_on_the_reference_kernels() -> None:
    for kernel, level in KERNELS.items():
        path = _dump(kernel, 4, "ConvertToSSA")
        program = pl.loads(str(path))
        before = print_mlir(program.module)
        run(program, Simplify)
        assert print_mlir(program.module) == before, kernel
        assert printed(program, level) == normalize_upstream(_dump(kernel, 5, "Simplify").read_text())


def test_simplify_keeps_locations_of_folded_values() -> None:
    program = Program(
        parse_mlir(
            """
builtin.module @s {
  func.func @f(%x: !pl.tensor<64x128xf32>) -> !pl.tile<16x128xf32, Vec> attributes {pl.func_type = #pl<func_type InCore>} {
    %c2 = arith.constant 2 : index
    %c8 = arith.constant 8 : index
    %c16 = arith.constant 16 : index
    %c128 = arith.constant 128 : index
    %k0 = arith.muli %c2, %c8 : index loc("k.py":4:10)
    %r = arith.subi %k0, %c16 : index
    %t = "pl.tile.load"(%x, %k0, %r, %c16, %c128) <{shapes = array<i64: 16, 128>, target_memory = #pl<mem Vec>, operandSegmentSizes = array<i32: 1, 2, 2>}> : (!pl.tensor<64x128xf32>, index, index, index, index) -> !pl.tile<16x128xf32, Vec>
    func.return %t : !pl.tile<16x128xf32, Vec>
  }
}
"""
        )
    )
    muli = next(op for op in program.module.walk() if isinstance(op, arith.MuliOp))
    loc = muli.location
    run(program, Simplify)
    k0 = next(op for op in program.module.walk() if isinstance(op, arith.ConstantOp) and op.result.name_hint == "k0")
    assert k0.value.value.data == 16  # type: ignore[attr-defined]
    assert k0.location == loc
    assert not [op for op in program.module.walk() if isinstance(op, arith.SubiOp | arith.MuliOp)]
    assert "pl.tile.load(x, [k0, r], [16, 128]" in printed(program)
