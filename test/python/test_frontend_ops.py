"""Every op through the front end, in sugar and fully-qualified form."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import FileLineColLoc, Float32Type, IndexType

import pypto.language as pl
from pypto import errors as pl_errors
from pypto.core.program import Program
from pypto.dialects.types import TensorType, TileType

T = "pl.Tensor[[16, 128], pl.FP32]"
HEADER = f"""import pypto.language as pl

@pl.program
class K:
    @pl.function(type=pl.FunctionType.InCore)
    def f(self, x: {T}, y: {T}, o: pl.Out[{T}], col: pl.Tensor[[16, 1], pl.FP32], row: pl.Tensor[[1, 128], pl.FP32],
          h: pl.Tensor[[128, 64], pl.FP32]):
        a = pl.load(x, [0, 0], [16, 128])
        b = pl.load(y, [0, 0], [16, 128])
        c = pl.load(col, [0, 0], [16, 1])
        r = pl.load(row, [0, 0], [1, 128])
        tmp = pl.create_tile([16, 128], dtype=pl.FP32, target_memory=pl.Mem.Vec)
"""


def build(line: str) -> Program:
    program = pl.parse(HEADER + f"        v = {line}\n        return o\n")
    program.verify()
    return program


def op_of(program: Program, var: str = "v"):  # noqa: ANN201
    for op in program.module.walk():
        if op.results and op.results[0].name_hint == var:
            return op
    raise AssertionError(f"no value named {var}")


CASES = [
    ("pl.add(a, b)", "pl.tile.add"), ("pl.sub(a, b)", "pl.tile.sub"), ("pl.mul(a, b)", "pl.tile.mul"),
    ("pl.div(a, b)", "pl.tile.div"), ("pl.add(a, 1.0)", "pl.tile.adds"), ("pl.sub(a, 1.0)", "pl.tile.subs"),
    ("pl.mul(a, 2.0)", "pl.tile.muls"), ("pl.div(a, 2)", "pl.tile.divs"), ("pl.exp(a)", "pl.tile.exp"),
    ("pl.neg(a)", "pl.tile.neg"), ("pl.relu(a)", "pl.tile.relu"), ("pl.sqrt(a)", "pl.tile.sqrt"),
    ("pl.rsqrt(a)", "pl.tile.rsqrt"), ("pl.recip(a, high_precision=True)", "pl.tile.recip"),
    ("pl.row_sum(a, tmp)", "pl.tile.row_sum"), ("pl.row_max(a, tmp)", "pl.tile.row_max"),
    ("pl.row_min(a, tmp)", "pl.tile.row_min"), ("pl.col_sum(a)", "pl.tile.col_sum"), ("pl.col_max(a)", "pl.tile.col_max"),
    ("pl.row_expand(a, c)", "pl.tile.row_expand"), ("pl.row_expand_sub(a, c)", "pl.tile.row_expand_sub"),
    ("pl.row_expand_div(a, c)", "pl.tile.row_expand_div"), ("pl.row_expand_mul(a, c)", "pl.tile.row_expand_mul"),
    ("pl.col_expand(a, r)", "pl.tile.col_expand"), ("pl.col_expand_mul(a, r)", "pl.tile.col_expand_mul"),
    ("pl.cast(a, pl.FP16)", "pl.tile.cast"), ("pl.assemble(a, b, [0, 0])", "pl.tile.assemble"),
    ("pl.slice(a, [8, 64], [0, 64])", "pl.tile.slice"), ("a[0:8, 64:128]", "pl.tile.slice"),
    ("pl.reshape(a, [128, 16])", "pl.tile.reshape"), ("pl.concat(a, b)", "pl.tile.concat"),
    ("pl.read(a, [0, 1])", "pl.tile.read"), ("a[0, 1]", "pl.tile.read"),
    ("pl.store(a, [0, 0], o)", "pl.tile.store"), ("pl.move(a, target_memory=pl.Mem.Left)", "pl.tile.move"),
    ("pl.create_tile([4, 4], dtype=pl.INT32)", "pl.tile.create"), ("pl.tile.full([16], dtype=pl.FP32, value=0.0)", "pl.tile.full"),
    ("a + b", "pl.tile.add"), ("a * 2.0", "pl.tile.muls"), ("-a", "pl.tile.neg"),
    ("pl.add(x, y)", "pl.tensor.add"), ("pl.add(x, 1.0)", "pl.tensor.adds"), ("pl.sub(x, y)", "pl.tensor.sub"),
    ("pl.mul(x, 3.0)", "pl.tensor.muls"), ("pl.div(x, y)", "pl.tensor.div"), ("pl.exp(x)", "pl.tensor.exp"),
    ("pl.row_sum(x)", "pl.tensor.row_sum"), ("pl.row_max(x)", "pl.tensor.row_max"), ("pl.col_sum(x)", "pl.tensor.col_sum"),
    ("pl.row_expand_sub(x, col)", "pl.tensor.row_expand_sub"), ("pl.col_expand_mul(x, row)", "pl.tensor.col_expand_mul"),
    ("pl.matmul(x, h, out_dtype=pl.FP32)", "pl.tensor.matmul"), ("pl.cast(x, pl.BF16, mode='floor')", "pl.tensor.cast"),
    ("pl.full([4, 4], dtype=pl.FP32, value=1.0)", "pl.tensor.full"), ("pl.create_tensor([4, 4], dtype=pl.FP16)", "pl.tensor.create"),
    ("pl.assemble(o, x, [0, 0])", "pl.tensor.assemble"), ("x[:, 0:64]", "pl.tensor.slice"), ("pl.reshape(x, [128, 16])", "pl.tensor.reshape"),
    ("pl.concat(x, y)", "pl.tensor.concat"), ("pl.read(x, [1, 2])", "pl.tensor.read"),
]  # fmt: skip


@pytest.mark.parametrize(("line", "op_name"), CASES)
def test_sugar(line: str, op_name: str) -> None:
    program = build(line)
    op = op_of(program)
    assert op.name == op_name
    assert isinstance(op.location, FileLineColLoc)
    assert op.location.line.data == 13 and op.location.column.data == 13


FQ = [
    "pl.tile.add(a, b)", "pl.tile.adds(a, 1.0)", "pl.tile.muls(a, pl.const(2, pl.FP32))", "pl.tile.exp(a)",
    "pl.tile.recip(a)", "pl.tile.row_sum(a, tmp)", "pl.tile.col_max(a)", "pl.tile.row_expand_div(a, c)",
    "pl.tile.cast(a, target_type=pl.FP16, mode='round')", "pl.tile.load(x, [0, 0], [16, 128], [16, 128], target_memory=pl.Mem.Mat)",
    "pl.tile.store(a, [0, 0], o)", "pl.tile.move(a, target_memory=pl.Mem.Right)", "pl.tile.create([16, 128], dtype=pl.FP32)",
    "pl.tile.slice(a, [8, 8], [0, 0], [4, 4])", "pl.tile.reshape(a, [2048])", "pl.tile.concat(a, b)", "pl.tile.read(a, [0, 0])",
    "pl.tile.assemble(a, b, [0, 0])", "pl.tile.full([16, 128], dtype=pl.FP32, value=0.0)",
    "pl.tensor.add(x, y)", "pl.tensor.adds(x, 1.0)", "pl.tensor.matmul(x, h, a_trans=False, b_trans=False, c_matrix_nz=False, out_dtype=pl.FP32)",
    "pl.tensor.matmul_acc(pl.tensor.create([16, 64], dtype=pl.FP32), x, h)", "pl.tensor.slice(x, [8, 128], [8, 0])",
    "pl.tensor.assemble(o, x, [0, 0])", "pl.tensor.create([4], dtype=pl.INT32)", "pl.tensor.full([4], dtype=pl.FP32, value=2.0)",
    "pl.tensor.cast(x, pl.FP16)", "pl.tensor.reshape(x, [2048])", "pl.tensor.read(x, [0, 0])", "pl.tensor.col_max(x)",
]  # fmt: skip


@pytest.mark.parametrize("line", FQ)
def test_fully_qualified(line: str) -> None:
    program = build(line)
    assert op_of(program).name == line.split("(")[0]


def test_tile_matmul_chain() -> None:
    h = "pl.Tensor[[64, 64], pl.FP16]"
    program = pl.parse(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: {h}, y: {h}, o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    m1 = pl.load(x, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    m2 = pl.load(y, [0, 0], [64, 64], target_memory=pl.Mem.Mat)
    lhs = pl.move(m1, target_memory=pl.Mem.Left)
    rhs = pl.move(m2, target_memory=pl.Mem.Right)
    acc = pl.matmul(lhs, rhs)
    acc2 = pl.matmul_acc(acc, lhs, rhs)
    o = pl.store(acc2, [0, 0], o)
    return o
"""
    )
    program.verify()
    acc = op_of(program, "acc2")
    assert acc.name == "pl.tile.matmul_acc"
    t = acc.results[0].type
    assert isinstance(t, TileType) and t.memory_space.value == "Acc"


