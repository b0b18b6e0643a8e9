"""Every op class carries what the backends need, or says why it does not.

- each ``pl`` op: a torch lowering (``TORCH`` or a torch_ops function), else ``NO_TORCH``;
  each ``pl.tile`` op: a pto lowering naming an existing pto op, else ``NO_PTO``;
  a memory-effect trait (``Pure`` or a read/write/alloc effect), else ``NO_EFFECT_TRAIT``;
- each ``pto`` op: an interpreter handler, else ``NO_INTERPRETER``; a C++ emitter, else ``NO_CPP``;
- the traits let xDSL's own DCE and CSE work on ``pl`` ops (and keep the ops with effects).
"""

from __future__ import annotations

import pytest
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Region
from xdsl.traits import MemoryEffect, Pure
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination
from xdsl.transforms.dead_code_elimination import DeadCodeElimination

import pypto.ptoas.emitc  # noqa: F401  (registers the C++ emitters)
from pypto.debug.torch_ops import class_lowering
from pypto.device.interpreter.pto_impls import PTO_HANDLERS
from pypto.dialects import PL
from pypto.dialects.dtypes import dtype_type
from pypto.dialects.enums import MemorySpace
from pypto.dialects.op_base import INTS, PLOp
from pypto.dialects.op_facts import alias_operand, forbidden_inplace_operands, is_view
from pypto.dialects.tensor_ops import TensorSliceOp
from pypto.dialects.tile_ops import (
    TileAddOp,
    TileAssembleOp,
    TileCastOp,
    TileCreateOp,
    TileExpOp,
    TileMatmulAccOp,
    TileReshapeOp,
    TileRowExpandMulOp,
    TileRsqrtOp,
    TileSliceOp,
    TileStoreOp,
)
from pypto.dialects.types import TensorType, TileType
from pypto.ptoas.codegen.tile_ops import HANDLERS as PTO_LOWERINGS
from pypto.ptoas.dialect import PTO_OPS, op_class
from pypto.ptoas.emitc.context import load_all_handlers

PL_OPS = [op for op in PL.operations if issubclass(op, PLOp)]
TILE_OPS = [op for op in PL_OPS if op.name.startswith("pl.tile.")]


def _ids(ops: list[type]) -> list[str]:
    return [op.name for op in ops]


def test_the_op_lists_are_not_empty() -> None:
    assert len(PL_OPS) > 70 and len(TILE_OPS) > 40 and len(PTO_OPS) > 100


@pytest.mark.parametrize("op", PL_OPS, ids=_ids(PL_OPS))
def test_pl_op_has_a_torch_lowering(op: type[PLOp]) -> None:
    has = class_lowering(op) is not None
    assert has or op.NO_TORCH, f"{op.name}: no torch lowering (set TORCH, add one to torch_ops.BY_CLASS, or NO_TORCH)"
    assert not (has and op.NO_TORCH), f"{op.name}: has a torch lowering but says NO_TORCH"


@pytest.mark.parametrize("op", TILE_OPS, ids=_ids(TILE_OPS))
def test_tile_op_lowers_to_pto(op: type[PLOp]) -> None:
    if op.NO_PTO:
        assert op not in PTO_LOWERINGS, f"{op.name}: lowered to pto but says NO_PTO"
        return
    assert op in PTO_LOWERINGS, f"{op.name}: no ptoas codegen handler (or NO_PTO)"
    if op.PTO_OP is not None:
        assert op_class(op.PTO_OP) is not None, f"{op.name}: PTO_OP {op.PTO_OP!r} is no pto op"


@pytest.mark.parametrize("op", PL_OPS, ids=_ids(PL_OPS))
def test_pl_op_states_its_memory_effects(op: type[PLOp]) -> None:
    traits = [t for t in op.get_irdl_definition().traits if isinstance(t, MemoryEffect)]
    reason = getattr(op, "NO_EFFECT_TRAIT", None)
    assert traits or reason, f"{op.name}: no Pure / memory-effect trait (or NO_EFFECT_TRAIT)"


@pytest.mark.parametrize("op", PL_OPS, ids=_ids(PL_OPS))
def test_ops_that_write_in_place_are_not_pure(op: type[PLOp]) -> None:
    if op.ALIAS_OPERAND is not None and not op.IS_VIEW:
        assert not any(isinstance(t, Pure) for t in op.get_irdl_definition().traits), op.name


