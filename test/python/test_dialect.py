"""The pl dialect on its own: types, text forms, op typing rules."""

from __future__ import annotations

import pytest
from xdsl.dialects import arith
from xdsl.dialects.builtin import IndexType
from xdsl.utils.exceptions import VerifyException

from pypto.core.mlir_text import parse_mlir, print_mlir
from pypto.dialects import PL
from pypto.dialects import tensor_ops as TT
from pypto.dialects import tile_ops as T
from pypto.dialects.dtypes import DTYPE_NAMES, dtype_bits, dtype_name, dtype_type
from pypto.dialects.enums import MemorySpace, TileLayout
from pypto.dialects.op_base import INTS, OpTypeError
from pypto.dialects.types import MemRefAttr, TensorType, TileType, TileViewAttr, implicit_view

F32 = dtype_type("FP32")
F16 = dtype_type("FP16")


def _value(t):
    """A free SSA value of type t (a block argument)."""
    from xdsl.ir import Block

    return Block(arg_types=[t]).args[0]


def _index(n: int):
    return arith.ConstantOp.from_int_and_width(n, IndexType()).result


def test_every_dtype_round_trips_through_its_mlir_type():
    for name in DTYPE_NAMES:
        assert dtype_name(dtype_type(name)) == name
    assert dtype_bits(F32) == 32 and dtype_bits(F16) == 16


def test_op_names_mirror_dsl_names():
    names = {op.name for op in PL.operations}
    for expected in ("pl.tile.load", "pl.tile.store", "pl.tile.move", "pl.tile.create", "pl.tile.matmul_acc",
                     "pl.tensor.add", "pl.tensor.adds", "pl.tensor.row_expand_sub", "pl.tensor.create",
                     "pl.tensor.assemble", "pl.tensor.slice", "pl.tensor.read", "pl.at", "pl.yield"):
        assert expected in names


@pytest.mark.parametrize(
    "text",
    [
        "!pl.tensor<128x128xf32>",
        '!pl.tensor<128x128xf16, memref<"mem_ddr_0", 0, 65536>>',
        "!pl.tile<16x128xf32, Vec>",
        '!pl.tile<16x128xf32, Vec, memref<"mem_vec_2", 0, 8192>, view<row_major, row_major, 512>>',
        "!pl.tile<128x128xf32, Acc>",
        "!pl.tensor<?x64xbf16>",
        "!pl.ptr",
    ],
)
def test_type_text_round_trips(text):
    src = f'"func.func"() <{{sym_name = "f", function_type = ({text}) -> ()}}> ({{\n^bb0(%x: {text}):\n  "func.return"() : () -> ()\n}}) : () -> ()\n'
    module = parse_mlir(src)
    printed = print_mlir(module, debuginfo=False)
    assert text in printed
    assert print_mlir(parse_mlir(printed), debuginfo=False) == printed


def test_implicit_views_are_normalised_away():
    explicit = implicit_view(MemorySpace.Acc, (128, 128))
    t = TileType.get((128, 128), F32, MemorySpace.Acc, view=explicit)
    assert t.get_view() is None and t.effective_view() == explicit
    col = TileType.get((16, 1), F32)
    assert col.effective_view().blayout.data == TileLayout.col_major
    other = TileViewAttr.get(TileLayout.row_major, TileLayout.row_major, 512)
    assert TileType.get((16, 128), F32, view=other).get_view() == other


def test_tile_in_ddr_is_rejected():
    with pytest.raises(VerifyException, match="cannot live in DDR"):
        TileType.get((16, 16), F32, MemorySpace.DDR)


def _load(tensor, shape, space=MemorySpace.Vec):
    idx = [_index(0) for _ in shape]
    return T.TileLoadOp.build_from_args(
        {"tensor": tensor, "offsets": idx, "valid_shapes": [_index(d) for d in shape]},
        {"shapes": INTS.to_attr(list(shape)), "target_memory": T._SPACE.to_attr(space)},
    )


def test_load_infers_tile_type_and_rejects_left():
    x = _value(TensorType.get((64, 128), F16))
    assert _load(x, (16, 128)).result.type == TileType.get((16, 128), F16)
    with pytest.raises(OpTypeError, match=r"pl.tile.load: target_memory pl.Mem.Left cannot be loaded"):
        _load(x, (16, 128), MemorySpace.Left)
    with pytest.raises(OpTypeError, match=r"pl.tile.load: shapes \[16\] has rank 1, expected 2"):
        _load(x, (16,))