def test_literals_take_operand_dtype() -> None:
    program = build("pl.mul(a, 2.0)")
    consts = [op for op in program.module.walk() if isinstance(op, arith.ConstantOp)]
    assert any(isinstance(c.result.type, Float32Type) for c in consts)
    assert all(isinstance(c.result.type, (Float32Type, IndexType)) for c in consts)


def test_load_fills_valid_shapes() -> None:
    op = op_of(build("pl.load(x, [0, 0], [8, 128])"))
    assert len(op.valid_shapes) == 2
    assert [o.owner.value.value.data for o in op.valid_shapes] == [8, 128]


def test_const_and_scalar_arith() -> None:
    program = build("pl.const(42, pl.INT32)")
    assert op_of(program).name == "arith.constant"
    assert str(op_of(program).results[0].type) == "i32"
    program = pl.parse(
        "import pypto.language as pl\n\n@pl.function\ndef f(x: pl.Tensor[[64, 64], pl.FP32], i: pl.Scalar[pl.INDEX]):\n"
        "    k: pl.Scalar[pl.INDEX] = i * 16 + 1\n    b = k < 8\n    return x\n"
    )
    program.verify()
    assert op_of(program, "k").name == "arith.addi"
    assert op_of(program, "b").name == "arith.cmpi"