@pytest.mark.parametrize("op", PTO_OPS, ids=_ids(list(PTO_OPS)))
def test_pto_op_has_an_interpreter_handler(op: type) -> None:
    assert op in PTO_HANDLERS or op.NO_INTERPRETER, f"{op.name}: no interpreter handler (or NO_INTERPRETER)"


@pytest.mark.parametrize("op", PTO_OPS, ids=_ids(list(PTO_OPS)))
def test_pto_op_has_a_cpp_emitter(op: type) -> None:
    assert op in load_all_handlers() or op.NO_CPP, f"{op.name}: no C++ emitter (or NO_CPP)"


def _module_with() -> tuple[ModuleOp, Block]:
    tile = TileType.get((16, 16), dtype_type("FP32"), MemorySpace.Vec)
    tensor = TensorType.get((16, 16), dtype_type("FP32"))
    block = Block(arg_types=[tile, tile, tensor])
    f = func.FuncOp("f", ((tile, tile, tensor), ()), Region(block))
    return ModuleOp([f]), block


def test_xdsl_dce_and_cse_work_on_pl_ops() -> None:
    m, block = _module_with()
    a, b, out = block.args
    add1 = TileAddOp.build_from_args({"lhs": a, "rhs": b}, {})
    add2 = TileAddOp.build_from_args({"lhs": a, "rhs": b}, {})
    unused = TileExpOp.build_from_args({"input": a}, {})
    create = [TileCreateOp.build_from_args({}, {"shape": INTS.to_attr([16, 16]), "dtype": dtype_type("FP32")}) for _ in "ab"]
    zero = arith.ConstantOp.from_int_and_width(0, 64)
    store1 = TileStoreOp.build_from_args({"tile": add1.result, "offsets": [zero.result, zero.result], "output": out}, {})
    store2 = TileStoreOp.build_from_args({"tile": add2.result, "offsets": [zero.result, zero.result], "output": out}, {})
    block.add_ops([add1, add2, unused, *create, zero, store1, store2, func.ReturnOp()])
    CommonSubexpressionElimination().apply(Context(), m)
    DeadCodeElimination().apply(Context(), m)
    names = [op.name for op in block.ops]
    assert names.count("pl.tile.add") == 1  # CSE merged the two adds (Pure)
    assert names.count("pl.tile.store") == 2  # stores write: kept, not merged
    assert "pl.tile.exp" not in names  # an unused Pure op is dead
    assert names.count("pl.tile.create") == 2  # two fresh buffers are two buffers


def test_inplace_facts_from_the_op_classes() -> None:
    fp32, fp16 = dtype_type("FP32"), dtype_type("FP16")
    tile = TileType.get((16, 16), fp32, MemorySpace.Vec)
    half = TileType.get((16, 16), fp16, MemorySpace.Vec)
    col = TileType.get((16, 1), fp32, MemorySpace.Vec)
    block = Block(arg_types=[tile, col, half])
    x, v, h = block.args
    expand = TileRowExpandMulOp.build_from_args({"input": x, "row_vec": v}, {})
    rsqrt = TileRsqrtOp.build_from_args({"input": x}, {})
    widen = TileCastOp.build_from_args({"input": h}, {"target_type": fp32})
    narrow = TileCastOp.build_from_args({"input": x}, {"target_type": fp16})
    add = TileAddOp.build_from_args({"lhs": x, "rhs": x}, {})
    assert forbidden_inplace_operands(expand) == [v]  # the broadcast vector is re-read per row
    assert forbidden_inplace_operands(rsqrt) == [x]
    assert forbidden_inplace_operands(widen) == [h] and forbidden_inplace_operands(narrow) == []
    assert forbidden_inplace_operands(add) == []
    assert alias_operand(add) is None and not is_view(add)
    assert [c.ALIAS_OPERAND for c in (TileStoreOp, TileMatmulAccOp, TileAssembleOp)] == ["output", "acc", "target"]
    assert TileReshapeOp.IS_VIEW and TensorSliceOp.IS_VIEW and not TileSliceOp.IS_VIEW