def test_binary_tile_ops_name_the_bad_operand():
    a = _value(TileType.get((16, 16), F32))
    b = _value(TileType.get((16, 16), F16))
    c = _value(TileType.get((8, 16), F32))
    d = _value(TileType.get((16, 16), F32, MemorySpace.Mat))
    assert T.TileAddOp.build_from_args({"lhs": a, "rhs": a}, {}).result.type == a.type
    with pytest.raises(OpTypeError, match=r"pl.tile.add: operand 'rhs' has dtype pl.FP16, expected pl.FP32"):
        T.TileAddOp.build_from_args({"lhs": a, "rhs": b}, {})
    with pytest.raises(OpTypeError, match=r"pl.tile.mul: operand 'rhs' has shape \[8, 16\]"):
        T.TileMulOp.build_from_args({"lhs": a, "rhs": c}, {})
    with pytest.raises(OpTypeError, match=r"pl.tile.sub: operand 'lhs' is in memory space Mat, expected Vec"):
        T.TileSubOp.build_from_args({"lhs": d, "rhs": a}, {})


def test_tensor_binary_ops_broadcast():
    a = _value(TensorType.get((16, 32), F32))
    row = _value(TensorType.get((1, 32), F32))
    bad = _value(TensorType.get((3, 32), F32))
    assert TT.TensorAddOp.build_from_args({"lhs": a, "rhs": row}, {}).result.type == a.type
    with pytest.raises(OpTypeError, match="do not broadcast"):
        TT.TensorAddOp.build_from_args({"lhs": a, "rhs": bad}, {})


def test_scalar_forms_check_the_scalar_dtype():
    a = _value(TileType.get((16, 16), F32))
    s32 = _value(F32)
    s16 = _value(F16)
    assert T.TileMulsOp.build_from_args({"lhs": a, "rhs": s32}, {}).result.type == a.type
    with pytest.raises(OpTypeError, match=r"operand 'rhs' must be a scalar of dtype pl.FP32"):
        T.TileMulsOp.build_from_args({"lhs": a, "rhs": s16}, {})


def test_reductions_and_expands():
    t = _value(TileType.get((16, 128), F32))
    tmp = _value(TileType.get((16, 128), F32))
    r = T.TileRowMaxOp.build_from_args({"input": t, "tmp_tile": tmp}, {}).result
    assert r.type.get_shape() == (16, 1)
    with pytest.raises(OpTypeError, match="missing operand 'tmp_tile'"):
        T.TileRowSumOp.build_from_args({"input": t}, {})
    assert T.TileRowExpandSubOp.build_from_args({"input": t, "row_vec": r}, {}).result.type == t.type
    bad = _value(TileType.get((8, 1), F32))
    with pytest.raises(OpTypeError, match=r"operand 'row_vec' must have shape \[16, 1\]"):
        T.TileRowExpandDivOp.build_from_args({"input": t, "row_vec": bad}, {})
    assert T.TileColSumOp.build_from_args({"input": t}, {}).result.type.get_shape() == (1, 128)


def test_matmul_spaces_and_shapes():
    left = _value(TileType.get((64, 32), F16, MemorySpace.Left))
    right = _value(TileType.get((32, 16), F16, MemorySpace.Right))
    acc = T.TileMatmulOp.build_from_args({"lhs": left, "rhs": right}, {}).result
    assert acc.type == TileType.get((64, 16), F32, MemorySpace.Acc)
    vec = _value(TileType.get((64, 32), F16))
    with pytest.raises(OpTypeError, match="operand 'lhs' is in memory space Vec, expected Left"):
        T.TileMatmulOp.build_from_args({"lhs": vec, "rhs": right}, {})
    wrong_k = _value(TileType.get((16, 16), F16, MemorySpace.Right))
    with pytest.raises(OpTypeError, match="operand 'rhs' has 16 rows, expected 32"):
        T.TileMatmulOp.build_from_args({"lhs": left, "rhs": wrong_k}, {})
    assert T.TileMatmulAccOp.build_from_args({"acc": acc, "lhs": left, "rhs": right}, {}).result.type == acc.type


def test_verifier_rejects_a_result_type_that_breaks_the_rules():
    text = """
"func.func"() <{sym_name = "f", function_type = (!pl.tile<16x16xf32, Vec>) -> ()}> ({
^bb0(%x: !pl.tile<16x16xf32, Vec>):
  %y = "pl.tile.exp"(%x) : (!pl.tile<16x16xf32, Vec>) -> !pl.tile<8x16xf32, Vec>
  "func.return"() : () -> ()
}) : () -> ()
"""
    module = parse_mlir(text)
    with pytest.raises(VerifyException, match=r"pl.tile.exp: result type .* does not match"):
        module.verify()


def test_memref_attr_round_trips():
    m = MemRefAttr.get("mem_vec_3", 64, 8192)
    t = TileType.get((16, 128), F32, memref=m)
    assert t.get_memref() == m and t.with_(memref=None).get_memref() is None