def test_subscript_write_rebinds() -> None:
    program = pl.parse(
        f"import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\ndef f(x: {T}, o: pl.Out[{T}]) -> {T}:\n"
        "    o[0:8, :] = pl.slice(x, [8, 128], [0, 0])\n    return o\n"
    )
    program.verify()
    f = program.functions["f"]
    ret = f.body.block.last_op
    assert ret is not None and ret.operands[0].owner.name == "pl.tensor.assemble"
    assert ret.operands[0].name_hint == "o"
    assert isinstance(ret.operands[0].type, TensorType)


def test_alloc_sets_base() -> None:
    program = build("pl.tile.alloc(pl.Mem.Vec, 1024)")
    op = op_of(program)
    assert op.base.data == "v"


MATMUL_HEAD = """import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[64, 32], pl.FP32], y: pl.Tensor[[32, 64], pl.FP32], o: pl.Out[pl.Tensor[[64, 64], pl.FP32]]):
    lhs = pl.move(pl.load(x, [0, 0], [64, 32], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Left)
    rhs = pl.move(pl.load(y, [0, 0], [32, 64], target_memory=pl.Mem.Mat), target_memory=pl.Mem.Right)
"""


def test_tile_annotation_without_space_keeps_the_value_space() -> None:
    # upstream 04_matmul_acc: ``acc: pl.Tile[[64, 64], pl.FP32] = pl.matmul(...)`` is an Acc tile
    program = pl.parse(
        MATMUL_HEAD + "    acc: pl.Tile[[64, 64], pl.FP32] = pl.matmul(lhs, rhs)\n"
        "    acc = pl.matmul_acc(acc, lhs, rhs)\n    pl.store(acc, [0, 0], o)\n    return o\n"
    )
    program.verify()
    t = op_of(program, "acc").results[0].type
    assert isinstance(t, TileType) and t.memory_space.value == "Acc"
    # the printed form names the space, and reads back to the same program
    assert "pl.Tile[[64, 64], pl.FP32, pl.Mem.Acc]" in program.as_python()
    assert pl.parse(program.as_python()).as_python() == program.as_python()


def test_tile_annotation_without_space_still_checks_shape_and_dtype() -> None:
    for bad in ("pl.Tile[[64, 32], pl.FP32]", "pl.Tile[[64, 64], pl.FP16]"):
        with pytest.raises(pl_errors.ParserTypeError, match="does not match"):
            pl.parse(MATMUL_HEAD + f"    acc: {bad} = pl.matmul(lhs, rhs)\n    return o\n")


def test_tile_annotation_with_space_must_match() -> None:
    with pytest.raises(pl_errors.ParserTypeError, match=r"pl\.Mem\.Vec.*does not match.*pl\.Mem\.Acc"):
        pl.parse(MATMUL_HEAD + "    acc: pl.Tile[[64, 64], pl.FP32, pl.Mem.Vec] = pl.matmul(lhs, rhs)\n    return o\n")


def test_shape_and_dtype_of_a_value_are_constants() -> None:
    # upstream 05_matmul: ``pl.create_tensor(a.shape, dtype=a.dtype, memory_type=pl.Mem.DDR)``
    program = pl.parse(
        f"""import pypto.language as pl

@pl.function(type=pl.FunctionType.InCore)
def f(x: pl.Tensor[[16, 128], pl.FP16], o: pl.Out[{T}]):
    c = pl.create_tensor(x.shape, dtype=x.dtype, memory_type=pl.Mem.DDR)
    d = pl.create_tensor([x.shape[0], 64], dtype=pl.FP32)
    t = pl.load(o, [0, 0], o.shape)
    return o
"""
    )
    program.verify()
    c, d = op_of(program, "c").results[0].type, op_of(program, "d").results[0].type
    assert isinstance(c, TensorType) and c.get_shape() == (16, 128) and str(c.element_type) == "f16"
    assert isinstance(d, TensorType) and d.get_shape() == (16, 64)
    t = op_of(program, "t").results[0].type
    assert isinstance(t, TileType) and t.get_shape() == (16, 128)


def test_shape_of_a_scalar_is_not_a_constant() -> None:
    with pytest.raises(pl_errors.ParserTypeError, match="not a compile-time constant"):
        pl.parse(
            f"import pypto.language as pl\n\n@pl.function(type=pl.FunctionType.InCore)\n"
            f"def f(i: pl.Scalar[pl.INDEX], o: pl.Out[{T}]):\n"
            "    c = pl.create_tensor(i.shape, dtype=pl.FP32)\n    return o\n"
        )
